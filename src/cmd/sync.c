#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "kubeclient.h"
#include "kubeconfig.h"
#include "sync.h"
#include "banned.h"

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: gpushare sync [--configmap NS/NAME] [--node NAME] [--dry-run]\n"
		"                     [--default-config KEY] [--fallback-strategies LIST]\n"
		"                     [--interval SECONDS] [connection flags]\n"
		"\n"
		"For every node that declares its GPUs (annotations gpushare.io/gpu-product and\n"
		"gpushare.io/gpu-count), choose its device-plugin config from its\n"
		"nvidia.com/device-plugin.config label, compute what NVIDIA's device plugin and\n"
		"GPU feature discovery would publish, and patch only what changed: labels, and\n"
		"status.capacity and status.allocatable. A node whose config is invalid or\n"
		"missing is left untouched and reported; the others are still synced.\n"
		"\n"
		"  --configmap NS/NAME        device-plugin ConfigMap "
		"[gpu-share/device-plugin-configs]\n"
		"  --node NAME                sync only this node\n"
		"  --dry-run                  print the patches, write nothing\n"
		"  --default-config KEY       config-manager's DEFAULT_CONFIG [unset]\n"
		"  --fallback-strategies L    config-manager's FALLBACK_STRATEGIES [named,single]\n"
		"  --interval SECONDS         keep syncing every SECONDS until interrupted\n"
		"\n"
		"Exit status: 0 all nodes in sync, 1 some node failed, 2 bad usage or the\n"
		"ConfigMap/node list could not be read.\n"
		"%s",
		kube_config_flags_help);
}

static void print_report(const struct sync_report *rep, int dry_run)
{
	for (size_t i = 0; i < rep->n; i++) {
		const struct sync_node *n = &rep->nodes[i];
		const char *k;
		json_t *v;

		for (size_t w = 0; w < n->warnings.n; w++)
			fprintf(stderr, "warning: node %s: %s\n", n->name, n->warnings.items[w]);
		if (n->outcome == SYNC_FAILED) {
			fprintf(stderr, "gpushare sync: node %s: %s (left untouched)\n", n->name,
				n->message);
			continue;
		}
		if (n->outcome == SYNC_SKIPPED)
			continue;
		printf("%s: %s%s [config %s]", n->name, sync_outcome_name(n->outcome),
		       dry_run && n->outcome == SYNC_UPDATED ? " (dry run)" : "",
		       n->config && *n->config ? n->config : "(empty)");
		json_object_foreach (n->resources, k, v)
			printf(" %s=%s", k, json_string_value(v));
		printf("\n");
		if (dry_run && n->patch) {
			char *s = json_dumps(n->patch, JSON_SORT_KEYS | JSON_INDENT(2));
			printf("%s\n", s);
			free(s);
		}
	}
	fflush(stdout);
}

int cmd_sync(int argc, char **argv)
{
	struct kube_config_opts ko = {0};
	struct sync_opts so = {0};
	struct kube_config *cfg = NULL;
	struct kube_client *kc = NULL;
	struct gs_error err;
	char buf[2048];
	char *cm_ns = NULL;
	long interval = 0;
	int rc = EXIT_USAGE;

	gs_error_clear(&err);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = NULL;
		int r = kube_config_parse_flag(&ko, argc, argv, &i, &err);

		if (r < 0)
			goto usage_error;
		if (r > 0)
			continue;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			rc = EXIT_OK;
			goto out;
		}
		if (!strcmp(a, "--dry-run")) {
			so.dry_run = true;
			continue;
		}
		const char *names[] = {"--configmap", "--node", "--default-config",
				       "--fallback-strategies", "--interval"};
		int which = cmd_option_value(argc, argv, &i, names,
					     sizeof(names) / sizeof(names[0]), &val, &err);
		if (which == -2)
			goto usage_error;
		switch (which) {
		case 0: {
			const char *slash = strchr(val, '/');
			if (!slash || slash == val || !slash[1] || strchr(slash + 1, '/')) {
				gs_error_set(&err, "--configmap takes NAMESPACE/NAME, not '%s'",
					     val);
				goto usage_error;
			}
			free(cm_ns);
			cm_ns = gs_xstrndup(val, (size_t)(slash - val));
			so.configmap_namespace = cm_ns;
			so.configmap_name = slash + 1;
			break;
		}
		case 1:
			so.only_node = val;
			break;
		case 2:
			so.default_config = val;
			break;
		case 3:
			so.fallbacks = val;
			break;
		case 4: {
			char *end;
			interval = strtol(val, &end, 10);
			if (*end || interval <= 0 || interval > 86400) {
				gs_error_set(&err, "--interval takes a number of seconds, not '%s'",
					     val);
				goto usage_error;
			}
			break;
		}
		default:
			gs_error_set(&err, "unknown option '%s'", a);
			goto usage_error;
		}
	}

	if (kube_config_load(&cfg, &ko, &err) < 0 || kube_client_new(&kc, cfg, NULL, &err) < 0) {
		fprintf(stderr, "gpushare sync: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		goto out;
	}
	if (interval) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
	}
	do {
		struct sync_report rep = {0};
		int r = sync_run(kc, &so, &rep, &err);

		print_report(&rep, so.dry_run);
		sync_report_release(&rep);
		if (r < 0) {
			fprintf(stderr, "gpushare sync: %s\n",
				gs_error_str(&err, buf, sizeof(buf)));
			rc = EXIT_USAGE;
		} else {
			rc = r > 0 ? EXIT_FINDING : EXIT_OK;
		}
		for (long s = 0; interval && s < interval && !stopping; s++) {
			struct timespec one = {1, 0};
			nanosleep(&one, NULL);
		}
	} while (interval && !stopping);
	goto out;

usage_error:
	fprintf(stderr, "gpushare sync: %s\n", gs_error_str(&err, buf, sizeof(buf)));
	usage(stderr);
out:
	free(cm_ns);
	kube_client_free(kc);
	kube_config_free(cfg);
	return rc;
}
