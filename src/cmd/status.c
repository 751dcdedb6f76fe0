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
#include "cmd/parseopt.h"
#include "engine/status.h"
#include "base/banned.h"

static const char *const usage_lines[] = {
	"gpushare status [-o table|json] [--node NAME] [--configmap NS/NAME]",
	"gpushare status --from LIST.json [-o table|json] [--node NAME]", NULL};

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
	"prepare passed or failed (the kubelet's event text). --from reads a recorded\n"
	"List (kubectl get configmap,nodes,pods,resourceslices,resourceclaims,events -A\n"
	"-o json) instead of the cluster.\n",
	"Exit status: 0 shown, 1 some node could not be read, 2 bad usage or the\n"
	"cluster or file could not be read.\n",
};

struct configmap_ref {
	char *ns;
	const char *name;
};

static int parse_configmap(const struct option *opt, const char *arg, struct gs_error *err)
{
	struct configmap_ref *ref = opt->value;
	const char *slash = strchr(arg, '/');

	if (!slash || slash == arg || !slash[1] || strchr(slash + 1, '/')) {
		gs_error_set(err, "option '--configmap' takes NAMESPACE/NAME, got '%s'", arg);
		return -1;
	}
	free(ref->ns);
	ref->ns = gs_xstrndup(arg, (size_t)(slash - arg));
	ref->name = slash + 1;
	return 0;
}

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
 * A recorded List: the ConfigMap named by cm, every Node and Pod, and for
 * DRA nodes the ResourceSlices, ResourceClaims and Events.
 */
static int read_recorded(const char *path, const struct configmap_ref *cm, json_t **configmap,
			 json_t **nodes, json_t **pods, struct dra_lists *dra, struct gs_error *err)
{
	json_error_t je;
	json_t *list = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	size_t i;
	json_t *item;

	if (!list) {
		gs_error_at(err, path, je.line, je.column, "%s", je.text);
		return -1;
	}
	if (!json_is_array(json_object_get(list, "items"))) {
		gs_error_at(err, path, 1, 1, "expected a List with items (kubectl get -o json)");
		json_decref(list);
		return -1;
	}
	*nodes = json_array();
	*pods = json_array();
	dra->slices = json_array();
	dra->claims = json_array();
	dra->events = json_array();
	json_array_foreach (json_object_get(list, "items"), i, item) {
		if (kobj_is(item, "Node"))
			json_array_append(*nodes, item);
		else if (kobj_is(item, "Pod"))
			json_array_append(*pods, item);
		else if (kobj_is(item, "ResourceSlice"))
			json_array_append(dra->slices, item);
		else if (kobj_is(item, "ResourceClaim"))
			json_array_append(dra->claims, item);
		else if (kobj_is(item, "Event"))
			json_array_append(dra->events, item);
		else if (kobj_is(item, "ConfigMap") && !*configmap &&
			 !strcmp(kobj_text(item, "metadata.name"), cm->name) &&
			 !strcmp(kobj_text(item, "metadata.namespace"), cm->ns))
			*configmap = json_incref(item);
	}
	json_decref(list);
	return 0;
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
	struct configmap_ref cm = {.ns = NULL, .name = NULL};
	struct status_opts so = {0};
	const char *format = "table", *from = NULL;
	const struct catalog *cat;
	struct gs_warnings w;
	struct gs_error err;
	json_t *configmap = NULL, *nodes = NULL, *pods = NULL, *st = NULL;
	struct dra_lists dra = {.slices = NULL, .claims = NULL, .events = NULL};
	struct draclaims_objects dobj = {0};
	char buf[2048];
	int rc = EXIT_USAGE, n;
	struct option opts[] = {
		OPT_STRING('o', "output", &format, "FORMAT",
			   "table: one row per device ID, then notes (default)\n"
			   "json: the whole ledger (docs/status.md)"),
		OPT_STRING(0, "node", &so.only_node, "NAME", "only this node"),
		OPT_CALLBACK(0, "configmap", &cm, "NS/NAME",
			     "device-plugin ConfigMap [" GS_DEFAULT_CONFIGMAP_REF "]",
			     parse_configmap),
		OPT_STRING(0, "from", &from, "FILE",
			   "a recorded List (JSON) instead of the cluster"),
		OPT_KUBE_CONNECTION(&kx.opts),
		OPT_END(),
	};

	gs_warnings_init(&w);
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
	if (strcmp(format, "table") && strcmp(format, "json")) {
		cmd_eprintf("gpushare status: unknown output format '%s' (want table or json)\n",
			    format);
		goto out;
	}
	if (!cm.ns) {
		cm.ns = gs_xstrdup(GS_DEFAULT_NAMESPACE);
		cm.name = GS_DEFAULT_CONFIGMAP;
	}
	if (from) {
		if (read_recorded(from, &cm, &configmap, &nodes, &pods, &dra, &err) < 0) {
			fprintf(stderr, "%s\n", gs_error_str(&err, buf, sizeof(buf)));
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
	if (!strcmp(format, "json")) {
		char *s = json_dumps(st, JSON_INDENT(2));
		printf("%s\n", s);
		free(s);
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
	free(cm.ns);
	kube_context_release(&kx);
	return rc;
}
