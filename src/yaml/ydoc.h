#ifndef GS_YDOC_H
#define GS_YDOC_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

/*
 * Multi-document YAML loaded (libyaml) into jansson trees, with the source
 * position of every node kept in a side table for error messages.
 *
 * Scalars resolve as Kubernetes (sigs.k8s.io/yaml, YAML 1.1-ish core) does:
 * a quoted scalar stays a string; plain `2` is an integer, `1.5` a real,
 * `true`/`false` booleans, `null`/`~`/empty null; anchors and aliases are
 * expanded. Limits cap input size, nesting depth and alias expansion so a
 * hostile file yields an error, not an exhausted machine.
 */

struct ydoc_limits {
	size_t max_bytes;   /* whole input */
	unsigned max_depth; /* nesting of mappings/sequences */
	size_t max_nodes;   /* nodes after alias expansion */
	size_t max_docs;    /* documents in one stream */
	bool hide_values;   /* errors never quote scalar text (credentials files) */
	/* distinct anchor names in one document ("more than N anchors in one
	 * document (the anchor limit)"); lookups are hashed, so cost is linear */
	size_t max_anchors;
};

/* Defaults: 64 MiB, depth 256, 4M nodes, 100000 documents, 100000 anchors. */
extern const struct ydoc_limits ydoc_default_limits;

struct ydoc_pos {
	int line; /* 1-based; 0 = unknown */
	int col;  /* 1-based */
};

/* Opaque: owns every document tree and the position table. */
struct ydoc_stream;

/*
 * Load a whole file / buffer. `name` is used in error messages
 * ("name:line:col: what is wrong"). `origin` shifts positions, for YAML
 * embedded in another file (e.g. a ConfigMap `|-` value): it is where the
 * buffer's first character sits, and every line of the buffer is taken to
 * start at origin.col (true of block scalars, whose indentation YAML
 * strips). Pass {0,0} for none. On failure returns -1, *out is NULL and err
 * has file:line:col.
 */
int ydoc_load_file(const char *path, const struct ydoc_limits *limits, struct ydoc_stream **out,
		   struct gs_error *err) GS_WUR;
/*
 * A file of Kubernetes objects as `kubectl apply -f` reads it: every
 * document that is a list (kind List, NodeList, PodList, ... with items, as
 * `kubectl get -o yaml` writes) stands for its items, in order; positions
 * stay those of the file.
 */
int ydoc_load_manifests(const char *path, const struct ydoc_limits *limits,
			struct ydoc_stream **out, struct gs_error *err) GS_WUR;
int ydoc_load_buffer(const char *name, const char *buf, size_t len, struct ydoc_pos origin,
		     const struct ydoc_limits *limits, struct ydoc_stream **out,
		     struct gs_error *err) GS_WUR;

/*
 * Loading only part of each document, for readers that look at a few paths
 * of big streams (check). Every node has a role: the root gets root_role;
 * the value under key K of a mapping with role R gets child_role(ctx, R, K,
 * len), an element of a sequence with role R gets child_role(ctx, R, NULL,
 * 0). YDOC_SKIP drops the node (mapping keys vanish, sequence indices shift,
 * so keep whole sequences whose indices matter); YDOC_KEEP_ALL keeps the
 * whole subtree without asking again. A merge value (<<) has its mapping's
 * role. Dropped parts are still parsed and checked as ydoc_load_buffer
 * would, so a filtered load fails exactly when a full one fails, with the
 * same message. A stream with an alias is loaded in full (the anchor may be
 * in a dropped part).
 */
#define YDOC_KEEP_ALL 0
#define YDOC_SKIP (-1)

struct ydoc_filter {
	int root_role;
	int (*child_role)(void *ctx, int parent_role, const char *key, size_t key_len);
	void *ctx;
};

int ydoc_load_buffer_filtered(const char *name, const char *buf, size_t len, struct ydoc_pos origin,
			      const struct ydoc_limits *limits, const struct ydoc_filter *filter,
			      struct ydoc_stream **out, struct gs_error *err) GS_WUR;

/*
 * One document at a time, for streams too big to hold: after each
 * document, fn runs with a stream that holds just that document (index 0,
 * with its positions), which is dropped afterwards. `index` counts
 * documents from 0; when a filtered load has to start again in full (an
 * alias), fn sees index 0 again and must drop what it kept. fn returns 0 to
 * go on, or -1 having filled err; the rest of the stream is then still
 * parsed (fn is not called again) and a YAML error there is what this
 * returns, so a stream is judged as if loaded whole first. filter may be
 * NULL (keep everything).
 */
typedef int (*ydoc_doc_fn)(void *ctx, const struct ydoc_stream *s, json_t *doc, size_t index,
			   struct gs_error *err);

int ydoc_each_document(const char *name, const char *buf, size_t len, struct ydoc_pos origin,
		       const struct ydoc_limits *limits, const struct ydoc_filter *filter,
		       ydoc_doc_fn fn, void *ctx, struct gs_error *err) GS_WUR;

/*
 * An empty stream named `name`, to gather documents read one at a time
 * (ydoc_each_document): ydoc_stream_adopt adds every document of `src`
 * with its positions (and exact integers) to `dst`; src is left as it is.
 */
struct ydoc_stream *ydoc_stream_new(const char *name);
void ydoc_stream_adopt(struct ydoc_stream *dst, const struct ydoc_stream *src);

size_t ydoc_stream_count(const struct ydoc_stream *s);
/* Borrowed. An empty document is json_null(). */
json_t *ydoc_stream_doc(const struct ydoc_stream *s, size_t i);
const char *ydoc_stream_name(const struct ydoc_stream *s);

/*
 * Where a node starts. For jansson singletons (true/false/null) the position
 * is not unique; use ydoc_stream_key_pos / ydoc_stream_index_pos instead.
 * Return 0 when found, -1 when unknown (pos set to {0,0}).
 */
int ydoc_stream_pos(const struct ydoc_stream *s, const json_t *node, struct ydoc_pos *pos);
/* Position of the value stored under `key` in `object` (falls back to the key). */
int ydoc_stream_key_pos(const struct ydoc_stream *s, const json_t *object, const char *key,
			struct ydoc_pos *pos);
int ydoc_stream_index_pos(const struct ydoc_stream *s, const json_t *array, size_t index,
			  struct ydoc_pos *pos);
/*
 * For a string scalar written as a block (`|`, `|-`, `>`), the position of
 * its first content character, so YAML embedded in it can be loaded with
 * that origin. For other scalars, the scalar's own start.
 */
int ydoc_stream_content_origin(const struct ydoc_stream *s, const json_t *string_node,
			       struct ydoc_pos *origin);

/*
 * Whether a number is an integer beyond int64 that Go keeps exactly
 * (ydoc_resolved.exact_int: 18446744073709551615 is a uint64,
 * 0x10000000000000000 a big.Int): 1 with *digits its decimal digits as
 * encoding/json writes them ("18446744073709551615"), borrowed from the
 * stream, or NULL when it has more than 108; 0 for any other node, whose
 * JSON value is already what Go writes. Readers of resource.Quantity use
 * the digits: the real is only an approximation.
 */
int ydoc_stream_exact_int(const struct ydoc_stream *s, const json_t *node, const char **digits);

/* What a value is, for messages: "a mapping", "a list", "an integer", "null", ... */
const char *ydoc_kind_name(const json_t *v);

/* Fill err with "name:line:col: msg" for node (position may be unknown). */
void ydoc_error_at(const struct ydoc_stream *s, const json_t *node, struct gs_error *err,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/*
 * The same at the value of `key` in the mapping obj (at obj itself when key
 * is NULL or obj has no such key). With no stream (s NULL: the object came
 * from the apiserver) err is just the message; with an unknown position,
 * "name: msg".
 */
void ydoc_error_at_key(const struct ydoc_stream *s, const json_t *obj, const char *key,
		       struct gs_error *err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
void ydoc_verror_at_key(const struct ydoc_stream *s, const json_t *obj, const char *key,
			struct gs_error *err, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

void ydoc_stream_free(struct ydoc_stream *s);

/*
 * Scalar resolution, shared by the tree loader and by streaming readers
 * (check's fast path) so both see the same values. It mirrors go-yaml v2's
 * resolve() as vendored by sigs.k8s.io/yaml (goyaml.v2/resolve.go):
 *   - quoted and block scalars are strings unless explicitly tagged;
 *   - y/Y/yes/Yes/YES/true/True/TRUE/on/On/ON are true, the n/no/false/off
 *     families false (YAML 1.1);
 *   - "", ~, null, Null, NULL are null;
 *   - integers as Go strconv.ParseInt(s, 0, 64) reads them after removing
 *     every '_': sign, 0x/0o/0b prefixes, a leading 0 means octal;
 *     values above int64 go through ParseUint;
 *   - otherwise ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ is a
 *     float (out-of-range floats stay strings, as in Go); .inf/.nan families;
 *   - timestamps stay strings (go-yaml hands interface{} targets the text);
 *   - !!str/!!int/!!float/!!bool/!!null/!!timestamp check the text
 *     ("cannot decode !!str `x` as a !!int"); !!float accepts integers;
 *     !!binary is base64-decoded; any other tag gives a string.
 */
enum ydoc_scalar_type {
	YDOC_SCALAR_IS_NULL,
	YDOC_SCALAR_IS_BOOL,
	YDOC_SCALAR_IS_INT,  /* fits int64: .integer */
	YDOC_SCALAR_IS_REAL, /* .real; also integers beyond int64 (approximated, exact_int) */
	YDOC_SCALAR_IS_STRING,
	YDOC_SCALAR_IS_BINARY, /* !!binary: the text is base64 */
};

struct ydoc_resolved {
	enum ydoc_scalar_type type;
	int boolean;
	long long integer;
	double real;
	int merge; /* the merge key "<<" (plain, or tagged !!merge) */
	/* an integer beyond int64 that Go keeps exactly (a uint64, or a big.Int
	 * for a hex/octal/binary literal past 2^64; a decimal one past 2^64 is a
	 * float64 in Go too): .real approximates it, and a loaded stream knows
	 * its digits (ydoc_stream_exact_int) */
	int exact_int;
};

/*
 * tag: libyaml's resolved tag or NULL; plain: the scalar was plain and
 * untagged (libyaml's plain_implicit). err gets the message only.
 */
int ydoc_resolve(const char *tag, const char *text, size_t len, int plain,
		 struct ydoc_resolved *out, struct gs_error *err) GS_WUR;
/*
 * The resolved scalar as a new JSON value, the way sigs.k8s.io/yaml turns it
 * into JSON. Fails for +-Inf/NaN values ("json: unsupported value: +Inf")
 * and for invalid !!binary data.
 */
int ydoc_resolved_json(const struct ydoc_resolved *r, const char *text, size_t len, json_t **out,
		       struct gs_error *err) GS_WUR;
/*
 * A scalar used as a mapping key, as sigs.k8s.io/yaml turns it into a JSON
 * object key: ints in decimal, floats as Go FormatFloat(f, 'g', -1, 32),
 * booleans "true"/"false"; null is an error. Returns a new string (len in
 * *len_out, may contain NUL).
 */
int ydoc_resolved_key(const struct ydoc_resolved *r, const char *text, size_t len, char **out,
		      size_t *len_out, struct gs_error *err) GS_WUR;

#endif
