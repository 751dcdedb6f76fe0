#include "fleet/replay_live.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/replay_cluster.h"
#include "kube/kubeclient.h"
#include "model/kobj.h"
#include "model/names.h"
#include "model/nodehw.h"
#include "base/strbuf.h"
#include "base/wrapper.h"
#include "base/banned.h"

/* How often one pod is looked at while it waits for the scheduler and the controller. */
#define POD_POLL_MS 20
#define NODES_POLL_MS 250

/* What this run made, for the cleanup. */
struct live {
	struct kube_client *c;
	const struct replay_trace *tr;
	const struct replay_opts *o;
	const struct replay_live_opts *lo;
	char *run, *key, *selector; /* run id, ConfigMap key, "gpushare.io%2Freplay%3D<run>" */
	bool ns_created, key_written;
	size_t nodes_created; /* the trace's first nodes_created nodes */
	size_t pods_created;
};

static void progress(const struct live *lv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void progress(const struct live *lv, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!lv->lo->progress)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	lv->lo->progress(lv->lo->progress_arg, line);
}

static int status_code(const struct live *lv)
{
	return kube_last_status(lv->c)->code;
}

/* ---- the namespace and the ConfigMap key ------------------------------------------ */

/* Create namespace `ns` unless it exists; *created tells which. */
static int ensure_namespace(struct live *lv, const char *ns, bool *created, struct gs_error *err)
{
	json_t *obj = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
				"metadata", "name", ns);
	int rc = kube_create(lv->c, "/api/v1/namespaces", obj, NULL, err);

	json_decref(obj);
	*created = rc == 0;
	if (rc < 0 && status_code(lv) != 409) {
		gs_error_prefix(err, "create namespace %s: ", ns);
		return -1;
	}
	return 0;
}

static int sa_exists(const json_t *obj, void *arg, struct gs_error *why)
{
	(void)arg;
	if (obj)
		return 1;
	gs_error_set(why, "no ServiceAccount default yet");
	return 0;
}

/* The run's key in the device-plugin ConfigMap: the time-slicing config of N replicas. */
static int write_key(struct live *lv, struct gs_error *err)
{
	const struct replay_live_opts *lo = lv->lo;
	char *path = gs_xasprintf("/api/v1/namespaces/%s/configmaps/%s", lo->cm_ns, lo->cm_name);
	char *text = replay_config_text(lv->o->replicas);
	json_t *patch = json_pack("{s:{s:s}}", "data", lv->key, text);
	bool made;
	int rc = kube_patch(lv->c, path, KUBE_PATCH_MERGE, patch, NULL, err);

	if (rc < 0 && status_code(lv) == 404) {
		/* No ConfigMap (or no namespace): made, with the run's key alone. */
		json_t *cm = json_pack("{s:s,s:s,s:{s:s,s:s},s:O}", "apiVersion", "v1", "kind",
				       "ConfigMap", "metadata", "name", lo->cm_name, "namespace",
				       lo->cm_ns, "data", json_object_get(patch, "data"));
		char *coll = gs_xasprintf("/api/v1/namespaces/%s/configmaps", lo->cm_ns);
		rc = ensure_namespace(lv, lo->cm_ns, &made, err);
		if (rc == 0)
			rc = kube_create(lv->c, coll, cm, NULL, err);
		free(coll);
		json_decref(cm);
	}
	if (rc < 0)
		gs_error_prefix(err, "write key %s of ConfigMap %s/%s: ", lv->key, lo->cm_ns,
				lo->cm_name);
	else
		lv->key_written = true;
	json_decref(patch);
	free(text);
	free(path);
	return rc;
}

/* ---- the nodes ------------------------------------------------------------------- */

static json_t *resources(const struct replay_node *n)
{
	char cpu[32], mem[32];

	snprintf(cpu, sizeof(cpu), "%lldm", (long long)n->cpu_milli);
	snprintf(mem, sizeof(mem), "%lldMi", (long long)n->memory_mib);
	return json_pack("{s:s,s:s,s:s}", "cpu", cpu, "memory", mem, "pods", "110");
}

static int create_node(struct live *lv, const struct replay_node *n, struct gs_error *err)
{
	json_t *obj = replay_node_object(n, lv->key), *res = resources(n);
	json_t *meta = json_object_get(obj, "metadata");
	char *status_path = gs_xasprintf("/api/v1/nodes/%s/status", n->name);
	json_t *patch = json_pack("{s:{s:O,s:O}}", "status", "capacity", res, "allocatable", res);
	int rc;

	json_object_set_new(json_object_get(meta, "labels"), REPLAY_LIVE_LABEL,
			    json_string(lv->run));
	json_object_set_new(json_object_get(meta, "annotations"), REPLAY_LIVE_KWOK,
			    json_string("fake"));
	if (n->gpus <= 0)
		json_object_del(json_object_get(meta, "labels"), NODEHW_LABEL_CONFIG);
	rc = kube_create(lv->c, "/api/v1/nodes", obj, NULL, err);
	if (rc < 0 && status_code(lv) == 409)
		gs_error_set(err,
			     "node %s exists already: the replay makes the trace's nodes "
			     "under their own names (delete it first)",
			     n->name);
	else if (rc < 0)
		gs_error_prefix(err, "create node %s: ", n->name);
	else
		lv->nodes_created++;
	/* What a kubelet reports: capacity and allocatable through the status. */
	if (rc == 0 &&
	    (rc = kube_patch(lv->c, status_path, KUBE_PATCH_MERGE, patch, NULL, err)) < 0)
		gs_error_prefix(err, "set the capacity of node %s: ", n->name);
	json_decref(patch);
	json_decref(res);
	json_decref(obj);
	free(status_path);
	return rc;
}

/* Why a node is not ready for pods yet, or NULL. */
static const char *node_not_ready(const json_t *node, const struct replay_node *n, int replicas,
				  char *buf, size_t size)
{
	bool ready = false;
	size_t i;
	json_t *x;

	json_array_foreach (json_object_get(json_object_get(node, "status"), "conditions"), i, x)
		if (!strcmp(kobj_text(x, "type"), "Ready"))
			ready = !strcmp(kobj_text(x, "status"), "True");
	if (!ready) {
		snprintf(buf, size, "node %s is not Ready (kwok runs the cluster's fake nodes)",
			 n->name);
		return buf;
	}
	json_array_foreach (json_object_get(json_object_get(node, "spec"), "taints"), i, x) {
		snprintf(buf, size, "node %s has the taint %s", n->name, kobj_text(x, "key"));
		return buf;
	}
	if (n->gpus > 0) {
		long long want = (long long)n->gpus * replicas;
		const json_t *alloc = kobj_map(node, "status.allocatable");
		const char *v = json_string_value(json_object_get(alloc, "nvidia.com/gpu"));
		if (!v || atoll(v) != want) {
			snprintf(buf, size,
				 "node %s: allocatable nvidia.com/gpu %s, want %lld (%d GPUs x %d; "
				 "is gpushare's controller running on this ConfigMap?)",
				 n->name, v ? v : "absent", want, n->gpus, replicas);
			return buf;
		}
	}
	return NULL;
}

static int nodes_ready(const json_t *list, void *arg, struct gs_error *why)
{
	const struct live *lv = arg;
	json_t *by_name = json_object(), *node;
	char buf[512];
	size_t i;
	int rc = 1;

	json_array_foreach (json_object_get(list, "items"), i, node)
		json_object_set(by_name, kobj_text(node, "metadata.name"), node);
	for (i = 0; i < lv->tr->n_nodes && rc; i++) {
		const struct replay_node *n = &lv->tr->nodes[i];
		const json_t *obj = json_object_get(by_name, n->name);
		const char *w = obj ? node_not_ready(obj, n, lv->o->replicas, buf, sizeof(buf))
				    : "a node is missing";
		if (w) {
			gs_error_set(why, "%s", w);
			rc = 0;
		}
	}
	json_decref(by_name);
	return rc;
}

/* ---- the pods -------------------------------------------------------------------- */

static json_t *pod_body(const struct live *lv, const struct replay_place *pl)
{
	json_t *pod = replay_pod_object(&lv->tr->tasks[pl->task], pl->name, lv->o->replicas);
	json_t *meta = json_object_get(pod, "metadata"), *spec = json_object_get(pod, "spec");

	json_object_set_new(meta, "namespace", json_string(lv->lo->ns));
	json_object_set_new(meta, "labels", json_pack("{s:s}", REPLAY_LIVE_LABEL, lv->run));
	json_object_set_new(spec, "nodeSelector", json_pack("{s:s}", REPLAY_LIVE_LABEL, lv->run));
	json_object_set_new(spec, "terminationGracePeriodSeconds", json_integer(0));
	json_object_set_new(json_array_get(json_object_get(spec, "containers"), 0), "image",
			    json_string(REPLAY_LIVE_IMAGE));
	return pod;
}

/*
 * Placed: bound and admitted by the controller (or refused: phase Failed),
 * or found unschedulable by the scheduler.
 */
static int pod_placed(const json_t *pod, void *arg, struct gs_error *why)
{
	const char *node = kobj_text(pod, "spec.nodeName");
	const char *adm = kobj_annotation(pod, LEDGER_ANN_ADMITTED);
	size_t i;
	json_t *c;

	(void)arg;
	if (!pod) {
		gs_error_set(why, "the pod is gone");
		return -1;
	}
	if (*node) {
		if ((adm && !strcmp(adm, "true")) ||
		    !strcmp(kobj_text(pod, "status.phase"), "Failed"))
			return 1;
		gs_error_set(why, "bound to node %s, not admitted by gpushare's controller", node);
		return 0;
	}
	json_array_foreach (json_object_get(json_object_get(pod, "status"), "conditions"), i, c)
		if (!strcmp(kobj_text(c, "type"), "PodScheduled") &&
		    !strcmp(kobj_text(c, "status"), "False") &&
		    !strcmp(kobj_text(c, "reason"), "Unschedulable"))
			return 1;
	gs_error_set(why, "not scheduled yet (is kube-scheduler running?)");
	return 0;
}

static int place_pods(struct live *lv, struct replay_result *r, struct gs_error *err)
{
	char *coll = gs_xasprintf("/api/v1/namespaces/%s/pods", lv->lo->ns);
	size_t bound = 0;
	int rc = 0;

	for (size_t i = 0; i < r->n_places && rc == 0; i++) {
		const struct replay_place *pl = &r->places[i];
		json_t *body = pod_body(lv, pl), *got = NULL;
		char *path = gs_xasprintf("%s/%s", coll, pl->name);

		rc = kube_create(lv->c, coll, body, NULL, err);
		if (rc < 0)
			gs_error_prefix(err, "create pod %s/%s: ", lv->lo->ns, pl->name);
		else {
			lv->pods_created++;
			rc = kube_wait(lv->c, path, pod_placed, NULL, lv->lo->timeout_ms,
				       POD_POLL_MS, &got, err);
		}
		if (rc == 0 && *kobj_text(got, "spec.nodeName"))
			bound++;
		if (rc == 0 && ((i + 1) % 100 == 0 || i + 1 == r->n_places))
			progress(lv, "%zu of %zu pods placed: %zu bound, %zu pending", i + 1,
				 r->n_places, bound, i + 1 - bound);
		json_decref(got);
		json_decref(body);
		free(path);
	}
	free(coll);
	return rc;
}

/* ---- reading back, cleaning up ------------------------------------------------------ */

static int items(struct live *lv, const char *path, json_t **out, struct gs_error *err)
{
	char *sel = gs_xasprintf("%s=%s", REPLAY_LIVE_LABEL, lv->run);
	struct kube_list_opts lo = {.label_selector = sel, .field_selector = NULL};
	json_t *l = NULL;
	int rc = kube_list(lv->c, path, &lo, &l, err);

	free(sel);
	if (rc < 0)
		return rc;
	*out = json_incref(json_object_get(l, "items"));
	if (!*out)
		*out = json_array();
	json_decref(l);
	return 0;
}

static int read_back(struct live *lv, const struct catalog *cat, struct replay_result *r,
		     struct gs_error *err)
{
	char *cm_path =
		gs_xasprintf("/api/v1/namespaces/%s/configmaps/%s", lv->lo->cm_ns, lv->lo->cm_name);
	char *pods_path = gs_xasprintf("/api/v1/namespaces/%s/pods", lv->lo->ns);
	json_t *cm = NULL, *nodes = NULL, *pods = NULL;
	int rc = kube_get(lv->c, cm_path, &cm, err);

	if (rc == 0)
		rc = items(lv, "/api/v1/nodes", &nodes, err);
	if (rc == 0)
		rc = items(lv, pods_path, &pods, err);
	if (rc == 0)
		rc = replay_cluster_places(cat, lv->tr, r, cm, nodes, pods, err);
	json_decref(cm);
	json_decref(nodes);
	json_decref(pods);
	free(cm_path);
	free(pods_path);
	return rc;
}

/* Delete what the run made; failures are progress lines. */
static void cleanup(struct live *lv)
{
	struct gs_error e;
	json_t *now = json_pack("{s:s,s:s,s:i}", "apiVersion", "v1", "kind", "DeleteOptions",
				"gracePeriodSeconds", 0);
	char *path;

	if (lv->ns_created) {
		path = gs_xasprintf("/api/v1/namespaces/%s", lv->lo->ns);
		if (kube_delete(lv->c, path, NULL, NULL, &e) < 0 && status_code(lv) != 404)
			progress(lv, "warning: delete namespace %s: %s", lv->lo->ns, e.msg);
		free(path);
	} else if (lv->pods_created) {
		path = gs_xasprintf("/api/v1/namespaces/%s/pods?labelSelector=%s", lv->lo->ns,
				    lv->selector);
		if (kube_delete(lv->c, path, now, NULL, &e) < 0)
			progress(lv, "warning: delete the run's pods in %s: %s", lv->lo->ns, e.msg);
		free(path);
	}
	if (lv->nodes_created) {
		path = gs_xasprintf("/api/v1/nodes?labelSelector=%s", lv->selector);
		if (kube_delete(lv->c, path, now, NULL, &e) < 0)
			progress(lv, "warning: delete the run's nodes: %s", e.msg);
		free(path);
	}
	if (lv->key_written) {
		json_t *patch = json_pack("{s:{s:n}}", "data", lv->key);
		path = gs_xasprintf("/api/v1/namespaces/%s/configmaps/%s", lv->lo->cm_ns,
				    lv->lo->cm_name);
		if (kube_patch(lv->c, path, KUBE_PATCH_MERGE, patch, NULL, &e) < 0)
			progress(lv, "warning: remove key %s of ConfigMap %s/%s: %s", lv->key,
				 lv->lo->cm_ns, lv->lo->cm_name, e.msg);
		json_decref(patch);
		free(path);
	}
	json_decref(now);
	progress(lv, "deleted the run's %s, nodes and ConfigMap key",
		 lv->ns_created ? "namespace" : "pods");
}

int replay_live_run(struct kube_client *c, const struct catalog *cat, const struct replay_trace *tr,
		    const struct replay_opts *o, const struct replay_live_opts *lo,
		    struct replay_result **out, struct gs_error *err)
{
	struct live lv = {.c = c, .tr = tr, .o = o, .lo = lo};
	struct replay_result *r = NULL;
	char *sa_path = NULL;
	time_t t0;
	int rc = -1;

	*out = NULL;
	if (replay_prepare(tr, o, &r, err) < 0)
		return -1;
	lv.run = lo->run ? gs_xstrdup(lo->run)
			 : gs_xasprintf("r%llx%x", (unsigned long long)time(NULL),
					(unsigned)getpid() & 0xffff);
	lv.key = gs_xasprintf("replay-%s", lv.run);
	lv.selector = gs_xasprintf("gpushare.io%%2Freplay%%3D%s", lv.run);
	t0 = time(NULL);

	/* The pods' namespace first: an unreachable cluster fails before anything is made. */
	if (ensure_namespace(&lv, lo->ns, &lv.ns_created, err) < 0)
		goto out;
	sa_path = gs_xasprintf("/api/v1/namespaces/%s/serviceaccounts/default", lo->ns);
	/* The ServiceAccount admission plugin refuses pods until `default` exists. */
	if (kube_wait(c, sa_path, sa_exists, NULL, lo->timeout_ms, 100, NULL, err) < 0 ||
	    write_key(&lv, err) < 0)
		goto out;
	progress(&lv, "run %s: namespace %s%s, ConfigMap %s/%s key %s (%d replicas per GPU)",
		 lv.run, lo->ns, lv.ns_created ? " (created)" : "", lo->cm_ns, lo->cm_name, lv.key,
		 o->replicas);
	for (size_t i = 0; i < tr->n_nodes; i++)
		if (create_node(&lv, &tr->nodes[i], err) < 0)
			goto out;
	char *list_path = gs_xasprintf("/api/v1/nodes?labelSelector=%s", lv.selector);
	rc = kube_wait(c, list_path, nodes_ready, &lv, lo->timeout_ms, NODES_POLL_MS, NULL, err);
	free(list_path);
	if (rc < 0)
		goto out;
	rc = -1;
	progress(&lv, "%zu nodes created and advertised (%zu GPUs) in %llds", tr->n_nodes,
		 r->n_gpus, (long long)(time(NULL) - t0));
	t0 = time(NULL);
	if (place_pods(&lv, r, err) < 0)
		goto out;
	progress(&lv, "%zu pods placed in %llds", r->n_places, (long long)(time(NULL) - t0));
	if (read_back(&lv, cat, r, err) < 0 || replay_measure(tr, r, err) < 0)
		goto out;
	*out = r;
	r = NULL;
	rc = 0;
out:
	if (lo->keep)
		progress(&lv, "kept: nodes and pods labelled %s=%s, ConfigMap key %s",
			 REPLAY_LIVE_LABEL, lv.run, lv.key);
	else if (lv.ns_created || lv.nodes_created || lv.key_written || lv.pods_created)
		cleanup(&lv);
	replay_result_free(r);
	free(sa_path);
	free(lv.run);
	free(lv.key);
	free(lv.selector);
	return rc;
}
