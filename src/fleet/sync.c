#include "fleet/sync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/advertise.h"
#include "model/catalog.h"
#include "model/defaults.h"
#include "model/dpconfig.h"
#include "dra/draprepare.h"
#include "dra/draslice.h"
#include "kube/kubeclient.h"
#include "engine/mergepatch.h"
#include "model/nodehw.h"
#include "base/strbuf.h"
#include "model/kobj.h"
#include "base/banned.h"

/*
 * Labels and annotations live on the node, capacity and allocatable on its
 * status subresource (the main resource ignores status changes): two
 * PATCHes, metadata first so a failure leaves the resources as they were.
 */
static int write_patch(struct kube_client *c, const char *name, const json_t *patch,
		       struct gs_error *err)
{
	const json_t *meta = json_object_get(patch, "metadata");
	const json_t *status = json_object_get(patch, "status");
	char *path = gs_xasprintf("/api/v1/nodes/%s", name);
	char *status_path = gs_xasprintf("/api/v1/nodes/%s/status", name);
	int rc = 0;

	if (meta && json_object_size(meta)) {
		json_t *p = json_pack("{s:O}", "metadata", meta);
		rc = kube_patch(c, path, KUBE_PATCH_MERGE, p, NULL, err);
		json_decref(p);
	}
	if (rc == 0 && status && json_object_size(status)) {
		json_t *p = json_pack("{s:O}", "status", status);
		rc = kube_patch(c, status_path, KUBE_PATCH_MERGE, p, NULL, err);
		json_decref(p);
	}
	free(path);
	free(status_path);
	return rc;
}

static int write_op(struct kube_client *c, struct sync_op *op, struct gs_error *err)
{
	json_t *out = NULL;
	int rc;

	switch (op->action) {
	case SYNC_OP_CREATE:
		rc = kube_create(c, op->path, op->body, &out, err);
		/* The slice's name comes from its generateName. */
		if (rc == 0 && !op->name && kobj_name(out))
			op->name = gs_xstrdup(kobj_name(out));
		break;
	case SYNC_OP_UPDATE:
		rc = kube_put(c, op->path, op->body, &out, err);
		break;
	default:
		rc = kube_delete(c, op->path, NULL, NULL, err);
		/* Gone already (the garbage collector, the kubelet): what was wanted. */
		if (rc == KUBE_E_STATUS && kube_last_status(c)->code == 404)
			rc = 0;
		break;
	}
	if (rc == 0) {
		const char *rv = kobj_string(out, "metadata.resourceVersion");

		op->done = true;
		if (rv) {
			free(op->result_rv);
			op->result_rv = gs_xstrdup(rv);
		}
	}
	json_decref(out);
	return rc;
}

static const char *op_verb(enum sync_op_action a)
{
	return a == SYNC_OP_CREATE ? "creating" : a == SYNC_OP_UPDATE ? "updating" : "deleting";
}

/* The slice writes of node `name` whose action is (or is not, `delete` false) a deletion. */
static int write_slices(struct kube_client *c, struct sync_report *rep, struct sync_node *n,
			bool deletes)
{
	for (size_t i = 0; i < rep->n_ops; i++) {
		struct sync_op *op = &rep->ops[i];
		struct gs_error err;

		if (!op->node || strcmp(op->node, n->name) ||
		    (op->action == SYNC_OP_DELETE) != deletes)
			continue;
		gs_error_clear(&err);
		if (write_op(c, op, &err) < 0) {
			char *msg = gs_xasprintf("%s the ResourceSlice%s%s: %s",
						 op_verb(op->action), op->name ? " " : "",
						 op->name ? op->name : "", err.msg);
			sync_node_fail(n, "%s", msg);
			free(msg);
			return -1;
		}
	}
	return 0;
}

int sync_write(struct kube_client *c, struct sync_report *rep)
{
	int rc = 0;

	for (size_t i = 0; i < rep->n_ops; i++) {
		struct sync_op *op = &rep->ops[i];
		struct gs_error err;

		gs_error_clear(&err);
		if (op->node || write_op(c, op, &err) == 0)
			continue;
		/* Without the classes no claim is allocated: every DRA node fails with it. */
		for (size_t k = 0; k < rep->n; k++) {
			if (rep->nodes[k].dra && rep->nodes[k].outcome != SYNC_FAILED) {
				char *msg = gs_xasprintf("%s the DeviceClass %s: %s",
							 op_verb(op->action), op->name, err.msg);
				sync_node_fail(&rep->nodes[k], "%s", msg);
				free(msg);
			}
		}
		rc = 1;
	}
	for (size_t i = 0; i < rep->n; i++) {
		struct sync_node *n = &rep->nodes[i];
		struct gs_error err;

		gs_error_clear(&err);
		/* The old slices go first and the new one comes last: never both paths at once. */
		if (write_slices(c, rep, n, true) < 0)
			continue;
		/* A failed node may still carry what the rest of the stack publishes. */
		if ((n->outcome == SYNC_UPDATED || n->outcome == SYNC_FAILED) && n->patch &&
		    write_patch(c, n->name, n->patch, &err) < 0) {
			sync_node_fail(n, "writing the advertisement: %s", err.msg);
			continue;
		}
		if (write_slices(c, rep, n, false) < 0)
			continue;
	}
	return sync_report_failed(rep) || rc;
}

int sync_write_dra(struct kube_client *c, struct sync_report *rep)
{
	int rc = 0;

	for (size_t i = 0; i < rep->n_ops; i++) {
		struct sync_op *op = &rep->ops[i];
		struct gs_error err;

		gs_error_clear(&err);
		if (!op->node && write_op(c, op, &err) < 0)
			rc = 1;
	}
	for (size_t i = 0; i < rep->n; i++) {
		if (write_slices(c, rep, &rep->nodes[i], true) < 0 ||
		    write_slices(c, rep, &rep->nodes[i], false) < 0)
			rc = 1;
	}
	return rc;
}

int sync_read(struct kube_client *c, const struct sync_opts *o, json_t **configmap, json_t **nodes,
	      struct gs_error *err)
{
	const char *ns = o->configmap_namespace ? o->configmap_namespace : GS_DEFAULT_NAMESPACE;
	const char *cm_name = o->configmap_name ? o->configmap_name : GS_DEFAULT_CONFIGMAP;
	char *path = gs_xasprintf("/api/v1/namespaces/%s/configmaps/%s", ns, cm_name);
	int rc = -1;

	*configmap = *nodes = NULL;
	if (kube_get(c, path, configmap, err) < 0) {
		gs_error_prefix(err, "reading the device-plugin ConfigMap %s/%s: ", ns, cm_name);
		goto out;
	}
	free(path);
	if (o->only_node) {
		json_t *one = NULL;
		path = gs_xasprintf("/api/v1/nodes/%s", o->only_node);
		if (kube_get(c, path, &one, err) < 0)
			goto out;
		*nodes = json_pack("{s:[o]}", "items", one);
	} else {
		path = gs_xstrdup("/api/v1/nodes");
		if (kube_list(c, path, NULL, nodes, err) < 0)
			goto out;
	}
	rc = 0;
out:
	free(path);
	if (rc < 0) {
		json_decref(*configmap);
		json_decref(*nodes);
		*configmap = *nodes = NULL;
	}
	return rc;
}

int sync_read_dra(struct kube_client *c, json_t **slices, json_t **classes, struct gs_error *err)
{
	struct kube_list_opts lo = {.label_selector = NULL,
				    .field_selector = "spec.driver=" DRASLICE_DRIVER};
	static const char *const names[] = {"gpu.nvidia.com", "mig.nvidia.com"};

	*slices = *classes = NULL;
	if (kube_list(c, SLICES_PATH, &lo, slices, err) < 0) {
		if (kube_last_status(c)->code != 404) {
			gs_error_prefix(err, "listing the ResourceSlices: ");
			return -1;
		}
		*slices = json_array(); /* resource.k8s.io/v1 not served */
	}
	*classes = json_array();
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		char *path = gs_xasprintf("%s/%s", CLASSES_PATH, names[i]);
		json_t *one = NULL;
		int rc = kube_get(c, path, &one, err);

		free(path);
		if (rc == 0) {
			json_array_append_new(*classes, one);
		} else if (kube_last_status(c)->code != 404) {
			gs_error_prefix(err, "reading the DeviceClass %s: ", names[i]);
			json_decref(*slices);
			json_decref(*classes);
			*slices = *classes = NULL;
			return -1;
		}
	}
	gs_error_clear(err);
	return 0;
}

int sync_probe_partitionable(struct kube_client *c, bool *out, struct gs_error *err)
{
	/* Not stored (dryRun=All); allNodes, so no Node needs to exist. */
	json_t *probe = json_pack(
		"{s:s, s:s, s:{s:s}, s:{s:s, s:{s:s, s:i, s:i}, s:b, s:[{s:s, s:{s:{s:s}}}]}}",
		"apiVersion", "resource.k8s.io/v1", "kind", "ResourceSlice", "metadata",
		"generateName", "gpushare-probe-", "spec", "driver", DRASLICE_DRIVER, "pool",
		"name", "gpushare-probe", "generation", 1, "resourceSliceCount", 1, "allNodes", 1,
		"sharedCounters", "name", "probe", "counters", "probe", "value", "1");
	json_t *res = NULL;
	int rc;

	*out = false;
	rc = kube_create(c, SLICES_PATH "?dryRun=All", probe, &res, err);
	json_decref(probe);
	if (rc < 0) {
		gs_error_prefix(err, "asking the apiserver whether it keeps sharedCounters "
				     "(DRAPartitionableDevices): ");
		return -1;
	}
	*out = json_array_size(kobj_get(res, "spec.sharedCounters")) > 0;
	json_decref(res);
	return 0;
}

int sync_probe_version(struct kube_client *c, const struct kubeversion **release,
		       struct gs_error *err)
{
	json_t *v = NULL;
	const char *git;

	*release = NULL;
	if (kube_get(c, "/version", &v, err) < 0) {
		gs_error_prefix(err, "reading the apiserver's /version: ");
		return -1;
	}
	git = kobj_text(v, "gitVersion");
	*release = kubeversion_for_server(git);
	if (!*release)
		gs_error_set(err,
			     "the apiserver's /version names no Kubernetes 1.x release: "
			     "gitVersion '%.64s'",
			     git);
	json_decref(v);
	return *release ? 0 : -1;
}

/* Some node declares its GPUs: it may be on the DRA path or have left it. */
static bool any_declaring(const struct sync_report *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		if (rep->nodes[i].outcome != SYNC_SKIPPED)
			return true;
	return false;
}

int sync_run(struct kube_client *c, const struct sync_opts *o, struct sync_report *rep,
	     struct gs_error *err)
{
	json_t *cm, *nodes, *slices = NULL, *classes = NULL;
	int rc;

	struct sync_opts so = *o;
	struct gs_error perr;

	memset(rep, 0, sizeof(*rep));
	if (sync_read(c, o, &cm, &nodes, err) < 0)
		return -1;
	/* Only a node whose driver runs DynamicMIG needs to know; a failed probe fails those nodes.
	 */
	if (!so.dra_partitionable && sync_wants_dynamic_mig(nodes)) {
		const struct kubeversion *kv = NULL;
		gs_error_clear(&perr);
		if (sync_probe_partitionable(c, &so.dra_partitionable, &perr) < 0 ||
		    sync_probe_version(c, &kv, &perr) < 0)
			so.dra_probe_error = perr.msg;
		so.dra_counters_apart = kv && kv->slice_counters_apart;
	}
	rc = sync_plan(cm, nodes, &so, rep, err);
	if (rc >= 0 && any_declaring(rep)) {
		struct gs_error derr;

		gs_error_clear(&derr);
		if (sync_read_dra(c, &slices, &classes, &derr) == 0) {
			sync_plan_dra(rep, slices, classes);
		} else {
			for (size_t i = 0; i < rep->n; i++)
				if (rep->nodes[i].dra && rep->nodes[i].outcome != SYNC_FAILED) {
					sync_node_fail(&rep->nodes[i], "%s", derr.msg);
					json_decref(rep->nodes[i].patch);
					rep->nodes[i].patch = NULL;
				}
		}
		rc = sync_report_failed(rep);
	}
	if (rc >= 0 && !o->dry_run)
		rc = sync_write(c, rep);
	json_decref(cm);
	json_decref(nodes);
	json_decref(slices);
	json_decref(classes);
	return rc;
}
