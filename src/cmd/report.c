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
#include "model/kobj.h"
#include "cmd/kubecontext.h"
#include "cmd/parseopt.h"
#include "engine/report.h"
#include "fleet/report_live.h"
#include "base/strbuf.h"
#include "yaml/ydoc.h"
#include "base/banned.h"

static const char *const usage_lines[] = {
	"gpushare report --html FILE [--svg FILE] [--configmap NS/NAME] [options]",
	"gpushare report --html FILE [--svg FILE] --nodes NODES.yaml --configmap CM.yaml\n"
	"                [--pods PODS.yaml] [--quota QUOTAS.yaml]",
	NULL,
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
	"would (docs/report.md).\n"
	"\n"
	"--html writes one self-contained page (inline CSS and SVG, nothing is\n"
	"fetched), --svg the picture alone; FILE '-' is standard output.\n"
	"\n"
	"Before the cluster exists, --nodes takes the Nodes (and bound Pods) as\n"
	"manifests, advertised as gpushare would under --configmap CM.yaml; --pods\n"
	"adds Pods, --quota the ResourceQuotas, counted as the quota controller\n"
	"would.\n",
	"Exit status: 0 written, 2 bad usage, input, an API error or a file that\n"
	"could not be written.\n",
};

static int write_file(const char *path, const struct strbuf *sb, struct gs_error *err)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "w") : stdout;

	if (!f) {
		gs_error_set(err, "cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	errno = 0;
	if (fwrite(sb->buf, 1, sb->len, f) != sb->len || (f != stdout && fclose(f) != 0)) {
		gs_error_set(err, "cannot write '%s': %s", path,
			     errno ? strerror(errno) : "write error");
		return -1;
	}
	return 0;
}

/* Every Pod of s has requests and limits that parse. */
static int check_pods(const struct ydoc_stream *s, struct gs_error *err)
{
	for (long i = s ? kobj_find(s, 0, "Pod", NULL) : -1; i >= 0;
	     i = kobj_find(s, (size_t)i + 1, "Pod", NULL))
		if (explain_pod_check(s, ydoc_stream_doc(s, (size_t)i), err) < 0)
			return -1;
	return 0;
}

/* The ResourceQuotas of qs, every namespace, with status as the quota controller fills it. */
static int offline_quotas(const struct ydoc_stream *qs, const json_t *pods, json_t **out,
			  struct gs_error *err)
{
	json_t *items = json_array(), *done = json_object();

	for (long i = kobj_find(qs, 0, "ResourceQuota", NULL); i >= 0;
	     i = kobj_find(qs, (size_t)i + 1, "ResourceQuota", NULL)) {
		const char *ns = kobj_text(ydoc_stream_doc(qs, (size_t)i), "metadata.namespace");
		json_t *list = NULL;
		if (!*ns)
			ns = "default";
		if (json_object_get(done, ns))
			continue;
		json_object_set_new(done, ns, json_true());
		if (explain_quota_list_build(qs, ns, pods, &list, err) < 0) {
			json_decref(items);
			json_decref(done);
			return -1;
		}
		json_array_extend(items, json_object_get(list, "items"));
		json_decref(list);
	}
	json_decref(done);
	*out = json_pack("{s:s,s:s,s:o}", "apiVersion", "v1", "kind", "ResourceQuotaList", "items",
			 items);
	return 0;
}

struct sources {
	const char *nodes, *pods, *configmap, *quota;
};

/* Write the page and/or the picture; say what was written and how long it took since t0. */
static int write_model(const struct report_model *m, const char *html, const char *svg,
		       const struct timespec *t0, struct gs_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	struct timespec t1;
	int rc = -1;

	if (html) {
		report_html(m, &sb);
		if (write_file(html, &sb, err) < 0)
			goto out;
	}
	if (svg) {
		strbuf_reset(&sb);
		report_svg(m, &sb);
		if (write_file(svg, &sb, err) < 0)
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

static int offline(const struct sources *src, const char *html, const char *svg,
		   struct gs_error *err)
{
	struct ydoc_stream *ns = NULL, *cs = NULL, *qs = NULL, *bs = NULL;
	struct dpconfig_set *set = NULL;
	const json_t *cm = NULL;
	const struct catalog *cat;
	struct explain_fleet fleet = {0};
	json_t *quotas = NULL;
	struct strbuf where = STRBUF_INIT;
	int rc = -1;

	if (catalog_builtin(&cat, err) < 0 ||
	    ydoc_load_manifests(src->nodes, &ydoc_default_limits, &ns, err) < 0 ||
	    dpconfig_set_load_file(src->configmap, &cs, &cm, &set, err) < 0 ||
	    (src->pods && ydoc_load_manifests(src->pods, &ydoc_default_limits, &bs, err) < 0) ||
	    (src->quota && ydoc_load_manifests(src->quota, &ydoc_default_limits, &qs, err) < 0) ||
	    check_pods(ns, err) < 0 || check_pods(bs, err) < 0 ||
	    explain_fleet_build(ns, bs, cm, &fleet, err) < 0 ||
	    (qs && offline_quotas(qs, fleet.pods, &quotas, err) < 0))
		goto out;
	strbuf_addf(&where, "from files: nodes %s, ConfigMap %s", src->nodes, src->configmap);
	if (src->pods)
		strbuf_addf(&where, ", pods %s", src->pods);
	if (src->quota)
		strbuf_addf(&where, ", quotas %s", src->quota);
	struct report_input in = {.nodes = fleet.nodes,
				  .pods = fleet.pods,
				  .quotas = quotas,
				  .configs = set,
				  .cat = cat,
				  .source = where.buf};
	rc = render(&in, html, svg, err);
out:
	strbuf_release(&where);
	json_decref(quotas);
	explain_fleet_release(&fleet);
	dpconfig_set_free(set);
	ydoc_stream_free(ns);
	ydoc_stream_free(cs);
	ydoc_stream_free(qs);
	ydoc_stream_free(bs);
	return rc;
}

static int live(struct kube_context *kx, const char *cm_arg, const char *html, const char *svg,
		struct gs_error *err)
{
	const char *slash = cm_arg ? strchr(cm_arg, '/') : NULL;
	char *cm_ns = NULL;
	const char *cm_name = GS_DEFAULT_CONFIGMAP;
	struct report_model *m = NULL;
	struct timespec t0;
	int rc = -1;

	if (cm_arg) {
		if (!slash || slash == cm_arg || !slash[1] || strchr(slash + 1, '/')) {
			gs_error_set(err, "--configmap takes NAMESPACE/NAME, not '%s'", cm_arg);
			return -2;
		}
		cm_ns = gs_xstrndup(cm_arg, (size_t)(slash - cm_arg));
		cm_name = slash + 1;
	} else {
		cm_ns = gs_xstrdup(GS_DEFAULT_NAMESPACE);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (kube_context_open(kx, "report", err) == 0 &&
	    report_live(kx->client, cm_ns, cm_name, &m, err) == 0)
		rc = write_model(m, html, svg, &t0, err);
	report_model_free(m);
	free(cm_ns);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	struct kube_context kx = {0};
	struct gs_error err;
	char buf[2048];
	const char *html = NULL, *svg = NULL, *cm_arg = NULL;
	struct sources src = {0};
	int n, r;
	struct option opts[] = {
		OPT_STRING(0, "html", &html, "FILE", "write the page here ('-': standard output)"),
		OPT_STRING(0, "svg", &svg, "FILE", "write the picture alone here, as SVG"),
		OPT_STRING(0, "configmap", &cm_arg, "NS/NAME",
			   "device-plugin ConfigMap [" GS_DEFAULT_CONFIGMAP_REF
			   "];\nwith --nodes, its manifest (a FILE)"),
		OPT_GROUP("Before the cluster (manifests, YAML):"),
		OPT_STRING(0, "nodes", &src.nodes, "FILE",
			   "the Nodes (with gpushare.io/gpu-* annotations) and\nthe Pods bound to "
			   "them"),
		OPT_STRING(0, "pods", &src.pods, "FILE", "more Pods (bound: spec.nodeName)"),
		OPT_STRING(0, "quota", &src.quota, "FILE", "the ResourceQuotas"),
		OPT_KUBE_CONNECTION(&kx.opts),
		OPT_END(),
	};

	n = parse_options(argc, argv, opts, &report_usage);
	if (n < 0)
		return parseopt_exit(n);
	if (n > 0) {
		gs_error_set(&err, "unexpected argument '%s'", argv[0]);
		return usage_error(&report_usage, &err);
	}
	if (!html && !svg) {
		gs_error_set(&err, "say where to write: --html FILE and/or --svg FILE");
		return usage_error(&report_usage, &err);
	}
	if (html && svg && !strcmp(html, "-") && !strcmp(svg, "-")) {
		gs_error_set(&err, "--html and --svg cannot both be standard output");
		return usage_error(&report_usage, &err);
	}
	if (src.nodes || src.pods || src.quota) {
		if (!src.nodes || !cm_arg) {
			gs_error_set(&err, "from manifests: report --nodes NODES.yaml --configmap "
					   "CM.yaml [--pods PODS.yaml] [--quota QUOTAS.yaml]");
			return usage_error(&report_usage, &err);
		}
		src.configmap = cm_arg;
		r = offline(&src, html, svg, &err);
	} else {
		r = live(&kx, cm_arg, html, svg, &err);
		kube_context_release(&kx);
		if (r == -2)
			return usage_error(&report_usage, &err);
	}
	if (r < 0) {
		fprintf(stderr, "gpushare report: %s\n", gs_error_str(&err, buf, sizeof(buf)));
		return EXIT_USAGE;
	}
	return EXIT_OK;
}
