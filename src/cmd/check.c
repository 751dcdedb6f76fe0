#include <stdio.h>
#include <string.h>

#include "engine/check.h"
#include "cmd/cmd.h"
#include "cmd/output.h"
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

/* One file's findings as JSON: [{"type": "over", container, count} | {"type": "note", message}]. */
static json_t *findings_json(const struct check_report *rep)
{
	json_t *a = json_array();

	for (size_t k = 0; k < rep->n; k++) {
		const struct check_finding *f = &rep->items[k];

		if (f->kind == CHECK_OVER)
			json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "type", "over",
							   "container", f->container, "count",
							   f->count));
		else
			json_array_append_new(
				a, json_pack("{s:s,s:s}", "type", "note", "message", f->text));
	}
	return a;
}

int cmd_check(int argc, char **argv)
{
	enum output_format fmt = OUTPUT_TABLE;
	json_t *files = NULL;
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
		OPT_OUTPUT(&fmt, OUTPUT_TABLES,
			   "table: the lines below (default); json or yaml: kind\n"
			   "CheckResult, {ok, files: [{file, error, findings}]}"),
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
	if (output_is_doc(fmt))
		files = json_array();
	for (i = 0; i < n; i++) {
		struct check_report rep;
		struct gs_error err;
		char buf[2048];

		bool err_set;

		check_report_init(&rep);
		err_set = check_file(argv[i], rules, engine, &rep, &err) != 0;
		if (err_set) {
			gs_error_str(&err, buf, sizeof(buf));
			/* Positioned errors read like a compiler's; the rest get our name. */
			fprintf(stderr, "gpushare check: %s\n", buf);
			errors++;
		}
		if (files) {
			json_array_append_new(files,
					      json_pack("{s:s,s:o,s:o}", "file", argv[i], "error",
							err_set ? json_string(buf) : json_null(),
							"findings", findings_json(&rep)));
			findings += (int)rep.n;
			check_report_release(&rep);
			continue;
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
	if (files) {
		struct gs_error err;
		char buf[2048];
		json_t *doc =
			json_pack("{s:s,s:s,s:b,s:o}", "apiVersion", OUTPUT_API_VERSION, "kind",
				  "CheckResult", "ok", !errors && !findings, "files", files);
		int r = output_print(doc, fmt, 0, &err);

		json_decref(doc);
		if (r < 0) {
			fprintf(stderr, "gpushare check: %s\n",
				gs_error_str(&err, buf, sizeof(buf)));
			return EXIT_USAGE;
		}
	}
	if (errors)
		return EXIT_USAGE;
	if (findings)
		return EXIT_FINDING;
	if (!files)
		puts("OK");
	return EXIT_OK;
}
