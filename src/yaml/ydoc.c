/*
 * YAML -> jansson, the way Kubernetes reads YAML (sigs.k8s.io/yaml over
 * go-yaml v2): YAML 1.1 scalar resolution, anchors and aliases expanded,
 * merge keys, later duplicate keys overwrite earlier ones (non-strict mode),
 * non-string keys turned into strings. Positions live in hash tables next to
 * the trees.
 */
#include "yaml/ydoc.h"

#include <yaml.h> /* libyaml: found in the system dirs, src/ is -iquote only */

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/gonum.h"
#include "base/readfile.h"
#include "base/strbuf.h"
#include "yaml/ydocfast.h"
#include "base/banned.h"

const struct ydoc_limits ydoc_default_limits = {
	.max_bytes = 64u << 20,
	.max_depth = 256,
	.max_nodes = 4u << 20,
	.max_docs = 100000,
	.max_anchors = 100000,
};

/* ---- position tables: (pointer, slot) -> position ---- */

struct pos_entry {
	uintptr_t a; /* 0 = empty */
	uint64_t b;
	struct ydoc_pos pos;
};

struct pos_table {
	struct pos_entry *e;
	size_t n;
	size_t cap; /* power of two */
};

static uint64_t pos_hash(uintptr_t a, uint64_t b)
{
	uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ull;

	h ^= b + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 29;
	return h;
}

static void pos_table_grow(struct pos_table *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 64;
	struct pos_entry *ne = gs_xcalloc(ncap, sizeof(*ne));

	for (size_t i = 0; i < t->cap; i++) {
		struct pos_entry *o = &t->e[i];
		size_t j;

		if (!o->a)
			continue;
		j = pos_hash(o->a, o->b) & (ncap - 1);
		while (ne[j].a)
			j = (j + 1) & (ncap - 1);
		ne[j] = *o;
	}
	free(t->e);
	t->e = ne;
	t->cap = ncap;
}

static void pos_table_put(struct pos_table *t, const void *ptr, uint64_t b, struct ydoc_pos pos)
{
	uintptr_t a = (uintptr_t)ptr;
	size_t j;

	if ((t->n + 1) * 4 > t->cap * 3)
		pos_table_grow(t);
	j = pos_hash(a, b) & (t->cap - 1);
	while (t->e[j].a) {
		if (t->e[j].a == a && t->e[j].b == b) {
			t->e[j].pos = pos;
			return;
		}
		j = (j + 1) & (t->cap - 1);
	}
	t->e[j].a = a;
	t->e[j].b = b;
	t->e[j].pos = pos;
	t->n++;
}

static int pos_table_get(const struct pos_table *t, const void *ptr, uint64_t b,
			 struct ydoc_pos *pos)
{
	uintptr_t a = (uintptr_t)ptr;
	size_t j;

	if (t->cap && a) {
		j = pos_hash(a, b) & (t->cap - 1);
		while (t->e[j].a) {
			if (t->e[j].a == a && t->e[j].b == b) {
				*pos = t->e[j].pos;
				return 0;
			}
			j = (j + 1) & (t->cap - 1);
		}
	}
	pos->line = 0;
	pos->col = 0;
	return -1;
}

/* Slots: array indices as they are, object keys as a hash with the top bit set. */
static uint64_t key_slot(const char *key, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)key[i];
		h *= 0x100000001b3ull;
	}
	return h | (1ull << 63);
}

static uint64_t index_slot(size_t i)
{
	return (uint64_t)i & ~(1ull << 63);
}

/*
 * Integers go-yaml keeps exactly beyond int64 (uint64, big.Int), which a
 * JSON real cannot hold: node -> decimal digits. The table holds a
 * reference to each node, so no other node can take its address.
 */
struct exact_entry {
	json_t *node; /* NULL = empty */
	char *digits; /* NULL: more digits than kept */
};

struct exact_table {
	struct exact_entry *e;
	size_t n;
	size_t cap; /* power of two */
};

static void exact_table_put(struct exact_table *t, json_t *node, char *digits)
{
	size_t j;

	if ((t->n + 1) * 2 > t->cap) {
		struct exact_table g = {.e = gs_xcalloc(t->cap ? t->cap * 2 : 16, sizeof(*t->e)),
					.n = 0,
					.cap = t->cap ? t->cap * 2 : 16};

		for (size_t i = 0; i < t->cap; i++)
			if (t->e[i].node)
				exact_table_put(&g, t->e[i].node, t->e[i].digits);
		free(t->e);
		*t = g;
	}
	j = (size_t)pos_hash((uintptr_t)node, 1) & (t->cap - 1);
	while (t->e[j].node) {
		if (t->e[j].node == node) {
			free(digits);
			return;
		}
		j = (j + 1) & (t->cap - 1);
	}
	t->e[j].node = node;
	t->e[j].digits = digits;
	t->n++;
}

static const struct exact_entry *exact_table_get(const struct exact_table *t, const json_t *node)
{
	size_t j;

	if (!t->n)
		return NULL;
	j = (size_t)pos_hash((uintptr_t)node, 1) & (t->cap - 1);
	for (; t->e[j].node; j = (j + 1) & (t->cap - 1))
		if (t->e[j].node == node)
			return &t->e[j];
	return NULL;
}

static void exact_table_clear(struct exact_table *t)
{
	for (size_t i = 0; t->n && i < t->cap; i++) {
		if (t->e[i].node) {
			json_decref(t->e[i].node);
			free(t->e[i].digits);
			t->e[i].node = NULL;
			t->n--;
		}
	}
}

/* ---- the stream ---- */

struct ydoc_stream {
	char *name;
	json_t **docs;
	size_t n_docs;
	size_t cap_docs;
	struct pos_table nodes;	  /* node -> start */
	struct pos_table slots;	  /* (container, key/index) -> value start */
	struct pos_table origins; /* block scalar -> first content character */
	struct exact_table exact; /* integers beyond int64 -> their decimal digits */
	/* Lists replaced by their items (ydoc_load_manifests), kept alive so no
	 * new node can take an address the position tables still hold. */
	json_t **lists;
	size_t n_lists;
};

static void push_doc(struct ydoc_stream *s, json_t *doc);

size_t ydoc_stream_count(const struct ydoc_stream *s)
{
	return s ? s->n_docs : 0;
}

json_t *ydoc_stream_doc(const struct ydoc_stream *s, size_t i)
{
	return s && i < s->n_docs ? s->docs[i] : NULL;
}

const char *ydoc_stream_name(const struct ydoc_stream *s)
{
	return s ? s->name : "";
}

static int is_singleton(const json_t *node)
{
	return !node || json_is_true(node) || json_is_false(node) || json_is_null(node);
}

int ydoc_stream_pos(const struct ydoc_stream *s, const json_t *node, struct ydoc_pos *pos)
{
	if (!s || is_singleton(node)) {
		pos->line = pos->col = 0;
		return -1;
	}
	return pos_table_get(&s->nodes, node, 0, pos);
}

/*
 * A value that starts where its node does, and is only there (no alias,
 * no singleton), has no slot of its own: its position is the node's
 * (attach). Only for a container read from the stream.
 */
static int own_pos(const struct ydoc_stream *s, const json_t *container, const json_t *v,
		   struct ydoc_pos *pos)
{
	struct ydoc_pos c;

	if (!v || is_singleton(v) || pos_table_get(&s->nodes, container, 0, &c) < 0) {
		pos->line = pos->col = 0;
		return -1;
	}
	return pos_table_get(&s->nodes, v, 0, pos);
}

int ydoc_stream_key_pos(const struct ydoc_stream *s, const json_t *object, const char *key,
			struct ydoc_pos *pos)
{
	if (!s || !json_is_object(object) || !key) {
		pos->line = pos->col = 0;
		return -1;
	}
	if (pos_table_get(&s->slots, object, key_slot(key, strlen(key)), pos) == 0)
		return 0;
	return own_pos(s, object, json_object_get(object, key), pos);
}

int ydoc_stream_index_pos(const struct ydoc_stream *s, const json_t *array, size_t index,
			  struct ydoc_pos *pos)
{
	if (!s || !json_is_array(array)) {
		pos->line = pos->col = 0;
		return -1;
	}
	if (pos_table_get(&s->slots, array, index_slot(index), pos) == 0)
		return 0;
	return own_pos(s, array, json_array_get(array, index), pos);
}

int ydoc_stream_content_origin(const struct ydoc_stream *s, const json_t *string_node,
			       struct ydoc_pos *origin)
{
	if (s && json_is_string(string_node) &&
	    pos_table_get(&s->origins, string_node, 0, origin) == 0)
		return 0;
	return ydoc_stream_pos(s, string_node, origin);
}

const char *ydoc_kind_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "a mapping";
	case JSON_ARRAY:
		return "a list";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
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

void ydoc_verror_at_key(const struct ydoc_stream *s, const json_t *obj, const char *key,
			struct gs_error *err, const char *fmt, va_list ap)
{
	struct ydoc_pos pos = {.line = 0, .col = 0};
	struct strbuf msg = STRBUF_INIT;

	if (!err)
		return;
	strbuf_vaddf(&msg, fmt, ap);
	if (s && obj && (!key || ydoc_stream_key_pos(s, obj, key, &pos) != 0)) {
		pos.line = pos.col = 0;
		(void)ydoc_stream_pos(s, obj, &pos);
	}
	gs_error_at(err, ydoc_stream_name(s), pos.line, pos.col, "%s", msg.buf);
	strbuf_release(&msg);
}

void ydoc_error_at_key(const struct ydoc_stream *s, const json_t *obj, const char *key,
		       struct gs_error *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ydoc_verror_at_key(s, obj, key, err, fmt, ap);
	va_end(ap);
}

void ydoc_error_at(const struct ydoc_stream *s, const json_t *node, struct gs_error *err,
		   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ydoc_verror_at_key(s, node, NULL, err, fmt, ap);
	va_end(ap);
}

struct ydoc_stream *ydoc_stream_new(const char *name)
{
	struct ydoc_stream *s = gs_xcalloc(1, sizeof(*s));

	s->name = gs_xstrdup(name ? name : "<input>");
	return s;
}

static void pos_table_copy(struct pos_table *dst, const struct pos_table *src)
{
	for (size_t i = 0; src->n && i < src->cap; i++)
		if (src->e[i].a)
			pos_table_put(dst, (const void *)src->e[i].a, src->e[i].b, src->e[i].pos);
}

void ydoc_stream_adopt(struct ydoc_stream *dst, const struct ydoc_stream *src)
{
	for (size_t i = 0; i < src->n_docs; i++)
		push_doc(dst, json_incref(src->docs[i]));
	for (size_t i = 0; i < src->n_lists; i++) {
		dst->lists = gs_xrealloc(dst->lists, (dst->n_lists + 1) * sizeof(*dst->lists));
		dst->lists[dst->n_lists++] = json_incref(src->lists[i]);
	}
	pos_table_copy(&dst->nodes, &src->nodes);
	pos_table_copy(&dst->slots, &src->slots);
	pos_table_copy(&dst->origins, &src->origins);
	for (size_t i = 0; src->exact.n && i < src->exact.cap; i++)
		if (src->exact.e[i].node)
			exact_table_put(&dst->exact, json_incref(src->exact.e[i].node),
					src->exact.e[i].digits ? gs_xstrdup(src->exact.e[i].digits)
							       : NULL);
}

void ydoc_stream_free(struct ydoc_stream *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_docs; i++)
		json_decref(s->docs[i]);
	free(s->docs);
	for (size_t i = 0; i < s->n_lists; i++)
		json_decref(s->lists[i]);
	free(s->lists);
	free(s->nodes.e);
	free(s->slots.e);
	free(s->origins.e);
	exact_table_clear(&s->exact);
	free(s->exact.e);
	free(s->name);
	free(s);
}

int ydoc_stream_exact_int(const struct ydoc_stream *s, const json_t *node, const char **digits)
{
	const struct exact_entry *e =
		s && json_is_real(node) ? exact_table_get(&s->exact, node) : NULL;

	*digits = e ? e->digits : NULL;
	return e != NULL;
}

/* ---- Go number syntax (strconv) ---- */

/*
 * strconv.ParseInt/ParseUint(s, 0, 64) on a string without underscores.
 * Returns 0 (value in *mag, sign in *neg), -1 syntax error, -2 out of range
 * for the 64-bit magnitude.
 */
static int go_parse_uint_base0(const char *s, size_t n, int allow_sign, int *neg, uint64_t *mag)
{
	size_t i = 0;
	unsigned base = 10;
	uint64_t v = 0;
	int any = 0, range = 0;

	*neg = 0;
	if (allow_sign && i < n && (s[i] == '+' || s[i] == '-')) {
		*neg = s[i] == '-';
		i++;
	}
	if (i < n && s[i] == '0') {
		if (i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
			base = 16;
			i += 2;
		} else if (i + 1 < n && (s[i + 1] == 'o' || s[i + 1] == 'O')) {
			base = 8;
			i += 2;
		} else if (i + 1 < n && (s[i + 1] == 'b' || s[i + 1] == 'B')) {
			base = 2;
			i += 2;
		} else {
			base = 8; /* the 0 itself is a digit */
		}
	}
	for (; i < n; i++) {
		unsigned d;
		char c = s[i];

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'z')
			d = (unsigned)(c - 'a') + 10;
		else if (c >= 'A' && c <= 'Z')
			d = (unsigned)(c - 'A') + 10;
		else
			return -1;
		if (d >= base)
			return -1;
		any = 1;
		if (v > (UINT64_MAX - d) / base)
			range = 1;
		else
			v = v * base + d;
	}
	if (!any)
		return -1;
	*mag = v;
	return range ? -2 : 0;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static int ydoc_style_float(const char *s, size_t n)
{
	size_t i = 0, d = 0;

	if (i < n && (s[i] == '+' || s[i] == '-'))
		i++;
	if (i < n && s[i] == '.') {
		i++;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++, d++;
		if (!d)
			return 0;
	} else {
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++, d++;
		if (!d)
			return 0;
		if (i < n && s[i] == '.') {
			i++;
			while (i < n && s[i] >= '0' && s[i] <= '9')
				i++;
		}
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		d = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			i++, d++;
		if (!d)
			return 0;
	}
	return i == n;
}

/* strconv.ParseFloat on text already known to be plain decimal syntax. */
static int go_parse_float(const char *s, size_t n, double *out)
{
	char tmp[128];
	char *heap = NULL, *p = tmp, *end;
	double v;

	if (n >= sizeof(tmp))
		p = heap = gs_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	errno = 0;
	v = strtod(p, &end);
	free(heap);
	/* Go reports only overflow; underflow quietly rounds toward zero. */
	if (errno == ERANGE && isinf(v))
		return -1;
	*out = v;
	return 0;
}

/* ---- scalar resolution (go-yaml v2 resolve.go) ---- */

#define TAG_PREFIX "tag:yaml.org,2002:"

enum tagk {
	T_NONE,
	T_STR,
	T_BOOL,
	T_INT,
	T_FLOAT,
	T_NULL,
	T_TIMESTAMP,
	T_BINARY,
	T_MERGE,
	T_OTHER
};

static enum tagk tag_kind(const char *tag)
{
	static const struct {
		const char *name;
		enum tagk k;
	} tags[] = {
		{"str", T_STR},	      {"bool", T_BOOL},	  {"int", T_INT},
		{"float", T_FLOAT},   {"null", T_NULL},	  {"timestamp", T_TIMESTAMP},
		{"binary", T_BINARY}, {"merge", T_MERGE},
	};

	if (!tag || !*tag)
		return T_NONE;
	if (strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)))
		return T_OTHER;
	tag += strlen(TAG_PREFIX);
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		if (!strcmp(tag, tags[i].name))
			return tags[i].k;
	return T_OTHER;
}

static const char *tag_short(enum tagk k)
{
	switch (k) {
	case T_STR:
		return "!!str";
	case T_BOOL:
		return "!!bool";
	case T_INT:
		return "!!int";
	case T_FLOAT:
		return "!!float";
	case T_NULL:
		return "!!null";
	case T_TIMESTAMP:
		return "!!timestamp";
	default:
		return "!!?";
	}
}

static int text_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && !memcmp(s, word, n);
}

/* The YYYY- quick check and the date forms go-yaml accepts (time.Parse layouts, loosely). */
static int looks_like_timestamp(const char *s, size_t n)
{
	size_t i = 0, d;

	while (i < n && s[i] >= '0' && s[i] <= '9')
		i++;
	if (i != 4 || i == n || s[i] != '-')
		return 0;
	i++;
	for (int part = 0; part < 2; part++) {
		d = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9' && d < 2)
			i++, d++;
		if (!d)
			return 0;
		if (part == 0) {
			if (i == n || s[i] != '-')
				return 0;
			i++;
		}
	}
	return i == n || s[i] == 'T' || s[i] == 't' || s[i] == ' ';
}

enum word { W_NONE, W_TRUE, W_FALSE, W_NULL, W_NAN, W_PINF, W_NINF };

/* resolve.go's resolveMap (every entry is at most 5 characters). */
static enum word map_word(const char *s, size_t n)
{
#define IS(w) (!memcmp(s, w, n))
	switch (n) {
	case 0:
		return W_NULL;
	case 1:
		return *s == 'y' || *s == 'Y'	? W_TRUE
		       : *s == 'n' || *s == 'N' ? W_FALSE
		       : *s == '~'		? W_NULL
						: W_NONE;
	case 2:
		return IS("on") || IS("On") || IS("ON")	  ? W_TRUE
		       : IS("no") || IS("No") || IS("NO") ? W_FALSE
							  : W_NONE;
	case 3:
		if (IS("yes") || IS("Yes") || IS("YES"))
			return W_TRUE;
		return IS("off") || IS("Off") || IS("OFF") ? W_FALSE : W_NONE;
	case 4:
		if (IS("true") || IS("True") || IS("TRUE"))
			return W_TRUE;
		if (IS("null") || IS("Null") || IS("NULL"))
			return W_NULL;
		if (IS(".nan") || IS(".NaN") || IS(".NAN"))
			return W_NAN;
		return IS(".inf") || IS(".Inf") || IS(".INF") ? W_PINF : W_NONE;
	case 5:
		if (IS("false") || IS("False") || IS("FALSE"))
			return W_FALSE;
		if (IS("+.inf") || IS("+.Inf") || IS("+.INF"))
			return W_PINF;
		return IS("-.inf") || IS("-.Inf") || IS("-.INF") ? W_NINF : W_NONE;
	default:
		return W_NONE;
	}
#undef IS
}

/* Characters of Go number syntax; anything else makes a plain scalar a string at once. */
static int maybe_number(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
		      c == '_' || c == '+' || c == '-' || c == '.' || c == 'x' || c == 'X' ||
		      c == 'o' || c == 'O'))
			return 0;
	}
	return 1;
}

/*
 * The decimal digits of an integer literal go-yaml keeps exactly (its
 * uint64 and big.Int cases, as encoding/json then writes them): '_'
 * dropped, Go's base prefixes (0x, 0o, 0b, a leading 0 for octal). The
 * literal is known valid. NULL past EXACT_INT_MAX_LIMBS * 9 digits (no
 * quantity is that long, QUANTITY_MAX_LEN), found before the work, which
 * stays a few thousand steps per literal.
 */
#define EXACT_INT_MAX_LIMBS 12

static char *exact_int_digits(const char *s, size_t n)
{
	uint32_t limb[EXACT_INT_MAX_LIMBS]; /* base 1e9, least significant first */
	size_t nl = 0, i = 0, at = 0, sig = 0;
	unsigned base = 10, bits = 3; /* bits: at most log2(base) */
	char *out;

	while (i < n && s[i] == '_')
		i++;
	if (i + 1 < n && s[i] == '0') {
		size_t j = i + 1;

		while (j < n && s[j] == '_')
			j++;
		if (j < n && strchr("xXoObB", s[j])) {
			base = strchr("xX", s[j]) ? 16 : strchr("oO", s[j]) ? 8 : 2;
			i = j + 1;
		} else {
			base = 8;
		}
		bits = base == 2 ? 1 : base == 8 ? 3 : 4;
	}
	while (i < n && (s[i] == '0' || s[i] == '_'))
		i++;
	for (size_t k = i; k < n; k++)
		sig += s[k] != '_';
	/* value >= 2^((sig - 1) * bits) >= 2^360 > 10^108: it cannot fit */
	if (sig && (sig - 1) * bits >= 30 * EXACT_INT_MAX_LIMBS)
		return NULL;
	for (; i < n; i++) {
		uint64_t carry;

		if (s[i] == '_')
			continue;
		carry = s[i] <= '9' ? (unsigned)(s[i] - '0') : (unsigned)((s[i] | 0x20) - 'a') + 10;
		for (size_t k = 0; k < nl; k++) {
			uint64_t v = (uint64_t)limb[k] * base + carry;

			limb[k] = (uint32_t)(v % 1000000000u);
			carry = v / 1000000000u;
		}
		if (carry) {
			if (nl == EXACT_INT_MAX_LIMBS)
				return NULL;
			limb[nl++] = (uint32_t)carry;
		}
	}
	out = gs_xmalloc(EXACT_INT_MAX_LIMBS * 9 + 2);
	if (!nl) {
		out[at++] = '0';
	} else {
		at += (size_t)snprintf(out, 12, "%u", (unsigned)limb[nl - 1]);
		for (size_t k = nl - 1; k-- > 0;)
			at += (size_t)snprintf(out + at, 10, "%09u", (unsigned)limb[k]);
	}
	out[at] = '\0';
	return out;
}

/* resolve() for an untagged plain scalar, or one tagged with a resolvable core tag. */
static enum tagk resolve_plain(const char *s, size_t n, int try_timestamp, struct ydoc_resolved *r)
{
	char c = n ? s[0] : 'N';

	r->type = YDOC_SCALAR_IS_STRING;
	/* resolve.go's hint table: only these first characters can be anything but a string. */
	switch (c) {
	case '+':
	case '-':
	case '.':
	case '~':
	case '0':
	case '1':
	case '2':
	case '3':
	case '4':
	case '5':
	case '6':
	case '7':
	case '8':
	case '9':
	case 'y':
	case 'Y':
	case 'n':
	case 'N':
	case 't':
	case 'T':
	case 'f':
	case 'F':
	case 'o':
	case 'O':
		break;
	default:
		return T_STR;
	}
	switch (map_word(s, n)) {
	case W_TRUE:
	case W_FALSE:
		r->type = YDOC_SCALAR_IS_BOOL;
		r->boolean = map_word(s, n) == W_TRUE;
		return T_BOOL;
	case W_NULL:
		r->type = YDOC_SCALAR_IS_NULL;
		return T_NULL;
	case W_NAN:
	case W_PINF:
	case W_NINF:
		r->type = YDOC_SCALAR_IS_REAL;
		r->real = map_word(s, n) == W_NAN    ? NAN
			  : map_word(s, n) == W_NINF ? -INFINITY
						     : INFINITY;
		return T_FLOAT;
	case W_NONE:
		break;
	}
	if (c == '.') {
		/* strconv.ParseFloat on the text as written (no '_' removal). */
		if (ydoc_style_float(s, n) && go_parse_float(s, n, &r->real) == 0) {
			r->type = YDOC_SCALAR_IS_REAL;
			return T_FLOAT;
		}
		return T_STR;
	}
	if (c == '+' || c == '-' || (c >= '0' && c <= '9')) {
		if (!maybe_number(s, n))
			return try_timestamp && looks_like_timestamp(s, n) ? T_TIMESTAMP : T_STR;
	}
	if (c == '+' || c == '-' || (c >= '0' && c <= '9')) {
		char tmp[128];
		char *plain = tmp, *heap = NULL;
		size_t pn = 0;
		int neg, rc, urc = -1;
		uint64_t mag;
		enum tagk out = T_STR;

		if (try_timestamp && looks_like_timestamp(s, n))
			return T_TIMESTAMP;
		if (n >= sizeof(tmp))
			plain = heap = gs_xmalloc(n + 1);
		for (size_t i = 0; i < n; i++)
			if (s[i] != '_')
				plain[pn++] = s[i];
		rc = go_parse_uint_base0(plain, pn, 1, &neg, &mag);
		if (rc == 0 &&
		    (neg ? mag <= (uint64_t)INT64_MAX + 1 : mag <= (uint64_t)INT64_MAX)) {
			r->type = YDOC_SCALAR_IS_INT;
			r->integer = neg ? (long long)(0 - mag) : (long long)mag;
			out = T_INT;
		} else if ((urc = go_parse_uint_base0(plain, pn, 0, &neg, &mag)) == 0) {
			/* Above int64: Go keeps a uint64, exactly (exact_int). */
			r->type = YDOC_SCALAR_IS_REAL;
			r->real = (double)mag;
			r->exact_int = 1;
			out = T_INT;
		} else if (ydoc_style_float(plain, pn) &&
			   go_parse_float(plain, pn, &r->real) == 0) {
			r->type = YDOC_SCALAR_IS_REAL;
			out = T_FLOAT;
		} else if (urc == -2) {
			/*
			 * go-yaml's big.Int fallback, taken when ParseUint found the
			 * value out of range (a huge hex, octal or binary literal;
			 * a huge decimal is a float above, a signed one a string).
			 */
			long double v = 0;
			size_t i = 0;
			unsigned base = 10;

			if (i + 1 < pn && plain[i] == '0' && strchr("xXoObB", plain[i + 1])) {
				base = strchr("xX", plain[i + 1])   ? 16
				       : strchr("oO", plain[i + 1]) ? 8
								    : 2;
				i += 2;
			} else if (i + 1 < pn && plain[i] == '0') {
				base = 8;
			}
			for (; i < pn; i++) {
				char ch = plain[i];
				unsigned dgt = ch <= '9' ? (unsigned)(ch - '0')
							 : (unsigned)((ch | 0x20) - 'a') + 10;
				v = v * base + dgt;
			}
			r->type = YDOC_SCALAR_IS_REAL;
			/* Go's JSON has the exact value; the double only approximates */
			r->real = isinf((double)v) ? DBL_MAX : (double)v;
			r->exact_int = 1;
			out = T_INT;
		}
		free(heap);
		return out;
	}
	return T_STR;
}

static int resolve(const char *tag, const char *text, size_t len, int plain, bool show,
		   struct ydoc_resolved *r, struct gs_error *err)
{
	enum tagk want = tag_kind(tag), got;

	memset(r, 0, sizeof(*r));
	r->type = YDOC_SCALAR_IS_STRING;
	if (want == T_NONE) {
		if (!plain)
			return 0;
		got = resolve_plain(text, len, 1, r);
		if (got == T_TIMESTAMP)
			r->type = YDOC_SCALAR_IS_STRING;
		/* decode.go isMerge(): a plain "<<", outside resolve()'s table lookups. */
		r->merge = text_is(text, len, "<<");
		return 0;
	}
	switch (want) {
	case T_STR:
	case T_OTHER:
		return 0;
	case T_BINARY:
		r->type = YDOC_SCALAR_IS_BINARY;
		return 0;
	case T_MERGE:
		r->merge = text_is(text, len, "<<");
		return 0;
	default:
		break;
	}
	got = resolve_plain(text, len, want == T_TIMESTAMP, r);
	if (got == want) {
		if (got == T_TIMESTAMP)
			r->type = YDOC_SCALAR_IS_STRING;
		return 0;
	}
	if (want == T_FLOAT && got == T_INT) {
		if (r->type == YDOC_SCALAR_IS_INT) {
			r->type = YDOC_SCALAR_IS_REAL;
			r->real = (double)r->integer;
			return 0;
		}
		/* go-yaml only converts int/int64, not uint64 or big values. */
	}
	if (show)
		gs_error_set(err, "cannot decode %s `%.*s` as a %s", tag_short(got),
			     (int)(len > 200 ? 200 : len), text, tag_short(want));
	else
		gs_error_set(err, "cannot decode %s as a %s (value not shown)", tag_short(got),
			     tag_short(want));
	memset(r, 0, sizeof(*r));
	return -1;
}

int ydoc_resolve(const char *tag, const char *text, size_t len, int plain, struct ydoc_resolved *r,
		 struct gs_error *err)
{
	return resolve(tag, text, len, plain, true, r, err);
}

static int b64val(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* base64.StdEncoding.DecodeString: CR/LF ignored, padding required. */
static int base64_decode(const char *s, size_t n, char **out, size_t *outlen)
{
	char *o = gs_xmalloc(n / 4 * 3 + 4);
	size_t k = 0, q = 0, pad = 0;
	unsigned acc = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		int v;

		if (c == '\r' || c == '\n')
			continue;
		if (c == '=') {
			if (q < 2)
				goto bad;
			pad++;
			acc <<= 6;
			q++;
		} else {
			if (pad || (v = b64val(c)) < 0)
				goto bad;
			acc = acc << 6 | (unsigned)v;
			q++;
		}
		if (q == 4) {
			o[k++] = (char)(acc >> 16);
			if (pad < 2)
				o[k++] = (char)(acc >> 8);
			if (pad < 1)
				o[k++] = (char)acc;
			q = 0;
			acc = 0;
			if (pad) {
				/* Only newlines may follow the padding. */
				for (i++; i < n; i++)
					if (s[i] != '\r' && s[i] != '\n')
						goto bad;
				break;
			}
		}
	}
	if (q)
		goto bad;
	*out = o;
	*outlen = k;
	return 0;
bad:
	free(o);
	return -1;
}

/* Go's json.Marshal replaces invalid UTF-8 with U+FFFD; jansson refuses it. */
static char *utf8_sanitize(const char *s, size_t n, size_t *outlen)
{
	char *o;
	size_t k = 0;

	while (k < n && !((unsigned char)s[k] & 0x80))
		k++;
	if (k == n) {
		*outlen = n;
		return gs_xstrndup(s, n);
	}
	o = gs_xmalloc(n * 3 + 1);
	k = 0;

	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t len = 0;
		uint32_t cp = 0;

		if (c < 0x80)
			len = 1, cp = c;
		else if ((c & 0xE0) == 0xC0)
			len = 2, cp = c & 0x1F;
		else if ((c & 0xF0) == 0xE0)
			len = 3, cp = c & 0x0F;
		else if ((c & 0xF8) == 0xF0)
			len = 4, cp = c & 0x07;
		if (len && i + len <= n) {
			size_t j;

			for (j = 1; j < len; j++) {
				unsigned char cc = (unsigned char)s[i + j];
				if ((cc & 0xC0) != 0x80)
					break;
				cp = cp << 6 | (cc & 0x3F);
			}
			if (j == len && !(len == 2 && cp < 0x80) && !(len == 3 && cp < 0x800) &&
			    !(len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) &&
			    !(cp >= 0xD800 && cp <= 0xDFFF)) {
				memcpy(o + k, s + i, len);
				k += len;
				i += len;
				continue;
			}
		}
		memcpy(o + k, "\xEF\xBF\xBD", 3);
		k += 3;
		i++;
	}
	o[k] = '\0';
	*outlen = k;
	return o;
}

static json_t *string_json(const char *s, size_t n)
{
	json_t *j = json_stringn(s, n);

	if (!j) {
		size_t m;
		char *fixed = utf8_sanitize(s, n, &m);

		j = json_stringn(fixed, m);
		free(fixed);
	}
	return j;
}

int ydoc_resolved_json(const struct ydoc_resolved *r, const char *text, size_t len, json_t **out,
		       struct gs_error *err)
{
	*out = NULL;
	switch (r->type) {
	case YDOC_SCALAR_IS_NULL:
		*out = json_null();
		break;
	case YDOC_SCALAR_IS_BOOL:
		*out = json_boolean(r->boolean);
		break;
	case YDOC_SCALAR_IS_INT:
		*out = json_integer(r->integer);
		break;
	case YDOC_SCALAR_IS_REAL:
		if (isnan(r->real) || isinf(r->real)) {
			gs_error_set(err,
				     "json: unsupported value: %s (JSON, which Kubernetes reads, "
				     "has no %s)",
				     isnan(r->real) ? "NaN"
				     : r->real > 0  ? "+Inf"
						    : "-Inf",
				     isnan(r->real) ? "NaN" : "infinity");
			return -1;
		}
		*out = json_real(r->real);
		break;
	case YDOC_SCALAR_IS_STRING:
		*out = string_json(text, len);
		break;
	case YDOC_SCALAR_IS_BINARY: {
		char *data;
		size_t n;

		if (base64_decode(text, len, &data, &n)) {
			gs_error_set(err, "!!binary value contains invalid base64 data");
			return -1;
		}
		*out = string_json(data, n);
		free(data);
		break;
	}
	}
	if (!*out) {
		gs_error_set(err, "out of memory");
		return -1;
	}
	return 0;
}

int ydoc_resolved_key(const struct ydoc_resolved *r, const char *text, size_t len, char **out,
		      size_t *len_out, struct gs_error *err)
{
	char buf[64];

	*out = NULL;
	*len_out = 0;
	switch (r->type) {
	case YDOC_SCALAR_IS_NULL:
		gs_error_set(err, "null is not supported as a mapping key");
		return -1;
	case YDOC_SCALAR_IS_BOOL:
		snprintf(buf, sizeof(buf), "%s", r->boolean ? "true" : "false");
		break;
	case YDOC_SCALAR_IS_INT:
		snprintf(buf, sizeof(buf), "%lld", r->integer);
		break;
	case YDOC_SCALAR_IS_REAL:
		/* strconv's text, with go-yaml's names for the infinities and NaN */
		gonum_format_float(r->real, 'g', 32, buf, sizeof(buf));
		if (!strcmp(buf, "+Inf"))
			snprintf(buf, sizeof(buf), ".inf");
		else if (!strcmp(buf, "-Inf"))
			snprintf(buf, sizeof(buf), "-.inf");
		else if (!strcmp(buf, "NaN"))
			snprintf(buf, sizeof(buf), ".nan");
		break;
	case YDOC_SCALAR_IS_STRING: {
		size_t m;
		*out = utf8_sanitize(text, len, &m);
		*len_out = m;
		return 0;
	}
	case YDOC_SCALAR_IS_BINARY: {
		char *data;
		size_t n, m;

		if (base64_decode(text, len, &data, &n)) {
			gs_error_set(err, "!!binary value contains invalid base64 data");
			return -1;
		}
		*out = utf8_sanitize(data, n, &m);
		*len_out = m;
		free(data);
		return 0;
	}
	}
	*out = gs_xstrdup(buf);
	*len_out = strlen(buf);
	return 0;
}

/* ---- the loader ---- */

struct anchor {
	char *name;
	size_t slot;  /* its entry in the loader's index */
	json_t *node; /* a reference of its own; NULL while still open */
	size_t count; /* nodes in the subtree, aliases expanded */
	unsigned depth;
	/* a key scalar with no JSON value (.nan, .inf): fine as a key, an error as a value */
	char *bad;
	struct ydoc_resolved bad_scalar;
};

struct frame {
	json_t *node; /* object or array; NULL for a part a filter skips */
	int is_map;
	int role; /* YDOC_KEEP_ALL or a filter's role */
	char *anchor;
	size_t nodes_before;
	unsigned depth; /* collection levels, this one included */
	struct ydoc_pos pos;
	int indent; /* libyaml's block indentation of this collection (0-based column) */
	/* mappings: the key waiting for its value */
	int have_key;
	int merge;
	int child_role;
	char *key;
	size_t key_len;
	struct ydoc_pos key_pos;
	/* sequences that are a merge value: elements must be mappings */
	int merge_seq;
	int merge_bad;
};

#define RESTART_UNFILTERED (-2)
#define RESTART_LIBYAML (-3)

struct loader {
	struct ydoc_stream *s;
	const struct ydoc_limits *lim;
	const struct ydoc_filter *filter;
	const char *buf;
	size_t len;
	struct ydoc_pos origin;
	struct gs_error *err;

	struct frame *frames;
	size_t n_frames;
	size_t cap_frames;
	struct anchor *anchors;
	size_t n_anchors;
	size_t cap_anchors;
	/* name -> 1 + index into anchors (0 = empty); open addressing, a power of two */
	size_t *anchor_index;
	size_t cap_index;
	uint64_t anchor_seed;
	json_t *root;
	size_t nodes;
	size_t docs; /* documents started so far */
	ydoc_doc_fn each;
	void *each_ctx;
	int fast; /* events from ydocfast.c, not libyaml */
	int each_failed;
	struct gs_error each_err;
};

static struct ydoc_pos map_mark(const struct loader *l, yaml_mark_t m)
{
	struct ydoc_pos p;

	if (l->origin.line > 0) {
		p.line = l->origin.line + (int)m.line;
		p.col = (l->origin.col > 0 ? l->origin.col : 1) + (int)m.column;
	} else {
		p.line = (int)m.line + 1;
		p.col = (int)m.column + 1;
	}
	return p;
}

static int fail_at(struct loader *l, struct ydoc_pos pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(struct loader *l, struct ydoc_pos pos, const char *fmt, ...)
{
	char msg[sizeof(l->err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gs_error_at(l->err, l->s->name, pos.line, pos.col, "%s", msg);
	return -1;
}

/* Re-anchor an error filled by a helper (message only) at pos. */
static int fail_err_at(struct loader *l, struct ydoc_pos pos)
{
	char msg[sizeof(l->err->msg)];

	memcpy(msg, l->err->msg, sizeof(msg));
	return fail_at(l, pos, "%s", msg);
}

/*
 * Anchor names are looked up in a hash index, so a document with many
 * anchors and aliases loads in linear time. The hash is keyed per loader
 * (from the address space layout and the clock): names that collide cannot
 * be prepared in advance to make the lookups quadratic again.
 */
static uint64_t anchor_hash(const struct loader *l, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull ^ l->anchor_seed;

	for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
		h ^= *c;
		h *= 0x100000001b3ull;
	}
	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ull;
	h ^= h >> 29;
	return h;
}

static struct anchor *find_anchor(struct loader *l, const char *name)
{
	size_t j;

	if (!l->cap_index)
		return NULL;
	j = (size_t)anchor_hash(l, name) & (l->cap_index - 1);
	while (l->anchor_index[j]) {
		struct anchor *a = &l->anchors[l->anchor_index[j] - 1];

		if (!strcmp(a->name, name))
			return a;
		j = (j + 1) & (l->cap_index - 1);
	}
	return NULL;
}

static void index_anchor(struct loader *l, size_t i)
{
	size_t j = (size_t)anchor_hash(l, l->anchors[i].name) & (l->cap_index - 1);

	while (l->anchor_index[j])
		j = (j + 1) & (l->cap_index - 1);
	l->anchor_index[j] = i + 1;
	l->anchors[i].slot = j;
}

/*
 * Redefinition replaces: the newest anchor of a name wins. A new name past
 * the limit fails (NULL, err set at pos).
 */
static struct anchor *add_anchor(struct loader *l, const char *name, struct ydoc_pos pos)
{
	struct anchor *a = find_anchor(l, name);

	if (a) {
		json_decref(a->node);
		free(a->bad);
		a->node = NULL;
		a->bad = NULL;
		a->count = 0;
		a->depth = 0;
		return a;
	}
	if (l->n_anchors >= l->lim->max_anchors) {
		fail_at(l, pos, "more than %zu anchors in one document (the anchor limit)",
			l->lim->max_anchors);
		return NULL;
	}
	if (l->n_anchors == l->cap_anchors) {
		l->cap_anchors = l->cap_anchors ? l->cap_anchors * 2 : 8;
		l->anchors = gs_xrealloc(l->anchors, l->cap_anchors * sizeof(*l->anchors));
	}
	if ((l->n_anchors + 1) * 2 > l->cap_index) {
		free(l->anchor_index);
		l->cap_index = l->cap_index ? l->cap_index * 2 : 16;
		l->anchor_index = gs_xcalloc(l->cap_index, sizeof(*l->anchor_index));
		for (size_t i = 0; i < l->n_anchors; i++)
			index_anchor(l, i);
	}
	a = &l->anchors[l->n_anchors];
	a->name = gs_xstrdup(name);
	a->node = NULL;
	a->bad = NULL;
	a->count = 0;
	a->depth = 0;
	index_anchor(l, l->n_anchors++);
	return a;
}

/* Forget every anchor (a new document), in time linear in their number. */
static void clear_anchors(struct loader *l)
{
	for (size_t i = 0; i < l->n_anchors; i++) {
		l->anchor_index[l->anchors[i].slot] = 0;
		free(l->anchors[i].name);
		free(l->anchors[i].bad);
		json_decref(l->anchors[i].node);
	}
	l->n_anchors = 0;
}

static int count_nodes(struct loader *l, size_t add, struct ydoc_pos pos)
{
	if (add > l->lim->max_nodes || l->nodes > l->lim->max_nodes - add)
		return fail_at(l, pos, "document has more than %zu nodes once aliases are expanded",
			       l->lim->max_nodes);
	l->nodes += add;
	return 0;
}

static void merge_object(struct loader *l, json_t *dst, json_t *src)
{
	const char *k;
	size_t klen;
	json_t *v;
	struct ydoc_pos p;

	json_object_keylen_foreach (src, k, klen, v) {
		json_object_setn(dst, k, klen, v);
		if (pos_table_get(&l->s->slots, src, key_slot(k, klen), &p) == 0 ||
		    (!is_singleton(v) && pos_table_get(&l->s->nodes, v, 0, &p) == 0))
			pos_table_put(&l->s->slots, dst, key_slot(k, klen), p);
	}
}

/*
 * Hang a finished value (reference stolen) where the innermost open
 * collection wants it. `empty` marks an empty plain scalar, whose own mark
 * points past the key; its position is the key's.
 */
static int attach(struct loader *l, json_t *v, struct ydoc_pos pos, unsigned depth, int empty,
		  int own)
{
	struct frame *f;

	if (!l->n_frames) {
		l->root = v;
		return 0;
	}
	f = &l->frames[l->n_frames - 1];
	if (depth + 1 > f->depth)
		f->depth = depth + 1;
	if (!f->is_map) {
		size_t i = json_array_size(f->node);

		json_array_append_new(f->node, v);
		if (!own)
			pos_table_put(&l->s->slots, f->node, index_slot(i), pos);
		return 0;
	}
	f->have_key = 0;
	if (f->merge) {
		int ok = 1;

		f->merge = 0;
		if (json_is_object(v)) {
			merge_object(l, f->node, v);
		} else if (json_is_array(v)) {
			size_t n = json_array_size(v);

			for (size_t i = 0; i < n; i++)
				if (!json_is_object(json_array_get(v, i)))
					ok = 0;
			/* Backwards: earlier maps in the list take precedence. */
			for (size_t i = n; ok && i-- > 0;)
				merge_object(l, f->node, json_array_get(v, i));
		} else {
			ok = 0;
		}
		json_decref(v);
		if (!ok)
			return fail_at(l, pos,
				       "map merge requires map or sequence of maps as the value");
		return 0;
	}
	/* a key read again keeps no slot of the value it replaces */
	own = own && !empty && !json_object_getn(f->node, f->key, f->key_len);
	if (json_object_setn_new(f->node, f->key, f->key_len, v)) {
		free(f->key);
		f->key = NULL;
		return fail_at(l, pos, "cannot store key");
	}
	if (!own)
		pos_table_put(&l->s->slots, f->node, key_slot(f->key, f->key_len),
			      empty ? f->key_pos : pos);
	free(f->key);
	f->key = NULL;
	return 0;
}

enum skipped_kind { SKIPPED_SCALAR, SKIPPED_MAP, SKIPPED_SEQ };

/*
 * A value a filter dropped is complete: leave the parent as attach() would,
 * and raise the merge errors attach() would have raised.
 */
static int skipped(struct loader *l, enum skipped_kind kind, struct ydoc_pos pos)
{
	struct frame *f;

	if (!l->n_frames)
		return 0;
	f = &l->frames[l->n_frames - 1];
	if (!f->is_map) {
		if (f->merge_seq && kind != SKIPPED_MAP)
			f->merge_bad = 1;
		return 0;
	}
	f->have_key = 0;
	free(f->key);
	f->key = NULL;
	if (f->merge) {
		f->merge = 0;
		if (kind == SKIPPED_SCALAR)
			return fail_at(l, pos,
				       "map merge requires map or sequence of maps as the value");
	}
	return 0;
}

/* The role the next value gets, or YDOC_SKIP. */
static int value_role(const struct loader *l)
{
	const struct frame *f;

	if (!l->n_frames)
		return l->filter ? l->filter->root_role : YDOC_KEEP_ALL;
	f = &l->frames[l->n_frames - 1];
	if (!f->node)
		return YDOC_SKIP;
	if (f->role == YDOC_KEEP_ALL)
		return YDOC_KEEP_ALL;
	if (f->is_map)
		return f->merge ? f->role : f->child_role;
	if (f->merge_seq)
		return f->role;
	return l->filter->child_role(l->filter->ctx, f->role, NULL, 0);
}

/* A JSON value used as a key (through an alias): as the scalar it came from. */
static int key_from_json(struct loader *l, const json_t *v, struct ydoc_pos pos, struct frame *f)
{
	char buf[64];
	struct ydoc_resolved r = {0};

	switch (json_typeof(v)) {
	case JSON_STRING:
		f->key = gs_xstrndup(json_string_value(v), json_string_length(v));
		f->key_len = json_string_length(v);
		return 0;
	case JSON_INTEGER:
		snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
		break;
	case JSON_REAL:
		r.type = YDOC_SCALAR_IS_REAL;
		r.real = json_real_value(v);
		if (ydoc_resolved_key(&r, NULL, 0, &f->key, &f->key_len, l->err))
			return fail_err_at(l, pos);
		return 0;
	case JSON_TRUE:
	case JSON_FALSE:
		snprintf(buf, sizeof(buf), "%s", json_is_true(v) ? "true" : "false");
		break;
	case JSON_NULL:
		return fail_at(l, pos, "null is not supported as a mapping key");
	default:
		return fail_at(l, pos, "invalid map key: a mapping or sequence cannot be a key");
	}
	f->key = gs_xstrdup(buf);
	f->key_len = strlen(buf);
	return 0;
}

/* Where the text of a block scalar starts, following libyaml's indentation rules. */
static struct ydoc_pos block_origin(const struct loader *l, const yaml_event_t *ev,
				    int parent_indent)
{
	const char *b = l->buf;
	size_t i = ev->start_mark.index, n = l->len;
	int explicit_indent = 0, max_indent = 0, indent;
	yaml_mark_t m = ev->start_mark;

	/* Header: indicator, optional chomping and indentation digits, comment. */
	for (i++; i < n && b[i] != '\n' && b[i] != '\r'; i++) {
		if (b[i] >= '1' && b[i] <= '9' && !explicit_indent)
			explicit_indent = b[i] - '0';
		if (b[i] == '#')
			break;
	}
	if (explicit_indent) {
		indent = parent_indent >= 0 ? parent_indent + explicit_indent : explicit_indent;
	} else {
		while (i < n && b[i] != '\n' && b[i] != '\r')
			i++;
		while (i < n) {
			int sp = 0;

			if (b[i] == '\r' && i + 1 < n && b[i + 1] == '\n')
				i++;
			i++;
			while (i < n && b[i] == ' ')
				i++, sp++;
			if (sp > max_indent)
				max_indent = sp;
			if (i < n && b[i] != '\n' && b[i] != '\r')
				break;
		}
		indent = max_indent;
		if (indent < parent_indent + 1)
			indent = parent_indent + 1;
		if (indent < 1)
			indent = 1;
	}
	m.line += 1;
	m.column = (size_t)indent;
	return map_mark(l, m);
}

static int push_frame(struct loader *l, json_t *node, int is_map, int role, const char *anchor,
		      struct ydoc_pos pos, int indent)
{
	struct frame *f, *parent = l->n_frames ? &l->frames[l->n_frames - 1] : NULL;
	int merge_seq = !is_map && parent && parent->is_map && parent->merge;

	if (l->n_frames >= l->lim->max_depth) {
		json_decref(node);
		return fail_at(l, pos, "nesting is deeper than the limit of %u levels",
			       l->lim->max_depth);
	}
	if (l->n_frames == l->cap_frames) {
		l->cap_frames = l->cap_frames ? l->cap_frames * 2 : 16;
		l->frames = gs_xrealloc(l->frames, l->cap_frames * sizeof(*l->frames));
	}
	f = &l->frames[l->n_frames++];
	memset(f, 0, sizeof(*f));
	f->node = node;
	f->is_map = is_map;
	f->role = role;
	f->pos = pos;
	f->indent = indent;
	f->depth = 1;
	f->merge_seq = merge_seq;
	f->nodes_before = l->nodes;
	if (node) {
		pos_table_put(&l->s->nodes, node, 0, pos);
		if (anchor) {
			f->anchor = gs_xstrdup(anchor);
			/* open: an alias to it now is a cycle */
			if (!add_anchor(l, anchor, pos))
				return -1;
		}
	}
	return count_nodes(l, 1, pos);
}

static int pop_frame(struct loader *l)
{
	struct frame f = l->frames[--l->n_frames];

	free(f.key);
	if (!f.node) {
		if (f.merge_seq && f.merge_bad)
			return fail_at(l, f.pos,
				       "map merge requires map or sequence of maps as the value");
		return skipped(l, f.is_map ? SKIPPED_MAP : SKIPPED_SEQ, f.pos);
	}
	if (f.anchor) {
		struct anchor *a = find_anchor(l, f.anchor);

		/* an inner node may have taken the name meanwhile ("&a [&a x]") */
		json_decref(a->node);
		a->node = json_incref(f.node);
		a->count = l->nodes - f.nodes_before;
		a->depth = f.depth;
		free(f.anchor);
	}
	return attach(l, f.node, f.pos, f.depth, 0, 1);
}

static int parent_indent(const struct loader *l)
{
	return l->n_frames ? l->frames[l->n_frames - 1].indent : -1;
}

static int expecting_key(const struct loader *l)
{
	const struct frame *f = l->n_frames ? &l->frames[l->n_frames - 1] : NULL;

	return f && f->is_map && !f->have_key;
}

/* An integer Go keeps exactly beyond int64: its digits for ydoc_stream_exact_int. */
static void record_exact(struct loader *l, json_t *v, const char *text, size_t len)
{
	if (json_is_real(v))
		exact_table_put(&l->s->exact, json_incref(v), exact_int_digits(text, len));
}

static int on_key(struct loader *l, const yaml_event_t *ev, const struct ydoc_resolved *r,
		  struct ydoc_pos pos)
{
	const char *text = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	const char *anchor = (const char *)ev->data.scalar.anchor;
	struct frame *f = &l->frames[l->n_frames - 1];
	json_t *v;

	if (count_nodes(l, 1, pos))
		return -1;
	f->have_key = 1;
	f->key_pos = pos;
	if (r->merge) {
		f->merge = 1;
		return 0;
	}
	if (!f->node) {
		/* Skipped: only what could fail. */
		if (r->type == YDOC_SCALAR_IS_NULL || r->type == YDOC_SCALAR_IS_BINARY) {
			if (ydoc_resolved_key(r, text, len, &f->key, &f->key_len, l->err))
				return fail_err_at(l, pos);
			free(f->key);
			f->key = NULL;
		}
		return 0;
	}
	if (f->role != YDOC_KEEP_ALL && r->type == YDOC_SCALAR_IS_STRING && !anchor) {
		/* libyaml's text is already valid UTF-8: ask before copying it. */
		f->child_role = l->filter->child_role(l->filter->ctx, f->role, text, len);
		if (f->child_role == YDOC_SKIP)
			return 0;
	}
	if (ydoc_resolved_key(r, text, len, &f->key, &f->key_len, l->err))
		return fail_err_at(l, pos);
	if (f->role != YDOC_KEEP_ALL)
		f->child_role = l->filter->child_role(l->filter->ctx, f->role, f->key, f->key_len);
	if (anchor) {
		struct anchor *a = add_anchor(l, anchor, pos);

		if (!a)
			return -1;
		a->count = 1;
		a->depth = 0;
		if (ydoc_resolved_json(r, text, len, &v, l->err)) {
			/* only an alias using it as a value fails, as go-yaml's JSON step would */
			a->bad = gs_xstrdup(l->err->msg);
			a->bad_scalar = *r;
			a->node = json_null(); /* complete, not open */
			return 0;
		}
		if (!is_singleton(v))
			pos_table_put(&l->s->nodes, v, 0, pos);
		if (r->exact_int)
			record_exact(l, v, text, len);
		a->node = v; /* only the anchor holds it */
	}
	return 0;
}

static int on_scalar(struct loader *l, const yaml_event_t *ev)
{
	const char *text = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	const char *tag = (const char *)ev->data.scalar.tag;
	const char *anchor = (const char *)ev->data.scalar.anchor;
	struct ydoc_pos pos = map_mark(l, ev->start_mark);
	struct ydoc_resolved r;
	json_t *v;
	int empty;

	if (resolve(tag, text, len, ev->data.scalar.plain_implicit, !l->lim->hide_values, &r,
		    l->err))
		return fail_err_at(l, pos);
	if (expecting_key(l))
		return on_key(l, ev, &r, pos);
	if (count_nodes(l, 1, pos))
		return -1;
	if (value_role(l) == YDOC_SKIP) {
		if ((r.type == YDOC_SCALAR_IS_REAL && !isfinite(r.real)) ||
		    r.type == YDOC_SCALAR_IS_BINARY) {
			if (ydoc_resolved_json(&r, text, len, &v, l->err))
				return fail_err_at(l, pos);
			json_decref(v);
		}
		return skipped(l, SKIPPED_SCALAR, pos);
	}
	if (ydoc_resolved_json(&r, text, len, &v, l->err))
		return fail_err_at(l, pos);
	if (!is_singleton(v))
		pos_table_put(&l->s->nodes, v, 0, pos);
	if (r.exact_int)
		record_exact(l, v, text, len);
	if (json_is_string(v) && (ev->data.scalar.style == YAML_LITERAL_SCALAR_STYLE ||
				  ev->data.scalar.style == YAML_FOLDED_SCALAR_STYLE))
		pos_table_put(&l->s->origins, v, 0, block_origin(l, ev, parent_indent(l)));
	if (anchor) {
		struct anchor *a = add_anchor(l, anchor, pos);

		if (!a) {
			json_decref(v);
			return -1;
		}
		a->node = json_incref(v);
		a->count = 1;
		a->depth = 0;
	}
	empty = len == 0 && ev->data.scalar.plain_implicit;
	return attach(l, v, pos, 0, empty, !is_singleton(v));
}

static int on_alias(struct loader *l, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	struct ydoc_pos pos = map_mark(l, ev->start_mark);
	struct anchor *a;

	/* The anchor may sit in a skipped part: start again, keeping everything. */
	if (l->filter)
		return RESTART_UNFILTERED;
	a = find_anchor(l, name);
	if (!a)
		return fail_at(l, pos, "unknown anchor '%s' referenced", name);
	if (!a->node)
		return fail_at(l, pos, "anchor '%s' value contains itself", name);
	if (count_nodes(l, a->count, pos))
		return -1;
	if (l->n_frames + a->depth > l->lim->max_depth)
		return fail_at(l, pos, "nesting is deeper than the limit of %u levels",
			       l->lim->max_depth);
	if (expecting_key(l)) {
		struct frame *f = &l->frames[l->n_frames - 1];

		f->have_key = 1;
		f->key_pos = pos;
		if (a->bad) {
			if (ydoc_resolved_key(&a->bad_scalar, NULL, 0, &f->key, &f->key_len,
					      l->err))
				return fail_err_at(l, pos);
			if (f->role != YDOC_KEEP_ALL && l->filter)
				f->child_role = l->filter->child_role(l->filter->ctx, f->role,
								      f->key, f->key_len);
			return 0;
		}
		return key_from_json(l, a->node, pos, f);
	}
	if (a->bad)
		return fail_at(l, pos, "%s", a->bad);
	/* Shared, not copied: trees are read-only for their users. */
	return attach(l, json_incref(a->node), pos, a->depth, 0, 0);
}

static int parser_error(struct loader *l, const yaml_parser_t *p)
{
	struct ydoc_pos pos;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		gs_error_at(l->err, l->s->name, 0, 0, "out of memory while parsing YAML");
		return -1;
	case YAML_READER_ERROR: {
		yaml_mark_t m = {0, 0, 0};

		for (size_t i = 0; i < p->problem_offset && i < l->len; i++) {
			if (l->buf[i] == '\n') {
				m.line++;
				m.column = 0;
			} else if (((unsigned char)l->buf[i] & 0xC0) != 0x80) {
				m.column++;
			}
		}
		pos = map_mark(l, m);
		if (p->problem_value != -1 && !l->lim->hide_values)
			return fail_at(l, pos, "%s (byte 0x%02X)",
				       p->problem ? p->problem : "invalid input",
				       (unsigned)p->problem_value & 0xFF);
		return fail_at(l, pos, "%s", p->problem ? p->problem : "invalid input");
	}
	default:
		pos = map_mark(l, p->problem_mark);
		if (p->context) {
			struct ydoc_pos c = map_mark(l, p->context_mark);

			return fail_at(l, pos, "%s (%s at line %d column %d)",
				       p->problem ? p->problem : "invalid YAML", p->context, c.line,
				       c.col);
		}
		return fail_at(l, pos, "%s", p->problem ? p->problem : "invalid YAML");
	}
}

static void pos_table_clear(struct pos_table *t)
{
	if (t->n)
		memset(t->e, 0, t->cap * sizeof(*t->e));
	t->n = 0;
}

/* Forget every document and position, keeping the memory for the next. */
static void stream_clear(struct ydoc_stream *s)
{
	for (size_t i = 0; i < s->n_docs; i++)
		json_decref(s->docs[i]);
	s->n_docs = 0;
	pos_table_clear(&s->nodes);
	pos_table_clear(&s->slots);
	pos_table_clear(&s->origins);
	exact_table_clear(&s->exact);
}

static void push_doc(struct ydoc_stream *s, json_t *doc)
{
	if (s->n_docs == s->cap_docs) {
		s->cap_docs = s->cap_docs ? s->cap_docs * 2 : 8;
		s->docs = gs_xrealloc(s->docs, s->cap_docs * sizeof(*s->docs));
	}
	s->docs[s->n_docs++] = doc;
}

/* One event, from libyaml or from the fast scanner (ydocfast.h). */
static int on_event(void *ctx, const yaml_event_t *ev)
{
	struct loader *l = ctx;
	struct ydoc_pos pos = map_mark(l, ev->start_mark);
	int rc = 0;

	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (l->docs >= l->lim->max_docs)
			return fail_at(l, pos, "more than %zu documents", l->lim->max_docs);
		l->docs++;
		l->nodes = 0;
		clear_anchors(l);
		json_decref(l->root);
		l->root = NULL;
		break;
	case YAML_DOCUMENT_END_EVENT:
		push_doc(l->s, l->root ? l->root : json_null());
		l->root = NULL;
		clear_anchors(l);
		if (l->each) {
			/* fn's error waits: a YAML error further on takes precedence */
			if (!l->each_failed &&
			    l->each(l->each_ctx, l->s, l->s->docs[0], l->docs - 1, &l->each_err))
				l->each_failed = 1;
			stream_clear(l->s);
		}
		break;
	case YAML_SCALAR_EVENT:
		rc = on_scalar(l, ev);
		break;
	case YAML_ALIAS_EVENT:
		rc = on_alias(l, ev);
		break;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		const char *anchor = (const char *)(ev->type == YAML_SEQUENCE_START_EVENT
							    ? ev->data.sequence_start.anchor
							    : ev->data.mapping_start.anchor);
		int is_map = ev->type == YAML_MAPPING_START_EVENT;
		int role;

		if (expecting_key(l))
			return fail_at(l, pos,
				       "invalid map key: a mapping or sequence cannot be a key");
		role = value_role(l);
		rc = push_frame(l,
				role == YDOC_SKIP ? NULL
				: is_map	  ? json_object()
						  : json_array(),
				is_map, role, anchor, pos, (int)ev->start_mark.column);
		break;
	}
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		rc = pop_frame(l);
		break;
	default:
		break;
	}
	return rc;
}

static int load_libyaml(struct loader *l)
{
	yaml_parser_t p;
	yaml_event_t ev;
	int rc = 0, done = 0;

	if (!yaml_parser_initialize(&p)) {
		gs_error_set(l->err, "out of memory");
		return -1;
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)l->buf, l->len);
	while (!done && rc == 0) {
		if (!yaml_parser_parse(&p, &ev)) {
			rc = parser_error(l, &p);
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		rc = on_event(l, &ev);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}

/*
 * The fast scanner is optimistic: it declines what it does not know, and
 * any error at all (its events are then suspect as to which error comes
 * first) sends the caller back to libyaml for the authoritative answer.
 */
static int load(struct loader *l)
{
	int rc;

	if (!l->fast)
		return load_libyaml(l);
	rc = ydoc_fast_parse(l->buf, l->len, on_event, l);
	if (rc == RESTART_UNFILTERED)
		return rc;
	return rc ? RESTART_LIBYAML : 0;
}

static void loader_release(struct loader *l)
{
	while (l->n_frames) {
		struct frame *f = &l->frames[--l->n_frames];

		json_decref(f->node);
		free(f->key);
		free(f->anchor);
	}
	free(l->frames);
	clear_anchors(l);
	free(l->anchors);
	free(l->anchor_index);
	json_decref(l->root);
}

static uint64_t anchor_seed(void)
{
	static const char here;
	struct timespec ts;
	uint64_t seed = (uint64_t)(uintptr_t)&here;

	if (clock_gettime(CLOCK_MONOTONIC, &ts) == 0)
		seed ^= (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)ts.tv_sec;
	return seed;
}

static int load_with(const char *name, const char *buf, size_t len, struct ydoc_pos origin,
		     const struct ydoc_limits *limits, const struct ydoc_filter *filter, int fast,
		     ydoc_doc_fn each, void *each_ctx, struct ydoc_stream **out,
		     struct gs_error *err)
{
	struct loader l;
	int rc;

	memset(&l, 0, sizeof(l));
	*out = NULL;
	l.lim = limits ? limits : &ydoc_default_limits;
	l.anchor_seed = anchor_seed();
	l.filter = filter;
	l.each = each;
	l.each_ctx = each_ctx;
	l.fast = fast;
	l.s = gs_xcalloc(1, sizeof(*l.s));
	l.s->name = gs_xstrdup(name ? name : "<input>");
	l.buf = buf;
	l.len = len;
	l.origin = origin;
	l.err = err;
	if (len > l.lim->max_bytes) {
		gs_error_at(err, l.s->name, 0, 0, "input is larger than the limit of %zu bytes",
			    l.lim->max_bytes);
		ydoc_stream_free(l.s);
		return -1;
	}
	rc = load(&l);
	if (rc == 0 && l.each_failed) {
		*err = l.each_err;
		rc = -1;
	}
	loader_release(&l);
	if (rc) {
		ydoc_stream_free(l.s);
		return rc;
	}
	*out = l.s;
	return 0;
}

int ydoc_load_buffer(const char *name, const char *buf, size_t len, struct ydoc_pos origin,
		     const struct ydoc_limits *limits, struct ydoc_stream **out,
		     struct gs_error *err)
{
	return load_with(name, buf, len, origin, limits, NULL, 0, NULL, NULL, out, err) ? -1 : 0;
}

int ydoc_load_buffer_filtered(const char *name, const char *buf, size_t len, struct ydoc_pos origin,
			      const struct ydoc_limits *limits, const struct ydoc_filter *filter,
			      struct ydoc_stream **out, struct gs_error *err)
{
	int rc = load_with(name, buf, len, origin, limits, filter, 0, NULL, NULL, out, err);

	if (rc == RESTART_UNFILTERED)
		rc = load_with(name, buf, len, origin, limits, NULL, 0, NULL, NULL, out, err);
	return rc ? -1 : 0;
}

struct each_ctx {
	ydoc_doc_fn fn;
	void *ctx;
};

int ydoc_each_document(const char *name, const char *buf, size_t len, struct ydoc_pos origin,
		       const struct ydoc_limits *limits, const struct ydoc_filter *filter,
		       ydoc_doc_fn fn, void *ctx, struct gs_error *err)
{
	struct ydoc_stream *s;
	int rc = load_with(name, buf, len, origin, limits, filter, 1, fn, ctx, &s, err);

	if (rc == RESTART_LIBYAML)
		rc = load_with(name, buf, len, origin, limits, filter, 0, fn, ctx, &s, err);
	if (rc == RESTART_UNFILTERED)
		rc = load_with(name, buf, len, origin, limits, NULL, 0, fn, ctx, &s, err);
	ydoc_stream_free(s);
	return rc ? -1 : 0;
}

static bool is_list(const json_t *doc)
{
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	size_t n = kind ? strlen(kind) : 0;

	return n >= 4 && !strcmp(kind + n - 4, "List") &&
	       json_is_array(json_object_get(doc, "items"));
}

static int expand_lists(struct ydoc_stream *s)
{
	size_t n = 0, n_lists = 0;

	for (size_t i = 0; i < s->n_docs; i++) {
		if (is_list(s->docs[i])) {
			n += json_array_size(json_object_get(s->docs[i], "items"));
			n_lists++;
		} else {
			n++;
		}
	}
	if (!n_lists)
		return 0;
	json_t **docs = calloc(n ? n : 1, sizeof(*docs));
	json_t **lists = calloc(n_lists, sizeof(*lists));
	if (!docs || !lists) {
		free(docs);
		free(lists);
		return -1;
	}
	size_t d = 0, l = 0;
	for (size_t i = 0; i < s->n_docs; i++) {
		if (!is_list(s->docs[i])) {
			docs[d++] = s->docs[i];
			continue;
		}
		size_t k;
		json_t *item;
		json_array_foreach (json_object_get(s->docs[i], "items"), k, item)
			docs[d++] = json_incref(item);
		lists[l++] = s->docs[i];
	}
	free(s->docs);
	s->docs = docs;
	s->n_docs = s->cap_docs = n;
	s->lists = lists;
	s->n_lists = n_lists;
	return 0;
}

int ydoc_load_manifests(const char *path, const struct ydoc_limits *limits,
			struct ydoc_stream **out, struct gs_error *err)
{
	if (ydoc_load_file(path, limits, out, err) < 0)
		return -1;
	if (expand_lists(*out) < 0) {
		ydoc_stream_free(*out);
		*out = NULL;
		gs_error_set(err, "%s: out of memory", path);
		return -1;
	}
	return 0;
}

int ydoc_load_file(const char *path, const struct ydoc_limits *limits, struct ydoc_stream **out,
		   struct gs_error *err)
{
	char *buf;
	size_t len;
	int rc;
	struct ydoc_pos none = {.line = 0, .col = 0};

	*out = NULL;
	if (gs_read_file(path, (limits ? limits : &ydoc_default_limits)->max_bytes, &buf, &len,
			 err))
		return -1;
	rc = ydoc_load_buffer(path, buf, len, none, limits, out, err);
	free(buf);
	return rc;
}
