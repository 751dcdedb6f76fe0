#ifndef GS_KOBJ_H
#define GS_KOBJ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "yaml/ydoc.h"

/*
 * Read access to Kubernetes objects held as jansson trees, whether loaded
 * from YAML (ydoc) or received from the apiserver. Every pointer returned is
 * borrowed from the object. A field that is absent, or of another JSON type
 * than asked for, reads as NULL (kobj_text: ""); obj itself may be NULL or
 * no object.
 *
 * Paths name nested object fields joined by '.', e.g. "status.allocatable"
 * or "spec.template.spec". Label and annotation keys contain dots
 * ("nvidia.com/gpu.product"): read them with kobj_label / kobj_annotation,
 * or json_object_get on the map kobj_get returns.
 */

/* The value at path, or NULL. An empty path is obj itself. */
const json_t *kobj_get(const json_t *obj, const char *path);
/* The object at path, or NULL. */
const json_t *kobj_map(const json_t *obj, const char *path);
/* The string at path, or NULL. */
const char *kobj_string(const json_t *obj, const char *path);
/* The string at path, or "" when there is none. */
const char *kobj_text(const json_t *obj, const char *path);

const char *kobj_kind(const json_t *obj);	   /* kind */
const char *kobj_name(const json_t *obj);	   /* metadata.name */
const char *kobj_namespace(const json_t *obj);	   /* metadata.namespace */
const json_t *kobj_labels(const json_t *obj);	   /* metadata.labels, a map */
const json_t *kobj_annotations(const json_t *obj); /* metadata.annotations, a map */
/* The value of a label or annotation that is a string, or NULL. */
const char *kobj_label(const json_t *obj, const char *key);
const char *kobj_annotation(const json_t *obj, const char *key);

/* obj is a mapping whose kind is `kind`. */
bool kobj_is(const json_t *obj, const char *kind);

/*
 * The index of the first document of s, at `from` or after, of kind `kind`
 * and, when name is not NULL, of metadata.name `name`; -1 when there is none.
 * Every one in turn:
 *   for (long i = kobj_find(s, 0, "ConfigMap", NULL); i >= 0;
 *        i = kobj_find(s, (size_t)i + 1, "ConfigMap", NULL))
 */
long kobj_find(const struct ydoc_stream *s, size_t from, const char *kind, const char *name);
/* How many documents of s are of kind `kind`. */
size_t kobj_count(const struct ydoc_stream *s, const char *kind);

#endif
