#include <stdio.h>
#include <string.h>

#include "engine/check.h"
#include "cmd/cmd.h"
#include "cmd/parseopt.h"
#include "base/banned.h"

static const char *const usage_lines[] = {
	"gpushare check [--api-rules] [--shared] [--strict] FILE...", NULL};

static const struct parseopt_example check_examples[] = {
	{"check the lab's pods before kubectl apply", "gpushare check k8s/team-a-pods.yaml"},
	{"also report more than one shared GPU per container",
	 "gpushare check --shared k8s/placement.yaml k8s/mig-job.yaml"},
	{NULL, NULL},
};
static const struct parseopt_usage check_usage = {
	"check",
	usage_lines,
	"Check pod manifests for GPU requests before deploy. FILE may hold several\n"
	"YAML documents; '-' reads standard input. Looked at: Pod, the pod templates\n"
	"of Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController,\n"
	"Job, CronJob and PodTemplate, and the items of List kinds; every container\n"
	"and init container. Other kinds are skipped.\n"
	"\n"
	"Output (standard output):\n"
	"  OVER=<container>=<count>  nvidia.com/gpu in limits or requests is more than 1\n"
	"                            (count: that value; the larger when both are)\n"
	"  FILE:LINE:COL: container \"<name>\": <field>: <why>\n"
	"                            kube-apiserver would refuse the object at create,\n"
	"                            in its words: not an integer (\"must be an integer\"),\n"
	"                            negative, a request without a limit (\"Limit must be\n"
	"                            set for non overcommitable resources\") or unequal to\n"
	"                            it (\"must be equal to <res> limit of <n>\"), a bad name\n"
	"  OK                        nothing found (printed only then)\n"
	"  FILE:LINE:COL: container \"<name>\": ...\n"
	"                            a finding of an opt-in rule below\n"
	"A name that is not a valid container name is shown quoted with escapes\n"
	"(OVER=\"x\\nOK\"=3), so it can never make a line or an '=' of its own.\n"
	"Quantities are read as Kubernetes reads them: 2, \"2\", 2000m and 2.0 are all 2.\n",
	"Exit status: 0 OK, 1 findings, 2 unreadable or invalid input (the error goes to\n"
	"standard error as FILE:LINE:COL: message; OK is never printed then).\n",
	check_examples,
	NULL,
};

static const char *const engines[] = {"stream", "tree", NULL};

static int parse_engine(const struct option *opt, const char *arg, struct gs_error *err)
{
	enum check_engine *engine = opt->value;

	if (!strcmp(arg, "stream"))
		*engine = CHECK_ENGINE_STREAM;
	else if (!strcmp(arg, "tree"))
		*engine = CHECK_ENGINE_TREE;
	else {
		gs_error_set(err, "option '--engine' expects stream or tree, got '%s'", arg);
		return -1;
	}
	return 0;
}

int cmd_check(int argc, char **argv)
{
	unsigned rules = 0;
	enum check_engine engine = CHECK_ENGINE_STREAM;
	int i, n, errors = 0, findings = 0;
	bool api_rules = false, shared = false, strict = false;
	struct option opts[] = {
		OPT_FLAG(0, "api-rules", &api_rules,
			 "accepted and ignored: kube-apiserver's rules are always\n"
			 "applied now"),
		OPT_FLAG(0, "shared", &shared,
			 "also report more than 1 of any other nvidia.com/ resource\n"
			 "(gpu.shared, mig-*): a shared resource with\n"
			 "failRequestsGreaterThanOne fails such a pod at admission"),
		OPT_FLAG(0, "strict", &strict, "the same as --shared"),
		OPT_CALLBACK_VALUES(0, "engine", &engine, "stream|tree",
				    "how files are read (results are identical; stream is faster)",
				    parse_engine, engines),
		OPT_END(),
	};

	n = parse_options(argc, argv, opts, &check_usage);
	if (n < 0)
		return parseopt_exit(n);
	if (n == 0) {
		struct gs_error err;
		gs_error_set(&err, "no manifest given");
		return usage_error(&check_usage, &err);
	}
	(void)api_rules;
	if (shared || strict)
		rules |= CHECK_SHARED_RESOURCES;
	for (i = 0; i < n; i++) {
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
