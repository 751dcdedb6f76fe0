#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon/controller.h"
#include "engine/heartbeat.h"
#include "engine/mergepatch.h"
#include "base/strbuf.h"

/*
 * The controller as a state machine, with no loop and no network: watch
 * events go in through controller_watch_ops, the requests and timers it
 * wants come out of controller_take_effects, and the test answers them as
 * the apiserver would (a node PATCH returns the node patched).
 */

#define CM_NS "gpu-share"
#define CM_NAME "device-plugin-configs"

static const char cm_v1[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"" CM_NAME
	"\",\"namespace\":\"" CM_NS "\",\"resourceVersion\":\"1\"},\"data\":{"
	"\"default\":\"version: v1\\nflags:\\n  migStrategy: none\\n\","
	"\"shared\":\"version: v1\\nflags:\\n  migStrategy: none\\nsharing:\\n  timeSlicing:\\n"
	"    resources:\\n    - name: nvidia.com/gpu\\n      replicas: 4\\n\"}}";

/* The same ConfigMap with `shared` at 2 replicas: only nodes labelled shared change. */
static const char cm_v2[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"" CM_NAME
	"\",\"namespace\":\"" CM_NS "\",\"resourceVersion\":\"2\"},\"data\":{"
	"\"default\":\"version: v1\\nflags:\\n  migStrategy: none\\n\","
	"\"shared\":\"version: v1\\nflags:\\n  migStrategy: none\\nsharing:\\n  timeSlicing:\\n"
	"    resources:\\n    - name: nvidia.com/gpu\\n      replicas: 2\\n\"}}";

/* A node declaring `count` T4s, on config `config` (NULL = the default). */
static json_t *node(const char *name, const char *rv, const char *config, int count)
{
	json_t *n = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:{s:s},s:{s:s,s:s}},s:{s:{s:s},s:{s:s}}}",
			      "apiVersion", "v1", "kind", "Node", "metadata", "name", name, "uid",
			      name, "resourceVersion", rv, "labels", "kubernetes.io/hostname", name,
			      "annotations", "gpushare.io/gpu-product", "Tesla T4",
			      "gpushare.io/gpu-count", count == 1 ? "1" : "2", "status", "capacity",
			      "cpu", "8", "allocatable", "cpu", "8");

	assert_non_null(n);
	if (config)
		json_object_set_new(json_object_get(json_object_get(n, "metadata"), "labels"),
				    "nvidia.com/device-plugin.config", json_string(config));
	return n;
}

static json_t *pod(const char *name, const char *node_name, const char *gpus)
{
	json_t *p = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:s},s:{s:s,s:[{s:s,s:{s:{s:s}}}]},"
			      "s:{s:s}}",
			      "apiVersion", "v1", "kind", "Pod", "metadata", "name", name,
			      "namespace", "default", "uid", name, "resourceVersion", "50", "spec",
			      "nodeName", node_name, "containers", "name", "c", "resources",
			      "limits", "nvidia.com/gpu", gpus, "status", "phase", "Pending");

	assert_non_null(p);
	return p;
}

/* ---- the apiserver's side ---------------------------------------------------------------- */

struct world {
	struct controller *ctl;
	bool down;	/* every request goes unanswered (the apiserver is gone) */
	json_t *nodes;	/* name -> the node as the apiserver holds it */
	json_t *leases; /* name -> the Lease as the apiserver holds it */
	struct controller_effect *e;
	size_t n;
	unsigned rv;
	/* what the admission hook saw */
	unsigned hook_calls;
	size_t last_holders;
	/* a hook that reads the cluster first, and a publish hook, left pending */
	void (*ready)(void *ready_arg);
	void *ready_arg;
	unsigned publish_calls;
	struct sync_report *rep;
	void (*published)(void *done_arg);
	void *published_arg;
};

static void feed(struct world *w, enum controller_watch which, enum kube_event ev, json_t *obj)
{
	const struct kube_watch_ops *ops = controller_watch_ops(which);

	if ((which == CONTROLLER_WATCH_NODES || which == CONTROLLER_WATCH_LEASES) &&
	    ev != KUBE_EV_DELETED)
		json_object_set(which == CONTROLLER_WATCH_NODES ? w->nodes : w->leases,
				json_string_value(
					json_object_get(json_object_get(obj, "metadata"), "name")),
				obj);
	ops->event(w->ctl, ev, obj);
	json_decref(obj);
}

/* A (re)list: the first one, or the one a watch makes after 410 Gone. */
static void relist(struct world *w, enum controller_watch which, json_t *objs)
{
	const struct kube_watch_ops *ops = controller_watch_ops(which);
	json_t *o;
	size_t i;

	ops->list_begin(w->ctl);
	json_array_foreach (objs, i, o)
		feed(w, which, KUBE_EV_LISTED, json_incref(o));
	ops->list_end(w->ctl);
	json_decref(objs);
}

static void effects_drop(struct world *w)
{
	controller_effects_free(w->e, w->n);
	w->e = NULL;
	w->n = 0;
}

/* Tick, and hold what the controller wants done. */
static size_t tick(struct world *w)
{
	assert_null(w->e);
	controller_tick(w->ctl);
	w->n = controller_take_effects(w->ctl, &w->e);
	return w->n;
}

static const struct controller_effect *find(struct world *w, const char *method, const char *path)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->e[i].method && !strcmp(w->e[i].method, method) &&
		    !strcmp(w->e[i].path, path))
			return &w->e[i];
	return NULL;
}

static json_t *body_of(const struct controller_effect *e)
{
	json_t *j;

	assert_non_null(e);
	assert_non_null(e->body);
	j = json_loads(e->body, 0, NULL);
	assert_non_null(j);
	return j;
}

#define LEASES "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/"

/*
 * A merge PATCH of a Lease as the apiserver answers it: 409 when the patch
 * names a resourceVersion the Lease no longer has, else applied with a new
 * resourceVersion and returned.
 */
static const struct kube_result *lease_patched(struct world *w, const struct controller_effect *e,
					       struct kube_result *r, char **reply)
{
	json_t *l = json_object_get(w->leases, e->path + strlen(LEASES));
	json_t *patch = json_loads(e->body, 0, NULL);
	const char *want = json_string_value(
		json_object_get(json_object_get(patch, "metadata"), "resourceVersion"));
	const char *have = json_string_value(
		json_object_get(json_object_get(l, "metadata"), "resourceVersion"));
	char rv[16];

	*reply = NULL;
	if (!l) {
		/* A Lease the test did not list: taken as written. */
		json_decref(patch);
		return r;
	}
	if (want && strcmp(want, have) != 0) {
		r->code = 409;
		r->error = "the object has been modified";
		json_decref(patch);
		return r;
	}
	mergepatch_apply(l, patch);
	json_decref(patch);
	snprintf(rv, sizeof(rv), "%u", ++w->rv);
	json_object_set_new(json_object_get(l, "metadata"), "resourceVersion", json_string(rv));
	*reply = json_dumps(l, JSON_COMPACT);
	r->body = *reply;
	r->len = strlen(*reply);
	return r;
}

/*
 * Answer every request as the apiserver would: a node status PATCH is
 * applied and the node returned with a new resourceVersion; anything else
 * succeeds with an empty object. Timers fire with `fire`, else are dropped.
 */
static void answer_ex(struct world *w, bool fire)
{
	for (size_t i = 0; i < w->n; i++) {
		struct controller_effect *e = &w->e[i];
		struct kube_result r = {.code = 200, .body = "{}", .len = 2};
		char *reply = NULL;

		if (!e->method) {
			if (fire)
				e->fire(e->arg);
			else if (e->drop)
				e->drop(e->arg);
			continue;
		}
		if (w->down) {
			r.code = 0;
			r.body = "";
			r.len = 0;
			r.error = "Failed to connect to 127.0.0.1 port 6443: Couldn't connect to "
				  "server";
			e->done(e->arg, &r);
			continue;
		}
		if (!strcmp(e->method, "GET") && !strncmp(e->path, LEASES, strlen(LEASES) - 1) &&
		    !e->path[strlen(LEASES) - 1]) {
			/* The Lease LIST, as the apiserver holds them. */
			json_t *items = json_array(), *v, *list;
			const char *k;

			json_object_foreach (w->leases, k, v)
				json_array_append(items, v);
			list = json_pack("{s:o}", "items", items);
			reply = json_dumps(list, JSON_COMPACT);
			json_decref(list);
			r.body = reply;
			r.len = strlen(reply);
			e->done(e->arg, &r);
			free(reply);
			continue;
		}
		if (!strcmp(e->method, "PATCH") && !strncmp(e->path, LEASES, strlen(LEASES))) {
			e->done(e->arg, lease_patched(w, e, &r, &reply));
			free(reply);
			continue;
		}
		if (!strcmp(e->method, "PATCH") && !strncmp(e->path, "/api/v1/nodes/", 14)) {
			char name[256];
			const char *slash = strchr(e->path + 14, '/');
			json_t *n, *patch = json_loads(e->body, 0, NULL);
			char rv[16];

			snprintf(name, sizeof(name), "%.*s", (int)(slash - e->path - 14),
				 e->path + 14);
			n = json_object_get(w->nodes, name);
			assert_non_null(n);
			mergepatch_apply(n, patch);
			json_decref(patch);
			snprintf(rv, sizeof(rv), "%u", ++w->rv);
			json_object_set_new(json_object_get(n, "metadata"), "resourceVersion",
					    json_string(rv));
			reply = json_dumps(n, JSON_COMPACT);
			r.body = reply;
			r.len = strlen(reply);
		}
		e->done(e->arg, &r);
		free(reply);
	}
	effects_drop(w);
}

static void answer(struct world *w)
{
	answer_ex(w, false);
}

/* Managed nodes, as /metrics counts them (every sharing strategy). */
static unsigned managed(struct world *w)
{
	struct strbuf sb = STRBUF_INIT;
	unsigned total = 0;

	controller_metrics(w->ctl, &sb);
	for (const char *p = sb.buf; (p = strstr(p, "\ngpushare_nodes{"));) {
		p = strchr(p, '}');
		total += (unsigned)strtoul(p + 2, NULL, 10);
	}
	strbuf_release(&sb);
	return total;
}

static const char *gpus_in(const json_t *patch)
{
	return json_string_value(
		json_object_get(json_object_get(json_object_get(patch, "status"), "allocatable"),
				"nvidia.com/gpu"));
}

static const char *node_patch_gpus(struct world *w, const char *name)
{
	char path[128];
	const struct controller_effect *e;
	json_t *b;
	static char out[32];

	snprintf(path, sizeof(path), "/api/v1/nodes/%s/status", name);
	e = find(w, "PATCH", path);
	if (!e)
		return NULL;
	b = body_of(e);
	snprintf(out, sizeof(out), "%s", gpus_in(b) ? gpus_in(b) : "(none)");
	json_decref(b);
	return out;
}

/* Refuse pods named big-*, admit the rest with the devices noted. */
static int hook(void *arg, const struct controller_admission *in, struct controller_verdict *out,
		struct gs_error *err)
{
	struct world *w = arg;
	const char *name =
		json_string_value(json_object_get(json_object_get(in->pod, "metadata"), "name"));

	(void)err;
	w->hook_calls++;
	w->last_holders = json_array_size(in->holders);
	if (!strncmp(name, "big-", 4)) {
		out->admit = false;
		out->reason = strdup("UnexpectedAdmissionError");
		out->message = strdup("Allocate failed: requested 9, available 8");
		return 0;
	}
	out->admit = true;
	out->annotations = json_pack("{s:s}", "gpushare.io/devices", "GPU-0");
	return 0;
}

static int setup(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct controller_opts o = {.configmap_namespace = CM_NS,
				    .configmap_name = CM_NAME,
				    .admit = hook,
				    .admit_arg = w};
	struct gs_error err;

	w->nodes = json_object();
	w->leases = json_object();
	w->rv = 100;
	assert_int_equal(controller_new(&w->ctl, NULL, &o, &err), 0);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	effects_drop(w);
	controller_free(w->ctl);
	json_decref(w->nodes);
	json_decref(w->leases);
	free(w);
	return 0;
}

/* The first lists: the ConfigMap, then `nodes` (an array, taken), no pods. Answered. */
static void start(struct world *w, json_t *nodes)
{
	relist(w, CONTROLLER_WATCH_CONFIGMAP, json_pack("[o]", json_loads(cm_v1, 0, NULL)));
	relist(w, CONTROLLER_WATCH_NODES, nodes);
	relist(w, CONTROLLER_WATCH_PODS, json_array());
}

/* ---- the cases --------------------------------------------------------------------------- */

static void node_added_is_advertised(void **state)
{
	struct world *w = *state;
	json_t *b;

	start(w, json_array());
	assert_int_equal(tick(w), 0);
	effects_drop(w);

	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_ADDED, node("t4", "10", "shared", 2));
	assert_int_equal(tick(w), 1);
	assert_string_equal(w->e[0].ctype, "application/merge-patch+json");
	b = body_of(find(w, "PATCH", "/api/v1/nodes/t4/status"));
	/* 2 GPUs x 4 replicas, for the node planned (its uid). */
	assert_string_equal(gpus_in(b), "8");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(b, "metadata"), "uid")), "t4");
	json_decref(b);
	answer(w);
	assert_int_equal(managed(w), 1);

	/* Its own write's answer needs nothing more. */
	assert_int_equal(tick(w), 0);
	effects_drop(w);
}

static void configmap_edit_repatches_affected_nodes(void **state)
{
	struct world *w = *state;

	start(w, json_pack("[o,o,o]", node("a", "10", "shared", 2), node("b", "11", "shared", 1),
			   node("c", "12", NULL, 2)));
	assert_int_equal(tick(w), 3);
	assert_string_equal(node_patch_gpus(w, "a"), "8");
	assert_string_equal(node_patch_gpus(w, "b"), "4");
	assert_string_equal(node_patch_gpus(w, "c"), "2");
	answer(w);
	assert_int_equal(tick(w), 0);
	effects_drop(w);

	feed(w, CONTROLLER_WATCH_CONFIGMAP, KUBE_EV_MODIFIED, json_loads(cm_v2, 0, NULL));
	/* The nodes on `shared` at 2 replicas; the default node already shows its config. */
	assert_int_equal(tick(w), 2);
	assert_string_equal(node_patch_gpus(w, "a"), "4");
	assert_string_equal(node_patch_gpus(w, "b"), "2");
	assert_null(node_patch_gpus(w, "c"));
	answer(w);

	/* The same data again (a resync): nothing to write. */
	feed(w, CONTROLLER_WATCH_CONFIGMAP, KUBE_EV_MODIFIED, json_loads(cm_v2, 0, NULL));
	assert_int_equal(tick(w), 0);
	effects_drop(w);
}

static void bound_pod_gets_a_verdict(void **state)
{
	struct world *w = *state;
	json_t *b;
	const json_t *ann;

	start(w, json_pack("[o]", node("t4", "10", "shared", 2)));
	assert_int_equal(tick(w), 1);
	answer(w);

	/* A pod bound to no node is not the controller's. */
	feed(w, CONTROLLER_WATCH_PODS, KUBE_EV_ADDED, pod("unbound", "", "1"));
	assert_int_equal(tick(w), 0);
	effects_drop(w);
	assert_int_equal(w->hook_calls, 0);

	feed(w, CONTROLLER_WATCH_PODS, KUBE_EV_ADDED, pod("small", "t4", "1"));
	assert_int_equal(tick(w), 1);
	assert_int_equal(w->hook_calls, 1);
	assert_int_equal(w->last_holders, 0);
	b = body_of(find(w, "PATCH", "/api/v1/namespaces/default/pods/small"));
	ann = json_object_get(json_object_get(b, "metadata"), "annotations");
	assert_string_equal(json_string_value(json_object_get(ann, "gpushare.io/admitted")),
			    "true");
	assert_string_equal(json_string_value(json_object_get(ann, "gpushare.io/devices")),
			    "GPU-0");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(b, "metadata"), "uid")), "small");
	json_decref(b);
	answer(w);
	{
		/* The watch shows it admitted: it holds its devices now. */
		json_t *p = pod("small", "t4", "1");
		json_object_set_new(json_object_get(p, "metadata"), "annotations",
				    json_pack("{s:s,s:s}", "gpushare.io/admitted", "true",
					      "gpushare.io/devices", "GPU-0"));
		json_object_set_new(json_object_get(p, "metadata"), "resourceVersion",
				    json_string("51"));
		feed(w, CONTROLLER_WATCH_PODS, KUBE_EV_MODIFIED, p);
	}
	assert_int_equal(tick(w), 0);
	effects_drop(w);

	/* Refused: phase Failed with the kubelet's words, and its Event. */
	feed(w, CONTROLLER_WATCH_PODS, KUBE_EV_ADDED, pod("big-one", "t4", "9"));
	assert_int_equal(tick(w), 2);
	assert_int_equal(w->hook_calls, 2);
	assert_int_equal(w->last_holders, 1);
	b = body_of(find(w, "PATCH", "/api/v1/namespaces/default/pods/big-one/status"));
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(b, "status"), "phase")),
		"Failed");
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(b, "status"), "message")),
		"Pod was rejected: Allocate failed: requested 9, available 8");
	json_decref(b);
	b = body_of(find(w, "POST", "/api/v1/namespaces/default/events"));
	assert_string_equal(json_string_value(json_object_get(b, "reason")),
			    "UnexpectedAdmissionError");
	json_decref(b);
	answer(w);
}

/*
 * A pod being deleted keeps its devices until it is gone: the kubelet's
 * device manager counts a terminating pod as active until its containers
 * stopped, so the next pod on the node is decided with it among the holders.
 */
static void terminating_pod_keeps_its_devices(void **state)
{
	struct world *w = *state;
	json_t *p;

	start(w, json_pack("[o]", node("t4", "10", "shared", 2)));
	tick(w);
	answer(w);
	p = pod("small", "t4", "1");
	json_object_set_new(json_object_get(p, "metadata"), "annotations",
			    json_pack("{s:s,s:s}", "gpushare.io/admitted", "true",
				      "gpushare.io/devices", "{\"nvidia.com/gpu\":[\"GPU-0\"]}"));
	json_object_set_new(json_object_get(p, "status"), "phase", json_string("Running"));
	feed(w, CONTROLLER_WATCH_PODS, KUBE_EV_ADDED, json_incref(p));
	/* kubectl delete: a grace period, the kubelet still stopping its containers. */
	json_object_set_new(json_object_get(p, "metadata"), "deletionTimestamp",
			    json_string("2026-01-01T00:00:30Z"));
	json_object_set_new(json_object_get(p, "metadata"), "resourceVersion", json_string("60"));
	feed(w, CONTROLLER_WATCH_PODS, KUBE_EV_MODIFIED, json_incref(p));
	feed(w, CONTROLLER_WATCH_PODS, KUBE_EV_ADDED, pod("next", "t4", "1"));
	assert_int_equal(tick(w), 1);
	assert_int_equal(w->hook_calls, 1);
	assert_int_equal(w->last_holders, 1);
	answer(w);

	/* Gone: it holds nothing any more. */
	feed(w, CONTROLLER_WATCH_PODS, KUBE_EV_DELETED, p);
	feed(w, CONTROLLER_WATCH_PODS, KUBE_EV_ADDED, pod("third", "t4", "1"));
	tick(w);
	assert_int_equal(w->hook_calls, 2);
	assert_int_equal(w->last_holders, 0);
	answer(w);
}

static void relist_after_gone(void **state)
{
	struct world *w = *state;

	start(w, json_pack("[o,o]", node("a", "10", "shared", 2), node("b", "11", "shared", 2)));
	assert_int_equal(tick(w), 2);
	answer(w);
	assert_int_equal(managed(w), 2);

	/*
	 * The watch's resourceVersion expired (410 Gone): the relist shows `a`
	 * as it was written, `b` deleted meanwhile, `c` added meanwhile.
	 */
	relist(w, CONTROLLER_WATCH_NODES,
	       json_pack("[O,o]", json_object_get(w->nodes, "a"), node("c", "12", "shared", 1)));
	assert_int_equal(managed(w), 2);
	assert_int_equal(tick(w), 1);
	assert_string_equal(node_patch_gpus(w, "c"), "4");
	answer(w);

	/* `b` is gone for good: a ConfigMap edit plans `a` and `c` only. */
	feed(w, CONTROLLER_WATCH_CONFIGMAP, KUBE_EV_MODIFIED, json_loads(cm_v2, 0, NULL));
	assert_int_equal(tick(w), 2);
	assert_non_null(node_patch_gpus(w, "a"));
	assert_non_null(node_patch_gpus(w, "c"));
	assert_null(node_patch_gpus(w, "b"));
	answer(w);

	/* A ConfigMap relist that finds nothing: deleted; nodes keep what they advertise. */
	relist(w, CONTROLLER_WATCH_CONFIGMAP, json_array());
	assert_int_equal(tick(w), 0);
	effects_drop(w);
	feed(w, CONTROLLER_WATCH_CONFIGMAP, KUBE_EV_ADDED, json_loads(cm_v1, 0, NULL));
	assert_int_equal(tick(w), 2);
	assert_string_equal(node_patch_gpus(w, "a"), "8");
	answer(w);
}

static void deleted_node_is_forgotten(void **state)
{
	struct world *w = *state;
	json_t *b;

	start(w, json_pack("[o,o]", node("a", "10", "shared", 2), node("b", "11", "shared", 2)));
	assert_int_equal(tick(w), 2);
	answer(w);

	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_DELETED,
	     json_incref(json_object_get(w->nodes, "b")));
	assert_int_equal(managed(w), 1);
	feed(w, CONTROLLER_WATCH_CONFIGMAP, KUBE_EV_MODIFIED, json_loads(cm_v2, 0, NULL));
	assert_int_equal(tick(w), 1);
	assert_non_null(node_patch_gpus(w, "a"));
	answer(w);

	/* A pod bound to it: admitted with no device decision, the hook is not asked. */
	feed(w, CONTROLLER_WATCH_PODS, KUBE_EV_ADDED, pod("late", "b", "1"));
	assert_int_equal(tick(w), 1);
	assert_int_equal(w->hook_calls, 0);
	b = body_of(find(w, "PATCH", "/api/v1/namespaces/default/pods/late"));
	assert_null(json_object_get(json_object_get(json_object_get(b, "metadata"), "annotations"),
				    "gpushare.io/devices"));
	json_decref(b);
	answer(w);
}

/* A node write that fails is tried again when its timer fires, not at once. */
static void failed_node_write_retries_later(void **state)
{
	struct world *w = *state;
	struct kube_result r = {.code = 500, .body = "", .error = "the server is on fire"};

	start(w, json_pack("[o]", node("a", "10", "shared", 2)));
	assert_int_equal(tick(w), 1);
	w->e[0].done(w->e[0].arg, &r);
	effects_drop(w);
	/* What the answer asked for: a timer, no request. */
	assert_int_equal(tick(w), 1);
	assert_null(w->e[0].method);
	assert_int_equal(w->e[0].delay_ms, 5000);
	w->e[0].fire(w->e[0].arg);
	effects_drop(w);
	assert_int_equal(tick(w), 1);
	assert_string_equal(node_patch_gpus(w, "a"), "8");
	answer(w);
}

/* The node as the apiserver holds it, with annotation `key` set to `value` (NULL: removed). */
static json_t *annotated(struct world *w, const char *name, const char *key, const char *value)
{
	json_t *n = json_deep_copy(json_object_get(w->nodes, name));
	json_t *md = json_object_get(n, "metadata"), *ann = json_object_get(md, "annotations");
	char rv[16];

	if (value)
		json_object_set_new(ann, key, json_string(value));
	else
		json_object_del(ann, key);
	snprintf(rv, sizeof(rv), "%u", ++w->rv);
	json_object_set_new(md, "resourceVersion", json_string(rv));
	return n;
}

static const char *event_reason(struct world *w, char *out, size_t size)
{
	const struct controller_effect *e = find(w, "POST", "/api/v1/namespaces/default/events");
	json_t *b;

	if (!e)
		return NULL;
	b = body_of(e);
	snprintf(out, size, "%s", json_string_value(json_object_get(b, "reason")));
	json_decref(b);
	return out;
}

/*
 * An Xid on a time-sliced GPU: allocatable drops by one replica (one device
 * per GPU in the plugin's health map), capacity stays, one GPUUnhealthy
 * Event; clearing the fault changes nothing until the plugin restarts.
 */
static void gpu_fault_is_played_until_restart(void **state)
{
	struct world *w = *state;
	char reason[64];
	json_t *b;

	start(w, json_pack("[o]", node("a", "10", "shared", 2)));
	assert_int_equal(tick(w), 1);
	answer(w);

	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_MODIFIED,
	     annotated(w, "a", "gpushare.io/gpu-health", "0=xid:79"));
	assert_int_equal(tick(w), 2);
	assert_string_equal(event_reason(w, reason, sizeof(reason)), "GPUUnhealthy");
	b = body_of(find(w, "PATCH", "/api/v1/nodes/a/status"));
	assert_string_equal(gpus_in(b), "7");
	assert_null(json_object_get(json_object_get(json_object_get(b, "status"), "capacity"),
				    "nvidia.com/gpu"));
	assert_non_null(
		strstr(json_string_value(json_object_get(
			       json_object_get(json_object_get(b, "metadata"), "annotations"),
			       "gpushare.io/unhealthy-devices")),
		       "::3"));
	json_decref(b);
	answer(w);
	/* Its own write comes back: nothing more, no second Event. */
	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_MODIFIED, annotated(w, "a", "x", NULL));
	assert_int_equal(tick(w), 0);
	effects_drop(w);

	/* Cleared: the running plugin never recovers a device. */
	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_MODIFIED,
	     annotated(w, "a", "gpushare.io/gpu-health", NULL));
	assert_int_equal(tick(w), 0);
	effects_drop(w);

	/* Restarted: every device registers healthy again. */
	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_MODIFIED,
	     annotated(w, "a", "gpushare.io/device-plugin-restarted-at", "2026-12-03T10:00:00Z"));
	assert_int_equal(tick(w), 1);
	b = body_of(find(w, "PATCH", "/api/v1/nodes/a/status"));
	assert_string_equal(gpus_in(b), "8");
	assert_true(json_is_null(
		json_object_get(json_object_get(json_object_get(b, "metadata"), "annotations"),
				"gpushare.io/unhealthy-devices")));
	json_decref(b);
	answer(w);
}

/* An Xid the plugin skips (13, an application error) writes nothing. */
static void skipped_xid_changes_nothing(void **state)
{
	struct world *w = *state;

	start(w, json_pack("[o]", node("a", "10", "shared", 2)));
	assert_int_equal(tick(w), 1);
	answer(w);
	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_MODIFIED,
	     annotated(w, "a", "gpushare.io/gpu-health", "0=xid:13"));
	assert_int_equal(tick(w), 0);
	effects_drop(w);
}

/* A malformed declaration: a Warning Event naming it, the node keeps its last good state. */
static void bad_gpu_health_keeps_last_good(void **state)
{
	struct world *w = *state;
	char reason[64];
	json_t *b;

	start(w, json_pack("[o]", node("a", "10", "shared", 2)));
	assert_int_equal(tick(w), 1);
	answer(w);
	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_MODIFIED,
	     annotated(w, "a", "gpushare.io/gpu-health", "0=xid:79,7=lost"));
	assert_int_equal(tick(w), 1);
	assert_null(find(w, "PATCH", "/api/v1/nodes/a/status"));
	assert_string_equal(event_reason(w, reason, sizeof(reason)), "FailedGPUHealth");
	b = body_of(find(w, "POST", "/api/v1/namespaces/default/events"));
	assert_non_null(strstr(json_string_value(json_object_get(b, "message")),
			       "node 'a': annotation gpushare.io/gpu-health \"0=xid:79,7=lost\": "
			       "character 10: GPU 7"));
	json_decref(b);
	answer(w);
}

/* ---- MIG reconfiguration (docs/guide/faults.md) ------------------------------------------- */

/* The mixed strategy: an A100's MIG devices are resources of their own. */
static const char cm_mig[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"" CM_NAME
	"\",\"namespace\":\"" CM_NS "\",\"resourceVersion\":\"1\"},\"data\":{"
	"\"default\":\"version: v1\\nflags:\\n  migStrategy: mixed\\n\"}}";

/* One A100 80GB with layout `layout`, the walk `seconds` long, and a record when given. */
static json_t *a100(const char *name, const char *layout, const char *seconds, const char *record)
{
	json_t *n = json_pack("{s:s,s:s,s:{s:s,s:s,s:s,s:{s:s,s:s},s:{s:s,s:s,s:s}},"
			      "s:{s:{s:s},s:{s:s}}}",
			      "apiVersion", "v1", "kind", "Node", "metadata", "name", name, "uid",
			      name, "resourceVersion", "10", "labels", "kubernetes.io/hostname",
			      name, "nvidia.com/mig.config", layout, "annotations",
			      "gpushare.io/gpu-product", "NVIDIA A100-SXM4-80GB",
			      "gpushare.io/gpu-count", "1", "gpushare.io/mig-reconfigure-seconds",
			      seconds, "status", "capacity", "cpu", "8", "allocatable", "cpu", "8");

	assert_non_null(n);
	if (record)
		json_object_set_new(json_object_get(json_object_get(n, "metadata"), "annotations"),
				    "gpushare.io/mig-reconfigure", json_string(record));
	return n;
}

static void start_mig(struct world *w, json_t *nodes)
{
	relist(w, CONTROLLER_WATCH_CONFIGMAP, json_pack("[o]", json_loads(cm_mig, 0, NULL)));
	relist(w, CONTROLLER_WATCH_NODES, nodes);
	relist(w, CONTROLLER_WATCH_PODS, json_array());
}

/* The node as the apiserver holds it now, with label or annotation `key` set (NULL: removed). */
static json_t *edited(struct world *w, const char *name, const char *part, const char *key,
		      const char *value)
{
	json_t *n = json_deep_copy(json_object_get(w->nodes, name));
	json_t *m = json_object_get(json_object_get(n, "metadata"), part);
	char rv[16];

	if (value)
		json_object_set_new(m, key, json_string(value));
	else
		json_object_del(m, key);
	snprintf(rv, sizeof(rv), "%u", ++w->rv);
	json_object_set_new(json_object_get(n, "metadata"), "resourceVersion", json_string(rv));
	return n;
}

/* patch.<a>.<b>.<key> as a string, or NULL. */
static const char *at(const json_t *patch, const char *a, const char *b, const char *key)
{
	return json_string_value(
		json_object_get(json_object_get(json_object_get(patch, a), b), key));
}

static unsigned timers(const struct world *w)
{
	unsigned k = 0;

	for (size_t i = 0; i < w->n; i++)
		k += !w->e[i].method;
	return k;
}

static json_t *node_patch(struct world *w, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/api/v1/nodes/%s/status", name);
	return body_of(find(w, "PATCH", path));
}

/* A field the turn must not write. */
static const char ABSENT[] = "(absent)";

/* patch.<a>.<b>.<key> is `want`: NULL not checked, ABSENT not in the patch. */
static void expect_at(const json_t *patch, const char *a, const char *b, const char *key,
		      const char *want)
{
	if (want == ABSENT)
		assert_null(at(patch, a, b, key));
	else if (want)
		assert_string_equal(at(patch, a, b, key), want);
}

/* What one turn of a MIG walk writes to node a; each field NULL is not checked. */
struct walk_want {
	const char *state;			    /* label nvidia.com/mig.config.state */
	const char *operands;			    /* labels nvidia.com/gpu.deploy.device-plugin,
						       gpu-feature-discovery and dcgm-exporter */
	const char *gpu_capacity, *gpu_allocatable; /* nvidia.com/gpu */
	const char *mig_capacity, *mig_allocatable; /* nvidia.com/mig-1g.10gb */
	const char *record;			    /* annotation gpushare.io/mig-reconfigure */
	const char *step;			    /* the record holds "step":"<step>" */
	bool no_status;				    /* the status is not written */
	const char *event;			    /* the reason of the Event posted with it */
	enum { TIMER_ANY, TIMER_NONE, TIMER_SET } timer; /* the walk's timer after it */
	bool fire; /* fire the timer when answering (else dropped) */
};

/*
 * One turn of the controller: tick, node a's status patch as `want` says,
 * every request answered. Returns how many effects the tick made.
 */
static size_t expect_walk(struct world *w, const struct walk_want *want)
{
	static const char *const operands[] = {"nvidia.com/gpu.deploy.device-plugin",
					       "nvidia.com/gpu.deploy.gpu-feature-discovery",
					       "nvidia.com/gpu.deploy.dcgm-exporter"};
	size_t n = tick(w);
	json_t *b = node_patch(w, "a");

	expect_at(b, "metadata", "labels", "nvidia.com/mig.config.state", want->state);
	for (size_t i = 0; want->operands && i < sizeof(operands) / sizeof(operands[0]); i++)
		expect_at(b, "metadata", "labels", operands[i], want->operands);
	expect_at(b, "status", "capacity", "nvidia.com/gpu", want->gpu_capacity);
	expect_at(b, "status", "allocatable", "nvidia.com/gpu", want->gpu_allocatable);
	expect_at(b, "status", "capacity", "nvidia.com/mig-1g.10gb", want->mig_capacity);
	expect_at(b, "status", "allocatable", "nvidia.com/mig-1g.10gb", want->mig_allocatable);
	expect_at(b, "metadata", "annotations", "gpushare.io/mig-reconfigure", want->record);
	if (want->step) {
		char step[64];
		const char *rec = at(b, "metadata", "annotations", "gpushare.io/mig-reconfigure");
		snprintf(step, sizeof(step), "\"step\":\"%s\"", want->step);
		assert_non_null(rec);
		assert_non_null(strstr(rec, step));
	}
	if (want->no_status)
		assert_null(json_object_get(b, "status"));
	json_decref(b);
	if (want->event) {
		char reason[64];
		assert_non_null(event_reason(w, reason, sizeof(reason)));
		assert_string_equal(reason, want->event);
	}
	if (want->timer != TIMER_ANY)
		assert_int_equal(timers(w), want->timer == TIMER_SET);
	answer_ex(w, want->fire);
	return n;
}

#define PAUSED "paused-for-mig-change"

static void mig_walk_pending_then_success(void **state)
{
	struct world *w = *state;

	start_mig(w, json_pack("[o]", a100("a", "all-disabled", "0", NULL)));
	/* First sight: the label's layout is what the GPUs came up with. */
	assert_int_equal(
		expect_walk(w, &(struct walk_want){.gpu_allocatable = "1",
						   .record = "{\"applied\":\"all-disabled\","
							     "\"config\":\"all-disabled\"}"}),
		1);

	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_MODIFIED,
	     edited(w, "a", "labels", "nvidia.com/mig.config", "all-1g.10gb"));
	/* The plugin gone: the kubelet keeps capacity, allocatable 0. The walk
	 * moves on after 0 seconds. */
	expect_walk(w, &(struct walk_want){.state = "pending",
					   .operands = PAUSED,
					   .gpu_capacity = ABSENT,
					   .gpu_allocatable = "0",
					   .mig_capacity = ABSENT,
					   .step = "pending",
					   .timer = TIMER_SET,
					   .fire = true});

	expect_walk(w,
		    &(struct walk_want){
			    .state = "success",
			    .operands = "true",
			    .gpu_capacity = "0",
			    .mig_capacity = "7",
			    .mig_allocatable = "7",
			    .record = "{\"applied\":\"all-1g.10gb\",\"config\":\"all-1g.10gb\"}"});
	/* Done: nothing more to write. */
	assert_int_equal(tick(w), 0);
}

static void mig_invalid_layout_fails_at_once(void **state)
{
	struct world *w = *state;

	start_mig(w, json_pack("[o]", a100("a", "all-disabled", "0", NULL)));
	tick(w);
	answer(w);
	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_MODIFIED,
	     edited(w, "a", "labels", "nvidia.com/mig.config", "all-1g.5gb"));
	/* validateMigConfig fails before pending: no pause, the GPUs keep their layout. */
	expect_walk(w, &(struct walk_want){
			       .state = "failed",
			       .operands = "true",
			       .no_status = true,
			       .record = "{\"applied\":\"all-disabled\",\"config\":\"all-1g.5gb\"}",
			       .event = "FailedMIGReconfigure"});
	/* It stays failed: mig-manager waits for another value. */
	assert_int_equal(tick(w), 0);
}

/* A walk in its record since 2000: a new controller picks it up where it is. */
#define OLD_WALK                                                                                   \
	"{\"applied\":\"all-disabled\",\"config\":\"all-1g.10gb\",\"pausedAt\":"                   \
	"\"2000-01-01T00:00:00Z\",\"since\":\"2000-01-01T00:00:00Z\",\"step\":\"%s\"}"

static json_t *walking_a100(const char *step, const char *fault)
{
	char rec[256];
	json_t *n;

	snprintf(rec, sizeof(rec), OLD_WALK, step);
	n = a100("a", "all-1g.10gb", "5", rec);
	json_object_set_new(json_object_get(n, "status"), "capacity",
			    json_pack("{s:s,s:s}", "cpu", "8", "nvidia.com/gpu", "1"));
	json_object_set_new(json_object_get(n, "status"), "allocatable",
			    json_pack("{s:s,s:s}", "cpu", "8", "nvidia.com/gpu", "0"));
	json_object_set_new(json_object_get(json_object_get(n, "metadata"), "labels"),
			    "nvidia.com/mig.config.state", json_string("pending"));
	if (fault)
		json_object_set_new(json_object_get(json_object_get(n, "metadata"), "annotations"),
				    "gpushare.io/mig-fault", json_string(fault));
	return n;
}

static void mig_restart_mid_walk_resumes(void **state)
{
	struct world *w = *state;

	start_mig(w, json_pack("[o]", walking_a100("pending", NULL)));
	expect_walk(w,
		    &(struct walk_want){
			    .state = "success",
			    .mig_allocatable = "7",
			    .record = "{\"applied\":\"all-1g.10gb\",\"config\":\"all-1g.10gb\"}"});
}

static void mig_stall_stays_until_cleared(void **state)
{
	struct world *w = *state;

	start_mig(w, json_pack("[o]", walking_a100("stalled", "stall")));
	/* The #485 wedge, past endpointStopGracePeriod: pending, paused, capacity 0 too. */
	expect_walk(w, &(struct walk_want){.state = ABSENT,
					   .operands = PAUSED,
					   .gpu_capacity = "0",
					   .mig_capacity = ABSENT,
					   .timer = TIMER_NONE});
	assert_int_equal(tick(w), 0);

	/* The fault removed: mig-manager runs again and the walk completes. */
	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_MODIFIED,
	     edited(w, "a", "annotations", "gpushare.io/mig-fault", NULL));
	expect_walk(w, &(struct walk_want){.step = "pending", .timer = TIMER_SET});
	/* The walk's 5 seconds, as a restarted controller would find them passed. */
	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_MODIFIED,
	     edited(w, "a", "annotations", "gpushare.io/mig-reconfigure",
		    "{\"applied\":\"all-disabled\",\"config\":\"all-1g.10gb\",\"pausedAt\":"
		    "\"2000-01-01T00:00:00Z\",\"since\":\"2000-01-01T00:00:00Z\",\"step\":"
		    "\"pending\"}"));
	expect_walk(w, &(struct walk_want){.state = "success", .mig_allocatable = "7"});
}

/*
 * A layout the node's config then refuses (migStrategy single on a balanced
 * A100): mig-manager still ends its walk (success, operands back), then the
 * device plugin crash-loops on what it finds; the node keeps its last good
 * advertisement, never stuck pending.
 */
static void mig_walk_ends_when_the_plugin_then_fails(void **state)
{
	struct world *w = *state;

	relist(w, CONTROLLER_WATCH_CONFIGMAP,
	       json_pack("[o]",
			 json_loads("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
				    "\"metadata\":{\"name\":\"" CM_NAME "\",\"namespace\":\"" CM_NS
				    "\",\"resourceVersion\":\"1\"},\"data\":{"
				    "\"default\":\"version: v1\\nflags:\\n  "
				    "migStrategy: single\\n\"}}",
				    0, NULL)));
	relist(w, CONTROLLER_WATCH_NODES, json_pack("[o]", a100("a", "all-1g.10gb", "0", NULL)));
	relist(w, CONTROLLER_WATCH_PODS, json_array());
	expect_walk(w, &(struct walk_want){.gpu_allocatable = "7"});

	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_MODIFIED,
	     edited(w, "a", "labels", "nvidia.com/mig.config", "all-balanced"));
	expect_walk(w, &(struct walk_want){.state = "pending", .timer = TIMER_SET, .fire = true});

	/* The plugin refuses mixed profiles under single: the advertisement is kept. */
	expect_walk(w,
		    &(struct walk_want){
			    .state = "success",
			    .operands = "true",
			    .record = "{\"applied\":\"all-balanced\",\"config\":\"all-balanced\"}",
			    .no_status = true});
	assert_int_equal(tick(w), 0);
}

static void mig_fail_and_gpu_pods_keep_the_old_layout(void **state)
{
	struct world *w = *state;
	json_t *p;

	/* The plugin back on the old layout. */
	start_mig(w, json_pack("[o]", walking_a100("pending", "fail")));
	expect_walk(w, &(struct walk_want){.state = "failed",
					   .operands = "true",
					   .gpu_allocatable = "1",
					   .mig_capacity = ABSENT});

	/* A pod holding the GPU: the apply fails the same way (NVML In use). */
	teardown(state);
	setup(state);
	w = *state;
	p = pod("train", "a", "1");
	json_object_set_new(
		json_object_get(json_object_get(p, "metadata"), "annotations")
			? json_object_get(json_object_get(p, "metadata"), "annotations")
			: (json_object_set_new(json_object_get(p, "metadata"), "annotations",
					       json_object()),
			   json_object_get(json_object_get(p, "metadata"), "annotations")),
		"gpushare.io/admitted", json_string("true"));
	json_object_set_new(json_object_get(p, "status"), "phase", json_string("Running"));
	relist(w, CONTROLLER_WATCH_CONFIGMAP, json_pack("[o]", json_loads(cm_mig, 0, NULL)));
	relist(w, CONTROLLER_WATCH_NODES, json_pack("[o]", walking_a100("pending", NULL)));
	relist(w, CONTROLLER_WATCH_PODS, json_pack("[o]", p));
	expect_walk(w, &(struct walk_want){.state = "failed", .gpu_allocatable = "1"});
}

/* ---- a kubelet restart or node reboot (engine/kubeletrestart.h) ---------------------------- */

/* The kubelet's start `ago` seconds back, as gpushare fault kubelet declares it. */
static const char *started(const char *kind, long ago, int seconds)
{
	static char out[64];
	char ts[32];
	time_t t = time(NULL) - ago;
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(out, sizeof(out), "%s@%s,%d", kind, ts, seconds);
	return out;
}

static const struct controller_effect *find_ctype(struct world *w, const char *path,
						  const char *ctype)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->e[i].method && !strcmp(w->e[i].path, path) && w->e[i].ctype &&
		    !strcmp(w->e[i].ctype, ctype))
			return &w->e[i];
	return NULL;
}

/* An admitted GPU pod in phase `phase`; `init` adds a plain init container asking a GPU. */
static json_t *admitted_pod(const char *name, const char *node_name, const char *phase, bool init)
{
	json_t *p = pod(name, node_name, "1");

	json_object_set_new(json_object_get(p, "metadata"), "annotations",
			    json_pack("{s:s,s:s}", "gpushare.io/admitted", "true",
				      "gpushare.io/devices",
				      "{\"nvidia.com/gpu\":[\"GPU-0::0\"]}"));
	json_object_set_new(json_object_get(p, "status"), "phase", json_string(phase));
	if (init)
		json_object_set_new(json_object_get(p, "spec"), "initContainers",
				    json_pack("[{s:s,s:{s:{s:s}}}]", "name", "prep", "resources",
					      "limits", "nvidia.com/gpu", "1"));
	return p;
}

static const char *status_field(const json_t *b, const char *key)
{
	return json_string_value(json_object_get(json_object_get(b, "status"), key));
}

#define NO_HEALTHY                                                                                 \
	"Allocate failed due to no healthy devices present; cannot allocate unhealthy devices "    \
	"nvidia.com/gpu, which is unexpected"

/*
 * A kubelet restart: the node reads 0/0 and NotReady, its Lease is held as
 * the kubelet's; a running pod keeps its devices, one whose GPU init
 * container exited fails (kubernetes#124345), and a pod bound in the window
 * fails in the kubelet's words without reaching the admission hook.
 */
static void kubelet_restart_window(void **state)
{
	struct world *w = *state;
	json_t *b;
	const json_t *c;

	start(w, json_pack("[o]", node("t4", "10", "shared", 2)));
	tick(w);
	answer(w);
	feed(w, CONTROLLER_WATCH_PODS, KUBE_EV_ADDED,
	     admitted_pod("train", "t4", "Running", false));
	feed(w, CONTROLLER_WATCH_PODS, KUBE_EV_ADDED, admitted_pod("prep", "t4", "Running", true));
	assert_int_equal(tick(w), 0);
	effects_drop(w);

	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_MODIFIED,
	     annotated(w, "t4", "gpushare.io/kubelet-restart", started("restart", 1, 60)));
	tick(w);
	b = body_of(find_ctype(w, "/api/v1/nodes/t4/status", "application/merge-patch+json"));
	assert_string_equal(gpus_in(b), "0");
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_object_get(b, "status"), "capacity"),
				    "nvidia.com/gpu")),
			    "0");
	json_decref(b);
	b = body_of(
		find_ctype(w, "/api/v1/nodes/t4/status", "application/strategic-merge-patch+json"));
	c = json_array_get(json_object_get(json_object_get(b, "status"), "conditions"), 0);
	assert_string_equal(json_string_value(json_object_get(c, "status")), "False");
	assert_string_equal(json_string_value(json_object_get(c, "reason")), "KubeletNotReady");
	json_decref(b);
	b = body_of(find(w, "PATCH",
			 "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/t4"));
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(b, "spec"), "holderIdentity")),
		"t4");
	json_decref(b);
	/* Re-admitted at start: the running pod keeps its GPU, the one with the init container
	 * fails. */
	assert_null(find(w, "PATCH", "/api/v1/namespaces/default/pods/train/status"));
	b = body_of(find(w, "PATCH", "/api/v1/namespaces/default/pods/prep/status"));
	assert_string_equal(status_field(b, "phase"), "Failed");
	assert_string_equal(status_field(b, "reason"), "UnexpectedAdmissionError");
	assert_string_equal(status_field(b, "message"), "Pod was rejected: " NO_HEALTHY);
	json_decref(b);
	answer(w);

	/* A pod bound in the window: the device manager fails it, the hook is not asked. */
	feed(w, CONTROLLER_WATCH_PODS, KUBE_EV_ADDED, pod("late", "t4", "1"));
	tick(w);
	assert_int_equal(w->hook_calls, 0);
	b = body_of(find(w, "PATCH", "/api/v1/namespaces/default/pods/late/status"));
	assert_string_equal(status_field(b, "message"), "Pod was rejected: " NO_HEALTHY);
	json_decref(b);
	b = body_of(find(w, "POST", "/api/v1/namespaces/default/events"));
	assert_string_equal(json_string_value(json_object_get(b, "reason")),
			    "UnexpectedAdmissionError");
	assert_string_equal(json_string_value(json_object_get(b, "message")), NO_HEALTHY);
	json_decref(b);
	answer(w);
}

/*
 * A node reboot: nothing runs any more, so every admitted GPU pod fails its
 * re-admission (kubernetes#125579); a pod without GPUs stays. Once the plugin
 * registered, the node is Ready again, its Lease let lapse for kwok to take
 * back, and its GPUs come back.
 */
static void kubelet_reboot_then_back(void **state)
{
	struct world *w = *state;
	json_t *n = node("t4", "10", "shared", 2), *web = pod("web", "t4", "0"), *b;
	const json_t *c;

	json_object_set_new(json_object_get(json_object_get(n, "metadata"), "annotations"),
			    "gpushare.io/kubelet-restart", json_string(started("reboot", 2, 60)));
	/* It advertised its 8 before: the device manager's checkpoint registered them. */
	json_object_set_new(json_object_get(json_object_get(n, "status"), "capacity"),
			    "nvidia.com/gpu", json_string("8"));
	json_object_del(
		json_object_get(json_object_get(json_object_get(web, "spec"), "containers"), 0),
		"resources");
	json_object_set_new(json_object_get(web, "metadata"), "annotations",
			    json_pack("{s:s}", "gpushare.io/admitted", "true"));
	json_object_set_new(json_object_get(web, "status"), "phase", json_string("Running"));
	relist(w, CONTROLLER_WATCH_CONFIGMAP, json_pack("[o]", json_loads(cm_v1, 0, NULL)));
	relist(w, CONTROLLER_WATCH_NODES, json_pack("[o]", n));
	relist(w, CONTROLLER_WATCH_PODS,
	       json_pack("[o,o]", admitted_pod("train", "t4", "Running", false), web));
	tick(w);
	b = body_of(find(w, "PATCH", "/api/v1/namespaces/default/pods/train/status"));
	assert_string_equal(status_field(b, "phase"), "Failed");
	assert_string_equal(status_field(b, "message"), "Pod was rejected: " NO_HEALTHY);
	json_decref(b);
	assert_null(find(w, "PATCH", "/api/v1/namespaces/default/pods/web/status"));
	answer(w);

	/* The window over, the node still NotReady: Ready again, the Lease released, GPUs back. */
	teardown(state);
	setup(state);
	w = *state;
	n = node("t4", "10", "shared", 2);
	json_object_set_new(json_object_get(json_object_get(n, "metadata"), "annotations"),
			    "gpushare.io/kubelet-restart", json_string(started("reboot", 100, 60)));
	json_object_set_new(json_object_get(n, "status"), "conditions",
			    json_pack("[{s:s,s:s,s:s,s:s}]", "type", "Ready", "status", "False",
				      "reason", "KubeletNotReady", "message",
				      "container runtime status check may not have completed yet"));
	start(w, json_pack("[o]", n));
	tick(w);
	b = body_of(find_ctype(w, "/api/v1/nodes/t4/status", "application/merge-patch+json"));
	assert_string_equal(gpus_in(b), "8");
	json_decref(b);
	b = body_of(
		find_ctype(w, "/api/v1/nodes/t4/status", "application/strategic-merge-patch+json"));
	c = json_array_get(json_object_get(json_object_get(b, "status"), "conditions"), 0);
	assert_string_equal(json_string_value(json_object_get(c, "status")), "True");
	json_decref(b);
	b = body_of(find(w, "PATCH",
			 "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/t4"));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(b, "spec"),
							    "leaseDurationSeconds")),
			 1);
	json_decref(b);
	answer(w);
}

/* ---- Leases that stop (docs/guide/controller.md "Leases that stop") ---------------------- */

/* The healing's clock, driven by the test. */
static long long fake_ms;
static long long fake_clock(void)
{
	return fake_ms;
}

static int setup_heal(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct controller_opts o = {.configmap_namespace = CM_NS,
				    .configmap_name = CM_NAME,
				    .admit = hook,
				    .admit_arg = w,
				    .heal_leases = true,
				    .clock_ms = fake_clock};
	struct gs_error err;

	fake_ms = 1000000;
	w->nodes = json_object();
	w->leases = json_object();
	w->rv = 100;
	assert_int_equal(controller_new(&w->ctl, NULL, &o, &err), 0);
	*state = w;
	return 0;
}

/* kwok's Lease of `name`, renewed `ago_ms` before now (the wall clock), by `holder`. */
static json_t *lease(struct world *w, const char *name, const char *holder, int duration,
		     long ago_ms)
{
	char ts[40], sec[24], rv[16];
	struct timespec now;
	long long us;
	time_t t;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &now);
	us = (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000 - ago_ms * 1000LL;
	t = (time_t)(us / 1000000);
	gmtime_r(&t, &tm);
	strftime(sec, sizeof(sec), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts, sizeof(ts), "%s.%06lldZ", sec, us % 1000000);
	snprintf(rv, sizeof(rv), "%u", ++w->rv);
	return json_pack("{s:s,s:s,s:{s:s,s:s,s:s},s:{s:s,s:i,s:s}}", "apiVersion",
			 "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name", name,
			 "namespace", "kube-node-lease", "resourceVersion", rv, "spec",
			 "holderIdentity", holder, "leaseDurationSeconds", duration, "renewTime",
			 ts);
}

static unsigned long metric(struct world *w, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	char key[96];
	const char *p;
	unsigned long v = 0;

	controller_metrics(w->ctl, &sb);
	snprintf(key, sizeof(key), "\n%s ", name);
	p = strstr(sb.buf, key);
	assert_non_null(p);
	v = strtoul(p + strlen(key), NULL, 10);
	strbuf_release(&sb);
	return v;
}

#define LEASE_T4 LEASES "t4"
#define LEASE_LIST "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"

/* The managed node t4, advertised, its Lease listed and its watch open, at fake_ms. */
static void heal_start_world(struct world *w, const char *holder)
{
	const struct kube_watch_ops *lops = controller_watch_ops(CONTROLLER_WATCH_LEASES);

	start(w, json_pack("[o]", node("t4", "10", "shared", 2)));
	relist(w, CONTROLLER_WATCH_LEASES, json_pack("[o]", lease(w, "t4", holder, 40, 0)));
	lops->state(w->ctl, true);
	tick(w);
	answer(w);
}

/* Advance the clock to `at` ms after the start and tick; the effects stay in w. */
static size_t tick_at(struct world *w, long long at)
{
	fake_ms = 1000000 + at;
	return tick(w);
}

/*
 * Due at `at`: the Leases are read again first (a LIST, answered), and the
 * next look, a second later, acts; its effects stay in w.
 */
static void verified_at(struct world *w, long long at)
{
	tick_at(w, at);
	assert_non_null(find(w, "GET", LEASE_LIST));
	assert_null(find(w, "PATCH", LEASE_T4));
	answer(w);
	tick_at(w, at + 1000);
}

/*
 * A live kwok renews every 10 s: never written. Once nothing renewed the
 * Lease for 25 s while the apiserver answers, gpushare renews it as the
 * kubelet would: renewTime now, conditional on the resourceVersion seen, its
 * holder kept, the Node as owner, a 1 s duration (any kwok may take it
 * over), with a Warning Event; then every quarter of kwok's 40 s, its own
 * writes read back taken for no one else's.
 */
static void lease_stall_is_healed(void **state)
{
	struct world *w = *state;
	json_t *b;
	const json_t *owner;
	long long us, now_us;
	struct timespec ts;
	char ev[64];

	heal_start_world(w, "kwok-1");
	/* kwok renews at 10 s and at 20 s: nothing written for 25 s after that. */
	for (long at = 1000; at <= 44000; at += 1000) {
		fake_ms = 1000000 + at;
		if (at == 10000 || at == 20000)
			feed(w, CONTROLLER_WATCH_LEASES, KUBE_EV_MODIFIED,
			     lease(w, "t4", "kwok-1", 40, 0));
		tick_at(w, at);
		assert_null(find(w, "PATCH", LEASE_T4));
		answer(w);
	}
	assert_int_equal(metric(w, "gpushare_lease_stalls_total"), 0);
	verified_at(w, 45000);
	b = body_of(find(w, "PATCH", LEASE_T4));
	assert_string_equal(find(w, "PATCH", LEASE_T4)->ctype, "application/merge-patch+json");
	assert_null(json_object_get(json_object_get(b, "spec"), "holderIdentity"));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(b, "spec"),
							    "leaseDurationSeconds")),
			 1);
	assert_string_equal(json_string_value(json_object_get(json_object_get(b, "metadata"),
							      "resourceVersion")),
			    json_string_value(json_object_get(
				    json_object_get(json_object_get(w->leases, "t4"), "metadata"),
				    "resourceVersion")));
	owner = json_array_get(json_object_get(json_object_get(b, "metadata"), "ownerReferences"),
			       0);
	assert_string_equal(json_string_value(json_object_get(owner, "kind")), "Node");
	assert_string_equal(json_string_value(json_object_get(owner, "uid")), "t4");
	/* renewTime: now by the wall clock, in microseconds. */
	us = heartbeat_parse_micro(
		json_string_value(json_object_get(json_object_get(b, "spec"), "renewTime")));
	clock_gettime(CLOCK_REALTIME, &ts);
	now_us = (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
	assert_true(us > now_us - 5000000 && us <= now_us);
	json_decref(b);
	assert_string_equal(event_reason(w, ev, sizeof(ev)), "LeaseNotRenewed");
	answer(w);
	assert_int_equal(metric(w, "gpushare_lease_stalls_total"), 1);
	assert_int_equal(metric(w, "gpushare_leases_healing"), 1);
	/* Its own renewal, read back by the watch: no one else's. */
	feed(w, CONTROLLER_WATCH_LEASES, KUBE_EV_MODIFIED,
	     json_deep_copy(json_object_get(w->leases, "t4")));
	/* Every 10-10.4 s, not sooner. */
	assert_int_equal(tick_at(w, 55900), 0);
	effects_drop(w);
	tick_at(w, 57000);
	assert_non_null(find(w, "PATCH", LEASE_T4));
	answer(w);
	assert_int_equal(metric(w, "gpushare_lease_renewals_total"), 2);
	assert_int_equal(metric(w, "gpushare_leases_healing"), 1);
	assert_int_equal(metric(w, "gpushare_lease_handbacks_total"), 0);
}

/* Off (the default of the library, --heal-leases=false): the same stall is left alone. */
static void lease_stall_left_alone_when_off(void **state)
{
	struct world *w = *state;

	start(w, json_pack("[o]", node("t4", "10", "shared", 2)));
	tick(w);
	answer(w);
	/* No Lease watch: its events change nothing, and nothing is ever written. */
	feed(w, CONTROLLER_WATCH_LEASES, KUBE_EV_ADDED, lease(w, "t4", "kwok-1", 40, 600000));
	controller_watch_ops(CONTROLLER_WATCH_LEASES)->state(w->ctl, true);
	assert_int_equal(tick(w), 0);
	effects_drop(w);
	assert_int_equal(metric(w, "gpushare_lease_stalls_total"), 0);
}

/*
 * An apiserver outage: nothing is written while the Lease watch fails, and
 * the 25 s count again from its return, so a kwok that renews once the
 * apiserver is back is never written over. A node kube-controller-manager
 * marked lost meanwhile gets its conditions posted as the kubelet does.
 */
static void lease_heal_waits_for_the_apiserver(void **state)
{
	struct world *w = *state;
	const struct kube_watch_ops *lops = controller_watch_ops(CONTROLLER_WATCH_LEASES);
	json_t *n, *b;
	const json_t *c;

	heal_start_world(w, "kwok-1");
	tick_at(w, 5000);
	answer(w);
	lops->state(w->ctl, false);
	w->down = true;
	/* Asked (a LIST), unanswered: nothing written. */
	tick_at(w, 70000);
	assert_non_null(find(w, "GET", LEASE_LIST));
	assert_null(find(w, "PATCH", LEASE_T4));
	answer(w);
	/* Back at 70 s: kube-controller-manager marks t4 Unknown at once. */
	w->down = false;
	lops->state(w->ctl, true);
	n = json_deep_copy(json_object_get(w->nodes, "t4"));
	json_object_set_new(json_object_get(n, "status"), "conditions",
			    json_pack("[{s:s,s:s,s:s,s:s}]", "type", "Ready", "status", "Unknown",
				      "reason", "NodeStatusUnknown", "message",
				      "Kubelet stopped posting node status."));
	json_object_set_new(json_object_get(n, "metadata"), "resourceVersion", json_string("300"));
	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_MODIFIED, n);
	tick_at(w, 94000);
	assert_null(find(w, "PATCH", LEASE_T4));
	assert_null(
		find_ctype(w, "/api/v1/nodes/t4/status", "application/strategic-merge-patch+json"));
	answer(w);
	verified_at(w, 95000);
	assert_non_null(find(w, "PATCH", LEASE_T4));
	b = body_of(
		find_ctype(w, "/api/v1/nodes/t4/status", "application/strategic-merge-patch+json"));
	c = json_object_get(json_object_get(b, "status"), "conditions");
	assert_int_equal(json_array_size(c), 4);
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 3), "type")),
			    "Ready");
	assert_string_equal(json_string_value(json_object_get(json_array_get(c, 3), "status")),
			    "True");
	json_decref(b);
	answer(w);
	assert_int_equal(metric(w, "gpushare_lease_ready_writes_total"), 1);
}

/*
 * Handed back: the stalled kwok renews again (its holder, and the 1 s
 * duration it does not reset): gpushare stops and gives it back its 40 s
 * in one conditional write. A new kwok takes the Lease with its own
 * duration: nothing to give back.
 */
static void lease_handed_back(void **state)
{
	struct world *w = *state;
	json_t *b;

	heal_start_world(w, "kwok-1");
	verified_at(w, 25000);
	assert_non_null(find(w, "PATCH", LEASE_T4));
	answer(w);
	assert_int_equal(metric(w, "gpushare_leases_healing"), 1);
	feed(w, CONTROLLER_WATCH_LEASES, KUBE_EV_MODIFIED, lease(w, "t4", "kwok-1", 1, 0));
	assert_int_equal(metric(w, "gpushare_leases_healing"), 0);
	assert_int_equal(metric(w, "gpushare_lease_handbacks_total"), 1);
	tick_at(w, 27000);
	b = body_of(find(w, "PATCH", LEASE_T4));
	assert_null(json_object_get(json_object_get(b, "spec"), "renewTime"));
	assert_int_equal(json_integer_value(json_object_get(json_object_get(b, "spec"),
							    "leaseDurationSeconds")),
			 40);
	json_decref(b);
	answer(w);
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(json_object_get(w->leases, "t4"), "spec"),
				 "leaseDurationSeconds")),
			 40);
	/* kwok renews on its own from here: nothing more is written. */
	for (long at = 28000; at <= 50000; at += 1000) {
		fake_ms = 1000000 + at;
		if (at % 10000 == 0)
			feed(w, CONTROLLER_WATCH_LEASES, KUBE_EV_MODIFIED,
			     lease(w, "t4", "kwok-1", 40, 0));
		assert_int_equal(tick_at(w, at), 0);
		effects_drop(w);
	}
	/* Stalled again at 50 s, healed at 76 s; a new kwok takes it over. */
	verified_at(w, 75000);
	assert_non_null(find(w, "PATCH", LEASE_T4));
	answer(w);
	feed(w, CONTROLLER_WATCH_LEASES, KUBE_EV_MODIFIED, lease(w, "t4", "kwok-2", 40, 0));
	assert_int_equal(metric(w, "gpushare_lease_handbacks_total"), 2);
	assert_int_equal(tick_at(w, 81000), 0);
	effects_drop(w);
}

/*
 * Never written over: kwok renewed between gpushare's read and its write,
 * so the write's resourceVersion is stale and the apiserver refuses it
 * (409); it is not tried again, and kwok's renewal, once seen, ends the
 * healing.
 */
static void lease_conflict_is_not_overwritten(void **state)
{
	struct world *w = *state;
	json_t *l;

	heal_start_world(w, "kwok-1");
	verified_at(w, 25000);
	assert_non_null(find(w, "PATCH", LEASE_T4));
	/* kwok's write reaches the apiserver first. */
	l = lease(w, "t4", "kwok-1", 40, 0);
	json_object_set(w->leases, "t4", l);
	answer(w);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(json_object_get(w->leases, "t4"), "spec"),
				    "holderIdentity")),
			    "kwok-1");
	assert_int_equal(json_integer_value(json_object_get(
				 json_object_get(json_object_get(w->leases, "t4"), "spec"),
				 "leaseDurationSeconds")),
			 40);
	assert_int_equal(tick_at(w, 27000), 0);
	effects_drop(w);
	feed(w, CONTROLLER_WATCH_LEASES, KUBE_EV_MODIFIED, l);
	assert_int_equal(metric(w, "gpushare_leases_healing"), 0);
	assert_int_equal(tick_at(w, 37000), 0);
	effects_drop(w);
}

/* A node in a kubelet restart's window: its Lease is the window's (kubelet_writes). */
static void lease_of_kubelet_window_left_to_it(void **state)
{
	struct world *w = *state;

	heal_start_world(w, "kwok-1");
	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_MODIFIED,
	     annotated(w, "t4", "gpushare.io/kubelet-restart", started("restart", 1, 600)));
	tick_at(w, 1000);
	answer(w);
	tick_at(w, 30000);
	/* The window's own Lease write holds it under the node's name, not a healing one. */
	for (size_t i = 0; i < w->n; i++)
		if (w->e[i].method && !strcmp(w->e[i].path, LEASE_T4)) {
			json_t *b = body_of(&w->e[i]);
			assert_string_equal(json_string_value(json_object_get(
						    json_object_get(b, "spec"), "holderIdentity")),
					    "t4");
			json_decref(b);
		}
	answer(w);
	assert_int_equal(metric(w, "gpushare_lease_stalls_total"), 0);
}

/*
 * The watch missed kwok's renewals (an apiserver whose old streams stay
 * open while it goes away): the LIST read before any renewal shows the
 * Lease renewed, and nothing is written.
 */
static void lease_list_shows_what_the_watch_missed(void **state)
{
	struct world *w = *state;

	heal_start_world(w, "kwok-1");
	/* kwok renews at 20 s; only the apiserver knows. */
	tick_at(w, 20000);
	answer(w);
	json_object_set_new(w->leases, "t4", lease(w, "t4", "kwok-1", 40, 0));
	tick_at(w, 25000);
	assert_non_null(find(w, "GET", LEASE_LIST));
	answer(w);
	for (long at = 26000; at <= 44000; at += 1000) {
		tick_at(w, at);
		assert_null(find(w, "PATCH", LEASE_T4));
		answer(w);
	}
	assert_int_equal(metric(w, "gpushare_lease_stalls_total"), 0);
}

/*
 * The apiserver goes away with the Lease watch still open: the LIST gets
 * no answer, so nothing is renewed, and the 25 s count again from its
 * first answer; a Lease already renewed by gpushare waits for it too.
 */
static void lease_unanswered_list_holds_the_healing(void **state)
{
	struct world *w = *state;

	heal_start_world(w, "kwok-1");
	w->down = true;
	tick_at(w, 25000);
	assert_non_null(find(w, "GET", LEASE_LIST));
	answer(w);
	for (long at = 26000; at <= 60000; at += 1000) {
		tick_at(w, at);
		assert_null(find(w, "PATCH", LEASE_T4));
		answer(w);
	}
	/* Back: the LIST answered at 62 s; due 25 s after that. */
	w->down = false;
	tick_at(w, 62000);
	answer(w);
	tick_at(w, 86000);
	assert_null(find(w, "PATCH", LEASE_T4));
	answer(w);
	verified_at(w, 87000);
	assert_non_null(find(w, "PATCH", LEASE_T4));
	answer(w);
	/* Gone again while healing: no renewal until it answers. */
	w->down = true;
	tick_at(w, 99000);
	assert_non_null(find(w, "PATCH", LEASE_T4));
	answer(w);
	tick_at(w, 111000);
	assert_null(find(w, "PATCH", LEASE_T4));
	answer(w);
	w->down = false;
	tick_at(w, 114000);
	answer(w);
	tick_at(w, 115000);
	assert_non_null(find(w, "PATCH", LEASE_T4));
	answer(w);
	assert_int_equal(metric(w, "gpushare_lease_stalls_total"), 1);
}

/*
 * A holder that renews any of its Leases lives: kwok late on one node
 * (overloaded, creating 500 nodes on two cores) is not stalled, and its
 * Lease is left to it; once it renews none for 25 s, all are renewed.
 */
static void lease_late_holder_is_not_stalled(void **state)
{
	struct world *w = *state;
	const struct kube_watch_ops *lops = controller_watch_ops(CONTROLLER_WATCH_LEASES);

	start(w, json_pack("[o,o]", node("t4", "10", "shared", 2), node("t5", "11", "shared", 2)));
	relist(w, CONTROLLER_WATCH_LEASES,
	       json_pack("[o,o]", lease(w, "t4", "kwok-1", 40, 0),
			 lease(w, "t5", "kwok-1", 40, 0)));
	lops->state(w->ctl, true);
	tick(w);
	answer(w);
	/* kwok renews t5 every 10 s up to 50 s, t4 never. */
	for (long at = 1000; at <= 74000; at += 1000) {
		fake_ms = 1000000 + at;
		if (at % 10000 == 0 && at <= 50000)
			feed(w, CONTROLLER_WATCH_LEASES, KUBE_EV_MODIFIED,
			     lease(w, "t5", "kwok-1", 40, 0));
		tick(w);
		assert_null(find(w, "PATCH", LEASE_T4));
		assert_null(find(w, "PATCH", LEASES "t5"));
		answer(w);
	}
	assert_int_equal(metric(w, "gpushare_lease_stalls_total"), 0);
	/* Nothing from kwok since 50 s: both at 75 s. */
	verified_at(w, 75000);
	assert_non_null(find(w, "PATCH", LEASE_T4));
	assert_non_null(find(w, "PATCH", LEASES "t5"));
	answer(w);
	assert_int_equal(metric(w, "gpushare_lease_stalls_total"), 2);
}

/*
 * A holder creating Leases lives too: kwok making 500 nodes' Leases on two
 * loaded cores renews the first ones late, while it creates the others.
 */
static void lease_holder_creating_leases_lives(void **state)
{
	struct world *w = *state;
	const struct kube_watch_ops *lops = controller_watch_ops(CONTROLLER_WATCH_LEASES);
	char name[32];

	start(w, json_pack("[o]", node("t4", "10", "shared", 2)));
	relist(w, CONTROLLER_WATCH_LEASES, json_pack("[o]", lease(w, "t4", "kwok-1", 40, 0)));
	lops->state(w->ctl, true);
	tick(w);
	answer(w);
	/* t4 never renewed; a new node's Lease created every 5 s up to 40 s. */
	for (long at = 1000; at <= 64000; at += 1000) {
		fake_ms = 1000000 + at;
		if (at % 5000 == 0 && at <= 40000) {
			snprintf(name, sizeof(name), "new-%ld", at / 5000);
			feed(w, CONTROLLER_WATCH_LEASES, KUBE_EV_ADDED,
			     lease(w, name, "kwok-1", 40, 0));
		}
		tick(w);
		assert_null(find(w, "PATCH", LEASE_T4));
		answer(w);
	}
	verified_at(w, 65000);
	assert_non_null(find(w, "PATCH", LEASE_T4));
	answer(w);
}

/* ---- hooks that do I/O on the loop: the controller waits for them, never blocking ----- */

/* Reads the cluster first: LATER the first time, then admits. */
static int reading_hook(void *arg, const struct controller_admission *in,
			struct controller_verdict *out, struct gs_error *err)
{
	struct world *w = arg;

	(void)err;
	w->hook_calls++;
	if (!w->ready) {
		w->ready = in->ready;
		w->ready_arg = in->ready_arg;
		return CONTROLLER_ADMIT_LATER;
	}
	out->admit = true;
	out->annotations = json_pack("{s:s}", "gpushare.io/devices", "GPU-1");
	return 0;
}

static void publish_hook(void *arg, struct sync_report *rep, void (*done)(void *done_arg),
			 void *done_arg)
{
	struct world *w = arg;

	w->publish_calls++;
	w->rep = rep;
	w->published = done;
	w->published_arg = done_arg;
}

static int setup_io(void **state)
{
	struct world *w = calloc(1, sizeof(*w));
	struct controller_opts o = {.configmap_namespace = CM_NS,
				    .configmap_name = CM_NAME,
				    .admit = reading_hook,
				    .admit_arg = w,
				    .publish = publish_hook,
				    .publish_arg = w};
	struct gs_error err;

	w->nodes = json_object();
	w->rv = 100;
	assert_int_equal(controller_new(&w->ctl, NULL, &o, &err), 0);
	*state = w;
	return 0;
}

static json_t *slice(const char *name, const char *node_name, const char *rv)
{
	return json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:s}}", "apiVersion", "resource.k8s.io/v1",
			 "kind", "ResourceSlice", "metadata", "name", name, "resourceVersion", rv,
			 "spec", "nodeName", node_name, "driver", "gpu.nvidia.com");
}

/*
 * A plan's DRA half is published on the loop: its nodes are written once
 * the hook is done, the next plan waits for it, and the slice events seen
 * meanwhile are judged with its writes known, so our own create is no
 * one else's.
 */
static void publish_is_waited_for(void **state)
{
	struct world *w = *state;
	struct sync_op *op;

	start(w, json_pack("[o]", node("a", "10", "shared", 2)));
	relist(w, CONTROLLER_WATCH_SLICES, json_array());
	assert_int_equal(tick(w), 0);
	effects_drop(w);
	assert_int_equal(w->publish_calls, 1);
	assert_non_null(w->rep);
	/* Nothing more is planned meanwhile. */
	feed(w, CONTROLLER_WATCH_NODES, KUBE_EV_ADDED, node("b", "11", "shared", 1));
	assert_int_equal(tick(w), 0);
	effects_drop(w);
	assert_int_equal(w->publish_calls, 1);

	/* The hook created a slice of a; its event comes before the answer is known. */
	w->rep->ops = realloc(w->rep->ops, (w->rep->n_ops + 1) * sizeof(*w->rep->ops));
	op = &w->rep->ops[w->rep->n_ops++];
	memset(op, 0, sizeof(*op));
	op->action = SYNC_OP_CREATE;
	op->node = strdup("a");
	op->name = strdup("a-gpu-x");
	op->result_rv = strdup("77");
	op->done = true;
	feed(w, CONTROLLER_WATCH_SLICES, KUBE_EV_ADDED, slice("a-gpu-x", "a", "77"));
	/* And someone else changed another of its slices. */
	feed(w, CONTROLLER_WATCH_SLICES, KUBE_EV_MODIFIED, slice("a-gpu-y", "a", "78"));
	assert_int_equal(metric(w, "gpushare_slice_resyncs_total"), 0);

	w->published(w->published_arg);
	assert_int_equal(metric(w, "gpushare_slice_resyncs_total"), 1);
	assert_int_equal(tick(w), 1);
	assert_string_equal(node_patch_gpus(w, "a"), "8");
	answer(w);
	/* The next plan (b, and a again for the foreign change) now. */
	assert_int_equal(tick(w), 0);
	effects_drop(w);
	assert_int_equal(w->publish_calls, 2);
	w->published(w->published_arg);
	assert_int_equal(tick(w), 1);
	assert_string_equal(node_patch_gpus(w, "b"), "4");
	answer(w);
}

/* An admission hook that reads the cluster first: the pod waits, then is decided at once. */
static void admission_waits_for_reads(void **state)
{
	struct world *w = *state;
	json_t *b;
	const json_t *ann;

	start(w, json_pack("[o]", node("t4", "10", "shared", 2)));
	assert_int_equal(tick(w), 0);
	effects_drop(w);
	w->published(w->published_arg);
	assert_int_equal(tick(w), 1);
	answer(w);

	feed(w, CONTROLLER_WATCH_PODS, KUBE_EV_ADDED, pod("p", "t4", "1"));
	feed(w, CONTROLLER_WATCH_PODS, KUBE_EV_ADDED, pod("q", "t4", "1"));
	assert_int_equal(tick(w), 0);
	effects_drop(w);
	assert_int_equal(w->hook_calls, 1);
	assert_non_null(w->ready);
	/* Not asked again while it reads, nor for the node's other pod. */
	assert_int_equal(tick(w), 0);
	effects_drop(w);
	assert_int_equal(w->hook_calls, 1);

	w->ready(w->ready_arg);
	assert_int_equal(w->hook_calls, 2);
	assert_int_equal(tick(w), 1);
	b = body_of(&w->e[0]);
	ann = json_object_get(json_object_get(b, "metadata"), "annotations");
	assert_string_equal(json_string_value(json_object_get(ann, "gpushare.io/devices")),
			    "GPU-1");
	json_decref(b);
	answer(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(node_added_is_advertised, setup, teardown),
		cmocka_unit_test_setup_teardown(configmap_edit_repatches_affected_nodes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(bound_pod_gets_a_verdict, setup, teardown),
		cmocka_unit_test_setup_teardown(terminating_pod_keeps_its_devices, setup, teardown),
		cmocka_unit_test_setup_teardown(relist_after_gone, setup, teardown),
		cmocka_unit_test_setup_teardown(deleted_node_is_forgotten, setup, teardown),
		cmocka_unit_test_setup_teardown(failed_node_write_retries_later, setup, teardown),
		cmocka_unit_test_setup_teardown(gpu_fault_is_played_until_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(skipped_xid_changes_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(bad_gpu_health_keeps_last_good, setup, teardown),
		cmocka_unit_test_setup_teardown(mig_walk_pending_then_success, setup, teardown),
		cmocka_unit_test_setup_teardown(mig_invalid_layout_fails_at_once, setup, teardown),
		cmocka_unit_test_setup_teardown(mig_restart_mid_walk_resumes, setup, teardown),
		cmocka_unit_test_setup_teardown(mig_stall_stays_until_cleared, setup, teardown),
		cmocka_unit_test_setup_teardown(mig_walk_ends_when_the_plugin_then_fails, setup,
						teardown),
		cmocka_unit_test_setup_teardown(publish_is_waited_for, setup_io, teardown),
		cmocka_unit_test_setup_teardown(admission_waits_for_reads, setup_io, teardown),
		cmocka_unit_test_setup_teardown(mig_fail_and_gpu_pods_keep_the_old_layout, setup,
						teardown),
		cmocka_unit_test_setup_teardown(kubelet_restart_window, setup, teardown),
		cmocka_unit_test_setup_teardown(kubelet_reboot_then_back, setup, teardown),
		cmocka_unit_test_setup_teardown(lease_stall_is_healed, setup_heal, teardown),
		cmocka_unit_test_setup_teardown(lease_stall_left_alone_when_off, setup, teardown),
		cmocka_unit_test_setup_teardown(lease_heal_waits_for_the_apiserver, setup_heal,
						teardown),
		cmocka_unit_test_setup_teardown(lease_handed_back, setup_heal, teardown),
		cmocka_unit_test_setup_teardown(lease_conflict_is_not_overwritten, setup_heal,
						teardown),
		cmocka_unit_test_setup_teardown(lease_of_kubelet_window_left_to_it, setup_heal,
						teardown),
		cmocka_unit_test_setup_teardown(lease_list_shows_what_the_watch_missed, setup_heal,
						teardown),
		cmocka_unit_test_setup_teardown(lease_unanswered_list_holds_the_healing, setup_heal,
						teardown),
		cmocka_unit_test_setup_teardown(lease_late_holder_is_not_stalled, setup_heal,
						teardown),
		cmocka_unit_test_setup_teardown(lease_holder_creating_leases_lives, setup_heal,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
