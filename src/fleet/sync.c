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
#include "kube/kubeloop.h"
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

/* An op is written: the slice's name comes from its generateName, its resourceVersion kept. */
static void op_written(struct sync_op *op, const json_t *out)
{
	const char *rv = kobj_string(out, "metadata.resourceVersion");

	if (op->action == SYNC_OP_CREATE && !op->name && kobj_name(out))
		op->name = gs_xstrdup(kobj_name(out));
	op->done = true;
	if (rv) {
		free(op->result_rv);
		op->result_rv = gs_xstrdup(rv);
	}
}

static int write_op(struct kube_client *c, struct sync_op *op, struct gs_error *err)
{
	json_t *out = NULL;
	int rc;

	switch (op->action) {
	case SYNC_OP_CREATE:
		rc = kube_create(c, op->path, op->body, &out, err);
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
	if (rc == 0)
		op_written(op, out);
	json_decref(out);
	return rc;
}

static const char *op_verb(enum sync_op_action a)
{
	return a == SYNC_OP_CREATE ? "creating" : a == SYNC_OP_UPDATE ? "updating" : "deleting";
}

/* A slice write of node n failed: so does the node. */
static void op_failed(struct sync_node *n, const struct sync_op *op, const char *why)
{
	char *msg = gs_xasprintf("%s the ResourceSlice%s%s: %s", op_verb(op->action),
				 op->name ? " " : "", op->name ? op->name : "", why);

	sync_node_fail(n, "%s", msg);
	free(msg);
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
			op_failed(n, op, err.msg);
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

/* ---- the DRA half on an event loop (the controller's) ----------------------------------- */

static const char *const class_names[] = {"gpu.nvidia.com", "mig.nvidia.com"};
#define N_CLASSES (sizeof(class_names) / sizeof(*class_names))

struct dra_read {
	unsigned pending;
	json_t *slices;
	json_t *classes[N_CLASSES];
	char *slices_err, *class_err[N_CLASSES];
	sync_dra_read_fn done;
	void *arg;
};

struct dra_class_get {
	struct dra_read *rd;
	size_t i;
};

static void dra_read_end(struct dra_read *rd)
{
	struct gs_error err;
	json_t *classes = NULL;

	if (--rd->pending)
		return;
	gs_error_clear(&err);
	/* The first failure in sync_read_dra's order. */
	if (rd->slices_err)
		gs_error_set(&err, "listing the ResourceSlices: %s", rd->slices_err);
	for (size_t i = 0; !err.msg[0] && i < N_CLASSES; i++)
		if (rd->class_err[i])
			gs_error_set(&err, "reading the DeviceClass %s: %s", class_names[i],
				     rd->class_err[i]);
	if (!err.msg[0]) {
		classes = json_array();
		for (size_t i = 0; i < N_CLASSES; i++)
			if (rd->classes[i])
				json_array_append(classes, rd->classes[i]);
	} else {
		json_decref(rd->slices);
		rd->slices = NULL;
	}
	rd->done(rd->arg, rd->slices, classes, &err);
	for (size_t i = 0; i < N_CLASSES; i++) {
		json_decref(rd->classes[i]);
		free(rd->class_err[i]);
	}
	free(rd->slices_err);
	free(rd);
}

static void on_slices_listed(void *arg, json_t *list, const struct kube_result *r)
{
	struct dra_read *rd = arg;

	if (list)
		rd->slices = list;
	else if (r->st && r->code == 404)
		rd->slices = json_array(); /* resource.k8s.io/v1 not served */
	else
		rd->slices_err = gs_xstrdup(r->error);
	dra_read_end(rd);
}

static void on_class_got(void *arg, const struct kube_result *r)
{
	struct dra_class_get *g = arg;
	struct dra_read *rd = g->rd;
	json_error_t jerr;

	if (!r->error) {
		rd->classes[g->i] = json_loadb(r->body, r->len, 0, &jerr);
		if (!rd->classes[g->i])
			rd->class_err[g->i] =
				gs_xasprintf("the response is not JSON: %s", jerr.text);
	} else if (!(r->st && r->code == 404)) {
		rd->class_err[g->i] = gs_xstrdup(r->error);
	}
	free(g);
	dra_read_end(rd);
}

int sync_read_dra_loop(struct kube_loop *l, sync_dra_read_fn done, void *arg)
{
	struct dra_read *rd = gs_xcalloc(1, sizeof(*rd));

	rd->done = done;
	rd->arg = arg;
	/* One for this function, so done never runs before everything was queued. */
	rd->pending = 1;
	if (kube_loop_list(l, SLICES_PATH, NULL, "spec.driver=" DRASLICE_DRIVER, 0,
			   on_slices_listed, rd) < 0)
		rd->slices_err = gs_xstrdup("cannot make a request");
	else
		rd->pending++;
	for (size_t i = 0; i < N_CLASSES; i++) {
		struct dra_class_get *g = gs_xcalloc(1, sizeof(*g));
		char *path = gs_xasprintf("%s/%s", CLASSES_PATH, class_names[i]);

		g->rd = rd;
		g->i = i;
		if (kube_loop_request(l, "GET", path, NULL, NULL, 0, on_class_got, g) < 0) {
			rd->class_err[i] = gs_xstrdup("cannot make a request");
			free(g);
		} else {
			rd->pending++;
		}
		free(path);
	}
	if (rd->pending == 1 && rd->slices_err) {
		/* Nothing went out: say so now. */
		free(rd->slices_err);
		for (size_t i = 0; i < N_CLASSES; i++)
			free(rd->class_err[i]);
		free(rd);
		return -1;
	}
	dra_read_end(rd);
	return 0;
}

/* One chain of writes: a DeviceClass, or one node's slices in order. */
struct dra_chain {
	struct dra_write *wr;
	struct sync_node *node; /* NULL for a DeviceClass */
	size_t *ops;		/* indices into rep->ops, in write order */
	size_t n, at;
};

struct dra_write {
	struct kube_loop *l;
	struct sync_report *rep;
	struct dra_chain *chains;
	size_t n_chains, running;
	int rc;
	void (*done)(void *arg, int rc);
	void *arg;
};

static void chain_next(struct dra_chain *ch);

static void dra_write_end(struct dra_write *wr)
{
	if (--wr->running)
		return;
	for (size_t i = 0; i < wr->n_chains; i++)
		free(wr->chains[i].ops);
	free(wr->chains);
	wr->done(wr->arg, wr->rc);
	free(wr);
}

static void chain_failed(struct dra_chain *ch, const struct sync_op *op, const char *why)
{
	ch->wr->rc = 1;
	if (ch->node)
		op_failed(ch->node, op, why);
	ch->at = ch->n; /* a node's writes end at its first failure */
	dra_write_end(ch->wr);
}

static void on_op_written(void *arg, const struct kube_result *r)
{
	struct dra_chain *ch = arg;
	struct sync_op *op = &ch->wr->rep->ops[ch->ops[ch->at]];

	if (!r->error || (op->action == SYNC_OP_DELETE && r->st && r->code == 404)) {
		/* A deletion that found nothing: what was wanted. */
		json_t *out = r->error ? NULL : json_loadb(r->body, r->len, 0, NULL);
		op_written(op, out);
		json_decref(out);
		ch->at++;
		chain_next(ch);
		return;
	}
	chain_failed(ch, op, r->error);
}

static void chain_next(struct dra_chain *ch)
{
	struct sync_op *op;
	char *body;
	int rc;

	if (ch->at == ch->n) {
		dra_write_end(ch->wr);
		return;
	}
	op = &ch->wr->rep->ops[ch->ops[ch->at]];
	body = op->body ? json_dumps(op->body, JSON_COMPACT) : NULL;
	rc = kube_loop_request(ch->wr->l,
			       op->action == SYNC_OP_CREATE   ? "POST"
			       : op->action == SYNC_OP_UPDATE ? "PUT"
							      : "DELETE",
			       op->path, NULL, body, body ? strlen(body) : 0, on_op_written, ch);
	free(body);
	if (rc < 0)
		chain_failed(ch, op, "cannot make a request");
}

static void chain_add(struct dra_write *wr, struct sync_node *node, size_t op)
{
	struct dra_chain *ch = NULL;

	for (size_t i = 0; i < wr->n_chains && node; i++)
		if (wr->chains[i].node == node)
			ch = &wr->chains[i];
	if (!ch) {
		wr->chains = gs_xrealloc(wr->chains, (wr->n_chains + 1) * sizeof(*wr->chains));
		ch = &wr->chains[wr->n_chains++];
		memset(ch, 0, sizeof(*ch));
		ch->wr = wr;
		ch->node = node;
	}
	ch->ops = gs_xrealloc(ch->ops, (ch->n + 1) * sizeof(*ch->ops));
	ch->ops[ch->n++] = op;
}

void sync_write_dra_loop(struct kube_loop *l, struct sync_report *rep,
			 void (*done)(void *arg, int rc), void *arg)
{
	struct dra_write *wr = gs_xcalloc(1, sizeof(*wr));

	wr->l = l;
	wr->rep = rep;
	wr->done = done;
	wr->arg = arg;
	/* Each DeviceClass alone; per node, its deletions first, then the rest. */
	for (size_t i = 0; i < rep->n_ops; i++)
		if (!rep->ops[i].node)
			chain_add(wr, NULL, i);
	for (size_t k = 0; k < rep->n; k++)
		for (int deletes = 1; deletes >= 0; deletes--)
			for (size_t i = 0; i < rep->n_ops; i++) {
				const struct sync_op *op = &rep->ops[i];
				if (op->node && !strcmp(op->node, rep->nodes[k].name) &&
				    (op->action == SYNC_OP_DELETE) == (deletes == 1))
					chain_add(wr, &rep->nodes[k], i);
			}
	/* One for this function, so done never runs before every chain started. */
	wr->running = wr->n_chains + 1;
	for (size_t i = 0; i < wr->n_chains; i++)
		chain_next(&wr->chains[i]);
	dra_write_end(wr);
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
