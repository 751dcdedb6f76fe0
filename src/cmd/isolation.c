#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "banned.h"

/*
 * Isolation of the three ways to share a GPU (MISSION table; spec
 * nvidia-semantics §1.7, §3.2, §3.6, §5, §6.4). Values are yes / partial /
 * no: yes = enforced by hardware, partial = a limit exists but is not an
 * isolation boundary, no = none.
 */
struct method {
	const char *name;
	const char *resource;
	const char *divides;
	const char *memory;
	const char *memory_why;
	const char *fault;
	const char *fault_why;
};

static const struct method methods[] = {
	{"time-slicing", "nvidia.com/gpu x replicas",
	 "nothing: the same GPU is registered N times (replicas), so N pods each get \"a GPU\"",
	 "no",
	 "all replicas share one undivided VRAM; a greedy pod can make the others run out of "
	 "memory (the plugin sets no limit, spec §3.2)",
	 "no",
	 "the pods' contexts are time-sliced on one GPU; a fault that resets the GPU hits every "
	 "replica on it"},
	{"mps", "nvidia.com/gpu x replicas",
	 "compute: kernels of several processes run truly concurrently in one MPS context",
	 "partial",
	 "the MPS control daemon sets a per-client pinned-memory limit (total / replicas, spec "
	 "§6.4) and an active-thread share, but clients share one context: a limit, not an "
	 "isolation boundary",
	 "no",
	 "one client crashing can take down the MPS server and the other clients with it"},
	{"mig", "nvidia.com/mig-<profile> (mixed) or nvidia.com/gpu (single)",
	 "the hardware: each instance gets its own SMs, memory slices, caches and engines",
	 "yes",
	 "each MIG instance has its own memory slices (spec §5.2); one instance cannot use "
	 "another's memory",
	 "yes",
	 "faults stay inside the GPU instance; other instances keep running"},
};

#define N_METHODS (sizeof(methods) / sizeof(methods[0]))

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
	/* The seed's keys, in the seed's order (MISSION step 7). */
	printf("TIMESLICING_MEMORY_ISOLATION=%s\n", methods[0].memory);
	printf("MPS_MEMORY_ISOLATION=%s\n", methods[1].memory);
	printf("MIG_MEMORY_ISOLATION=%s\n", methods[2].memory);
	printf("TIMESLICING_FAULT_ISOLATION=%s\n", methods[0].fault);
	printf("MIG_FAULT_ISOLATION=%s\n", methods[2].fault);
}

static void print_table(void)
{
	printf("%-13s %-17s %-16s %s\n", "METHOD", "MEMORY ISOLATION", "FAULT ISOLATION",
	       "RESOURCE");
	for (size_t i = 0; i < N_METHODS; i++)
		printf("%-13s %-17s %-16s %s\n", methods[i].name, methods[i].memory,
		       methods[i].fault, methods[i].resource);
	for (size_t i = 0; i < N_METHODS; i++) {
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
		fprintf(stderr, "gpushare isolation: unknown output format '%s' (want table or env)\n",
			format);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}
