#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/offline.h"
#include "fleet/fleet.h"
#include "cmd/output.h"
#include "cmd/parseopt.h"
#include "base/didyoumean.h"
#include "base/escape.h"
#include "base/strbuf.h"
#include "fleet/import.h"
#include "model/catalog.h"
#include "model/dpconfig_set.h"
#include "yaml/yamlout.h"
#include "yaml/ydoc.h"
#include "base/banned.h"

#define IMPORT_MAX_ARGS 256 /* --pool specs */

static const char *const usage_lines[] = {
	"gpushare import -f NODES.yaml [-f ...] [-R] [--anonymise] [-o yaml|json]",
	"gpushare import --pool SPEC [--pool SPEC...] [-o yaml|json]",
	"gpushare import --check -f NODES.yaml [-f CM.yaml] [--configmap NS/NAME] [-o "
	"table|json|yaml]",
	NULL,
};

static const struct parseopt_example import_examples[] = {
	{"two kwok nodes of 8 H100s, on paper",
	 "gpushare import --pool train=2x8xNVIDIA-H100-80GB-HBM3"},
	{"a MIG pool as a JSON List",
	 "gpushare import --pool infer=1x1xNVIDIA-A100-SXM4-80GB,mig=all-1g.10gb,strategy=mixed -o "
	 "json"},
	{"twins of a real cluster's GPU nodes, renamed",
	 "gpushare import --anonymise -f tests/golden/import-check-real/nodes.yaml"},
	{"does gpushare advertise what the real nodes show?",
	 "gpushare import --check -f tests/golden/import-check-real/nodes.yaml"},
	{NULL, NULL},
};
static const struct parseopt_usage import_usage = {
	"import",
	usage_lines,
	"Print kwok twins of real GPU nodes: from the Nodes of a cluster where NVIDIA's\n"
	"device plugin and GPU feature discovery run (kubectl get nodes -o yaml; '-' is\n"
	"standard input), Nodes whose GPUs are declared as gpushare reads them (model,\n"
	"count, driver, machine from GFD's labels; the MIG layout, MIG strategy and\n"
	"device-plugin config as labels), with their CPU, memory, pods, other labels and\n"
	"taints, and nothing only a real machine has (conditions, addresses, nodeInfo,\n"
	"images, ...). --pool prints nodes of a fleet that exists only on paper.\n"
	"\n"
	"--check compares, node by node, what each real node shows (nvidia.com labels,\n"
	"capacity and allocatable) with what gpushare would advertise for its twin\n"
	"under the device-plugin ConfigMap --configmap names among the files, and lists\n"
	"every difference. See docs/guide/import.md.\n",
	"--pool NAME=COUNTxGPUSxMODEL: COUNT nodes NAME-0001... of GPUS GPUs of MODEL\n"
	"each (an NVML name or its label form: 4x8xNVIDIA-H100-80GB-HBM3); then any of\n"
	",config=KEY ,mig=LAYOUT ,strategy=none|single|mixed ,cpu=Q ,memory=Q ,pods=N\n"
	",driver=X.Y.Z (defaults: cpu 32, memory 256Gi, pods 110).\n"
	"\n"
	"--anonymise renames nodes gpu-node-NNNN (with GPUs) and node-NNNN by sorted\n"
	"name, zones and regions zone-N and region-N, and drops the labels that name\n"
	"the cluster, its account or its machines (docs/guide/import.md lists them).\n"
	"\n"
	"Exit status: 0 ok (--check: no difference), 1 --check found differences,\n"
	"2 bad usage or input.\n",
	import_examples,
	NULL,
};

struct arg_list {
	const char *items[IMPORT_MAX_ARGS];
	size_t n;
};

static int add_arg(const struct option *opt, const char *arg, struct gs_error *err)
{
	struct arg_list *l = opt->value;

	if (l->n == IMPORT_MAX_ARGS) {
		gs_error_set(err, "option '--%s' given more than %d times", opt->long_name,
			     IMPORT_MAX_ARGS);
		return -1;
	}
	l->items[l->n++] = arg;
	return 0;
}

static void print_error(const struct gs_error *err)
{
	char buf[2048];
	fprintf(stderr, "gpushare import: %s\n", gs_error_str(err, buf, sizeof(buf)));
}

static void print_list(const char *prefix, const struct gs_warnings *w)
{
	for (size_t i = 0; i < w->n; i++)
		cmd_eprintf("%s: %s\n", prefix, w->items[i]);
}

static const char *shown(const char *v)
{
	return !v ? "(absent)" : *v ? v : "\"\"";
}

/* The wider of w and s as cmd_printf shows it (escaped). */
static size_t widest(size_t w, const char *s)
{
	char *e = escape_line_dup(s);
	size_t n = strlen(e);

	free(e);
	return n > w ? n : w;
}

static void print_check_table(const struct import_check *c)
{
	size_t wn = 4, wf = 5, wr = 4;

	for (size_t i = 0; i < c->n; i++) {
		const struct import_diff *d = &c->diffs[i];
		wn = widest(wn, d->node);
		wf = widest(wf, d->field);
		wr = widest(wr, shown(d->real));
	}
	if (c->n)
		cmd_printf("%-*s  %-*s  %-*s  %s\n", (int)wn, "NODE", (int)wf, "FIELD", (int)wr,
			   "REAL", "TWIN");
	for (size_t i = 0; i < c->n; i++) {
		const struct import_diff *d = &c->diffs[i];
		cmd_printf("%-*s  %-*s  %-*s  %s\n", (int)wn, d->node, (int)wf, d->field, (int)wr,
			   shown(d->real), shown(d->twin));
	}
	if (c->n)
		printf("\n%zu difference%s on %zu of %zu node%s\n", c->n, c->n == 1 ? "" : "s",
		       c->nodes_differing, c->nodes, c->nodes == 1 ? "" : "s");
	else
		printf("%zu node%s compared (%zu with GPUs): no difference\n", c->nodes,
		       c->nodes == 1 ? "" : "s", c->gpu_nodes);
	for (size_t i = 0; i < import_n_ignored_labels; i++)
		cmd_printf("not compared: label %s (%s)\n", import_ignored_labels[i].label,
			   import_ignored_labels[i].why);
}

static int print_check_doc(const struct import_check *c, enum output_format fmt,
			   struct gs_error *err)
{
	json_t *o = json_object(), *diffs = json_array(), *ign = json_array(), *doc;
	int rc;

	for (size_t i = 0; i < c->n; i++) {
		const struct import_diff *d = &c->diffs[i];
		json_array_append_new(
			diffs, json_pack("{s:s,s:s,s:o,s:o}", "node", d->node, "field", d->field,
					 "real", d->real ? json_string(d->real) : json_null(),
					 "twin", d->twin ? json_string(d->twin) : json_null()));
	}
	for (size_t i = 0; i < import_n_ignored_labels; i++)
		json_array_append_new(ign, json_pack("{s:s,s:s}", "label",
						     import_ignored_labels[i].label, "why",
						     import_ignored_labels[i].why));
	json_object_set_new(o, "nodes", json_integer((json_int_t)c->nodes));
	json_object_set_new(o, "gpuNodes", json_integer((json_int_t)c->gpu_nodes));
	json_object_set_new(o, "differences", diffs);
	json_object_set_new(o, "notCompared", ign);
	doc = output_stamp(o, "ImportCheck");
	json_decref(o);
	rc = output_print(doc, fmt, 0, err);
	json_decref(doc);
	return rc;
}

static int run_check(struct import *im, const struct fleet *f, const struct configmap_ref *cm,
		     const json_t *configmap, const char *default_config, const char *fallbacks,
		     enum output_format fmt)
{
	struct import_check_opts co = {
		.configmap = configmap,
		.default_config = default_config,
		.fallbacks = fallbacks,
	};
	struct import_check c;
	struct gs_error err;
	int rc = EXIT_USAGE;

	memset(&c, 0, sizeof(c));
	if (import_check(im, &co, &c, &err)) {
		print_error(&err);
		goto out;
	}
	print_list("note", &c.notes);
	if (!configmap && c.config_labels) {
		char *others = fleet_configmap_others(f, cm->name);
		cmd_eprintf("hint: %zu node%s name%s a device-plugin config "
			    "(nvidia.com/device-plugin.config), and there is no ConfigMap %s/%s "
			    "among the files%s%s%s: every twin runs the empty config\n",
			    c.config_labels, c.config_labels == 1 ? "" : "s",
			    c.config_labels == 1 ? "s" : "", cm->ns, cm->name,
			    *others ? " (read: " : "", others,
			    *others ? "; --configmap NS/NAME names another)" : "");
		free(others);
	}
	if (output_is_doc(fmt) ? print_check_doc(&c, fmt, &err) : (print_check_table(&c), 0)) {
		print_error(&err);
		goto out;
	}
	rc = c.n ? EXIT_FINDING : EXIT_OK;
out:
	import_check_release(&c);
	return rc;
}

int cmd_import(int argc, char **argv)
{
	struct arg_list pools = {0};
	struct fleet_sources src = {0};
	struct configmap_ref cmref;
	struct fleet f;
	struct dpconfig_set *set = NULL;
	const json_t *cm = NULL;
	enum output_format output = OUTPUT_DEFAULT;
	const char *default_config = NULL, *fallbacks = NULL;
	bool check = false, anon = false;
	struct import_opts io = {0};
	const struct catalog *cat;
	struct import *im = NULL;
	struct gs_warnings w, notes;
	struct gs_error err;
	json_t *twins = NULL;
	int rc = EXIT_USAGE, n;
	struct option opts[] = {
		OPT_CALLBACK_HINT(0, "pool", &pools, "SPEC",
				  "NAME=COUNTxGPUSxMODEL[,KEY=VALUE...]: nodes of\n"
				  "a fleet on paper (below); may repeat",
				  add_arg, OPT_HINT_GPU_MODEL),
		OPT_FLAG(0, "anonymise", &anon,
			 "rename nodes, zones and regions; drop the\n"
			 "labels that identify the cluster"),
		OPT_FLAG(0, "anonymize", &anon, "the same"),
		OPT_OUTPUT(&output, OUTPUT_TABLES,
			   "yaml (a stream, default) or json (a List);\n"
			   "with --check: table (default), json or yaml\n"
			   "(kind ImportCheck)"),
		OPT_GROUP("The check"),
		OPT_FLAG(0, "check", &check,
			 "compare each real node with what gpushare\n"
			 "advertises for its twin; exit 1 on a difference"),
		OPT_CALLBACK(0, "configmap", &cmref, "NS/NAME",
			     "the real cluster's device-plugin ConfigMap among\n"
			     "the files [gpu-share/device-plugin-configs]; none\n"
			     "there: every twin runs the empty config",
			     parse_configmap_ref),
		OPT_STRING(0, "default-config", &default_config, "NAME",
			   "config-manager's DEFAULT_CONFIG in the real cluster"),
		OPT_STRING(0, "fallback-strategies", &fallbacks, "LIST",
			   "config-manager's FALLBACK_STRATEGIES (default\n"
			   "named,single)"),
		OPT_FLEET_SOURCES(&src),
		OPT_END(),
	};

	configmap_ref_init(&cmref);
	fleet_init(&f);
	gs_warnings_init(&w);
	gs_warnings_init(&notes);
	n = parse_options(argc, argv, opts, &import_usage);
	if (n < 0) {
		rc = parseopt_exit(n);
		goto out;
	}
	if (n > 0) {
		gs_error_set(&err, "'%s': name the nodes' file with -f", argv[0]);
		rc = usage_error(&import_usage, &err);
		goto out;
	}
	if (!src.n && !pools.n) {
		gs_error_set(&err, "nothing to import: give -f NODES.yaml or --pool SPEC");
		rc = usage_error(&import_usage, &err);
		goto out;
	}
	if (check && (!src.n || pools.n || anon)) {
		gs_error_set(&err, "%s",
			     !src.n    ? "--check needs the real nodes: -f NODES.yaml"
			     : pools.n ? "--check compares real nodes; a --pool has none"
				       : "--check compares under the real names; drop --anonymise");
		rc = usage_error(&import_usage, &err);
		goto out;
	}
	if (!check && (cmref.given || default_config || fallbacks)) {
		gs_error_set(&err, "%s is for --check",
			     cmref.given      ? "--configmap"
			     : default_config ? "--default-config"
					      : "--fallback-strategies");
		rc = usage_error(&import_usage, &err);
		goto out;
	}
	if (output == OUTPUT_TABLE && !check) {
		gs_error_set(&err, "-o table: twins print as yaml or json");
		rc = usage_error(&import_usage, &err);
		goto out;
	}

	if (catalog_builtin(&cat, &err)) {
		print_error(&err);
		goto out;
	}
	io.anonymise = anon;
	im = import_new(cat, &io);
	/* The check's ConfigMap is read with the nodes; without --check a ConfigMap is skipped. */
	if (src.n && (fleet_read(&f, &src, &err) ||
		      (check && offline_configmap(&f, &cmref, "import", false, &cm, &set, &err)) ||
		      import_add_fleet(im, &f, cm, &w, &err))) {
		print_list("warning", &w);
		print_error(&err);
		goto out;
	}
	for (size_t i = 0; i < pools.n; i++) {
		if (import_add_pool(im, pools.items[i], &err)) {
			print_list("warning", &w);
			print_error(&err);
			goto out;
		}
	}
	print_list("warning", &w);
	if (!import_count(im)) {
		gs_error_set(&err, "no Node in %s", src.n == 1 ? src.paths[0] : "the files");
		print_error(&err);
		goto out;
	}
	if (check) {
		rc = run_check(im, &f, &cmref, cm, default_config, fallbacks, output);
		goto out;
	}
	if (import_twins(im, &twins, &notes, &err) ||
	    output_print_list(twins, output == OUTPUT_JSON ? OUTPUT_JSON : OUTPUT_YAML, 0, &err)) {
		print_error(&err);
		goto out;
	}
	print_list("note", &notes);
	rc = EXIT_OK;
out:
	json_decref(twins);
	import_free(im);
	dpconfig_set_free(set);
	fleet_release(&f);
	fleet_sources_release(&src);
	configmap_ref_release(&cmref);
	gs_warnings_release(&w);
	gs_warnings_release(&notes);
	return rc;
}
