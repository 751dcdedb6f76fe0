#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/parseopt.h"
#include "base/escape.h"
#include "base/strbuf.h"
#include "fleet/import.h"
#include "model/catalog.h"
#include "model/dpconfig_set.h"
#include "yaml/yamlout.h"
#include "yaml/ydoc.h"
#include "base/banned.h"

#define IMPORT_MAX_ARGS 256 /* -f files, --pool specs */

static const char *const usage_lines[] = {
	"gpushare import -f NODES.yaml [-f ...] [--anonymise] [-o yaml|json]",
	"gpushare import --pool SPEC [--pool SPEC...] [-o yaml|json]",
	"gpushare import --check -f NODES.yaml [--configmap CM.yaml] [-o json]",
	NULL,
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
	"under the ConfigMap, and lists every difference. See docs/import.md.\n",
	"--pool NAME=COUNTxGPUSxMODEL: COUNT nodes NAME-0001... of GPUS GPUs of MODEL\n"
	"each (an NVML name or its label form: 4x8xNVIDIA-H100-80GB-HBM3); then any of\n"
	",config=KEY ,mig=LAYOUT ,strategy=none|single|mixed ,cpu=Q ,memory=Q ,pods=N\n"
	",driver=X.Y.Z (defaults: cpu 32, memory 256Gi, pods 110).\n"
	"\n"
	"--anonymise renames nodes gpu-node-NNNN (with GPUs) and node-NNNN by sorted\n"
	"name, zones and regions zone-N and region-N, and drops the labels that name\n"
	"the cluster, its account or its machines (docs/import.md lists them).\n"
	"\n"
	"Exit status: 0 ok (--check: no difference), 1 --check found differences,\n"
	"2 bad usage or input.\n",
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

static int parse_output(const struct option *opt, const char *arg, struct gs_error *err)
{
	const char **out = opt->value;

	if (strcmp(arg, "yaml") && strcmp(arg, "json") && strcmp(arg, "table")) {
		gs_error_set(err, "-o takes yaml or json (with --check: table or json), not '%s'",
			     arg);
		return -1;
	}
	*out = arg;
	return 0;
}

static void print_error(const struct gs_error *err)
{
	char buf[2048];
	fprintf(stderr, "error: %s\n", gs_error_str(err, buf, sizeof(buf)));
}

static void print_list(const char *prefix, const struct gs_warnings *w)
{
	for (size_t i = 0; i < w->n; i++)
		cmd_eprintf("%s: %s\n", prefix, w->items[i]);
}

static int print_twins(const json_t *twins, bool json, struct gs_error *err)
{
	struct strbuf out = STRBUF_INIT;
	int rc = 0;

	if (json) {
		json_t *list = json_pack("{s:s,s:s,s:O}", "apiVersion", "v1", "kind", "List",
					 "items", twins);
		char *s = json_dumps(list, JSON_INDENT(2));
		json_decref(list);
		if (!s) {
			gs_error_set(err, "out of memory");
			return -1;
		}
		puts(s);
		free(s);
		return 0;
	}
	for (size_t i = 0; i < json_array_size(twins) && !rc; i++) {
		if (i)
			strbuf_addstr(&out, "---\n");
		rc = yamlout_document(json_array_get(twins, i), &out, err);
	}
	if (!rc)
		fwrite(out.buf, 1, out.len, stdout);
	strbuf_release(&out);
	return rc;
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

static int print_check_json(const struct import_check *c)
{
	json_t *o = json_object(), *diffs = json_array(), *ign = json_array();
	char *s;

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
	s = json_dumps(o, JSON_INDENT(2));
	json_decref(o);
	if (!s)
		return -1;
	puts(s);
	free(s);
	return 0;
}

static int run_check(struct import *im, const char *cm_path, const char *default_config,
		     const char *fallbacks, bool json)
{
	struct import_check_opts co = {
		.default_config = default_config,
		.fallbacks = fallbacks,
	};
	struct ydoc_stream *cm_stream = NULL;
	struct dpconfig_set *set = NULL;
	struct import_check c;
	struct gs_error err;
	int rc = EXIT_USAGE;

	memset(&c, 0, sizeof(c));
	if (cm_path && dpconfig_set_load_file(cm_path, &cm_stream, &co.configmap, &set, &err)) {
		print_error(&err);
		goto out;
	}
	if (import_check(im, &co, &c, &err)) {
		print_error(&err);
		goto out;
	}
	print_list("note", &c.notes);
	if (!cm_path && c.config_labels)
		fprintf(stderr,
			"hint: %zu node%s name%s a device-plugin config "
			"(nvidia.com/device-plugin.config)"
			"; without --configmap every twin runs the empty config\n",
			c.config_labels, c.config_labels == 1 ? "" : "s",
			c.config_labels == 1 ? "s" : "");
	if (json ? print_check_json(&c) : (print_check_table(&c), 0))
		goto out;
	rc = c.n ? EXIT_FINDING : EXIT_OK;
out:
	import_check_release(&c);
	dpconfig_set_free(set);
	ydoc_stream_free(cm_stream);
	return rc;
}

int cmd_import(int argc, char **argv)
{
	struct arg_list files = {0}, pools = {0};
	const char *output = NULL, *cm_path = NULL, *default_config = NULL, *fallbacks = NULL;
	bool check = false, anon = false;
	struct ydoc_stream *streams[IMPORT_MAX_ARGS] = {0};
	struct import_opts io = {0};
	const struct catalog *cat;
	struct import *im = NULL;
	struct gs_warnings w, notes;
	struct gs_error err;
	json_t *twins = NULL;
	bool stdin_used = false;
	int rc = EXIT_USAGE, n;
	struct option opts[] = {
		OPT_CALLBACK('f', "filename", &files, "FILE",
			     "Nodes of a real cluster (kubectl get nodes -o\n"
			     "yaml): a List or documents; '-' is standard\n"
			     "input; may repeat",
			     add_arg),
		OPT_CALLBACK(0, "pool", &pools, "SPEC",
			     "NAME=COUNTxGPUSxMODEL[,KEY=VALUE...]: nodes of\n"
			     "a fleet on paper (below); may repeat",
			     add_arg),
		OPT_FLAG(0, "anonymise", &anon,
			 "rename nodes, zones and regions; drop the\n"
			 "labels that identify the cluster"),
		OPT_FLAG(0, "anonymize", &anon, "the same"),
		OPT_CALLBACK('o', "output", &output, "FORMAT",
			     "yaml (a stream, default) or json (a List);\n"
			     "with --check: table (default) or json",
			     parse_output),
		OPT_GROUP("The check"),
		OPT_FLAG(0, "check", &check,
			 "compare each real node with what gpushare\n"
			 "advertises for its twin; exit 1 on a difference"),
		OPT_STRING(0, "configmap", &cm_path, "FILE",
			   "the real cluster's device-plugin ConfigMap\n"
			   "(without it every twin runs the empty config)"),
		OPT_STRING(0, "default-config", &default_config, "NAME",
			   "config-manager's DEFAULT_CONFIG in the real cluster"),
		OPT_STRING(0, "fallback-strategies", &fallbacks, "LIST",
			   "config-manager's FALLBACK_STRATEGIES (default\n"
			   "named,single)"),
		OPT_END(),
	};

	n = parse_options(argc, argv, opts, &import_usage);
	if (n < 0)
		return parseopt_exit(n);
	if (n > 0) {
		gs_error_set(&err, "'%s': name the nodes' file with -f", argv[0]);
		return usage_error(&import_usage, &err);
	}
	if (!files.n && !pools.n) {
		gs_error_set(&err, "nothing to import: give -f NODES.yaml or --pool SPEC");
		return usage_error(&import_usage, &err);
	}
	if (check && (!files.n || pools.n || anon)) {
		gs_error_set(&err, "%s",
			     !files.n  ? "--check needs the real nodes: -f NODES.yaml"
			     : pools.n ? "--check compares real nodes; a --pool has none"
				       : "--check compares under the real names; drop --anonymise");
		return usage_error(&import_usage, &err);
	}
	if (!check && (cm_path || default_config || fallbacks)) {
		gs_error_set(&err, "%s is for --check",
			     cm_path	      ? "--configmap"
			     : default_config ? "--default-config"
					      : "--fallback-strategies");
		return usage_error(&import_usage, &err);
	}
	if (output && !strcmp(output, check ? "yaml" : "table")) {
		gs_error_set(&err, "-o %s: %s", output,
			     check ? "--check prints table or json"
				   : "twins print as yaml or json");
		return usage_error(&import_usage, &err);
	}

	gs_warnings_init(&w);
	gs_warnings_init(&notes);
	if (catalog_builtin(&cat, &err)) {
		print_error(&err);
		goto out;
	}
	io.anonymise = anon;
	im = import_new(cat, &io);
	for (size_t i = 0; i < files.n; i++) {
		if (!strcmp(files.items[i], "-")) {
			if (stdin_used) {
				gs_error_set(&err, "-f -: standard input can be read once");
				rc = usage_error(&import_usage, &err);
				goto out;
			}
			stdin_used = true;
		}
		if (ydoc_load_manifests(files.items[i], &ydoc_default_limits, &streams[i], &err) ||
		    import_add_stream(im, streams[i], &w, &err)) {
			print_list("warning", &w);
			print_error(&err);
			goto out;
		}
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
		gs_error_set(&err, "no Node in %s", files.n == 1 ? files.items[0] : "the files");
		print_error(&err);
		goto out;
	}
	if (check) {
		rc = run_check(im, cm_path, default_config, fallbacks,
			       output && !strcmp(output, "json"));
		goto out;
	}
	if (import_twins(im, &twins, &notes, &err) ||
	    print_twins(twins, output && !strcmp(output, "json"), &err)) {
		print_error(&err);
		goto out;
	}
	print_list("note", &notes);
	rc = EXIT_OK;
out:
	json_decref(twins);
	import_free(im);
	for (size_t i = 0; i < files.n; i++)
		ydoc_stream_free(streams[i]);
	gs_warnings_release(&w);
	gs_warnings_release(&notes);
	return rc;
}
