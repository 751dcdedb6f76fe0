#include "fleet/fleet.h"

#include <stdarg.h>
#include <stdint.h>
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
	for (size_t i = 0; i < f->n_entries; i++)
		free(f->entries[i].id);
	free(f->entries);
	for (size_t i = 0; i < f->n_kept_files; i++) {
		free(f->files[i].name);
		free(f->files[i].buf);
	}
	free(f->files);
	json_decref(f->pod_seen);
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

bool fleet_pod_is_there(const json_t *pod)
{
	return *kobj_text(pod, "status.phase") || *kobj_text(pod, "metadata.uid");
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

static int check_identity(const struct ydoc_stream *s, const json_t *doc, struct gs_error *err);
static int add_object(struct fleet *f, const struct ydoc_stream *s, json_t *doc, unsigned depth,
		      struct gs_error *err);

/* ---- pods streamed ------------------------------------------------------------ */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xBF58476D1CE4E5B9ull;
	x ^= x >> 27;
	x *= 0x94D049BB133111EBull;
	x ^= x >> 31;
	return x;
}

static uint64_t bytes_hash(const char *p, size_t n, uint64_t seed)
{
	uint64_t h = seed ^ 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)p[i];
		h *= 0x100000001b3ull;
	}
	return mix64(h ^ n);
}

/*
 * A hash of v that two values json_equal treats as equal share: the keys
 * of an object in any order (their pairs' hashes are added), an array's
 * items in order, an integer and a real apart. Two seeds make 128 bits.
 */
static uint64_t value_hash(const json_t *v, uint64_t seed)
{
	uint64_t h;
	size_t i;
	const char *k;
	json_t *x;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		h = 0;
		json_object_foreach ((json_t *)v, k, x)
			h += mix64(bytes_hash(k, strlen(k), seed) ^ mix64(value_hash(x, seed) + 1));
		return mix64(h ^ (seed + 1));
	case JSON_ARRAY:
		h = seed + 2;
		json_array_foreach (v, i, x)
			h = mix64(h ^ value_hash(x, seed)) + i;
		return mix64(h);
	case JSON_STRING:
		return bytes_hash(json_string_value(v), json_string_length(v), seed + 3);
	case JSON_INTEGER:
		return mix64((uint64_t)json_integer_value(v) ^ (seed + 4));
	case JSON_REAL: {
		double d = json_real_value(v);
		uint64_t b;
		if (d == 0)
			d = 0; /* -0.0 == 0.0 */
		memcpy(&b, &d, sizeof(b));
		return mix64(b ^ (seed + 5));
	}
	case JSON_TRUE:
		return mix64(seed + 6);
	case JSON_FALSE:
		return mix64(seed + 7);
	default:
		return mix64(seed + 8);
	}
}

static void add_entry(struct fleet *f, const json_t *obj, bool workload, bool there, size_t file,
		      size_t doc, struct ydoc_pos pos, char *id)
{
	if (f->n_entries == f->cap_entries) {
		f->cap_entries = f->cap_entries ? 2 * f->cap_entries : 64;
		f->entries = gs_xrealloc(f->entries, f->cap_entries * sizeof(*f->entries));
	}
	f->entries[f->n_entries++] = (struct fleet_entry){.obj = obj,
							  .workload = workload,
							  .there = there,
							  .file = file,
							  .doc = doc,
							  .pos = pos,
							  .id = id};
}

/*
 * A Pod read twice: the same content (json_equal, by its hash) counts once
 * (*again set), another is an error at `s`/`doc` (or at `pos` of file `name`
 * when doc is NULL). `at` is where this one is, for the next.
 */
static int pod_seen_at(struct fleet *f, const char *id, uint64_t h1, uint64_t h2, const char *at,
		       const struct ydoc_stream *s, const json_t *doc, const char *name,
		       struct ydoc_pos pos, bool *again, struct gs_error *err)
{
	const json_t *first;

	*again = false;
	if (!f->pod_seen)
		f->pod_seen = json_object();
	first = json_object_get(f->pod_seen, id);
	if (!first) {
		json_object_set_new(f->pod_seen, id,
				    json_pack("[I,I,s]", (json_int_t)h1, (json_int_t)h2, at));
		return 0;
	}
	if ((uint64_t)json_integer_value(json_array_get(first, 0)) == h1 &&
	    (uint64_t)json_integer_value(json_array_get(first, 1)) == h2) {
		*again = true; /* the same object recorded twice (a pod and its PodList) */
		return 0;
	}
	const char *slash = strchr(id, '/');
	char *msg = gs_xasprintf("Pod %s read twice, and differently (first at %s)", slash + 1,
				 json_string_value(json_array_get(first, 2)));
	if (doc)
		ydoc_error_at(s, doc, err, "%s", msg);
	else
		gs_error_at(err, name, pos.line, pos.col, "%s", msg);
	free(msg);
	return -1;
}

static char *pod_id(const json_t *doc)
{
	return gs_xasprintf("Pod/%s/%s", fleet_namespace_of(doc), kobj_text(doc, "metadata.name"));
}

static int pod_seen(struct fleet *f, const struct ydoc_stream *s, const json_t *doc, const char *at,
		    bool *again, struct gs_error *err)
{
	char *id = pod_id(doc);
	struct ydoc_pos none = {0, 0};
	int rc = pod_seen_at(f, id, value_hash(doc, 1), value_hash(doc, 0x5bd1e995), at, s, doc,
			     NULL, none, again, err);

	free(id);
	return rc;
}

/* One document of a file read with stream_pods, until the file is read whole. */
struct doc_item {
	size_t doc;	 /* its index in the file */
	size_t kept;	 /* kept: its index in the file's stream; else SIZE_MAX */
	char *id;	 /* a streamed Pod: "Pod/namespace/name" */
	uint64_t h1, h2; /* its hash */
	struct ydoc_pos pos;
	bool there;
	struct gs_error *fail; /* a streamed Pod that fails its checks */
};

struct stream_read {
	struct fleet *f;
	struct ydoc_stream *keep; /* the documents kept, with their positions */
	struct doc_item *items;
	size_t n, cap;
	bool failed; /* a streamed Pod failed: what follows does not matter */
};

static void stream_read_reset(struct stream_read *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->items[i].id);
		free(r->items[i].fail);
	}
	r->n = 0;
	r->failed = false;
}

static bool top_level_pod(const json_t *doc)
{
	return json_is_object(doc) && !strcmp(kobj_text(doc, "kind"), "Pod");
}

static int stream_doc(void *ctx, const struct ydoc_stream *s, json_t *doc, size_t index,
		      struct gs_error *err)
{
	struct stream_read *r = ctx;
	struct doc_item *it;

	(void)err;
	if (index == 0 && (r->n || ydoc_stream_count(r->keep))) {
		/* read again from the start (ydoc_each_document) */
		char *name = gs_xstrdup(ydoc_stream_name(r->keep));
		stream_read_reset(r);
		ydoc_stream_free(r->keep);
		r->keep = ydoc_stream_new(name);
		free(name);
	}
	if (r->failed)
		return 0;
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->items = gs_xrealloc(r->items, r->cap * sizeof(*r->items));
	}
	it = &r->items[r->n++];
	memset(it, 0, sizeof(*it));
	it->doc = index;
	it->kept = SIZE_MAX;
	if (!top_level_pod(doc)) {
		it->kept = ydoc_stream_count(r->keep);
		ydoc_stream_adopt(r->keep, s);
		return 0;
	}
	struct gs_error e;
	/* add_object's order: the identity, a second reading, then the quantities */
	int bad_id = check_identity(s, doc, &e) < 0;
	if (bad_id || check_object(s, "Pod", doc, &e) < 0) {
		it->fail = gs_xmalloc(sizeof(*it->fail));
		*it->fail = e;
		r->failed = true;
		if (bad_id)
			return 0;
	}
	it->id = pod_id(doc);
	it->h1 = value_hash(doc, 1);
	it->h2 = value_hash(doc, 0x5bd1e995);
	(void)ydoc_stream_pos(s, doc, &it->pos);
	it->there = fleet_pod_is_there(doc);
	return 0;
}

/* The documents of one file, read with stream_pods: the Pods checked and let go. */
int fleet_read_streamed(struct fleet *f, const char *name, char *buf, size_t len,
			struct gs_error *err)
{
	struct stream_read r = {.f = f, .keep = ydoc_stream_new(name)};
	struct ydoc_pos none = {0, 0};
	size_t file = f->n_kept_files, streamed = 0;
	int rc = ydoc_each_document(name, buf, len, none, &ydoc_default_limits, NULL, stream_doc,
				    &r, err);

	if (rc == 0) {
		if (f->n_streams == f->cap_streams) {
			f->cap_streams = f->cap_streams ? f->cap_streams * 2 : 8;
			f->streams = gs_xrealloc(f->streams, f->cap_streams * sizeof(*f->streams));
		}
		f->streams[f->n_streams++] = r.keep;
		r.keep = NULL;
	}
	for (size_t i = 0; rc == 0 && i < r.n; i++) {
		struct doc_item *it = &r.items[i];
		const struct ydoc_stream *ks = f->streams[f->n_streams - 1];
		size_t before = f->n_entries;
		if (it->kept != SIZE_MAX) {
			rc = add_object(f, ks, ydoc_stream_doc(ks, it->kept), 0, err);
			/* a List's Pods and the workloads: at this document */
			for (size_t e = before; e < f->n_entries; e++) {
				f->entries[e].file = file;
				f->entries[e].doc = it->doc;
			}
			continue;
		}
		bool again = false;
		if (it->id) {
			char *at = gs_xasprintf("%s:%d:%d", name, it->pos.line, it->pos.col);
			rc = pod_seen_at(f, it->id, it->h1, it->h2, at, NULL, NULL, name, it->pos,
					 &again, err);
			free(at);
		}
		if (rc == 0 && it->fail) {
			*err = *it->fail;
			rc = -1;
		}
		if (rc < 0 || again)
			continue;
		const char *slash = strchr(it->id, '/');
		add_entry(f, NULL, false, it->there, file, it->doc, it->pos, gs_xstrdup(slash + 1));
		f->n_streamed++;
		streamed++;
	}
	stream_read_reset(&r);
	free(r.items);
	ydoc_stream_free(r.keep);
	for (size_t e = 0; !streamed && e < f->n_entries; e++)
		if (f->entries[e].file == file)
			f->entries[e].file = SIZE_MAX; /* nothing to read again */
	if (rc == 0 && streamed) {
		f->files = gs_xrealloc(f->files, (f->n_kept_files + 1) * sizeof(*f->files));
		f->files[f->n_kept_files++] = (struct fleet_file){gs_xstrdup(name), buf, len};
		return 1; /* buf kept */
	}
	return rc;
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
	if (check_identity(s, doc, err) < 0)
		return -1;
	const char *k = json_string_value(kind);
	const json_t *name = kobj_get(doc, "metadata.name");
	char *id = cluster_scoped(k) ? gs_xasprintf("%s/%s", k, json_string_value(name))
				     : gs_xasprintf("%s/%s/%s", k, fleet_namespace_of(doc),
						    json_string_value(name));
	if (f->stream_pods && !strcmp(k, "Pod")) {
		struct ydoc_pos p = {0, 0};
		bool again = false;
		char *at = where(s, doc);
		int rc = pod_seen(f, s, doc, at, &again, err);
		free(at);
		free(id);
		if (rc < 0 || again)
			return rc;
		if (check_object(s, k, doc, err) < 0)
			return -1;
		(void)ydoc_stream_pos(s, doc, &p);
		add_entry(f, doc, false, fleet_pod_is_there(doc), SIZE_MAX, 0, p, NULL);
		json_array_append(arr, doc);
		json_array_append(f->objects, doc);
		json_array_append(f->all, doc);
		return 0;
	}
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
	if (f->stream_pods && arr == f->workloads) {
		struct ydoc_pos p = {0, 0};
		(void)ydoc_stream_pos(s, doc, &p);
		add_entry(f, doc, true, false, SIZE_MAX, 0, p, NULL);
	}
	json_array_append(arr, doc);
	json_array_append(f->objects, doc);
	json_array_append(f->all, doc);
	return 0;
}

/* What add_object asks of every object of a kind the fleet reads: metadata, its name, namespace. */
static int check_identity(const struct ydoc_stream *s, const json_t *doc, struct gs_error *err)
{
	const json_t *kind = json_object_get(doc, "kind");
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

struct reread {
	const struct fleet *f;
	size_t *i;
	size_t file;
	size_t last; /* documents up to this one were seen (SIZE_MAX: none) */
	fleet_entry_fn fn;
	void *ctx;
};

static int reread_doc(void *ctx, const struct ydoc_stream *s, json_t *doc, size_t index,
		      struct gs_error *err)
{
	struct reread *r = ctx;
	const struct fleet *f = r->f;

	(void)s;
	if (r->last != SIZE_MAX && index <= r->last)
		return 0; /* read again from the start: seen already */
	r->last = index;
	for (; *r->i < f->n_entries && f->entries[*r->i].file == r->file &&
	       f->entries[*r->i].doc <= index;
	     (*r->i)++) {
		const struct fleet_entry *e = &f->entries[*r->i];
		if (e->obj ? r->fn(r->ctx, e, e->obj, err) < 0
			   : e->doc == index && r->fn(r->ctx, e, doc, err) < 0) {
			(*r->i)++;
			return -1;
		}
	}
	return 0;
}

int fleet_each_entry(const struct fleet *f, fleet_entry_fn fn, void *ctx, struct gs_error *err)
{
	size_t i = 0;

	while (i < f->n_entries) {
		const struct fleet_entry *e = &f->entries[i];
		if (e->file == SIZE_MAX) {
			if (fn(ctx, e, e->obj, err) < 0)
				return -1;
			i++;
			continue;
		}
		const struct fleet_file *file = &f->files[e->file];
		struct reread r = {f, &i, e->file, SIZE_MAX, fn, ctx};
		struct ydoc_pos none = {0, 0};
		if (ydoc_each_document(file->name, file->buf, file->len, none, &ydoc_default_limits,
				       NULL, reread_doc, &r, err) < 0)
			return -1;
		/* what is left of the file has its objects kept */
		for (; i < f->n_entries && f->entries[i].file == r.file; i++)
			if (f->entries[i].obj &&
			    fn(ctx, &f->entries[i], f->entries[i].obj, err) < 0)
				return -1;
	}
	return 0;
}
