#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/catalog.h"
#include "yaml/ydoc.h"

#define MIG_PARTED_DATA "tests/unit/data/mig-parted/"

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

/* k8s-device-plugin v0.20.0 internal/lm/resource.go: sanitize examples. */
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

/* k8s-device-plugin v0.20.0 internal/lm/resource.go family table. */
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

/* k8s-device-plugin v0.20.0 internal/lm/resource.go model-name examples and GPU Operator docs
 * gpu-operator/gpu-sharing.rst. */
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
	/* Old driver name: no "NVIDIA " prefix, less memory (k8s-device-plugin v0.20.0
	 * internal/lm/resource.go). */
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

/* The catalog's minimum coverage, and MIG capability per NVIDIA MIG User Guide (Supported MIG
 * Profiles). */
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

/* NVIDIA MIG User Guide (Supported MIG Profiles) and GPU Operator docs
 * gpu-operator/gpu-operator-mig.rst. */
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
	/* mig-parted v0.15.0 deployments/systemd/config-default.yaml: 1g.10gb exists on A100-40GB,
	 * at most 4. */
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

/* mig-parted v0.15.0 deployments/systemd/config-default.yaml, all-1g.10gb. */
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

/* mig-parted v0.15.0 deployments/systemd/config-default.yaml all-balanced row. */
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

	/* mig-parted v0.15.0 deployments/systemd/config-default.yaml: no device-filter, GPU lacks
	 * the profile → apply fails. */
	assert_int_equal(
		catalog_layout_apply(cat(), "all-1g.5gb", gpu("NVIDIA H100 80GB HBM3"), &m, &err),
		-1);
	assert_non_null(strstr(err.msg, "1g.5gb"));
	/* apply/config.go skips a GPU that is not MIG-capable (devices: all). */
	assert_int_equal(apply("all-1g.5gb", "Tesla T4", &m), 0);
	assert_int_equal(m.result, CATALOG_APPLY_NOT_CAPABLE);
	assert_int_equal(m.n_devices, 0);
	assert_int_equal(catalog_layout_apply(cat(), "custom-thing", gpu("NVIDIA H200"), &m, &err),
			 -1);
	assert_string_equal(err.msg, "selected mig-config not present: custom-thing (see "
				     "'gpushare catalog \"NVIDIA H200\"')");
	/* A near name gets the layouts that fit this GPU. */
	assert_int_equal(
		catalog_layout_apply(cat(), "all-1g.10g", gpu("NVIDIA A100-SXM4-80GB"), &m, &err),
		-1);
	assert_string_equal(err.msg, "selected mig-config not present: all-1g.10g; did you mean "
				     "'all-1g.10gb'? (see 'gpushare catalog \"NVIDIA "
				     "A100-SXM4-80GB\"')");

	assert_int_equal(apply("all-1g.10gb", "NVIDIA A100-SXM4-80GB", &m), 0);
	assert_false(m.generated);
}

/* The table names the one mig-parted release its layouts come from. */
static void release_named(void **state)
{
	const struct catalog_release *r = catalog_release(cat());

	(void)state;
	assert_non_null(r);
	assert_string_equal(r->project, "mig-parted");
	assert_string_equal(r->version, "v0.15.0");
	assert_string_equal(r->commit, "e2d5ad1fc72b9d298ea6d04b885cf2d7dbe56941");
	assert_string_equal(r->file, "deployments/systemd/config-default.yaml");
}

/* An entry's device-filter (absent, a string or a list) equals the table's ids, in order. */
static void same_filter(const char *layout, size_t i, const json_t *spec,
			const struct catalog_layout_entry *e)
{
	const json_t *f = json_object_get(spec, "device-filter");
	size_t n = !f ? 0 : json_is_string(f) ? 1 : json_array_size(f);

	if (n != e->n_filter)
		fail_msg("%s entry %zu: %zu filter ids upstream, %zu in the table", layout, i, n,
			 e->n_filter);
	for (size_t k = 0; k < n; k++) {
		const json_t *id = json_is_string(f) ? f : json_array_get(f, k);
		unsigned long want = strtoul(json_string_value(id), NULL, 16);
		if (want != e->filter[k])
			fail_msg("%s entry %zu: filter id %zu is %s upstream, 0x%08lX in the table",
				 layout, i, k, json_string_value(id), e->filter[k]);
	}
}

/*
 * Every config of the release's file is a layout of the table, entry by
 * entry (device-filter, mig-enabled, mig-devices), and the table has no other.
 * The file is chosen by the release record, so naming a new release asks for
 * its file.
 */
static void layouts_are_the_release(void **state)
{
	const struct catalog_release *r = catalog_release(cat());
	char path[256];
	struct ydoc_stream *s;
	struct gs_error err;
	const json_t *configs, *entries;
	const char *name;

	(void)state;
	assert_non_null(r);
	snprintf(path, sizeof(path), MIG_PARTED_DATA "config-default-%s.yaml", r->version);
	if (ydoc_load_file(path, &ydoc_default_limits, &s, &err))
		fail_msg("%s: %s", path, err.msg);
	configs = json_object_get(ydoc_stream_doc(s, 0), "mig-configs");
	assert_non_null(configs);
	assert_int_equal(json_object_size(configs), catalog_layout_count(cat()));
	json_object_foreach ((json_t *)configs, name, entries) {
		const struct catalog_layout *lay = catalog_find_layout(cat(), name);
		if (!lay)
			fail_msg("layout %s of mig-parted %s is not in the table", name,
				 r->version);
		if (json_array_size(entries) != lay->n_entries)
			fail_msg("%s: %zu entries upstream, %zu in the table", name,
				 json_array_size(entries), lay->n_entries);
		for (size_t i = 0; i < lay->n_entries; i++) {
			const json_t *spec = json_array_get(entries, i);
			const struct catalog_layout_entry *e = &lay->entries[i];
			const json_t *devs = json_object_get(spec, "mig-devices");
			same_filter(name, i, spec, e);
			assert_string_equal(json_string_value(json_object_get(spec, "devices")),
					    "all");
			assert_int_equal(json_is_true(json_object_get(spec, "mig-enabled")),
					 e->mig_enabled);
			if (json_object_size(devs) != e->n_devices)
				fail_msg("%s entry %zu: %zu profiles upstream, %zu in the table",
					 name, i, json_object_size(devs), e->n_devices);
			for (size_t k = 0; k < e->n_devices; k++) {
				const json_t *c = json_object_get(devs, e->devices[k].profile);
				if (!c || json_integer_value(c) != e->devices[k].count)
					fail_msg("%s entry %zu: %s=%d is not upstream's", name, i,
						 e->devices[k].profile, e->devices[k].count);
			}
		}
	}
	ydoc_stream_free(s);
}

/*
 * The profile table agrees with the release: every layout entry fits every
 * catalog model it applies to that has its profiles, and an all-<profile>
 * layout asks for exactly the profile's max instances.
 */
static void layouts_fit_the_profiles(void **state)
{
	size_t checked = 0;

	(void)state;
	for (size_t l = 0; l < catalog_layout_count(cat()); l++) {
		const struct catalog_layout *lay = catalog_layout_at(cat(), l);
		for (size_t g = 0; g < catalog_gpu_count(cat()); g++) {
			const struct catalog_gpu *model = catalog_gpu_at(cat(), g);
			struct catalog_gpu_mig m;
			struct gs_error err;
			bool has_all = model->mig != NULL;
			for (size_t i = 0; i < lay->n_entries && has_all; i++)
				for (size_t k = 0; k < lay->entries[i].n_devices; k++)
					has_all &=
						catalog_gpu_profile(
							model,
							lay->entries[i].devices[k].profile) != NULL;
			if (!has_all)
				continue;
			if (catalog_layout_apply(cat(), lay->name, model, &m, &err))
				fail_msg("%s on %s: %s", lay->name, model->name, err.msg);
			if (m.result != CATALOG_APPLY_OK || m.n_devices != 1)
				continue;
			char res[64];
			catalog_profile_resource(m.devices[0].profile, res, sizeof(res));
			if (!strcmp(lay->name + 4, res) &&
			    m.devices[0].count !=
				    catalog_gpu_profile(model, m.devices[0].profile)->instances)
				fail_msg("%s on %s: %d instances, the table says %d fit", lay->name,
					 model->name, m.devices[0].count,
					 catalog_gpu_profile(model, m.devices[0].profile)
						 ->instances);
			checked++;
		}
	}
	assert_true(checked > 100);
}

/* Layouts that exist only since mig-parted v0.15: device-filtered all-1g.35gb, B300/GB300. */
static void layout_v015_cases(void **state)
{
	struct catalog_gpu_mig m;
	struct gs_error err;

	(void)state;
	/* all-1g.35gb: 4 on H200 141GB (0x2335), 7 on GB300; H200 NVL (0x233B) matches neither. */
	assert_int_equal(apply("all-1g.35gb", "NVIDIA H200", &m), 0);
	assert_int_equal(m.result, CATALOG_APPLY_OK);
	assert_int_equal(one_count(&m, "1g.35gb"), 4);
	assert_int_equal(apply("all-1g.35gb", "NVIDIA GB300", &m), 0);
	assert_int_equal(one_count(&m, "1g.35gb"), 7);
	assert_int_equal(apply("all-1g.35gb", "NVIDIA H200 NVL", &m), 0);
	assert_int_equal(m.result, CATALOG_APPLY_NO_MATCH);
	assert_int_equal(apply("all-1g.35gb", "NVIDIA B300 SXM6 AC", &m), 0);
	assert_int_equal(m.result, CATALOG_APPLY_NO_MATCH);

	/* B300 / GB300 single-profile layouts and their +me profiles are static now. */
	assert_int_equal(apply("all-1g.34gb", "NVIDIA B300 SXM6 AC", &m), 0);
	assert_false(m.generated);
	assert_int_equal(one_count(&m, "1g.34gb"), 7);
	assert_int_equal(apply("all-1g.34gb.me", "NVIDIA B300 SXM6 AC", &m), 0);
	assert_false(m.generated);
	assert_int_equal(one_count(&m, "1g.34gb+me"), 1);
	assert_int_equal(apply("all-1g.35gb.me", "NVIDIA GB300", &m), 0);
	assert_int_equal(one_count(&m, "1g.35gb+me"), 1);
	assert_int_equal(catalog_gpu_profile(gpu("NVIDIA GB300"), "1g.35gb+me")->ofa, 1);
	assert_int_equal(apply("all-1g.70gb", "NVIDIA GB300", &m), 0);
	assert_int_equal(one_count(&m, "1g.70gb"), 4);
	assert_int_equal(apply("all-7g.269gb", "NVIDIA B300 SXM6 AC", &m), 0);
	assert_int_equal(one_count(&m, "7g.269gb"), 1);
	assert_false(m.generated);
	/* No device-filter: a GB300 lacks B300's profile, and mig-manager fails. */
	assert_int_equal(
		catalog_layout_apply(cat(), "all-1g.34gb.me", gpu("NVIDIA GB300"), &m, &err), -1);
	assert_string_equal(err.msg, "layout all-1g.34gb.me asks for MIG profile 1g.34gb+me, "
				     "which NVIDIA GB300 does not have; did you mean "
				     "'all-1g.35gb.me'? (see 'gpushare catalog \"NVIDIA GB300\"')");
	/* Upstream lists these for a model gpushare does not know: no model has them. */
	assert_int_equal(catalog_layout_apply(cat(), "all-7g.189gb", gpu("NVIDIA GB200"), &m, &err),
			 -1);
}

/* mig-parted walks every entry in order: each match is applied, the last one stays. */
static void entries_walked_in_order(void **state)
{
	static const char table[] = "release mig-parted vX c f\n"
				    "migset s 7 8\n"
				    "mig s 1g.5gb 7 4864 14 1 1 1 0 0 0 0 spec\n"
				    "mig s 2g.10gb 3 9984 28 2 2 2 1 0 0 0 spec\n"
				    "gpu 0x20B010DE 8.0 40960 s spec \"A\"\n"
				    "gpu 0x1EB810DE 7.5 15360 - spec \"T\"\n"
				    "layout two - on 1g.5gb=7\n"
				    "layout two 0x20B010DE on 2g.10gb=3\n"
				    "layout bad - on 1g.5gb=8\n"
				    "layout bad 0x20B010DE on 2g.10gb=3\n"
				    "layout other 0x233010DE on 1g.5gb=1\n";
	struct catalog *c;
	struct catalog_gpu_mig m;
	struct gs_error err;

	(void)state;
	assert_int_equal(catalog_parse("t.tab", table, strlen(table), &c, &err), 0);
	assert_string_equal(catalog_release(c)->version, "vX");
	assert_int_equal(catalog_layout_count(c), 3);
	assert_null(catalog_layout_at(c, 3));
	assert_int_equal(catalog_layout_apply(c, "two", catalog_find_gpu(c, "A"), &m, &err), 0);
	assert_int_equal(m.n_devices, 1);
	assert_string_equal(m.devices[0].profile, "2g.10gb");
	assert_int_equal(m.devices[0].count, 3);
	/* An earlier entry that cannot be applied fails the whole apply. */
	assert_int_equal(catalog_layout_apply(c, "bad", catalog_find_gpu(c, "A"), &m, &err), -1);
	assert_string_equal(err.msg, "layout bad asks for 8 x 1g.5gb, but at most 7 fit on A (see "
				     "'gpushare catalog \"A\"')");
	assert_int_equal(catalog_layout_apply(c, "other", catalog_find_gpu(c, "A"), &m, &err), 0);
	assert_int_equal(m.result, CATALOG_APPLY_NO_MATCH);
	assert_int_equal(catalog_layout_apply(c, "two", catalog_find_gpu(c, "T"), &m, &err), 0);
	assert_int_equal(m.result, CATALOG_APPLY_NOT_CAPABLE);
	/* A name the release lacks: the generated-config rule (mig-parted v0.15.0
	 * deployments/systemd/config-default.yaml). */
	assert_int_equal(catalog_layout_apply(c, "all-2g.10gb", catalog_find_gpu(c, "A"), &m, &err),
			 0);
	assert_true(m.generated);
	assert_int_equal(m.devices[0].count, 3);
	catalog_free(c);
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
		{"release p v c f\nlayout a @g on x=1\n", 2, 10, "layout: unknown pci group 'g'"},
		{"release p v c f\nlayout a - maybe\n", 2, 12,
		 "layout: want on or off, not 'maybe'"},
		{"release p v c f\nlayout a - off 1g=1\n", 2, 16,
		 "layout: MIG devices on an entry with MIG off"},
		{"layout a - off\n", 1, 1,
		 "layout: no release record before it (which mig-parted release?)"},
		{"release p v c f\nrelease p w c f\n", 2, 1,
		 "release: named twice (one table holds one release's layouts)"},
		{"release p v c\n", 1, 1, "release: want PROJECT VERSION COMMIT FILE"},
		{"pci g 0xZZ\n", 1, 7, "pci: bad PCI id '0xZZ' (want 0x20B010DE)"},
		{"gpu 0x1 7.5 100 - s T4\ngpu 0x2 7.5 100 - s T4\n", 2, 21,
		 "gpu: 'T4' listed twice"},
		{"gip m 1g 19 1 0 s\n", 1, 5, "gip: unknown migset 'm'"},
		{"migset m 7 8\ngip m 1g 19 1 0 s\n", 2, 7,
		 "gip: no profile '1g' in 'm' (list it with `mig` first)"},
		{"migset m 7 8\nmig m 1g 7 10 14 1 1 1 0 0 0 0 s\ngip m 1g 19 1 0,8 s\n", 3, 15,
		 "gip: placement '8' does not fit 8 slices"},
		{"migset m 7 8\nmig m 1g 7 10 14 1 1 1 0 0 0 0 s\ngip m 1g 19 9 0 s\n", 3, 13,
		 "gip: bad placement size '9'"},
		{"migset m 7 8\nmig m 1g 7 10 14 1 1 1 0 0 0 0 s\ngip m 1g 19 1 0 s\ngip m 1g 19 "
		 "1 0 s\n",
		 4, 7, "gip: profile '1g' of 'm' listed twice"},
		{"migset m 7 8\nmig m 1g 7 10 14 1 1 1 0 0 0 0 s\ngip m 1g 19 1 0,,1 s\n", 3, 15,
		 "gip: bad placement starts '0,,1'"},
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
		cmocka_unit_test(sanitize_rule),
		cmocka_unit_test(families),
		cmocka_unit_test(models_by_any_name),
		cmocka_unit_test(coverage),
		cmocka_unit_test(profiles),
		cmocka_unit_test(profile_resource_names),
		cmocka_unit_test(layout_all_1g_10gb),
		cmocka_unit_test(layout_all_balanced),
		cmocka_unit_test(layout_other_cases),
		cmocka_unit_test(parse_errors),
		cmocka_unit_test(release_named),
		cmocka_unit_test(layouts_are_the_release),
		cmocka_unit_test(layouts_fit_the_profiles),
		cmocka_unit_test(layout_v015_cases),
		cmocka_unit_test(entries_walked_in_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
