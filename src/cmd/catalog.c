#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/parseopt.h"
#include "model/catalog.h"
#include "yaml/yamlout.h"
#include "base/banned.h"

#define API_VERSION "gpushare.io/v1alpha1"

static const char *const usage_lines[] = {"gpushare catalog [-o table|json|yaml]",
					  "gpushare catalog MODEL [-o table|json|yaml]", NULL};

static const struct parseopt_example catalog_examples[] = {
	{"the GPU models gpushare knows", "gpushare catalog"},
	{"an A100's MIG profiles and the mig-parted layouts that fit it",
	 "gpushare catalog NVIDIA-A100-SXM4-80GB"},
	{"the whole catalog as YAML", "gpushare catalog -o yaml"},
	{NULL, NULL},
};
static const struct parseopt_usage catalog_usage = {
	"catalog",
	usage_lines,
	"The GPU models gpushare knows: memory, compute capability, MIG.\n"
	"MODEL (as nvidia.com/gpu.product writes it, \"NVIDIA A100-SXM4-80GB\", or\n"
	"its label form; case does not matter) shows that model's MIG profiles and\n"
	"every layout of mig-parted's default config that fits it.\n",
	"Exit status: 0 shown, 2 unknown model or bad usage.\n",
	catalog_examples,
	NULL,
};

static const char *const formats[] = {"table", "json", "yaml", NULL};
enum { FMT_TABLE, FMT_JSON, FMT_YAML };

static void cc_text(const struct catalog_gpu *g, char *buf, size_t size)
{
	snprintf(buf, size, "%d.%d", g->cc_major, g->cc_minor);
}

static void pci_text(const struct catalog_gpu *g, char *buf, size_t size)
{
	snprintf(buf, size, "0x%08lX", g->pci_id);
}

/* ---- JSON: one document, printed as JSON or YAML ---- */

static json_t *release_json(const struct catalog *cat)
{
	const struct catalog_release *r = catalog_release(cat);

	if (!r)
		return json_null();
	return json_pack("{s:s,s:s,s:s,s:s}", "project", r->project, "version", r->version,
			 "commit", r->commit, "file", r->file);
}

static json_t *model_summary_json(const struct catalog_gpu *g)
{
	char cc[16], pci[16];
	json_t *o;

	cc_text(g, cc, sizeof(cc));
	pci_text(g, pci, sizeof(pci));
	o = json_pack("{s:s,s:s,s:s,s:i,s:s,s:s,s:b}", "name", g->name, "label", g->label,
		      "pciDeviceId", pci, "memoryMiB", g->memory_mib, "computeCapability", cc,
		      "family", catalog_family(g->cc_major, g->cc_minor), "migCapable",
		      g->mig != NULL);
	if (g->mig)
		json_object_set_new(o, "migProfiles", json_integer((json_int_t)g->mig->n_profiles));
	json_object_set_new(o, "source", json_string(g->source));
	return o;
}

static json_t *list_json(const struct catalog *cat)
{
	json_t *models = json_array();

	for (size_t i = 0; i < catalog_gpu_count(cat); i++)
		json_array_append_new(models, model_summary_json(catalog_gpu_at(cat, i)));
	return json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", API_VERSION, "kind", "GPUCatalog",
			 "layoutsFrom", release_json(cat), "models", models);
}

static json_t *profile_json(const struct catalog_mig_profile *p)
{
	char res[160], pr[128];

	catalog_profile_resource(p->name, pr, sizeof(pr));
	snprintf(res, sizeof(res), "nvidia.com/mig-%s", pr);
	return json_pack("{s:s,s:s,s:i,s:i,s:i,s:i,s:i,s:s}", "name", p->name, "resource", res,
			 "memoryMiB", p->memory_mib, "multiprocessors", p->multiprocessors,
			 "giSlices", p->gi_slices, "ciSlices", p->ci_slices, "maxCount",
			 p->instances, "source", p->source);
}

/* The layouts of the table that fit g, each with what it leaves on one GPU. */
static json_t *layouts_json(const struct catalog *cat, const struct catalog_gpu *g)
{
	json_t *out = json_array();

	for (size_t i = 0; i < catalog_layout_count(cat); i++) {
		const char *name = catalog_layout_at(cat, i)->name;
		struct catalog_gpu_mig m;
		struct gs_error err;
		json_t *devices;

		if (!catalog_layout_fits(cat, name, g) ||
		    catalog_layout_apply(cat, name, g, &m, &err))
			continue;
		devices = json_array();
		for (size_t j = 0; j < m.n_devices; j++)
			json_array_append_new(devices, json_pack("{s:s,s:i}", "profile",
								 m.devices[j].profile, "count",
								 m.devices[j].count));
		json_array_append_new(out, json_pack("{s:s,s:b,s:o}", "name", name, "migEnabled",
						     m.mig_enabled, "devices", devices));
	}
	return out;
}

static json_t *model_json(const struct catalog *cat, const struct catalog_gpu *g)
{
	json_t *o = json_pack("{s:s,s:s}", "apiVersion", API_VERSION, "kind", "GPUModel");
	json_t *profiles = json_array();
	json_t *summary = model_summary_json(g);

	json_object_update(o, summary);
	json_decref(summary);
	if (g->mig) {
		for (size_t i = 0; i < g->mig->n_profiles; i++)
			json_array_append_new(profiles, profile_json(&g->mig->profiles[i]));
		json_object_set_new(o, "computeSlices", json_integer(g->mig->compute_slices));
		json_object_set_new(o, "memorySlices", json_integer(g->mig->memory_slices));
	}
	json_object_set_new(o, "profiles", profiles);
	json_object_set_new(o, "layoutsFrom", release_json(cat));
	json_object_set_new(o, "layouts", layouts_json(cat, g));
	return o;
}

static int print_doc(json_t *doc, int fmt)
{
	struct strbuf out = STRBUF_INIT;
	struct gs_error err;
	char *s;

	if (fmt == FMT_JSON) {
		s = json_dumps(doc, JSON_INDENT(2));
		if (!s) {
			fprintf(stderr, "gpushare catalog: out of memory\n");
			return EXIT_USAGE;
		}
		puts(s);
		free(s);
		return EXIT_OK;
	}
	if (yamlout_document(doc, &out, &err)) {
		fprintf(stderr, "gpushare catalog: %s\n", err.msg);
		strbuf_release(&out);
		return EXIT_USAGE;
	}
	fputs(out.buf, stdout);
	strbuf_release(&out);
	return EXIT_OK;
}

/* ---- tables ---- */

static void print_release(const struct catalog *cat)
{
	const struct catalog_release *r = catalog_release(cat);

	if (r)
		cmd_printf("layouts: %s %s %s\n", r->project, r->version, r->file);
}

static void print_list(const struct catalog *cat)
{
	cmd_printf("%-45s %-11s %-5s %-4s %s\n", "MODEL", "MEMORY", "CC", "MIG", "PROFILES");
	for (size_t i = 0; i < catalog_gpu_count(cat); i++) {
		const struct catalog_gpu *g = catalog_gpu_at(cat, i);
		char cc[16], mem[32], prof[16] = "-";
		cc_text(g, cc, sizeof(cc));
		snprintf(mem, sizeof(mem), "%d MiB", g->memory_mib);
		if (g->mig)
			snprintf(prof, sizeof(prof), "%zu", g->mig->n_profiles);
		cmd_printf("%-45s %-11s %-5s %-4s %s\n", g->name, mem, cc, g->mig ? "yes" : "no",
			   prof);
	}
	cmd_printf("\n");
	print_release(cat);
	cmd_printf("'gpushare catalog MODEL' shows a model's MIG profiles and layouts.\n");
}

static void print_model(const struct catalog *cat, const struct catalog_gpu *g)
{
	char cc[16], pci[16];
	json_t *layouts;
	const json_t *l;
	size_t i;

	cc_text(g, cc, sizeof(cc));
	pci_text(g, pci, sizeof(pci));
	cmd_printf("%s\n", g->name);
	cmd_printf("  label form:          %s\n", g->label);
	cmd_printf("  memory:              %d MiB\n", g->memory_mib);
	cmd_printf("  compute capability:  %s (%s)\n", cc,
		   catalog_family(g->cc_major, g->cc_minor));
	cmd_printf("  PCI device id:       %s\n", pci);
	if (!g->mig) {
		cmd_printf(
			"  MIG:                 no (not MIG-capable: no profiles, no layouts)\n");
		return;
	}
	cmd_printf("  MIG:                 yes, %d compute slices, %d memory slices\n",
		   g->mig->compute_slices, g->mig->memory_slices);

	cmd_printf("\n%-16s %-10s %-9s %-5s %s\n", "PROFILE", "MEMORY", "GI/CI", "SMS", "MAX");
	for (i = 0; i < g->mig->n_profiles; i++) {
		const struct catalog_mig_profile *p = &g->mig->profiles[i];
		char mem[32], sl[32];
		snprintf(mem, sizeof(mem), "%d MiB", p->memory_mib);
		snprintf(sl, sizeof(sl), "%d/%d", p->gi_slices, p->ci_slices);
		cmd_printf("%-16s %-10s %-9s %-5d %d\n", p->name, mem, sl, p->multiprocessors,
			   p->instances);
	}

	layouts = layouts_json(cat, g);
	cmd_printf("\n%-20s %-4s %s\n", "LAYOUT", "MIG", "DEVICES PER GPU");
	json_array_foreach (layouts, i, l) {
		const json_t *devs = json_object_get(l, "devices"), *d;
		struct strbuf sb = STRBUF_INIT;
		size_t j;
		json_array_foreach (devs, j, d)
			strbuf_addf(&sb, "%s%lld x %s", j ? ", " : "",
				    (long long)json_integer_value(json_object_get(d, "count")),
				    json_string_value(json_object_get(d, "profile")));
		cmd_printf("%-20s %-4s %s\n", json_string_value(json_object_get(l, "name")),
			   json_is_true(json_object_get(l, "migEnabled")) ? "on" : "off",
			   sb.len ? sb.buf : "-");
		strbuf_release(&sb);
	}
	json_decref(layouts);
	cmd_printf("\n");
	print_release(cat);
}

/*
 * The model `name` names: its NVML name, else the one whose name or label
 * form matches ignoring case (the table refuses two models that match
 * each other so, so the match is never ambiguous).
 */
static const struct catalog_gpu *find_model(const struct catalog *cat, const char *name)
{
	for (size_t i = 0; i < catalog_gpu_count(cat); i++)
		if (!strcmp(catalog_gpu_at(cat, i)->name, name))
			return catalog_gpu_at(cat, i);
	return catalog_find_gpu(cat, name);
}

int cmd_catalog(int argc, char **argv)
{
	const char *format = "table";
	const struct catalog *cat;
	const struct catalog_gpu *g = NULL;
	struct gs_error err;
	char buf[2048];
	int fmt, n;
	struct option opts[] = {
		OPT_STRING_VALUES('o', "output", &format, "FORMAT",
				  "table (default), json or yaml: apiVersion " API_VERSION ",\n"
				  "kind GPUCatalog, or GPUModel with MODEL",
				  formats),
		OPT_END(),
	};

	n = parse_options(argc, argv, opts, &catalog_usage);
	if (n < 0)
		return parseopt_exit(n);
	if (n > 1) {
		gs_error_set(&err, "one model at a time ('%s'); quote a name with blanks", argv[1]);
		return usage_error(&catalog_usage, &err);
	}
	fmt = parseopt_choice("output format", format, formats, 3, &err);
	if (fmt < 0)
		return usage_error(&catalog_usage, &err);
	if (catalog_builtin(&cat, &err)) {
		fprintf(stderr, "gpushare catalog: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		return EXIT_USAGE;
	}
	if (n == 1) {
		g = find_model(cat, argv[0]);
		if (!g) {
			struct strbuf hint = STRBUF_INIT;
			catalog_gpu_hint(cat, argv[0], &hint);
			cmd_eprintf("gpushare catalog: unknown GPU model '%s'%s\n", argv[0],
				    hint.buf);
			strbuf_release(&hint);
			return EXIT_USAGE;
		}
	}
	if (fmt == FMT_TABLE) {
		if (g)
			print_model(cat, g);
		else
			print_list(cat);
		return EXIT_OK;
	}
	json_t *doc = g ? model_json(cat, g) : list_json(cat);
	int rc = print_doc(doc, fmt);
	json_decref(doc);
	return rc;
}
