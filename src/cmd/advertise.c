#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/offline.h"
#include "fleet/fleet.h"
#include "engine/advertise.h"
#include "engine/health.h"
#include "model/catalog.h"
#include "model/dpconfig.h"
#include "dra/draprepare.h"
#include "dra/draslice.h"
#include "model/kobj.h"
#include "cmd/output.h"
#include "cmd/parseopt.h"
#include "yaml/ydoc.h"
#include "base/banned.h"

static const char *const usage_lines[] = {
	"gpushare advertise [options] -f FILE|DIR|- [-f ...] [-R] [--configmap NS/NAME] [--node "
	"NAME]",
	"gpushare advertise --dra [--node NAME] [--driver-gates GATES] "
	"[--alpha-gates] -f NODE.yaml",
	"gpushare advertise --dra --device-classes [--alpha-gates]",
	"gpushare advertise --list-gpus", NULL};

static const struct parseopt_example advertise_examples[] = {
	{"what lab-node-1 advertises under the lab's ConfigMap (the patch of its status and "
	 "labels)",
	 "gpushare advertise -f k8s/lab-nodes.yaml -f k8s/device-plugin-configs.yaml --node "
	 "lab-node-1"},
	{"the whole advertisement of the MIG node, not the patch",
	 "gpushare advertise -f k8s/lab-nodes.yaml -f k8s/device-plugin-configs.yaml --node "
	 "lab-node-2 --full"},
	{"the ResourceSlice NVIDIA's DRA driver publishes for a node",
	 "gpushare advertise --dra -f k8s/dra/nodes.yaml --node dra-node-0"},
	{"the GPU models gpushare knows", "gpushare advertise --list-gpus"},
	{NULL, NULL},
};
static const struct parseopt_usage advertise_usage = {
	"advertise",
	usage_lines,
	"Print the JSON merge patch that makes a Node advertise what NVIDIA's device\n"
	"plugin and GPU feature discovery would publish for its declared GPUs:\n"
	"status.capacity/allocatable and labels (see docs/guide/advertise.md).\n"
	"With --dra, print instead the resource.k8s.io/v1 ResourceSlice NVIDIA's DRA\n"
	"driver would publish for the node (its release: gpushare.io/dra-driver-version,\n"
	"default v0.5.0), or its DeviceClasses (docs/guide/dra.md).\n",
	"exit status: 0 ok, 1 part of the real stack would fail on this node (the\n"
	"patch is then what the rest still publishes, or none), 2 bad input or usage.\n"
	"GPUSHARE_NOW=SECONDS fixes nvidia.com/gfd.timestamp.\n",
	advertise_examples,
	NULL,
};

static void print_error(const struct gs_error *err)
{
	char buf[2048];
	fprintf(stderr, "gpushare advertise: %s\n", gs_error_str(err, buf, sizeof(buf)));
}

/* Each warning names its node once, here. */
static void print_warnings(const char *node, const struct gs_warnings *w)
{
	for (size_t i = 0; i < w->n; i++)
		cmd_eprintf("warning: node '%s': %s\n", node, w->items[i]);
}

/*
 * One document: the patch is a partial Node (apiVersion v1, kind Node: kubectl
 * patch still takes it), --full an Advertisement of gpushare's own.
 */
static int print_one(const json_t *j, enum output_format fmt, const char *api, const char *kind)
{
	json_t *doc = output_stamp_as(j, api, kind);
	struct gs_error err;
	int rc = output_print(doc, fmt, JSON_SORT_KEYS, &err);

	json_decref(doc);
	if (rc < 0)
		print_error(&err);
	return rc;
}

static int print_patch(const json_t *j, enum output_format fmt)
{
	return print_one(j, fmt, "v1", "Node");
}

static int print_full(const json_t *j, enum output_format fmt)
{
	return print_one(j, fmt, OUTPUT_API_VERSION, "Advertisement");
}

/* Kubernetes objects: a List in JSON, a stream in YAML (kubectl applies either). */
static int print_docs(const json_t *docs, enum output_format fmt)
{
	struct gs_error err;

	if (output_print_list(docs, fmt, JSON_SORT_KEYS, &err) < 0) {
		print_error(&err);
		return -1;
	}
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
	cmd_printf("%-46s %-8s %-4s %s\n", "NVML NAME", "MEMORY", "CC", "MIG");
	for (size_t i = 0; i < catalog_gpu_count(cat); i++) {
		const struct catalog_gpu *g = catalog_gpu_at(cat, i);
		char cc[16];
		snprintf(cc, sizeof(cc), "%d.%d", g->cc_major, g->cc_minor);
		cmd_printf("%-46s %-8d %-4s %s\n", g->name, g->memory_mib, cc,
			   g->mig ? "yes" : "no");
	}
	return EXIT_OK;
}

/* The Node to advertise: the only one among the files, or the one named `want`. */
static int find_node(const struct fleet *f, const struct fleet_sources *src, const char *want,
		     const json_t **out, struct gs_error *err)
{
	const char *where = src->n == 1 ? src->paths[0] : "the files";
	size_t nodes = json_array_size(f->nodes), i;
	const json_t *n;

	*out = NULL;
	json_array_foreach (f->nodes, i, n)
		if (want && !strcmp(kobj_text(n, "metadata.name"), want))
			*out = n;
	if (want && !*out) {
		gs_error_set(err, "%s: no Node named '%s'", where, want);
		return -1;
	}
	if (!nodes) {
		gs_error_set(err, "%s: no Node %s", where,
			     src->n == 1 ? "in the file" : "among them");
		return -1;
	}
	if (!want && nodes > 1) {
		gs_error_set(err, "%s holds %zu Nodes; choose one with --node NAME", where, nodes);
		return -1;
	}
	if (!want)
		*out = json_array_get(f->nodes, 0);
	return 0;
}

static int advertise_dra(const struct fleet_sources *src, const char *node_name,
			 const struct configmap_ref *cm, const char *gates_spec, bool alpha,
			 const struct kubeversion *kv, enum output_format fmt)
{
	struct draprepare_gates cluster, gates;
	/* From 1.35 the apiserver keeps counter sets and devices in separate slices. */
	struct draslice_opts so = {.dynamic_mig = false,
				   .partitionable = alpha,
				   .counters_apart =
					   (kv ? kv : kubeversion_newest())->slice_counters_apart};
	const struct ydoc_stream *stream = NULL;
	struct fleet f;
	const struct catalog *cat;
	const json_t *node;
	struct nodehw *hw = NULL;
	json_t *slice = NULL, *docs = NULL;
	struct gs_warnings w;
	struct gs_error err;
	int rc = EXIT_USAGE, r;

	gs_warnings_init(&w);
	fleet_init(&f);
	if (catalog_builtin(&cat, &err) || fleet_read(&f, src, &err) ||
	    find_node(&f, src, node_name, &node, &err) ||
	    (stream = fleet_stream_of(&f, node),
	     nodehw_from_node(cat, node, stream, &hw, &w, &err))) {
		print_error(&err);
		goto out;
	}
	/* The driver's gates: --driver-gates, then the node's annotation on top. */
	draprepare_gates_default(&cluster);
	if (gates_spec && draprepare_gates_parse(&cluster, gates_spec, &err)) {
		gs_error_prefix(&err, "--driver-gates: ");
		print_error(&err);
		goto out;
	}
	if (draprepare_gates_for_node(node, &cluster, &gates, &err) < 0) {
		print_error(&err);
		goto out;
	}
	draslice_opts_from_gates(&so, &gates);
	so.consumable_capacity = alpha;
	r = draslice_build_pool(cat, hw, node, stream, &so, &slice, &w, &err);
	if (r) {
		print_error(&err);
		if (so.dynamic_mig)
			rc = EXIT_FINDING; /* the driver would publish nothing the apiserver keeps
					    */
		if (r == DRASLICE_NEEDS_PARTITIONABLE) {
			fprintf(stderr, "hint: --alpha-gates prints the slices for a cluster "
					"with DRAPartitionableDevices on\n");
			rc = EXIT_FINDING;
		}
		if (r == DRASLICE_LAYOUT_FAILED) {
			fprintf(stderr,
				"hint: mig-manager writes nvidia.com/mig.config.state=failed; "
				"the driver keeps publishing the GPUs' previous layout\n");
			rc = EXIT_FINDING;
		}
		goto out;
	}
	if (cm->given)
		cmd_eprintf("warning: --configmap: the DRA driver reads no device-plugin "
			    "config; ConfigMap %s/%s is not used\n",
			    cm->ns, cm->name);
	if (!draslice_node_wants_dra(node))
		gs_warnings_add(&w,
				"not labeled %s=%s: sync keeps it on the device-plugin path, "
				"this is what it would publish on the DRA path",
				DRASLICE_LABEL_PATH, DRASLICE_PATH_DRA);
	{
		/* The DRA driver's taints for the node's declared faults (docs/guide/faults.md). */
		struct health_faults faults;
		struct gs_warnings why;
		char *state = NULL;
		if (health_from_node(node, hw->name, hw->total, stream, &faults, &err) < 0) {
			print_error(&err);
			goto out;
		}
		gs_warnings_init(&why);
		if (faults.n || kobj_annotation(node, NODEHW_ANN_UNHEALTHY))
			(void)health_dra(slice, &faults, NULL, so.dynamic_mig,
					 kobj_annotation(node, NODEHW_ANN_UNHEALTHY),
					 kobj_annotation(node, NODEHW_ANN_RESTARTED_AT),
					 getenv("GPUSHARE_NOW")
						 ? strtoll(getenv("GPUSHARE_NOW"), NULL, 10)
						 : 0,
					 &state, &why);
		for (size_t i = 0; i < why.n; i++)
			cmd_eprintf("health: node '%s': %s\n", hw->name, why.items[i]);
		free(state);
		gs_warnings_release(&why);
		health_faults_release(&faults);
	}
	print_warnings(hw->name, &w);
	docs = json_incref(slice);
	rc = print_docs(docs, fmt) ? EXIT_USAGE : EXIT_OK;
out:
	json_decref(docs);
	json_decref(slice);
	nodehw_free(hw);
	gs_warnings_release(&w);
	fleet_release(&f);
	return rc;
}

int cmd_advertise(int argc, char **argv)
{
	const char *node_name = NULL, *gates_spec = NULL;
	struct advertise_options opt = {0};
	bool full = false, list = false, dra = false, classes = false, alpha = false;
	struct fleet_sources src = {0};
	struct kube_target kube = {0};
	struct configmap_ref cmref;
	struct fleet f;
	struct dpconfig_set *set = NULL;
	const json_t *cm = NULL;
	const struct catalog *cat;
	const json_t *node;
	struct advertisement *adv = NULL;
	struct gs_warnings w;
	struct gs_error err;
	json_t *patch = NULL;
	enum output_format fmt = OUTPUT_JSON;
	int rc = EXIT_USAGE, n;
	struct option opts[] = {
		OPT_OUTPUT(&fmt, OUTPUT_DOCS,
			   "json (default) or yaml: the patch (apiVersion v1, kind\n"
			   "Node), with --full kind Advertisement; with --dra a\n"
			   "List in json, a stream in yaml"),
		OPT_CALLBACK(0, "configmap", &cmref, "NS/NAME",
			     "the device-plugin ConfigMap of named configs among the\n"
			     "files [gpu-share/device-plugin-configs]; none there: the\n"
			     "node runs the empty config (no sharing)",
			     parse_configmap_ref),
		OPT_STRING(0, "node", &node_name, "NAME",
			   "the Node to use when the files hold several"),
		OPT_STRING(0, "default-config", &opt.default_config, "NAME",
			   "config-manager's DEFAULT_CONFIG"),
		OPT_STRING(0, "fallback-strategies", &opt.fallbacks, "LIST",
			   "FALLBACK_STRATEGIES (default named,single)"),
		OPT_STRING(0, "disable-healthchecks", &opt.disable_healthchecks, "LIST",
			   "the device plugin's DP_DISABLE_HEALTHCHECKS: XIDs it skips besides "
			   "13,31,43,45,68,109, or all [unset]"),
		OPT_STRING(0, "enable-healthchecks", &opt.enable_healthchecks, "LIST",
			   "the device plugin's DP_ENABLE_HEALTHCHECKS: XIDs it checks even so "
			   "[unset]"),
		OPT_FLAG(0, "full", &full, "print the whole advertisement, not the patch"),
		OPT_FLAG(0, "list-gpus", &list, "print the GPU models gpushare knows"),
		OPT_GROUP("DRA path (NVIDIA DRA driver v25.12.0 or v0.5.0, docs/guide/dra.md)"),
		OPT_FLAG(0, "dra", &dra,
			 "print the node's ResourceSlice as the driver publishes it"),
		OPT_FLAG(0, "device-classes", &classes,
			 "with --dra: print the driver's DeviceClasses instead"),
		OPT_STRING(0, "driver-gates", &gates_spec, "GATES",
			   "the driver's feature gates, FEATURE_GATES syntax (default:\n"
			   "the driver's own; the node's gpushare.io/dra-feature-gates\n"
			   "applies on top); DynamicMIG=true gives the dynamic-MIG form"),
		OPT_FLAG(0, "alpha-gates", &alpha,
			 "the cluster runs the DRA alpha gates DRAPartitionableDevices,\n"
			 "DRAConsumableCapacity and DRAExtendedResource (GS_DRA_ALPHA=1):\n"
			 "the dynamic-MIG form is published, the gpu.nvidia.com class\n"
			 "keeps extendedResourceName"),
		OPT_CALLBACK(0, "kubernetes-version", &kube, "VERSION",
			     "with --dra: the cluster's release: from v1.35.4 the\n"
			     "dynamic-MIG counter sets go in a slice of their own\n"
			     "[v1.37.2]",
			     parse_kube_version),
		OPT_FLEET_SOURCES(&src),
		OPT_END(),
	};

	configmap_ref_init(&cmref);
	fleet_init(&f);
	gs_warnings_init(&w);
	n = parse_options(argc, argv, opts, &advertise_usage);
	if (n < 0) {
		rc = parseopt_exit(n);
		goto out;
	}
	if (list) {
		rc = list_gpus();
		goto out;
	}
	if ((classes || gates_spec || alpha) && !dra) {
		gs_error_set(&err, "%s needs --dra",
			     classes	  ? "--device-classes"
			     : gates_spec ? "--driver-gates"
					  : "--alpha-gates");
		rc = usage_error(&advertise_usage, &err);
		goto out;
	}
	/* NODE.yaml... without -f: the same as -f each, read after the -f sources. */
	for (int i = 0; i < n; i++)
		fleet_sources_add(&src, argv[i]);
	if (classes) {
		json_t *docs;

		if (src.n) {
			gs_error_set(&err, "--device-classes reads no file ('%s')", src.paths[0]);
			rc = usage_error(&advertise_usage, &err);
			goto out;
		}
		docs = draslice_device_classes(alpha);
		rc = print_docs(docs, fmt) ? EXIT_USAGE : EXIT_OK;
		json_decref(docs);
		goto out;
	}
	if (!src.n) {
		gs_error_set(&err, "no node given: -f NODE.yaml");
		rc = usage_error(&advertise_usage, &err);
		goto out;
	}
	if (dra) {
		if (full || opt.default_config || opt.fallbacks) {
			gs_error_set(&err, "--dra: the DRA path has no %s",
				     full ? "--full" : "device-plugin config selection");
			rc = usage_error(&advertise_usage, &err);
			goto out;
		}
		rc = advertise_dra(&src, node_name, &cmref, gates_spec, alpha, kube.kv, fmt);
		goto out;
	}

	/* A fixed clock for nvidia.com/gfd.timestamp, for reproducible output. */
	if (getenv("GPUSHARE_NOW"))
		opt.now = strtoll(getenv("GPUSHARE_NOW"), NULL, 10);
	if (catalog_builtin(&cat, &err) || fleet_read(&f, &src, &err) ||
	    offline_configmap(&f, &cmref, "advertise",
			      cmref.given || json_array_size(f.configmaps) > 0, &cm, &set, &err) ||
	    find_node(&f, &src, node_name, &node, &err) ||
	    (opt.source = fleet_stream_of(&f, node),
	     health_advertise_node(cat, node, set, &opt, &adv, &err))) {
		print_error(&err);
		goto out;
	}
	print_warnings(adv->node, &adv->warnings);
	if (!full)
		for (size_t i = 0; i < adv->health_why.n; i++)
			cmd_eprintf("health: node '%s': %s\n", adv->node, adv->health_why.items[i]);
	if (adv->failure && adv->outcome != ADVERTISE_REFUSED) {
		/* Part of the stack fails; the rest still publishes: the patch, and exit 1. */
		cmd_eprintf("gpushare advertise: node '%s': %s\n", adv->node, adv->failure);
		fprintf(stderr, "%s",
			adv->outcome == ADVERTISE_MIG_FAILED
				? "hint: mig-manager writes nvidia.com/mig.config.state=failed; "
				  "the GPUs keep their previous layout, nothing else changes\n"
				: "hint: GPU feature discovery still publishes its labels; kubelet "
				  "shows the plugin's resources at 0 once it has been gone 5 "
				  "minutes "
				  "(endpointStopGracePeriod)\n");
		if (full) {
			json_t *j = advertisement_to_json(adv);
			print_full(j, fmt);
			json_decref(j);
		} else if (!advertise_patch(adv, node, &patch, &w, &err)) {
			print_warnings(adv->node, &w);
			print_patch(patch, fmt);
		}
		rc = EXIT_FINDING;
		goto out;
	}
	if (adv->failure) {
		if (full) {
			json_t *j = advertisement_to_json(adv);
			print_full(j, fmt);
			json_decref(j);
		}
		cmd_eprintf("gpushare advertise: node '%s': %s\n", adv->node, adv->failure);
		fprintf(stderr, "hint: the real stack would advertise nothing new here; no patch "
				"was made\n");
		rc = EXIT_FINDING;
		goto out;
	}
	if (full) {
		json_t *j = advertisement_to_json(adv);
		rc = print_full(j, fmt) < 0 ? EXIT_USAGE : EXIT_OK;
		json_decref(j);
		goto out;
	}
	if (advertise_patch(adv, node, &patch, &w, &err)) {
		print_error(&err);
		rc = EXIT_FINDING;
		goto out;
	}
	print_warnings(adv->node, &w);
	rc = print_patch(patch, fmt) < 0 ? EXIT_USAGE : EXIT_OK;
out:
	json_decref(patch);
	advertisement_free(adv);
	gs_warnings_release(&w);
	dpconfig_set_free(set);
	fleet_release(&f);
	fleet_sources_release(&src);
	configmap_ref_release(&cmref);
	return rc;
}
