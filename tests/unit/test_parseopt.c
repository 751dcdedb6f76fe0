#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/parseopt.h"

/* The one command-line parser (src/cmd/parseopt.h): grammar, errors, --help. */

struct vals {
	bool dry, full, insecure;
	const char *node, *out;
	long interval, timeout_ms;
	int calls;
	char seen[64];
};

static int record(const struct option *opt, const char *arg, struct gs_error *err)
{
	struct vals *v = opt->value;

	if (!strcmp(arg, "bad")) {
		gs_error_set(err, "option '--tag' does not like '%s'", arg);
		return -1;
	}
	v->calls++;
	strncat(v->seen, arg, sizeof(v->seen) - strlen(v->seen) - 1);
	return 0;
}

#define OPTS(v)                                                                                    \
	struct option opts[] = {                                                                   \
		OPT_BOOL(0, "dry-run", &(v).dry, "write nothing"),                                 \
		OPT_FLAG(0, "full", &(v).full, "everything"),                                      \
		OPT_STRING(0, "node", &(v).node, "NAME", "one node"),                              \
		OPT_STRING('o', "output", &(v).out, "FORMAT", "table\nor env"),                    \
		OPT_INT(0, "interval", &(v).interval, "SECONDS", "how often", 1, 86400),           \
		OPT_CALLBACK(0, "tag", &(v), "T", "repeatable", record),                           \
		OPT_GROUP("Connection:"),                                                          \
		OPT_BOOL(0, "insecure-skip-tls-verify", &(v).insecure, "unsafe"),                  \
		OPT_DURATION(0, "request-timeout", &(v).timeout_ms, "DURATION", "per request",     \
			     86400000L),                                                           \
		OPT_END(),                                                                         \
	}

/* Parse a NULL-terminated list (copied: the parser reorders argv). */
static int parse(const struct option *opts, char **args, char ***out, struct gs_error *err)
{
	static char *argv[32];
	int argc = 0;

	while (args[argc]) {
		argv[argc] = args[argc];
		argc++;
	}
	argv[argc] = NULL;
	*out = argv;
	return parse_options_quiet(argc, argv, opts, err);
}

static void both_forms_and_positionals(void **state)
{
	struct vals v = {0};
	OPTS(v);
	char **rest;
	struct gs_error err;
	char *args[] = {"cmd",	  "pos1", "--node=n1", "--interval", "30", "-",
			"-o",	  "env",  "--dry-run", "--tag",	     "a",  "--tag=b",
			"--full", "--",	  "--node",    "pos3",	     NULL};

	(void)state;
	assert_int_equal(parse(opts, args, &rest, &err), 4);
	assert_string_equal(rest[0], "pos1");
	assert_string_equal(rest[1], "-");
	assert_string_equal(rest[2], "--node"); /* after --: a positional */
	assert_string_equal(rest[3], "pos3");
	assert_null(rest[4]);
	assert_string_equal(v.node, "n1");
	assert_string_equal(v.out, "env");
	assert_int_equal(v.interval, 30);
	assert_true(v.dry);
	assert_true(v.full);
	assert_int_equal(v.calls, 2);
	assert_string_equal(v.seen, "ab");
}

static void short_forms(void **state)
{
	struct vals v = {0};
	OPTS(v);
	char **rest;
	struct gs_error err;
	char *a1[] = {"cmd", "-otable", NULL};
	char *a2[] = {"cmd", "-o=env", NULL};
	char *a3[] = {"cmd", "-x", NULL};

	(void)state;
	assert_int_equal(parse(opts, a1, &rest, &err), 0);
	assert_string_equal(v.out, "table");
	assert_int_equal(parse(opts, a2, &rest, &err), 0);
	assert_string_equal(v.out, "env");
	assert_int_equal(parse(opts, a3, &rest, &err), PARSEOPT_ERROR);
	assert_string_equal(err.msg, "unknown option '-x'");
}

static void errors_name_the_option(void **state)
{
	static const struct {
		char *args[4];
		const char *msg;
	} cases[] = {
		{{"cmd", "--foo=1"}, "unknown option '--foo'"},
		/* no abbreviations, but the near name is suggested */
		{{"cmd", "--nod", "x"}, "unknown option '--nod'; did you mean '--node'?"},
		{{"cmd", "--node"}, "option '--node' needs a value"},
		{{"cmd", "--node", "--full"},
		 "option '--node' needs a value, got option '--full' (write --node=--full if that "
		 "is the value)"},
		{{"cmd", "--interval", "x"},
		 "option '--interval' expects a whole number from 1 to 86400, got 'x'"},
		{{"cmd", "--interval=0"},
		 "option '--interval' expects a whole number from 1 to 86400, got '0'"},
		{{"cmd", "--interval", "99999999999999999999"},
		 "option '--interval' expects a whole number from 1 to 86400, got "
		 "'99999999999999999999'"},
		{{"cmd", "--interval="},
		 "option '--interval' expects a whole number from 1 to 86400, "
		 "got ''"},
		{{"cmd", "--request-timeout", "soon"},
		 "option '--request-timeout' expects seconds or a duration such as 30s, 2m, 500ms "
		 "(at most 86400s), got 'soon'"},
		{{"cmd", "--request-timeout=25h"},
		 "option '--request-timeout' expects seconds or a duration such as 30s, 2m, 500ms "
		 "(at most 86400s), got '25h'"},
		{{"cmd", "--dry-run=maybe"},
		 "option '--dry-run' expects true or false, got 'maybe'"},
		{{"cmd", "--full=true"}, "option '--full' takes no value"},
		{{"cmd", "--tag", "bad"}, "option '--tag' does not like 'bad'"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct vals v = {0};
		OPTS(v);
		char **rest;
		struct gs_error err;
		assert_int_equal(parse(opts, (char **)cases[i].args, &rest, &err), PARSEOPT_ERROR);
		assert_string_equal(err.msg, cases[i].msg);
	}
}

static void values(void **state)
{
	struct vals v = {0};
	OPTS(v);
	char **rest;
	struct gs_error err;
	char *a1[] = {"cmd", "--request-timeout", "1m30s", "--dry-run=false", NULL};
	char *a2[] = {"cmd", "--request-timeout=500ms", "--insecure-skip-tls-verify", NULL};
	char *a3[] = {"cmd", "--request-timeout", "7", "--node=", "--dry-run=1", NULL};

	(void)state;
	v.dry = true;
	assert_int_equal(parse(opts, a1, &rest, &err), 0);
	assert_int_equal(v.timeout_ms, 90000);
	assert_false(v.dry);
	assert_int_equal(parse(opts, a2, &rest, &err), 0);
	assert_int_equal(v.timeout_ms, 500);
	assert_true(v.insecure);
	assert_int_equal(parse(opts, a3, &rest, &err), 0);
	assert_int_equal(v.timeout_ms, 7000);
	assert_string_equal(v.node, ""); /* empty means unset, as kubectl's --context= */
	assert_true(v.dry);
}

static void help(void **state)
{
	struct vals v = {0};
	OPTS(v);
	char **rest;
	struct gs_error err;
	char *a1[] = {"cmd", "--node", "x", "--help", "--bogus", NULL};
	char *a2[] = {"cmd", "-h", NULL};
	static const char *const lines[] = {"gpushare cmd [options]", "gpushare cmd other", NULL};
	const struct parseopt_usage u = {.cmd = "cmd",
					 .lines = lines,
					 .text = "What it does.\n",
					 .footer = "Exit status: 0.\n"};
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_int_equal(parse(opts, a1, &rest, &err), PARSEOPT_HELP);
	assert_int_equal(parse(opts, a2, &rest, &err), PARSEOPT_HELP);
	assert_int_equal(parseopt_exit(PARSEOPT_HELP), 0);
	assert_int_equal(parseopt_exit(PARSEOPT_ERROR), 2);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	usage_with_options(f, opts, &u);
	fclose(f);
	assert_string_equal(text, "usage: gpushare cmd [options]\n"
				  "   or: gpushare cmd other\n"
				  "\n"
				  "What it does.\n"
				  "\n"
				  "Options:\n"
				  "  --dry-run                 write nothing\n"
				  "  --full                    everything\n"
				  "  --node NAME               one node\n"
				  "  -o, --output FORMAT       table\n"
				  "                            or env\n"
				  "  --interval SECONDS        how often\n"
				  "  --tag T                   repeatable\n"
				  "\n"
				  "Connection:\n"
				  "  --insecure-skip-tls-verify\n"
				  "                            unsafe\n"
				  "  --request-timeout DURATION\n"
				  "                            per request\n"
				  "  -h, --help                this text\n"
				  "\n"
				  "Exit status: 0.\n");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(both_forms_and_positionals),
		cmocka_unit_test(short_forms),
		cmocka_unit_test(errors_name_the_option),
		cmocka_unit_test(values),
		cmocka_unit_test(help),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
