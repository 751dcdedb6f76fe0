#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/parseopt.h"
#include "base/didyoumean.h"
#include "cmd/cmd.h"
#include "base/strbuf.h"
#include "base/banned.h"

#define HELP_COLUMN 28

int parseopt_duration_ms(const char *s, long max_ms, long *out)
{
	long long total = 0;
	const char *p = s;

	if (!*p)
		return -1;
	if (strspn(p, "0123456789") == strlen(p)) {
		if (strlen(p) > 9)
			return -1;
		total = strtoll(p, NULL, 10) * 1000LL;
		if (total > max_ms)
			return -1;
		*out = (long)total;
		return 0;
	}
	while (*p) {
		long long v = 0, mul;
		size_t digits = 0;
		while (*p >= '0' && *p <= '9' && digits < 9) {
			v = v * 10 + (*p++ - '0');
			digits++;
		}
		if (!digits)
			return -1;
		if (!strncmp(p, "ms", 2)) {
			mul = 1;
			p += 2;
		} else if (*p == 's') {
			mul = 1000;
			p++;
		} else if (*p == 'm') {
			mul = 60000;
			p++;
		} else if (*p == 'h') {
			mul = 3600000;
			p++;
		} else {
			return -1;
		}
		total += v * mul;
		if (total > max_ms)
			return -1;
	}
	*out = (long)total;
	return 0;
}

/* "--name" or "-x", for messages. */
static const char *opt_name(const struct option *o, char *buf, size_t size)
{
	if (o->long_name)
		snprintf(buf, size, "--%s", o->long_name);
	else
		snprintf(buf, size, "-%c", o->short_name);
	return buf;
}

/* Go's strconv.ParseBool. */
static int parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"1", "t", "T", "true", "TRUE", "True"};
	static const char *const no[] = {"0", "f", "F", "false", "FALSE", "False"};

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

static bool takes_value(const struct option *o)
{
	return o->kind == OPT_KIND_STRING || o->kind == OPT_KIND_INT ||
	       o->kind == OPT_KIND_DURATION ||
	       (o->kind == OPT_KIND_CALLBACK && !(o->flags & OPT_NOARG));
}

/* Store one use of o; val is NULL when none was attached to a flag. */
static int apply(const struct option *o, const char *val, struct gs_error *err)
{
	char name[80];

	opt_name(o, name, sizeof(name));
	switch (o->kind) {
	case OPT_KIND_FLAG:
		if (val) {
			gs_error_set(err, "option '%s' takes no value", name);
			return -1;
		}
		*(bool *)o->value = true;
		return 0;
	case OPT_KIND_BOOL:
		if (!val) {
			*(bool *)o->value = true;
			return 0;
		}
		if (parse_bool(val, (bool *)o->value) < 0) {
			gs_error_set(err, "option '%s' expects true or false, got '%s'", name, val);
			return -1;
		}
		return 0;
	case OPT_KIND_STRING:
		*(const char **)o->value = val;
		return 0;
	case OPT_KIND_INT: {
		char *end;
		long v;
		errno = 0;
		v = strtol(val, &end, 10);
		if (!*val || *end || errno || v < o->min || v > o->max) {
			gs_error_set(err,
				     "option '%s' expects a whole number from %ld to %ld, got '%s'",
				     name, o->min, o->max, val);
			return -1;
		}
		*(long *)o->value = v;
		return 0;
	}
	case OPT_KIND_DURATION:
		if (parseopt_duration_ms(val, o->max, (long *)o->value) < 0) {
			gs_error_set(err,
				     "option '%s' expects seconds or a duration such as 30s, 2m, "
				     "500ms (at most %lds), got '%s'",
				     name, o->max / 1000, val);
			return -1;
		}
		return 0;
	case OPT_KIND_CALLBACK:
		if ((o->flags & OPT_NOARG) && val) {
			gs_error_set(err, "option '%s' takes no value", name);
			return -1;
		}
		return o->callback(o, val, err);
	case OPT_KIND_END:
	case OPT_KIND_GROUP:
		break;
	}
	return 0;
}

int parseopt_value(const struct option *opt, const char *what, const char *arg,
		   struct gs_error *err)
{
	size_t n = 0;

	while (opt->values && opt->values[n])
		n++;
	return parseopt_choice(what, arg, opt->values, n, err);
}

static const struct option *find_long(const struct option *opts, const char *name, size_t len)
{
	for (const struct option *o = opts; o->kind != OPT_KIND_END; o++)
		if (o->long_name && strlen(o->long_name) == len &&
		    !strncmp(o->long_name, name, len))
			return o;
	return NULL;
}

/* "unknown option '--mig-confg'; did you mean '--mig-config'?" */
static void unknown_long(const struct option *opts, const char *name, size_t len,
			 struct gs_error *err)
{
	struct strbuf word = STRBUF_INIT, msg = STRBUF_INIT;
	struct dym d;
	char(*dashed)[64] = NULL;
	size_t n = 0, i = 0;

	strbuf_add(&word, name, len);
	for (const struct option *o = opts; o->kind != OPT_KIND_END; o++)
		n += o->long_name != NULL;
	dashed = gs_xcalloc(n + 2, sizeof(*dashed));
	dym_init(&d, word.buf);
	for (const struct option *o = opts; o->kind != OPT_KIND_END; o++)
		if (o->long_name) {
			snprintf(dashed[i], sizeof(dashed[i]), "--%s", o->long_name);
			dym_offer_at(&d, dashed[i], dym_distance(word.buf, o->long_name));
			i++;
		}
	snprintf(dashed[i], sizeof(dashed[i]), "--help");
	dym_offer_at(&d, dashed[i], dym_distance(word.buf, "help"));
	strbuf_addf(&msg, "unknown option '--%s'", word.buf);
	dym_add_hint(&d, &msg);
	gs_error_set(err, "%s", msg.buf);
	free(dashed);
	strbuf_release(&word);
	strbuf_release(&msg);
}

int parseopt_choice(const char *what, const char *arg, const char *const *set, size_t n,
		    struct gs_error *err)
{
	struct strbuf msg = STRBUF_INIT;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(arg, set[i]))
			return (int)i;
	strbuf_addf(&msg, "unknown %s '%s'", what, arg);
	dym_suggest(&msg, arg, set, n, NULL);
	gs_error_set(err, "%s", msg.buf);
	strbuf_release(&msg);
	return -1;
}

static const struct option *find_short(const struct option *opts, int c)
{
	for (const struct option *o = opts; o->kind != OPT_KIND_END; o++)
		if (o->kind != OPT_KIND_GROUP && o->short_name == c)
			return o;
	return NULL;
}

int parse_options_quiet(int argc, char **argv, const struct option *opts, struct gs_error *err)
{
	int npos = 0;
	bool only_positionals = false;

	gs_error_clear(err);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const struct option *o;
		const char *val = NULL;
		char name[80];

		if (only_positionals || a[0] != '-' || !a[1]) {
			argv[npos++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			only_positionals = true;
			continue;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return PARSEOPT_HELP;
		if (a[1] == '-') {
			const char *eq = strchr(a + 2, '=');
			size_t len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);
			o = find_long(opts, a + 2, len);
			if (!o) {
				unknown_long(opts, a + 2, len, err);
				return PARSEOPT_ERROR;
			}
			if (eq)
				val = eq + 1;
		} else {
			o = find_short(opts, a[1]);
			if (!o) {
				gs_error_set(err, "unknown option '-%c'", a[1]);
				return PARSEOPT_ERROR;
			}
			if (a[2])
				val = a[2] == '=' ? a + 3 : a + 2;
		}
		opt_name(o, name, sizeof(name));
		if (!val && takes_value(o)) {
			if (i + 1 >= argc) {
				gs_error_set(err, "option '%s' needs a value", name);
				return PARSEOPT_ERROR;
			}
			if (argv[i + 1][0] == '-' && argv[i + 1][1]) {
				gs_error_set(err,
					     "option '%s' needs a value, got option '%s' (write "
					     "%s=%s if that is the value)",
					     name, argv[i + 1], name, argv[i + 1]);
				return PARSEOPT_ERROR;
			}
			val = argv[++i];
		}
		if (apply(o, val, err) < 0)
			return PARSEOPT_ERROR;
	}
	argv[npos] = NULL;
	return npos;
}

static void print_usage_lines(FILE *out, const struct parseopt_usage *u)
{
	for (size_t i = 0; u->lines && u->lines[i]; i++)
		fprintf(out, "%s %s\n", i ? "   or:" : "usage:", u->lines[i]);
}

/* The help, its continuation lines indented to the help column. */
static void print_help(FILE *out, size_t used, const char *help)
{
	const char *p = help;

	if (!*help) {
		fputc('\n', out);
		return;
	}
	if (used >= HELP_COLUMN - 1) {
		fputc('\n', out);
		used = 0;
	}
	fprintf(out, "%*s", (int)(HELP_COLUMN - used), "");
	for (; *p; p++) {
		fputc(*p, out);
		if (*p == '\n' && p[1])
			fprintf(out, "%*s", HELP_COLUMN, "");
	}
	fputc('\n', out);
}

void usage_with_options(FILE *out, const struct option *opts, const struct parseopt_usage *u)
{
	bool first_group = true;

	print_usage_lines(out, u);
	if (u->text)
		fprintf(out, "\n%s", u->text);
	fputc('\n', out);
	if (opts->kind != OPT_KIND_GROUP)
		fprintf(out, "Options:\n");
	for (const struct option *o = opts; o->kind != OPT_KIND_END; o++) {
		char head[160];
		int n;

		if (o->kind == OPT_KIND_GROUP) {
			fprintf(out, "%s%s\n", first_group && o == opts ? "" : "\n", o->help);
			first_group = false;
			continue;
		}
		if (o->short_name && o->long_name)
			n = snprintf(head, sizeof(head), "  -%c, --%s", o->short_name,
				     o->long_name);
		else if (o->short_name)
			n = snprintf(head, sizeof(head), "  -%c", o->short_name);
		else
			n = snprintf(head, sizeof(head), "  --%s", o->long_name);
		if (takes_value(o) && n >= 0 && (size_t)n < sizeof(head))
			snprintf(head + n, sizeof(head) - (size_t)n, " %s",
				 o->argh ? o->argh : "VALUE");
		fputs(head, out);
		print_help(out, strlen(head), o->help ? o->help : "");
	}
	fputs("  -h, --help", out);
	print_help(out, 12, "this text");
	if (u->footer)
		fprintf(out, "\n%s", u->footer);
	if (u->examples && u->examples->line) {
		fprintf(out, "\nExamples:\n");
		for (const struct parseopt_example *e = u->examples; e->line; e++)
			fprintf(out, "%s  # %s\n  %s\n", e == u->examples ? "" : "\n", e->what,
				e->line);
	}
}

static json_t **capture;

void parseopt_capture(struct json_t **into)
{
	capture = into;
}

static json_t *string_list(const char *const *l)
{
	json_t *a = json_array();

	for (size_t i = 0; l && l[i]; i++)
		json_array_append_new(a, json_string(l[i]));
	return a;
}

static void set_string(json_t *o, const char *key, const char *val)
{
	if (val)
		json_object_set_new(o, key, json_string(val));
}

static json_t *describe_option(const struct option *o)
{
	static const char *const hints[] = {
		[OPT_HINT_GPU_MODEL] = "gpu-model", [OPT_HINT_MIG_LAYOUT] = "mig-layout"};
	json_t *j = json_object();
	char s[2] = {(char)o->short_name, 0};

	set_string(j, "long", o->long_name);
	if (o->short_name)
		set_string(j, "short", s);
	json_object_set_new(j, "takesValue", json_boolean(takes_value(o)));
	if (takes_value(o))
		set_string(j, "placeholder", o->argh ? o->argh : "VALUE");
	set_string(j, "help", o->help);
	if (o->values)
		json_object_set_new(j, "values", string_list(o->values));
	if (o->hint != OPT_HINT_NONE)
		set_string(j, "hint", hints[o->hint]);
	return j;
}

/* The table and its usage as data (parseopt_capture()). */
static json_t *describe(const struct option *opts, const struct parseopt_usage *u)
{
	json_t *d = json_object(), *a = json_array(), *ex = json_array();
	const struct option help = OPT_FLAG('h', "help", NULL, "this text");

	set_string(d, "command", u->cmd);
	json_object_set_new(d, "usage", string_list(u->lines));
	set_string(d, "text", u->text);
	set_string(d, "footer", u->footer);
	for (const struct parseopt_example *e = u->examples; e && e->line; e++)
		json_array_append_new(ex,
				      json_pack("{s:s, s:s}", "what", e->what, "line", e->line));
	json_object_set_new(d, "examples", ex);
	json_object_set_new(d, "subcommands", string_list(u->subcommands));
	for (const struct option *o = opts; o->kind != OPT_KIND_END; o++)
		json_array_append_new(a, o->kind == OPT_KIND_GROUP
						 ? json_pack("{s:s}", "group", o->help)
						 : describe_option(o));
	json_array_append_new(a, describe_option(&help));
	json_object_set_new(d, "options", a);
	return d;
}

int usage_error(const struct parseopt_usage *u, const struct gs_error *err)
{
	char buf[2048];

	fprintf(stderr, "gpushare %s: %s\n", u->cmd, gs_error_str(err, buf, sizeof(buf)));
	print_usage_lines(stderr, u);
	fprintf(stderr, "see 'gpushare %s --help'\n", u->cmd);
	return EXIT_USAGE;
}

int parse_options(int argc, char **argv, const struct option *opts, const struct parseopt_usage *u)
{
	struct gs_error err;
	int r;

	if (capture) {
		json_decref(*capture);
		*capture = describe(opts, u);
		return PARSEOPT_HELP;
	}
	r = parse_options_quiet(argc, argv, opts, &err);

	if (r == PARSEOPT_HELP)
		usage_with_options(stdout, opts, u);
	else if (r == PARSEOPT_ERROR)
		usage_error(u, &err);
	return r;
}

int parseopt_exit(int r)
{
	return r == PARSEOPT_HELP ? EXIT_OK : EXIT_USAGE;
}
