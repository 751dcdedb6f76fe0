#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "model/isolation.h"
#include "cmd/parseopt.h"
#include "base/banned.h"

static const char *const usage_lines[] = {"gpushare isolation [-o table|env]", NULL};

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

static const char *const isolation_formats[] = {"table", "env", NULL};

int cmd_isolation(int argc, char **argv)
{
	const char *format = "table";

	struct option opts[] = {
		OPT_STRING_VALUES('o', "output", &format, "FORMAT",
				  "table: what each method divides and why (default)\n"
				  "env: the lab's five KEY=value lines (out/isolation.txt)",
				  isolation_formats),
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
	struct gs_error err;
	switch (parseopt_choice("output format", format, isolation_formats, 2, &err)) {
	case 0:
		print_table();
		return EXIT_OK;
	case 1:
		print_env();
		return EXIT_OK;
	default:
		return usage_error(&isolation_usage, &err);
	}
}
