#ifndef GS_OUTPUT_H
#define GS_OUTPUT_H

/*
 * One output contract for every command that reports (docs/guide/cli.md, Output):
 * `-o table|wide|json|yaml` (and a command's own extra forms: csv, env).
 * JSON and YAML are the same document: a result of gpushare's own carries
 * "apiVersion": "gpushare.io/v1alpha1" and its "kind" first, its other keys
 * after; several Kubernetes objects are one List in JSON and a stream of
 * documents in YAML, never JSON objects printed in a row.
 */

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "cmd/parseopt.h"

#define OUTPUT_API_VERSION "gpushare.io/v1alpha1"

enum output_format {
	OUTPUT_TABLE,
	OUTPUT_WIDE,
	OUTPUT_JSON,
	OUTPUT_YAML,
	OUTPUT_CSV,
	OUTPUT_ENV,
	OUTPUT_DEFAULT, /* no -o given: the command's own default */
};

#define OUTPUT_ALLOW(f) (1L << (f))
#define OUTPUT_DOCS (OUTPUT_ALLOW(OUTPUT_JSON) | OUTPUT_ALLOW(OUTPUT_YAML))
#define OUTPUT_TABLES (OUTPUT_ALLOW(OUTPUT_TABLE) | OUTPUT_DOCS)

/*
 * -o FORMAT into an enum output_format, the formats the command takes in
 * `allowed` (OUTPUT_ALLOW bits). Any other value is refused in the one
 * wording every command uses (parseopt_choice's):
 *   gpushare CMD: unknown output format 'xml' (one of: table, json, yaml)
 *   gpushare CMD: unknown output format 'jsn'; did you mean 'json'?
 * (parse_options prints it, with the usage, and the command exits 2).
 */
#define OPT_OUTPUT(v, allowed, h)                                                                  \
	{                                                                                          \
		.kind = OPT_KIND_CALLBACK, .short_name = 'o', .long_name = "output",               \
		.value = (1 ? (v) : (enum output_format *)0), .argh = "FORMAT", .help = (h),       \
		.callback = output_parse_option, .min = (allowed),                                 \
		.values = output_values(allowed)                                                   \
	}

/* The formats of an OUTPUT_ALLOW mask by name, NULL-terminated (static; for help and completion).
 */
const char *const *output_values(long allowed);

int output_parse_option(const struct option *opt, const char *arg, struct gs_error *err);

/* The same check for a format chosen some other way; err gets the wording above. */
int output_parse(const char *arg, long allowed, enum output_format *out, struct gs_error *err);

/* Whether fmt prints a document (json or yaml). */
bool output_is_doc(enum output_format fmt);

/*
 * A new object: apiVersion gpushare.io/v1alpha1 and `kind` first, then
 * every key of `doc` in its order (doc's own apiVersion or kind, if any,
 * are kept).
 */
json_t *output_stamp(const json_t *doc, const char *kind);
/* The same with another apiVersion (a Kubernetes object's: "v1" for a Node patch). */
json_t *output_stamp_as(const json_t *doc, const char *api_version, const char *kind);

/*
 * Print one document to standard output as JSON (json_dumps with
 * JSON_INDENT(2) | json_flags, a newline after) or YAML (one document, the
 * same tree). Returns 0, or -1 with err filled.
 */
int output_print(const json_t *doc, enum output_format fmt, size_t json_flags,
		 struct gs_error *err);

/*
 * Several documents (an array): JSON, one {"apiVersion": "v1", "kind":
 * "List", "items": [...]}; YAML, a stream, "---" between documents.
 */
int output_print_list(const json_t *items, enum output_format fmt, size_t json_flags,
		      struct gs_error *err);

/*
 * Write sb to the file `path` (created or truncated), or to standard output
 * for "-" (main() checks it at exit). Returns 0, or -1 with err: "cannot
 * write 'PATH': REASON".
 */
int output_write_file(const char *path, const struct strbuf *sb, struct gs_error *err) GS_WUR;

#endif
