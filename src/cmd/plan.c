#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dpconfig_set.h"
#include "explain.h"
#include "explain_offline.h"
#include "kobj.h"
#include "parseopt.h"
#include "plan.h"
#include "strbuf.h"
#include "ydoc.h"
#include "banned.h"

#define PLAN_MAX_FILES 1024

static const char *const usage_lines[] = {
	"gpushare plan MANIFESTS... --nodes NODES.yaml --configmap CM.yaml [--quota QUOTAS.yaml]\n"
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
	"quota's use after the batch.\n",
	"Exit status: 0 every pod bound, 1 some pod pending, refused or failed, 2 bad\n"
	"usage or input.\n",
};

struct manifests {
	struct ydoc_stream **streams;
	size_t n;
	json_t *pods; /* borrowed documents, in order */
};

static void manifests_release(struct manifests *m)
{
	for (size_t i = 0; i < m->n; i++)
		ydoc_stream_free(m->streams[i]);
	free(m->streams);
	json_decref(m->pods);
}

static int manifests_load(struct manifests *m, char **paths, int n, struct gs_error *err)
{
	m->pods = json_array();
	m->streams = gs_xcalloc((size_t)n + 1, sizeof(*m->streams));
	for (int i = 0; i < n; i++) {
		struct ydoc_stream *s;
		if (ydoc_load_file(paths[i], &ydoc_default_limits, &s, err) < 0)
			return -1;
		m->streams[m->n++] = s;
		for (size_t d = 0; d < ydoc_stream_count(s); d++) {
			json_t *doc = ydoc_stream_doc(s, d);
			if (!kobj_is(doc, "Pod"))
				continue;
			if (!*kobj_text(doc, "metadata.name")) {
				ydoc_error_at(s, doc, err, "a Pod without metadata.name");
				return -1;
			}
			if (explain_pod_check(s, doc, err) < 0)
				return -1;
			json_array_append(m->pods, doc);
		}
	}
	if (!json_array_size(m->pods)) {
		gs_error_set(err, "no Pod in %s", n == 1 ? paths[0] : "the manifests");
		return -1;
	}
	return 0;
}

static void print_table(const struct plan_result *r)
{
	size_t wpod = 3, wnode = 4;

	for (size_t i = 0; i < r->n_pods; i++) {
		size_t l = strlen(r->pods[i].namespace) + 1 + strlen(r->pods[i].name);
		if (l > wpod)
			wpod = l;
		if (r->pods[i].node && strlen(r->pods[i].node) > wnode)
			wnode = strlen(r->pods[i].node);
	}
	printf("%-*s  %-7s  %-*s  %s\n", (int)wpod, "POD", "VERDICT", (int)wnode, "NODE", "WHY");
	for (size_t i = 0; i < r->n_pods; i++) {
		const struct plan_pod *o = &r->pods[i];
		char *pod = gs_xasprintf("%s/%s", o->namespace, o->name);
		const char *why = o->reason ? o->reason : "";
		printf("%-*s  %-7s  %-*s  %s%s\n", (int)wpod, pod, plan_verdict_name(o->verdict),
		       (int)wnode, o->node ? o->node : "-",
		       o->verdict == PLAN_FAILED ? "UnexpectedAdmissionError: " : "", why);
		free(pod);
	}
	if (r->n_quotas)
		printf("\nQUOTA USE AFTER THE BATCH\n");
	for (size_t i = 0; i < r->n_quotas; i++) {
		const struct plan_quota_use *u = &r->quotas[i];
		printf("%s/%s  %s: used %s of %s\n", u->namespace, u->quota, u->resource, u->used,
		       u->hard);
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

int cmd_plan(int argc, char **argv)
{
	struct gs_error err;
	char buf[2048];
	const char *nodes_path = NULL, *cm_path = NULL, *quota_path = NULL;
	int json_out = 0, rc = EXIT_USAGE, n;
	struct ydoc_stream *ns = NULL, *cs = NULL, *qs = NULL;
	struct dpconfig_set *set = NULL;
	const json_t *cm = NULL;
	struct manifests m = {0};
	struct explain_fleet fleet = {0};
	struct plan_result *res = NULL;
	struct option opts[] = {
		OPT_STRING(0, "nodes", &nodes_path, "FILE",
			   "the Nodes (gpushare.io/gpu-* annotations) and the Pods\nbound to them"),
		OPT_STRING(0, "configmap", &cm_path, "FILE", "the device-plugin ConfigMap"),
		OPT_STRING(0, "quota", &quota_path, "FILE", "the ResourceQuotas"),
		OPT_CALLBACK('o', "output", &json_out, "FORMAT", "table or json [table]",
			     parse_output),
		OPT_END(),
	};

	n = parse_options(argc, argv, opts, &plan_usage);
	if (n < 0)
		return parseopt_exit(n);
	if (n == 0 || !nodes_path || !cm_path) {
		gs_error_set(&err, "plan needs MANIFESTS..., --nodes and --configmap");
		return usage_error(&plan_usage, &err);
	}
	if (n > PLAN_MAX_FILES) {
		gs_error_set(&err, "more than %d manifest files", PLAN_MAX_FILES);
		return usage_error(&plan_usage, &err);
	}
	if (ydoc_load_file(nodes_path, &ydoc_default_limits, &ns, &err) < 0 ||
	    dpconfig_set_load_file(cm_path, &cs, &cm, &set, &err) < 0 ||
	    (quota_path && ydoc_load_file(quota_path, &ydoc_default_limits, &qs, &err) < 0) ||
	    manifests_load(&m, argv, n, &err) < 0)
		goto fail;
	for (long i = kobj_find(ns, 0, "Pod", NULL); i >= 0;
	     i = kobj_find(ns, (size_t)i + 1, "Pod", NULL))
		if (explain_pod_check(ns, ydoc_stream_doc(ns, (size_t)i), &err) < 0)
			goto fail;
	if (explain_fleet_build(ns, NULL, cm, &fleet, &err) < 0)
		goto fail;
	struct plan_input in = {fleet.nodes, fleet.pods, m.pods, qs, set};
	if (plan_run(&in, &res, &err) < 0)
		goto fail;
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
	explain_fleet_release(&fleet);
	manifests_release(&m);
	dpconfig_set_free(set);
	ydoc_stream_free(ns);
	ydoc_stream_free(cs);
	ydoc_stream_free(qs);
	return rc;
}
