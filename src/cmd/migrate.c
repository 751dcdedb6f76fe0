#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "cmd/cmd.h"
#include "cmd/offline.h"
#include "cmd/output.h"
#include "cmd/parseopt.h"
#include "engine/migrate.h"
#include "fleet/fleet.h"
#include "model/kobj.h"
#include "yaml/yamlout.h"
#include "base/banned.h"

static const char *const usage_lines[] = {
	"gpushare migrate --to dra -f FILE|DIR|- [-f ...] [-R] [--configmap NS/NAME]\n"
	"              [--pool NAME] [--kubernetes-version VERSION] [--feature-gates GATES]\n"
	"              [-o table|json|yaml]",
	NULL,
};

static const struct parseopt_example migrate_examples[] = {
	{"rehearse moving the whole lab to the DRA driver", "gpushare migrate --to dra -f k8s/"},
	{"the same on a 1.34 cluster, where DRAExtendedResource is alpha and off",
	 "gpushare migrate --to dra -f k8s/ --kubernetes-version v1.34.4"},
	{"as JSON, for the v1.36 release",
	 "gpushare migrate --to dra -f k8s/ --kubernetes-version v1.36.3 -o json"},
	{NULL, NULL},
};

static const struct parseopt_usage migrate_usage = {
	"migrate",
	usage_lines,
	"Rehearse moving a fleet from NVIDIA's device plugin to its DRA driver, offline,\n"
	"on the objects of the files (Nodes, Pods and workloads, the device-plugin\n"
	"ConfigMap, ResourceQuotas; docs/guide/migrate.md). Pools (as plan groups\n"
	"nodes: gpushare.io/pool, else the GPU model) move one at a time: --pool moves\n"
	"one, the others keep the device plugin. Prints what each pool publishes after\n"
	"the move (full GPUs and MIG devices per node on the DRA path; the driver's\n"
	"DeviceClasses), one verdict per Pod or workload template on the mixed fleet:\n"
	"unchanged (nvidia.com/gpu through gpu.nvidia.com's extendedResourceName, or a\n"
	"device-plugin pool), needs-claim (a replica or a MIG device: the claims to\n"
	"write are printed, from dra translate), breaks (nothing serves what it names),\n"
	"and where each ResourceQuota charges devices after the move, as the Kubernetes\n"
	"release given counts them.\n",
	"Exit status: 0 every workload keeps working or has claims to write, 1 some\n"
	"workload breaks, 2 bad usage or input.\n",
	migrate_examples,
	NULL,
};

static const char *const to_values[] = {"dra", NULL};

static void print_error(const struct gs_error *err)
{
	char buf[2048];
	fprintf(stderr, "gpushare migrate: %s\n", gs_error_str(err, buf, sizeof(buf)));
}

/* What one node publishes, in words. */
static char *node_words(const json_t *n)
{
	struct strbuf sb = STRBUF_INIT;
	const char *k;
	json_t *v;

	if (json_object_get(n, "gpus")) {
		long long g = json_integer_value(json_object_get(n, "gpus"));
		if (g || !json_object_size(json_object_get(n, "mig")))
			strbuf_addf(&sb, "%lld GPU%s", g, g == 1 ? "" : "s");
		json_object_foreach (json_object_get(n, "mig"), k, v)
			strbuf_addf(&sb, "%s%lld MIG %s", sb.len ? " + " : "",
				    (long long)json_integer_value(v), k);
	} else {
		json_object_foreach (json_object_get(n, "resources"), k, v)
			strbuf_addf(&sb, "%s%s=%s", sb.len ? " " : "", k,
				    json_is_string(v) ? json_string_value(v) : "?");
		if (!sb.len)
			strbuf_addstr(&sb, "nothing");
	}
	if (json_object_get(n, "refused"))
		strbuf_addstr(&sb, " (refused)");
	return strbuf_detach(&sb, NULL);
}

/* A pool's nodes, those that publish the same grouped: "2 GPUs (lab-node-0); ...". */
static char *pool_words(const struct migrate_pool *p)
{
	json_t *groups = json_object(), *order = json_array();
	struct strbuf sb = STRBUF_INIT;
	const json_t *n, *g;
	size_t i;

	json_array_foreach (p->nodes, i, n) {
		char *w = node_words(n);
		json_t *at = json_object_get(groups, w);
		if (!at) {
			json_object_set_new(groups, w, json_pack("[i,s]", 0, kobj_text(n, "name")));
			json_array_append_new(order, json_string(w));
			at = json_object_get(groups, w);
		}
		json_array_set_new(at, 0,
				   json_integer(json_integer_value(json_array_get(at, 0)) + 1));
		free(w);
	}
	json_array_foreach (order, i, g) {
		const json_t *at = json_object_get(groups, json_string_value(g));
		long long c = json_integer_value(json_array_get(at, 0));
		if (c == 1)
			strbuf_addf(&sb, "%s%s (%s)", i ? "; " : "", json_string_value(g),
				    json_string_value(json_array_get(at, 1)));
		else
			strbuf_addf(&sb, "%s%s (%lld nodes)", i ? "; " : "", json_string_value(g),
				    c);
	}
	json_decref(groups);
	json_decref(order);
	return strbuf_detach(&sb, NULL);
}

static int print_table(const struct migrate_result *r, const char *pool, struct gs_error *err)
{
	size_t wpool = 4, wwl = 8;
	const json_t *c;
	size_t i;

	cmd_printf("Moving %s to the DRA driver on Kubernetes %s (DRAExtendedResource %s)\n",
		   pool ? pool : "every pool", r->kubernetes_version, r->gate);
	for (i = 0; i < r->n_pools; i++)
		if (escape_line_width(r->pools[i].name) > wpool)
			wpool = escape_line_width(r->pools[i].name);
	cmd_printf("\nPOOLS AFTER THE MOVE\n%-*s  %5s  %-13s  %s\n", (int)wpool, "POOL", "NODES",
		   "STACK", "PUBLISHES");
	for (i = 0; i < r->n_pools; i++) {
		char *w = pool_words(&r->pools[i]);
		cmd_printf("%-*s  %5zu  %-13s  %s\n", (int)wpool, r->pools[i].name,
			   r->pools[i].n_nodes, r->pools[i].dra ? "dra" : "device-plugin", w);
		free(w);
	}
	cmd_printf("\nDEVICECLASSES (the driver's chart)\n");
	json_array_foreach (r->device_classes, i, c) {
		const char *ext = kobj_text(c, "spec.extendedResourceName");
		cmd_printf("%s%s%s\n", kobj_name(c), *ext ? "  extendedResourceName: " : "", ext);
	}
	if (!r->extended_resource)
		cmd_printf("(the chart writes extendedResourceName: nvidia.com/gpu; with "
			   "DRAExtendedResource off the apiserver drops it)\n");

	for (i = 0; i < r->n_workloads; i++) {
		const struct migrate_workload *w = &r->workloads[i];
		size_t l = escape_line_width(w->kind) + escape_line_width(w->ns) +
			   escape_line_width(w->name) + 2;
		if (l > wwl)
			wwl = l;
	}
	cmd_printf("\nWORKLOADS\n%-*s  %-11s  %s\n", (int)wwl, "WORKLOAD", "VERDICT", "WHY");
	if (!r->n_workloads)
		cmd_printf("(none asks for an nvidia.com/ resource)\n");
	for (i = 0; i < r->n_workloads; i++) {
		const struct migrate_workload *w = &r->workloads[i];
		const json_t *res;
		size_t j;
		char *id = gs_xasprintf("%s %s/%s", w->kind, w->ns, w->name);
		char pods[48] = "";
		if (w->pods != 1)
			snprintf(pods, sizeof(pods), " x %ld pods", w->pods);
		json_array_foreach (w->resources, j, res)
			cmd_printf("%-*s  %-11s  %s: %lld%s: %s\n", (int)wwl, j ? "" : id,
				   j ? "" : migrate_verdict_name(w->verdict),
				   kobj_text(res, "resource"),
				   (long long)json_integer_value(json_object_get(res, "count")),
				   pods, kobj_text(res, "why"));
		free(id);
	}

	bool any = false;
	for (i = 0; i < r->n_workloads; i++) {
		const struct migrate_workload *w = &r->workloads[i];
		struct strbuf sb = STRBUF_INIT;
		const json_t *o, *n;
		size_t j;
		if (!json_array_size(w->claims) && !json_array_size(w->objects))
			continue;
		if (!any)
			cmd_printf("\nCLAIMS TO WRITE (dra translate's; apply before the pods)\n");
		any = true;
		json_array_foreach (w->claims, j, n)
			strbuf_addf(&sb, "%s%s", j ? ", " : "", json_string_value(n));
		cmd_printf("# %s %s/%s%s%s%s: its pods name %s\n", w->kind, w->ns, w->name,
			   *w->source ? " (" : "", w->source, *w->source ? ")" : "",
			   sb.len ? sb.buf : "no claim");
		strbuf_release(&sb);
		json_array_foreach (w->notes, j, n)
			cmd_printf("# - %s\n", json_string_value(n));
		json_array_foreach (w->objects, j, o) {
			struct strbuf y = STRBUF_INIT;
			if (yamlout_document(o, &y, err) < 0) {
				strbuf_release(&y);
				return -1;
			}
			fputs("---\n", stdout);
			fwrite(y.buf, 1, y.len, stdout);
			strbuf_release(&y);
		}
	}

	if (r->n_quotas)
		cmd_printf("\nQUOTAS: CHARGED BEFORE -> AFTER THE MOVE\n");
	for (i = 0; i < r->n_quotas; i++) {
		const struct migrate_quota *u = &r->quotas[i];
		cmd_printf("%s/%s  %s: hard %lld, before %lld, after %lld", u->ns, u->name,
			   u->resource, u->hard, u->before, u->after);
		if (u->after_maybe)
			cmd_printf(" (%lld more if pods that fit both stacks land on DRA)",
				   u->after_maybe);
		if (u->after > u->hard)
			cmd_printf(" (%lld over)", u->after - u->hard);
		cmd_printf("\n  charged by %s\n", u->how);
	}
	if (r->notes.n)
		cmd_printf("\nNOTES\n");
	for (i = 0; i < r->notes.n; i++)
		cmd_printf("- %s\n", r->notes.items[i]);
	return 0;
}

int cmd_migrate(int argc, char **argv)
{
	struct gs_error err;
	const char *to = NULL, *pool = NULL;
	struct kube_target kt = {0};
	struct kubegates gates;
	enum output_format format = OUTPUT_TABLE;
	struct fleet_sources src = {0};
	struct configmap_ref cmref;
	struct fleet f;
	const json_t *cm = NULL;
	struct dpconfig_set *set = NULL;
	struct migrate_object *objs = NULL;
	struct migrate_result *res = NULL;
	int rc = EXIT_USAGE, n;
	struct option opts[] = {
		OPT_STRING_VALUES(0, "to", &to, "STACK",
				  "the stack to move to: dra (NVIDIA's DRA driver)", to_values),
		OPT_STRING(0, "pool", &pool, "NAME",
			   "move only this pool (gpushare.io/pool, else the GPU\n"
			   "model); the others keep the device plugin [every pool]"),
		OPT_KUBE_TARGET(&kt),
		OPT_CONFIGMAP_REF(&cmref),
		OPT_OUTPUT(&format, OUTPUT_TABLES,
			   "table (default), json or yaml (kind MigrationPlan)"),
		OPT_FLEET_SOURCES(&src),
		OPT_END(),
	};

	configmap_ref_init(&cmref);
	fleet_init(&f);
	gs_error_clear(&err);
	n = parse_options(argc, argv, opts, &migrate_usage);
	if (n < 0) {
		rc = parseopt_exit(n);
		goto out;
	}
	for (int i = 0; i < n; i++)
		fleet_sources_add(&src, argv[i]);
	struct migrate_input in = {.pool = pool, .kube = kt.kv, .gates = &gates};
	if (!to) {
		gs_error_set(&err, "say where to move: --to dra");
		rc = usage_error(&migrate_usage, &err);
		goto out;
	}
	kubegates_defaults(&gates, kt.kv ? kt.kv : kubeversion_newest());
	if (parseopt_value(&opts[0], "--to", to, &err) < 0 ||
	    (kt.gates && kubegates_parse(&gates, kt.gates, &err) < 0)) {
		rc = usage_error(&migrate_usage, &err);
		goto out;
	}
	if (!src.n) {
		gs_error_set(&err, "migrate needs the fleet: -f FILE|DIR|-");
		rc = usage_error(&migrate_usage, &err);
		goto out;
	}
	if (fleet_read(&f, &src, &err) < 0 ||
	    offline_configmap(&f, &cmref, "migrate", true, &cm, &set, &err) < 0)
		goto fail;
	objs = gs_xcalloc(json_array_size(f.objects) + 1, sizeof(*objs));
	for (size_t i = 0; i < json_array_size(f.objects); i++) {
		const json_t *o = json_array_get(f.objects, i);
		objs[i] = (struct migrate_object){o, fleet_stream_of(&f, o)};
	}
	in.nodes = f.nodes;
	in.configmap = cm;
	in.set = set;
	in.cm_file = cm ? ydoc_stream_name(fleet_stream_of(&f, cm)) : NULL;
	in.objects = objs;
	in.n_objects = json_array_size(f.objects);
	in.quotas = f.quotas;
	if (migrate_run(&in, &res, &err) < 0)
		goto fail;
	if (output_is_doc(format)) {
		json_t *doc = migrate_result_json(res),
		       *stamped = output_stamp(doc, "MigrationPlan");
		int r = output_print(stamped, format, 0, &err);
		json_decref(stamped);
		json_decref(doc);
		if (r < 0)
			goto fail;
	} else if (print_table(res, pool, &err) < 0) {
		goto fail;
	}
	rc = migrate_result_breaks(res) ? EXIT_FINDING : EXIT_OK;
	goto out;
fail:
	print_error(&err);
	rc = EXIT_USAGE;
out:
	migrate_result_free(res);
	free(objs);
	dpconfig_set_free(set);
	fleet_release(&f);
	fleet_sources_release(&src);
	configmap_ref_release(&cmref);
	return rc;
}
