#include "model/dpdecode.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/didyoumean.h"
#include "base/gonum.h"
#include "base/strbuf.h"
#include "base/banned.h"

/*
 * How the real plugin reads its config (k8s-device-plugin v0.20.0 api/config/v1/config.go): YAML
 * becomes JSON through sigs.k8s.io/yaml (object keys sorted, as Go's
 * json.Marshal writes a map), then Go's encoding/json decodes it into the
 * v1 structs. This file replays that decoding on the jansson tree:
 *   - struct fields match keys exactly, else case-insensitively; keys are
 *     visited in sorted order, so of two spellings the later one wins;
 *   - a JSON type that does not fit a plain field is remembered and
 *     decoding goes on (Go's saveError); only the first one is reported;
 *   - a hand-written UnmarshalJSON (sharing blocks, resources, names,
 *     devices, durations, deviceListStrategy) stops everything at once.
 * We keep going after every error, to report them all, and mark the one
 * upstream would print.
 */

#define DP_MAX_REPLICAS 1048576 /* ours: a plugin given more would exhaust memory */
#define RESOURCE_NAME_PREFIX "nvidia.com"
#define MAX_RESOURCE_NAME_LENGTH 63
#define RFC1123_MSG                                                                                \
	"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "  \
	"or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "      \
	"regex used for validation is "                                                            \
	"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

/* ------------------------------------------------- Go's text of values */

/* A JSON number as Go's encoding/json writes it. */
static void go_json_number(const json_t *v, char *buf, size_t size)
{
	if (gonum_json_number(v, buf, size) < 0)
		snprintf(buf, size, "0");
}

/* strconv.ParseInt(s, 10, 64) / ParseUint(s, 10, 64). */
static int go_parse_int(const char *s, bool is_unsigned, long long *out)
{
	bool neg = false;
	unsigned long long v = 0, limit;

	if (!is_unsigned && (*s == '+' || *s == '-')) {
		neg = *s == '-';
		s++;
	}
	if (!*s)
		return -1;
	limit = is_unsigned ? ULLONG_MAX : neg ? (unsigned long long)LLONG_MAX + 1 : LLONG_MAX;
	for (; *s; s++) {
		unsigned c = (unsigned char)*s - '0';
		if (c > 9 || v > (limit - c) / 10)
			return -1;
		v = v * 10 + c;
	}
	if (is_unsigned)
		*out = (long long)v; /* callers only look at the range they need */
	else
		*out = neg ? (long long)(0 - v) : (long long)v;
	return 0;
}

/* Decoding a JSON number into a Go int: 0, or -1 with Go's literal text in lit. */
static int json_to_int(const json_t *v, long long *out, char *lit, size_t size)
{
	go_json_number(v, lit, size);
	return go_parse_int(lit, false, out);
}

int dpdecode_scalar_text(const json_t *v, char *buf, size_t size)
{
	switch (json_typeof(v)) {
	case JSON_INTEGER:
		snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return 0;
	case JSON_REAL:
		gonum_format_float(json_real_value(v), 'g', 32, buf, size);
		return 0;
	case JSON_TRUE:
	case JSON_FALSE:
		snprintf(buf, size, "%s", json_is_true(v) ? "true" : "false");
		return 0;
	case JSON_NULL:
		if (size)
			buf[0] = '\0';
		return 0;
	default:
		if (size)
			buf[0] = '\0';
		return -1;
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The object's keys in Go's map order (sorted bytewise). Caller frees the array. */
static const char **sorted_keys(const json_t *obj, size_t *n)
{
	const char **keys = gs_xcalloc(json_object_size(obj) + 1, sizeof(*keys));
	const char *k;
	json_t *v;
	size_t i = 0;

	json_object_foreach ((json_t *)obj, k, v) {
		(void)v;
		keys[i++] = k;
	}
	qsort(keys, i, sizeof(*keys), cmp_str);
	*n = i;
	return keys;
}

static void go_marshal_string(struct strbuf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char esc[8];

	strbuf_addstr(b, "\"");
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			strbuf_add(b, esc, 2);
		} else if (c == '\n') {
			strbuf_addstr(b, "\\n");
		} else if (c == '\r') {
			strbuf_addstr(b, "\\r");
		} else if (c == '\t') {
			strbuf_addstr(b, "\\t");
		} else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
			esc[0] = '\\';
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			strbuf_add(b, esc, 6);
		} else if (c == 0xe2 && i + 2 < n && (unsigned char)s[i + 1] == 0x80 &&
			   ((unsigned char)s[i + 2] == 0xa8 || (unsigned char)s[i + 2] == 0xa9)) {
			strbuf_addstr(b, (unsigned char)s[i + 2] == 0xa8 ? "\\u2028" : "\\u2029");
			i += 2;
		} else {
			strbuf_add(b, (const char *)&s[i], 1);
		}
	}
	strbuf_addstr(b, "\"");
}

/* json.Marshal of what sigs.k8s.io/yaml built: compact, keys sorted, HTML-safe. */
static void go_marshal(struct strbuf *b, const json_t *v, unsigned depth)
{
	char num[64];

	if (depth > 64) {
		strbuf_addstr(b, "...");
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		size_t n;
		const char **keys = sorted_keys(v, &n);
		strbuf_addstr(b, "{");
		for (size_t i = 0; i < n; i++) {
			if (i)
				strbuf_addstr(b, ",");
			go_marshal_string(b, keys[i], strlen(keys[i]));
			strbuf_addstr(b, ":");
			go_marshal(b, json_object_get(v, keys[i]), depth + 1);
		}
		strbuf_addstr(b, "}");
		free(keys);
		break;
	}
	case JSON_ARRAY:
		strbuf_addstr(b, "[");
		for (size_t i = 0; i < json_array_size(v); i++) {
			if (i)
				strbuf_addstr(b, ",");
			go_marshal(b, json_array_get(v, i), depth + 1);
		}
		strbuf_addstr(b, "]");
		break;
	case JSON_STRING:
		go_marshal_string(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
	case JSON_REAL:
		go_json_number(v, num, sizeof(num));
		strbuf_addstr(b, num);
		break;
	case JSON_TRUE:
		strbuf_addstr(b, "true");
		break;
	case JSON_FALSE:
		strbuf_addstr(b, "false");
		break;
	case JSON_NULL:
		strbuf_addstr(b, "null");
		break;
	}
}

static char *go_marshal_str(const json_t *v)
{
	struct strbuf b = STRBUF_INIT;

	go_marshal(&b, v, 0);
	return strbuf_detach(&b, NULL);
}

/* ------------------------------------------------------ decoder state */

struct dec {
	const struct ydoc_stream *s;
	const char *file;
	struct dp_diags *diags;
	struct dpconfig *c;
	size_t first_hard, first_saved; /* diag indexes, SIZE_MAX: none */
	struct strbuf path;		/* Go's FieldStack, joined with '.' */
};

static struct ydoc_pos no_pos(void)
{
	struct ydoc_pos p = {.line = 0, .col = 0};
	return p;
}

static struct ydoc_pos key_pos(const struct dec *d, const json_t *obj, const char *key)
{
	struct ydoc_pos p = {.line = 0, .col = 0};

	if (d->s && ydoc_stream_key_pos(d->s, obj, key, &p) < 0)
		p = no_pos();
	return p;
}

static struct ydoc_pos idx_pos(const struct dec *d, const json_t *arr, size_t i)
{
	struct ydoc_pos p = {.line = 0, .col = 0};

	if (d->s && ydoc_stream_index_pos(d->s, arr, i, &p) < 0)
		p = no_pos();
	return p;
}

static void dec_error(struct dec *d, bool hard, struct ydoc_pos pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* hard: a custom UnmarshalJSON failed (Go stops); else a saved type mismatch. */
static void dec_error(struct dec *d, bool hard, struct ydoc_pos pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dp_diags_vadd(d->diags, DP_ERROR, DP_STAGE_DECODE, d->file, pos, fmt, ap);
	va_end(ap);
	if (hard && d->first_hard == SIZE_MAX)
		d->first_hard = d->diags->n - 1;
	if (!hard && d->first_saved == SIZE_MAX)
		d->first_saved = d->diags->n - 1;
}

static void dec_warn(struct dec *d, bool upstream, struct ydoc_pos pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void dec_warn(struct dec *d, bool upstream, struct ydoc_pos pos, const char *fmt, ...)
{
	va_list ap;
	struct dp_diag *x;

	va_start(ap, fmt);
	x = dp_diags_vadd(d->diags, DP_WARNING, DP_STAGE_NONE, d->file, pos, fmt, ap);
	va_end(ap);
	x->upstream = upstream;
}

static void dec_note(struct dec *d, struct ydoc_pos pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void dec_note(struct dec *d, struct ydoc_pos pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dp_diags_vadd(d->diags, DP_NOTE, DP_STAGE_NONE, d->file, pos, fmt, ap);
	va_end(ap);
}

/* json: cannot unmarshal X into Go struct field S.path of type T (a saved error). */
static void type_error(struct dec *d, const char *go_struct, const json_t *v, const char *lit,
		       const char *type, struct ydoc_pos pos)
{
	const char *what = lit ? "number " : gonum_json_kind(v);

	if (!lit)
		lit = "";
	if (go_struct)
		dec_error(d, false, pos,
			  "json: cannot unmarshal %s%s into Go struct field %s.%s of type %s", what,
			  lit, go_struct, d->path.buf, type);
	else
		dec_error(d, false, pos, "json: cannot unmarshal %s%s into Go value of type %s",
			  what, lit, type);
}

/* The same text from inside a hand-written decoder (json.Unmarshal on a plain value). */
static void value_error(struct dec *d, const json_t *v, const char *lit, const char *type,
			struct ydoc_pos pos)
{
	if (lit)
		dec_error(d, true, pos, "json: cannot unmarshal number %s into Go value of type %s",
			  lit, type);
	else
		dec_error(d, true, pos, "json: cannot unmarshal %s into Go value of type %s",
			  gonum_json_kind(v), type);
}

static void record_key(struct dec *d, const char *path, const char *written, struct ydoc_pos pos)
{
	struct dpconfig *c = d->c;

	c->keys = gs_xrealloc(c->keys, (c->n_keys + 1) * sizeof(*c->keys));
	c->keys[c->n_keys].path = gs_xstrdup(path);
	c->keys[c->n_keys].written = gs_xstrdup(written);
	c->keys[c->n_keys].pos = pos;
	c->n_keys++;
}

/* ------------------------------------------------ case folding, hints */

/* One code point of Go's simple fold classes that matter for ASCII names. */
static int fold_char(const char **p)
{
	const unsigned char *s = (const unsigned char *)*p;

	if (s[0] == 0xe2 && s[1] == 0x84 && s[2] == 0xaa) { /* KELVIN SIGN */
		*p += 3;
		return 'k';
	}
	if (s[0] == 0xc5 && s[1] == 0xbf) { /* LATIN SMALL LETTER LONG S */
		*p += 2;
		return 's';
	}
	*p += 1;
	return s[0] >= 'A' && s[0] <= 'Z' ? s[0] + 32 : s[0];
}

/* Go's equalFold for a struct field name against a key. */
static bool equal_fold(const char *name, const char *key)
{
	while (*name && *key)
		if (fold_char(&name) != fold_char(&key))
			return false;
	return !*name && !*key;
}

/* "unknown key" warning, with a suggestion among `known` (and them all when few). */
static void unknown_key(struct dec *d, const char *key, const char *const *known, size_t n,
			bool case_sensitive, struct ydoc_pos pos)
{
	struct strbuf hint = STRBUF_INIT;
	struct dym y;

	dym_init(&y, key);
	for (size_t i = 0; i < n; i++) {
		if (case_sensitive && equal_fold(known[i], key)) {
			dec_warn(d, false, pos,
				 "key '%s' is ignored: keys here are case-sensitive; did you mean "
				 "'%s'?",
				 key, known[i]);
			strbuf_release(&hint);
			return;
		}
		dym_offer(&y, known[i]);
	}
	dym_add_choices(&y, &hint, NULL);
	dec_warn(d, false, pos, "unknown key '%s' is ignored%s", key, hint.buf);
	strbuf_release(&hint);
}

/* Warn about every key of a hand-decoded map that its decoder never reads. */
static void warn_unread_keys(struct dec *d, const json_t *v, const char *const *known, size_t n)
{
	const char *k;
	json_t *val;

	if (!json_is_object(v))
		return;
	json_object_foreach ((json_t *)v, k, val) {
		bool found = false;
		(void)val;
		for (size_t i = 0; i < n; i++)
			found |= !strcmp(k, known[i]);
		if (!found)
			unknown_key(d, k, known, n, true, key_pos(d, v, k));
	}
}

/* ------------------------------------------------------ resource names */

static bool rfc1123_subdomain(const char *s, size_t n)
{
	size_t i = 0;

	if (n == 0 || n > 253)
		return false;
	while (i < n) {
		size_t start = i;
		while (i < n && s[i] != '.') {
			char c = s[i];
			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
				return false;
			i++;
		}
		if (i == start || s[start] == '-' || s[i - 1] == '-')
			return false;
		if (i < n) {
			i++; /* the dot */
			if (i == n)
				return false;
		}
	}
	return true;
}

/*
 * NewResourceName (k8s-device-plugin v0.20.0 api/config/v1/resources.go NewResourceName): prefix
 * "nvidia.com/" unless present, at most 63 characters, RFC 1123 after the prefix. Returns a new
 * string or NULL with the message in msg.
 */
static char *new_resource_name(const char *raw, size_t len, struct strbuf *msg)
{
	char *n;
	size_t plen = strlen(RESOURCE_NAME_PREFIX "/");

	if (len >= plen && !memcmp(raw, RESOURCE_NAME_PREFIX "/", plen)) {
		n = gs_xstrndup(raw, len);
	} else {
		n = gs_xmalloc(plen + len + 1);
		memcpy(n, RESOURCE_NAME_PREFIX "/", plen);
		memcpy(n + plen, raw, len);
		n[plen + len] = '\0';
		len += plen;
	}
	if (len > MAX_RESOURCE_NAME_LENGTH) {
		strbuf_addf(msg, "fully-qualified resource name must be %d characters or less: %s",
			    MAX_RESOURCE_NAME_LENGTH, n);
		free(n);
		return NULL;
	}
	if (strlen(n) != len || !rfc1123_subdomain(n + plen, len - plen)) {
		strbuf_addf(msg, "incorrect format for resource name '%s': [%s]", n, RFC1123_MSG);
		free(n);
		return NULL;
	}
	return n;
}

/* ResourceName.UnmarshalJSON: a string (null reads as ""), then NewResourceName. */
static char *decode_resource_name(struct dec *d, const json_t *v, struct ydoc_pos pos)
{
	struct strbuf msg = STRBUF_INIT;
	char *name;

	if (!json_is_string(v) && !json_is_null(v)) {
		value_error(d, v, NULL, "string", pos);
		return NULL;
	}
	name = json_is_string(v)
		       ? new_resource_name(json_string_value(v), json_string_length(v), &msg)
		       : new_resource_name("", 0, &msg);
	if (!name)
		dec_error(d, true, pos, "%s", msg.buf);
	strbuf_release(&msg);
	return name;
}

/* ------------------------------------------------------------ devices */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* github.com/google/uuid.Parse */
static bool uuid_parse(const char *s, size_t n)
{
	static const int at[16] = {0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34};

	switch (n) {
	case 36:
		break;
	case 36 + 9:
		for (int i = 0; i < 9; i++)
			if ((s[i] | 32) != "urn:uuid:"[i])
				return false;
		s += 9;
		break;
	case 36 + 2:
		s += 1;
		break;
	case 32:
		for (size_t i = 0; i < 32; i++)
			if (hexval(s[i]) < 0)
				return false;
		return true;
	default:
		return false;
	}
	if (s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-')
		return false;
	for (int i = 0; i < 16; i++)
		if (hexval(s[at[i]]) < 0 || hexval(s[at[i] + 1]) < 0)
			return false;
	return true;
}

static bool is_uint(const char *s, size_t n)
{
	long long v;
	char buf[32];

	if (n == 0 || n >= sizeof(buf))
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return go_parse_int(buf, true, &v) == 0;
}

static bool is_gpu_uuid(const char *s, size_t n)
{
	return n >= 4 && !memcmp(s, "GPU-", 4) && uuid_parse(s + 4, n - 4);
}

static bool device_ref_ok(const char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);

	if (strlen(s) != n)
		return false;
	if (is_uint(s, n))
		return true;
	if (colon && is_uint(s, (size_t)(colon - s)) &&
	    is_uint(colon + 1, n - (size_t)(colon - s) - 1))
		return true;
	if (is_gpu_uuid(s, n))
		return true;
	if (n >= 4 && !memcmp(s, "MIG-", 4)) {
		const char *x = s + 4, *end = s + n, *p1, *p2;
		if (uuid_parse(x, (size_t)(end - x)))
			return true;
		p1 = memchr(x, '/', (size_t)(end - x));
		if (!p1)
			return false;
		p2 = memchr(p1 + 1, '/', (size_t)(end - p1 - 1));
		if (!p2)
			return false;
		return is_gpu_uuid(x, (size_t)(p1 - x)) && is_uint(p1 + 1, (size_t)(p2 - p1 - 1)) &&
		       is_uint(p2 + 1, (size_t)(end - p2 - 1));
	}
	return false;
}

/* ReplicatedDevices.UnmarshalJSON (k8s-device-plugin v0.20.0 api/config/v1/replicas.go). Returns 1
 * when not "all". */
static int decode_devices(struct dec *d, const json_t *v, struct ydoc_pos pos)
{
	long long count;
	char lit[64];

	if (json_is_string(v) || json_is_null(v)) {
		const char *s = json_is_string(v) ? json_string_value(v) : "";
		if (strcmp(s, "all") || json_string_length(v) != 3)
			dec_error(d, true, pos,
				  "devices set as '%s' but the only valid string input is 'all'",
				  s);
		return 0;
	}
	if (json_is_number(v) && json_to_int(v, &count, lit, sizeof(lit)) == 0) {
		if (count <= 0)
			dec_error(d, true, pos,
				  "devices set as '%lld' but a count of devices must be > 0",
				  count);
		return 1;
	}
	if (json_is_array(v)) {
		for (size_t i = 0; i < json_array_size(v); i++) {
			const json_t *item = json_array_get(v, i);
			long long index;
			if (json_is_number(item)) {
				go_json_number(item, lit, sizeof(lit));
				if (go_parse_int(lit, true, &index) == 0)
					continue;
			}
			if (json_is_string(item) &&
			    device_ref_ok(json_string_value(item), json_string_length(item)))
				continue;
			dec_error(d, true, idx_pos(d, v, i),
				  "unsupported type for device in devices list: %s, string",
				  json_is_string(item) ? json_string_value(item) : "");
			return 1;
		}
		return 1;
	}
	char *raw = go_marshal_str(v);
	dec_error(d, true, pos, "unrecognized type for devices spec: %s", raw);
	free(raw);
	return 1;
}

/* ------------------------------------------- sharing.{timeSlicing,mps} */

static int decode_plain_bool(struct dec *d, const json_t *v, struct ydoc_pos pos, int *out)
{
	if (json_is_boolean(v)) {
		*out = json_is_true(v);
		return 0;
	}
	if (json_is_null(v))
		return 0;
	value_error(d, v, NULL, "bool", pos);
	return -1;
}

static const char *const replicated_keys[] = {"renameByDefault", "failRequestsGreaterThanOne",
					      "resources"};
static const char *const resource_keys[] = {"name", "rename", "devices", "replicas"};

struct raw_resource {
	char *name, *rename;
	bool rename_set, devices_custom;
	int replicas;
	struct ydoc_pos pos, replicas_pos, rename_pos, devices_pos;
	bool ok;
};

/*
 * replicas: "4": Go's json.Unmarshal into an int refuses a string, so the
 * plugin fails on it (the error above); say how to write it.
 */
static void quoted_number(struct dec *d, const json_t *x, struct ydoc_pos pos)
{
	const char *v = json_string_value(x);

	if (v && *v && strlen(v) < 20 && strspn(v, "0123456789") == strlen(v))
		dec_note(d, pos,
			 "replicas is the quoted string \"%s\": the plugin reads an int and "
			 "refuses a string; write it unquoted (replicas: %s)",
			 v, v);
}

/* ReplicatedResource.UnmarshalJSON: name, devices, replicas, rename, in that order. */
static void decode_replicated_resource(struct dec *d, const json_t *v, struct ydoc_pos pos,
				       struct raw_resource *r)
{
	const json_t *x;
	size_t before = d->diags->n;

	memset(r, 0, sizeof(*r));
	r->pos = pos;
	if (!json_is_object(v) && !json_is_null(v)) {
		value_error(d, v, NULL, "map[string]json.RawMessage", pos);
		return;
	}
	warn_unread_keys(d, v, resource_keys, 4);
	x = json_is_object(v) ? json_object_get(v, "name") : NULL;
	if (!x)
		dec_error(d, true, pos, "no resource name specified");
	else
		r->name = decode_resource_name(d, x, key_pos(d, v, "name"));

	x = json_is_object(v) ? json_object_get(v, "devices") : NULL;
	if (x) {
		r->devices_pos = key_pos(d, v, "devices");
		r->devices_custom = decode_devices(d, x, r->devices_pos) != 0;
	}

	x = json_is_object(v) ? json_object_get(v, "replicas") : NULL;
	if (!x) {
		dec_error(d, true, pos, "no replicas specified");
	} else {
		long long n = 0;
		char lit[64];
		r->replicas_pos = key_pos(d, v, "replicas");
		if (json_is_number(x)) {
			if (json_to_int(x, &n, lit, sizeof(lit)) < 0)
				value_error(d, x, lit, "int", r->replicas_pos);
			else if (n < 2)
				dec_error(d, true, r->replicas_pos,
					  "number of replicas must be >= 2");
			else if (n > DP_MAX_REPLICAS)
				dec_error(d, true, r->replicas_pos,
					  "%lld replicas is more than gpushare handles (%d)", n,
					  DP_MAX_REPLICAS);
			else
				r->replicas = (int)n;
		} else if (json_is_null(x)) {
			dec_error(d, true, r->replicas_pos, "number of replicas must be >= 2");
		} else {
			value_error(d, x, NULL, "int", r->replicas_pos);
			quoted_number(d, x, r->replicas_pos);
		}
	}

	x = json_is_object(v) ? json_object_get(v, "rename") : NULL;
	if (x) {
		r->rename_pos = key_pos(d, v, "rename");
		r->rename_set = true;
		r->rename = decode_resource_name(d, x, r->rename_pos);
	}
	r->ok = true;
	for (size_t i = before; i < d->diags->n; i++)
		if (d->diags->items[i].level == DP_ERROR)
			r->ok = false;
}

/*
 * ReplicatedResources.UnmarshalJSON (k8s-device-plugin v0.20.0 api/config/v1/replicas.go) into sh,
 * then the runtime overrides of DisableResourceNamingInConfig (k8s-device-plugin v0.20.0
 * api/config/v1/config.go DisableResourceNamingInConfig) with their warnings.
 */
static void decode_replicated(struct dec *d, const json_t *v, struct ydoc_pos pos,
			      struct dp_sharing *sh, const char *id)
{
	const json_t *x;
	int flag;
	struct raw_resource *raw = NULL;
	size_t n = 0;
	bool warn_rename = false, warn_devices = false;
	struct ydoc_pos rename_at = {0, 0}, devices_at = {0, 0};

	dp_sharing_reset(sh);
	sh->present = true;
	sh->pos = pos;
	if (!json_is_object(v) && !json_is_null(v)) {
		value_error(d, v, NULL, "map[string]json.RawMessage", pos);
		return;
	}
	warn_unread_keys(d, v, replicated_keys, 3);

	x = json_is_object(v) ? json_object_get(v, "renameByDefault") : NULL;
	if (x) {
		flag = 0;
		sh->rename_by_default_pos = key_pos(d, v, "renameByDefault");
		if (decode_plain_bool(d, x, sh->rename_by_default_pos, &flag) == 0)
			sh->rename_by_default = flag;
	}
	x = json_is_object(v) ? json_object_get(v, "failRequestsGreaterThanOne") : NULL;
	if (x) {
		flag = -1;
		sh->fail_requests_pos = key_pos(d, v, "failRequestsGreaterThanOne");
		if (decode_plain_bool(d, x, sh->fail_requests_pos, &flag) == 0)
			sh->fail_requests_greater_than_one = flag;
	}

	x = json_is_object(v) ? json_object_get(v, "resources") : NULL;
	if (!x) {
		dec_error(d, true, pos, "no resources specified");
		return;
	}
	struct ydoc_pos rpos = key_pos(d, v, "resources");
	if (json_is_null(x) || (json_is_array(x) && json_array_size(x) == 0)) {
		dec_error(d, true, rpos, "no resources specified");
		return;
	}
	if (!json_is_array(x)) {
		value_error(d, x, NULL, "[]v1.ReplicatedResource", rpos);
		return;
	}
	n = json_array_size(x);
	raw = gs_xcalloc(n, sizeof(*raw));
	for (size_t i = 0; i < n; i++)
		decode_replicated_resource(d, json_array_get(x, i), idx_pos(d, x, i), &raw[i]);

	/* Keep what decoded; overrides as the plugin applies them after loading. */
	sh->resources = gs_xcalloc(n, sizeof(*sh->resources));
	for (size_t i = 0; i < n; i++) {
		struct raw_resource *r = &raw[i];
		struct dp_replicated_resource *o;
		if (!r->ok || !r->name) {
			free(r->name);
			free(r->rename);
			continue;
		}
		o = &sh->resources[sh->n_resources++];
		o->name = r->name;
		o->replicas = r->replicas;
		o->pos = r->pos;
		o->replicas_pos = r->replicas_pos;
		char *shared = gs_xasprintf("%s.shared", r->name);
		if (sh->rename_by_default) {
			if (r->rename && strcmp(r->rename, shared)) {
				warn_rename = true;
				if (!rename_at.line)
					rename_at = r->rename_pos;
			}
			o->rename = shared;
		} else {
			if (r->rename_set) {
				warn_rename = true;
				if (!rename_at.line)
					rename_at = r->rename_pos;
			}
			free(shared);
		}
		free(r->rename);
		if (r->devices_custom) {
			warn_devices = true;
			if (!devices_at.line)
				devices_at = r->devices_pos;
		}
	}
	free(raw);
	if (warn_rename)
		dec_warn(d, true, rename_at,
			 "Setting the 'rename' field in sharing.%s.resources is not yet supported "
			 "in "
			 "the config. Ignoring...",
			 id);
	if (warn_devices)
		dec_warn(d, true, devices_at,
			 "Customizing the 'devices' field in sharing.%s.resources is not yet "
			 "supported in the config. Ignoring...",
			 id);
	for (size_t i = 0; i < sh->n_resources; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(sh->resources[i].name, sh->resources[j].name)) {
				dec_warn(d, false, sh->resources[i].pos,
					 "resource '%s' is listed more than once in sharing.%s."
					 "resources: the plugin's result is undefined (replica "
					 "IDs overwrite each other, GFD reports the first entry)",
					 sh->resources[i].name, id);
				break;
			}
}

/* ------------------------------------------------- resources.{gpus,mig} */

static void decode_resource_list(struct dec *d, const json_t *v, struct ydoc_pos pos,
				 const char *go_struct)
{
	static const char *const keys[] = {"pattern", "name"};

	if (json_is_null(v))
		return;
	if (!json_is_array(v)) {
		type_error(d, go_struct, v, NULL, "[]v1.Resource", pos);
		return;
	}
	if (json_array_size(v))
		d->c->resources_customised = true;
	for (size_t i = 0; i < json_array_size(v); i++) {
		const json_t *e = json_array_get(v, i);
		struct ydoc_pos ep = idx_pos(d, v, i);
		const json_t *pattern, *name;
		const char *k;
		json_t *val;

		if (!json_is_object(e) && !json_is_null(e)) {
			value_error(d, e, NULL, "map[string]json.RawMessage", ep);
			continue;
		}
		if (json_is_object(e))
			json_object_foreach ((json_t *)e, k, val) {
				(void)val;
				if (strcmp(k, "pattern") && strcmp(k, "name"))
					unknown_key(d, k, keys, 2, true, key_pos(d, e, k));
			}
		pattern = json_is_object(e) ? json_object_get(e, "pattern") : NULL;
		name = json_is_object(e) ? json_object_get(e, "name") : NULL;
		if (!pattern) {
			dec_error(d, true, ep, "resources must have a 'pattern' field set");
			continue;
		}
		if (!name) {
			dec_error(d, true, ep, "resources must have a 'name' field set");
			continue;
		}
		if (!json_is_string(pattern) && !json_is_null(pattern))
			value_error(d, pattern, NULL, "v1.ResourcePattern",
				    key_pos(d, e, "pattern"));
		free(decode_resource_name(d, name, key_pos(d, e, "name")));
	}
}

/* ------------------------------------------------- Go struct decoding */

enum fkind {
	FK_STRING,     /* *string (or string: version) */
	FK_BOOL,       /* *bool */
	FK_BOOL_VALUE, /* bool */
	FK_DURATION,   /* *Duration */
	FK_DLS,	       /* *deviceListStrategyFlag */
	FK_INT_SLICE,  /* []int */
	FK_STRUCT,     /* a nested struct value */
	FK_STRUCT_PTR, /* a pointer to a nested struct */
	FK_REPLICATED, /* ReplicatedResources (value: null still decodes) */
	FK_REPLICATED_PTR,
	FK_RESOURCE_LIST, /* []Resource */
};

enum fid {
	F_NONE,
	F_VERSION,
	F_MIG_STRATEGY,
	F_FAIL_ON_INIT,
	F_MPS_ROOT,
	F_DRIVER_ROOT,
	F_DEVICE_LIST,
	F_DEVICE_ID,
	F_DISCOVERY,
	F_ALLOC_POLICY,
	F_PLUGIN,
	F_TIME_SLICING,
	F_MPS,
	F_CHANNEL_IDS,
	F_REQUIRED,
};

struct gotype;

struct field {
	const char *name;
	enum fkind kind;
	enum fid id;
	const struct gotype *sub;
};

struct gotype {
	const char *name; /* Go struct name in messages: "Flags" */
	const char *type; /* its type in messages: "v1.Flags" */
	const struct field *fields;
	size_t n;
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct field plugin_fields[] = {
	{"passDeviceSpecs", FK_BOOL, F_NONE, NULL},
	{"deviceListStrategy", FK_DLS, F_DEVICE_LIST, NULL},
	{"deviceIDStrategy", FK_STRING, F_DEVICE_ID, NULL},
	{"cdiAnnotationPrefix", FK_STRING, F_NONE, NULL},
	{"nvidiaCTKPath", FK_STRING, F_NONE, NULL},
	{"containerDriverRoot", FK_STRING, F_NONE, NULL},
	{"sharedDevicesAllocationPolicy", FK_STRING, F_ALLOC_POLICY, NULL},
};
static const struct gotype plugin_type = {.name = "PluginCommandLineFlags",
					  .type = "v1.PluginCommandLineFlags",
					  .fields = plugin_fields,
					  .n = N(plugin_fields)};

static const struct field gfd_fields[] = {
	{"oneshot", FK_BOOL, F_NONE, NULL},	      {"noTimestamp", FK_BOOL, F_NONE, NULL},
	{"sleepInterval", FK_DURATION, F_NONE, NULL}, {"outputFile", FK_STRING, F_NONE, NULL},
	{"machineTypeFile", FK_STRING, F_NONE, NULL},
};
static const struct gotype gfd_type = {.name = "GFDCommandLineFlags",
				       .type = "v1.GFDCommandLineFlags",
				       .fields = gfd_fields,
				       .n = N(gfd_fields)};

static const struct field flags_fields[] = {
	{"migStrategy", FK_STRING, F_MIG_STRATEGY, NULL},
	{"failOnInitError", FK_BOOL, F_FAIL_ON_INIT, NULL},
	{"mpsRoot", FK_STRING, F_MPS_ROOT, NULL},
	{"nvidiaDriverRoot", FK_STRING, F_DRIVER_ROOT, NULL},
	{"nvidiaDevRoot", FK_STRING, F_NONE, NULL},
	{"gdrcopyEnabled", FK_BOOL, F_NONE, NULL},
	{"gdsEnabled", FK_BOOL, F_NONE, NULL},
	{"mofedEnabled", FK_BOOL, F_NONE, NULL},
	{"useNodeFeatureAPI", FK_BOOL, F_NONE, NULL},
	{"deviceDiscoveryStrategy", FK_STRING, F_DISCOVERY, NULL},
	{"plugin", FK_STRUCT_PTR, F_PLUGIN, &plugin_type},
	{"gfd", FK_STRUCT_PTR, F_NONE, &gfd_type},
};
static const struct gotype flags_type = {
	.name = "Flags", .type = "v1.Flags", .fields = flags_fields, .n = N(flags_fields)};

static const struct field resources_fields[] = {
	{"gpus", FK_RESOURCE_LIST, F_NONE, NULL},
	{"mig", FK_RESOURCE_LIST, F_NONE, NULL},
};
static const struct gotype resources_type = {.name = "Resources",
					     .type = "v1.Resources",
					     .fields = resources_fields,
					     .n = N(resources_fields)};

static const struct field sharing_fields[] = {
	{"timeSlicing", FK_REPLICATED, F_TIME_SLICING, NULL},
	{"mps", FK_REPLICATED_PTR, F_MPS, NULL},
};
static const struct gotype sharing_type = {
	.name = "Sharing", .type = "v1.Sharing", .fields = sharing_fields, .n = N(sharing_fields)};

static const struct field imex_fields[] = {
	{"channelIDs", FK_INT_SLICE, F_CHANNEL_IDS, NULL},
	{"required", FK_BOOL_VALUE, F_REQUIRED, NULL},
};
static const struct gotype imex_type = {
	.name = "Imex", .type = "v1.Imex", .fields = imex_fields, .n = N(imex_fields)};

static const struct field config_fields[] = {
	{"version", FK_STRING, F_VERSION, NULL},
	{"flags", FK_STRUCT, F_NONE, &flags_type},
	{"resources", FK_STRUCT, F_NONE, &resources_type},
	{"sharing", FK_STRUCT, F_NONE, &sharing_type},
	{"imex", FK_STRUCT, F_NONE, &imex_type},
};
static const struct gotype config_type = {
	.name = "Config", .type = "v1.Config", .fields = config_fields, .n = N(config_fields)};

static char **string_slot(struct dpconfig *c, enum fid id)
{
	switch (id) {
	case F_VERSION:
		return &c->version;
	case F_MIG_STRATEGY:
		return &c->mig_strategy;
	case F_MPS_ROOT:
		return &c->mps_root;
	case F_DRIVER_ROOT:
		return &c->nvidia_driver_root;
	case F_DEVICE_ID:
		return &c->device_id_strategy;
	case F_DISCOVERY:
		return &c->device_discovery_strategy;
	case F_ALLOC_POLICY:
		return &c->shared_devices_allocation_policy;
	default:
		return NULL;
	}
}

static void set_string(struct dpconfig *c, enum fid id, const char *v, size_t len)
{
	char **slot = string_slot(c, id);

	if (!slot)
		return;
	free(*slot);
	*slot = v ? gs_xstrndup(v, len) : NULL;
}

static void clear_plugin(struct dpconfig *c)
{
	dpconfig_clear_device_list(c);
	set_string(c, F_DEVICE_ID, NULL, 0);
	set_string(c, F_ALLOC_POLICY, NULL, 0);
}

/* time.ParseDuration's verdict, with its message. */
static int go_parse_duration(const char *orig, struct strbuf *msg)
{
	const char *s = orig;
	static const char *const units[] = {"ns", "us", "\xc2\xb5s", "\xce\xbcs",
					    "ms", "s",	"m",	     "h"};

	if (*s == '-' || *s == '+')
		s++;
	if (!strcmp(s, "0"))
		return 0;
	if (!*s)
		goto invalid;
	while (*s) {
		bool pre = false, post = false;
		if (!(*s == '.' || (*s >= '0' && *s <= '9')))
			goto invalid;
		while (*s >= '0' && *s <= '9') {
			s++;
			pre = true;
		}
		if (*s == '.') {
			s++;
			while (*s >= '0' && *s <= '9') {
				s++;
				post = true;
			}
		}
		if (!pre && !post)
			goto invalid;
		const char *u = s;
		while (*s && *s != '.' && !(*s >= '0' && *s <= '9'))
			s++;
		if (s == u) {
			strbuf_addf(msg, "time: missing unit in duration \"%s\"", orig);
			return -1;
		}
		bool known = false;
		for (size_t i = 0; i < N(units); i++)
			known |= strlen(units[i]) == (size_t)(s - u) &&
				 !memcmp(units[i], u, (size_t)(s - u));
		if (!known) {
			strbuf_addf(msg, "time: unknown unit \"%.*s\" in duration \"%s\"",
				    (int)(s - u), u, orig);
			return -1;
		}
	}
	return 0;
invalid:
	strbuf_addf(msg, "time: invalid duration \"%s\"", orig);
	return -1;
}

static void decode_struct(struct dec *d, const json_t *v, struct ydoc_pos pos,
			  const struct gotype *t, const char *outer, const char *canon);

static void decode_field(struct dec *d, const struct field *f, const struct gotype *owner,
			 const json_t *v, struct ydoc_pos pos, const char *canon)
{
	char lit[64];
	long long n;

	switch (f->kind) {
	case FK_STRING:
		if (json_is_null(v)) {
			if (f->id != F_VERSION) /* a pointer: null resets it */
				set_string(d->c, f->id, NULL, 0);
		} else if (json_is_string(v)) {
			set_string(d->c, f->id, json_string_value(v), json_string_length(v));
		} else if (f->id == F_VERSION && (json_is_number(v) || json_is_boolean(v))) {
			/* sigs.k8s.io/yaml turns a scalar aimed at a string field into text */
			if (dpdecode_scalar_text(v, lit, sizeof(lit)) == 0)
				set_string(d->c, f->id, lit, strlen(lit));
		} else {
			type_error(d, owner->name, v, NULL, "string", pos);
		}
		break;
	case FK_BOOL:
	case FK_BOOL_VALUE:
		if (json_is_boolean(v)) {
			if (f->id == F_FAIL_ON_INIT)
				d->c->fail_on_init_error = json_is_true(v);
			else if (f->id == F_REQUIRED)
				d->c->imex_required = json_is_true(v);
		} else if (json_is_null(v)) {
			if (f->id == F_FAIL_ON_INIT)
				d->c->fail_on_init_error = -1;
		} else {
			type_error(d, owner->name, v, NULL, "bool", pos);
		}
		break;
	case FK_DURATION:
		if (json_is_null(v) || json_is_number(v))
			break;
		if (json_is_string(v)) {
			struct strbuf msg = STRBUF_INIT;
			if (strcmp(json_string_value(v), "infinite") &&
			    go_parse_duration(json_string_value(v), &msg))
				dec_error(d, true, pos, "%s", msg.buf);
			strbuf_release(&msg);
			break;
		}
		dec_error(d, true, pos, "invalid duration");
		break;
	case FK_DLS:
		if (json_is_null(v)) {
			dpconfig_clear_device_list(d->c);
		} else if (json_is_string(v)) {
			dpconfig_clear_device_list(d->c);
			d->c->device_list_strategies = gs_xcalloc(1, sizeof(char *));
			d->c->device_list_strategies[0] = gs_xstrdup(json_string_value(v));
			d->c->n_device_list_strategies = 1;
		} else {
			bool ok = json_is_array(v);
			for (size_t i = 0; ok && i < json_array_size(v); i++) {
				const json_t *e = json_array_get(v, i);
				ok = json_is_string(e) || json_is_null(e);
			}
			if (!ok) {
				char *raw = go_marshal_str(v);
				dec_error(d, true, pos, "invalid deviceListStrategy: %s", raw);
				free(raw);
				break;
			}
			dpconfig_clear_device_list(d->c);
			d->c->n_device_list_strategies = json_array_size(v);
			d->c->device_list_strategies =
				gs_xcalloc(json_array_size(v) + 1, sizeof(char *));
			for (size_t i = 0; i < json_array_size(v); i++) {
				const json_t *e = json_array_get(v, i);
				d->c->device_list_strategies[i] =
					gs_xstrdup(json_is_string(e) ? json_string_value(e) : "");
			}
		}
		d->c->device_list_strategy =
			d->c->n_device_list_strategies ? d->c->device_list_strategies[0] : NULL;
		break;
	case FK_INT_SLICE:
		if (json_is_null(v)) {
			free(d->c->imex_channel_ids);
			d->c->imex_channel_ids = NULL;
			d->c->n_imex_channel_ids = 0;
			break;
		}
		if (!json_is_array(v)) {
			type_error(d, owner->name, v, NULL, "[]int", pos);
			break;
		}
		free(d->c->imex_channel_ids);
		d->c->n_imex_channel_ids = json_array_size(v);
		d->c->imex_channel_ids = gs_xcalloc(json_array_size(v) + 1, sizeof(int));
		for (size_t i = 0; i < json_array_size(v); i++) {
			const json_t *e = json_array_get(v, i);
			struct ydoc_pos ep = idx_pos(d, v, i);
			if (json_is_null(e))
				continue;
			if (!json_is_number(e)) {
				type_error(d, owner->name, e, NULL, "int", ep);
				continue;
			}
			if (json_to_int(e, &n, lit, sizeof(lit)) < 0) {
				type_error(d, owner->name, e, lit, "int", ep);
				continue;
			}
			d->c->imex_channel_ids[i] = n > INT_MAX	  ? INT_MAX
						    : n < INT_MIN ? INT_MIN
								  : (int)n;
		}
		break;
	case FK_STRUCT:
		decode_struct(d, v, pos, f->sub, owner->name, canon);
		break;
	case FK_STRUCT_PTR:
		if (json_is_null(v)) {
			if (f->id == F_PLUGIN)
				clear_plugin(d->c);
			break;
		}
		decode_struct(d, v, pos, f->sub, owner->name, canon);
		break;
	case FK_REPLICATED:
		decode_replicated(d, v, pos, &d->c->time_slicing, "timeSlicing");
		break;
	case FK_REPLICATED_PTR:
		if (json_is_null(v)) {
			dp_sharing_reset(&d->c->mps);
			break;
		}
		decode_replicated(d, v, pos, &d->c->mps, "mps");
		break;
	case FK_RESOURCE_LIST:
		decode_resource_list(d, v, pos, owner->name);
		break;
	}
}

/*
 * Decode an object into Go struct t. `outer` is the struct holding this
 * value (NULL at the top) for Go's error text; canon the canonical path.
 */
static void decode_struct(struct dec *d, const json_t *v, struct ydoc_pos pos,
			  const struct gotype *t, const char *outer, const char *canon)
{
	size_t nk;
	const char **keys;
	const char *names[16];

	if (json_is_null(v))
		return;
	if (!json_is_object(v)) {
		type_error(d, outer, v, NULL, t->type, pos);
		return;
	}
	for (size_t i = 0; i < t->n; i++)
		names[i] = t->fields[i].name;
	keys = sorted_keys(v, &nk);
	for (size_t i = 0; i < nk; i++) {
		const struct field *f = NULL;
		const json_t *val = json_object_get(v, keys[i]);
		struct ydoc_pos vp = key_pos(d, v, keys[i]);

		for (size_t j = 0; j < t->n && !f; j++)
			if (!strcmp(t->fields[j].name, keys[i]))
				f = &t->fields[j];
		for (size_t j = 0; j < t->n && !f; j++)
			if (equal_fold(t->fields[j].name, keys[i]))
				f = &t->fields[j];
		if (!f) {
			unknown_key(d, keys[i], names, t->n, false, vp);
			continue;
		}
		if (strcmp(f->name, keys[i]))
			dec_note(d, vp,
				 "key '%s' is read as '%s' (Go matches struct fields "
				 "case-insensitively)",
				 keys[i], f->name);

		struct strbuf sub = STRBUF_INIT;
		size_t saved = d->path.len;
		strbuf_addf(&sub, "%s%s%s", canon, *canon ? "." : "", f->name);
		record_key(d, sub.buf, keys[i], vp);
		strbuf_addf(&d->path, "%s%s", saved ? "." : "", f->name);
		decode_field(d, f, t, val, vp, sub.buf);
		strbuf_setlen(&d->path, saved);
		strbuf_release(&sub);
	}
	free(keys);
}

int dpconfig_parse_diags(const char *file, const char *key, const char *text, size_t len,
			 struct ydoc_pos origin, struct dpconfig **out, struct dp_diags *diags,
			 struct gs_error *err)
{
	struct ydoc_stream *s = NULL;
	struct gs_error yerr;
	struct dp_diags local;
	struct dec d;
	const json_t *doc;

	*out = NULL;
	if (!diags) {
		dp_diags_init(&local);
		diags = &local;
	}
	if (!file)
		file = key ? key : "";
	if (ydoc_load_buffer(file, text, len, origin, &ydoc_default_limits, &s, &yerr) < 0) {
		struct ydoc_pos p = {.line = yerr.line, .col = yerr.col};
		struct dp_diag *x;
		dp_diags_add(diags, DP_ERROR, DP_STAGE_YAML, yerr.file[0] ? yerr.file : file, p,
			     "%s", yerr.msg);
		x = &diags->items[diags->n - 1];
		x->upstream = true;
		dp_diag_to_error(x, err);
		if (diags == &local)
			dp_diags_release(&local);
		return -1;
	}

	memset(&d, 0, sizeof(d));
	strbuf_init(&d.path, 0);
	d.s = s;
	d.file = file;
	d.diags = diags;
	d.c = dpconfig_new(key ? key : file);
	d.first_hard = d.first_saved = SIZE_MAX;
	doc = ydoc_stream_count(s) ? ydoc_stream_doc(s, 0) : NULL;
	if (doc) {
		struct ydoc_pos top = {.line = 0, .col = 0};
		if (ydoc_stream_pos(s, doc, &top) < 0)
			top = no_pos();
		decode_struct(&d, doc, top, &config_type, NULL, "");
	}

	size_t up = d.first_hard != SIZE_MAX ? d.first_hard : d.first_saved;
	if (up == SIZE_MAX) {
		const struct dp_key *vk = dpconfig_key(d.c, "version");
		const char *ver = d.c->version && *d.c->version ? d.c->version : "v1";
		if (strcmp(ver, "v1")) {
			dp_diags_add(diags, DP_ERROR, DP_STAGE_VERSION, file,
				     vk ? vk->pos : no_pos(), "unknown version: %s", ver);
			up = diags->n - 1;
		}
	}
	if (d.c->resources_customised && up == SIZE_MAX) {
		const struct dp_key *rk = dpconfig_key(d.c, "resources");
		dec_warn(&d, true, rk ? rk->pos : no_pos(),
			 "Customizing the 'resources' field is not yet supported in the config. "
			 "Ignoring...");
	}
	ydoc_stream_free(s);
	strbuf_release(&d.path);
	if (up != SIZE_MAX) {
		diags->items[up].upstream = true;
		dp_diag_to_error(&diags->items[up], err);
		dpconfig_free(d.c);
		if (diags == &local)
			dp_diags_release(&local);
		return -1;
	}
	*out = d.c;
	if (diags == &local)
		dp_diags_release(&local);
	return 0;
}

int dpconfig_parse(const char *name, const char *text, size_t len, struct ydoc_pos origin,
		   struct dpconfig **out, struct gs_warnings *warnings, struct gs_error *err)
{
	struct dp_diags diags;
	struct strbuf line = STRBUF_INIT;
	int rc;

	dp_diags_init(&diags);
	rc = dpconfig_parse_diags(name, NULL, text, len, origin, out, &diags, err);
	if (rc == 0 && warnings) {
		for (size_t i = 0; i < diags.n; i++) {
			const struct dp_diag *x = &diags.items[i];
			if (x->level != DP_WARNING || !x->upstream)
				continue;
			strbuf_reset(&line);
			dp_diag_addstr(&line, x);
			gs_warnings_add(warnings, "%s", line.buf);
		}
	}
	strbuf_release(&line);
	dp_diags_release(&diags);
	return rc;
}
