#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/offline.h"
#include "fleet/fleet.h"
#include "model/dpconfig.h"
#include "engine/dplint.h"
#include "model/kobj.h"
#include "cmd/output.h"
#include "cmd/parseopt.h"
#include "base/readfile.h"
#include "yaml/ydoc.h"
#include "base/banned.h"

static const char *const usage_lines[] = {
	"gpushare lint [options] FILE",
	"gpushare lint [options] -f FILE|DIR|- [-f ...] [-R] [--configmap NS/NAME]", NULL};

static const struct parseopt_example lint_examples[] = {
	{"lint the lab's device-plugin ConfigMap",
	 "gpushare lint -f k8s/device-plugin-configs.yaml"},
	{"one key, as the GPU Operator deploys the plugin; warnings fail too",
	 "gpushare lint -f k8s/device-plugin-configs.yaml --key mps --installer operator --strict"},
	{"errors in the words the real plugin logs",
	 "gpushare lint -f k8s/device-plugin-configs.yaml --upstream"},
	{NULL, NULL},
};
static const struct parseopt_usage lint_usage = {
	"lint",
	usage_lines,
	"Validate NVIDIA device-plugin configs as the plugin (v1 schema) reads them, and\n"
	"report what it would silently ignore and the traps of the deployment around it.\n"
	"FILE is one config, or a file holding ConfigMaps of named configs (one per\n"
	"data/binaryData key, as config-manager picks them); '-' reads standard input.\n"
	"With -f, the objects are read as kubectl's -f reads them and the ConfigMap is\n"
	"the one --configmap names among them.\n"
	"\n"
	"Output, one line per finding, ordered by position:\n"
	"  FILE:LINE:COL: error|warning|note: [config KEY] message\n"
	"errors   what makes the plugin (or config-manager) fail, with upstream's text\n"
	"warnings what it logs and ignores, or silently gets wrong\n"
	"notes    consequences worth knowing\n",
	"Exit status: 0 no errors, 1 errors (or warnings with --strict), 2 unreadable\n"
	"file, broken YAML or bad usage.\n",
	lint_examples,
	NULL,
};

struct opts {
	struct dplint_options lint;
	const char *file; /* FILE without -f; NULL with -f */
	const char *key;
	struct fleet_sources src;
	struct configmap_ref cm;
	bool notes, upstream, strict;
	enum output_format fmt;
	json_t *diags; /* -o json|yaml: the diagnostics, printed once at the end */
};

struct tally {
	size_t errors, warnings, notes;
};

static int cmp_pos(const void *a, const void *b)
{
	const struct dp_diag *x = *(const struct dp_diag *const *)a;
	const struct dp_diag *y = *(const struct dp_diag *const *)b;

	if (x->pos.line != y->pos.line)
		return x->pos.line < y->pos.line ? -1 : 1;
	if (x->pos.col != y->pos.col)
		return x->pos.col < y->pos.col ? -1 : 1;
	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return x < y ? -1 : x > y;
}

static const char *level_word(enum dp_level l)
{
	return l == DP_ERROR ? "error" : l == DP_WARNING ? "warning" : "note";
}

/* Print diags in position order under a [config KEY] tag (NULL: none). */
static void print_diags(const struct dp_diags *d, const char *tag, const struct opts *o,
			struct tally *t)
{
	const struct dp_diag **v;
	char chain[2048];

	if (!d->n)
		return;
	v = gs_xcalloc(d->n, sizeof(*v));
	for (size_t i = 0; i < d->n; i++)
		v[i] = &d->items[i];
	qsort(v, d->n, sizeof(*v), cmp_pos);
	for (size_t i = 0; i < d->n; i++) {
		const struct dp_diag *x = v[i];
		const char *msg = x->msg;
		if (x->level == DP_NOTE && !o->notes)
			continue;
		if (x->level == DP_ERROR && o->upstream)
			msg = dp_diag_chain(x, chain, sizeof(chain));
		if (o->diags) {
			json_t *j = json_pack("{s:s,s:s,s:s}", "file", x->file, "level",
					      level_word(x->level), "message", msg);
			if (x->pos.line > 0) {
				json_object_set_new(j, "line", json_integer(x->pos.line));
				json_object_set_new(j, "column", json_integer(x->pos.col));
			}
			if (tag)
				json_object_set_new(j, "config", json_string(tag));
			json_array_append_new(o->diags, j);
		} else {
			if (x->pos.line > 0)
				cmd_printf("%s:%d:%d: ", x->file, x->pos.line, x->pos.col);
			else
				cmd_printf("%s: ", x->file);
			cmd_printf("%s: ", level_word(x->level));
			if (tag)
				cmd_printf("[config %s] ", tag);
			cmd_printf("%s\n", msg);
		}
		if (x->level == DP_ERROR)
			t->errors++;
		else if (x->level == DP_WARNING)
			t->warnings++;
		else
			t->notes++;
	}
	free(v);
}

static void lint_configmap(const struct ydoc_stream *s, const json_t *cm, const char *cm_name,
			   const struct opts *o, struct tally *t, int *status)
{
	struct dpconfig_set *set;
	struct gs_error err;
	char buf[2048];
	struct ydoc_pos at = {.line = 0, .col = 0};

	if (dpconfig_set_from_configmap(s, cm, &set, &err)) {
		fprintf(stderr, "gpushare lint: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		*status = EXIT_USAGE;
		return;
	}
	if (ydoc_stream_key_pos(s, cm, "data", &at) < 0 &&
	    ydoc_stream_key_pos(s, cm, "binaryData", &at) < 0 && ydoc_stream_pos(s, cm, &at) < 0)
		at.line = at.col = 0;
	for (size_t i = 0; i < dpconfig_set_count(set); i++) {
		const char *key = dpconfig_set_key(set, i);
		const struct dpconfig *c = dpconfig_set_get(set, i, NULL);
		const struct dp_diags *pd = dpconfig_set_diags(set, i);
		struct dp_diags all;
		char tag[512];

		if (o->key && strcmp(o->key, key))
			continue;
		dp_diags_init(&all);
		for (size_t j = 0; j < pd->n; j++) {
			const struct dp_diag *x = &pd->items[j];
			dp_diags_add(&all, x->level, x->stage, x->file, x->pos, "%s", x->msg);
			all.items[all.n - 1].upstream = x->upstream;
		}
		if (c)
			dplint_config(c, ydoc_stream_name(s), &o->lint, &all);
		snprintf(tag, sizeof(tag), "%s%s%s", cm_name ? cm_name : "", cm_name ? "/" : "",
			 key);
		print_diags(&all, tag, o, t);
		dp_diags_release(&all);
	}
	if (!o->key) {
		struct dp_diags whole;
		dp_diags_init(&whole);
		const struct dp_diags *own = dpconfig_set_own_diags(set);
		for (size_t j = 0; j < own->n; j++)
			dp_diags_add(&whole, own->items[j].level, own->items[j].stage,
				     own->items[j].file, own->items[j].pos, "%s",
				     own->items[j].msg);
		dplint_set(set, ydoc_stream_name(s), at, &o->lint, &whole);
		print_diags(&whole, NULL, o, t);
		dp_diags_release(&whole);
	} else if (dpconfig_set_find(set, o->key) < 0) {
		cmd_eprintf("gpushare lint: no key '%s' in the ConfigMap\n", o->key);
		*status = EXIT_USAGE;
	}
	dpconfig_set_free(set);
}

static const char *const installers[] = {"helm", "operator", "none", NULL};

static int parse_installer(const struct option *opt, const char *arg, struct gs_error *err)
{
	if (dplint_parse_installer(arg, opt->value)) {
		gs_error_set(err, "option '--installer' expects helm, operator or none, got '%s'",
			     arg);
		return -1;
	}
	return 0;
}

static int parse_version(const struct option *opt, const char *arg, struct gs_error *err)
{
	if (dplint_parse_version(arg, opt->value)) {
		gs_error_set(err,
			     "option '--plugin-version' expects a release between v0.12 and "
			     "v0.20, got '%s'",
			     arg);
		return -1;
	}
	return 0;
}

/* 0 with o filled; -1 when the command ends here with *status. */
static int parse_args(int argc, char **argv, struct opts *o, int *status)
{
	bool no_notes = false;
	struct gs_error err;
	struct option opts[] = {
		OPT_CALLBACK(0, "configmap", &o->cm, "NS/NAME",
			     "with -f, the ConfigMap to lint among the files\n"
			     "[gpu-share/device-plugin-configs]",
			     parse_configmap_ref),
		OPT_STRING(0, "key", &o->key, "KEY", "only this ConfigMap key"),
		OPT_CALLBACK_VALUES(0, "installer", &o->lint.installer, "helm|operator|none",
				    "who deploys the plugin (default helm): decides\n"
				    "MPS_ROOT, MIG_STRATEGY and the fallbacks",
				    parse_installer, installers),
		OPT_CALLBACK(0, "plugin-version", &o->lint.plugin_minor, "V",
			     "plugin release, v0.12 to v0.20 (default v0.20.0)", parse_version),
		OPT_STRING(0, "mig-strategy", &o->lint.cluster_policy_mig_strategy, "S",
			   "GPU Operator: ClusterPolicy spec.mig.strategy\n"
			   "(default single); it overrides flags.migStrategy"),
		OPT_FLAG(0, "no-mps-root", &o->lint.no_mps_root,
			 "the deployment does not set MPS_ROOT"),
		OPT_STRING(0, "default-config", &o->lint.default_config, "NAME",
			   "config-manager's DEFAULT_CONFIG"),
		OPT_STRING(0, "fallback-strategies", &o->lint.fallbacks, "LIST",
			   "config-manager's FALLBACK_STRATEGIES (default:\n"
			   "named,single for helm, empty for operator)"),
		OPT_FLAG(0, "no-notes", &no_notes, "hide notes"),
		OPT_FLAG(0, "upstream", &o->upstream,
			 "print errors as the real component logs them"),
		OPT_FLAG(0, "strict", &o->strict, "warnings fail too"),
		OPT_OUTPUT(&o->fmt, OUTPUT_TABLES,
			   "table: a line per diagnostic (default); json or yaml:\n"
			   "kind LintResult, {ok, errors, warnings, notes, diagnostics}"),
		OPT_FLEET_SOURCES(&o->src),
		OPT_END(),
	};
	int n;

	dplint_options_init(&o->lint);
	n = parse_options(argc, argv, opts, &lint_usage);
	if (n < 0) {
		*status = parseopt_exit(n);
		return -1;
	}
	o->notes = !no_notes;
	if (output_is_doc(o->fmt))
		o->diags = json_array();
	/* With -f or --configmap, FILE... is the same as -f each: objects, not a bare config. */
	if (o->src.n || o->cm.given) {
		for (int i = 0; i < n; i++)
			fleet_sources_add(&o->src, argv[i]);
		return 0;
	}
	if (n > 1) {
		gs_error_set(&err, "one file at a time ('%s')", argv[n - 1]);
		*status = usage_error(&lint_usage, &err);
		return -1;
	}
	if (n == 0) {
		gs_error_set(&err, "no file given");
		*status = usage_error(&lint_usage, &err);
		return -1;
	}
	o->file = argv[0];
	return 0;
}

/* -f: the ConfigMap --configmap names among the objects read. */
static int lint_fleet(const struct opts *o, struct tally *t)
{
	struct fleet f;
	const json_t *cm = NULL;
	struct gs_error err;
	char buf[2048];
	int status = EXIT_OK;

	fleet_init(&f);
	if (fleet_read(&f, &o->src, &err) < 0 ||
	    fleet_configmap(&f, o->cm.ns, o->cm.name, &cm, &err) < 0 ||
	    (!cm && (offline_configmap_missing(&f, &o->cm, &err), 1))) {
		fprintf(stderr, "gpushare lint: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		fleet_release(&f);
		return EXIT_USAGE;
	}
	lint_configmap(fleet_stream_of(&f, cm), cm, NULL, o, t, &status);
	fleet_release(&f);
	if (status != EXIT_OK)
		return status;
	return t->errors || (o->strict && t->warnings) ? EXIT_FINDING : EXIT_OK;
}

int cmd_lint(int argc, char **argv)
{
	struct opts o;
	struct tally t = {.errors = 0, .warnings = 0, .notes = 0};
	struct gs_error err;
	struct ydoc_stream *s = NULL;
	char *text = NULL;
	size_t len = 0, n_cm = 0;
	char buf[2048];
	int status = EXIT_OK, rc;

	memset(&o, 0, sizeof(o));
	configmap_ref_init(&o.cm);
	if (parse_args(argc, argv, &o, &rc) != 0)
		goto done;
	if (!o.file) {
		rc = lint_fleet(&o, &t);
		goto done;
	}
	if (gs_read_file(o.file, ydoc_default_limits.max_bytes, &text, &len, &err)) {
		fprintf(stderr, "gpushare lint: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		rc = EXIT_USAGE;
		goto done;
	}
	const struct ydoc_pos origin = {.line = 0, .col = 0};
	const char *shown = strcmp(o.file, "-") ? o.file : "<stdin>";
	if (ydoc_load_buffer(shown, text, len, origin, &ydoc_default_limits, &s, &err)) {
		fprintf(stderr, "gpushare lint: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		free(text);
		rc = EXIT_USAGE;
		goto done;
	}
	n_cm = kobj_count(s, "ConfigMap");
	if (n_cm) {
		for (long i = kobj_find(s, 0, "ConfigMap", NULL); i >= 0;
		     i = kobj_find(s, (size_t)i + 1, "ConfigMap", NULL)) {
			const json_t *doc = ydoc_stream_doc(s, (size_t)i);
			const char *cm_name = NULL;
			if (n_cm > 1)
				cm_name = kobj_name(doc) ? kobj_name(doc) : "?";
			lint_configmap(s, doc, cm_name, &o, &t, &status);
		}
	} else {
		struct dpconfig *c = NULL;
		struct dp_diags d;
		dp_diags_init(&d);
		if (dpconfig_parse_diags(shown, NULL, text, len, origin, &c, &d, &err) == 0)
			dplint_config(c, shown, &o.lint, &d);
		print_diags(&d, NULL, &o, &t);
		dp_diags_release(&d);
		dpconfig_free(c);
	}
	ydoc_stream_free(s);
	free(text);
	rc = status != EXIT_OK			    ? status
	     : t.errors || (o.strict && t.warnings) ? EXIT_FINDING
						    : EXIT_OK;
done:
	if (o.diags && rc != EXIT_USAGE) {
		json_t *doc =
			json_pack("{s:s,s:s,s:b,s:I,s:I,s:I,s:O}", "apiVersion", OUTPUT_API_VERSION,
				  "kind", "LintResult", "ok", rc == EXIT_OK, "errors",
				  (json_int_t)t.errors, "warnings", (json_int_t)t.warnings, "notes",
				  (json_int_t)t.notes, "diagnostics", o.diags);
		if (output_print(doc, o.fmt, 0, &err) < 0) {
			fprintf(stderr, "gpushare lint: %s\n",
				gs_error_str(&err, buf, sizeof(buf)));
			rc = EXIT_USAGE;
		}
		json_decref(doc);
	}
	json_decref(o.diags);
	fleet_sources_release(&o.src);
	configmap_ref_release(&o.cm);
	return rc;
}
