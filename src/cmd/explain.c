#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/catalog.h"
#include "cmd/cmd.h"
#include "model/dpconfig.h"
#include "engine/explain.h"
#include "engine/explain_node.h"
#include "engine/explain_offline.h"
#include "model/kobj.h"
#include "model/nodehw.h"
#include "model/defaults.h"
#include "dra/draclaims.h"
#include "dra/draslice.h"
#include "cmd/kubecontext.h"
#include "cmd/parseopt.h"
#include "base/readfile.h"
#include "base/strbuf.h"
#include "yaml/ydoc.h"
#include "base/banned.h"

#define EXPLAIN_MAX_FILE (256u << 20)

static const char *const usage_lines[] = {
	"gpushare explain pod NS/NAME [options]",
	"gpushare explain pod POD.yaml --nodes NODES.yaml --configmap CM.yaml [--pods PODS.yaml]\n"
	"                 [--quota QUOTAS.yaml]",
	"gpushare explain quota NS [--request RES=N]... [--claim CLAIM.yaml] [--name NAME] "
	"[options]",
	"gpushare explain node NODE [options]",
	"gpushare explain node NODE --nodes NODES.yaml --configmap CM.yaml",
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
	"that would be admitted, in the apiserver's words. A ResourceClaim is charged\n"
	"when it is created: --claim CLAIM.yaml, or --request\n"
	"<class>.deviceclass.resource.k8s.io/devices=N, asks whether one more claim would\n"
	"be.\n"
	"\n"
	"node: which device-plugin config the node gets and why (its\n"
	"nvidia.com/device-plugin.config label, or config-manager's fallbacks), its MIG\n"
	"strategy and where it comes from, its MIG layout, the sharing, and what NVIDIA's\n"
	"stack would publish: capacity = allocatable per resource, GFD's labels. The same\n"
	"text for a live node and for one of NODES.yaml.\n"
	"\n"
	"Before the cluster exists, pod takes manifests: every Pod of POD.yaml against\n"
	"the Nodes of NODES.yaml as gpushare would advertise them under the ConfigMap\n"
	"(its Pods with spec.nodeName are the pods already bound), and with --quota\n"
	"the ResourceQuotas of the pod's namespace as the quota controller fills them.\n"
	"\n"
	"A pod with spec.resourceClaims (DRA): per claim, named or made from a template,\n"
	"its requests (device class, CEL selectors, count), the devices and node\n"
	"status.allocation gives it, the pods it is reserved for (several: they share\n"
	"the device), and the prepare verdict; or why there is none: the claim does not\n"
	"exist (resourceclaim-controller's event, e.g. a quota refusal), is not\n"
	"allocated (the scheduler's words), or the driver refused it at prepare (the\n"
	"kubelet's FailedPrepareDynamicResources event).\n"
	"\n"
	"Offline, recorded objects replace the cluster: pod takes --pod-file and\n"
	"--nodes-file (with --pods-file, --configmap-file and --dra-file optional),\n"
	"quota takes --quota-file.\n",
	"Exit status: 0 scheduled / admitted (POD.yaml: every pod fits a node and is\n"
	"admitted; node: the stack accepts the node), 1 not scheduled, failed, refused or a claim "
	"not ready\n"
	"(node: the stack refuses it), 2 bad usage, input or an API error.\n",
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

static void print_requests(const struct explain_pod *e)
{
	const char *k;
	json_t *v;
	int first = 1;

	cmd_printf("requests:");
	json_object_foreach (e->requests, k, v) {
		cmd_printf(" %s=%s", k, json_string_value(v));
		first = 0;
	}
	cmd_printf("%s\n", first ? " none" : "");
}

/* The node's lines; extra (NULL = none) before the hints. */
static void print_node(const struct explain_node *n, const char *extra)
{
	cmd_printf("node %s: %s%s\n", n->name, n->fits ? "fits" : "does not fit",
		   n->bound ? " (the pod is bound here)" : "");
	for (size_t r = 0; r < n->reasons.n; r++)
		cmd_printf("  - %s\n", n->reasons.items[r]);
	for (size_t r = 0; r < n->n_res; r++) {
		const struct explain_resource *x = &n->res[r];
		cmd_printf("  %s: requested %s, allocatable %s, used by bound pods %s, free "
			   "%s%s\n",
			   x->name, x->requested, x->allocatable, x->used, x->free,
			   x->fits ? "" : " (insufficient)");
	}
	if (*n->advertised)
		cmd_printf("  advertises %s\n", n->advertised);
	if (extra)
		cmd_printf("  %s\n", extra);
	for (size_t h = 0; h < n->hints.n; h++)
		cmd_printf("  hint: %s\n", n->hints.items[h]);
}

/* The DRA objects explain pod reads (arrays, owned). */
struct dra_objs {
	json_t *slices, *claims, *templates, *events;
};

static void dra_objs_release(struct dra_objs *d)
{
	json_decref(d->slices);
	json_decref(d->claims);
	json_decref(d->templates);
	json_decref(d->events);
}

static bool pod_needs_dra(const json_t *pod, const json_t *nodes)
{
	size_t i;
	json_t *n;

	if (json_array_size(kobj_get(pod, "spec.resourceClaims")))
		return true;
	json_array_foreach (json_object_get(nodes, "items"), i, n)
		if (draslice_node_wants_dra(n))
			return true;
	return false;
}

static int list_items(struct kube_client *kc, const char *path, const char *field, json_t **out,
		      struct gs_error *err)
{
	struct kube_list_opts lo = {.label_selector = NULL, .field_selector = field};
	json_t *l = NULL;

	if (kube_list(kc, path, field ? &lo : NULL, &l, err) < 0)
		return -1;
	*out = json_incref(json_object_get(l, "items"));
	json_decref(l);
	if (!*out)
		*out = json_array();
	return 0;
}

/*
 * For a pod with claims or nodes on the DRA path: every ResourceSlice and
 * ResourceClaim, the pod namespace's ResourceClaimTemplates, and the pod's
 * events (resourceclaim-controller's and the kubelet's words).
 */
static int read_live_dra(struct kube_client *kc, const char *ns, const char *name,
			 struct dra_objs *d, struct gs_error *err)
{
	/* Every namespace's: a node's devices may be held by claims of any. */
	char *claims = gs_xstrdup("/apis/resource.k8s.io/v1/resourceclaims");
	char *tmpls =
		gs_xasprintf("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaimtemplates", ns);
	char *events = gs_xasprintf("/api/v1/namespaces/%s/events", ns);
	char *field = gs_xasprintf("involvedObject.name=%s", name);
	int r = list_items(kc, "/apis/resource.k8s.io/v1/resourceslices", NULL, &d->slices, err);

	if (r == 0)
		r = list_items(kc, claims, NULL, &d->claims, err);
	if (r == 0)
		r = list_items(kc, tmpls, NULL, &d->templates, err);
	if (r == 0)
		r = list_items(kc, events, field, &d->events, err);
	free(claims);
	free(tmpls);
	free(events);
	free(field);
	return r;
}

/* A recorded List's ResourceSlices, ResourceClaims, ResourceClaimTemplates and Events. */
static int read_dra_file(const char *path, struct dra_objs *d, struct gs_error *err)
{
	json_t *list = NULL, *it;
	size_t i;

	if (load_json(path, &list, err) < 0)
		return -1;
	if (!json_is_array(json_object_get(list, "items"))) {
		gs_error_at(err, path, 1, 1, "expected a List with items (kubectl get -o json)");
		json_decref(list);
		return -1;
	}
	d->slices = json_array();
	d->claims = json_array();
	d->templates = json_array();
	d->events = json_array();
	json_array_foreach (json_object_get(list, "items"), i, it) {
		if (kobj_is(it, "ResourceSlice"))
			json_array_append(d->slices, it);
		else if (kobj_is(it, "ResourceClaim"))
			json_array_append(d->claims, it);
		else if (kobj_is(it, "ResourceClaimTemplate"))
			json_array_append(d->templates, it);
		else if (kobj_is(it, "Event"))
			json_array_append(d->events, it);
	}
	json_decref(list);
	return 0;
}

/* *trouble: a claim of the pod is missing, unallocated or refused at prepare. */
static void print_pod(const struct explain_pod *e, const json_t *pod, const json_t *nodes,
		      const json_t *pods, const struct dra_objs *dra, bool *trouble)
{
	struct draclaims_objects d = {.slices = dra->slices,
				      .claims = dra->claims,
				      .templates = dra->templates,
				      .pods = json_object_get(pods, "items"),
				      .events = dra->events};
	char *claims;

	if (e->node)
		cmd_printf("pod %s/%s: %s on %s (phase %s)\n", e->namespace, e->name,
			   strcmp(e->phase, "Failed") ? "scheduled" : "failed", e->node,
			   *e->phase ? e->phase : "unknown");
	else
		cmd_printf("pod %s/%s: not scheduled (phase %s)\n", e->namespace, e->name,
			   *e->phase ? e->phase : "unknown");
	if (e->status_reason)
		cmd_printf("status: %s: %s\n", e->status_reason, e->status_message);
	print_requests(e);
	for (size_t i = 0; i < e->n_nodes; i++) {
		char *line =
			draclaims_node_line(json_array_get(json_object_get(nodes, "items"), i), &d);
		print_node(&e->nodes[i], line);
		free(line);
	}
	for (size_t h = 0; h < e->hints.n; h++)
		cmd_printf("hint: %s\n", e->hints.items[h]);
	claims = draclaims_explain_pod(pod, &d, trouble);
	fputs(claims, stdout);
	free(claims);
	if (e->scheduled < 0)
		cmd_printf("scheduler: no PodScheduled condition yet\n");
	else
		cmd_printf("scheduler: PodScheduled=%s%s%s%s%s\n", e->scheduled ? "True" : "False",
			   e->sched_reason ? " " : "", e->sched_reason ? e->sched_reason : "",
			   e->sched_message ? ": " : "", e->sched_message ? e->sched_message : "");
}

/* The refused object as the apiserver names it: a pod, or a ResourceClaim (spec dra §1.5). */
static const char *refused_kind(const struct explain_quota_report *r)
{
	return r->usage && explain_quota_usage_is_claim(r->usage) ? "resourceclaims.resource.k8s.io"
								  : "pods";
}

static void print_quota(const struct explain_quota_report *r, const char *pod_name)
{
	if (!r->n)
		cmd_printf("namespace %s: no ResourceQuota: nothing is limited\n", r->namespace);
	for (size_t i = 0; i < r->n; i++) {
		const struct explain_quota *q = &r->quotas[i];
		cmd_printf("quota %s/%s:%s%s\n", r->namespace, q->name,
			   q->enforced ? ""
				       : " status.hard not set yet: it limits nothing until "
					 "kube-controller-manager fills it",
			   q->scoped ? " (scoped: counts only the pods its scopes select)" : "");
		for (size_t j = 0; j < q->n_items; j++) {
			const struct explain_quota_item *it = &q->items[j];
			if (it->used)
				cmd_printf("  %s: hard %s, used %s, headroom %s\n", it->resource,
					   it->hard, it->used, it->headroom);
			else
				cmd_printf("  %s: hard %s, used unknown\n", it->resource, it->hard);
		}
		switch (q->verdict) {
		case EXPLAIN_NO_REQUEST:
			break;
		case EXPLAIN_ADMIT:
			cmd_printf("  admits the request\n");
			break;
		case EXPLAIN_UNCONSTRAINED:
			cmd_printf("  admits the request (not enforced yet)\n");
			break;
		case EXPLAIN_REFUSE:
			cmd_printf("  refuses the request: %s \"%s\" is forbidden: %s\n",
				   refused_kind(r), pod_name, q->message);
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

/*
 * What gpushare does with the node: its config, each model's cards and the
 * slots the plugin makes of them (explain_node_summary), or why the stack
 * refuses it.
 */
static char *fleet_line(const struct catalog *cat, const struct dpconfig_set *set,
			const struct sync_node *sn, const json_t *node)
{
	struct strbuf sb = STRBUF_INIT;
	struct gs_error err;
	char *cards = NULL, *slots = NULL;

	if (sn->outcome == SYNC_SKIPPED) {
		strbuf_addf(&sb, "gpushare: not a declared GPU node (%s)", sn->message);
		return strbuf_detach(&sb, NULL);
	}
	strbuf_addf(&sb, "gpushare: config %s",
		    sn->config ? (*sn->config ? sn->config : "(empty)") : "(none)");
	if (explain_node_summary(cat, node, set, &cards, &slots, &err) < 0) {
		strbuf_addf(&sb, "; its devices cannot be laid out: %s", err.msg);
		if (sn->outcome == SYNC_FAILED)
			strbuf_addf(&sb, "; %s", sn->message);
		return strbuf_detach(&sb, NULL);
	}
	if (*cards)
		strbuf_addf(&sb, ", %s", cards);
	if (sn->outcome == SYNC_FAILED)
		strbuf_addf(&sb, ": %s", sn->message);
	else
		strbuf_addstr(&sb, slots);
	free(cards);
	free(slots);
	return strbuf_detach(&sb, NULL);
}

/* The verdict for one pod of POD.yaml; 1 when it lands somewhere and is admitted. */
static int print_offline(const struct explain_pod *e, const struct explain_fleet *f,
			 const struct catalog *cat, const struct dpconfig_set *set,
			 const struct explain_quota_report *qr)
{
	struct strbuf fit = STRBUF_INIT, refuse = STRBUF_INIT;
	int ok;

	cmd_printf("pod %s/%s: offline, on the nodes as gpushare would advertise them\n",
		   *e->namespace ? e->namespace : "default", e->name);
	print_requests(e);
	for (size_t i = 0; i < e->n_nodes; i++) {
		const struct explain_node *n = &e->nodes[i];
		char *line = NULL;
		if (i < f->plan.n)
			line = fleet_line(cat, set, &f->plan.nodes[i],
					  json_array_get(json_object_get(f->nodes, "items"), i));
		print_node(n, line);
		free(line);
		if (n->fits)
			strbuf_addsep(n->fails_admission ? &refuse : &fit, ", ", n->name);
	}
	for (size_t h = 0; h < e->hints.n; h++)
		cmd_printf("hint: %s\n", e->hints.items[h]);
	const struct explain_quota *refused_by = NULL;
	if (qr) {
		print_quota(qr, e->name);
		for (size_t i = 0; i < qr->n && !refused_by; i++)
			if (qr->quotas[i].verdict == EXPLAIN_REFUSE)
				refused_by = &qr->quotas[i];
	}
	if (refused_by)
		cmd_printf("verdict: refused at creation: pods \"%s\" is forbidden: %s\n", e->name,
			   refused_by->message);
	else if (fit.len)
		cmd_printf("verdict: fits %s\n", fit.buf);
	else if (refuse.len)
		cmd_printf(
			"verdict: the scheduler would bind it to %s, where the kubelet refuses it "
			"(UnexpectedAdmissionError)\n",
			refuse.buf);
	else
		cmd_printf("verdict: fits no node: it would stay Pending\n");
	ok = !refused_by && fit.len;
	strbuf_release(&fit);
	strbuf_release(&refuse);
	return ok;
}

/* explain pod POD.yaml --nodes NODES.yaml --configmap CM.yaml [--quota QUOTAS.yaml]. */
static int explain_manifests(const char *pod_path, const char *nodes_path, const char *pods_path,
			     const char *cm_path, const char *quota_path, struct gs_error *err)
{
	struct ydoc_stream *ps = NULL, *ns = NULL, *cs = NULL, *qs = NULL, *bs = NULL;
	struct dpconfig_set *set = NULL;
	const json_t *cm = NULL;
	const struct catalog *cat;
	struct explain_fleet fleet = {0};
	int rc = -1, all = 1;

	if (catalog_builtin(&cat, err) < 0 ||
	    ydoc_load_manifests(pod_path, &ydoc_default_limits, &ps, err) < 0 ||
	    ydoc_load_manifests(nodes_path, &ydoc_default_limits, &ns, err) < 0 ||
	    dpconfig_set_load_file(cm_path, &cs, &cm, &set, err) < 0 ||
	    (pods_path && ydoc_load_manifests(pods_path, &ydoc_default_limits, &bs, err) < 0) ||
	    (quota_path && ydoc_load_manifests(quota_path, &ydoc_default_limits, &qs, err) < 0))
		goto out;
	if (kobj_find(ps, 0, "Pod", NULL) < 0) {
		gs_error_set(err, "%s: no Pod in the file", pod_path);
		goto out;
	}
	for (long i = kobj_find(ps, 0, "Pod", NULL); i >= 0;
	     i = kobj_find(ps, (size_t)i + 1, "Pod", NULL))
		if (explain_pod_check(ps, ydoc_stream_doc(ps, (size_t)i), err) < 0)
			goto out;
	for (long i = kobj_find(ns, 0, "Pod", NULL); i >= 0;
	     i = kobj_find(ns, (size_t)i + 1, "Pod", NULL))
		if (explain_pod_check(ns, ydoc_stream_doc(ns, (size_t)i), err) < 0)
			goto out;
	for (long i = bs ? kobj_find(bs, 0, "Pod", NULL) : -1; i >= 0;
	     i = kobj_find(bs, (size_t)i + 1, "Pod", NULL))
		if (explain_pod_check(bs, ydoc_stream_doc(bs, (size_t)i), err) < 0)
			goto out;
	if (explain_fleet_build(ns, bs, cm, &fleet, err) < 0)
		goto out;
	for (long i = kobj_find(ps, 0, "Pod", NULL); i >= 0;
	     i = kobj_find(ps, (size_t)i + 1, "Pod", NULL)) {
		const json_t *pod = ydoc_stream_doc(ps, (size_t)i);
		const char *pns = kobj_text(pod, "metadata.namespace");
		struct explain_pod_input in = {.pod = pod,
					       .nodes = fleet.nodes,
					       .pods = fleet.pods,
					       .configs = set,
					       .cat = cat};
		struct explain_pod *e = NULL;
		struct explain_quota_report *qr = NULL;
		json_t *quotas = NULL;
		int r = explain_pod(&in, &e, err);
		if (r == 0 && qs) {
			r = explain_quota_list_build(qs, *pns ? pns : "default", fleet.pods,
						     &quotas, err);
			if (r == 0)
				r = explain_quota_pod(quotas, pod, &qr, err);
		}
		if (r == 0) {
			if (i > kobj_find(ps, 0, "Pod", NULL))
				cmd_printf("\n");
			all &= print_offline(e, &fleet, cat, set, qr);
		}
		explain_pod_free(e);
		explain_quota_report_free(qr);
		json_decref(quotas);
		if (r < 0)
			goto out;
	}
	rc = all ? EXIT_OK : EXIT_FINDING;
out:
	explain_fleet_release(&fleet);
	dpconfig_set_free(set);
	ydoc_stream_free(ps);
	ydoc_stream_free(ns);
	ydoc_stream_free(cs);
	ydoc_stream_free(qs);
	ydoc_stream_free(bs);
	return rc;
}

/* Print explain_node's report; 1 when the stack refuses the node. */
static int print_node_report(const json_t *node, const struct dpconfig_set *set,
			     struct gs_error *err)
{
	const struct catalog *cat;
	char *text;

	if (catalog_builtin(&cat, err) < 0 || explain_node(cat, node, set, &text, err) < 0)
		return -1;
	fputs(text, stdout);
	int refused = strstr(text, "\nrefused: ") != NULL || strstr(text, "\nconfig: none") != NULL;
	free(text);
	return refused ? EXIT_FINDING : EXIT_OK;
}

/* explain node NODE --nodes NODES.yaml --configmap CM.yaml. */
static int explain_node_manifests(const char *name, const char *nodes_path, const char *cm_path,
				  struct gs_error *err)
{
	struct ydoc_stream *ns = NULL, *cs = NULL;
	struct dpconfig_set *set = NULL;
	const json_t *cm = NULL;
	int rc = -1;

	if (ydoc_load_manifests(nodes_path, &ydoc_default_limits, &ns, err) < 0 ||
	    dpconfig_set_load_file(cm_path, &cs, &cm, &set, err) < 0)
		goto out;
	long at = kobj_find(ns, 0, "Node", name);
	if (at < 0) {
		gs_error_set(err, "%s: no Node '%s'", nodes_path, name);
		goto out;
	}
	rc = print_node_report(ydoc_stream_doc(ns, (size_t)at), set, err);
out:
	dpconfig_set_free(set);
	ydoc_stream_free(ns);
	ydoc_stream_free(cs);
	return rc;
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
	const char *cm_arg = NULL, *y_nodes = NULL, *y_quota = NULL, *y_pods = NULL;
	const char *f_pod = NULL, *f_nodes = NULL, *f_pods = NULL, *f_cm = NULL, *f_quota = NULL;
	const char *f_dra = NULL, *claim_file = NULL;
	struct dra_objs dra = {.slices = NULL, .claims = NULL, .templates = NULL, .events = NULL};
	char *claim_name = NULL;
	struct configmap_ref cmref = {.ns = NULL, .name = GS_DEFAULT_CONFIGMAP};
	char *pod_ns = NULL;
	const char *pname = NULL;
	json_t *pod = NULL, *nodes = NULL, *pods = NULL, *cm = NULL, *quotas = NULL, *req = NULL;
	struct dpconfig_set *set = NULL;
	struct explain_pod *ep = NULL;
	struct explain_quota_report *qr = NULL;
	int rc = EXIT_USAGE, n;
	struct option opts[] = {
		OPT_STRING(0, "configmap", &cm_arg, "NS/NAME",
			   "device-plugin ConfigMap [" GS_DEFAULT_CONFIGMAP_REF
			   "];\nwith --nodes, its manifest (a FILE)"),
		OPT_CALLBACK(0, "request", &req, "RES=N",
			     "what the pod asks for (nvidia.com/gpu=1, cpu=500m, ...);\nrepeatable",
			     parse_request),
		OPT_STRING(0, "claim", &claim_file, "FILE",
			   "a ResourceClaim (YAML): what creating it counts\nagainst the quotas"),
		OPT_STRING(
			0, "name", &pod_name, "POD",
			"the pod (claim) name used in the refusal message\n[POD; with --claim the "
			"claim's]"),
		OPT_STRING(0, "container", &container, "NAME",
			   "its one container's name, for \"must specify\" [main]"),
		OPT_GROUP("Before the cluster (manifests, YAML):"),
		OPT_STRING(0, "nodes", &y_nodes, "FILE",
			   "the Nodes (with gpushare.io/gpu-* annotations) and\nthe Pods bound to "
			   "them"),
		OPT_STRING(0, "pods", &y_pods, "FILE",
			   "Pods already there (bound: spec.nodeName; all count\nfor quotas)"),
		OPT_STRING(0, "quota", &y_quota, "FILE", "the ResourceQuotas"),
		OPT_GROUP("Offline (recorded objects instead of a cluster):"),
		OPT_STRING(0, "pod-file", &f_pod, "FILE", "the Pod"),
		OPT_STRING(0, "nodes-file", &f_nodes, "FILE", "a NodeList"),
		OPT_STRING(0, "pods-file", &f_pods, "FILE", "a PodList: what is bound where"),
		OPT_STRING(0, "configmap-file", &f_cm, "FILE", "the device-plugin ConfigMap"),
		OPT_STRING(0, "quota-file", &f_quota, "FILE", "a ResourceQuotaList"),
		OPT_STRING(0, "dra-file", &f_dra, "FILE",
			   "a List of ResourceSlices, ResourceClaims,\nResourceClaimTemplates and "
			   "Events (DRA)"),
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
	if (!what || (strcmp(what, "pod") && strcmp(what, "quota") && strcmp(what, "node"))) {
		gs_error_set(&err, "say what to explain: 'pod NS/NAME', 'quota NS' or 'node NODE'");
		goto usage_error;
	}
	bool is_pod = !strcmp(what, "pod");
	if (!strcmp(what, "node")) {
		if (!target || req || y_quota || y_pods || f_pod || f_nodes || f_pods || f_cm ||
		    f_quota || (y_nodes && !cm_arg)) {
			gs_error_set(&err,
				     "explain node NODE [--nodes NODES.yaml --configmap CM.yaml]");
			goto usage_error;
		}
		if (y_nodes) {
			rc = explain_node_manifests(target, y_nodes, cm_arg, &err);
			if (rc < 0)
				goto fail;
			goto out;
		}
		if (cm_arg) {
			char *cns;
			if (split_ns("--configmap", cm_arg, &cns, &cmref.name, &err) < 0)
				goto usage_error;
			free(cmref.ns);
			cmref.ns = cns;
		}
		if (kube_context_open(&kx, "explain", &err) < 0)
			goto fail;
		char *np = gs_xasprintf("/api/v1/nodes/%s", target);
		char *cp =
			gs_xasprintf("/api/v1/namespaces/%s/configmaps/%s", cmref.ns, cmref.name);
		int r = kube_get(kx.client, np, &nodes, &err);
		if (r == 0)
			r = get_optional(kx.client, cp, &cm, &err);
		free(np);
		free(cp);
		if (r < 0)
			goto fail;
		if (cm && dpconfig_set_from_configmap(NULL, cm, &set, &err) < 0) {
			gs_error_prefix(&err, "configmap %s/%s: ", cmref.ns, cmref.name);
			goto fail;
		}
		rc = print_node_report(nodes, set, &err);
		if (rc < 0)
			goto fail;
		goto out;
	}
	if (y_nodes || y_quota || y_pods) {
		if (!is_pod || !y_nodes || !cm_arg || !target || f_pod || f_nodes || f_pods ||
		    f_cm || f_quota || req) {
			gs_error_set(
				&err,
				"from manifests: explain pod POD.yaml --nodes NODES.yaml "
				"--configmap CM.yaml [--pods PODS.yaml] [--quota QUOTAS.yaml]");
			goto usage_error;
		}
		rc = explain_manifests(target, y_nodes, y_pods, cm_arg, y_quota, &err);
		if (rc < 0)
			goto fail;
		goto out;
	}
	if (cm_arg) {
		char *cns;
		if (split_ns("--configmap", cm_arg, &cns, &cmref.name, &err) < 0)
			goto usage_error;
		free(cmref.ns);
		cmref.ns = cns;
	}
	if (f_dra && (!is_pod || !f_pod)) {
		gs_error_set(&err, "--dra-file goes with explain pod --pod-file");
		goto usage_error;
	}
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
	if (claim_file && (is_pod || req)) {
		gs_error_set(&err, "--claim goes with explain quota, without --request");
		goto usage_error;
	}
	if (claim_file) {
		struct ydoc_stream *cs = NULL;
		long at;
		if (ydoc_load_file(claim_file, &ydoc_default_limits, &cs, &err) < 0)
			goto fail;
		at = kobj_find(cs, 0, "ResourceClaim", NULL);
		if (at < 0) {
			gs_error_set(&err, "%s: no ResourceClaim in the file", claim_file);
			ydoc_stream_free(cs);
			goto fail;
		}
		draclaims_quota_usage(&req, ydoc_stream_doc(cs, (size_t)at));
		if (!strcmp(pod_name, "POD") && kobj_name(ydoc_stream_doc(cs, (size_t)at))) {
			claim_name = gs_xstrdup(kobj_name(ydoc_stream_doc(cs, (size_t)at)));
			pod_name = claim_name;
		}
		ydoc_stream_free(cs);
	}
	if (!is_pod && req == NULL && strcmp(pod_name, "POD")) {
		gs_error_set(&err, "--name needs --request");
		goto usage_error;
	}

	if (offline) {
		if ((f_pod && load_json(f_pod, &pod, &err) < 0) ||
		    (f_nodes && load_json(f_nodes, &nodes, &err) < 0) ||
		    (f_pods && load_json(f_pods, &pods, &err) < 0) ||
		    (f_cm && load_json(f_cm, &cm, &err) < 0) ||
		    (f_quota && load_json(f_quota, &quotas, &err) < 0) ||
		    (f_dra && read_dra_file(f_dra, &dra, &err) < 0))
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
			if (r == 0 && pod_needs_dra(pod, nodes))
				r = read_live_dra(kc, pod_ns, pname, &dra, &err);
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
		struct explain_pod_input in = {.pod = pod,
					       .nodes = nodes,
					       .pods = pods,
					       .configs = NULL,
					       .cat = NULL,
					       .slices = dra.slices};
		bool trouble = false;
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
		print_pod(ep, pod, nodes, pods, &dra, &trouble);
		rc = explain_pod_is_placed(ep) && !trouble ? EXIT_OK : EXIT_FINDING;
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
	dra_objs_release(&dra);
	free(claim_name);
	free(cmref.ns);
	free(pod_ns);
	kube_context_release(&kx);
	return rc;
}
