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
#include "cmd/parseopt.h"
#include "engine/plan.h"
#include "base/strbuf.h"
#include "yaml/ydoc.h"
#include "base/banned.h"

#define PLAN_MAX_FILES 1024

static const char *const usage_lines[] = {
	"gpushare plan MANIFESTS... --nodes NODES.yaml --configmap CM.yaml [--quota QUOTAS.yaml]\n"
	"              [-o table|json]",
	"gpushare plan MANIFESTS... --nodes NODES.yaml --configmap CM.yaml [--quota QUOTAS.yaml]\n"
	"              [--what-if CM2.yaml] [--relabel NODE=KEY]... [--mig-config NODE=LAYOUT]...\n"
	"              [-o table|json]",
	NULL,
};

static const struct parseopt_usage plan_usage = {
	"plan",
	usage_lines,
	"Place the Pods of MANIFESTS, in order, as kube-scheduler v1.34's default\n"
	"profile would on the Nodes of NODES.yaml as gpushare would advertise them\n"
	"under the device-plugin ConfigMap: quota admission at create (the\n"
	"apiserver's refusal text), the default filters (resources incl. cpu, memory,\n"
	"pods and extended ones, node selector and affinity, taints, unschedulable),\n"
	"the default scores where they decide (docs/plan.md; ties go to the first node\n"
	"in NODES.yaml), then the kubelet's device admission (more than one slice of a\n"
	"shared resource with failRequestsGreaterThanOne fails the pod). Pods of\n"
	"NODES.yaml with spec.nodeName are already there. Prints each pod's verdict\n"
	"(bound, pending with the scheduler's message, refused, failed) and each\n"
	"quota's use after the batch.\n"
	"\n"
	"What-if: with --what-if (another ConfigMap), --relabel (a node's\n"
	"nvidia.com/device-plugin.config) or --mig-config (a node's nvidia.com/mig.config\n"
	"layout; the node's MIG strategy must be single or mixed for it to count), the\n"
	"batch is planned before and after the change and the difference printed: pods\n"
	"whose verdict or node change, pods asking for an nvidia.com/ name no node\n"
	"advertises after it (and what those nodes advertise instead), quota use.\n",
	"Exit status: 0 every pod bound (what-if: nothing changes), 1 some pod pending,\n"
	"refused or failed (what-if: something changes), 2 bad usage or input.\n",
};

/* The Pods of MANIFESTS, in order (the fleet checked them). */
static int manifests_load(struct fleet *m, json_t **pods, char **paths, int n, struct gs_error *err)
{
	const json_t *doc;
	size_t i;

	for (int p = 0; p < n; p++)
		if (fleet_read_path(m, paths[p], false, err) < 0)
			return -1;
	*pods = json_array();
	json_array_foreach (m->objects, i, doc)
		if (kobj_is(doc, "Pod"))
			json_array_append(*pods, (json_t *)doc);
	if (!json_array_size(*pods)) {
		gs_error_set(err, "no Pod in %s", n == 1 ? paths[0] : "the manifests");
		return -1;
	}
	return 0;
}

/* How wide a name is once cmd_printf has escaped it (escape_line). */
static size_t shown_len(const char *s)
{
	char *e = escape_line_dup(s);
	size_t n = strlen(e);

	free(e);
	return n;
}

static void print_table(const struct plan_result *r)
{
	size_t wpod = 3, wnode = 4;

	for (size_t i = 0; i < r->n_pods; i++) {
		size_t l = shown_len(r->pods[i].namespace) + 1 + shown_len(r->pods[i].name);
		if (l > wpod)
			wpod = l;
		if (r->pods[i].node && shown_len(r->pods[i].node) > wnode)
			wnode = shown_len(r->pods[i].node);
	}
	cmd_printf("%-*s  %-7s  %-*s  %s\n", (int)wpod, "POD", "VERDICT", (int)wnode, "NODE",
		   "WHY");
	for (size_t i = 0; i < r->n_pods; i++) {
		const struct plan_pod *o = &r->pods[i];
		char *pod = gs_xasprintf("%s/%s", o->namespace, o->name);
		const char *why = o->reason ? o->reason : "";
		cmd_printf("%-*s  %-7s  %-*s  %s%s\n", (int)wpod, pod,
			   plan_verdict_name(o->verdict), (int)wnode, o->node ? o->node : "-",
			   o->verdict == PLAN_FAILED ? "UnexpectedAdmissionError: " : "", why);
		for (size_t h = 0; h < o->n_hints; h++)
			cmd_printf("%-*s  hint: %s\n", (int)(wpod + wnode + 11), "", o->hints[h]);
		free(pod);
	}
	if (r->n_quotas)
		cmd_printf("\nQUOTA USE AFTER THE BATCH\n");
	for (size_t i = 0; i < r->n_quotas; i++) {
		const struct plan_quota_use *u = &r->quotas[i];
		cmd_printf("%s/%s  %s: used %s of %s\n", u->namespace, u->quota, u->resource,
			   u->used, u->hard);
	}
}

static int parse_output(const struct option *opt, const char *arg, struct gs_error *err)
{
	int *json = opt->value;

	if (!strcmp(arg, "table"))
		*json = 0;
	else if (!strcmp(arg, "json"))
		*json = 1;
	else {
		gs_error_set(err, "-o takes table or json, not '%s'", arg);
		return -1;
	}
	return 0;
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

/* Set each change's label on its Node of the stream. */
static int apply_changes(struct ydoc_stream *s, const json_t *changes, struct gs_error *err)
{
	const json_t *c;
	size_t i;

	json_array_foreach (changes, i, c) {
		const char *name = kobj_text(c, "node");
		long at = kobj_find(s, 0, "Node", name);
		if (at < 0) {
			gs_error_set(err, "%s: no Node '%s'", ydoc_stream_name(s), name);
			return -1;
		}
		json_t *node = ydoc_stream_doc(s, (size_t)at);
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
			cmd_printf("  %s%s\n",
				   !strcmp(kobj_text(a, "verdict"), "failed")
					   ? "UnexpectedAdmissionError: "
					   : "",
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

int cmd_plan(int argc, char **argv)
{
	struct gs_error err;
	char buf[2048];
	const char *nodes_path = NULL, *cm_path = NULL, *quota_path = NULL, *what_if = NULL;
	json_t *changes = NULL;
	struct ydoc_stream *cs2 = NULL;
	struct dpconfig_set *set2 = NULL;
	const json_t *cm2 = NULL;
	struct explain_fleet fleet2 = {0};
	struct plan_result *res2 = NULL;
	int json_out = 0, rc = EXIT_USAGE, n;
	struct ydoc_stream *ns = NULL, *cs = NULL;
	struct dpconfig_set *set = NULL;
	const json_t *cm = NULL;
	struct fleet m, q;
	json_t *batch = NULL;
	struct explain_fleet fleet = {0};
	struct plan_result *res = NULL;
	struct option opts[] = {
		OPT_STRING(0, "nodes", &nodes_path, "FILE",
			   "the Nodes (gpushare.io/gpu-* annotations) and the Pods\nbound to them"),
		OPT_STRING(0, "configmap", &cm_path, "FILE", "the device-plugin ConfigMap"),
		OPT_STRING(0, "quota", &quota_path, "FILE", "the ResourceQuotas"),
		OPT_CALLBACK('o', "output", &json_out, "FORMAT", "table or json [table]",
			     parse_output),
		OPT_GROUP("What-if (plan before and after, print the difference):"),
		OPT_STRING(0, "what-if", &what_if, "FILE", "another device-plugin ConfigMap"),
		OPT_CALLBACK(0, "relabel", &changes, "NODE=KEY",
			     "give NODE nvidia.com/device-plugin.config=KEY;\nrepeatable",
			     parse_relabel),
		OPT_CALLBACK(0, "mig-config", &changes, "NODE=LAYOUT",
			     "give NODE nvidia.com/mig.config=LAYOUT (a mig-parted\nlayout such as "
			     "all-balanced); repeatable",
			     parse_mig_config),
		OPT_END(),
	};

	n = parse_options(argc, argv, opts, &plan_usage);
	if (n < 0) {
		json_decref(changes);
		return parseopt_exit(n);
	}
	fleet_init(&m);
	fleet_init(&q);
	if (n == 0 || !nodes_path || !cm_path) {
		gs_error_set(&err, "plan needs MANIFESTS..., --nodes and --configmap");
		json_decref(changes);
		fleet_release(&m);
		fleet_release(&q);
		return usage_error(&plan_usage, &err);
	}
	if (n > PLAN_MAX_FILES) {
		gs_error_set(&err, "more than %d manifest files", PLAN_MAX_FILES);
		json_decref(changes);
		fleet_release(&m);
		fleet_release(&q);
		return usage_error(&plan_usage, &err);
	}
	if (ydoc_load_manifests(nodes_path, &ydoc_default_limits, &ns, &err) < 0 ||
	    dpconfig_set_load_file(cm_path, &cs, &cm, &set, &err) < 0 ||
	    (quota_path && fleet_read_path(&q, quota_path, false, &err) < 0) ||
	    manifests_load(&m, &batch, argv, n, &err) < 0)
		goto fail;
	for (long i = kobj_find(ns, 0, "Pod", NULL); i >= 0;
	     i = kobj_find(ns, (size_t)i + 1, "Pod", NULL))
		if (explain_pod_check(ns, ydoc_stream_doc(ns, (size_t)i), &err) < 0)
			goto fail;
	if (explain_fleet_build(ns, NULL, cm, &fleet, &err) < 0)
		goto fail;
	struct plan_input in = {.nodes = fleet.nodes,
				.existing = fleet.pods,
				.pods = batch,
				.quotas = q.quotas,
				.configs = set};
	if (plan_run(&in, &res, &err) < 0)
		goto fail;
	if (what_if || changes) {
		if ((what_if && dpconfig_set_load_file(what_if, &cs2, &cm2, &set2, &err) < 0) ||
		    apply_changes(ns, changes, &err) < 0 ||
		    explain_fleet_build(ns, NULL, what_if ? cm2 : cm, &fleet2, &err) < 0)
			goto fail;
		struct plan_input in2 = {.nodes = fleet2.nodes,
					 .existing = fleet2.pods,
					 .pods = batch,
					 .quotas = q.quotas,
					 .configs = what_if ? set2 : set};
		if (plan_run(&in2, &res2, &err) < 0)
			goto fail;
		json_t *d = plan_diff_json(res, res2, fleet.nodes, fleet2.nodes);
		if (json_out) {
			json_object_set_new(d, "before", plan_result_json(res));
			json_object_set_new(d, "after", plan_result_json(res2));
			char *text = json_dumps(d, JSON_INDENT(2));
			printf("%s\n", text);
			free(text);
		} else {
			char *what = describe(what_if, changes);
			print_diff(d, what);
			free(what);
		}
		rc = json_array_size(json_object_get(d, "changes")) ||
				     json_array_size(json_object_get(d, "unadvertised")) ||
				     json_array_size(json_object_get(d, "quotas"))
			     ? EXIT_FINDING
			     : EXIT_OK;
		json_decref(d);
		goto out;
	}
	if (json_out) {
		json_t *j = plan_result_json(res);
		char *text = json_dumps(j, JSON_INDENT(2));
		printf("%s\n", text);
		free(text);
		json_decref(j);
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
	explain_fleet_release(&fleet2);
	dpconfig_set_free(set2);
	ydoc_stream_free(cs2);
	json_decref(changes);
	explain_fleet_release(&fleet);
	json_decref(batch);
	fleet_release(&m);
	fleet_release(&q);
	dpconfig_set_free(set);
	ydoc_stream_free(ns);
	ydoc_stream_free(cs);
	return rc;
}
