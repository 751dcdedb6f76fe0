#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/escape.h"
#include "cmd/cmd.h"
#include "model/dpconfig_set.h"
#include "engine/explain.h"
#include "engine/explain_offline.h"
#include "fleet/fleet.h"
#include "model/kobj.h"
#include "cmd/offline.h"
#include "cmd/output.h"
#include "cmd/parseopt.h"
#include "engine/plan.h"
#include "base/strbuf.h"
#include "yaml/ydoc.h"
#include "base/banned.h"

#define PLAN_MAX_FILES 1024

static const char *const usage_lines[] = {
	"gpushare plan -f FILE|DIR|- [-f ...] [-R] [--configmap NS/NAME] [--seed N] [--runs K]\n"
	"              [--percentage-of-nodes-to-score P] [-o table|json|yaml]",
	"gpushare plan -f FILE|DIR|- [-f ...] [-R] [--configmap NS/NAME] [--what-if CM2.yaml]\n"
	"              [--relabel NODE=KEY]... [--mig-config NODE=LAYOUT]... [-o table|json|yaml]",
	NULL,
};

static const struct parseopt_example plan_examples[] = {
	{"place the lab's pods as kube-scheduler would", "gpushare plan -f k8s/"},
	{"the same as JSON", "gpushare plan -f k8s/ -o json"},
	{"how many pods bind over 10 draws of the scheduler's random choices",
	 "gpushare plan -f k8s/ --runs 10"},
	{"what if lab-node-0 ran the shared config?",
	 "gpushare plan -f k8s/ --relabel lab-node-0=shared"},
	{NULL, NULL},
};
static const struct parseopt_usage plan_usage = {
	"plan",
	usage_lines,
	"Place the pods of the files, in reading order, as kube-scheduler's default\n"
	"profile would (--kubernetes-version, default v1.37.2) on their Nodes as gpushare would "
	"advertise them under\n"
	"the device-plugin ConfigMap found among them: quota admission at create\n"
	"against their ResourceQuotas (the apiserver's refusal text), the default\n"
	"filters (resources incl. cpu, memory, pods and extended ones, node selector\n"
	"and affinity, taints, unschedulable), the default scores where they decide\n"
	"(docs/guide/plan.md; from 100 nodes on, only those a pass from a rotating start\n"
	"finds before it has numFeasibleNodesToFind; ties by a draw seeded by --seed),\n"
	"then the kubelet's device admission (more than one slice of a shared resource with\n"
	"failRequestsGreaterThanOne fails the pod). The pods: every Pod not\n"
	"recorded from a cluster (no status), one with spec.nodeName on that node\n"
	"as its kubelet admits it, and the pods each\n"
	"Deployment, ReplicaSet, StatefulSet, DaemonSet, Job and CronJob would make\n"
	"(docs/guide/cli.md). Prints each pod's verdict (bound, pending with the\n"
	"scheduler's message, refused, failed) and each quota's use after the batch.\n"
	"\n"
	"What-if: with --what-if (another ConfigMap), --relabel (a node's\n"
	"nvidia.com/device-plugin.config) or --mig-config (a node's nvidia.com/mig.config\n"
	"layout; the node's MIG strategy must be single or mixed for it to count), the\n"
	"batch is planned before and after the change and the difference printed: pods\n"
	"whose verdict or node change, pods asking for an nvidia.com/ name no node\n"
	"advertises after it (and what those nodes advertise instead), quota use.\n"
	"\n"
	"Runs: with --runs K, the batch is planned K times with seeds N..N+K-1 and the\n"
	"count of each verdict printed per run, then the bound count's min, mean and max:\n"
	"the spread the scheduler's random choices give.\n",
	"Exit status: 0 every pod bound (what-if: nothing changes), 1 some pod pending,\n"
	"refused or failed (what-if: something changes), 2 bad usage or input.\n",
	plan_examples,
	NULL,
};

/* Each pool's headroom after the batch, as a table. */
static void print_pools(const struct plan_result *r)
{
	size_t wpool = 4, wres = 8;

	if (!r->n_pools)
		return;
	for (size_t i = 0; i < r->n_pools; i++) {
		if (escape_line_width(r->pools[i].pool) > wpool)
			wpool = escape_line_width(r->pools[i].pool);
		if (escape_line_width(r->pools[i].resource) > wres)
			wres = escape_line_width(r->pools[i].resource);
	}
	cmd_printf("\nHEADROOM AFTER THE BATCH\n%-*s  %-*s  %5s  %10s  %6s  %6s  %8s\n", (int)wpool,
		   "POOL", (int)wres, "RESOURCE", "NODES", "REGISTERED", "HELD", "FREE",
		   "STRANDED");
	for (size_t i = 0; i < r->n_pools; i++) {
		const struct pool_use *u = &r->pools[i];
		cmd_printf("%-*s  %-*s  %5zu  %10lld  %6lld  %6lld  %8lld\n", (int)wpool, u->pool,
			   (int)wres, u->resource, u->nodes, u->registered, u->held, u->free,
			   u->stranded);
	}
}

/* One claim of a pod, briefly: "claim gpu: team-a/c gpu-0 (memory 0, shares 60)". */
static void print_claim(int indent, const json_t *c)
{
	const json_t *d;
	size_t i;

	cmd_printf("%-*s  claim %s: %s", indent, "", kobj_text(c, "name"),
		   kobj_text(c, "resourceClaim"));
	if (!strcmp(kobj_text(c, "allocated"), "notJudged"))
		cmd_printf(", not judged offline: %s", kobj_text(c, "why"));
	else if (!json_array_size(json_object_get(c, "devices")))
		cmd_printf(", not allocated");
	json_array_foreach (json_object_get(c, "devices"), i, d) {
		const json_t *cc = json_object_get(d, "consumedCapacity");
		const char *k;
		json_t *v;
		bool first = true;
		cmd_printf("%s %s", i ? "," : "", kobj_text(d, "device"));
		json_object_foreach ((json_t *)cc, k, v) {
			cmd_printf("%s%s %s", first ? " (" : ", ", k,
				   json_is_string(v) ? json_string_value(v) : "?");
			first = false;
		}
		if (!first)
			cmd_printf(")");
	}
	if (!strcmp(kobj_text(c, "allocated"), "before"))
		cmd_printf(" (allocated before)");
	cmd_printf("\n");
}

static void print_table(const struct plan_result *r)
{
	size_t wpod = 3, wnode = 4;

	for (size_t i = 0; i < r->n_pods; i++) {
		size_t l = escape_line_width(r->pods[i].namespace) + 1 +
			   escape_line_width(r->pods[i].name);
		if (l > wpod)
			wpod = l;
		if (r->pods[i].node && escape_line_width(r->pods[i].node) > wnode)
			wnode = escape_line_width(r->pods[i].node);
	}
	cmd_printf("%-*s  %-7s  %-*s  %s\n", (int)wpod, "POD", "VERDICT", (int)wnode, "NODE",
		   "WHY");
	for (size_t i = 0; i < r->n_pods; i++) {
		const struct plan_pod *o = &r->pods[i];
		char *pod = gs_xasprintf("%s/%s", o->namespace, o->name);
		const char *why = o->reason ? o->reason : "";
		cmd_printf("%-*s  %-7s  %-*s  %s%s%s\n", (int)wpod, pod,
			   plan_verdict_name(o->verdict), (int)wnode, o->node ? o->node : "-",
			   o->status_reason ? o->status_reason : "", o->status_reason ? ": " : "",
			   why);
		for (size_t h = 0; h < o->n_hints; h++)
			cmd_printf("%-*s  hint: %s\n", (int)(wpod + wnode + 11), "", o->hints[h]);
		for (size_t c = 0; c < json_array_size(o->claims); c++)
			print_claim((int)(wpod + wnode + 11), json_array_get(o->claims, c));
		free(pod);
	}
	if (r->n_quotas)
		cmd_printf("\nQUOTA USE AFTER THE BATCH\n");
	for (size_t i = 0; i < r->n_quotas; i++) {
		const struct plan_quota_use *u = &r->quotas[i];
		cmd_printf("%s/%s  %s: used %s of %s\n", u->namespace, u->quota, u->resource,
			   u->used, u->hard);
	}
	print_pools(r);
}

/* --relabel NODE=KEY and --mig-config NODE=LAYOUT: [{node, label, value}...]. */
static int add_change(json_t **changes, const char *label, const char *opt, const char *arg,
		      struct gs_error *err)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || !eq[1]) {
		gs_error_set(err, "%s takes NODE=VALUE, not '%s'", opt, arg);
		return -1;
	}
	if (!*changes)
		*changes = json_array();
	json_t *node = json_stringn(arg, (size_t)(eq - arg));
	json_array_append_new(*changes, json_pack("{s:o,s:s,s:s}", "node", node, "label", label,
						  "value", eq + 1));
	return 0;
}

static int parse_relabel(const struct option *opt, const char *arg, struct gs_error *err)
{
	return add_change(opt->value, "nvidia.com/device-plugin.config", "--relabel", arg, err);
}

static int parse_mig_config(const struct option *opt, const char *arg, struct gs_error *err)
{
	return add_change(opt->value, "nvidia.com/mig.config", "--mig-config", arg, err);
}

/* Copies of the Nodes, each change's label set on its node. */
static int apply_changes(const json_t *nodes, const json_t *changes, json_t **out,
			 struct gs_error *err)
{
	const json_t *c, *n;
	size_t i, j;

	*out = json_deep_copy(nodes);
	json_array_foreach (changes, i, c) {
		const char *name = kobj_text(c, "node");
		json_t *node = NULL;
		json_array_foreach (*out, j, n)
			if (!strcmp(kobj_text(n, "metadata.name"), name))
				node = (json_t *)n;
		if (!node) {
			gs_error_set(err, "no Node '%s' among the files", name);
			return -1;
		}
		json_t *meta = json_object_get(node, "metadata");
		json_t *labels = json_object_get(meta, "labels");
		if (!json_is_object(labels)) {
			labels = json_object();
			json_object_set_new(meta, "labels", labels);
		}
		json_object_set_new(labels, kobj_text(c, "label"),
				    json_string(kobj_text(c, "value")));
	}
	return 0;
}

static void print_outcome(const json_t *o)
{
	const json_t *node = json_object_get(o, "node");

	cmd_printf("%s%s%s", kobj_text(o, "verdict"), json_is_string(node) ? " on " : "",
		   json_is_string(node) ? json_string_value(node) : "");
}

static long long int_of(const json_t *o, const char *key)
{
	return (long long)json_integer_value(json_object_get(o, key));
}

static void print_diff(const json_t *d, const char *what)
{
	const json_t *x;
	size_t i;

	cmd_printf("what-if: %s\n", what);
	if (!json_array_size(json_object_get(d, "changes")))
		cmd_printf("\nno pod changes verdict or node\n");
	else
		cmd_printf("\nCHANGED\n");
	json_array_foreach (json_object_get(d, "changes"), i, x) {
		const json_t *a = json_object_get(x, "after");
		cmd_printf("%s/%s: ", kobj_text(x, "namespace"), kobj_text(x, "name"));
		print_outcome(json_object_get(x, "before"));
		cmd_printf(" -> ");
		print_outcome(a);
		cmd_printf("\n");
		if (strcmp(kobj_text(a, "verdict"), "bound"))
			cmd_printf("  %s%s%s\n", kobj_text(a, "statusReason"),
				   *kobj_text(a, "statusReason") ? ": " : "",
				   kobj_text(a, "reason"));
	}
	if (json_array_size(json_object_get(d, "unadvertised")))
		cmd_printf("\nNO NODE ADVERTISES\n");
	json_array_foreach (json_object_get(d, "unadvertised"), i, x) {
		const json_t *alt = json_object_get(x, "instead"), *v;
		size_t j;
		cmd_printf("%s/%s asks for %s: no node advertises it after the change%s",
			   kobj_text(x, "namespace"), kobj_text(x, "name"),
			   kobj_text(x, "resource"),
			   json_is_true(json_object_get(x, "before")) ? "" : " (nor before)");
		if (json_array_size(alt)) {
			bool before = json_is_true(json_object_get(x, "before"));
			cmd_printf("; %s ",
				   before ? "the nodes that did now advertise" : "nodes advertise");
			json_array_foreach (alt, j, v)
				cmd_printf("%s%s", j ? ", " : "", json_string_value(v));
			cmd_printf(" instead");
		}
		cmd_printf("\n");
	}
	if (json_array_size(json_object_get(d, "quotas")))
		cmd_printf("\nQUOTA USE\n");
	json_array_foreach (json_object_get(d, "quotas"), i, x)
		cmd_printf("%s/%s  %s: used %s -> %s of %s\n", kobj_text(x, "namespace"),
			   kobj_text(x, "quota"), kobj_text(x, "resource"), kobj_text(x, "before"),
			   kobj_text(x, "after"), kobj_text(x, "hard"));
	if (json_array_size(json_object_get(d, "pools")))
		cmd_printf("\nCAPACITY BEFORE -> AFTER\n");
	json_array_foreach (json_object_get(d, "pools"), i, x) {
		const json_t *b = json_object_get(x, "before"), *a = json_object_get(x, "after");
		cmd_printf(
			"%s  %s: nodes %lld -> %lld, registered %lld -> %lld, held %lld -> %lld, "
			"free %lld -> %lld, stranded %lld -> %lld\n",
			kobj_text(x, "pool"), kobj_text(x, "resource"), int_of(b, "nodes"),
			int_of(a, "nodes"), int_of(b, "registered"), int_of(a, "registered"),
			int_of(b, "held"), int_of(a, "held"), int_of(b, "free"), int_of(a, "free"),
			int_of(b, "stranded"), int_of(a, "stranded"));
	}
}

/* v as json_dumps(JSON_INDENT(2)) writes it `depth` levels deep in a document. */
static void print_at(const json_t *v, int depth)
{
	char *text = json_dumps(v, JSON_INDENT(2));
	const char *p = text ? text : "null", *nl;

	while ((nl = strchr(p, '\n'))) {
		fwrite(p, 1, (size_t)(nl - p) + 1, stdout);
		printf("%*s", 2 * depth, "");
		p = nl + 1;
	}
	fputs(p, stdout);
	free(text);
}

/*
 * The nodes the stack refuses under one advertisement (sync_plan's
 * failures: a config key the ConfigMap lacks, a MIG layout the GPU has not,
 * an unknown model...), each named on standard error with its reason, never
 * silent; the same as [{"node", "reason"}] for JSON. `when` prefixes the
 * line ("what-if: ").
 */
static json_t *refused_nodes(const struct explain_fleet *f, const char *when)
{
	json_t *a = json_array();

	for (size_t i = 0; i < f->plan.n; i++) {
		const struct sync_node *sn = &f->plan.nodes[i];
		const char *why = sn->message ? sn->message : "";

		if (sn->outcome != SYNC_FAILED)
			continue;
		cmd_eprintf("gpushare plan: %snode %s: refused by the stack (%s); the node shows "
			    "nothing new\n",
			    when, sn->name, why);
		json_array_append_new(a, json_pack("{s:s,s:s}", "node", sn->name, "reason", why));
	}
	return a;
}

/* Whether `after` refuses a node `before` did not. */
static bool newly_refused(const json_t *before, const json_t *after)
{
	const json_t *x, *y;
	size_t i, j;

	json_array_foreach (after, i, x) {
		bool seen = false;
		json_array_foreach (before, j, y)
			seen |= !strcmp(kobj_text(x, "node"), kobj_text(y, "node"));
		if (!seen)
			return true;
	}
	return false;
}

/*
 * plan_result_json(r) as json_dumps(JSON_INDENT(2)) writes it `depth`
 * levels deep, one pod made and freed at a time: memory for one pod's
 * object, not the batch's.
 */
static void print_plan_json(const struct plan_result *r, const json_t *refused, int depth,
			    const char *kind)
{
	json_t *q = plan_quotas_json(r);

	printf("{");
	if (kind)
		printf("\n%*s\"apiVersion\": \"%s\",\n%*s\"kind\": \"%s\",", 2 * (depth + 1), "",
		       OUTPUT_API_VERSION, 2 * (depth + 1), "", kind);
	printf("\n%*s\"pods\": [", 2 * (depth + 1), "");
	for (size_t i = 0; i < r->n_pods; i++) {
		json_t *pod = plan_pod_json(r, i);
		printf("%s\n%*s", i ? "," : "", 2 * (depth + 2), "");
		print_at(pod, depth + 2);
		json_decref(pod);
	}
	if (r->n_pods)
		printf("\n%*s", 2 * (depth + 1), "");
	printf("],\n%*s\"quotas\": ", 2 * (depth + 1), "");
	print_at(q, depth + 1);
	json_t *pools = plan_pools_json(r);
	printf(",\n%*s\"pools\": ", 2 * (depth + 1), "");
	print_at(pools, depth + 1);
	json_decref(pools);
	printf(",\n%*s\"refusedNodes\": ", 2 * (depth + 1), "");
	print_at(refused, depth + 1);
	printf("\n%*s}", 2 * depth, "");
	json_decref(q);
}

static int add_pod(void *ctx, const json_t *pod, struct gs_error *err)
{
	return plan_add(ctx, pod, err);
}

/* The tree print_plan_json prints (for YAML, which is not streamed). */
static json_t *plan_doc(const struct plan_result *r, const json_t *refused)
{
	json_t *doc = plan_result_json(r);

	json_object_set(doc, "refusedNodes", (json_t *)refused);
	return doc;
}

static char *describe(const char *what_if, const json_t *changes)
{
	struct strbuf sb = STRBUF_INIT;
	const json_t *c;
	size_t i;

	if (what_if)
		strbuf_addf(&sb, "the ConfigMap of %s", what_if);
	json_array_foreach (changes, i, c)
		strbuf_addf(&sb, "%s%s %s=%s", sb.len ? "; " : "", kobj_text(c, "node"),
			    kobj_text(c, "label"), kobj_text(c, "value"));
	return strbuf_detach(&sb, NULL);
}

/* --runs: the batch planned `runs` times from seed of->sched.seed on; exit 0 when all bound. */
static int plan_runs(struct offline_fleet *of, long runs, enum output_format format,
		     struct gs_error *err)
{
	size_t *counts = gs_xcalloc((size_t)runs * 4 + 1, sizeof(size_t));
	uint64_t seed0 = of->sched.seed;
	size_t min = SIZE_MAX, max = 0, sum = 0;
	int rc = EXIT_OK;

	for (long k = 0; k < runs; k++) {
		struct plan *pl = NULL;
		struct plan_result *r;
		of->sched.seed = seed0 + (uint64_t)k;
		if (offline_plan_begin(of, &pl, err) < 0 ||
		    offline_each_pod(of, false, add_pod, pl, err) < 0) {
			plan_free(pl);
			free(counts);
			of->sched.seed = seed0;
			return -1;
		}
		r = plan_finish(pl);
		for (size_t i = 0; i < r->n_pods; i++)
			counts[(size_t)k * 4 + r->pods[i].verdict]++;
		plan_result_free(r);
		size_t b = counts[(size_t)k * 4 + PLAN_BOUND];
		min = b < min ? b : min;
		max = b > max ? b : max;
		sum += b;
		if (counts[(size_t)k * 4 + PLAN_PENDING] || counts[(size_t)k * 4 + PLAN_REFUSED] ||
		    counts[(size_t)k * 4 + PLAN_FAILED])
			rc = EXIT_FINDING;
	}
	of->sched.seed = seed0;
	double mean = (double)sum / (double)runs;
	if (output_is_doc(format)) {
		json_t *a = json_array();
		for (long k = 0; k < runs; k++) {
			const size_t *c = &counts[(size_t)k * 4];
			json_array_append_new(a, json_pack("{s:I,s:I,s:I,s:I,s:I}", "seed",
							   (json_int_t)(seed0 + (uint64_t)k),
							   "bound", (json_int_t)c[PLAN_BOUND],
							   "pending", (json_int_t)c[PLAN_PENDING],
							   "refused", (json_int_t)c[PLAN_REFUSED],
							   "failed", (json_int_t)c[PLAN_FAILED]));
		}
		json_t *doc = json_pack("{s:o,s:{s:I,s:f,s:I}}", "runs", a, "bound", "min",
					(json_int_t)min, "mean", mean, "max", (json_int_t)max);
		json_t *stamped = output_stamp(doc, "PlanRuns");
		int r = output_print(stamped, format, 0, err);
		json_decref(stamped);
		json_decref(doc);
		if (r < 0) {
			free(counts);
			return -1;
		}
	} else {
		cmd_printf("%-20s  %7s  %7s  %7s  %7s\n", "SEED", "BOUND", "PENDING", "REFUSED",
			   "FAILED");
		for (long k = 0; k < runs; k++) {
			const size_t *c = &counts[(size_t)k * 4];
			cmd_printf("%-20llu  %7zu  %7zu  %7zu  %7zu\n",
				   (unsigned long long)(seed0 + (uint64_t)k), c[PLAN_BOUND],
				   c[PLAN_PENDING], c[PLAN_REFUSED], c[PLAN_FAILED]);
		}
		cmd_printf(
			"\nbound over %ld runs (seeds %llu..%llu): min %zu, mean %.1f, max %zu\n",
			runs, (unsigned long long)seed0,
			(unsigned long long)(seed0 + (uint64_t)runs - 1), min, mean, max);
	}
	free(counts);
	return rc;
}

int cmd_plan(int argc, char **argv)
{
	struct gs_error err;
	char buf[2048];
	const char *what_if = NULL;
	json_t *changes = NULL, *nodes2 = NULL;
	struct ydoc_stream *cs2 = NULL;
	struct dpconfig_set *set2 = NULL;
	const json_t *cm2 = NULL;
	struct explain_fleet fleet2 = {0};
	struct plan_result *res = NULL, *res2 = NULL;
	json_t *refused = NULL, *refused2 = NULL;
	enum output_format format = OUTPUT_TABLE;
	int rc = EXIT_USAGE, n;
	struct fleet_sources src = {0};
	struct configmap_ref cmref;
	struct offline_fleet of = {0};
	long seed = 0, runs = 0, percentage = 0;
	struct option opts[] = {
		OPT_CONFIGMAP_REF(&cmref),
		OPT_OUTPUT(&format, OUTPUT_TABLES,
			   "table (default), json or yaml (kind Plan; with a\n"
			   "what-if, kind PlanWhatIf)"),
		OPT_FLEET_SOURCES(&src),
		OPT_KUBE_TARGET(&of.kube),
		OPT_INT(0, "seed", &seed, "N",
			"seed of the draws among nodes of equal top score\n(the scheduler's "
			"random pick) [0]",
			0, 2147483647L),
		OPT_INT(0, "runs", &runs, "K",
			"plan K times, seeds N..N+K-1; print each run's\ncounts and the bound "
			"count's min, mean, max",
			1, 10000),
		OPT_INT(0, "percentage-of-nodes-to-score", &percentage, "P",
			"the scheduler's percentageOfNodesToScore, 0..100\n(0: adaptive, the "
			"default) [0]",
			0, 100),
		OPT_GROUP("What-if (plan before and after, print the difference):"),
		OPT_STRING(0, "what-if", &what_if, "FILE", "another device-plugin ConfigMap"),
		OPT_CALLBACK(0, "relabel", &changes, "NODE=KEY",
			     "give NODE nvidia.com/device-plugin.config=KEY;\nrepeatable",
			     parse_relabel),
		OPT_CALLBACK_HINT(
			0, "mig-config", &changes, "NODE=LAYOUT",
			"give NODE nvidia.com/mig.config=LAYOUT (a mig-parted\nlayout such as "
			"all-balanced); repeatable",
			parse_mig_config, OPT_HINT_MIG_LAYOUT),
		OPT_GROUP("Older forms, each the same as -f FILE (so is FILE... without -f):"),
		OPT_CALLBACK(0, "nodes", &src, "FILE", "", parse_fleet_source),
		OPT_CALLBACK(0, "quota", &src, "FILE", "", parse_fleet_source),
		OPT_END(),
	};

	configmap_ref_init(&cmref);
	n = parse_options(argc, argv, opts, &plan_usage);
	if (n < 0) {
		rc = parseopt_exit(n);
		goto out;
	}
	if (kube_target_check(&of.kube, &err) < 0) {
		rc = usage_error(&plan_usage, &err);
		goto out;
	}
	if (runs && (what_if || changes)) {
		gs_error_set(&err, "--runs does not go with a what-if (--what-if, --relabel, "
				   "--mig-config)");
		rc = usage_error(&plan_usage, &err);
		goto out;
	}
	of.sched.seed = (uint64_t)seed;
	of.sched.percentage = (int)percentage;
	if (n > PLAN_MAX_FILES) {
		gs_error_set(&err, "more than %d manifest files", PLAN_MAX_FILES);
		rc = usage_error(&plan_usage, &err);
		goto out;
	}
	for (int i = 0; i < n; i++)
		fleet_sources_add(&src, argv[i]);
	if (!src.n) {
		gs_error_set(&err, "plan needs the objects to plan: -f FILE|DIR|-");
		rc = usage_error(&plan_usage, &err);
		goto out;
	}
	/* A what-if plans the batch twice: it is kept; else it is read a pod at a time. */
	if ((what_if || changes ? offline_fleet_load(&of, &src, &cmref, "plan", &err)
				: offline_fleet_stream(&of, &src, &cmref, "plan", &err)) < 0)
		goto fail;
	if (!of.n_batch) {
		gs_error_set(&err, "no pod to place among the files (a Pod without status, "
				   "or a workload)");
		goto fail;
	}
	if (runs) {
		rc = plan_runs(&of, runs, format, &err);
		if (rc < 0)
			goto fail;
		goto out;
	}
	struct plan *pl = NULL;
	if (offline_plan_begin(&of, &pl, &err) < 0)
		goto fail;
	if (offline_each_pod(&of, false, add_pod, pl, &err) < 0) {
		plan_free(pl);
		goto fail;
	}
	res = plan_finish(pl);
	refused = refused_nodes(&of.adv, "");
	if (what_if || changes) {
		if ((what_if && dpconfig_set_load_file(what_if, &cs2, &cm2, &set2, &err) < 0) ||
		    apply_changes(of.f.nodes, changes, &nodes2, &err) < 0 ||
		    explain_fleet_advertise(nodes2, json_object_get(of.adv.pods, "items"),
					    what_if ? cm2 : of.configmap, &fleet2, &err) < 0)
			goto fail;
		struct kubegates gates;
		struct plan_input in2;
		offline_plan_input(&of, &gates, &in2);
		in2.nodes = fleet2.nodes;
		in2.existing = fleet2.pods;
		in2.pods = of.batch;
		in2.configs = what_if ? set2 : of.set;
		if (plan_run(&in2, &res2, &err) < 0)
			goto fail;
		refused2 = refused_nodes(&fleet2, "what-if: ");
		json_t *d = plan_diff_json(res, res2, of.adv.nodes, fleet2.nodes);
		if (format == OUTPUT_YAML) {
			json_t *doc = output_stamp(d, "PlanWhatIf");
			json_object_set_new(doc, "before", plan_doc(res, refused));
			json_object_set_new(doc, "after", plan_doc(res2, refused2));
			int r = output_print(doc, format, 0, &err);
			json_decref(doc);
			if (r < 0) {
				json_decref(d);
				goto fail;
			}
		} else if (format == OUTPUT_JSON) {
			/* {"changes", "unadvertised", "quotas", "before", "after"} */
			static const char *const keys[] = {"changes", "unadvertised", "quotas",
							   "pools"};
			printf("{\n  \"apiVersion\": \"%s\",\n  \"kind\": \"PlanWhatIf\",",
			       OUTPUT_API_VERSION);
			for (size_t k = 0; k < 4; k++) {
				printf("\n  \"%s\": ", keys[k]);
				print_at(json_object_get(d, keys[k]), 1);
				printf(",");
			}
			printf("\n  \"before\": ");
			print_plan_json(res, refused, 1, NULL);
			printf(",\n  \"after\": ");
			print_plan_json(res2, refused2, 1, NULL);
			printf("\n}\n");
		} else {
			char *what = describe(what_if, changes);
			print_diff(d, what);
			free(what);
		}
		rc = json_array_size(json_object_get(d, "changes")) ||
				     json_array_size(json_object_get(d, "unadvertised")) ||
				     json_array_size(json_object_get(d, "quotas")) ||
				     newly_refused(refused, refused2)
			     ? EXIT_FINDING
			     : EXIT_OK;
		json_decref(d);
		goto out;
	}
	if (format == OUTPUT_YAML) {
		json_t *doc = plan_doc(res, refused), *stamped = output_stamp(doc, "Plan");
		int r = output_print(stamped, format, 0, &err);
		json_decref(stamped);
		json_decref(doc);
		if (r < 0)
			goto fail;
	} else if (format == OUTPUT_JSON) {
		print_plan_json(res, refused, 0, "Plan");
		printf("\n");
	} else {
		print_table(res);
	}
	rc = EXIT_OK;
	for (size_t i = 0; i < res->n_pods; i++)
		if (res->pods[i].verdict != PLAN_BOUND)
			rc = EXIT_FINDING;
	goto out;
fail:
	fprintf(stderr, "gpushare plan: %s\n", gs_error_str(&err, buf, sizeof(buf)));
	rc = EXIT_USAGE;
out:
	plan_result_free(res);
	plan_result_free(res2);
	json_decref(refused);
	json_decref(refused2);
	explain_fleet_release(&fleet2);
	dpconfig_set_free(set2);
	ydoc_stream_free(cs2);
	json_decref(changes);
	json_decref(nodes2);
	offline_fleet_release(&of);
	fleet_sources_release(&src);
	configmap_ref_release(&cmref);
	return rc;
}
