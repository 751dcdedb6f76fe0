#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "kubeclient.h"
#include "kubeconfig.h"
#include "lab.h"
#include "banned.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: gpushare lab [--dir DIR] [--timeout SECONDS] [connection flags]\n"
		"\n"
		"Run the eight-step GPU sharing scenario against the cluster in KUBECONFIG:\n"
		"namespaces and the device-plugin ConfigMap, three fake GPU nodes (plain,\n"
		"time-sliced, MIG mixed) advertised as the NVIDIA device plugin would, pods\n"
		"split by resource name, a team quota and its refusal, request checks, the\n"
		"isolation table and label-driven placement. Reads DIR/k8s/*.yaml, writes\n"
		"DIR/out/{quota-denied,isolation,placement}.txt. Safe to re-run.\n"
		"\n"
		"  --dir DIR          working directory holding k8s/ and bin/ [.]\n"
		"  --timeout SECONDS  longest wait for one condition [120]\n"
		"%s",
		kube_config_flags_help);
}

static void progress(void *arg, const char *line)
{
	(void)arg;
	printf("%s\n", line);
	fflush(stdout);
}

static void summary(const struct lab_report *rep)
{
	printf("\nWhere everything landed\n");
	for (size_t i = 0; i < rep->n_nodes; i++) {
		const char *k;
		json_t *v;

		printf("  %-11s config %-8s", rep->nodes[i].name,
		       *rep->nodes[i].config ? rep->nodes[i].config : "(empty)");
		json_object_foreach (rep->nodes[i].resources, k, v)
			printf(" %s=%s", k, json_string_value(v));
		printf("\n");
	}
	for (size_t i = 0; i < rep->n_pods; i++) {
		char pod[256];
		snprintf(pod, sizeof(pod), "%s/%s", rep->pods[i].namespace, rep->pods[i].pod);
		printf("  %-24s -> %-11s %s\n", pod, rep->pods[i].node, rep->pods[i].why);
	}
	if (rep->quota_used)
		printf("  quota team-a/gpu-quota requests.nvidia.com/gpu %s; team-over refused: "
		       "%s\n",
		       rep->quota_used, rep->quota_denied ? rep->quota_denied : "");
	printf("  files: k8s/*.yaml, bin/check-request.sh, out/quota-denied.txt, "
	       "out/isolation.txt, out/placement.txt\n");
	for (size_t i = 0; i < rep->notes.n; i++)
		printf("  note: %s\n", rep->notes.items[i]);
}

int cmd_lab(int argc, char **argv)
{
	struct kube_config_opts ko = {0};
	struct lab_opts lo = {0};
	struct kube_config *cfg = NULL;
	struct kube_client *kc = NULL;
	struct lab_report rep = {0};
	struct gs_error err;
	char buf[2048];
	int rc = EXIT_USAGE;

	gs_error_clear(&err);
	for (int i = 1; i < argc; i++) {
		int r = kube_config_parse_flag(&ko, argc, argv, &i, &err);
		if (r < 0)
			goto usage_error;
		if (r > 0)
			continue;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return EXIT_OK;
		} else if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
			lo.dir = argv[++i];
		} else if (!strncmp(argv[i], "--dir=", 6)) {
			lo.dir = argv[i] + 6;
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			char *end;
			long s = strtol(argv[++i], &end, 10);
			if (*end || s <= 0 || s > 86400) {
				gs_error_set(&err, "--timeout takes a number of seconds, not '%s'",
					     argv[i]);
				goto usage_error;
			}
			lo.wait_ms = s * 1000;
		} else {
			gs_error_set(&err, "unknown option '%s'", argv[i]);
			goto usage_error;
		}
	}

	if (kube_config_load(&cfg, &ko, &err) < 0 || kube_client_new(&kc, cfg, NULL, &err) < 0) {
		fprintf(stderr, "gpushare lab: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		rc = EXIT_USAGE;
		goto out;
	}
	printf("gpushare lab: cluster %s (context %s)\n", cfg->server,
	       cfg->context ? cfg->context : "in-cluster");
	lo.progress = progress;
	if (lab_run(kc, &lo, &rep, &err) < 0) {
		fprintf(stderr, "gpushare lab: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		rc = EXIT_FINDING;
		goto out;
	}
	summary(&rep);
	rc = EXIT_OK;
	goto out;

usage_error:
	fprintf(stderr, "gpushare lab: %s\n", gs_error_str(&err, buf, sizeof(buf)));
	usage(stderr);
out:
	lab_report_release(&rep);
	kube_client_free(kc);
	kube_config_free(cfg);
	return rc;
}
