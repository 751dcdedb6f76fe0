#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "cmd.h"
#include "dpconfig.h"
#include "explain.h"
#include "defaults.h"
#include "kubecontext.h"
#include "parseopt.h"
#include "readfile.h"
#include "banned.h"

#define EXPLAIN_MAX_FILE (256u << 20)

static const char *const usage_lines[] = {
	"gpushare explain pod NS/NAME [options]",
	"gpushare explain quota NS [--request RES=N]... [--name POD] [options]",
	NULL,
};

static const struct parseopt_usage explain_usage = {
	"explain",
	usage_lines,
	"pod: where the pod landed and why, or why it is not scheduled. For every node:\n"
	"what it has left of each resource the pod asks for (allocatable minus what the\n"
	"pods bound to it request), whether the nodeSelector and required node affinity\n"
	"match, untolerated taints; then the scheduler's own verdict (the PodScheduled\n"
	"condition) verbatim, and GPU-sharing traps: nvidia.com/gpu on nodes that\n"
	"advertise only .shared or MIG profiles, gpu.product selectors missing -SHARED or\n"
	"-MIG-<profile>, more than one shared GPU with failRequestsGreaterThanOne, MIG\n"
	"profiles no node's GPU has.\n"
	"\n"
	"quota: every ResourceQuota of the namespace, hard/used/headroom, whether it is\n"
	"enforced yet (status.hard set); with --request, whether one more pod asking for\n"
	"that would be admitted, in the apiserver's words.\n"
	"\n"
	"Offline, recorded objects replace the cluster: pod takes --pod-file and\n"
	"--nodes-file (with --pods-file and --configmap-file optional), quota takes\n"
	"--quota-file.\n",
	"Exit status: 0 scheduled / admitted, 1 not scheduled, failed or refused, 2 bad\n"
	"usage or an API error.\n",
};

struct configmap_ref {
	char *ns;
	const char *name;
};

static int split_ns(const char *what, const char *val, char **ns, const char **name,
		    struct gs_error *err)
{
	const char *slash = strchr(val, '/');

	if (!slash || slash == val || !slash[1] || strchr(slash + 1, '/')) {
		gs_error_set(err, "%s takes NAMESPACE/NAME, not '%s'", what, val);
		return -1;
	}
	*ns = gs_xstrndup(val, (size_t)(slash - val));
	*name = slash + 1;
	return 0;
}

static int parse_configmap(const struct option *opt, const char *arg, struct gs_error *err)
{
	struct configmap_ref *ref = opt->value;
	char *ns;

	if (split_ns("--configmap", arg, &ns, &ref->name, err) < 0)
		return -1;
	free(ref->ns);
	ref->ns = ns;
	return 0;
}

static int parse_request(const struct option *opt, const char *arg, struct gs_error *err)
{
	return explain_quota_add_request(opt->value, arg, err);
}

static int load_json(const char *path, json_t **out, struct gs_error *err)
{
	char *buf;
	size_t len;
	json_error_t je;

	if (gs_read_file(path, EXPLAIN_MAX_FILE, &buf, &len, err) < 0)
		return -1;
	*out = json_loadb(buf, len, 0, &je);
	free(buf);
	if (!*out) {
		gs_error_at(err, path, je.line, je.column, "%s", je.text);
		return -1;
	}
	return 0;
}

static void print_pod(const struct explain_pod *e)
{
	const char *k;
	json_t *v;
	int first = 1;

	if (e->node)
		printf("pod %s/%s: %s on %s (phase %s)\n", e->namespace, e->name,
		       strcmp(e->phase, "Failed") ? "scheduled" : "failed", e->node,
		       *e->phase ? e->phase : "unknown");
	else
		printf("pod %s/%s: not scheduled (phase %s)\n", e->namespace, e->name,
		       *e->phase ? e->phase : "unknown");
	if (e->status_reason)
		printf("status: %s: %s\n", e->status_reason, e->status_message);
	printf("requests:");
	json_object_foreach (e->requests, k, v) {
		printf(" %s=%s", k, json_string_value(v));
		first = 0;
	}
	printf("%s\n", first ? " none" : "");
	for (size_t i = 0; i < e->n_nodes; i++) {
		const struct explain_node *n = &e->nodes[i];
		printf("node %s: %s%s\n", n->name, n->fits ? "fits" : "does not fit",
		       n->bound ? " (the pod is bound here)" : "");
		for (size_t r = 0; r < n->reasons.n; r++)
			printf("  - %s\n", n->reasons.items[r]);
		for (size_t r = 0; r < n->n_res; r++) {
			const struct explain_resource *x = &n->res[r];
			printf("  %s: requested %s, allocatable %s, used by bound pods %s, free "
			       "%s%s\n",
			       x->name, x->requested, x->allocatable, x->used, x->free,
			       x->fits ? "" : " (insufficient)");
		}
		if (*n->advertised)
			printf("  advertises %s\n", n->advertised);
		for (size_t h = 0; h < n->hints.n; h++)
			printf("  hint: %s\n", n->hints.items[h]);
	}
	for (size_t h = 0; h < e->hints.n; h++)
		printf("hint: %s\n", e->hints.items[h]);
	if (e->scheduled < 0)
		printf("scheduler: no PodScheduled condition yet\n");
	else
		printf("scheduler: PodScheduled=%s%s%s%s%s\n", e->scheduled ? "True" : "False",
		       e->sched_reason ? " " : "", e->sched_reason ? e->sched_reason : "",
		       e->sched_message ? ": " : "", e->sched_message ? e->sched_message : "");
}

static void print_quota(const struct explain_quota_report *r, const char *pod_name)
{
	if (!r->n)
		printf("namespace %s: no ResourceQuota: nothing is limited\n", r->namespace);
	for (size_t i = 0; i < r->n; i++) {
		const struct explain_quota *q = &r->quotas[i];
		printf("quota %s/%s:%s%s\n", r->namespace, q->name,
		       q->enforced ? ""
				   : " status.hard not set yet: it limits nothing until "
				     "kube-controller-manager fills it",
		       q->scoped ? " (scoped: counts only the pods its scopes select)" : "");
		for (size_t j = 0; j < q->n_items; j++) {
			const struct explain_quota_item *it = &q->items[j];
			if (it->used)
				printf("  %s: hard %s, used %s, headroom %s\n", it->resource,
				       it->hard, it->used, it->headroom);
			else
				printf("  %s: hard %s, used unknown\n", it->resource, it->hard);
		}
		switch (q->verdict) {
		case EXPLAIN_NO_REQUEST:
			break;
		case EXPLAIN_ADMIT:
			printf("  admits the request\n");
			break;
		case EXPLAIN_UNCONSTRAINED:
			printf("  admits the request (not enforced yet)\n");
			break;
		case EXPLAIN_REFUSE:
			printf("  refuses the request: pods \"%s\" is forbidden: %s\n", pod_name,
			       q->message);
			break;
		}
	}
}

static int refused(const struct explain_quota_report *r)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->quotas[i].verdict == EXPLAIN_REFUSE)
			return 1;
	return 0;
}

/* GET, with a 404 giving *out NULL and 0. */
static int get_optional(struct kube_client *kc, const char *path, json_t **out,
			struct gs_error *err)
{
	int r = kube_get(kc, path, out, err);

	if (r == KUBE_E_STATUS && kube_last_status(kc)->code == 404) {
		*out = NULL;
		gs_error_clear(err);
		return 0;
	}
	return r;
}

int cmd_explain(int argc, char **argv)
{
	struct kube_context kx = {0};
	struct kube_client *kc = NULL;
	struct gs_error err;
	char buf[2048];
	const char *what = NULL, *target = NULL, *pod_name = "POD", *container = NULL;
	const char *f_pod = NULL, *f_nodes = NULL, *f_pods = NULL, *f_cm = NULL, *f_quota = NULL;
	struct configmap_ref cmref = {NULL, GS_DEFAULT_CONFIGMAP};
	char *pod_ns = NULL;
	const char *pname = NULL;
	json_t *pod = NULL, *nodes = NULL, *pods = NULL, *cm = NULL, *quotas = NULL, *req = NULL;
	struct dpconfig_set *set = NULL;
	struct explain_pod *ep = NULL;
	struct explain_quota_report *qr = NULL;
	int rc = EXIT_USAGE, n;
	struct option opts[] = {
		OPT_CALLBACK(0, "configmap", &cmref, "NS/NAME",
			     "device-plugin ConfigMap [" GS_DEFAULT_CONFIGMAP_REF "]",
			     parse_configmap),
		OPT_CALLBACK(0, "request", &req, "RES=N",
			     "what the pod asks for (nvidia.com/gpu=1, cpu=500m, ...);\nrepeatable",
			     parse_request),
		OPT_STRING(0, "name", &pod_name, "POD",
			   "the pod name used in the refusal message [POD]"),
		OPT_STRING(0, "container", &container, "NAME",
			   "its one container's name, for \"must specify\" [main]"),
		OPT_GROUP("Offline (recorded objects instead of a cluster):"),
		OPT_STRING(0, "pod-file", &f_pod, "FILE", "the Pod"),
		OPT_STRING(0, "nodes-file", &f_nodes, "FILE", "a NodeList"),
		OPT_STRING(0, "pods-file", &f_pods, "FILE", "a PodList: what is bound where"),
		OPT_STRING(0, "configmap-file", &f_cm, "FILE", "the device-plugin ConfigMap"),
		OPT_STRING(0, "quota-file", &f_quota, "FILE", "a ResourceQuotaList"),
		OPT_KUBE_CONNECTION(&kx.opts),
		OPT_END(),
	};

	cmref.ns = gs_xstrdup(GS_DEFAULT_NAMESPACE);
	n = parse_options(argc, argv, opts, &explain_usage);
	if (n < 0) {
		rc = parseopt_exit(n);
		goto out;
	}
	if (n > 2) {
		gs_error_set(&err, "unexpected argument '%s'", argv[2]);
		goto usage_error;
	}
	what = n > 0 ? argv[0] : NULL;
	target = n > 1 ? argv[1] : NULL;
	if (!what || (strcmp(what, "pod") && strcmp(what, "quota"))) {
		gs_error_set(&err, "say what to explain: 'pod NS/NAME' or 'quota NS'");
		goto usage_error;
	}
	bool is_pod = !strcmp(what, "pod");
	bool offline = is_pod ? f_pod != NULL : f_quota != NULL;
	if (is_pod && offline != (f_nodes != NULL)) {
		gs_error_set(&err, "--pod-file and --nodes-file go together");
		goto usage_error;
	}
	if (!offline && !target) {
		gs_error_set(&err, is_pod ? "explain pod needs NS/NAME" : "explain quota needs NS");
		goto usage_error;
	}
	if (is_pod && target && split_ns("pod", target, &pod_ns, &pname, &err) < 0)
		goto usage_error;
	if (!is_pod && req == NULL && strcmp(pod_name, "POD")) {
		gs_error_set(&err, "--name needs --request");
		goto usage_error;
	}

	if (offline) {
		if ((f_pod && load_json(f_pod, &pod, &err) < 0) ||
		    (f_nodes && load_json(f_nodes, &nodes, &err) < 0) ||
		    (f_pods && load_json(f_pods, &pods, &err) < 0) ||
		    (f_cm && load_json(f_cm, &cm, &err) < 0) ||
		    (f_quota && load_json(f_quota, &quotas, &err) < 0))
			goto fail;
	} else {
		if (kube_context_open(&kx, "explain", &err) < 0)
			goto fail;
		kc = kx.client;
		if (is_pod) {
			char *p = gs_xasprintf("/api/v1/namespaces/%s/pods/%s", pod_ns, pname);
			char *c = gs_xasprintf("/api/v1/namespaces/%s/configmaps/%s", cmref.ns,
					       cmref.name);
			struct kube_list_opts lo = {
				.field_selector = "status.phase!=Succeeded,status.phase!=Failed"};
			int r = kube_get(kc, p, &pod, &err);
			if (r == 0)
				r = kube_list(kc, "/api/v1/nodes", NULL, &nodes, &err);
			if (r == 0)
				r = kube_list(kc, "/api/v1/pods", &lo, &pods, &err);
			if (r == 0)
				r = get_optional(kc, c, &cm, &err);
			free(p);
			free(c);
			if (r < 0)
				goto fail;
		} else {
			char *p = gs_xasprintf("/api/v1/namespaces/%s/resourcequotas", target);
			int r = kube_list(kc, p, NULL, &quotas, &err);
			free(p);
			if (r < 0)
				goto fail;
			/* An empty list carries no namespace of its own. */
			json_t *m = json_object_get(quotas, "metadata");
			if (json_is_object(m))
				json_object_set_new(m, "namespace", json_string(target));
		}
	}

	if (is_pod) {
		const struct catalog *cat = NULL;
		struct explain_pod_input in = {pod, nodes, pods, NULL, NULL};
		if (catalog_builtin(&cat, &err) < 0)
			goto fail;
		in.cat = cat;
		if (cm) {
			if (dpconfig_set_from_configmap(NULL, cm, &set, &err) < 0) {
				gs_error_prefix(&err, "configmap %s/%s: ", cmref.ns, cmref.name);
				goto fail;
			}
			in.configs = set;
		}
		if (explain_pod(&in, &ep, &err) < 0)
			goto fail;
		print_pod(ep);
		rc = explain_pod_is_placed(ep) ? EXIT_OK : EXIT_FINDING;
	} else {
		if (explain_quota(quotas, req, container, &qr, &err) < 0)
			goto fail;
		if (!*qr->namespace && target) {
			free(qr->namespace);
			qr->namespace = gs_xstrdup(target);
		}
		print_quota(qr, pod_name);
		rc = refused(qr) ? EXIT_FINDING : EXIT_OK;
	}
	goto out;

fail:
	fprintf(stderr, "gpushare explain: %s\n", gs_error_str(&err, buf, sizeof(buf)));
	rc = EXIT_USAGE;
	goto out;
usage_error:
	rc = usage_error(&explain_usage, &err);
out:
	explain_pod_free(ep);
	explain_quota_report_free(qr);
	dpconfig_set_free(set);
	json_decref(pod);
	json_decref(nodes);
	json_decref(pods);
	json_decref(cm);
	json_decref(quotas);
	json_decref(req);
	free(cmref.ns);
	free(pod_ns);
	kube_context_release(&kx);
	return rc;
}
