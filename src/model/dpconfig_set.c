#include "model/dpconfig_set.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/didyoumean.h"
#include "model/dpdecode.h"
#include "base/gonum.h"
#include "model/kobj.h"
#include "base/banned.h"

/*
 * The ConfigMap of named configs (k8s-device-plugin v0.20.0 cmd/config-manager/main.go) and
 * config-manager's choice among them (k8s-device-plugin v0.20.0 cmd/config-manager/main.go
 * updateConfigName).
 */

/* ------------------------------------------------------ ConfigMap set */

struct set_entry {
	char *key;
	struct dpconfig *config;
	struct gs_error err;
	struct dp_diags diags;
	struct ydoc_pos pos;
};

struct dpconfig_set {
	struct set_entry *e;
	size_t n;
	struct dp_diags own;
};

static struct ydoc_pos key_pos(const struct ydoc_stream *s, const json_t *obj, const char *key)
{
	struct ydoc_pos p = {.line = 0, .col = 0};

	if (s && ydoc_stream_key_pos(s, obj, key, &p) < 0)
		p = (struct ydoc_pos){0, 0};
	return p;
}

/* Go's base64.StdEncoding.DecodeString, which skips \r and \n. */
static int base64_decode(const char *in, size_t n, char **out, size_t *out_len)
{
	char *o = gs_xmalloc(n / 4 * 3 + 4);
	size_t len = 0;
	unsigned acc = 0;
	int bits = 0, quad = 0, pad = 0;

	for (size_t i = 0; i < n; i++) {
		char c = in[i];
		int v;
		if (c == '\r' || c == '\n')
			continue;
		if (c == '=') {
			pad++;
			quad++;
			continue;
		}
		if (pad)
			goto bad;
		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 26;
		else if (c >= '0' && c <= '9')
			v = c - '0' + 52;
		else if (c == '+')
			v = 62;
		else if (c == '/')
			v = 63;
		else
			goto bad;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		quad++;
		if (bits >= 8) {
			bits -= 8;
			o[len++] = (char)((acc >> bits) & 0xff);
		}
	}
	if (quad % 4 || pad > 2)
		goto bad;
	*out = o;
	*out_len = len;
	return 0;
bad:
	free(o);
	return -1;
}

/* A new, empty entry for key at the end of the set. */
static struct set_entry *set_entry_new(struct dpconfig_set *set, const char *key,
				       struct ydoc_pos pos)
{
	struct set_entry *e;

	set->e = gs_xrealloc(set->e, (set->n + 1) * sizeof(*set->e));
	e = &set->e[set->n++];
	memset(e, 0, sizeof(*e));
	e->key = gs_xstrdup(key);
	e->pos = pos;
	dp_diags_init(&e->diags);
	return e;
}

/* Key `key` holding config text; relocate: its findings all point at pos (binaryData). */
static void set_add(struct dpconfig_set *set, const char *file, const char *key, const char *text,
		    size_t len, struct ydoc_pos origin, struct ydoc_pos pos, bool relocate)
{
	struct set_entry *e = set_entry_new(set, key, pos);

	if (dpconfig_parse_diags(file, key, text, len, origin, &e->config, &e->diags, &e->err) < 0)
		e->config = NULL;
	if (relocate) {
		/* binaryData: positions inside the decoded text mean nothing in the file */
		for (size_t i = 0; i < e->diags.n; i++)
			e->diags.items[i].pos = pos;
		if (!e->config && pos.line > 0) {
			e->err.line = pos.line;
			e->err.col = pos.col;
		}
	}
}

static void set_entry_error(struct dpconfig_set *set, const char *file, const char *key,
			    struct ydoc_pos pos, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void set_entry_error(struct dpconfig_set *set, const char *file, const char *key,
			    struct ydoc_pos pos, const char *fmt, ...)
{
	struct set_entry *e = set_entry_new(set, key, pos);
	va_list ap;

	va_start(ap, fmt);
	dp_diags_vadd(&e->diags, DP_ERROR, DP_STAGE_NONE, file, pos, fmt, ap);
	va_end(ap);
	e->diags.items[0].upstream = true;
	dp_diag_to_error(&e->diags.items[0], &e->err);
}

static bool skipped_key(struct dpconfig_set *set, const char *file, const char *key,
			struct ydoc_pos pos)
{
	if (strncmp(key, "..", 2))
		return false;
	dp_diags_add(&set->own, DP_WARNING, DP_STAGE_NONE, file, pos,
		     "key '%s' is skipped: config-manager ignores entries starting with '..' (and "
		     "the apiserver refuses such ConfigMap keys)",
		     key);
	return true;
}

int dpconfig_set_from_configmap(const struct ydoc_stream *s, const json_t *configmap,
				struct dpconfig_set **out, struct gs_error *err)
{
	const char *file = s ? ydoc_stream_name(s) : "configmap";
	struct dpconfig_set *set;
	const json_t *data, *bin, *kind;
	const char *k;
	json_t *v;

	*out = NULL;
	if (!json_is_object(configmap)) {
		ydoc_error_at(s, configmap, err, "a ConfigMap must be a mapping");
		return -1;
	}
	kind = json_object_get(configmap, "kind");
	if (kind && (!json_is_string(kind) || strcmp(json_string_value(kind), "ConfigMap"))) {
		ydoc_error_at_key(s, configmap, "kind", err, "expected kind ConfigMap, found %s",
				  json_is_string(kind) ? json_string_value(kind) : "no string");
		return -1;
	}
	data = json_object_get(configmap, "data");
	bin = json_object_get(configmap, "binaryData");
	if (data && !json_is_object(data) && !json_is_null(data)) {
		ydoc_error_at_key(s, configmap, "data", err,
				  "ConfigMap data must be a mapping of strings");
		return -1;
	}
	if (bin && !json_is_object(bin) && !json_is_null(bin)) {
		ydoc_error_at_key(s, configmap, "binaryData", err,
				  "ConfigMap binaryData must be a mapping of strings");
		return -1;
	}

	set = gs_xcalloc(1, sizeof(*set));
	dp_diags_init(&set->own);
	if (json_is_object(data)) {
		json_object_foreach ((json_t *)data, k, v) {
			struct ydoc_pos pos = key_pos(s, data, k), origin = {0, 0};
			char lit[GONUM_BUFSZ];
			if (skipped_key(set, file, k, pos))
				continue;
			if (json_is_string(v)) {
				if (s && ydoc_stream_content_origin(s, v, &origin) < 0)
					origin = (struct ydoc_pos){0, 0};
				set_add(set, file, k, json_string_value(v), json_string_length(v),
					origin, pos, false);
				continue;
			}
			/* sigs.k8s.io/yaml gives a map of strings the scalar's text */
			if (dpdecode_scalar_text(v, lit, sizeof(lit)) < 0) {
				set_entry_error(set, file, k, pos,
						"json: cannot unmarshal %s into Go struct field "
						"ConfigMap.data of type string",
						gonum_json_kind(v));
				continue;
			}
			set_add(set, file, k, lit, strlen(lit), pos, pos, true);
		}
	}
	if (json_is_object(bin)) {
		json_object_foreach ((json_t *)bin, k, v) {
			struct ydoc_pos pos = key_pos(s, bin, k);
			char *text;
			size_t len;
			if (skipped_key(set, file, k, pos))
				continue;
			if (json_is_object(data) && json_object_get(data, k)) {
				dp_diags_add(&set->own, DP_ERROR, DP_STAGE_NONE, file, pos,
					     "binaryData key '%s' is also in data: the apiserver "
					     "refuses the ConfigMap",
					     k);
				continue;
			}
			if (!json_is_string(v)) {
				set_entry_error(set, file, k, pos,
						"binaryData values must be base64 strings");
				continue;
			}
			if (base64_decode(json_string_value(v), json_string_length(v), &text,
					  &len)) {
				set_entry_error(set, file, k, pos,
						"illegal base64 data in binaryData value");
				continue;
			}
			set_add(set, file, k, text, len, (struct ydoc_pos){0, 0}, pos, true);
			free(text);
		}
	}
	*out = set;
	return 0;
}

size_t dpconfig_set_count(const struct dpconfig_set *set)
{
	return set ? set->n : 0;
}

const char *dpconfig_set_key(const struct dpconfig_set *set, size_t i)
{
	return i < set->n ? set->e[i].key : NULL;
}

const struct dpconfig *dpconfig_set_get(const struct dpconfig_set *set, size_t i,
					const struct gs_error **err)
{
	if (i >= set->n)
		return NULL;
	if (!set->e[i].config && err)
		*err = &set->e[i].err;
	return set->e[i].config;
}

const struct dp_diags *dpconfig_set_diags(const struct dpconfig_set *set, size_t i)
{
	return i < set->n ? &set->e[i].diags : NULL;
}

const struct dp_diags *dpconfig_set_own_diags(const struct dpconfig_set *set)
{
	return &set->own;
}

struct ydoc_pos dpconfig_set_key_pos(const struct dpconfig_set *set, size_t i)
{
	return i < set->n ? set->e[i].pos : (struct ydoc_pos){0, 0};
}

long dpconfig_set_find(const struct dpconfig_set *set, const char *key)
{
	for (size_t i = 0; set && i < set->n; i++)
		if (!strcmp(set->e[i].key, key))
			return (long)i;
	return -1;
}

/* Choose key i: fails with its parse error when it did not parse. */
static int choose_key(const struct dpconfig_set *set, long i, struct dpconfig_choice *out,
		      struct gs_error *err)
{
	const struct set_entry *e = &set->e[i];

	out->name = e->key;
	out->key = i;
	out->config = e->config;
	if (!e->config) {
		*err = e->err;
		return -1;
	}
	return 0;
}

const char *const dpconfig_fallback_strategies[] = {"named", "single", "empty", NULL};

/*
 * The next word of a FALLBACK_STRATEGIES list as urfave/cli splits it: on
 * commas, blanks trimmed. *p starts at fallback_words(list) and is NULL once
 * the list is used up (an empty list has no word, "a," has two: "a" and "").
 */
static const char *fallback_words(const char *list)
{
	return list && *list ? list : NULL;
}

static bool fallback_next(const char **p, const char **word, size_t *n)
{
	const char *a = *p, *end, *b;

	if (!a)
		return false;
	end = strchr(a, ',');
	b = end ? end : a + strlen(a);
	while (a < b && (*a == ' ' || *a == '\t'))
		a++;
	while (b > a && (b[-1] == ' ' || b[-1] == '\t'))
		b--;
	*word = a;
	*n = (size_t)(b - a);
	*p = end ? end + 1 : NULL;
	return true;
}

int dpconfig_fallbacks_check(const char *fallbacks, struct gs_error *err)
{
	const char *p = fallback_words(fallbacks), *w;
	size_t n, k;

	while (fallback_next(&p, &w, &n)) {
		for (k = 0; dpconfig_fallback_strategies[k]; k++)
			if (strlen(dpconfig_fallback_strategies[k]) == n &&
			    !memcmp(dpconfig_fallback_strategies[k], w, n))
				break;
		if (!dpconfig_fallback_strategies[k]) {
			struct strbuf word = STRBUF_INIT, msg = STRBUF_INIT;
			strbuf_add(&word, w, n);
			strbuf_addf(&msg, "unknown fallback strategy '%s'", word.buf);
			dym_suggest(&msg, word.buf, dpconfig_fallback_strategies, k, NULL);
			gs_error_set(err, "%s", msg.buf);
			strbuf_release(&word);
			strbuf_release(&msg);
			return -1;
		}
	}
	return 0;
}

int dpconfig_set_select(const struct dpconfig_set *set, const char *label,
			const char *default_config, const char *fallbacks,
			struct dpconfig_choice *out, struct gs_error *err)
{
	const char *p, *a;
	size_t n;
	long i;

	out->config = NULL;
	out->name = "";
	out->key = -1;
	if (!label)
		label = "";
	if (!set || set->n == 0) {
		gs_error_set(err, "no configuration files available");
		return -1;
	}
	if (*label) {
		i = dpconfig_set_find(set, label);
		if (i < 0) {
			gs_error_set(err, "specified config %s does not exist", label);
			return -1;
		}
		return choose_key(set, i, out, err);
	}
	if (default_config && *default_config) {
		i = dpconfig_set_find(set, default_config);
		if (i < 0) {
			/* upstream prints the (empty) label, not the default: two spaces */
			gs_error_set(err, "specified config %s does not exist", label);
			return -1;
		}
		return choose_key(set, i, out, err);
	}
	p = fallback_words(fallbacks ? fallbacks : "named,single");
	while (fallback_next(&p, &a, &n)) {
		if (n == 5 && !memcmp(a, "named", 5)) {
			i = dpconfig_set_find(set, "default");
			if (i >= 0)
				return choose_key(set, i, out, err);
		} else if (n == 6 && !memcmp(a, "single", 6)) {
			if (set->n == 1)
				return choose_key(set, 0, out, err);
		} else if (n == 5 && !memcmp(a, "empty", 5)) {
			return 0;
		} else {
			gs_error_set(err, "unknown fallback strategy: %.*s", (int)n, a);
			return -1;
		}
	}
	gs_error_set(err, "no config was set, no default was provided, and all fallbacks failed");
	return -1;
}

void dpconfig_set_free(struct dpconfig_set *set)
{
	if (!set)
		return;
	for (size_t i = 0; i < set->n; i++) {
		free(set->e[i].key);
		dpconfig_free(set->e[i].config);
		dp_diags_release(&set->e[i].diags);
	}
	free(set->e);
	dp_diags_release(&set->own);
	free(set);
}

int dpconfig_set_load_file(const char *path, struct ydoc_stream **stream, const json_t **configmap,
			   struct dpconfig_set **out, struct gs_error *err)
{
	long i;

	*out = NULL;
	if (ydoc_load_file(path, &ydoc_default_limits, stream, err))
		return -1;
	i = kobj_find(*stream, 0, "ConfigMap", NULL);
	if (i < 0) {
		gs_error_set(err, "%s: no ConfigMap in the file", path);
		return -1;
	}
	if (kobj_find(*stream, (size_t)i + 1, "ConfigMap", NULL) >= 0) {
		gs_error_set(err,
			     "%s: more than one ConfigMap; keep the device-plugin one alone in the "
			     "file",
			     path);
		return -1;
	}
	if (configmap)
		*configmap = ydoc_stream_doc(*stream, (size_t)i);
	return dpconfig_set_from_configmap(*stream, ydoc_stream_doc(*stream, (size_t)i), out, err);
}
