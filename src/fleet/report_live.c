#include "fleet/report_live.h"

#include <stdlib.h>

#include "model/catalog.h"
#include "model/dpconfig_set.h"
#include "dra/draslice.h"
#include "model/kobj.h"
#include "kube/kubeclient.h"
#include "engine/sync_plan.h"
#include "base/banned.h"

int report_read(struct kube_client *c, const char *cm_namespace, const char *cm_name,
		json_t **nodes, json_t **pods, json_t **quotas, json_t **configmap,
		struct gs_error *err)
{
	struct kube_list_opts lo = {.field_selector =
					    "status.phase!=Succeeded,status.phase!=Failed"};
	char *path = gs_xasprintf("/api/v1/namespaces/%s/configmaps/%s", cm_namespace, cm_name);
	int r;

	*nodes = *pods = *quotas = *configmap = NULL;
	r = kube_list(c, "/api/v1/nodes", NULL, nodes, err);
	if (r == 0)
		r = kube_list(c, "/api/v1/pods", &lo, pods, err);
	if (r == 0)
		r = kube_list(c, "/api/v1/resourcequotas", NULL, quotas, err);
	if (r == 0) {
		r = kube_get(c, path, configmap, err);
		if (r == KUBE_E_STATUS && kube_last_status(c)->code == 404) {
			*configmap = NULL;
			gs_error_clear(err);
			r = 0;
		}
	}
	free(path);
	if (r < 0) {
		json_decref(*nodes);
		json_decref(*pods);
		json_decref(*quotas);
		*nodes = *pods = *quotas = *configmap = NULL;
		return -1;
	}
	return 0;
}

static bool any_dra_node(const json_t *nodes)
{
	size_t i;
	json_t *n;

	json_array_foreach (kobj_get(nodes, "items"), i, n)
		if (draslice_node_wants_dra(n))
			return true;
	return false;
}

/* The ResourceSlices and ResourceClaims, as arrays (owned). */
static int read_dra(struct kube_client *c, json_t **slices, json_t **claims, struct gs_error *err)
{
	json_t *sl = NULL, *cl = NULL;

	if (kube_list(c, "/apis/resource.k8s.io/v1/resourceslices", NULL, &sl, err) < 0)
		return -1;
	if (kube_list(c, "/apis/resource.k8s.io/v1/resourceclaims", NULL, &cl, err) < 0) {
		json_decref(sl);
		return -1;
	}
	*slices = json_incref(json_object_get(sl, "items"));
	*claims = json_incref(json_object_get(cl, "items"));
	json_decref(sl);
	json_decref(cl);
	return 0;
}

int report_live(struct kube_client *c, const char *cm_namespace, const char *cm_name,
		struct report_model **out, struct gs_error *err)
{
	json_t *nodes = NULL, *pods = NULL, *quotas = NULL, *cm = NULL;
	json_t *slices = NULL, *claims = NULL;
	struct dpconfig_set *set = NULL;
	const struct catalog *cat;
	struct sync_opts so = {.configmap_namespace = cm_namespace, .configmap_name = cm_name};
	struct sync_report rep = {0};
	char *where = NULL;
	int rc = -1;

	*out = NULL;
	if (catalog_builtin(&cat, err) < 0 ||
	    report_read(c, cm_namespace, cm_name, &nodes, &pods, &quotas, &cm, err) < 0)
		return -1;
	if (cm && dpconfig_set_from_configmap(NULL, cm, &set, err) < 0) {
		gs_error_prefix(err, "configmap %s/%s: ", cm_namespace, cm_name);
		goto out;
	}
	where = gs_xasprintf("from the cluster, ConfigMap %s/%s%s", cm_namespace, cm_name,
			     cm ? "" : " (absent: every node has the empty config)");
	if (any_dra_node(nodes) && read_dra(c, &slices, &claims, err) < 0)
		goto out;
	/* The nodes the stack refuses, as `gpushare plan` names them (refusedNodes). */
	if (sync_plan(cm, nodes, &so, &rep, err) < 0)
		goto out;
	struct report_input in = {.nodes = nodes,
				  .pods = pods,
				  .quotas = quotas,
				  .configs = set,
				  .cat = cat,
				  .source = where,
				  .slices = slices,
				  .claims = claims,
				  .sync = &rep};
	rc = report_model_build(&in, out, err);
out:
	sync_report_release(&rep);
	json_decref(slices);
	json_decref(claims);
	free(where);
	dpconfig_set_free(set);
	json_decref(nodes);
	json_decref(pods);
	json_decref(quotas);
	json_decref(cm);
	return rc;
}
