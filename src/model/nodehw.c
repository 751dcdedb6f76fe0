#include "model/nodehw.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/kobj.h"
#include "base/readfile.h"

#include "base/banned.h"

/*
 * The plain scalar as written at `pos` of the file, for a value YAML 1.1
 * turned into a boolean (n, no, off, y, yes, on): "" when unknown.
 */
static void source_text(const struct ydoc_stream *src, struct ydoc_pos pos, char *out, size_t size)
{
	const char *name = src ? ydoc_stream_name(src) : NULL;
	char *buf = NULL, *p;
	size_t len, n = 0;
	struct gs_error e;

	out[0] = '\0';
	if (!name || !strcmp(name, "-") || pos.line < 1 || pos.col < 1 ||
	    gs_read_file(name, (size_t)64 << 20, &buf, &len, &e))
		return;
	p = buf;
	for (int line = 1; line < pos.line && p; line++) {
		p = strchr(p, '\n');
		p = p ? p + 1 : NULL;
	}
	for (int col = 1; p && col < pos.col && *p && *p != '\n'; col++)
		p++;
	while (p && p[n] && !strchr(" \t\r\n#,}]", p[n]) && n + 1 < size)
		n++;
	if (p && n) {
		memcpy(out, p, n);
		out[n] = '\0';
	}
	free(buf);
}

/* "expected a string, got a boolean (write \"n\")" for metadata.<where>. */
static void not_a_string(const struct ydoc_stream *src, const json_t *obj, const char *key,
			 const json_t *v, const char *what, struct gs_error *err)
{
	char text[128] = "";
	struct ydoc_pos pos = {.line = 0, .col = 0};

	/* As written (0123 is octal 83 to YAML 1.1, n is false), else as read. */
	if (!json_is_object(v) && !json_is_array(v) && src &&
	    !ydoc_stream_key_pos(src, obj, key, &pos))
		source_text(src, pos, text, sizeof(text));
	if (!*text && json_is_integer(v))
		snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	if (json_is_null(v))
		ydoc_error_at_key(src, obj, key, err, "%s: expected a string, got null", what);
	else if (*text)
		ydoc_error_at_key(src, obj, key, err,
				  "%s: expected a string, got %s (write \"%s\")", what,
				  ydoc_kind_name(v), text);
	else
		ydoc_error_at_key(src, obj, key, err, "%s: expected a string, got %s (quote it)",
				  what, ydoc_kind_name(v));
}

/* Every value of metadata.<field> must be a string, as the apiserver demands. */
static int check_strings(const struct ydoc_stream *src, const json_t *node, const char *name,
			 const char *field, struct gs_error *err)
{
	const json_t *meta = json_object_get(node, "metadata");
	const json_t *m = json_object_get(meta, field);
	const char *k;
	json_t *v;

	if (!m || json_is_null(m))
		return 0;
	if (!json_is_object(m)) {
		ydoc_error_at_key(src, meta, field, err,
				  "node '%s': metadata.%s: expected a map, got %s", name, field,
				  ydoc_kind_name(m));
		return -1;
	}
	json_object_foreach ((json_t *)m, k, v) {
		if (!json_is_string(v)) {
			char what[512];
			snprintf(what, sizeof(what), "node '%s': %s %s", name,
				 !strcmp(field, "labels") ? "label" : "annotation", k);
			not_a_string(src, m, k, v, what, err);
			return -1;
		}
	}
	return 0;
}

static char *dup_nonempty(const char *s)
{
	return s && *s ? gs_xstrdup(s) : NULL;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/* Split a copy of `s` at commas; items are trimmed. Returns the count, or -1 past max. */
static int split(char *s, char **items, int max)
{
	int n = 0;
	char *p = s;

	for (;;) {
		char *comma = strchr(p, ',');
		if (n == max)
			return -1;
		if (comma)
			*comma = '\0';
		items[n++] = trim(p);
		if (!comma)
			return n;
		p = comma + 1;
	}
}

static int parse_count(const char *s, int *out)
{
	int v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		v = v * 10 + (*s - '0');
		if (v > NODEHW_MAX_GPUS)
			return -1;
	}
	*out = v;
	return 0;
}

static int read_gpus(const struct catalog *cat, struct nodehw *hw, const json_t *node,
		     const struct ydoc_stream *src, struct gs_error *err)
{
	const json_t *ann = kobj_annotations(node);
	const char *prod = kobj_annotation(node, NODEHW_ANN_PRODUCT);
	const char *cnt = kobj_annotation(node, NODEHW_ANN_COUNT);
	char *pbuf, *cbuf, *pitems[NODEHW_MAX_MODELS], *citems[NODEHW_MAX_MODELS];
	int np, nc, rc = -1;

	if ((!prod || !*prod) && (!cnt || !*cnt))
		return 0;
	if (!prod || !*prod) {
		ydoc_error_at_key(src, ann, NODEHW_ANN_COUNT, err,
				  "node '%s': annotation %s is set but %s is missing", hw->name,
				  NODEHW_ANN_COUNT, NODEHW_ANN_PRODUCT);
		return -1;
	}
	if (!cnt || !*cnt) {
		ydoc_error_at_key(src, ann, NODEHW_ANN_PRODUCT, err,
				  "node '%s': annotation %s is set but %s is missing", hw->name,
				  NODEHW_ANN_PRODUCT, NODEHW_ANN_COUNT);
		return -1;
	}
	pbuf = gs_xstrdup(prod);
	cbuf = gs_xstrdup(cnt);
	np = split(pbuf, pitems, NODEHW_MAX_MODELS);
	nc = split(cbuf, citems, NODEHW_MAX_MODELS);
	if (np < 0) {
		ydoc_error_at_key(src, ann, NODEHW_ANN_PRODUCT, err,
				  "node '%s': annotation %s lists more than %d models", hw->name,
				  NODEHW_ANN_PRODUCT, NODEHW_MAX_MODELS);
		goto out;
	}
	if (nc != np) {
		ydoc_error_at_key(src, ann, NODEHW_ANN_COUNT, err,
				  "node '%s': annotations %s and %s must list as many entries (one "
				  "count per product)",
				  hw->name, NODEHW_ANN_PRODUCT, NODEHW_ANN_COUNT);
		goto out;
	}
	hw->gpus = gs_xcalloc((size_t)np, sizeof(*hw->gpus));
	for (int i = 0; i < np; i++) {
		const struct catalog_gpu *g = catalog_find_gpu(cat, pitems[i]);
		int c = 0;
		if (!g) {
			struct strbuf hint = STRBUF_INIT;
			catalog_gpu_hint(cat, pitems[i], &hint);
			ydoc_error_at_key(src, ann, NODEHW_ANN_PRODUCT, err,
					  "node '%s': unknown GPU model '%s' in annotation %s%s",
					  hw->name, pitems[i], NODEHW_ANN_PRODUCT, hint.buf);
			strbuf_release(&hint);
			goto out;
		}
		if (parse_count(citems[i], &c) || c == 0) {
			ydoc_error_at_key(
				src, ann, NODEHW_ANN_COUNT, err,
				"node '%s': annotation %s: '%s' is not a GPU count from 1 to %d",
				hw->name, NODEHW_ANN_COUNT, citems[i], NODEHW_MAX_GPUS);
			goto out;
		}
		if (hw->total + c > NODEHW_MAX_GPUS) {
			ydoc_error_at_key(src, ann, NODEHW_ANN_COUNT, err,
					  "node '%s': more than %d GPUs declared", hw->name,
					  NODEHW_MAX_GPUS);
			goto out;
		}
		hw->gpus[hw->n_gpus].model = g;
		hw->gpus[hw->n_gpus].count = c;
		hw->n_gpus++;
		hw->total += c;
	}
	rc = 0;
out:
	free(pbuf);
	free(cbuf);
	return rc;
}

/* Driver branch -> CUDA driver API version, from NVIDIA's CUDA toolkit release notes table. */
static const struct {
	int branch, major, minor;
} cuda_by_branch[] = {
	{410, 10, 0}, {418, 10, 1}, {440, 10, 2}, {450, 11, 0}, {455, 11, 1}, {460, 11, 2},
	{465, 11, 3}, {470, 11, 4}, {495, 11, 5}, {510, 11, 6}, {515, 11, 7}, {520, 11, 8},
	{525, 12, 0}, {530, 12, 1}, {535, 12, 2}, {545, 12, 3}, {550, 12, 4}, {555, 12, 5},
	{560, 12, 6}, {565, 12, 7}, {570, 12, 8}, {575, 12, 9}, {580, 13, 0}, {590, 13, 1},
};

int nodehw_cuda_version(const char *v, int *major, int *minor)
{
	int branch = 0;

	for (; *v >= '0' && *v <= '9' && branch < 100000; v++)
		branch = branch * 10 + (*v - '0');
	for (size_t i = 0; i < sizeof(cuda_by_branch) / sizeof(cuda_by_branch[0]); i++) {
		if (cuda_by_branch[i].branch == branch) {
			*major = cuda_by_branch[i].major;
			*minor = cuda_by_branch[i].minor;
			return 0;
		}
	}
	return -1;
}

bool nodehw_driver_version_ok(const char *s)
{
	int parts = 0;

	for (;;) {
		size_t n = strspn(s, "0123456789");
		if (n == 0 || n > 9)
			return false;
		parts++;
		s += n;
		if (!*s)
			return parts >= 2 && parts <= 3;
		if (*s++ != '.')
			return false;
	}
}

/* A Kubernetes label value: at most 63, alphanumeric at both ends, [-_.A-Za-z0-9] inside. */
static bool label_value_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0)
		return true;
	if (n > 63 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == n;
}

static int read_platform(const struct catalog *cat, struct nodehw *hw, const json_t *node,
			 const struct ydoc_stream *src, struct gs_error *err)
{
	const json_t *ann = kobj_annotations(node);
	const char *drv = kobj_annotation(node, NODEHW_ANN_DRIVER);
	const char *mach = kobj_annotation(node, NODEHW_ANN_MACHINE);
	char buf[512];

	(void)cat;
	if (drv && !nodehw_driver_version_ok(drv)) {
		ydoc_error_at_key(
			src, ann, NODEHW_ANN_DRIVER, err,
			"node '%s': annotation %s: '%s' is not a driver version X.Y[.Z] (e.g. "
			"%s)",
			hw->name, NODEHW_ANN_DRIVER, drv, NODEHW_DEFAULT_DRIVER);
		return -1;
	}
	hw->driver_version = gs_xstrdup(drv ? drv : NODEHW_DEFAULT_DRIVER);
	if (nodehw_cuda_version(hw->driver_version, &hw->cuda_major, &hw->cuda_minor)) {
		ydoc_error_at_key(
			src, ann, NODEHW_ANN_DRIVER, err,
			"node '%s': annotation %s: driver branch of '%s' is not one gpushare "
			"knows the CUDA version of (%d to %d)",
			hw->name, NODEHW_ANN_DRIVER, hw->driver_version, cuda_by_branch[0].branch,
			cuda_by_branch[sizeof(cuda_by_branch) / sizeof(cuda_by_branch[0]) - 1]
				.branch);
		return -1;
	}
	/* GFD trims the DMI text, then sanitizes it as it does model names. */
	catalog_sanitize(mach ? mach : NODEHW_DEFAULT_MACHINE, buf, sizeof(buf));
	if (!label_value_ok(buf)) {
		ydoc_error_at_key(
			src, ann, NODEHW_ANN_MACHINE, err,
			"node '%s': annotation %s: '%s' becomes '%s' as GFD sanitizes it, "
			"which is no valid label value (at most 63 characters, alphanumeric at "
			"both ends)",
			hw->name, NODEHW_ANN_MACHINE, mach, buf);
		return -1;
	}
	hw->machine = gs_xstrdup(buf);
	return 0;
}

/*
 * Parse "k=v,k=v" (with_values) or "a,b" into an object. On malformed input
 * returns NULL; the caller warns and owns nothing.
 */
static json_t *parse_record(const char *s, int with_values)
{
	json_t *obj = json_object();
	char *buf, *p;

	if (!s || !*s)
		return obj;
	if (strlen(s) > NODEHW_MAX_RECORD) {
		json_decref(obj);
		return NULL;
	}
	buf = gs_xstrdup(s);
	p = buf;
	for (;;) {
		char *comma = strchr(p, ',');
		char *eq;
		if (comma)
			*comma = '\0';
		eq = strchr(p, '=');
		if (!*p || (with_values && (!eq || eq == p)) || (!with_values && eq)) {
			json_decref(obj);
			obj = NULL;
			break;
		}
		if (with_values) {
			*eq = '\0';
			json_object_set_new(obj, p, json_string(eq + 1));
		} else {
			json_object_set_new(obj, p, json_true());
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	free(buf);
	return obj;
}

static json_t *managed(const json_t *node, const char *key, int with_values, int *ok)
{
	json_t *o = parse_record(kobj_annotation(node, key), with_values);

	*ok = o != NULL;
	return o ? o : json_object();
}

json_t *nodehw_managed_labels(const json_t *node, int *ok)
{
	return managed(node, NODEHW_ANN_MANAGED_LABELS, 1, ok);
}

json_t *nodehw_managed_resources(const json_t *node, int *ok)
{
	return managed(node, NODEHW_ANN_MANAGED_RESOURCES, 0, ok);
}

int nodehw_from_node(const struct catalog *cat, const json_t *node, const struct ydoc_stream *src,
		     struct nodehw **out, struct gs_warnings *warnings, struct gs_error *err)
{
	struct nodehw *hw;
	const json_t *meta = json_is_object(node) ? json_object_get(node, "metadata") : NULL;
	const json_t *name = json_is_object(meta) ? json_object_get(meta, "name") : NULL;
	const json_t *kind = json_is_object(node) ? json_object_get(node, "kind") : NULL;
	const char *s;
	int ok;

	*out = NULL;
	if (!json_is_object(node) ||
	    (kind && !(json_is_string(kind) && !strcmp(json_string_value(kind), "Node")))) {
		ydoc_error_at_key(src, json_is_object(node) ? node : NULL, kind ? "kind" : NULL,
				  err, "not a Node object");
		return -1;
	}
	if (!json_is_object(meta)) {
		ydoc_error_at_key(src, node, json_object_get(node, "metadata") ? "metadata" : NULL,
				  err, "Node object has no metadata map");
		return -1;
	}
	if (name && !json_is_string(name)) {
		not_a_string(src, meta, "name", name, "metadata.name", err);
		return -1;
	}
	if (!name || !*json_string_value(name)) {
		ydoc_error_at_key(src, meta, name ? "name" : NULL, err,
				  name ? "metadata.name is empty"
				       : "Node object has no metadata.name");
		return -1;
	}
	if (check_strings(src, node, json_string_value(name), "labels", err) ||
	    check_strings(src, node, json_string_value(name), "annotations", err))
		return -1;

	hw = gs_xcalloc(1, sizeof(*hw));
	hw->name = gs_xstrdup(json_string_value(name));
	if (read_gpus(cat, hw, node, src, err) || read_platform(cat, hw, node, src, err)) {
		nodehw_free(hw);
		return -1;
	}
	hw->config_label = dup_nonempty(kobj_label(node, NODEHW_LABEL_CONFIG));
	hw->mig_config = dup_nonempty(kobj_label(node, NODEHW_LABEL_MIG_CONFIG));

	hw->managed_labels = nodehw_managed_labels(node, &ok);
	if (!ok)
		gs_warnings_add(warnings,
				"annotation %s is not a k=v,... list; treating every "
				"label as not written by gpushare",
				NODEHW_ANN_MANAGED_LABELS);
	hw->managed_resources = nodehw_managed_resources(node, &ok);
	if (!ok)
		gs_warnings_add(warnings,
				"annotation %s is not a name,... list; no resource is "
				"taken as advertised by gpushare before",
				NODEHW_ANN_MANAGED_RESOURCES);

	/* A strategy label equal to what gpushare recorded is its own output, not a declaration. */
	s = kobj_label(node, NODEHW_LABEL_MIG_STRATEGY);
	if (s && *s) {
		const json_t *mine = json_object_get(hw->managed_labels, NODEHW_LABEL_MIG_STRATEGY);
		if (!json_is_string(mine) || strcmp(json_string_value(mine), s))
			hw->declared_mig_strategy = gs_xstrdup(s);
	}
	*out = hw;
	return 0;
}

void nodehw_free(struct nodehw *hw)
{
	if (!hw)
		return;
	free(hw->name);
	free(hw->gpus);
	free(hw->driver_version);
	free(hw->machine);
	free(hw->config_label);
	free(hw->mig_config);
	free(hw->declared_mig_strategy);
	json_decref(hw->managed_labels);
	json_decref(hw->managed_resources);
	free(hw);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *format_record(const json_t *obj, int with_values)
{
	size_t n = json_object_size(obj), i = 0, len = 1;
	const char **keys;
	const char *k;
	json_t *v;
	char *out, *p;

	if (n == 0)
		return gs_xstrdup("");
	keys = gs_xcalloc(n, sizeof(*keys));
	json_object_foreach ((json_t *)obj, k, v) {
		keys[i++] = k;
		len += strlen(k) + 2;
		if (with_values && json_is_string(v))
			len += strlen(json_string_value(v));
	}
	qsort(keys, n, sizeof(*keys), cmp_str);
	out = p = gs_xmalloc(len);
	for (i = 0; i < n; i++) {
		const json_t *val = json_object_get(obj, keys[i]);
		size_t kl = strlen(keys[i]);
		if (i)
			*p++ = ',';
		memcpy(p, keys[i], kl);
		p += kl;
		if (with_values) {
			const char *vs = json_is_string(val) ? json_string_value(val) : "";
			size_t vl = strlen(vs);
			*p++ = '=';
			memcpy(p, vs, vl);
			p += vl;
		}
	}
	*p = '\0';
	free(keys);
	return out;
}

char *nodehw_format_labels(const json_t *labels)
{
	return format_record(labels, 1);
}

char *nodehw_format_names(const json_t *names)
{
	return format_record(names, 0);
}
