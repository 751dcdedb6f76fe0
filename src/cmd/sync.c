#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "model/defaults.h"
#include "dra/draslice.h"
#include "cmd/kubecontext.h"
#include "cmd/offline.h"
#include "cmd/output.h"
#include "cmd/parseopt.h"
#include "fleet/sync.h"
#include "base/banned.h"

static volatile sig_atomic_t stopping;

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static const char *const usage_lines[] = {"gpushare sync [options]", NULL};

static const struct parseopt_example sync_examples[] = {
	{"the patches for the GPU nodes of the cluster in KUBECONFIG; write nothing",
	 "gpushare sync --dry-run"},
	{"sync one node under the lab's ConfigMap",
	 "gpushare sync --node lab-node-1 --configmap gpu-share/device-plugin-configs"},
	{"keep syncing every 30 seconds", "gpushare sync --interval 30"},
	{NULL, NULL},
};
static const struct parseopt_usage sync_usage = {
	"sync",
	usage_lines,
	"For every node that declares its GPUs (annotations gpushare.io/gpu-product and\n"
	"gpushare.io/gpu-count), choose its device-plugin config from its\n"
	"nvidia.com/device-plugin.config label, compute what NVIDIA's device plugin and\n"
	"GPU feature discovery would publish, and patch only what changed: labels, and\n"
	"status.capacity and status.allocatable. A node whose config is invalid or\n"
	"missing is left untouched and reported; the others are still synced.\n"
	"A node labeled gpushare.io/path=dra gets the ResourceSlice NVIDIA's DRA\n"
	"driver would publish instead, and no nvidia.com resource (docs/guide/dra.md).\n",
	"Exit status: 0 all nodes in sync, 1 some node failed, 2 bad usage or the\n"
	"ConfigMap/node list could not be read.\n",
	sync_examples,
	NULL,
};

static const char *op_done(enum sync_op_action a)
{
	return a == SYNC_OP_CREATE ? "created" : a == SYNC_OP_UPDATE ? "updated" : "deleted";
}

/* One line per write to a ResourceSlice or DeviceClass of `node` (NULL: the classes). */
static void print_ops(const struct sync_report *rep, const char *node, int dry_run)
{
	for (size_t i = 0; i < rep->n_ops; i++) {
		const struct sync_op *op = &rep->ops[i];

		if (node ? !op->node || strcmp(op->node, node) : op->node != NULL)
			continue;
		cmd_printf("%s%s%s %s%s%s", node ? node : "", node ? ": " : "", op->kind,
			   op->name ? op->name : "(new)", " ", op_done(op->action));
		if (op->generation)
			cmd_printf(" (generation %lld)", op->generation);
		cmd_printf("%s\n", dry_run ? " (dry run)" : "");
		if (dry_run && op->body) {
			char *s = json_dumps(op->body, JSON_SORT_KEYS | JSON_INDENT(2));
			printf("%s\n", s);
			free(s);
		}
	}
}

static void print_report(const struct sync_report *rep, int dry_run)
{
	print_ops(rep, NULL, dry_run);
	for (size_t i = 0; i < rep->n; i++) {
		const struct sync_node *n = &rep->nodes[i];
		char *res;

		for (size_t w = 0; w < n->warnings.n; w++)
			cmd_eprintf("warning: node %s: %s\n", n->name, n->warnings.items[w]);
		if (n->outcome == SYNC_FAILED) {
			cmd_eprintf("gpushare sync: node %s: %s%s\n", n->name, n->message,
				    n->patch ? "" : " (left untouched)");
			print_ops(rep, n->name, dry_run);
			continue;
		}
		if (n->outcome == SYNC_SKIPPED)
			continue;
		if (n->dra) {
			size_t ns = json_array_size(n->pool);

			cmd_printf("%s: %s%s [dra] %s %zu devices", n->name,
				   sync_outcome_name(n->outcome),
				   dry_run && n->outcome == SYNC_UPDATED ? " (dry run)" : "",
				   DRASLICE_DRIVER, draslice_pool_devices(n->pool));
			if (ns > 1)
				cmd_printf(" in %zu slices", ns);
			putchar('\n');
		} else {
			res = sync_resources_text(n);
			cmd_printf("%s: %s%s [config %s]%s%s\n", n->name,
				   sync_outcome_name(n->outcome),
				   dry_run && n->outcome == SYNC_UPDATED ? " (dry run)" : "",
				   n->config && *n->config ? n->config : "(empty)", *res ? " " : "",
				   res);
			free(res);
		}
		if (n->health_event)
			cmd_printf("%s: %s\n", n->name, n->health_event);
		if (dry_run && n->patch) {
			char *s = json_dumps(n->patch, JSON_SORT_KEYS | JSON_INDENT(2));
			printf("%s\n", s);
			free(s);
		}
		print_ops(rep, n->name, dry_run);
	}
	fflush(stdout);
}

static json_t *ops_json(const struct sync_report *rep, const char *node)
{
	json_t *a = json_array();

	for (size_t i = 0; i < rep->n_ops; i++) {
		const struct sync_op *op = &rep->ops[i];
		json_t *o;

		if (node ? !op->node || strcmp(op->node, node) : op->node != NULL)
			continue;
		o = json_pack("{s:s,s:s,s:o}", "kind", op->kind, "action", op_done(op->action),
			      "name", op->name ? json_string(op->name) : json_null());
		if (op->generation)
			json_object_set_new(o, "generation", json_integer(op->generation));
		if (op->body)
			json_object_set(o, "object", op->body);
		json_array_append_new(a, o);
	}
	return a;
}

/*
 * The report as one document, kind SyncReport: {dryRun, deviceClasses: [op],
 * nodes: [{name, outcome, path, config, message, resources, patch, operations}]}.
 */
static int print_report_doc(const struct sync_report *rep, int dry_run, enum output_format fmt,
			    struct gs_error *err)
{
	json_t *nodes = json_array(), *body, *doc;
	int rc;

	for (size_t i = 0; i < rep->n; i++) {
		const struct sync_node *n = &rep->nodes[i];
		json_t *o = json_pack("{s:s,s:s,s:s}", "name", n->name, "outcome",
				      sync_outcome_name(n->outcome), "path",
				      n->dra ? "dra" : "device-plugin");

		for (size_t w = 0; w < n->warnings.n; w++)
			cmd_eprintf("warning: node %s: %s\n", n->name, n->warnings.items[w]);
		if (n->outcome == SYNC_FAILED)
			cmd_eprintf("gpushare sync: node %s: %s%s\n", n->name, n->message,
				    n->patch ? "" : " (left untouched)");
		if (n->config)
			json_object_set_new(o, "config", json_string(n->config));
		if (n->message)
			json_object_set_new(o, "message", json_string(n->message));
		if (n->resources)
			json_object_set(o, "resources", n->resources);
		json_object_set(o, "patch", n->patch ? n->patch : json_null());
		json_object_set_new(o, "operations", ops_json(rep, n->name));
		json_array_append_new(nodes, o);
	}
	body = json_pack("{s:b,s:o,s:o}", "dryRun", dry_run, "deviceClasses", ops_json(rep, NULL),
			 "nodes", nodes);
	doc = output_stamp(body, "SyncReport");
	rc = output_print(doc, fmt, JSON_SORT_KEYS, err);
	json_decref(doc);
	json_decref(body);
	fflush(stdout);
	return rc;
}

int cmd_sync(int argc, char **argv)
{
	enum output_format fmt = OUTPUT_TABLE;
	struct kube_context kx = {0};
	struct sync_opts so = {0};
	struct configmap_ref cm = {.ns = NULL, .name = NULL, .given = false};
	struct gs_error err;
	char buf[2048];
	long interval = 0;
	int rc = EXIT_USAGE, n;
	struct option opts[] = {
		OPT_CALLBACK(0, "configmap", &cm, "NS/NAME",
			     "device-plugin ConfigMap [" GS_DEFAULT_CONFIGMAP_REF "]",
			     parse_configmap_ref),
		OPT_STRING(0, "node", &so.only_node, "NAME", "sync only this node"),
		OPT_BOOL(0, "dry-run", &so.dry_run, "print the patches, write nothing"),
		OPT_STRING(0, "default-config", &so.default_config, "KEY",
			   "config-manager's DEFAULT_CONFIG [unset]"),
		OPT_STRING(0, "fallback-strategies", &so.fallbacks, "LIST",
			   "config-manager's FALLBACK_STRATEGIES [named,single]"),
		OPT_STRING(0, "disable-healthchecks", &so.disable_healthchecks, "LIST",
			   "the device plugin's DP_DISABLE_HEALTHCHECKS: XIDs it skips besides "
			   "13,31,43,45,68,109, or all [unset]"),
		OPT_STRING(0, "enable-healthchecks", &so.enable_healthchecks, "LIST",
			   "the device plugin's DP_ENABLE_HEALTHCHECKS: XIDs it checks even so "
			   "[unset]"),
		OPT_INT(0, "interval", &interval, "SECONDS",
			"keep syncing every SECONDS until interrupted", 1, 86400),
		OPT_OUTPUT(&fmt, OUTPUT_TABLES,
			   "table: a line per node, the patches after it with\n"
			   "--dry-run (default); json or yaml: one document a\n"
			   "pass, kind SyncReport"),
		OPT_KUBE_CONNECTION(&kx.opts),
		OPT_END(),
	};

	configmap_ref_init(&cm);
	n = parse_options(argc, argv, opts, &sync_usage);
	if (n < 0) {
		rc = parseopt_exit(n);
		goto out;
	}
	if (n > 0) {
		gs_error_set(&err, "unexpected argument '%s'", argv[0]);
		rc = usage_error(&sync_usage, &err);
		goto out;
	}
	so.configmap_namespace = cm.ns;
	so.configmap_name = cm.name;
	if (so.dry_run)
		fprintf(stderr, "gpushare sync: dry run: nothing will be written\n");
	/* With --interval it runs until stopped: an apiserver that refuses is waited for. */
	kx.retry_unreachable = interval > 0;
	if (kube_context_open(&kx, "sync", &err) < 0) {
		fprintf(stderr, "gpushare sync: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		goto out;
	}
	if (interval) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
	}
	do {
		struct sync_report rep = {0};
		int r = sync_run(kx.client, &so, &rep, &err);

		if (output_is_doc(fmt)) {
			struct gs_error perr;
			if (r >= 0 && print_report_doc(&rep, so.dry_run, fmt, &perr) < 0) {
				fprintf(stderr, "gpushare sync: %s\n",
					gs_error_str(&perr, buf, sizeof(buf)));
				r = -2;
			}
		} else {
			print_report(&rep, so.dry_run);
		}
		sync_report_release(&rep);
		if (r == -2) {
			rc = EXIT_USAGE;
		} else if (r < 0) {
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
out:
	configmap_ref_release(&cm);
	kube_context_release(&kx);
	return rc;
}
