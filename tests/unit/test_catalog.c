#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"

static const struct catalog *cat(void)
{
	const struct catalog *c;
	struct gs_error err;

	if (catalog_builtin(&c, &err))
		fail_msg("embedded catalog: %s", err.msg);
	return c;
}

static const struct catalog_gpu *gpu(const char *name)
{
	const struct catalog_gpu *g = catalog_find_gpu(cat(), name);
	if (!g)
		fail_msg("no GPU '%s' in the catalog", name);
	return g;
}

/* Spec §4.2: sanitize examples. */
static void sanitize_rule(void **state)
{
	char out[128];

	(void)state;
	catalog_sanitize("Tesla T4", out, sizeof(out));
	assert_string_equal(out, "Tesla-T4");
	catalog_sanitize("NVIDIA H100 80GB HBM3", out, sizeof(out));
	assert_string_equal(out, "NVIDIA-H100-80GB-HBM3");
	catalog_sanitize("NVIDIA-TITAN-X-(Pascal)", out, sizeof(out));
	assert_string_equal(out, "NVIDIA-TITAN-X-Pascal");
	catalog_sanitize("  a   b  ", out, sizeof(out));
	assert_string_equal(out, "a-b");
	catalog_sanitize("NVIDIA RTX PRO 6000 Blackwell Server Edition", out, sizeof(out));
	assert_string_equal(out, "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition");
	catalog_sanitize("abcdef", out, 4);
	assert_string_equal(out, "abc");
}

/* Spec §4.2 family table. */
static void families(void **state)
{
	(void)state;
	assert_string_equal(catalog_family(7, 0), "volta");
	assert_string_equal(catalog_family(7, 5), "turing");
	assert_string_equal(catalog_family(8, 0), "ampere");
	assert_string_equal(catalog_family(8, 6), "ampere");
	assert_string_equal(catalog_family(8, 9), "ada-lovelace");
	assert_string_equal(catalog_family(9, 0), "hopper");
	assert_string_equal(catalog_family(10, 0), "blackwell");
	assert_string_equal(catalog_family(12, 0), "blackwell");
	assert_string_equal(catalog_family(13, 0), "rubin");
	assert_string_equal(catalog_family(11, 0), "undefined");
	assert_string_equal(catalog_family(6, 1), "pascal");
}

/* Spec §4.2 model-name examples and §4.5 (a), (g). */
static void models_by_any_name(void **state)
{
	const struct catalog_gpu *g;

	(void)state;
	g = gpu("Tesla T4");
	assert_string_equal(g->label, "Tesla-T4");
	assert_int_equal(g->memory_mib, 15360);
	assert_int_equal(g->cc_major, 7);
	assert_int_equal(g->cc_minor, 5);
	assert_null(g->mig);

	g = gpu("NVIDIA H100 80GB HBM3");
	assert_string_equal(g->label, "NVIDIA-H100-80GB-HBM3");
	assert_int_equal(g->memory_mib, 81559);
	assert_ptr_equal(gpu("NVIDIA-H100-80GB-HBM3"), g);
	assert_ptr_equal(gpu("nvidia h100  80gb hbm3"), g);

	g = gpu("NVIDIA A100-SXM4-40GB");
	assert_int_equal(g->memory_mib, 40960);
	/* Old driver name: no "NVIDIA " prefix, less memory (§4.2). */
	assert_ptr_not_equal(gpu("A100-SXM4-40GB"), g);
	assert_int_equal(gpu("A100-SXM4-40GB")->memory_mib, 40537);
	assert_int_equal(gpu("A100-PCIE-40GB")->memory_mib, 40537);

	assert_ptr_equal(gpu("NVIDIA-A100-SXM4-80GB"), gpu("NVIDIA A100-SXM4-80GB"));
	assert_string_equal(gpu("NVIDIA A100-SXM4-80GB")->label, "NVIDIA-A100-SXM4-80GB");
	assert_string_equal(gpu("NVIDIA H200")->label, "NVIDIA-H200");
	assert_string_equal(gpu("Tesla V100-SXM2-16GB")->label, "Tesla-V100-SXM2-16GB");
	assert_string_equal(gpu("NVIDIA RTX PRO 6000 Blackwell Server Edition")->label,
			    "NVIDIA-RTX-PRO-6000-Blackwell-Server-Edition");
	assert_null(catalog_find_gpu(cat(), "NVIDIA A100"));
	assert_null(catalog_find_gpu(cat(), ""));
	assert_null(catalog_find_gpu(cat(), NULL));
}

/* The minimum coverage, and MIG capability per §5.2. */
static void coverage(void **state)
{
	static const char *const mig[] = {
		"NVIDIA A100-SXM4-40GB",
		"NVIDIA A100-PCIE-40GB",
		"NVIDIA A100-SXM4-80GB",
		"NVIDIA A100 80GB PCIe",
		"NVIDIA A30",
		"NVIDIA H100 80GB HBM3",
		"NVIDIA H100 PCIe",
		"NVIDIA H100 NVL",
		"NVIDIA GH200 480GB",
		"NVIDIA H200",
		"NVIDIA B200",
		"NVIDIA GB200",
	};
	static const char *const plain[] = {"Tesla T4", "Tesla V100-SXM2-16GB", "NVIDIA A10",
					    "NVIDIA L4", "NVIDIA L40S"};

	(void)state;
	for (size_t i = 0; i < sizeof(mig) / sizeof(mig[0]); i++)
		assert_non_null(gpu(mig[i])->mig);
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		assert_null(gpu(plain[i])->mig);
	assert_int_equal(gpu("NVIDIA A30")->mig->compute_slices, 4);
	assert_int_equal(gpu("NVIDIA H100 NVL")->mig->compute_slices, 7);
	assert_int_equal(gpu("NVIDIA L40S")->cc_minor, 9);
	assert_true(catalog_gpu_count(cat()) >= 20);
	assert_null(catalog_gpu_at(cat(), catalog_gpu_count(cat())));
}

/* Spec §5.2 tables and §4.5 (g), (h). */
static void profiles(void **state)
{
	const struct catalog_mig_profile *p;

	(void)state;
	p = catalog_gpu_profile(gpu("NVIDIA H100 80GB HBM3"), "1g.10gb");
	assert_non_null(p);
	assert_int_equal(p->instances, 7);
	assert_int_equal(p->memory_mib, 9984);
	assert_int_equal(p->multiprocessors, 16);
	assert_int_equal(p->gi_slices, 1);
	assert_int_equal(p->ci_slices, 1);
	assert_int_equal(p->copy_engines, 1);
	assert_int_equal(p->decoders, 1);
	assert_int_equal(p->encoders, 0);
	assert_int_equal(p->jpeg, 1);
	assert_int_equal(p->ofa, 0);
	p = catalog_gpu_profile(gpu("NVIDIA H100 80GB HBM3"), "3g.40gb");
	assert_int_equal(p->memory_mib, 40320);
	assert_int_equal(p->multiprocessors, 60);
	assert_int_equal(p->copy_engines, 3);

	p = catalog_gpu_profile(gpu("NVIDIA A100-SXM4-40GB"), "1g.5gb");
	assert_int_equal(p->instances, 7);
	assert_int_equal(p->memory_mib, 4864);
	assert_int_equal(p->multiprocessors, 14);
	/* §5.3: 1g.10gb exists on A100-40GB, at most 4. */
	p = catalog_gpu_profile(gpu("NVIDIA A100-SXM4-40GB"), "1g.10gb");
	assert_int_equal(p->instances, 4);
	p = catalog_gpu_profile(gpu("NVIDIA A100-SXM4-80GB"), "1g.10gb");
	assert_int_equal(p->instances, 7);
	assert_int_equal(p->multiprocessors, 14);
	assert_null(catalog_gpu_profile(gpu("NVIDIA A100-SXM4-80GB"), "1g.5gb"));
	assert_null(catalog_gpu_profile(gpu("Tesla T4"), "1g.5gb"));
	p = catalog_gpu_profile(gpu("NVIDIA A100-SXM4-40GB"), "1g.5gb+me");
	assert_int_equal(p->instances, 1);
	assert_int_equal(p->ofa, 1);
	assert_int_equal(catalog_gpu_profile(gpu("NVIDIA A30"), "1g.6gb")->instances, 4);
	assert_int_equal(catalog_gpu_profile(gpu("NVIDIA H200"), "7g.141gb")->copy_engines, 8);
	assert_int_equal(catalog_gpu_profile(gpu("NVIDIA B200"), "7g.180gb")->copy_engines, 16);
}

static void profile_resource_names(void **state)
{
	char out[64];

	(void)state;
	catalog_profile_resource("1g.10gb+me", out, sizeof(out));
	assert_string_equal(out, "1g.10gb.me");
	catalog_profile_resource("1g.24gb+me.all", out, sizeof(out));
	assert_string_equal(out, "1g.24gb.me.all");
	catalog_profile_resource("1g.24gb-me", out, sizeof(out));
	assert_string_equal(out, "1g.24gb-me");
}

static int apply(const char *layout, const char *model, struct catalog_gpu_mig *m)
{
	struct gs_error err;
	return catalog_layout_apply(cat(), layout, gpu(model), m, &err);
}

static int one_count(const struct catalog_gpu_mig *m, const char *profile)
{
	for (size_t i = 0; i < m->n_devices; i++)
		if (!strcmp(m->devices[i].profile, profile))
			return m->devices[i].count;
	return 0;
}

/* Spec §5.3 and the all-1g.10gb row of §5.5. */
static void layout_all_1g_10gb(void **state)
{
	struct catalog_gpu_mig m;
	static const char *const unmatched[] = {"NVIDIA A30",	      "NVIDIA H100 NVL",
						"NVIDIA GH200 480GB", "NVIDIA H200",
						"NVIDIA B200",	      "NVIDIA GB200"};

	(void)state;
	assert_int_equal(apply("all-1g.10gb", "NVIDIA A100-SXM4-40GB", &m), 0);
	assert_int_equal(m.result, CATALOG_APPLY_OK);
	assert_true(m.mig_enabled);
	assert_int_equal(m.n_devices, 1);
	assert_int_equal(one_count(&m, "1g.10gb"), 4);
	assert_int_equal(apply("all-1g.10gb", "A100-PCIE-40GB", &m), 0);
	assert_int_equal(one_count(&m, "1g.10gb"), 4);
	assert_int_equal(apply("all-1g.10gb", "NVIDIA A100-SXM4-80GB", &m), 0);
	assert_int_equal(one_count(&m, "1g.10gb"), 7);
	assert_int_equal(apply("all-1g.10gb", "NVIDIA H100 80GB HBM3", &m), 0);
	assert_int_equal(one_count(&m, "1g.10gb"), 7);
	for (size_t i = 0; i < sizeof(unmatched) / sizeof(unmatched[0]); i++) {
		assert_int_equal(apply("all-1g.10gb", unmatched[i], &m), 0);
		assert_int_equal(m.result, CATALOG_APPLY_NO_MATCH);
	}
	/* Non-MIG GPUs carry no id of the filter either. */
	assert_int_equal(apply("all-1g.10gb", "Tesla T4", &m), 0);
	assert_int_equal(m.result, CATALOG_APPLY_NO_MATCH);
}

/* Spec §5.5 all-balanced row. */
static void layout_all_balanced(void **state)
{
	static const struct {
		const char *model;
		const char *p[3];
	} rows[] = {
		{"NVIDIA A100-SXM4-40GB", {"1g.5gb", "2g.10gb", "3g.20gb"}},
		{"NVIDIA A100-SXM4-80GB", {"1g.10gb", "2g.20gb", "3g.40gb"}},
		{"NVIDIA H100 80GB HBM3", {"1g.10gb", "2g.20gb", "3g.40gb"}},
		{"NVIDIA A30", {"1g.6gb", "2g.12gb", NULL}},
		{"NVIDIA H100 NVL", {"1g.12gb", "2g.24gb", "3g.47gb"}},
		{"NVIDIA GH200 480GB", {"1g.12gb", "2g.24gb", "3g.48gb"}},
		{"NVIDIA H200", {"1g.18gb", "2g.35gb", "3g.71gb"}},
		{"NVIDIA H200 NVL", {"1g.18gb", "2g.35gb", "3g.71gb"}},
		{"NVIDIA GH200 144G HBM3e", {"1g.18gb", "2g.36gb", "3g.72gb"}},
		{"NVIDIA B200", {"1g.23gb", "2g.45gb", "3g.90gb"}},
		{"NVIDIA GB200", {"1g.23gb", "2g.47gb", "3g.93gb"}},
		{"NVIDIA B300 SXM6 AC", {"1g.34gb", "2g.67gb", "3g.135gb"}},
		{"NVIDIA GB300", {"1g.35gb", "2g.70gb", "3g.139gb"}},
		{"NVIDIA RTX PRO 6000 Blackwell Server Edition", {"1g.24gb", "2g.48gb", NULL}},
	};
	struct catalog_gpu_mig m;

	(void)state;
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(apply("all-balanced", rows[i].model, &m), 0);
		assert_int_equal(m.result, CATALOG_APPLY_OK);
		assert_int_equal(m.n_devices, rows[i].p[2] ? 3 : 2);
		assert_int_equal(one_count(&m, rows[i].p[0]), 2);
		assert_int_equal(one_count(&m, rows[i].p[1]), 1);
		if (rows[i].p[2])
			assert_int_equal(one_count(&m, rows[i].p[2]), 1);
	}
}

static void layout_other_cases(void **state)
{
	struct catalog_gpu_mig m;
	struct gs_error err;

	(void)state;
	assert_int_equal(apply("all-disabled", "NVIDIA H100 80GB HBM3", &m), 0);
	assert_false(m.mig_enabled);
	assert_int_equal(apply("all-enabled", "NVIDIA H100 80GB HBM3", &m), 0);
	assert_true(m.mig_enabled);
	assert_int_equal(m.n_devices, 0);
	assert_int_equal(apply("all-1g.5gb", "NVIDIA A100-SXM4-40GB", &m), 0);
	assert_int_equal(one_count(&m, "1g.5gb"), 7);
	assert_int_equal(apply("all-3g.40gb", "NVIDIA H100 80GB HBM3", &m), 0);
	assert_int_equal(one_count(&m, "3g.40gb"), 2);
	assert_int_equal(apply("all-1g.10gb.me", "NVIDIA H100 80GB HBM3", &m), 0);
	assert_int_equal(one_count(&m, "1g.10gb+me"), 1);

	/* §5.5: no device-filter, GPU lacks the profile → apply fails. */
	assert_int_equal(
		catalog_layout_apply(cat(), "all-1g.5gb", gpu("NVIDIA H100 80GB HBM3"), &m, &err),
		-1);
	assert_non_null(strstr(err.msg, "1g.5gb"));
	assert_int_equal(catalog_layout_apply(cat(), "all-1g.5gb", gpu("Tesla T4"), &m, &err), -1);
	assert_non_null(strstr(err.msg, "not MIG-capable"));
	assert_int_equal(catalog_layout_apply(cat(), "custom-thing", gpu("NVIDIA H200"), &m, &err),
			 -1);
	assert_string_equal(err.msg, "selected mig-config not present: custom-thing");

	/* Not in the static table: the generated-config rule (§5.5). */
	assert_int_equal(apply("all-1g.34gb", "NVIDIA B300 SXM6 AC", &m), 0);
	assert_true(m.generated);
	assert_int_equal(one_count(&m, "1g.34gb"), 7);
	assert_int_equal(apply("all-1g.10gb", "NVIDIA A100-SXM4-80GB", &m), 0);
	assert_false(m.generated);
}

static void parse_errors(void **state)
{
	static const struct {
		const char *text;
		int line, col;
		const char *msg;
	} cases[] = {
		{"bogus 1\n", 1, 1, "unknown record 'bogus'"},
		{"# c\n\nmig nope 1g.5gb 7 1 1 1 1 1 0 0 0 0 x\n", 3, 5,
		 "mig: unknown migset 'nope'"},
		{"migset m 7 8\nmig m 1g 7 x 1 1 1 1 0 0 0 0 s\n", 2, 12,
		 "mig: bad memory MiB 'x'"},
		{"gpu 0x1 7.5 100 - s \"T4\n", 1, 21, "unterminated quote"},
		{"gpu 0x1 75 100 - s T4\n", 1, 9, "gpu: bad compute capability '75' (want 8.0)"},
		{"gpu 0x1 7.5 100 nope s T4\n", 1, 17, "gpu: unknown migset 'nope'"},
		{"layout a @g on x=1\n", 1, 10, "layout: unknown pci group 'g'"},
		{"layout a - maybe\n", 1, 12, "layout: want on or off, not 'maybe'"},
		{"layout a - off 1g=1\n", 1, 16, "layout: MIG devices on an entry with MIG off"},
		{"pci g 0xZZ\n", 1, 7, "pci: bad PCI id '0xZZ' (want 0x20B010DE)"},
		{"gpu 0x1 7.5 100 - s T4\ngpu 0x2 7.5 100 - s T4\n", 2, 21,
		 "gpu: 'T4' listed twice"},
	};
	struct catalog *c;
	struct gs_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c = (struct catalog *)1;
		assert_int_equal(
			catalog_parse("t.tab", cases[i].text, strlen(cases[i].text), &c, &err), -1);
		assert_null(c);
		assert_string_equal(err.file, "t.tab");
		assert_int_equal(err.line, cases[i].line);
		assert_int_equal(err.col, cases[i].col);
		assert_string_equal(err.msg, cases[i].msg);
	}
	/* NUL bytes and huge counts never crash. */
	assert_int_equal(catalog_parse("t.tab", "pci g 0x1\0x", 11, &c, &err), -1);
	assert_int_equal(catalog_parse("t.tab", "", 0, &c, &err), 0);
	assert_int_equal(catalog_gpu_count(c), 0);
	catalog_free(c);
	catalog_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sanitize_rule),      cmocka_unit_test(families),
		cmocka_unit_test(models_by_any_name), cmocka_unit_test(coverage),
		cmocka_unit_test(profiles),	      cmocka_unit_test(profile_resource_names),
		cmocka_unit_test(layout_all_1g_10gb), cmocka_unit_test(layout_all_balanced),
		cmocka_unit_test(layout_other_cases), cmocka_unit_test(parse_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
