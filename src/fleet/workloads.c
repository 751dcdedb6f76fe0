/*
 * The pods workloads make, as their controllers would create them on
 * apply (k8s.io/kubernetes v1.34 pkg/controller: deployment and replicaset,
 * statefulset, job, cronjob, daemon), with deterministic names where the
 * controllers pick random suffixes.
 */
#include "fleet/workloads.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/explain.h"
#include "engine/explain_offline.h"
#include "model/kobj.h"
#include "base/strbuf.h"
#include "base/banned.h"

/* k8s.io/apimachinery pkg/util/rand: the letters SafeEncodeString maps bytes to. */
static const char alphanums[] = "bcdfghjklmnpqrstvwxz2456789";

static bool is(const json_t *w, const char *kind)
{
	return !strcmp(kobj_text(w, "kind"), kind);
}

static bool is_workload(const json_t *obj)
{
	static const char *const kinds[] = {"Deployment",  "ReplicaSet", "ReplicationController",
					    "StatefulSet", "DaemonSet",	 "Job",
					    "CronJob"};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (is(obj, kinds[i]))
			return true;
	return false;
}

/* The workload's spec holding the counts and the pod template's path under it. */
static const json_t *job_spec(const json_t *w)
{
	return is(w, "CronJob") ? kobj_get(w, "spec.jobTemplate.spec") : kobj_get(w, "spec");
}

/*
 * A count of the spec: absent or null is `dflt`; else a whole number from
 * 0 to FLEET_MAX_WORKLOAD_PODS, or an error at it.
 */
static int count_of(const struct fleet *f, const json_t *spec, const char *path, const char *key,
		    long long dflt, long long *out, struct gs_error *err)
{
	const json_t *v = json_object_get(spec, key);

	*out = dflt;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		fleet_error_at(f, spec, key, err, "%s.%s: expected a whole number >= 0, got %s",
			       path, key, ydoc_kind_name(v));
		return -1;
	}
	if (json_integer_value(v) > FLEET_MAX_WORKLOAD_PODS) {
		fleet_error_at(f, spec, key, err,
			       "%s.%s: %lld pods, more than %d from one workload", path, key,
			       (long long)json_integer_value(v), FLEET_MAX_WORKLOAD_PODS);
		return -1;
	}
	*out = json_integer_value(v);
	return 0;
}

/* How many pods the workload's controller creates at once (nodes aside). */
static int pod_count(const struct fleet *f, const json_t *w, long long *n, struct gs_error *err)
{
	const json_t *spec = job_spec(w);
	const char *path = is(w, "CronJob") ? "spec.jobTemplate.spec" : "spec";
	long long parallelism, completions;

	if (is(w, "CronJob") && json_is_true(kobj_get(w, "spec.suspend"))) {
		*n = 0; /* a suspended CronJob starts no Job */
		return 0;
	}
	if (!is(w, "Job") && !is(w, "CronJob"))
		return count_of(f, spec, path, "replicas", 1, n, err);
	/* The job controller: parallelism pods, at most the completions left. */
	if (count_of(f, spec, path, "parallelism", 1, &parallelism, err) < 0 ||
	    count_of(f, spec, path, "completions", -1, &completions, err) < 0)
		return -1;
	*n = completions >= 0 && completions < parallelism ? completions : parallelism;
	if (json_is_true(json_object_get(spec, "suspend")))
		*n = 0;
	return 0;
}

/* One requirement of a LabelSelector's matchExpressions against the labels. */
static bool expression_holds(const json_t *e, const json_t *labels)
{
	const char *op = kobj_text(e, "operator");
	const char *have = kobj_string(labels, kobj_text(e, "key"));
	const json_t *v;
	size_t i;
	bool in = false;

	json_array_foreach (json_object_get(e, "values"), i, v)
		if (have && json_is_string(v) && !strcmp(json_string_value(v), have))
			in = true;
	if (!strcmp(op, "In"))
		return in;
	if (!strcmp(op, "NotIn"))
		return !in;
	if (!strcmp(op, "Exists"))
		return have != NULL;
	if (!strcmp(op, "DoesNotExist"))
		return have == NULL;
	return false;
}

/* metav1.LabelSelectorAsSelector(sel).Matches(labels); a map selector (RC) is matchLabels. */
static bool selector_matches(const json_t *sel, const json_t *labels, bool map_only)
{
	const json_t *match = map_only ? sel : json_object_get(sel, "matchLabels"), *e;
	const char *k;
	json_t *v;
	size_t i;

	json_object_foreach ((json_t *)match, k, v) {
		const char *have = kobj_string(labels, k);
		if (!have || !json_is_string(v) || strcmp(have, json_string_value(v)))
			return false;
	}
	if (!map_only)
		json_array_foreach (json_object_get(sel, "matchExpressions"), i, e)
			if (!expression_holds(e, labels))
				return false;
	return true;
}

/* What the apiserver's validation refuses of a workload's template and selector. */
static int check_workload(const struct fleet *f, const json_t *w, const json_t *tmpl,
			  struct gs_error *err)
{
	const char *where = is(w, "CronJob") ? "spec.jobTemplate.spec.template" : "spec.template";
	const json_t *spec = json_object_get(tmpl, "spec");
	const json_t *labels = kobj_get(tmpl, "metadata.labels");
	bool apps = is(w, "Deployment") || is(w, "ReplicaSet") || is(w, "StatefulSet") ||
		    is(w, "DaemonSet");

	if (!json_is_object(tmpl)) {
		fleet_error_at(f, w, NULL, err, "%s %s: %s: %s", kobj_text(w, "kind"),
			       kobj_text(w, "metadata.name"), where,
			       tmpl ? "expected a mapping" : "Required value");
		return -1;
	}
	if (!json_is_object(spec)) {
		fleet_error_at(f, tmpl, spec ? "spec" : NULL, err, "%s.spec: %s", where,
			       spec ? "expected a mapping" : "Required value");
		return -1;
	}
	if (labels && !json_is_object(labels)) {
		fleet_error_at(f, labels, NULL, err, "%s.metadata.labels: expected a mapping",
			       where);
		return -1;
	}
	if (explain_pod_check(fleet_stream_of(f, tmpl), tmpl, err) < 0)
		return -1;
	const json_t *sel = kobj_get(w, "spec.selector");
	if (apps && !json_is_object(sel)) {
		fleet_error_at(f, w, sel ? "spec" : NULL, err,
			       "%s %s: spec.selector: Required value", kobj_text(w, "kind"),
			       kobj_text(w, "metadata.name"));
		return -1;
	}
	if (apps && !json_object_size(json_object_get(sel, "matchLabels")) &&
	    !json_array_size(json_object_get(sel, "matchExpressions"))) {
		fleet_error_at(f, sel, NULL, err,
			       "spec.selector: Invalid value: an empty selector selects every pod "
			       "(the apiserver refuses it)");
		return -1;
	}
	if ((apps || (is(w, "ReplicationController") && json_object_size(sel))) &&
	    !selector_matches(sel, labels, !apps)) {
		fleet_error_at(f, labels ? labels : tmpl, NULL, err,
			       "%s.metadata.labels: Invalid value: `selector` does not match "
			       "template `labels`",
			       where);
		return -1;
	}
	return 0;
}

/* A Deployment's pod-template-hash: FNV-32a of the template, as SafeEncodeString writes it. */
static char *template_hash(const json_t *tmpl)
{
	char *text = json_dumps(tmpl, JSON_COMPACT | JSON_SORT_KEYS);
	uint32_t h = 2166136261u;
	char digits[16], *out;

	for (const char *p = text ? text : ""; *p; p++) {
		h ^= (unsigned char)*p;
		h *= 16777619u;
	}
	free(text);
	snprintf(digits, sizeof(digits), "%u", (unsigned)h);
	out = gs_xstrdup(digits);
	for (char *p = out; *p; p++)
		*p = alphanums[(unsigned char)*p % (sizeof(alphanums) - 1)];
	return out;
}

/* A pod of the template: name, the workload's namespace, labels and annotations, the spec. */
static json_t *new_pod(const json_t *w, const json_t *tmpl, const char *name)
{
	const json_t *labels = kobj_get(tmpl, "metadata.labels");
	const json_t *ann = kobj_get(tmpl, "metadata.annotations");
	json_t *meta = json_pack("{s:s,s:s}", "name", name, "namespace", fleet_namespace_of(w));

	json_object_set_new(meta, "labels",
			    json_is_object(labels) ? json_deep_copy(labels) : json_object());
	if (json_is_object(ann))
		json_object_set_new(meta, "annotations", json_deep_copy(ann));
	return json_pack("{s:s,s:s,s:o,s:o}", "apiVersion", "v1", "kind", "Pod", "metadata", meta,
			 "spec", json_deep_copy(json_object_get(tmpl, "spec")));
}

static void set_label(json_t *pod, const char *key, const char *value)
{
	json_object_set_new(json_object_get(json_object_get(pod, "metadata"), "labels"), key,
			    json_string(value));
}

/* v1helper.AddOrUpdateTolerationInPodSpec: append unless an equal toleration is there. */
static void add_toleration(json_t *spec, const char *key, const char *effect)
{
	json_t *tols = json_object_get(spec, "tolerations"), *t;
	size_t i;

	if (!json_is_array(tols)) {
		tols = json_array();
		json_object_set_new(spec, "tolerations", tols);
	}
	json_array_foreach (tols, i, t)
		if (!strcmp(kobj_text(t, "key"), key) && !strcmp(kobj_text(t, "effect"), effect) &&
		    !strcmp(kobj_text(t, "operator"), "Exists") && !*kobj_text(t, "value"))
			return;
	json_array_append_new(tols, json_pack("{s:s,s:s,s:s}", "key", key, "operator", "Exists",
					      "effect", effect));
}

/* daemonset_util.go AddOrUpdateDaemonPodTolerations. */
static void add_daemon_tolerations(json_t *spec)
{
	add_toleration(spec, "node.kubernetes.io/not-ready", "NoExecute");
	add_toleration(spec, "node.kubernetes.io/unreachable", "NoExecute");
	add_toleration(spec, "node.kubernetes.io/disk-pressure", "NoSchedule");
	add_toleration(spec, "node.kubernetes.io/memory-pressure", "NoSchedule");
	add_toleration(spec, "node.kubernetes.io/pid-pressure", "NoSchedule");
	add_toleration(spec, "node.kubernetes.io/unschedulable", "NoSchedule");
	if (json_is_true(json_object_get(spec, "hostNetwork")))
		add_toleration(spec, "node.kubernetes.io/network-unavailable", "NoSchedule");
}

/* daemon_controller.go predicates: node name, required node affinity and selector, taints. */
static bool daemon_runs_on(const json_t *spec, const json_t *node)
{
	const char *want = kobj_text(spec, "nodeName");
	const json_t *taint;
	size_t i;
	char *why;

	if (*want && strcmp(want, kobj_text(node, "metadata.name")))
		return false;
	why = explain_selector_mismatch(spec, node);
	if (why) {
		free(why);
		return false;
	}
	json_array_foreach (kobj_get(node, "spec.taints"), i, taint) {
		const char *effect = kobj_text(taint, "effect");
		if ((!strcmp(effect, "NoSchedule") || !strcmp(effect, "NoExecute")) &&
		    !explain_tolerates(json_object_get(spec, "tolerations"), taint))
			return false;
	}
	return true;
}

/* ReplaceDaemonSetPodNodeNameNodeAffinity: the required terms become "metadata.name In [node]". */
static void pin_to_node(json_t *spec, const char *node)
{
	json_t *aff = json_object_get(spec, "affinity"), *na;
	json_t *term = json_pack("{s:[{s:s,s:s,s:[s]}]}", "matchFields", "key", "metadata.name",
				 "operator", "In", "values", node);

	if (!json_is_object(aff)) {
		aff = json_object();
		json_object_set_new(spec, "affinity", aff);
	}
	na = json_object_get(aff, "nodeAffinity");
	if (!json_is_object(na)) {
		na = json_object();
		json_object_set_new(aff, "nodeAffinity", na);
	}
	json_object_set_new(na, "requiredDuringSchedulingIgnoredDuringExecution",
			    json_pack("{s:[o]}", "nodeSelectorTerms", term));
}

static int daemon_pods(const json_t *w, const json_t *tmpl, const json_t *nodes, json_t *out)
{
	const json_t *items = json_is_array(nodes) ? nodes : json_object_get(nodes, "items");
	const json_t *node;
	size_t i;

	json_array_foreach (items, i, node) {
		const char *name = kobj_text(node, "metadata.name");
		char *pod_name = gs_xasprintf("%s-%s", kobj_text(w, "metadata.name"), name);
		json_t *pod = new_pod(w, tmpl, pod_name);
		json_t *spec = json_object_get(pod, "spec");
		free(pod_name);
		add_daemon_tolerations(spec);
		if (!daemon_runs_on(spec, node)) {
			json_decref(pod);
			continue;
		}
		pin_to_node(spec, name);
		json_array_append_new(out, pod);
	}
	return 0;
}

int fleet_workload_pods(const struct fleet *f, const json_t *w, const json_t *nodes, json_t *out,
			struct gs_error *err)
{
	const json_t *tmpl = kobj_get(job_spec(w), "template");
	const char *name = kobj_text(w, "metadata.name");
	long long n = 0, start = 0;
	char *hash = NULL;

	if (*kobj_text(w, "metadata.uid"))
		return 0; /* recorded from a cluster: its pods are the ones recorded */
	if (is(w, "CronJob") && !json_is_object(kobj_get(w, "spec.jobTemplate.spec"))) {
		fleet_error_at(f, w, NULL, err, "CronJob %s: spec.jobTemplate.spec: Required value",
			       name);
		return -1;
	}
	if (check_workload(f, w, tmpl, err) < 0)
		return -1;
	if (is(w, "DaemonSet"))
		return daemon_pods(w, tmpl, nodes, out);
	if (pod_count(f, w, &n, err) < 0)
		return -1;
	if (is(w, "StatefulSet") &&
	    count_of(f, kobj_get(w, "spec.ordinals"), "spec.ordinals", "start", 0, &start, err) < 0)
		return -1;
	if (is(w, "Deployment"))
		hash = template_hash(tmpl);
	for (long long i = 0; i < n; i++) {
		char *pod_name = hash ? gs_xasprintf("%s-%s-%lld", name, hash, i)
				      : gs_xasprintf("%s-%lld", name, start + i);
		json_t *pod = new_pod(w, tmpl, pod_name);
		if (hash)
			set_label(pod, "pod-template-hash", hash);
		if (is(w, "StatefulSet")) {
			char *index = gs_xasprintf("%lld", start + i);
			set_label(pod, "statefulset.kubernetes.io/pod-name", pod_name);
			set_label(pod, "apps.kubernetes.io/pod-index", index);
			free(index);
		}
		if (is(w, "Job") || is(w, "CronJob")) {
			set_label(pod, "batch.kubernetes.io/job-name", name);
			set_label(pod, "job-name", name);
		}
		free(pod_name);
		json_array_append_new(out, pod);
	}
	free(hash);
	return 0;
}

/* "the Pod at file:line:col", or "StatefulSet s at file:line:col" for a pod it made. */
static char *origin(const struct fleet *f, const json_t *obj, const json_t *maker)
{
	const json_t *at;

	if (json_is_null(maker))
		maker = NULL;
	at = maker ? maker : obj;
	const struct ydoc_stream *s = fleet_stream_of(f, at);
	struct ydoc_pos p = {0, 0};
	char *where;

	if (s)
		(void)ydoc_stream_pos(s, at, &p);
	where = s ? gs_xasprintf("%s:%d:%d", ydoc_stream_name(s), p.line, p.col)
		  : gs_xstrdup("(made)");
	char *full = maker ? gs_xasprintf("%s %s at %s", kobj_text(maker, "kind"),
					  kobj_text(maker, "metadata.name"), where)
			   : gs_xasprintf("the Pod at %s", where);
	free(where);
	return full;
}

/* Refuse a second pod of one namespace and name, as the apiserver refuses its create. */
static int claim_name(const struct fleet *f, json_t *names, const json_t *pod, const json_t *maker,
		      struct gs_error *err)
{
	char *id = gs_xasprintf("%s/%s", fleet_namespace_of(pod), kobj_text(pod, "metadata.name"));
	const json_t *first = json_object_get(names, id);
	int rc = 0;

	if (first) {
		char *a = origin(f, json_array_get(first, 0), json_array_get(first, 1));
		char *b = origin(f, pod, maker);
		gs_error_set(err, "pod %s of %s: a pod of that name is there already (%s)", id, b,
			     a);
		free(a);
		free(b);
		rc = -1;
	} else {
		json_object_set_new(names, id,
				    json_pack("[O,O]", pod, maker ? maker : json_null()));
	}
	free(id);
	return rc;
}

int fleet_pods(const struct fleet *f, const json_t *nodes, json_t **existing, json_t **batch,
	       struct gs_error *err)
{
	json_t *there = json_array(), *made = json_array(), *names = json_object(), *obj;
	size_t i;
	int rc = -1;

	*existing = *batch = NULL;
	json_array_foreach (f->objects, i, obj) {
		if (kobj_is(obj, "Pod")) {
			if (claim_name(f, names, obj, NULL, err) < 0)
				goto out;
			if (fleet_pod_is_there(obj)) {
				json_array_append(there, obj);
				continue;
			}
			/* LimitRanger changes a copy: the Pod as read keeps its positions. */
			json_t *copy = json_array_size(f->limitranges) ? json_deep_copy(obj) : NULL;
			json_array_append(made,
					  copy && fleet_limitranges_apply(f, copy) ? copy : obj);
			json_decref(copy);
			continue;
		}
		if (!is_workload(obj))
			continue;
		size_t k;
		json_t *pods = json_array(), *pod;
		if (fleet_workload_pods(f, obj, nodes, pods, err) < 0) {
			json_decref(pods);
			goto out;
		}
		json_array_foreach (pods, k, pod) {
			if (claim_name(f, names, pod, obj, err) < 0) {
				json_decref(pods);
				goto out;
			}
			(void)fleet_limitranges_apply(f, pod);
			json_array_append(made, pod);
		}
		json_decref(pods);
	}
	*existing =
		json_pack("{s:s,s:s,s:O}", "apiVersion", "v1", "kind", "PodList", "items", there);
	*batch = json_incref(made);
	rc = 0;
out:
	json_decref(there);
	json_decref(made);
	json_decref(names);
	return rc;
}

/* "the Pod at file:line:col" or "StatefulSet s at file:line:col": where entry e is. */
static char *entry_origin(const struct fleet *f, const struct fleet_entry *e)
{
	if (e->workload)
		return origin(f, e->obj, e->obj);
	if (e->obj)
		return origin(f, e->obj, NULL);
	return gs_xasprintf("the Pod at %s:%d:%d", f->files[e->file].name, e->pos.line, e->pos.col);
}

/* claim_name's rule for a fleet read with stream_pods: names -> the index of an entry. */
static int claim_entry(const struct fleet *f, json_t *names, const char *id, size_t e,
		       struct gs_error *err)
{
	const json_t *first = json_object_get(names, id);

	if (!first) {
		json_object_set_new(names, id, json_integer((json_int_t)e));
		return 0;
	}
	char *a = entry_origin(f, &f->entries[json_integer_value(first)]);
	char *b = entry_origin(f, &f->entries[e]);
	gs_error_set(err, "pod %s of %s: a pod of that name is there already (%s)", id, b, a);
	free(a);
	free(b);
	return -1;
}

int fleet_pods_check(const struct fleet *f, const json_t *nodes, size_t *n_batch,
		     struct gs_error *err)
{
	json_t *names = json_object(), *pods, *pod;
	int rc = -1;
	size_t k;

	*n_batch = 0;
	for (size_t i = 0; i < f->n_entries; i++) {
		const struct fleet_entry *e = &f->entries[i];
		if (!e->workload) {
			char *id = e->id ? NULL
					 : gs_xasprintf("%s/%s", fleet_namespace_of(e->obj),
							kobj_text(e->obj, "metadata.name"));
			int r = claim_entry(f, names, e->id ? e->id : id, i, err);
			free(id);
			if (r < 0)
				goto out;
			*n_batch += !e->there;
			continue;
		}
		pods = json_array();
		if (fleet_workload_pods(f, e->obj, nodes, pods, err) < 0) {
			json_decref(pods);
			goto out;
		}
		json_array_foreach (pods, k, pod) {
			char *id = gs_xasprintf("%s/%s", fleet_namespace_of(pod),
						kobj_text(pod, "metadata.name"));
			int r = claim_entry(f, names, id, i, err);
			free(id);
			if (r < 0) {
				json_decref(pods);
				goto out;
			}
		}
		*n_batch += json_array_size(pods);
		json_decref(pods);
	}
	rc = 0;
out:
	json_decref(names);
	return rc;
}

struct each_pod {
	const struct fleet *f;
	const json_t *nodes;
	bool there;
	fleet_pod_fn fn;
	void *ctx;
};

static int each_entry(void *ctx, const struct fleet_entry *e, const json_t *obj,
		      struct gs_error *err)
{
	struct each_pod *x = ctx;
	json_t *pods, *pod;
	size_t k;
	int rc = 0;

	if (!e->workload) {
		if (e->there != x->there)
			return 0;
		if (x->there)
			return x->fn(x->ctx, obj, err);
		/* LimitRanger changes a copy: the Pod as read keeps its positions. */
		json_t *copy = json_array_size(x->f->limitranges) ? json_deep_copy(obj) : NULL;
		rc = x->fn(x->ctx, copy && fleet_limitranges_apply(x->f, copy) ? copy : obj, err);
		json_decref(copy);
		return rc;
	}
	if (x->there)
		return 0;
	pods = json_array();
	rc = fleet_workload_pods(x->f, obj, x->nodes, pods, err);
	json_array_foreach (pods, k, pod) {
		if (rc < 0)
			break;
		(void)fleet_limitranges_apply(x->f, pod);
		rc = x->fn(x->ctx, pod, err);
	}
	json_decref(pods);
	return rc;
}

int fleet_pods_each(const struct fleet *f, const json_t *nodes, bool there, fleet_pod_fn fn,
		    void *ctx, struct gs_error *err)
{
	struct each_pod x = {f, nodes, there, fn, ctx};

	return fleet_each_entry(f, each_entry, &x, err);
}
