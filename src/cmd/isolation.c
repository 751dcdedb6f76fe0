#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "model/isolation.h"
#include "cmd/output.h"
#include "cmd/parseopt.h"
#include "base/banned.h"

static const char *const usage_lines[] = {"gpushare isolation [-o table|env|json|yaml]", NULL};

static const struct parseopt_example isolation_examples[] = {
	{"what time-slicing, MPS and MIG isolate", "gpushare isolation"},
	{"the lab's KEY=value lines", "gpushare isolation -o env"},
	{NULL, NULL},
};
static const struct parseopt_usage isolation_usage = {
	"isolation",
	usage_lines,
	"Memory and fault isolation of time-slicing, MPS and MIG.\n",
	NULL,
	isolation_examples,
	NULL,
};

static void print_env(void)
{
	char *text = isolation_env_text();

	fputs(text, stdout);
	free(text);
}

static void print_table(void)
{
	size_t n;
	const struct isolation_method *methods = isolation_methods(&n);

	printf("%-13s %-17s %-16s %s\n", "METHOD", "MEMORY ISOLATION", "FAULT ISOLATION",
	       "RESOURCE");
	for (size_t i = 0; i < n; i++)
		printf("%-13s %-17s %-16s %s\n", methods[i].name, methods[i].memory,
		       methods[i].fault, methods[i].resource);
	for (size_t i = 0; i < n; i++) {
		printf("\n%s\n", methods[i].name);
		printf("  divides: %s\n", methods[i].divides);
		printf("  memory %s: %s\n", methods[i].memory, methods[i].memory_why);
		printf("  faults %s: %s\n", methods[i].fault, methods[i].fault_why);
	}
	printf("\nyes = enforced by the hardware; partial = a limit exists but is not an "
	       "isolation boundary; no = none.\n");
}

/* The methods as a document: kind IsolationReport, {"methods": [...]}. */
static int print_doc(enum output_format format)
{
	size_t n;
	const struct isolation_method *m = isolation_methods(&n);
	json_t *methods = json_array(), *doc;
	struct gs_error err;
	char buf[2048];
	int rc;

	for (size_t i = 0; i < n; i++)
		json_array_append_new(methods,
				      json_pack("{s:s,s:s,s:s,s:{s:s,s:s},s:{s:s,s:s}}", "name",
						m[i].name, "resource", m[i].resource, "divides",
						m[i].divides, "memory", "isolation", m[i].memory,
						"why", m[i].memory_why, "faults", "isolation",
						m[i].fault, "why", m[i].fault_why));
	doc = json_pack("{s:s,s:s,s:o}", "apiVersion", OUTPUT_API_VERSION, "kind",
			"IsolationReport", "methods", methods);
	rc = output_print(doc, format, 0, &err);
	json_decref(doc);
	if (rc < 0) {
		fprintf(stderr, "gpushare isolation: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int cmd_isolation(int argc, char **argv)
{
	enum output_format format = OUTPUT_TABLE;

	struct option opts[] = {
		OPT_OUTPUT(&format, OUTPUT_TABLES | OUTPUT_ALLOW(OUTPUT_ENV),
			   "table: what each method divides and why (default)\n"
			   "env: the lab's five KEY=value lines (out/isolation.txt)\n"
			   "json, yaml: the methods, kind IsolationReport"),
		OPT_END(),
	};
	int n = parse_options(argc, argv, opts, &isolation_usage);

	if (n < 0)
		return parseopt_exit(n);
	if (n > 0) {
		struct gs_error err;
		gs_error_set(&err, "unexpected argument '%s'", argv[0]);
		return usage_error(&isolation_usage, &err);
	}
	if (output_is_doc(format))
		return print_doc(format);
	if (format == OUTPUT_ENV)
		print_env();
	else
		print_table();
	return EXIT_OK;
}
