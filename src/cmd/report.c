#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/catalog.h"
#include "cmd/cmd.h"
#include "model/defaults.h"
#include "model/dpconfig_set.h"
#include "engine/explain_offline.h"
#include "fleet/fleet.h"
#include "model/kobj.h"
#include "cmd/kubecontext.h"
#include "cmd/offline.h"
#include "cmd/output.h"
#include "cmd/parseopt.h"
#include "engine/plan.h"
#include "engine/report.h"
#include "fleet/report_live.h"
#include "base/strbuf.h"
#include "base/banned.h"

static const char *const usage_lines[] = {
	"gpushare report --html FILE [--svg FILE] [--configmap NS/NAME] [options]",
	"gpushare report --html FILE [--svg FILE] -f FILE|DIR|- [-f ...] [-R] [--configmap "
	"NS/NAME]",
	NULL,
};

static const struct parseopt_example report_examples[] = {
	{"the lab's fleet as a page", "gpushare report -f k8s/ --html fleet.html"},
	{"the picture alone, as SVG, of the cluster in KUBECONFIG",
	 "gpushare report --html fleet.html --svg fleet.svg"},
	{NULL, NULL},
};
static const struct parseopt_usage report_usage = {
	"report",
	usage_lines,
	"The fleet as a picture: every GPU node, its physical cards, on each card the\n"
	"devices the device plugin hands out (time-slice and MPS replicas, MIG\n"
	"instances, whole cards) coloured by the namespace of the pod that holds\n"
	"them, a badge for what isolates a card's tenants (none, MPS limits,\n"
	"hardware) and one where pods of different namespaces share a card's\n"
	"memory, and a bar per namespace quota (used / hard).\n"
	"\n"
	"Who holds which device comes from the pod's gpushare.io/devices annotation\n"
	"when it has one, else from its requests, handed out as the device plugin\n"
	"would (docs/guide/report.md).\n"
	"\n"
	"--html writes one self-contained page (inline CSS and SVG, nothing is\n"
	"fetched), --svg the picture alone; FILE '-' is standard output.\n"
	"\n"
	"With -f, the objects of the files replace the cluster (docs/guide/cli.md): the\n"
	"Nodes advertised as gpushare would under the ConfigMap found among them, the\n"
	"pods already there, and the pods to create placed first as `gpushare plan`\n"
	"places them; quotas counted as the quota controller would.\n",
	"Exit status: 0 written, 2 bad usage, input, an API error or a file that\n"
	"could not be written.\n",
	report_examples,
	NULL,
};

/* The ResourceQuotas of every namespace, with status as the quota controller fills it. */
static int offline_quotas(const json_t *quotas, const json_t *pods, json_t **out,
			  struct gs_error *err)
{
	json_t *items, *lists, *list;
	const char *ns;

	if (explain_quota_lists_from(quotas, pods, &lists, err) < 0)
		return -1;
	items = json_array();
	json_object_foreach (lists, ns, list)
		json_array_extend(items, json_object_get(list, "items"));
	json_decref(lists);
	*out = json_pack("{s:s,s:s,s:o}", "apiVersion", "v1", "kind", "ResourceQuotaList", "items",
			 items);
	return 0;
}

/* Write the page and/or the picture; say what was written and how long it took since t0. */
static int write_model(const struct report_model *m, const char *html, const char *svg,
		       const struct timespec *t0, struct gs_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	struct timespec t1;
	int rc = -1;

	if (html) {
		report_html(m, &sb);
		if (output_write_file(html, &sb, err) < 0)
			goto out;
	}
	if (svg) {
		strbuf_reset(&sb);
		report_svg(m, &sb);
		if (output_write_file(svg, &sb, err) < 0)
			goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	cmd_eprintf("gpushare report: wrote %s%s%s: %zu node%s, %zu GPU%s, %zu pod%s (%.1f ms)\n",
		    html ? html : "", html && svg ? " and " : "", svg ? svg : "", m->n_nodes,
		    m->n_nodes == 1 ? "" : "s", m->n_cards, m->n_cards == 1 ? "" : "s", m->n_pods,
		    m->n_pods == 1 ? "" : "s",
		    (double)(t1.tv_sec - t0->tv_sec) * 1e3 +
			    (double)(t1.tv_nsec - t0->tv_nsec) / 1e6);
	rc = 0;
out:
	strbuf_release(&sb);
	return rc;
}

static int render(const struct report_input *in, const char *html, const char *svg,
		  struct gs_error *err)
{
	struct report_model *m = NULL;
	struct timespec t0;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (report_model_build(in, &m, err) < 0)
		return -1;
	rc = write_model(m, html, svg, &t0, err);
	report_model_free(m);
	return rc;
}

static int offline(const struct fleet_sources *src, const struct configmap_ref *cm,
		   const struct kube_target *kube, const char *html, const char *svg,
		   struct gs_error *err)
{
	const struct catalog *cat;
	struct offline_fleet of = {.kube = *kube};
	struct plan_result *r = NULL;
	json_t *pods = NULL, *quotas = NULL;
	struct strbuf where = STRBUF_INIT;
	int rc = -1;

	if (catalog_builtin(&cat, err) < 0 || offline_fleet_load(&of, src, cm, "report", err) < 0)
		goto out;
	if (json_array_size(of.batch)) {
		struct kubegates gates;
		struct plan_input in;
		offline_plan_input(&of, &gates, &in);
		in.existing = of.adv.pods;
		in.pods = of.batch;
		if (plan_run(&in, &r, err) < 0)
			goto out;
	}
	pods = offline_pods_after(&of, r, json_array_size(of.batch));
	if (json_array_size(of.f.quotas) && offline_quotas(of.f.quotas, pods, &quotas, err) < 0)
		goto out;
	strbuf_addstr(&where, "from files: ");
	for (size_t i = 0; i < src->n; i++)
		strbuf_addf(&where, "%s%s", i ? ", " : "",
			    strcmp(src->paths[i], "-") ? src->paths[i] : "standard input");
	if (of.configmap)
		strbuf_addf(&where, "; ConfigMap %s/%s", cm->ns, cm->name);
	struct report_input in = {.nodes = of.adv.nodes,
				  .pods = pods,
				  .quotas = quotas,
				  .configs = of.set,
				  .cat = cat,
				  .source = where.buf,
				  .slices = of.f.slices,
				  .claims = of.f.claims,
				  .sync = &of.adv.plan};
	rc = render(&in, html, svg, err);
out:
	strbuf_release(&where);
	json_decref(quotas);
	json_decref(pods);
	plan_result_free(r);
	offline_fleet_release(&of);
	return rc;
}

static int live(struct kube_context *kx, const struct configmap_ref *cm, const char *html,
		const char *svg, struct gs_error *err)
{
	struct report_model *m = NULL;
	struct timespec t0;
	int rc = -1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (kube_context_open(kx, "report", err) == 0 &&
	    report_live(kx->client, cm->ns, cm->name, &m, err) == 0)
		rc = write_model(m, html, svg, &t0, err);
	report_model_free(m);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	struct kube_context kx = {0};
	struct gs_error err;
	char buf[2048];
	const char *html = NULL, *svg = NULL;
	struct fleet_sources src = {0};
	struct kube_target kube = {0};
	struct configmap_ref cm;
	int n, r, rc = EXIT_USAGE;
	struct option opts[] = {
		OPT_STRING(0, "html", &html, "FILE", "write the page here ('-': standard output)"),
		OPT_STRING(0, "svg", &svg, "FILE", "write the picture alone here, as SVG"),
		OPT_CONFIGMAP_REF(&cm),
		OPT_FLEET_SOURCES(&src),
		OPT_KUBE_TARGET(&kube),
		OPT_GROUP("Older forms, each the same as -f FILE:"),
		OPT_CALLBACK(0, "nodes", &src, "FILE", "", parse_fleet_source),
		OPT_CALLBACK(0, "pods", &src, "FILE", "", parse_fleet_source),
		OPT_CALLBACK(0, "quota", &src, "FILE", "", parse_fleet_source),
		OPT_KUBE_CONNECTION(&kx.opts),
		OPT_END(),
	};

	configmap_ref_init(&cm);
	n = parse_options(argc, argv, opts, &report_usage);
	if (n < 0) {
		rc = parseopt_exit(n);
		goto out;
	}
	if (n > 0 || kube_target_check(&kube, &err) < 0) {
		if (n > 0)
			gs_error_set(&err, "unexpected argument '%s'", argv[0]);
		rc = usage_error(&report_usage, &err);
		goto out;
	}
	if (!html && !svg) {
		gs_error_set(&err, "say where to write: --html FILE and/or --svg FILE");
		rc = usage_error(&report_usage, &err);
		goto out;
	}
	if (html && svg && !strcmp(html, "-") && !strcmp(svg, "-")) {
		gs_error_set(&err, "--html and --svg cannot both be standard output");
		rc = usage_error(&report_usage, &err);
		goto out;
	}
	if (src.n)
		r = offline(&src, &cm, &kube, html, svg, &err);
	else
		r = live(&kx, &cm, html, svg, &err);
	if (r < 0) {
		fprintf(stderr, "gpushare report: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		goto out;
	}
	rc = EXIT_OK;
out:
	kube_context_release(&kx);
	fleet_sources_release(&src);
	configmap_ref_release(&cm);
	return rc;
}
