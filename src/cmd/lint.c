#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dpconfig.h"
#include "dplint.h"
#include "readfile.h"
#include "ydoc.h"
#include "banned.h"

static void usage(FILE *out)
{
	fputs("usage: gpushare lint [options] FILE\n"
	      "       gpushare lint [options] --configmap CM.yaml\n"
	      "\n"
	      "Validate NVIDIA device-plugin configs as the plugin (v1 schema) reads them, and\n"
	      "report what it would silently ignore and the traps of the deployment around it.\n"
	      "FILE is one config, or a file holding ConfigMaps of named configs (one per\n"
	      "data/binaryData key, as config-manager picks them); '-' reads standard input.\n"
	      "\n"
	      "Output, one line per finding, ordered by position:\n"
	      "  FILE:LINE:COL: error|warning|note: [config KEY] message\n"
	      "errors   what makes the plugin (or config-manager) fail, with upstream's text\n"
	      "warnings what it logs and ignores, or silently gets wrong\n"
	      "notes    consequences worth knowing\n"
	      "\n"
	      "Options:\n"
	      "  --configmap FILE          FILE holds ConfigMaps (found by kind otherwise)\n"
	      "  --key KEY                 only this ConfigMap key\n"
	      "  --installer helm|operator|none\n"
	      "                            who deploys the plugin (default helm): decides\n"
	      "                            MPS_ROOT, MIG_STRATEGY and the fallbacks\n"
	      "  --plugin-version V        plugin release, v0.12 to v0.20 (default v0.20.0)\n"
	      "  --mig-strategy S          GPU Operator: ClusterPolicy spec.mig.strategy\n"
	      "                            (default single); it overrides flags.migStrategy\n"
	      "  --no-mps-root             the deployment does not set MPS_ROOT\n"
	      "  --default-config NAME     config-manager's DEFAULT_CONFIG\n"
	      "  --fallback-strategies L   config-manager's FALLBACK_STRATEGIES (default:\n"
	      "                            named,single for helm, empty for operator)\n"
	      "  --no-notes                hide notes\n"
	      "  --upstream                print errors as the real component logs them\n"
	      "  --strict                  warnings fail too\n"
	      "  -h, --help                this text\n"
	      "\n"
	      "Exit status: 0 no errors, 1 errors (or warnings with --strict), 2 unreadable\n"
	      "file, broken YAML or bad usage.\n",
	      out);
}

struct opts {
	struct dplint_options lint;
	const char *file;
	const char *key;
	bool configmap, notes, upstream, strict;
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
		if (x->pos.line > 0)
			printf("%s:%d:%d: ", x->file, x->pos.line, x->pos.col);
		else
			printf("%s: ", x->file);
		printf("%s: ", level_word(x->level));
		if (tag)
			printf("[config %s] ", tag);
		printf("%s\n", msg);
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
	struct ydoc_pos at = {0, 0};

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
		fprintf(stderr, "gpushare lint: no key '%s' in the ConfigMap\n", o->key);
		*status = EXIT_USAGE;
	}
	dpconfig_set_free(set);
}

static bool is_configmap(const json_t *doc)
{
	const json_t *kind = json_object_get(doc, "kind");

	return json_is_object(doc) && json_is_string(kind) &&
	       !strcmp(json_string_value(kind), "ConfigMap");
}

static int parse_args(int argc, char **argv, struct opts *o)
{
	dplint_options_init(&o->lint);
	o->notes = true;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		const char *eq = strchr(a, '=');
		char name[64];

		if (a[0] != '-' || !strcmp(a, "-")) {
			if (o->file) {
				fprintf(stderr, "gpushare lint: one file at a time ('%s')\n", a);
				return -1;
			}
			o->file = a;
			continue;
		}
		snprintf(name, sizeof(name), "%.*s",
			 eq && a[1] == '-' ? (int)(eq - a) : (int)strlen(a), a);
		if (eq && a[1] == '-')
			val = eq + 1;
#define TAKES_VALUE()                                                                              \
	do {                                                                                       \
		if (!val) {                                                                        \
			if (i + 1 >= argc) {                                                       \
				fprintf(stderr, "gpushare lint: %s needs a value\n", name);        \
				return -1;                                                         \
			}                                                                          \
			val = argv[++i];                                                           \
		}                                                                                  \
	} while (0)
		if (!strcmp(name, "-h") || !strcmp(name, "--help")) {
			return 1;
		} else if (!strcmp(name, "--configmap")) {
			TAKES_VALUE();
			o->configmap = true;
			if (o->file) {
				fprintf(stderr, "gpushare lint: one file at a time ('%s')\n", val);
				return -1;
			}
			o->file = val;
		} else if (!strcmp(name, "--key")) {
			TAKES_VALUE();
			o->key = val;
		} else if (!strcmp(name, "--installer")) {
			TAKES_VALUE();
			if (dplint_parse_installer(val, &o->lint.installer)) {
				fprintf(stderr,
					"gpushare lint: --installer: '%s' is not helm, operator "
					"or none\n",
					val);
				return -1;
			}
		} else if (!strcmp(name, "--plugin-version")) {
			TAKES_VALUE();
			if (dplint_parse_version(val, &o->lint.plugin_minor)) {
				fprintf(stderr,
					"gpushare lint: --plugin-version: '%s' is not a release "
					"between v0.12 and v0.20\n",
					val);
				return -1;
			}
		} else if (!strcmp(name, "--mig-strategy")) {
			TAKES_VALUE();
			o->lint.cluster_policy_mig_strategy = val;
		} else if (!strcmp(name, "--no-mps-root")) {
			o->lint.no_mps_root = true;
		} else if (!strcmp(name, "--default-config")) {
			TAKES_VALUE();
			o->lint.default_config = val;
		} else if (!strcmp(name, "--fallback-strategies")) {
			TAKES_VALUE();
			o->lint.fallbacks = val;
		} else if (!strcmp(name, "--no-notes")) {
			o->notes = false;
		} else if (!strcmp(name, "--upstream")) {
			o->upstream = true;
		} else if (!strcmp(name, "--strict")) {
			o->strict = true;
		} else {
			fprintf(stderr, "gpushare lint: unknown option '%s'\n", a);
			return -1;
		}
#undef TAKES_VALUE
	}
	if (!o->file) {
		fputs("gpushare lint: no file given\n", stderr);
		return -1;
	}
	return 0;
}

int cmd_lint(int argc, char **argv)
{
	struct opts o;
	struct tally t = {0, 0, 0};
	struct gs_error err;
	struct ydoc_stream *s = NULL;
	char *text = NULL;
	size_t len = 0, n_cm = 0;
	char buf[2048];
	int status = EXIT_OK, rc;

	memset(&o, 0, sizeof(o));
	rc = parse_args(argc, argv, &o);
	if (rc) {
		usage(rc > 0 ? stdout : stderr);
		return rc > 0 ? EXIT_OK : EXIT_USAGE;
	}
	if (gs_read_file(o.file, ydoc_default_limits.max_bytes, &text, &len, &err)) {
		fprintf(stderr, "gpushare lint: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		return EXIT_USAGE;
	}
	const struct ydoc_pos origin = {0, 0};
	const char *shown = strcmp(o.file, "-") ? o.file : "<stdin>";
	if (ydoc_load_buffer(shown, text, len, origin, &ydoc_default_limits, &s, &err)) {
		fprintf(stderr, "gpushare lint: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		free(text);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < ydoc_stream_count(s); i++)
		n_cm += is_configmap(ydoc_stream_doc(s, i));

	if (n_cm) {
		for (size_t i = 0; i < ydoc_stream_count(s); i++) {
			const json_t *doc = ydoc_stream_doc(s, i);
			const char *cm_name = NULL;
			if (!is_configmap(doc))
				continue;
			if (n_cm > 1) {
				const json_t *meta = json_object_get(doc, "metadata");
				const json_t *nm = json_object_get(meta, "name");
				cm_name = json_is_string(nm) ? json_string_value(nm) : "?";
			}
			lint_configmap(s, doc, cm_name, &o, &t, &status);
		}
	} else if (o.configmap) {
		fprintf(stderr, "gpushare lint: no ConfigMap in %s\n", shown);
		status = EXIT_USAGE;
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
	if (status != EXIT_OK)
		return status;
	if (t.errors || (o.strict && t.warnings))
		return EXIT_FINDING;
	return EXIT_OK;
}
