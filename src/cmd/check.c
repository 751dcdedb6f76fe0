#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cmd.h"
#include "banned.h"

static void usage(FILE *out)
{
	fputs("usage: gpushare check [--api-rules] [--shared] [--strict] FILE...\n"
	      "\n"
	      "Check pod manifests for GPU requests before deploy. FILE may hold several\n"
	      "YAML documents; '-' reads standard input. Looked at: Pod, the pod templates\n"
	      "of Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController,\n"
	      "Job, CronJob and PodTemplate, and the items of List kinds; every container\n"
	      "and init container. Other kinds are skipped.\n"
	      "\n"
	      "Output (standard output):\n"
	      "  OVER=<container>=<count>  nvidia.com/gpu in limits or requests is more than 1\n"
	      "                            (count: that value; the larger when both are)\n"
	      "  OK                        nothing found (printed only then)\n"
	      "  FILE:LINE:COL: container \"<name>\": ...\n"
	      "                            a finding of an opt-in rule below\n"
	      "Quantities are read as Kubernetes reads them: 2, \"2\", 2000m and 2.0 are all 2.\n"
	      "\n"
	      "Options:\n"
	      "  --api-rules  also apply kube-apiserver's rules for extended resources:\n"
	      "               whole numbers (\"must be an integer\"), not negative, a request\n"
	      "               needs a limit (\"Limit must be set for non overcommitable\n"
	      "               resources\") and must equal it (\"must be equal to <res> limit\")\n"
	      "  --shared     also report more than 1 of any other nvidia.com/ resource\n"
	      "               (gpu.shared, mig-*): a shared resource with\n"
	      "               failRequestsGreaterThanOne fails such a pod at admission\n"
	      "  --strict     both of the above\n"
	      "  --engine=stream|tree\n"
	      "               how files are read (results are identical; stream is faster)\n"
	      "\n"
	      "Exit status: 0 OK, 1 findings, 2 unreadable or invalid input (the error goes to\n"
	      "standard error as FILE:LINE:COL: message; OK is never printed then).\n",
	      out);
}

int cmd_check(int argc, char **argv)
{
	unsigned rules = 0;
	enum check_engine engine = CHECK_ENGINE_STREAM;
	int i, errors = 0, findings = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || !strcmp(a, "-"))
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return EXIT_OK;
		} else if (!strcmp(a, "--api-rules")) {
			rules |= CHECK_API_RULES;
		} else if (!strcmp(a, "--shared")) {
			rules |= CHECK_SHARED_RESOURCES;
		} else if (!strcmp(a, "--strict")) {
			rules |= CHECK_API_RULES | CHECK_SHARED_RESOURCES;
		} else if (!strcmp(a, "--engine=stream")) {
			engine = CHECK_ENGINE_STREAM;
		} else if (!strcmp(a, "--engine=tree")) {
			engine = CHECK_ENGINE_TREE;
		} else {
			fprintf(stderr, "gpushare check: unknown option '%s'\n", a);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		fputs("gpushare check: no manifest given\n", stderr);
		usage(stderr);
		return EXIT_USAGE;
	}
	for (; i < argc; i++) {
		struct check_report rep;
		struct gs_error err;
		char buf[2048];

		check_report_init(&rep);
		if (check_file(argv[i], rules, engine, &rep, &err)) {
			gs_error_str(&err, buf, sizeof(buf));
			/* Positioned errors read like a compiler's; the rest get our name. */
			fprintf(stderr, "%s%s\n", err.file[0] ? "" : "gpushare check: ", buf);
			errors++;
		}
		for (size_t k = 0; k < rep.n; k++) {
			const struct check_finding *f = &rep.items[k];

			if (f->kind == CHECK_OVER)
				printf("OVER=%s=%s\n", f->container, f->count);
			else
				printf("%s\n", f->text);
			findings++;
		}
		check_report_release(&rep);
	}
	if (errors)
		return EXIT_USAGE;
	if (findings)
		return EXIT_FINDING;
	puts("OK");
	return EXIT_OK;
}
