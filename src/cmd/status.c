#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/catalog.h"
#include "cmd/cmd.h"
#include "model/defaults.h"
#include "dra/draclaims.h"
#include "dra/draslice.h"
#include "model/nodehw.h"
#include "model/kobj.h"
#include "cmd/kubecontext.h"
#include "cmd/offline.h"
#include "cmd/output.h"
#include "cmd/parseopt.h"
#include "fleet/fleet.h"
#include "engine/status.h"
#include "base/banned.h"

static const char *const usage_lines[] = {
	"gpushare status [-o table|json] [--node NAME] [--configmap NS/NAME]",
	"gpushare status -f FILE|DIR|- [-f ...] [-R] [-o table|json] [--node NAME]\n"
	"                [--configmap NS/NAME]",
	NULL};

static const struct parseopt_example status_examples[] = {
	{"who holds each GPU slice of the lab's recorded fleet", "gpushare status -f k8s/"},
	{"one node's ledger, as JSON", "gpushare status -f k8s/ --node lab-node-1 -o json"},
	{"the same for the cluster in KUBECONFIG", "gpushare status"},
	{NULL, NULL},
};
static const struct parseopt_usage status_usage = {
	"status",
	usage_lines,
	"Per managed node, each physical GPU and the device IDs NVIDIA's device plugin\n"
	"registers for it (replicas of a time-sliced or MPS GPU, MIG instances by\n"
	"placement, whole GPUs), which namespace/pod holds each (the pods'\n"
	"gpushare.io/devices records) and what is free, and which namespaces share one\n"
	"card's memory and fault domain. On DRA nodes (gpushare.io/path=dra): each device\n"
	"of the node's ResourceSlice, the ResourceClaim allocated it, the pods the claim\n"
	"is reserved for (several: they share the device), and whether the driver's\n"
	"prepare passed or failed (the kubelet's event text). -f reads recorded objects\n"
	"(kubectl get configmap,nodes,pods,resourceslices,resourceclaims,events -A\n"
	"-o json) instead of the cluster, as they are (docs/guide/cli.md).\n",
	"Exit status: 0 shown, 1 some node could not be read, 2 bad usage or the\n"
	"cluster or file could not be read.\n",
	status_examples,
	NULL,
};

/* The DRA objects status reads, as arrays (owned). */
struct dra_lists {
	json_t *slices, *claims, *events;
};

static void dra_lists_release(struct dra_lists *d)
{
	json_decref(d->slices);
	json_decref(d->claims);
	json_decref(d->events);
}

/*
 * Recorded objects: the ConfigMap named by cm, every Node and Pod, and for
 * DRA nodes the ResourceSlices, ResourceClaims and Events; as they are.
 */
static int read_recorded(const struct fleet_sources *src, const struct configmap_ref *cm,
			 json_t **configmap, json_t **nodes, json_t **pods, struct dra_lists *dra,
			 struct gs_error *err)
{
	struct fleet f;
	const json_t *c = NULL;
	int rc = -1;

	fleet_init(&f);
	if (fleet_read(&f, src, err) == 0 && fleet_configmap(&f, cm->ns, cm->name, &c, err) == 0) {
		*configmap = c ? json_deep_copy(c) : NULL;
		*nodes = json_deep_copy(f.nodes);
		*pods = json_deep_copy(f.pods);
		dra->slices = json_deep_copy(f.slices);
		dra->claims = json_deep_copy(f.claims);
		dra->events = json_deep_copy(f.events);
		rc = 0;
	}
	fleet_release(&f);
	return rc;
}

static bool any_dra_node(const json_t *nodes)
{
	size_t i;
	json_t *n;

	json_array_foreach ((json_t *)nodes, i, n)
		if (draslice_node_wants_dra(n) && kobj_annotation(n, NODEHW_ANN_PRODUCT))
			return true;
	return false;
}

/* GET a list's items into *out (an array, owned). */
static int list_items(struct kube_context *kx, const char *path, const char *field, json_t **out,
		      struct gs_error *err)
{
	struct kube_list_opts lo = {.label_selector = NULL, .field_selector = field};
	json_t *l = NULL;

	if (kube_list(kx->client, path, field ? &lo : NULL, &l, err) < 0)
		return -1;
	*out = json_incref(json_object_get(l, "items"));
	json_decref(l);
	if (!*out)
		*out = json_array();
	return 0;
}

/*
 * For DRA nodes: the driver's slices, every claim, and the kubelet's
 * prepare refusals (events with reason FailedPrepareDynamicResources).
 */
static int read_live_dra(struct kube_context *kx, struct dra_lists *dra, struct gs_error *err)
{
	if (list_items(kx, "/apis/resource.k8s.io/v1/resourceslices", NULL, &dra->slices, err) <
		    0 ||
	    list_items(kx, "/apis/resource.k8s.io/v1/resourceclaims", NULL, &dra->claims, err) <
		    0 ||
	    list_items(kx, "/api/v1/events", "reason=" DRACLAIMS_EVENT_PREPARE, &dra->events, err) <
		    0)
		return -1;
	return 0;
}

static int read_live(struct kube_context *kx, const struct configmap_ref *cm, json_t **configmap,
		     json_t **nodes, json_t **pods, struct gs_error *err)
{
	char path[1024];
	json_t *nl = NULL, *pl = NULL;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/%s", cm->ns, cm->name);
	if (kube_get(kx->client, path, configmap, err) < 0) {
		if (kube_last_status(kx->client)->code != 404)
			return -1;
		*configmap = NULL; /* no ConfigMap: every node gets the empty config */
	}
	if (kube_list(kx->client, "/api/v1/nodes", NULL, &nl, err) < 0)
		return -1;
	if (kube_list(kx->client, "/api/v1/pods", NULL, &pl, err) < 0) {
		json_decref(nl);
		return -1;
	}
	*nodes = json_incref(json_object_get(nl, "items"));
	*pods = json_incref(json_object_get(pl, "items"));
	json_decref(nl);
	json_decref(pl);
	return 0;
}

int cmd_status(int argc, char **argv)
{
	struct kube_context kx = {0};
	struct configmap_ref cm;
	struct fleet_sources src = {0};
	struct status_opts so = {0};
	enum output_format format = OUTPUT_TABLE;
	const struct catalog *cat;
	struct gs_warnings w;
	struct gs_error err;
	json_t *configmap = NULL, *nodes = NULL, *pods = NULL, *st = NULL;
	struct dra_lists dra = {.slices = NULL, .claims = NULL, .events = NULL};
	struct draclaims_objects dobj = {0};
	char buf[2048];
	int rc = EXIT_USAGE, n;
	struct option opts[] = {
		OPT_OUTPUT(&format, OUTPUT_TABLES,
			   "table: one row per device ID, then notes (default)\n"
			   "json, yaml: the whole ledger (docs/guide/status.md), kind Status"),
		OPT_STRING(0, "node", &so.only_node, "NAME", "only this node"),
		OPT_CONFIGMAP_REF(&cm),
		OPT_FLEET_SOURCES(&src),
		OPT_GROUP("Older form, the same as -f FILE:"),
		OPT_CALLBACK(0, "from", &src, "FILE", "", parse_fleet_source),
		OPT_KUBE_CONNECTION(&kx.opts),
		OPT_END(),
	};

	gs_warnings_init(&w);
	configmap_ref_init(&cm);
	n = parse_options(argc, argv, opts, &status_usage);
	if (n < 0) {
		rc = parseopt_exit(n);
		goto out;
	}
	if (n > 0) {
		gs_error_set(&err, "unexpected argument '%s'", argv[0]);
		rc = usage_error(&status_usage, &err);
		goto out;
	}
	if (src.n) {
		if (read_recorded(&src, &cm, &configmap, &nodes, &pods, &dra, &err) < 0) {
			fprintf(stderr, "gpushare status: %s\n",
				gs_error_str(&err, buf, sizeof(buf)));
			goto out;
		}
	} else if (kube_context_open(&kx, "status", &err) < 0 ||
		   read_live(&kx, &cm, &configmap, &nodes, &pods, &err) < 0 ||
		   (any_dra_node(nodes) && read_live_dra(&kx, &dra, &err) < 0)) {
		fprintf(stderr, "gpushare status: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		goto out;
	}
	dobj.slices = dra.slices;
	dobj.claims = dra.claims;
	dobj.events = dra.events;
	if (catalog_builtin(&cat, &err) < 0 ||
	    status_build(cat, configmap, nodes, pods, &dobj, &so, &st, &w, &err) < 0) {
		fprintf(stderr, "gpushare status: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		goto out;
	}
	for (size_t i = 0; i < w.n; i++)
		cmd_eprintf("warning: %s\n", w.items[i]);
	if (output_is_doc(format)) {
		json_t *doc = output_stamp(st, "Status");
		int r = output_print(doc, format, 0, &err);
		json_decref(doc);
		if (r < 0) {
			fprintf(stderr, "gpushare status: %s\n",
				gs_error_str(&err, buf, sizeof(buf)));
			goto out;
		}
	} else {
		char *s = status_table(st);
		fputs(s, stdout);
		free(s);
	}
	rc = EXIT_OK;
	{
		size_t i;
		json_t *node;
		json_array_foreach (json_object_get(st, "nodes"), i, node)
			if (kobj_string(node, "error"))
				rc = EXIT_FINDING;
	}
out:
	gs_warnings_release(&w);
	json_decref(st);
	json_decref(configmap);
	json_decref(nodes);
	json_decref(pods);
	dra_lists_release(&dra);
	configmap_ref_release(&cm);
	fleet_sources_release(&src);
	kube_context_release(&kx);
	return rc;
}
