#include "fleet/fleet.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "engine/explain_offline.h"
#include "model/kobj.h"
#include "base/strbuf.h"
#include "base/banned.h"

void fleet_init(struct fleet *f)
{
	memset(f, 0, sizeof(*f));
	f->objects = json_array();
	f->all = json_array();
	f->configmaps = json_array();
	f->nodes = json_array();
	f->pods = json_array();
	f->workloads = json_array();
	f->quotas = json_array();
	f->limitranges = json_array();
	f->slices = json_array();
	f->claims = json_array();
	f->claim_templates = json_array();
	f->device_classes = json_array();
	f->events = json_array();
	f->seen = json_object();
}

void fleet_release(struct fleet *f)
{
	json_t **arrays[] = {&f->objects,	 &f->all,	&f->configmaps, &f->nodes,
			     &f->pods,		 &f->workloads, &f->quotas,	&f->limitranges,
			     &f->slices,	 &f->claims,	&f->events,	&f->claim_templates,
			     &f->device_classes, &f->seen};

	for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++) {
		json_decref(*arrays[i]);
		*arrays[i] = NULL;
	}
	for (size_t i = 0; i < f->n_streams; i++)
		ydoc_stream_free(f->streams[i]);
	free(f->streams);
	memset(f, 0, sizeof(*f));
}

void fleet_sources_add(struct fleet_sources *src, const char *path)
{
	if (src->n == src->cap) {
		src->cap = src->cap ? src->cap * 2 : 8;
		src->paths = gs_xrealloc(src->paths, src->cap * sizeof(*src->paths));
	}
	src->paths[src->n++] = path;
}

void fleet_sources_release(struct fleet_sources *src)
{
	free(src->paths);
	memset(src, 0, sizeof(*src));
}

const char *fleet_namespace_of(const json_t *obj)
{
	const char *ns = kobj_text(obj, "metadata.namespace");
	return *ns ? ns : "default";
}

/* Kinds without a namespace: their identity is kind and name. */
static bool cluster_scoped(const char *kind)
{
	static const char *const kinds[] = {"Node", "ResourceSlice", "DeviceClass", "Namespace"};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kind, kinds[i]))
			return true;
	return false;
}

/* The array of f that holds objects of `kind`, or NULL when no command reads it. */
static json_t *array_for(struct fleet *f, const char *kind)
{
	static const char *const workloads[] = {
		"Deployment", "ReplicaSet", "ReplicationController", "StatefulSet", "DaemonSet",
		"Job",	      "CronJob"};
	const struct {
		const char *kind;
		json_t *array;
	} by_kind[] = {
		{"ConfigMap", f->configmaps},
		{"Node", f->nodes},
		{"Pod", f->pods},
		{"ResourceQuota", f->quotas},
		{"LimitRange", f->limitranges},
		{"ResourceSlice", f->slices},
		{"ResourceClaim", f->claims},
		{"ResourceClaimTemplate", f->claim_templates},
		{"DeviceClass", f->device_classes},
		{"Event", f->events},
	};

	for (size_t i = 0; i < sizeof(by_kind) / sizeof(by_kind[0]); i++)
		if (!strcmp(kind, by_kind[i].kind))
			return by_kind[i].array;
	for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
		if (!strcmp(kind, workloads[i]))
			return f->workloads;
	return NULL;
}

/* kubectl's List: a kind ending in "List" with an items list. */
static bool is_list(const json_t *doc)
{
	const char *kind = kobj_text(doc, "kind");
	size_t n = strlen(kind);

	return n >= 4 && !strcmp(kind + n - 4, "List") &&
	       json_is_array(json_object_get(doc, "items"));
}

/* Where a node sits, "file:line:col", for "first at ..." (a new string). */
static char *where(const struct ydoc_stream *s, const json_t *obj)
{
	struct ydoc_pos p = {0, 0};

	if (!s)
		return gs_xstrdup("(made)");
	(void)ydoc_stream_pos(s, obj, &p);
	if (!p.line)
		return gs_xstrdup(ydoc_stream_name(s));
	return gs_xasprintf("%s:%d:%d", ydoc_stream_name(s), p.line, p.col);
}

/* Quotas recorded from a cluster carry their status; their quantities came from the apiserver. */
static bool recorded_quota(const json_t *q)
{
	return json_is_object(kobj_get(q, "status.used"));
}

/*
 * What the engine reads of an object parses, so that it can trust it: a
 * Pod's requests and limits, a ResourceQuota's spec.hard, a LimitRange's
 * quantities; errors at their file:line:col.
 */
static int check_object(const struct ydoc_stream *s, const char *kind, const json_t *doc,
			struct gs_error *err)
{
	static const char *const lr_keys[] = {"default", "defaultRequest", "max", "min",
					      "maxLimitRequestRatio"};
	const json_t *item, *limits;
	size_t i;

	if (!strcmp(kind, "Pod"))
		return explain_pod_check(s, doc, err);
	if (!strcmp(kind, "ResourceQuota"))
		return recorded_quota(doc) ? 0
					   : explain_quantities_check(s, kobj_get(doc, "spec.hard"),
								      "spec.hard", err);
	if (strcmp(kind, "LimitRange"))
		return 0;
	limits = kobj_get(doc, "spec.limits");
	if (limits && !json_is_array(limits)) {
		ydoc_error_at(s, limits, err, "spec.limits: expected a list, got %s",
			      ydoc_kind_name(limits));
		return -1;
	}
	json_array_foreach (limits, i, item) {
		if (!json_is_object(item)) {
			ydoc_error_at(s, item, err, "spec.limits: expected a mapping, got %s",
				      ydoc_kind_name(item));
			return -1;
		}
		for (size_t k = 0; k < sizeof(lr_keys) / sizeof(lr_keys[0]); k++)
			if (explain_quantities_check(s, json_object_get(item, lr_keys[k]),
						     lr_keys[k], err) < 0)
				return -1;
	}
	return 0;
}

/* One document (or List item, at any depth) of stream s. */
static int add_object(struct fleet *f, const struct ydoc_stream *s, json_t *doc, unsigned depth,
		      struct gs_error *err)
{
	const json_t *kind;
	json_t *arr, *item;
	size_t i;

	if (json_is_null(doc))
		return 0; /* an empty document: kubectl skips it */
	if (!json_is_object(doc)) {
		ydoc_error_at(s, doc, err, "expected a Kubernetes object (a mapping), got %s",
			      ydoc_kind_name(doc));
		return -1;
	}
	kind = json_object_get(doc, "kind");
	if (!kind) {
		ydoc_error_at(s, doc, err, "not a Kubernetes object: kind not set");
		return -1;
	}
	if (!json_is_string(kind) || !*json_string_value(kind)) {
		ydoc_error_at_key(s, doc, "kind", err, "kind: expected a kind name, got %s",
				  json_is_string(kind) ? "an empty string" : ydoc_kind_name(kind));
		return -1;
	}
	if (is_list(doc)) {
		if (depth >= 8) {
			ydoc_error_at(s, doc, err, "Lists nested more than 8 deep");
			return -1;
		}
		json_array_foreach (json_object_get(doc, "items"), i, item)
			if (add_object(f, s, item, depth + 1, err) < 0)
				return -1;
		return 0;
	}
	arr = array_for(f, json_string_value(kind));
	if (!arr) {
		f->n_ignored++;
		json_array_append(f->all, doc);
		return 0;
	}
	const json_t *meta = json_object_get(doc, "metadata");
	const json_t *name = json_object_get(meta, "name");
	if (meta && !json_is_object(meta)) {
		ydoc_error_at_key(s, doc, "metadata", err, "metadata: expected a mapping, got %s",
				  ydoc_kind_name(meta));
		return -1;
	}
	if (name && !json_is_string(name)) {
		ydoc_error_at_key(s, meta, "name", err,
				  "%s: metadata.name: expected a string, got %s (quote it)",
				  json_string_value(kind), ydoc_kind_name(name));
		return -1;
	}
	if (!json_is_string(name) || !*json_string_value(name)) {
		ydoc_error_at(s, doc, err, "%s: metadata.name not set", json_string_value(kind));
		return -1;
	}
	const json_t *ns = json_object_get(meta, "namespace");
	if (ns && !json_is_string(ns) && !json_is_null(ns)) {
		ydoc_error_at_key(s, meta, "namespace", err,
				  "metadata.namespace must be a string, got %s",
				  ydoc_kind_name(ns));
		return -1;
	}
	const char *k = json_string_value(kind);
	char *id = cluster_scoped(k) ? gs_xasprintf("%s/%s", k, json_string_value(name))
				     : gs_xasprintf("%s/%s/%s", k, fleet_namespace_of(doc),
						    json_string_value(name));
	const json_t *first = json_object_get(f->seen, id);
	if (first && json_equal(first, doc)) {
		free(id); /* the same object recorded twice (a pod and its PodList) */
		return 0;
	}
	if (first) {
		char *at = where(fleet_stream_of(f, first), first);
		ydoc_error_at(s, doc, err, "%s %s%s%s read twice, and differently (first at %s)", k,
			      cluster_scoped(k) ? "" : fleet_namespace_of(doc),
			      cluster_scoped(k) ? "" : "/", json_string_value(name), at);
		free(at);
		free(id);
		return -1;
	}
	if (check_object(s, k, doc, err) < 0) {
		free(id);
		return -1;
	}
	json_object_set(f->seen, id, doc);
	free(id);
	json_array_append(arr, doc);
	json_array_append(f->objects, doc);
	json_array_append(f->all, doc);
	return 0;
}

int fleet_add_stream(struct fleet *f, struct ydoc_stream *s, struct gs_error *err)
{
	if (f->n_streams == f->cap_streams) {
		f->cap_streams = f->cap_streams ? f->cap_streams * 2 : 8;
		f->streams = gs_xrealloc(f->streams, f->cap_streams * sizeof(*f->streams));
	}
	f->streams[f->n_streams++] = s;
	for (size_t i = 0; i < ydoc_stream_count(s); i++)
		if (add_object(f, s, ydoc_stream_doc(s, i), 0, err) < 0)
			return -1;
	return 0;
}

const struct ydoc_stream *fleet_stream_of(const struct fleet *f, const json_t *obj)
{
	struct ydoc_pos p;

	for (size_t i = 0; obj && i < f->n_streams; i++)
		if (ydoc_stream_pos(f->streams[i], obj, &p) == 0)
			return f->streams[i];
	return NULL;
}

void fleet_error_at(const struct fleet *f, const json_t *obj, const char *key, struct gs_error *err,
		    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ydoc_verror_at_key(fleet_stream_of(f, obj), obj, key, err, fmt, ap);
	va_end(ap);
}

int fleet_configmap(const struct fleet *f, const char *ns, const char *name, const json_t **out,
		    struct gs_error *err)
{
	const json_t *cm;
	size_t i;

	*out = NULL;
	json_array_foreach (f->configmaps, i, cm) {
		if (strcmp(kobj_text(cm, "metadata.name"), name) ||
		    strcmp(fleet_namespace_of(cm), ns))
			continue;
		if (*out) {
			/* add_object refuses a second object of one kind, namespace and name. */
			fleet_error_at(f, cm, NULL, err, "a second ConfigMap %s/%s", ns, name);
			return -1;
		}
		*out = cm;
	}
	return 0;
}

char *fleet_configmap_others(const struct fleet *f, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	const json_t *cm;
	size_t i;
	bool named = false;

	json_array_foreach (f->configmaps, i, cm)
		if (!strcmp(kobj_text(cm, "metadata.name"), name))
			named = true;
	json_array_foreach (f->configmaps, i, cm) {
		if (named && strcmp(kobj_text(cm, "metadata.name"), name))
			continue;
		char *one = gs_xasprintf("%s/%s", fleet_namespace_of(cm),
					 kobj_text(cm, "metadata.name"));
		strbuf_addsep(&sb, ", ", one);
		free(one);
	}
	return strbuf_detach(&sb, NULL);
}
