#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/output.h"
#include "yaml/yamlout.h"
#include "base/banned.h"

static const char *const names[] = {
	[OUTPUT_TABLE] = "table", [OUTPUT_WIDE] = "wide", [OUTPUT_JSON] = "json",
	[OUTPUT_YAML] = "yaml",	  [OUTPUT_CSV] = "csv",	  [OUTPUT_ENV] = "env",
};

int output_parse(const char *arg, long allowed, enum output_format *out, struct gs_error *err)
{
	const char *set[sizeof(names) / sizeof(names[0])];
	enum output_format which[sizeof(names) / sizeof(names[0])];
	size_t n = 0;
	int i;

	for (size_t f = 0; f < sizeof(names) / sizeof(names[0]); f++)
		if (allowed & OUTPUT_ALLOW(f)) {
			set[n] = names[f];
			which[n++] = (enum output_format)f;
		}
	/* The one wording, parseopt_choice's: "unknown output format 'x'; did you mean ...". */
	i = parseopt_choice("output format", arg, set, n, err);
	if (i < 0)
		return -1;
	*out = which[i];
	return 0;
}

const char *const *output_values(long allowed)
{
	/* One NULL-terminated list per mask, built on first use (help, completion). */
	enum { N = sizeof(names) / sizeof(names[0]) };
	static const char *lists[1 << N][N + 1];
	static bool built[1 << N];
	long m = allowed & ((1L << N) - 1);
	size_t n = 0;

	if (!built[m]) {
		for (size_t f = 0; f < N; f++)
			if (m & OUTPUT_ALLOW(f))
				lists[m][n++] = names[f];
		lists[m][n] = NULL;
		built[m] = true;
	}
	return lists[m];
}

int output_parse_option(const struct option *opt, const char *arg, struct gs_error *err)
{
	return output_parse(arg, opt->min, opt->value, err);
}

bool output_is_doc(enum output_format fmt)
{
	return fmt == OUTPUT_JSON || fmt == OUTPUT_YAML;
}

json_t *output_stamp(const json_t *doc, const char *kind)
{
	return output_stamp_as(doc, OUTPUT_API_VERSION, kind);
}

json_t *output_stamp_as(const json_t *doc, const char *api_version, const char *kind)
{
	json_t *out = json_object(), *v;
	const char *k;

	json_object_set_new(out, "apiVersion", json_string(api_version));
	json_object_set_new(out, "kind", json_string(kind));
	json_object_foreach ((json_t *)doc, k, v)
		json_object_set(out, k, v);
	return out;
}

int output_print(const json_t *doc, enum output_format fmt, size_t json_flags, struct gs_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = 0;

	if (fmt == OUTPUT_YAML) {
		rc = yamlout_document(doc, &sb, err);
		if (!rc)
			fwrite(sb.buf, 1, sb.len, stdout);
		strbuf_release(&sb);
		return rc;
	}
	char *s = json_dumps(doc, JSON_INDENT(2) | json_flags);
	if (!s) {
		gs_error_set(err, "out of memory");
		return -1;
	}
	puts(s);
	free(s);
	return 0;
}

int output_print_list(const json_t *items, enum output_format fmt, size_t json_flags,
		      struct gs_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	int rc = 0;

	if (fmt == OUTPUT_YAML) {
		for (size_t i = 0; i < json_array_size(items) && !rc; i++) {
			if (i)
				strbuf_addstr(&sb, "---\n");
			rc = yamlout_document(json_array_get(items, i), &sb, err);
		}
		if (!rc)
			fwrite(sb.buf, 1, sb.len, stdout);
		strbuf_release(&sb);
		return rc;
	}
	json_t *list =
		json_pack("{s:s,s:s,s:O}", "apiVersion", "v1", "kind", "List", "items", items);
	rc = output_print(list, OUTPUT_JSON, json_flags, err);
	json_decref(list);
	return rc;
}

int output_write_file(const char *path, const struct strbuf *sb, struct gs_error *err)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f) {
		gs_error_set(err, "cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	errno = 0;
	if (fwrite(sb->buf, 1, sb->len, f) != sb->len || (f != stdout && fclose(f) != 0)) {
		gs_error_set(err, "cannot write '%s': %s", path,
			     errno ? strerror(errno) : "write error");
		return -1;
	}
	return 0;
}
