#include <stdlib.h>
#include <string.h>

#include "engine/devicewalk.h"
#include "engine/podvalidate.h"
#include "engine/explain.h"
#include "model/kobj.h"
#include "model/quantity.h"
#include "base/strbuf.h"
#include "engine/webhook.h"
#include "base/banned.h"

void webhook_verdict_release(struct webhook_verdict *v)
{
	if (!v)
		return;
	free(v->message);
	v->message = NULL;
	gs_warnings_release(&v->warnings);
}

/* The pod's request at position `pos` of e->requests, on node n (explain.h: res[pos]). */
static bool advertises(const struct explain_node *n, size_t pos)
{
	return pos < n->n_res && strcmp(n->res[pos].allocatable, "0") != 0;
}

/* The hint of node n about the request at `pos` (what it publishes instead), NULL if none. */
static const char *hint_about(const struct explain_node *n, size_t pos)
{
	return pos < n->n_res ? n->res[pos].hint : NULL;
}

/* The pod-wide hints about the request at `pos`, each after "; ". */
static void add_pod_hints(struct strbuf *msg, const struct explain_pod *e, size_t pos)
{
	if (e->request_hints[pos].selector)
		strbuf_addf(msg, "; %s", e->request_hints[pos].selector);
	if (e->request_hints[pos].profile)
		strbuf_addf(msg, "; %s", e->request_hints[pos].profile);
}

static bool is_zero(const char *q)
{
	return !strcmp(q, "0");
}

/* "a, b, c and 2 more" of the nodes for which pick() holds. */
static void add_names(struct strbuf *sb, const struct explain_pod *e,
		      bool (*pick)(const struct explain_node *, const void *), const void *arg)
{
	size_t shown = 0, more = 0;

	for (size_t i = 0; i < e->n_nodes; i++) {
		if (!pick(&e->nodes[i], arg))
			continue;
		if (shown < WEBHOOK_MAX_NAMED)
			strbuf_addf(sb, "%s%s", shown++ ? ", " : "", e->nodes[i].name);
		else
			more++;
	}
	if (more)
		strbuf_addf(sb, " and %zu more", more);
}

static bool pick_failing(const struct explain_node *n, const void *arg)
{
	(void)arg;
	return n->fits && n->fails_admission;
}

static bool pick_fine(const struct explain_node *n, const void *arg)
{
	(void)arg;
	return n->fits && !n->fails_admission;
}

static bool pick_advertising(const struct explain_node *n, size_t pos)
{
	return n->selected && advertises(n, pos);
}

/*
 * Rule 2: what the pod can land on does not advertise `res`. The nodes'
 * own hints (explain's hint_names: .shared names, MIG profiles instead of
 * whole GPUs) say what to ask for instead; a node without one says what it
 * advertises.
 */
static void refuse_unadvertised(struct strbuf *msg, const struct explain_pod *e, const char *res,
				size_t pos, size_t n_selected)
{
	size_t shown = 0, more = 0;

	strbuf_addsep(msg, "; ", "");
	if (n_selected == e->n_nodes)
		strbuf_addf(msg, "no node advertises %s", res);
	else if (n_selected == 1)
		strbuf_addf(msg,
			    "the one node this pod's nodeSelector, node affinity and tolerations "
			    "allow does not advertise %s",
			    res);
	else
		strbuf_addf(msg,
			    "none of the %zu node%s this pod's nodeSelector, node affinity and "
			    "tolerations allow advertises %s",
			    n_selected, n_selected == 1 ? "" : "s", res);
	for (size_t i = 0; i < e->n_nodes; i++) {
		const struct explain_node *n = &e->nodes[i];
		const char *hint = hint_about(n, pos);

		if (!n->selected)
			continue;
		if (!hint && !*n->advertised)
			continue;
		if (shown++ >= WEBHOOK_MAX_NAMED) {
			more++;
			continue;
		}
		if (hint)
			strbuf_addf(msg, "; node %s: %s", n->name, hint);
		else
			strbuf_addf(msg, "; node %s advertises %s", n->name, n->advertised);
	}
	if (more)
		strbuf_addf(msg, "; and %zu more node%s", more, more == 1 ? "" : "s");
	if (!shown)
		strbuf_addf(msg, "; %s advertises no nvidia.com/ resource",
			    n_selected == 1 ? "that node" : "none of them");
	add_pod_hints(msg, e, pos);
}

/* Rule 3: a node the pod can land on refuses more than 1 slice at Allocate. */
static void refuse_over_one(struct strbuf *msg, const struct explain_pod *e)
{
	const struct explain_node *first = NULL;
	const char *hint = NULL;

	for (size_t i = 0; i < e->n_nodes && !first; i++)
		if (pick_failing(&e->nodes[i], NULL))
			first = &e->nodes[i];
	for (size_t h = 0; first && h < first->hints.n && !hint; h++)
		if (strstr(first->hints.items[h], "failRequestsGreaterThanOne"))
			hint = first->hints.items[h];
	strbuf_addsep(msg, "; ", "");
	strbuf_addf(msg, "the pod can be scheduled to ");
	add_names(msg, e, pick_failing, NULL);
	strbuf_addf(msg, ", where %s", hint ? hint : "the device plugin refuses it");
	strbuf_addf(msg, "; ask for 1 per container (two slices are the same GPU shared twice, not "
			 "twice the GPU)");
	struct strbuf fine = STRBUF_INIT;
	add_names(&fine, e, pick_fine, NULL);
	if (fine.len)
		strbuf_addf(msg,
			    ", or keep the pod on nodes that do not share it (%s) with a "
			    "nodeSelector or node affinity",
			    fine.buf);
	strbuf_release(&fine);
}

/*
 * Rules 2 and 3 for a pod the scheduler places: over the nodes its
 * selectors and tolerations allow (explain_pod's per-node evaluation).
 */
static int judge_unbound(const struct webhook_fleet *f, const json_t *pod, struct strbuf *msg,
			 struct gs_warnings *warnings, struct gs_error *err)
{
	struct explain_pod_input in = {
		.pod = pod, .nodes = f->nodes, .pods = NULL, .configs = f->configs, .cat = f->cat};
	struct explain_pod *e = NULL;
	size_t n_selected = 0;
	const char *k;
	json_t *q;

	if (explain_pod(&in, &e, err) < 0)
		return -1;
	if (!e->n_nodes) {
		explain_pod_free(e);
		return 0;
	}
	for (size_t i = 0; i < e->n_nodes; i++)
		n_selected += e->nodes[i].selected;
	if (!n_selected)
		gs_warnings_add(warnings,
				"gpushare: no node matches this pod's nodeSelector, node "
				"affinity and tolerations; it stays Pending until one does");
	size_t pos = 0;
	json_object_foreach (e->requests, k, q) {
		size_t at = pos++;
		if (strncmp(k, "nvidia.com/", 11) || is_zero(json_string_value(q)))
			continue;
		bool any = false;
		for (size_t i = 0; i < e->n_nodes && !any; i++)
			any = pick_advertising(&e->nodes[i], at) ||
			      (!n_selected && advertises(&e->nodes[i], at));
		if (!any)
			refuse_unadvertised(msg, e, k, at, n_selected ? n_selected : e->n_nodes);
	}
	bool failing = false;
	for (size_t i = 0; i < e->n_nodes; i++)
		failing |= pick_failing(&e->nodes[i], NULL);
	if (failing)
		refuse_over_one(msg, e);
	explain_pod_free(e);
	return 0;
}

/* ---- a pod bound by spec.nodeName: the kubelet's admission on that node alone ---- */

static const json_t *node_named(const json_t *nodes, const char *name)
{
	const json_t *n;
	size_t i;

	json_array_foreach (json_object_get(nodes, "items"), i, n)
		if (!strcmp(kobj_text(n, "metadata.name"), name))
			return n;
	return NULL;
}

/* The whole number of a quantity the apiserver's rules let through; 0 when absent. */
static long long amount_of(const json_t *v)
{
	struct quantity q;
	struct gs_error e;
	int64_t n = 0;

	if (!v || quantity_from_json(&q, v, &e) < 0 || quantity_value(&q, &n) < 0)
		return 0;
	return n;
}

/* The containers explain_admission_failures names: refused by the plugin past 1. */
struct over_one {
	struct explain_admission_fail *items;
	size_t n;
};

static void collect_over_one(void *ctx, const struct explain_admission_fail *fail)
{
	struct over_one *o = ctx;

	o->items = gs_xrealloc(o->items, (o->n + 1) * sizeof(*o->items));
	o->items[o->n++] = *fail;
}

static const struct explain_admission_fail *over_one_for(const struct over_one *o,
							 const char *container, const char *res)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->items[i].container, container) && !strcmp(o->items[i].resource, res))
			return &o->items[i];
	return NULL;
}

/* One nvidia.com/ resource of the pod on the bound node, as the device manager counts it. */
struct bound_res {
	const char *name;
	long long allocatable, free;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct bound_res *)a)->name, ((const struct bound_res *)b)->name);
}

/* devicesToAllocate's refusal: fewer free devices than the container still needs. */
static void refuse_unavailable(struct strbuf *msg, const char *node, const char *container,
			       const struct bound_res *r, long long asked, long long reused)
{
	strbuf_addsep(msg, "; ", "");
	strbuf_addf(
		msg,
		"the pod is bound to node %s (spec.nodeName): container \"%s\" asks for %lld %s, ",
		node, container, asked, r->name);
	if (r->free == r->allocatable)
		strbuf_addf(msg, "more than the node's %lld even with no other pod on it",
			    r->allocatable);
	else
		strbuf_addf(msg, "and the containers before it leave %lld of the node's %lld",
			    r->free, r->allocatable);
	if (reused)
		strbuf_addf(msg, " besides the %lld it takes over from an init container", reused);
	strbuf_addf(msg,
		    "; the kubelet refuses it, the pod fails with UnexpectedAdmissionError: "
		    "Allocate failed due to requested number of devices unavailable for %s. "
		    "Requested: %lld, Available: %lld, which is unexpected",
		    r->name, asked - reused, r->free);
}

/* The plugin's Allocate refusing more than one replica (failRequestsGreaterThanOne). */
static void refuse_replicas(struct strbuf *msg, const char *node,
			    const struct explain_admission_fail *fail)
{
	char *words = explain_admission_message(fail);

	strbuf_addsep(msg, "; ", "");
	strbuf_addf(
		msg,
		"the pod is bound to node %s (spec.nodeName), where container \"%s\" asks for "
		"%lld %s, shared by %s with failRequestsGreaterThanOne (config \"%s\"): the "
		"device plugin refuses it at Allocate, the pod fails with "
		"UnexpectedAdmissionError: %s; ask for 1 per container (two slices are the same "
		"GPU shared twice, not twice the GPU)",
		node, fail->container, fail->count, fail->resource, fail->strategy, fail->config,
		words);
	free(words);
}

/* The bound node's resources and the refusal (devicewalk's step argument). */
struct bound_walk {
	struct bound_res *res;
	size_t n_res;
	const char *node;
	const struct over_one *over;
	struct strbuf *msg;
};

static struct bound_res *bound_res_named(const struct bound_walk *w, const char *name)
{
	struct bound_res key = {.name = name};

	return bsearch(&key, w->res, w->n_res, sizeof(*w->res), by_name);
}

static bool bound_serves(void *arg, const char *res)
{
	return bound_res_named(arg, res) != NULL;
}

/*
 * The device manager's Allocate for one container and one resource, after
 * the devices an init container left (devicewalk): free ones
 * (devicesToAllocate), then the plugin's Allocate, which refuses more than
 * one replica where failRequestsGreaterThanOne holds. 1 with msg filled
 * when refused.
 */
static int bound_step(void *arg, const struct devicewalk_step *st)
{
	struct bound_walk *w = arg;
	struct bound_res *r = bound_res_named(w, st->resource);
	const char *cname = kobj_text(st->container, "name");
	const struct explain_admission_fail *fail;

	if (st->fresh > r->free) {
		refuse_unavailable(w->msg, w->node, cname, r, st->ask, st->reused);
		return 1;
	}
	r->free -= st->fresh;
	fail = st->ask > 1 ? over_one_for(w->over, cname, r->name) : NULL;
	if (fail) {
		refuse_replicas(w->msg, w->node, fail);
		return 1;
	}
	return 0;
}

/*
 * A nvidia.com/ resource the bound node does not list at all: the kubelet
 * admits the pod without it; what the node offers instead (explain's hints
 * for that node, else what it advertises).
 */
static void refuse_unlisted(struct strbuf *msg, const struct explain_pod *e, const char *node,
			    const char *res, size_t pos)
{
	const struct explain_node *n = &e->nodes[0];
	const char *hint = hint_about(n, pos);

	strbuf_addsep(msg, "; ", "");
	strbuf_addf(msg,
		    "the pod is bound to node %s (spec.nodeName), which does not advertise %s: the "
		    "kubelet admits the pod all the same (it drops the extended resources a node "
		    "lacks from its admission check, removeMissingExtendedResources) and no device "
		    "plugin gives its containers any %s",
		    node, res, res);
	if (hint)
		strbuf_addf(msg, "; node %s: %s", node, hint);
	else if (*n->advertised)
		strbuf_addf(msg, "; node %s advertises %s", node, n->advertised);
	else
		strbuf_addf(msg, "; node %s advertises no nvidia.com/ resource", node);
	add_pod_hints(msg, e, pos);
}

/*
 * A pod with spec.nodeName skips the scheduler: only the named node's
 * kubelet judges it (pkg/kubelet/lifecycle/predicate.go and the device
 * manager before it), so rules 2 and 3 look at that node alone:
 *  - a node that does not exist: no kubelet ever runs the pod, and
 *    kube-controller-manager's pod garbage collector deletes it
 *    (gcOrphaned, after a 40 s quarantine);
 *  - more than the node's allocatable, or more than 1 of a resource it
 *    shares with failRequestsGreaterThanOne: UnexpectedAdmissionError;
 *  - a resource the node shows at 0 (no plugin serves it any more):
 *    OutOf<resource> from the predicate;
 *  - a nvidia.com/ resource the node does not list at all: the kubelet
 *    admits the pod (removeMissingExtendedResources drops it, upstream's
 *    own caveat for a manually bound pod) and no device is given, so the
 *    webhook refuses what the pod asked for and would not get.
 */
static int judge_bound(const struct webhook_fleet *f, const json_t *pod, const char *name,
		       struct strbuf *msg, struct gs_error *err)
{
	const json_t *node = node_named(f->nodes, name);
	struct explain_pod *e = NULL;
	struct over_one over = {.items = NULL, .n = 0};
	struct bound_res *res;
	size_t n_res = 0;
	const char *k;
	json_t *q;

	if (!node) {
		strbuf_addsep(msg, "; ", "");
		strbuf_addf(msg,
			    "spec.nodeName names node \"%s\", which does not exist: no kubelet "
			    "will run the pod, which stays Pending until kube-controller-manager's "
			    "pod garbage collector deletes it as orphaned (within about a minute: "
			    "condition DisruptionTarget, reason DeletionByPodGC, \"PodGC: node no "
			    "longer exists\"); name an existing node, or leave spec.nodeName empty "
			    "for the scheduler to choose",
			    name);
		return 0;
	}
	json_t *one =
		json_pack("{s:s,s:s,s:[O]}", "apiVersion", "v1", "kind", "NodeList", "items", node);
	struct explain_pod_input in = {
		.pod = pod, .nodes = one, .pods = NULL, .configs = f->configs, .cat = f->cat};
	int rc = explain_pod(&in, &e, err);
	json_decref(one);
	if (rc < 0)
		return -1;
	const json_t *alloc = kobj_get(node, "status.allocatable");

	res = gs_xcalloc(json_object_size(e->requests) + 1, sizeof(*res));
	size_t pos = 0;
	json_object_foreach (e->requests, k, q) {
		const json_t *a = json_object_get(alloc, k);
		size_t at = pos++;

		if (strncmp(k, "nvidia.com/", 11) || is_zero(json_string_value(q)))
			continue;
		if (!a) {
			refuse_unlisted(msg, e, name, k, at);
			continue;
		}
		long long have = amount_of(a);
		if (have > 0)
			res[n_res++] = (struct bound_res){k, have, have};
	}
	/* Go walks a container's limits map in any order: name order, as admission.c. */
	qsort(res, n_res, sizeof(*res), by_name);
	explain_admission_failures(f->configs, node, pod, collect_over_one, &over);
	/* The kubelet's resource allocator on the node with no other pod. */
	struct bound_walk w = {res, n_res, name, &over, msg};
	/* explain_pod read the pod's requests: an unreadable limit asks nothing. */
	if (!devicewalk_pod(pod, bound_serves, bound_step, &w, NULL)) {
		/* The predicate, after the allocator: a resource shown at 0. */
		json_object_foreach (e->requests, k, q) {
			const json_t *a = json_object_get(alloc, k);
			if (strncmp(k, "nvidia.com/", 11) || is_zero(json_string_value(q)) || !a ||
			    amount_of(a) > 0)
				continue;
			strbuf_addsep(msg, "; ", "");
			strbuf_addf(
				msg,
				"the pod is bound to node %s (spec.nodeName), which shows %s at "
				"0 (no device plugin serves it there now): the kubelet refuses "
				"it, the pod fails with OutOf%s: Node didn't have enough "
				"resource: %s, requested: %lld, used: 0, capacity: 0",
				name, k, k, k, amount_of(q));
			break;
		}
	}
	free(over.items);
	free(res);
	explain_pod_free(e);
	return 0;
}

/* The kinds whose pods the webhook judges through their template, and where it is. */
static const struct workload {
	const char *group, *kind, *path;
} workloads[] = {
	{"apps", "Deployment", "spec.template"},
	{"apps", "ReplicaSet", "spec.template"},
	{"apps", "StatefulSet", "spec.template"},
	{"apps", "DaemonSet", "spec.template"},
	{"batch", "Job", "spec.template"},
	{"batch", "CronJob", "spec.jobTemplate.spec.template"},
	{"", "ReplicationController", "spec.template"},
	{"", "PodTemplate", "template"},
};

static const struct workload *workload_of(const char *group, const char *kind)
{
	for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		if (!strcmp(workloads[i].group, group) && !strcmp(workloads[i].kind, kind))
			return &workloads[i];
	return NULL;
}

/* The Pod a template makes: its metadata and spec, named after the workload. */
static json_t *template_pod(const json_t *obj, const struct workload *w)
{
	const json_t *t = kobj_get(obj, w->path);
	json_t *md = json_deep_copy(json_object_get(t, "metadata"));

	if (!json_is_object(md)) {
		json_decref(md);
		md = json_object();
	}
	json_object_set_new(md, "name", json_string(kobj_text(obj, "metadata.name")));
	json_object_set_new(md, "namespace", json_string(kobj_text(obj, "metadata.namespace")));
	json_t *spec = json_object_get(t, "spec");
	return json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", "v1", "kind", "Pod", "metadata", md,
			 "spec", json_is_object(spec) ? json_incref(spec) : json_object());
}

int webhook_judge_pod(const struct webhook_fleet *f, const json_t *obj, struct webhook_verdict *v,
		      struct gs_error *err)
{
	struct strbuf msg = STRBUF_INIT;
	char *invalid = NULL;
	const char *api = kobj_text(obj, "apiVersion"), *slash = strchr(api, '/');
	char *group = gs_xstrndup(api, slash ? (size_t)(slash - api) : 0);
	const struct workload *w = workload_of(group, kobj_text(obj, "kind"));
	json_t *made = NULL;
	const json_t *pod = obj;

	memset(v, 0, sizeof(*v));
	gs_warnings_init(&v->warnings);
	v->judged = true;
	free(group);
	if (w)
		pod = made = template_pod(obj, w);

	/* 1. The apiserver's validation, its refusal word for word. */
	if (podvalidate_refusal(obj, NULL, &invalid, err) < 0) {
		json_decref(made);
		gs_error_prefix(err, "%s: ", kobj_text(obj, "kind"));
		return -1;
	}

	/* 2 and 3 need the fleet, and quantities that parse. */
	if (!invalid && f->nodes) {
		const char *bound = kobj_text(pod, "spec.nodeName");
		int r = *bound ? judge_bound(f, pod, bound, &msg, err)
			       : judge_unbound(f, pod, &msg, &v->warnings, err);
		if (r < 0) {
			strbuf_release(&msg);
			json_decref(made);
			return -1;
		}
	} else if (!f->nodes) {
		gs_warnings_add(&v->warnings, "gpushare: the node list is not known yet: only the "
					      "apiserver's resource rules were checked");
	}
	json_decref(made);

	if (invalid) {
		v->allowed = false;
		v->code = 403;
		v->message = invalid;
		strbuf_release(&msg);
	} else if (msg.len) {
		v->allowed = false;
		v->code = 403;
		if (w && strncmp(msg.buf, "container ", 10)) {
			/* Rules 2 and 3 speak of "the pod": say which pods. */
			v->message =
				gs_xasprintf("the pods of %s %s (%s): %s", w->kind,
					     kobj_text(obj, "metadata.name"), w->path, msg.buf);
			strbuf_release(&msg);
		} else {
			v->message = strbuf_detach(&msg, NULL);
		}
	} else {
		v->allowed = true;
		v->code = 200;
		strbuf_release(&msg);
	}
	return 0;
}

/* What a JSON value is, for messages about a review's shape. */
static const char *json_what(const json_t *v)
{
	if (!v)
		return "absent";
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	case JSON_NULL:
		break;
	}
	return "null";
}

/*
 * The pod spec at `path` of `obj` (a Pod's "spec", a workload's template)
 * has the shape the apiserver's validation guarantees before any webhook:
 * an object whose containers are a non-empty array of objects, init
 * containers absent or an array of objects. Anything else is not what an
 * apiserver sends, and judging it would find nothing to refuse.
 */
static int pod_spec_shape(const json_t *obj, const char *path, struct gs_error *err)
{
	const json_t *spec = kobj_get(obj, path);
	static const char *const lists[] = {"containers", "initContainers"};

	if (!json_is_object(spec)) {
		gs_error_set(err, "request.object.%s is %s, not an object", path, json_what(spec));
		return -1;
	}
	for (size_t l = 0; l < 2; l++) {
		const json_t *arr = json_object_get(spec, lists[l]), *c;
		size_t i;

		if (!arr && l == 1)
			continue;
		if (!json_is_array(arr) || (l == 0 && !json_array_size(arr))) {
			gs_error_set(err, "request.object.%s.%s is %s%s", path, lists[l],
				     json_is_array(arr) ? "an empty array" : json_what(arr),
				     l == 0 ? ": a pod has at least one container"
					    : ", not an array");
			return -1;
		}
		json_array_foreach (arr, i, c)
			if (!json_is_object(c)) {
				gs_error_set(err, "request.object.%s.%s[%zu] is %s, not an object",
					     path, lists[l], i, json_what(c));
				return -1;
			}
	}
	return 0;
}

/* The object (or oldObject) of a request is the kind it names, with a pod spec where judged. */
static int object_shape(const json_t *req, const char *field, const char *api, const char *kind,
			const char *spec_path, struct gs_error *err)
{
	const json_t *obj = json_object_get(req, field);
	const char *oapi = kobj_text(obj, "apiVersion"), *okind = kobj_text(obj, "kind");

	if (!json_is_object(obj)) {
		gs_error_set(err, "request.%s is %s: a %s of a %s carries the %s as an object",
			     field, json_what(obj), kobj_text(req, "operation"), kind, kind);
		return -1;
	}
	if (strcmp(oapi, api) || strcmp(okind, kind)) {
		gs_error_set(err,
			     "request.%s is apiVersion \"%s\" kind \"%s\", but request.kind "
			     "says %s %s",
			     field, oapi, okind, api, kind);
		return -1;
	}
	return pod_spec_shape(obj, spec_path, err);
}

/*
 * The request of a review, as deploy/webhook.yaml's ValidatingWebhookConfiguration
 * sends it: Pods (v1) on CREATE, the workloads of `workloads` (their v1) on
 * CREATE and UPDATE, never a subresource (its rules name none; with
 * matchPolicy Equivalent the apiserver converts other versions to these).
 * 1: judge it; 0: a workload UPDATE that leaves the pod template as it was,
 * which the configuration sends and which is allowed unseen; -1 with err:
 * anything else, which the webhook cannot judge and must not allow.
 */
static int review_route(const json_t *req, struct gs_error *err)
{
	const json_t *gvk = json_object_get(req, "kind");
	const char *group = kobj_string(gvk, "group"), *version = kobj_string(gvk, "version");
	const char *kind = kobj_string(gvk, "kind"), *op = kobj_string(req, "operation");
	const json_t *sub = json_object_get(req, "subResource");
	const struct workload *w;
	bool pod;

	if (!json_is_object(gvk)) {
		gs_error_set(
			err,
			"request.kind is %s, not an object {group, version, kind}: the webhook "
			"cannot tell what it is asked to judge",
			json_what(gvk));
		return -1;
	}
	if (!group || !version || !*version || !kind || !*kind) {
		gs_error_set(err,
			     "request.kind lacks a group, version or kind (group \"%s\", version "
			     "\"%s\", kind \"%s\"): the webhook cannot tell what it is asked to "
			     "judge",
			     kobj_text(gvk, "group"), kobj_text(gvk, "version"),
			     kobj_text(gvk, "kind"));
		return -1;
	}
	if (!op || (strcmp(op, "CREATE") && strcmp(op, "UPDATE") && strcmp(op, "DELETE") &&
		    strcmp(op, "CONNECT"))) {
		gs_error_set(err,
			     "request.operation is %s%s%s, not CREATE, UPDATE, DELETE or CONNECT",
			     op ? "\"" : json_what(json_object_get(req, "operation")), op ? op : "",
			     op ? "\"" : "");
		return -1;
	}
	if (sub && (!json_is_string(sub) || *json_string_value(sub))) {
		gs_error_set(err,
			     "request.subResource is %s%s%s: deploy/webhook.yaml's rules name no "
			     "subresource, so the webhook judges none",
			     json_is_string(sub) ? "\"" : json_what(sub),
			     json_is_string(sub) ? json_string_value(sub) : "",
			     json_is_string(sub) ? "\"" : "");
		return -1;
	}
	pod = !*group && !strcmp(kind, "Pod");
	w = pod ? NULL : workload_of(group, kind);
	if ((!pod && !w) || strcmp(version, "v1")) {
		gs_error_set(err,
			     "request.kind is %s%s%s %s: the webhook judges v1 Pods and apps/v1 "
			     "and batch/v1 workloads (deploy/webhook.yaml's rules)",
			     group, *group ? "/" : "", version, kind);
		return -1;
	}
	if (pod && strcmp(op, "CREATE")) {
		gs_error_set(err,
			     "request.operation is %s for a Pod: deploy/webhook.yaml sends Pods on "
			     "CREATE only (a pod's resources and node do not change after it)",
			     op);
		return -1;
	}
	if (!pod && strcmp(op, "CREATE") && strcmp(op, "UPDATE")) {
		gs_error_set(
			err,
			"request.operation is %s for a %s: deploy/webhook.yaml sends workloads "
			"on CREATE and UPDATE only",
			op, kind);
		return -1;
	}
	char *api = *group ? gs_xasprintf("%s/%s", group, version) : gs_xstrdup(version);
	const char *path = pod ? "spec" : w->path;
	char *spec_path = pod ? gs_xstrdup(path) : gs_xasprintf("%s.spec", path);
	int rc = object_shape(req, "object", api, kind, spec_path, err);
	if (rc == 0 && !strcmp(op, "UPDATE"))
		rc = object_shape(req, "oldObject", api, kind, spec_path, err);
	free(api);
	free(spec_path);
	if (rc < 0)
		return -1;
	/* A workload's pods change only with its template: a scale or a status
	 * update of one made before is never refused. */
	if (!strcmp(op, "UPDATE") && json_equal(kobj_get(json_object_get(req, "object"), path),
						kobj_get(json_object_get(req, "oldObject"), path)))
		return 0;
	return 1;
}

int webhook_review_parse(const char *body, size_t len, json_t **review, struct gs_error *err)
{
	json_error_t je;

	*review = NULL;
	if (len > WEBHOOK_MAX_BODY) {
		gs_error_set(err, "the review is %zu bytes, more than %u", len, WEBHOOK_MAX_BODY);
		return -1;
	}
	*review = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);
	if (!*review) {
		gs_error_at(err, "review", je.line, je.column, "%s", je.text);
		return -1;
	}
	return 0;
}

int webhook_review(const struct webhook_fleet *f, const char *body, size_t len, json_t **out,
		   struct webhook_verdict *verdict, struct gs_error *err)
{
	json_t *review;
	int rc;

	*out = NULL;
	if (webhook_review_parse(body, len, &review, err) < 0)
		return -1;
	rc = webhook_review_tree(f, review, out, verdict, err);
	json_decref(review);
	return rc;
}

int webhook_review_tree(const struct webhook_fleet *f, const json_t *review, json_t **out,
			struct webhook_verdict *verdict, struct gs_error *err)
{
	const json_t *req;
	json_t *resp;
	struct webhook_verdict v;
	int rc = -1, route;

	*out = NULL;
	memset(&v, 0, sizeof(v));
	const char *api = kobj_text(review, "apiVersion");
	req = json_object_get(review, "request");
	if (!json_is_object(review) || strcmp(kobj_text(review, "kind"), "AdmissionReview") ||
	    strcmp(api, "admission.k8s.io/v1")) {
		gs_error_set(err,
			     "not an AdmissionReview of admission.k8s.io/v1 (kind \"%s\", "
			     "apiVersion \"%s\")",
			     kobj_text(review, "kind"), api);
		goto out;
	}
	if (!json_is_object(req)) {
		gs_error_set(err, "the AdmissionReview's request is %s, not an object",
			     json_what(req));
		goto out;
	}
	const json_t *uid = json_object_get(req, "uid");
	if (!json_is_string(uid) || !*json_string_value(uid)) {
		gs_error_set(err, "the AdmissionReview has no request.uid");
		goto out;
	}
	route = review_route(req, err);
	if (route < 0)
		goto out;
	if (route > 0) {
		if (webhook_judge_pod(f, json_object_get(req, "object"), &v, err) < 0)
			goto out;
	} else {
		gs_warnings_init(&v.warnings);
		v.allowed = true;
		v.code = 200;
	}

	resp = json_pack("{s:O,s:b}", "uid", uid, "allowed", v.allowed);
	if (!v.allowed) {
		/* Texts come from decoded JSON (valid UTF-8) and escaped names; guard anyway. */
		json_t *m = json_string(v.message);
		json_object_set_new(resp, "status",
				    json_pack("{s:i,s:s,s:o}", "code", v.code, "reason",
					      "Forbidden", "message",
					      m ? m : json_string("refused by gpushare")));
	}
	if (v.warnings.n) {
		json_t *warn = json_array();
		for (size_t i = 0; i < v.warnings.n; i++)
			json_array_append_new(warn, json_string(v.warnings.items[i]));
		json_object_set_new(resp, "warnings", warn);
	}
	*out = json_pack("{s:s,s:s,s:o}", "apiVersion", "admission.k8s.io/v1", "kind",
			 "AdmissionReview", "response", resp);
	if (verdict) {
		*verdict = v;
		memset(&v, 0, sizeof(v));
	}
	rc = 0;
out:
	webhook_verdict_release(&v);
	return rc;
}
