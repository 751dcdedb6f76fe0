#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "advertise.h"
#include "catalog.h"
#include "dpconfig.h"
#include "ydoc.h"
#include "banned.h"

static void usage(FILE *out)
{
	fputs("usage: gpushare advertise [options] NODE.yaml\n"
	      "\n"
	      "Print the JSON merge patch that makes a Node advertise what NVIDIA's device\n"
	      "plugin and GPU feature discovery would publish for its declared GPUs:\n"
	      "status.capacity/allocatable and labels (see docs/advertise.md).\n"
	      "\n"
	      "  --configmap FILE            the device-plugin ConfigMap of named configs; "
	      "without\n"
	      "                              it the node runs the empty config (no sharing)\n"
	      "  --node NAME                 the Node to use when NODE.yaml holds several\n"
	      "  --default-config NAME       config-manager's DEFAULT_CONFIG\n"
	      "  --fallback-strategies LIST  FALLBACK_STRATEGIES (default named,single)\n"
	      "  --full                      print the whole advertisement, not the patch\n"
	      "  --list-gpus                 print the GPU models gpushare knows\n"
	      "  --help                      this text\n"
	      "\n"
	      "exit status: 0 ok, 1 the real stack would refuse this node (no patch),\n"
	      "2 bad input or usage\n",
	      out);
}

static const char *kind_of(const json_t *doc)
{
	const json_t *k = json_is_object(doc) ? json_object_get(doc, "kind") : NULL;
	return json_is_string(k) ? json_string_value(k) : "";
}

static const char *name_of(const json_t *doc)
{
	const json_t *m = json_is_object(doc) ? json_object_get(doc, "metadata") : NULL;
	const json_t *n = json_is_object(m) ? json_object_get(m, "name") : NULL;
	return json_is_string(n) ? json_string_value(n) : "";
}

static void print_error(const struct gs_error *err)
{
	char buf[2048];
	fprintf(stderr, "error: %s\n", gs_error_str(err, buf, sizeof(buf)));
}

/* Each warning names its node once, here. */
static void print_warnings(const char *node, const struct gs_warnings *w)
{
	for (size_t i = 0; i < w->n; i++)
		fprintf(stderr, "warning: node '%s': %s\n", node, w->items[i]);
}

static int print_json(const json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);

	if (!s)
		return -1;
	puts(s);
	free(s);
	return 0;
}

static int list_gpus(void)
{
	const struct catalog *cat;
	struct gs_error err;

	if (catalog_builtin(&cat, &err)) {
		print_error(&err);
		return EXIT_USAGE;
	}
	printf("%-46s %-8s %-4s %s\n", "NVML NAME", "MEMORY", "CC", "MIG");
	for (size_t i = 0; i < catalog_gpu_count(cat); i++) {
		const struct catalog_gpu *g = catalog_gpu_at(cat, i);
		char cc[16];
		snprintf(cc, sizeof(cc), "%d.%d", g->cc_major, g->cc_minor);
		printf("%-46s %-8d %-4s %s\n", g->name, g->memory_mib, cc, g->mig ? "yes" : "no");
	}
	return EXIT_OK;
}

/* The one ConfigMap of the file. */
static int load_configmap(const char *path, struct ydoc_stream **stream, struct dpconfig_set **set,
			  struct gs_error *err)
{
	const json_t *cm = NULL;

	if (ydoc_load_file(path, &ydoc_default_limits, stream, err))
		return -1;
	for (size_t i = 0; i < ydoc_stream_count(*stream); i++) {
		const json_t *doc = ydoc_stream_doc(*stream, i);
		if (strcmp(kind_of(doc), "ConfigMap"))
			continue;
		if (cm) {
			gs_error_set(err,
				     "%s: more than one ConfigMap; keep the device-plugin one "
				     "alone in the file",
				     path);
			return -1;
		}
		cm = doc;
	}
	if (!cm) {
		gs_error_set(err, "%s: no ConfigMap in the file", path);
		return -1;
	}
	return dpconfig_set_from_configmap(*stream, cm, set, err);
}

static int find_node(const struct ydoc_stream *s, const char *path, const char *want,
		     const json_t **out, struct gs_error *err)
{
	size_t nodes = 0;

	*out = NULL;
	for (size_t i = 0; i < ydoc_stream_count(s); i++) {
		const json_t *doc = ydoc_stream_doc(s, i);
		if (strcmp(kind_of(doc), "Node"))
			continue;
		nodes++;
		if (want ? !strcmp(name_of(doc), want) : !*out)
			*out = doc;
	}
	if (want && !*out) {
		gs_error_set(err, "%s: no Node named '%s'", path, want);
		return -1;
	}
	if (!nodes) {
		gs_error_set(err, "%s: no Node in the file", path);
		return -1;
	}
	if (!want && nodes > 1) {
		gs_error_set(err, "%s holds %zu Nodes; choose one with --node NAME", path, nodes);
		return -1;
	}
	return 0;
}

int cmd_advertise(int argc, char **argv)
{
	const char *cm_path = NULL, *node_path = NULL, *node_name = NULL;
	struct advertise_options opt = {0};
	bool full = false;
	struct ydoc_stream *cm_stream = NULL, *node_stream = NULL;
	struct dpconfig_set *set = NULL;
	const struct catalog *cat;
	const json_t *node;
	struct advertisement *adv = NULL;
	struct gs_warnings w;
	struct gs_error err;
	json_t *patch = NULL;
	int rc = EXIT_USAGE;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **slot = NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return EXIT_OK;
		} else if (!strcmp(a, "--list-gpus")) {
			return list_gpus();
		} else if (!strcmp(a, "--full")) {
			full = true;
			continue;
		} else if (!strcmp(a, "--configmap")) {
			slot = &cm_path;
		} else if (!strcmp(a, "--node")) {
			slot = &node_name;
		} else if (!strcmp(a, "--default-config")) {
			slot = &opt.default_config;
		} else if (!strcmp(a, "--fallback-strategies")) {
			slot = &opt.fallbacks;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "gpushare advertise: unknown option '%s'\n", a);
			usage(stderr);
			return EXIT_USAGE;
		} else if (!node_path) {
			node_path = a;
			continue;
		} else {
			fprintf(stderr, "gpushare advertise: one NODE.yaml only ('%s')\n", a);
			return EXIT_USAGE;
		}
		if (i + 1 >= argc) {
			fprintf(stderr, "gpushare advertise: option '%s' needs a value\n", a);
			return EXIT_USAGE;
		}
		*slot = argv[++i];
	}
	if (!node_path) {
		usage(stderr);
		return EXIT_USAGE;
	}

	gs_warnings_init(&w);
	if (catalog_builtin(&cat, &err) ||
	    (cm_path && load_configmap(cm_path, &cm_stream, &set, &err)) ||
	    ydoc_load_file(node_path, &ydoc_default_limits, &node_stream, &err) ||
	    find_node(node_stream, node_path, node_name, &node, &err) ||
	    (opt.source = node_stream, advertise_node(cat, node, set, &opt, &adv, &err))) {
		print_error(&err);
		goto out;
	}
	print_warnings(adv->node, &adv->warnings);
	if (adv->failure) {
		if (full) {
			json_t *j = advertisement_to_json(adv);
			print_json(j);
			json_decref(j);
		}
		fprintf(stderr, "error: node '%s': %s\n", adv->node, adv->failure);
		fprintf(stderr, "hint: the real stack would advertise nothing new here; no patch "
				"was made\n");
		rc = EXIT_FINDING;
		goto out;
	}
	if (full) {
		json_t *j = advertisement_to_json(adv);
		print_json(j);
		json_decref(j);
		rc = EXIT_OK;
		goto out;
	}
	if (advertise_patch(adv, node, &patch, &w, &err)) {
		print_error(&err);
		rc = EXIT_FINDING;
		goto out;
	}
	print_warnings(adv->node, &w);
	print_json(patch);
	rc = EXIT_OK;
out:
	json_decref(patch);
	advertisement_free(adv);
	gs_warnings_release(&w);
	dpconfig_set_free(set);
	ydoc_stream_free(cm_stream);
	ydoc_stream_free(node_stream);
	return rc;
}
