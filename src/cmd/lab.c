#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/kubecontext.h"
#include "cmd/parseopt.h"
#include "daemon/lab.h"
#include "daemon/labdra.h"
#include "base/banned.h"

static const char *const usage_lines[] = {"gpushare lab [options]", NULL};

static const struct parseopt_example lab_examples[] = {
	{"run the scenario from the source tree against the cluster in KUBECONFIG", "gpushare lab"},
	{"the DRA form (k8s/dra/ in, out/dra/ out), waiting up to 5 minutes per step",
	 "gpushare lab --dra --timeout 300"},
	{NULL, NULL},
};
static const struct parseopt_usage lab_usage = {
	"lab",
	usage_lines,
	"Run the eight-step GPU sharing scenario against the cluster in KUBECONFIG:\n"
	"namespaces and the device-plugin ConfigMap, three fake GPU nodes (plain,\n"
	"time-sliced, MIG mixed) advertised as the NVIDIA device plugin would, pods\n"
	"split by resource name, a team quota and its refusal, request checks, the\n"
	"isolation table and label-driven placement. Reads DIR/k8s/*.yaml, writes\n"
	"DIR/out/{quota-denied,isolation,placement}.txt and the fleet picture\n"
	"DIR/out/fleet.html (gpushare report). Safe to re-run.\n"
	"With --dra, the same story on nodes NVIDIA's DRA driver serves: ResourceSlices,\n"
	"claims allocated by the scheduler, a device-class quota and the driver's\n"
	"prepare of a time-sliced claim; reads DIR/k8s/dra/, writes DIR/out/dra/.\n",
	NULL,
	lab_examples,
	NULL,
};

static void progress(void *arg, const char *line)
{
	(void)arg;
	cmd_printf("%s\n", line);
	fflush(stdout);
}

static void summary(const struct lab_report *rep)
{
	cmd_printf("\nWhere everything landed\n");
	for (size_t i = 0; i < rep->sync.n; i++) {
		const struct sync_node *n = &rep->sync.nodes[i];
		char *res;

		if (n->outcome != SYNC_UPDATED && n->outcome != SYNC_UNCHANGED)
			continue;
		res = sync_resources_text(n);
		cmd_printf("  %-11s config %-8s%s%s\n", n->name,
			   n->config && *n->config ? n->config : "(empty)", *res ? " " : "", res);
		free(res);
	}
	for (size_t i = 0; i < rep->n_pods; i++) {
		char pod[256];
		snprintf(pod, sizeof(pod), "%s/%s", rep->pods[i].namespace, rep->pods[i].pod);
		cmd_printf("  %-24s -> %-11s %s\n", pod, rep->pods[i].node, rep->pods[i].why);
	}
	if (rep->quota_used)
		cmd_printf("  quota team-a/gpu-quota requests.nvidia.com/gpu %s; team-over "
			   "refused: %s\n",
			   rep->quota_used, rep->quota_denied ? rep->quota_denied : "");
	cmd_printf("  files: k8s/*.yaml, bin/check-request.sh, out/quota-denied.txt, "
		   "out/isolation.txt, out/placement.txt, out/fleet.html\n");
	for (size_t i = 0; i < rep->notes.n; i++)
		cmd_printf("  note: %s\n", rep->notes.items[i]);
}

static void summary_dra(const struct labdra_report *rep)
{
	cmd_printf("\nWhere everything landed (status.allocation)\n");
	for (size_t i = 0; i < rep->n_pods; i++) {
		char pod[256];
		snprintf(pod, sizeof(pod), "%s/%s", rep->pods[i].namespace, rep->pods[i].pod);
		cmd_printf("  %-22s -> %-10s %s\n", pod, rep->pods[i].node, rep->pods[i].device);
	}
	if (rep->prepare_before)
		cmd_printf("  shared-t4, default driver gates: %s\n", rep->prepare_before);
	if (rep->prepare_after)
		cmd_printf("  shared-t4, TimeSlicingSettings=true: %s\n", rep->prepare_after);
	if (rep->quota_used)
		cmd_printf("  quota dra-team-a/gpu-quota gpu.nvidia.com devices %s; team-over "
			   "refused: %s\n",
			   rep->quota_used, rep->quota_denied ? rep->quota_denied : "");
	cmd_printf("  files: k8s/dra/*.yaml, out/dra/placement.txt, out/dra/prepare.txt, "
		   "out/dra/quota-denied.txt\n");
}

int cmd_lab(int argc, char **argv)
{
	struct kube_context kx = {0};
	struct lab_opts lo = {0};
	struct lab_report rep = {0};
	struct labdra_report drep = {0};
	bool dra = false;
	struct gs_error err;
	char buf[2048];
	long timeout_s = 120;
	int rc = EXIT_USAGE, n;
	struct option opts[] = {
		OPT_STRING(0, "dir", &lo.dir, "DIR", "working directory holding k8s/ and bin/ [.]"),
		OPT_BOOL(0, "dra", &dra, "the DRA form: k8s/dra/ in, out/dra/ out"),
		OPT_INT(0, "timeout", &timeout_s, "SECONDS", "longest wait for one condition [120]",
			1, 86400),
		OPT_KUBE_CONNECTION(&kx.opts),
		OPT_END(),
	};

	n = parse_options(argc, argv, opts, &lab_usage);
	if (n < 0)
		return parseopt_exit(n);
	if (n > 0) {
		gs_error_set(&err, "unexpected argument '%s'", argv[0]);
		return usage_error(&lab_usage, &err);
	}
	lo.wait_ms = timeout_s * 1000;
	if (kube_context_open(&kx, "lab", &err) < 0) {
		fprintf(stderr, "gpushare lab: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		goto out;
	}
	lo.progress = progress;
	if (dra) {
		if (labdra_run(kx.client, &lo, &drep, &err) < 0) {
			fprintf(stderr, "gpushare lab: %s\n", gs_error_str(&err, buf, sizeof(buf)));
			rc = EXIT_FINDING;
			goto out;
		}
		summary_dra(&drep);
		rc = EXIT_OK;
		goto out;
	}
	if (lab_run(kx.client, &lo, &rep, &err) < 0) {
		fprintf(stderr, "gpushare lab: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		rc = EXIT_FINDING;
		goto out;
	}
	summary(&rep);
	rc = EXIT_OK;
out:
	labdra_report_release(&drep);
	lab_report_release(&rep);
	kube_context_release(&kx);
	return rc;
}
