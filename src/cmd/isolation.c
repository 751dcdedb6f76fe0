#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "isolation.h"
#include "banned.h"

static void usage(FILE *out)
{
	fputs("usage: gpushare isolation [-o table|env]\n"
	      "\n"
	      "Memory and fault isolation of time-slicing, MPS and MIG.\n"
	      "\n"
	      "  -o table   a table with what each method divides and why (default)\n"
	      "  -o env     the lab's five KEY=value lines (out/isolation.txt)\n"
	      "  --help     this text\n",
	      out);
}

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

int cmd_isolation(int argc, char **argv)
{
	const char *format = "table";

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return EXIT_OK;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			format = argv[++i];
		} else if (!strncmp(argv[i], "-o", 2) && argv[i][2]) {
			format = argv[i] + 2;
		} else if (!strncmp(argv[i], "--output=", 9)) {
			format = argv[i] + 9;
		} else {
			fprintf(stderr, "gpushare isolation: unknown argument '%s'\n", argv[i]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!strcmp(format, "env")) {
		print_env();
	} else if (!strcmp(format, "table")) {
		print_table();
	} else {
		fprintf(stderr,
			"gpushare isolation: unknown output format '%s' (want table or env)\n",
			format);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}
