#include "model/kobj.h"

#include <string.h>

#include "base/banned.h"

const json_t *kobj_get(const json_t *obj, const char *path)
{
	const json_t *v = obj;
	const char *p = path;

	while (v && *p) {
		size_t n = strcspn(p, ".");
		v = json_is_object(v) ? json_object_getn(v, p, n) : NULL;
		p += n;
		if (*p == '.')
			p++;
	}
	return v;
}

const json_t *kobj_map(const json_t *obj, const char *path)
{
	const json_t *v = kobj_get(obj, path);
	return json_is_object(v) ? v : NULL;
}

const char *kobj_string(const json_t *obj, const char *path)
{
	return json_string_value(kobj_get(obj, path));
}

const char *kobj_text(const json_t *obj, const char *path)
{
	const char *s = kobj_string(obj, path);
	return s ? s : "";
}

const char *kobj_kind(const json_t *obj)
{
	return kobj_string(obj, "kind");
}

const char *kobj_name(const json_t *obj)
{
	return kobj_string(obj, "metadata.name");
}

const char *kobj_namespace(const json_t *obj)
{
	return kobj_string(obj, "metadata.namespace");
}

const json_t *kobj_labels(const json_t *obj)
{
	return kobj_map(obj, "metadata.labels");
}

const json_t *kobj_annotations(const json_t *obj)
{
	return kobj_map(obj, "metadata.annotations");
}

const char *kobj_label(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(kobj_labels(obj), key));
}

const char *kobj_annotation(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(kobj_annotations(obj), key));
}

bool kobj_is(const json_t *obj, const char *kind)
{
	const char *k = kobj_kind(obj);
	return k && !strcmp(k, kind);
}

long kobj_find(const struct ydoc_stream *s, size_t from, const char *kind, const char *name)
{
	for (size_t i = from; s && i < ydoc_stream_count(s); i++) {
		const json_t *doc = ydoc_stream_doc(s, i);
		const char *n;
		if (!kobj_is(doc, kind))
			continue;
		if (name && (!(n = kobj_name(doc)) || strcmp(n, name)))
			continue;
		return (long)i;
	}
	return -1;
}

size_t kobj_count(const struct ydoc_stream *s, const char *kind)
{
	size_t n = 0;

	for (long i = kobj_find(s, 0, kind, NULL); i >= 0;
	     i = kobj_find(s, (size_t)i + 1, kind, NULL))
		n++;
	return n;
}
