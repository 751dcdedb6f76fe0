#include "engine/explain_offline.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine/explain.h"
#include "engine/migwalk.h"
#include "model/kobj.h"
#include "model/quantity.h"
#include "base/banned.h"

static const char *ns_of(const json_t *obj)
{
	const char *ns = kobj_text(obj, "metadata.namespace");
	return *ns ? ns : "default";
}

/*
 * obj[key] made obj's own, to change: the map itself when nothing else
 * holds it, else a shallow copy of it; a new map when absent. The value
 * replaced goes to `kept` (NULL: dropped).
 */
static json_t *own_map(json_t *obj, const char *key, json_t *kept)
{
	json_t *v = json_object_get(obj, key);

	if (json_is_object(v) && v->refcount == 1)
		return v;
	if (v && kept)
		json_array_append(kept, v);
	json_t *c = json_is_object(v) ? json_copy(v) : json_object();
	json_object_set_new(obj, key, c);
	return c;
}

/*
 * The one string of `strings` (text -> string) equal to v, v itself the
 * first time: the nodes of a pool are given the same label values and
 * annotations, so they share them instead of holding a string each. A
 * string holding a NUL is not shared. Returns a borrowed reference.
 */
static json_t *intern(json_t *strings, json_t *v)
{
	const char *text = json_string_value(v);
	size_t n = json_string_length(v);

	if (!text || strlen(text) != n)
		return v;
	json_t *have = json_object_getn(strings, text, n);
	if (have)
		return have;
	json_object_setn(strings, text, n, v);
	return v;
}

struct advertise_ctx {
	json_t *strings; /* text -> the string shared (intern) */
	json_t *kept;	 /* in place: the values a patch replaced or removed, or NULL */
};

/*
 * mergepatch_apply on a node sharing its maps with the caller's (or,
 * through YAML aliases, with other nodes): each map the patch changes is
 * made the node's own first, the rest stays shared and unchanged. The
 * strings set are shared through c->strings (intern), the values
 * replaced or removed go to c->kept.
 */
static void apply_own(json_t *target, const json_t *patch, const struct advertise_ctx *c)
{
	const char *k;
	json_t *v;

	json_object_foreach ((json_t *)patch, k, v) {
		json_t *old = json_object_get(target, k);
		if (c->kept && old && !json_is_object(v))
			json_array_append(c->kept, old);
		if (json_is_null(v))
			json_object_del(target, k);
		else if (json_is_object(v))
			apply_own(own_map(target, k, c->kept), v, c);
		else
			json_object_set(target, k, intern(c->strings, v));
	}
}

/* Nodes advertised a slice at a time: one slice's patches are held at once. */
#define FLEET_SLICE 256

/* Advertise nodes[at, at + n) in place and append their reports to rep. */
static int advertise_slice(const json_t *configmap, json_t *nodes, size_t at, size_t n,
			   const struct advertise_ctx *c, struct sync_report *rep,
			   struct gs_error *err)
{
	json_t *part = json_array();
	struct sync_opts so = {0};
	struct sync_report r;
	int rc;

	for (size_t i = at; i < at + n; i++)
		json_array_append(part, json_array_get(nodes, i));
	rc = sync_plan(configmap, part, &so, &r, err);
	/* sync_plan keeps every node, in order. */
	for (size_t i = 0; rc >= 0 && i < r.n && i < n; i++) {
		json_t *node = json_array_get(part, i);
		if (r.nodes[i].patch) {
			/* Applied, the patch is not read again: its maps go. */
			apply_own(node, r.nodes[i].patch, c);
			json_decref(r.nodes[i].patch);
			r.nodes[i].patch = NULL;
		}
		const json_t *alloc = kobj_get(node, "status.allocatable");
		if (!json_is_object(alloc) || !json_object_get(alloc, "pods")) {
			json_t *own =
				own_map(own_map(node, "status", c->kept), "allocatable", c->kept);
			if (!json_object_get(own, "pods"))
				json_object_set_new(own, "pods", json_string("110"));
		}
	}
	json_decref(part);
	if (rc < 0) {
		sync_report_release(&r);
		return -1;
	}
	/* The entries move to rep; r keeps nothing. */
	rep->nodes = gs_xrealloc(rep->nodes, (rep->n + r.n + 1) * sizeof(*rep->nodes));
	if (r.n)
		memcpy(rep->nodes + rep->n, r.nodes, r.n * sizeof(*r.nodes));
	rep->n += r.n;
	free(r.nodes);
	r.nodes = NULL;
	r.n = 0;
	sync_report_release(&r);
	return 0;
}

/*
 * The fleet of nodes_in (in_place: the caller's objects, advertised where
 * they are; else each in a top level of its own whose maps stay the
 * caller's until a patch changes them, then copied) and pods_in.
 */
static int advertise(const json_t *nodes_in, const json_t *pods_in, const json_t *configmap,
		     bool in_place, struct explain_fleet *out, struct gs_error *err)
{
	json_t *nodes = json_array(), *pods = json_array();
	struct advertise_ctx c = {.strings = json_object()};
	const json_t *doc;
	size_t i;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (in_place)
		c.kept = out->kept = json_array();
	json_array_foreach (nodes_in, i, doc)
		json_array_append_new(nodes, in_place ? json_incref((json_t *)doc)
						      : json_copy((json_t *)doc));
	/* The pods are only read: shared with the caller's. */
	json_array_foreach (pods_in, i, doc)
		json_array_append(pods, (json_t *)doc);
	out->nodes =
		json_pack("{s:s,s:s,s:o}", "apiVersion", "v1", "kind", "NodeList", "items", nodes);
	out->pods =
		json_pack("{s:s,s:s,s:o}", "apiVersion", "v1", "kind", "PodList", "items", pods);
	/* At least once: no node still reads the ConfigMap, which may be unusable. */
	size_t at = 0;
	do {
		size_t n = json_array_size(nodes) - at;
		rc = advertise_slice(configmap, nodes, at, n < FLEET_SLICE ? n : FLEET_SLICE, &c,
				     &out->plan, err);
		at += FLEET_SLICE;
	} while (rc == 0 && at < json_array_size(nodes));
	json_decref(c.strings);
	return rc;
}

int explain_fleet_advertise(const json_t *nodes_in, const json_t *pods_in, const json_t *configmap,
			    struct explain_fleet *out, struct gs_error *err)
{
	return advertise(nodes_in, pods_in, configmap, false, out, err);
}

int explain_fleet_advertise_in_place(json_t *nodes, const json_t *configmap,
				     struct explain_fleet *out, struct gs_error *err)
{
	return advertise(nodes, NULL, configmap, true, out, err);
}

int explain_fleet_build(const struct ydoc_stream *s, const struct ydoc_stream *more_pods,
			const json_t *configmap, struct explain_fleet *out, struct gs_error *err)
{
	json_t *nodes = json_array(), *pods = json_array();
	int rc;

	for (size_t i = 0; i < ydoc_stream_count(s); i++) {
		json_t *doc = ydoc_stream_doc(s, i);
		if (kobj_is(doc, "Node"))
			json_array_append(nodes, doc);
		else if (kobj_is(doc, "Pod"))
			json_array_append(pods, doc);
	}
	for (size_t i = 0; more_pods && i < ydoc_stream_count(more_pods); i++) {
		json_t *doc = ydoc_stream_doc(more_pods, i);
		if (kobj_is(doc, "Pod"))
			json_array_append(pods, doc);
	}
	if (!json_array_size(nodes)) {
		memset(out, 0, sizeof(*out));
		gs_error_set(err, "%s: no Node in the file", ydoc_stream_name(s));
		rc = -1;
	} else {
		rc = explain_fleet_advertise(nodes, pods, configmap, out, err);
	}
	json_decref(nodes);
	json_decref(pods);
	return rc;
}

void explain_fleet_release(struct explain_fleet *f)
{
	json_decref(f->nodes);
	json_decref(f->pods);
	json_decref(f->kept);
	sync_report_release(&f->plan);
	memset(f, 0, sizeof(*f));
}

int explain_quantities_check(const struct ydoc_stream *s, const json_t *map, const char *what,
			     struct gs_error *err)
{
	const char *k;
	json_t *v;
	struct quantity q;
	struct gs_error e;

	if (map && !json_is_object(map)) {
		ydoc_error_at(s, map, err, "%s: expected a mapping, got %s", what,
			      ydoc_kind_name(map));
		return -1;
	}
	json_object_foreach ((json_t *)map, k, v) {
		if (quantity_from_json(&q, v, &e) < 0) {
			ydoc_error_at_key(s, map, k, err, "%s %s: %s", what, k, e.msg);
			return -1;
		}
	}
	return 0;
}

int explain_pod_check(const struct ydoc_stream *s, const json_t *pod, struct gs_error *err)
{
	const char *lists[] = {"initContainers", "containers"};
	const json_t *spec = json_object_get(pod, "spec");

	if (!json_is_object(spec)) {
		ydoc_error_at_key(s, pod, "spec", err, "pod %s: spec must be a mapping",
				  kobj_text(pod, "metadata.name"));
		return -1;
	}
	for (size_t l = 0; l < 2; l++) {
		const json_t *arr = json_object_get(spec, lists[l]), *c;
		size_t i;
		if (arr && !json_is_array(arr)) {
			ydoc_error_at(s, arr, err, "%s: expected a list, got %s", lists[l],
				      ydoc_kind_name(arr));
			return -1;
		}
		json_array_foreach (arr, i, c) {
			const json_t *res = json_object_get(c, "resources");
			if (explain_quantities_check(s, json_object_get(res, "requests"),
						     "requests", err) < 0 ||
			    explain_quantities_check(s, json_object_get(res, "limits"), "limits",
						     err) < 0)
				return -1;
		}
	}
	if (explain_quantities_check(s, json_object_get(spec, "overhead"), "overhead", err) < 0)
		return -1;
	return 0;
}

/* Quotas recorded from a cluster carry the status its quota controller gave them. */
static bool recorded(const json_t *quota)
{
	return json_is_object(kobj_get(quota, "status.used"));
}

/*
 * Whether the quota controller charges the pod at Unix second `now`
 * (k8s.io/kubernetes v1.37.2 pkg/quota/v1/evaluator/core/pods.go
 * QuotaV1Pod): not in a terminal phase, and not stuck terminating, "for
 * example, a node is lost": deletionTimestamp (already the request's time
 * plus the grace period) plus deletionGracePeriodSeconds before `now`.
 */
static bool charged(const json_t *pod, long long now)
{
	const char *phase = kobj_text(pod, "status.phase");
	const json_t *grace = kobj_get(pod, "metadata.deletionGracePeriodSeconds");
	long long at = migwalk_parse_time(kobj_text(pod, "metadata.deletionTimestamp"));

	if (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"))
		return false;
	return !(at >= 0 && json_is_integer(grace) && now > at + json_integer_value(grace));
}

struct explain_quota_sum {
	const json_t *quotas;
	const char *only_ns;
	long long now; /* Unix seconds, for pods stuck terminating */
	json_t *with;  /* the namespaces with a quota (of only_ns) */
	json_t *used;  /* namespace -> what its pods count */
};

struct explain_quota_sum *explain_quota_sum_new(const json_t *quotas, const char *only_ns)
{
	struct explain_quota_sum *q = gs_xcalloc(1, sizeof(*q));
	const json_t *doc;
	size_t i;

	q->quotas = quotas;
	q->only_ns = only_ns;
	q->now = (long long)time(NULL);
	q->with = json_object();
	q->used = json_object();
	json_array_foreach (quotas, i, doc) {
		const char *ns = ns_of(doc);
		if (kobj_is(doc, "ResourceQuota") && (!only_ns || !strcmp(ns, only_ns)))
			json_object_set_new(q->with, ns, json_true());
	}
	return q;
}

int explain_quota_sum_add(struct explain_quota_sum *q, const json_t *p, struct gs_error *err)
{
	const char *ns = ns_of(p);

	if (!json_object_get(q->with, ns) || !charged(p, q->now))
		return 0;
	json_t *u = json_object_get(q->used, ns);
	bool fresh = !u;
	if (explain_quota_add_pod(&u, p, err) < 0) {
		if (fresh)
			json_decref(u);
		gs_error_prefix(err, "pod %s/%s: ", ns, kobj_text(p, "metadata.name"));
		return -1;
	}
	if (fresh)
		json_object_set_new(q->used, ns, u);
	return 0;
}

int explain_quota_sum_lists(const struct explain_quota_sum *qs, json_t **out, struct gs_error *err)
{
	json_t *lists = json_object();
	const json_t *doc;
	size_t i;

	*out = NULL;
	json_array_foreach (qs->quotas, i, doc) {
		const char *ns = ns_of(doc);
		if (kobj_is(doc, "ResourceQuota") && (!qs->only_ns || !strcmp(ns, qs->only_ns)) &&
		    !json_object_get(lists, ns))
			json_object_set_new(lists, ns,
					    json_pack("{s:s,s:s,s:{s:s},s:[]}", "apiVersion", "v1",
						      "kind", "ResourceQuotaList", "metadata",
						      "namespace", ns, "items"));
	}
	json_array_foreach (qs->quotas, i, doc) {
		json_t *items = json_object_get(json_object_get(lists, ns_of(doc)), "items");
		if (!kobj_is(doc, "ResourceQuota") || !items)
			continue;
		if (recorded(doc)) {
			json_array_append_new(items, json_deep_copy(doc));
			continue;
		}
		const json_t *hard = kobj_get(doc, "spec.hard");
		const json_t *have_used = json_object_get(qs->used, ns_of(doc));
		if (explain_quantities_check(NULL, hard, "spec.hard", err) < 0) {
			json_decref(lists);
			return -1;
		}
		json_t *q = json_deep_copy(doc), *u = json_object();
		const char *k;
		json_t *v;
		json_object_foreach ((json_t *)hard, k, v) {
			const json_t *have = json_object_get(have_used, k);
			json_object_set_new(u, k,
					    have ? json_copy((json_t *)have) : json_string("0"));
		}
		json_object_set_new(q, "status",
				    json_pack("{s:o,s:o}", "hard",
					      hard ? json_deep_copy(hard) : json_object(), "used",
					      u));
		json_array_append_new(items, q);
	}
	*out = lists;
	return 0;
}

void explain_quota_sum_free(struct explain_quota_sum *q)
{
	if (!q)
		return;
	json_decref(q->with);
	json_decref(q->used);
	free(q);
}

/*
 * The lists of the namespaces of `quotas` (only_ns: that one; NULL: every
 * one, in the order of its first quota): the pods are read once, each
 * counted for its own namespace.
 */
static int quota_lists(const json_t *quotas, const char *only_ns, const json_t *pods, json_t **out,
		       struct gs_error *err)
{
	struct explain_quota_sum *q = explain_quota_sum_new(quotas, only_ns);
	const json_t *p;
	size_t i;
	int rc = 0;

	*out = NULL;
	json_array_foreach (json_object_get(pods, "items"), i, p)
		if ((rc = explain_quota_sum_add(q, p, err)) < 0)
			break;
	if (rc == 0)
		rc = explain_quota_sum_lists(q, out, err);
	explain_quota_sum_free(q);
	return rc;
}

int explain_quota_lists_from(const json_t *quotas, const json_t *pods, json_t **out,
			     struct gs_error *err)
{
	return quota_lists(quotas, NULL, pods, out, err);
}

int explain_quota_list_from(const json_t *quotas, const char *ns, const json_t *pods, json_t **out,
			    struct gs_error *err)
{
	json_t *lists;

	*out = NULL;
	if (quota_lists(quotas, ns, pods, &lists, err) < 0)
		return -1;
	*out = json_incref(json_object_get(lists, ns));
	if (!*out)
		*out = json_pack("{s:s,s:s,s:{s:s},s:[]}", "apiVersion", "v1", "kind",
				 "ResourceQuotaList", "metadata", "namespace", ns, "items");
	json_decref(lists);
	return 0;
}

int explain_quota_list_build(const struct ydoc_stream *s, const char *ns, const json_t *pods,
			     json_t **out, struct gs_error *err)
{
	json_t *quotas = json_array();
	int rc = 0;

	*out = NULL;
	for (size_t d = 0; d < ydoc_stream_count(s) && rc == 0; d++) {
		json_t *doc = ydoc_stream_doc(s, d);
		if (!kobj_is(doc, "ResourceQuota") || strcmp(ns_of(doc), ns))
			continue;
		json_array_append(quotas, doc);
		if (!recorded(doc))
			rc = explain_quantities_check(s, kobj_get(doc, "spec.hard"), "spec.hard",
						      err);
	}
	if (rc == 0)
		rc = explain_quota_list_from(quotas, ns, pods, out, err);
	json_decref(quotas);
	return rc;
}
