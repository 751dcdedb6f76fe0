#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/catalog.h"
#include "cmd/cmd.h"
#include "model/dpconfig.h"
#include "engine/podvalidate.h"
#include "engine/explain.h"
#include "engine/explain_node.h"
#include "engine/explain_offline.h"
#include "fleet/fleet.h"
#include "fleet/sync.h"
#include "model/kobj.h"
#include "model/nodehw.h"
#include "model/defaults.h"
#include "dra/draclaims.h"
#include "dra/draslice.h"
#include "cmd/kubecontext.h"
#include "cmd/offline.h"
#include "cmd/parseopt.h"
#include "engine/plan.h"
#include "base/strbuf.h"
#include "yaml/ydoc.h"
#include "base/banned.h"

#define EXPLAIN_MAX_FILE (256u << 20)

static const char *const usage_lines[] = {
	"gpushare explain pod NS/NAME [options]",
	"gpushare explain pod [NS/NAME] -f FILE|DIR|- [-f ...] [-R] [--configmap NS/NAME]",
	"gpushare explain quota NS [--request RES=N]... [--claim CLAIM.yaml] [--name NAME] "
	"[options]",
	"gpushare explain node NODE [options]",
	NULL,
};

static const char *const explain_subcommands[] = {"pod", "quota", "node", NULL};
static const struct parseopt_example explain_examples[] = {
	{"why each pod of the lab lands where it does, or stays pending",
	 "gpushare explain pod -f k8s/"},
	{"which config lab-node-2 gets and what NVIDIA's stack would publish",
	 "gpushare explain node lab-node-2 -f k8s/"},
	{"would team-a's quota admit one more pod asking for a GPU?",
	 "gpushare explain quota team-a -f k8s/ --request nvidia.com/gpu=1"},
	{"a live pod of the cluster in KUBECONFIG", "gpushare explain pod team-a/team-a-0"},
	{NULL, NULL},
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
	"text for a live node and for one read from files.\n"
	"\n"
	"A pod with spec.resourceClaims (DRA): per claim, named or made from a template,\n"
	"its requests (device class, CEL selectors, count), the devices and node\n"
	"status.allocation gives it, the pods it is reserved for (several: they share\n"
	"the device), and the prepare verdict; or why there is none: the claim does not\n"
	"exist (resourceclaim-controller's event, e.g. a quota refusal), is not\n"
	"allocated (the scheduler's words), or the driver refused it at prepare (the\n"
	"kubelet's FailedPrepareDynamicResources event).\n"
	"\n"
	"With -f, the objects of the files replace the cluster (docs/guide/cli.md):\n"
	"nodes as gpushare would advertise them under the ConfigMap found among them,\n"
	"quotas as the quota controller fills them. A pod already there (bound, or\n"
	"recorded with a status) is explained as a live one; a pod to create (a Pod\n"
	"manifest, or one a workload makes) after the pods read before it were placed\n"
	"as `gpushare plan` places them, with its verdict; without NS/NAME, every pod\n"
	"to create. quota counts the pods after the whole batch.\n",
	"Exit status: 0 scheduled / admitted (-f: every pod fits a node and is\n"
	"admitted; node: the stack accepts the node), 1 not scheduled, failed, refused or a claim "
	"not ready\n"
	"(node: the stack refuses it), 2 bad usage, input or an API error.\n",
	explain_examples,
	explain_subcommands,
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
		if (x->dra_class) {
			cmd_printf("  %s: requested %s, allocatable 0: through DeviceClass %s "
				   "(DRAExtendedResource), %s\n",
				   x->name, x->requested, x->dra_class,
				   x->fits ? "the node's devices take it"
					   : "the node's devices do not take it (insufficient)");
			for (const char *l = x->dra_why; l && *l;) {
				const char *end = strchr(l, '\n');
				int len = end ? (int)(end - l) : (int)strlen(l);
				cmd_printf("    %.*s\n", len, l);
				l = end ? end + 1 : l + len;
			}
			continue;
		}
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
	json_t *classes; /* DeviceClasses, read live when an extended resource may be DRA's */
};

static void dra_objs_release(struct dra_objs *d)
{
	json_decref(d->slices);
	json_decref(d->claims);
	json_decref(d->templates);
	json_decref(d->events);
	json_decref(d->classes);
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

/* The refused object as the apiserver names it: a pod, or a ResourceClaim (k8s.io/kubernetes
 * v1.34.4 pkg/quota/v1/evaluator/core/resource_claims.go). */
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

/*
 * The verdict for a pod to create with spec.nodeName: no scheduler, its
 * node's kubelet alone, as plan judged it (o). 1 when admitted.
 */
static int print_pinned(const struct plan_pod *o)
{
	if (o->verdict == PLAN_BOUND) {
		cmd_printf("verdict: bound as written to %s (spec.nodeName, no scheduler); its "
			   "kubelet admits it\n",
			   o->node);
		return 1;
	}
	if (o->verdict == PLAN_FAILED)
		cmd_printf(
			"verdict: bound as written to %s (spec.nodeName, no scheduler), where the "
			"kubelet refuses it: the pod fails with %s: %s\n",
			o->node, o->status_reason ? o->status_reason : "", o->reason);
	else
		cmd_printf(
			"verdict: %s: no kubelet runs it; it stays Pending until the pod garbage "
			"collector deletes it as orphaned\n",
			o->reason ? o->reason : "");
	return 0;
}

/*
 * A pod's own claims as plan's DynamicResources judged them after the pods
 * before it (docs/guide/plan.md "DRA claims"): each claim, its device or
 * why none, then why no device takes the unallocated ones.
 */
static void print_planned_claims(const struct plan_pod *o)
{
	const json_t *c, *d;
	size_t i, j;

	cmd_printf("claims (DRA, as the scheduler's DynamicResources judges them after the pods "
		   "before it): %zu\n",
		   json_array_size(o->claims));
	json_array_foreach (o->claims, i, c) {
		cmd_printf("  %s: ResourceClaim %s", kobj_text(c, "name"),
			   kobj_text(c, "resourceClaim"));
		if (*kobj_text(c, "template"))
			cmd_printf(" (from template %s)", kobj_text(c, "template"));
		if (!strcmp(kobj_text(c, "allocated"), "notJudged"))
			cmd_printf(", not judged offline: %s", kobj_text(c, "why"));
		else if (!json_array_size(json_object_get(c, "devices")))
			cmd_printf(", not allocated");
		else
			cmd_printf(", %s", !strcmp(kobj_text(c, "allocated"), "before")
						   ? "allocated before"
						   : "allocated at Reserve");
		cmd_printf("\n");
		json_array_foreach (json_object_get(c, "devices"), j, d) {
			const char *k;
			json_t *v;
			cmd_printf("    %s (request %s, pool %s)", kobj_text(d, "device"),
				   kobj_text(d, "request"), kobj_text(d, "pool"));
			json_object_foreach ((json_t *)json_object_get(d, "consumedCapacity"), k, v)
				cmd_printf(" %s=%s", k,
					   json_is_string(v) ? json_string_value(v) : "?");
			cmd_printf("\n");
		}
	}
	for (i = 0; i < o->n_hints; i++)
		cmd_printf("  why: %s\n", o->hints[i]);
}

/* The verdict for one pod to create; 1 when it lands somewhere and is admitted. */
static int print_offline(const struct explain_pod *e, const struct explain_fleet *f,
			 const struct catalog *cat, const struct dpconfig_set *set,
			 const struct explain_quota_report *qr, const struct plan_pod *planned,
			 bool claims)
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
	/* Its own claims: the scheduler's DynamicResources decides, as plan judged it. */
	claims = claims && planned && !(e->node && *e->node);
	if (claims && planned->claims)
		print_planned_claims(planned);
	if (refused_by)
		cmd_printf("verdict: refused at creation: pods \"%s\" is forbidden: %s\n", e->name,
			   refused_by->message);
	else if (planned && e->node && *e->node) {
		ok = print_pinned(planned);
		goto out;
	} else if (claims && planned->verdict != PLAN_BOUND) {
		cmd_printf("verdict: fits no node: it would stay Pending: %s\n",
			   planned->reason ? planned->reason : "");
		for (size_t h = 0; !planned->claims && h < planned->n_hints; h++)
			cmd_printf("hint: %s\n", planned->hints[h]);
		ok = 0;
		goto out;
	} else if (claims) {
		cmd_printf("verdict: fits %s, its claims allocated there\n", planned->node);
		ok = 1;
		goto out;
	} else if (fit.len)
		cmd_printf("verdict: fits %s\n", fit.buf);
	else if (refuse.len)
		cmd_printf(
			"verdict: the scheduler would bind it to %s, where the kubelet refuses it "
			"(UnexpectedAdmissionError)\n",
			refuse.buf);
	else
		cmd_printf("verdict: fits no node: it would stay Pending\n");
	ok = !refused_by && fit.len;
out:
	strbuf_release(&fit);
	strbuf_release(&refuse);
	return ok;
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

/* The pod named ns/name of an array, or -1. */
static long find_pod(const json_t *pods, const char *ns, const char *name)
{
	const json_t *p;
	size_t i;

	json_array_foreach (pods, i, p)
		if (!strcmp(fleet_namespace_of(p), ns) &&
		    !strcmp(kobj_text(p, "metadata.name"), name))
			return (long)i;
	return -1;
}

/* The release, gates and DRA objects of an offline fleet, into in (gates: the caller's). */
static void offline_kube_input(const struct offline_fleet *of, struct kubegates *gates,
			       struct explain_pod_input *in)
{
	in->kube = kube_target_gates(&of->kube, gates);
	in->gates = gates;
	in->device_classes = of->f.device_classes;
	in->slices = of->f.slices;
	in->claims = of->f.claims;
}

/* A pod already there, recorded or bound: as explain pod NS/NAME says it live. */
static int explain_there(const struct offline_fleet *of, const json_t *pod,
			 const struct catalog *cat, struct gs_error *err)
{
	struct explain_pod_input in = {.pod = pod,
				       .nodes = of->adv.nodes,
				       .pods = of->adv.pods,
				       .configs = of->set,
				       .cat = cat,
				       .slices = of->f.slices};
	struct dra_objs dra = {.slices = json_incref(of->f.slices),
			       .claims = json_incref(of->f.claims),
			       .templates = json_incref(of->f.claim_templates),
			       .events = json_incref(of->f.events)};
	struct explain_pod *ep = NULL;
	struct kubegates gates;
	bool trouble = false;
	int rc = -1;

	offline_kube_input(of, &gates, &in);
	if (explain_pod(&in, &ep, err) == 0) {
		print_pod(ep, pod, of->adv.nodes, of->adv.pods, &dra, &trouble);
		rc = explain_pod_is_placed(ep) && !trouble ? EXIT_OK : EXIT_FINDING;
	}
	explain_pod_free(ep);
	dra_objs_release(&dra);
	return rc;
}

/* The quotas of a namespace as they stand before a pod of the batch, into *out (owned). */
typedef int (*quotas_of_fn)(void *ctx, const char *ns, json_t **out, struct gs_error *err);

/*
 * One pod of the batch, explained as in->usage or in->pods and the quotas
 * say: the apiserver's validation first (a pod it refuses never exists),
 * then the explanation, the quota report when the namespace has a quota,
 * and the plan's verdict o. Returns 1 when it fits, 0 when not, -1 on error.
 */
static int explain_one_to_create(const struct offline_fleet *of, const struct catalog *cat,
				 const struct explain_pod_input *in, const struct plan_pod *o,
				 quotas_of_fn quotas_of, void *qctx, struct gs_error *err)
{
	const json_t *pod = in->pod;
	const char *ns = fleet_namespace_of(pod);
	struct explain_pod *e = NULL;
	struct explain_quota_report *qr = NULL;
	json_t *quotas = NULL;
	const json_t *q;
	size_t k;
	bool has_quota = false;
	char *invalid = NULL;
	int rc = podvalidate_refusal(pod, NULL, &invalid, err);

	if (rc == 0 && invalid) {
		cmd_printf("pod %s/%s: offline\nverdict: refused at creation: %s\n",
			   *ns ? ns : "default", kobj_text(pod, "metadata.name"), invalid);
		free(invalid);
		return 0;
	}
	if (rc == 0)
		rc = explain_pod(in, &e, err);
	json_array_foreach (of->f.quotas, k, q)
		if (!strcmp(fleet_namespace_of(q), ns))
			has_quota = true;
	if (rc == 0 && has_quota) {
		rc = quotas_of(qctx, ns, &quotas, err);
		if (rc == 0)
			rc = explain_quota_pod(quotas, pod, &qr, err);
	}
	if (rc == 0)
		rc = print_offline(e, &of->adv, cat, of->set, qr, o,
				   json_array_size(kobj_get(pod, "spec.resourceClaims")) > 0);
	explain_pod_free(e);
	explain_quota_report_free(qr);
	json_decref(quotas);
	return rc;
}

/* The quotas and the pods there and placed before a pod of the batch. */
struct placed_before {
	const json_t *quotas;
	const json_t *pods;
};

static int quotas_from_pods(void *ctx, const char *ns, json_t **out, struct gs_error *err)
{
	const struct placed_before *p = ctx;
	return explain_quota_list_from(p->quotas, ns, p->pods, out, err);
}

/* Pod i of the batch, after the ones before it were placed as r says: 1 when it fits. */
static int explain_to_create(const struct offline_fleet *of, size_t i, const struct plan_result *r,
			     const struct catalog *cat, struct gs_error *err)
{
	const json_t *pod = json_array_get(of->batch, i);
	json_t *pods = offline_pods_after(of, r, i);
	struct explain_pod_input in = {
		.pod = pod, .nodes = of->adv.nodes, .pods = pods, .configs = of->set, .cat = cat};
	struct placed_before before = {.quotas = of->f.quotas, .pods = pods};
	struct kubegates gates;

	offline_kube_input(of, &gates, &in);
	int rc = explain_one_to_create(of, cat, &in, r && i < r->n_pods ? &r->pods[i] : NULL,
				       quotas_from_pods, &before, err);

	json_decref(pods);
	return rc;
}

/* Every pod to create, the pods read one at a time (offline_fleet_stream). */
struct streamed {
	const struct offline_fleet *of;
	const struct catalog *cat;
	const struct plan_result *r;
	struct explain_usage *usage;	 /* the pods there, then the batch's as placed */
	struct explain_quota_sum *quota; /* the same, counted against the quotas */
	size_t i;
	int all;
};

static int streamed_plan_add(void *ctx, const json_t *pod, struct gs_error *err)
{
	return plan_add(ctx, pod, err);
}

/* A pod there, or one of the batch as the plan placed it (offline_pods_after). */
static int streamed_count(struct streamed *x, const json_t *pod, struct gs_error *err)
{
	return explain_usage_add(x->usage, pod, err) < 0 ||
			       explain_quota_sum_add(x->quota, pod, err) < 0
		       ? -1
		       : 0;
}

static int streamed_there(void *ctx, const json_t *pod, struct gs_error *err)
{
	return streamed_count(ctx, pod, err);
}

/* The namespace's quotas as the running sums stand (ctx: struct streamed). */
static int quotas_from_sums(void *ctx, const char *ns, json_t **out, struct gs_error *err)
{
	struct streamed *x = ctx;
	json_t *lists = NULL;

	if (explain_quota_sum_lists(x->quota, &lists, err) < 0)
		return -1;
	*out = json_incref(json_object_get(lists, ns));
	json_decref(lists);
	return 0;
}

/* Pod i of the batch (explain_to_create), then counted as placed. */
static int streamed_explain(void *ctx, const json_t *pod, struct gs_error *err)
{
	struct streamed *x = ctx;
	const struct offline_fleet *of = x->of;
	size_t i = x->i++;
	const struct plan_pod *o = i < x->r->n_pods ? &x->r->pods[i] : NULL;
	struct explain_pod_input in = {.pod = pod,
				       .nodes = of->adv.nodes,
				       .configs = of->set,
				       .cat = x->cat,
				       .usage = x->usage};
	struct kubegates gates;
	int rc;

	offline_kube_input(of, &gates, &in);
	if (i)
		cmd_printf("\n");
	rc = explain_one_to_create(of, x->cat, &in, o, quotas_from_sums, x, err);
	if (rc < 0)
		return -1;
	x->all &= rc;
	if (!o || o->verdict == PLAN_REFUSED || o->verdict == PLAN_FAILED)
		return 0;
	if (o->verdict == PLAN_BOUND && o->node) {
		json_t *bound = json_deep_copy(pod), *spec = json_object_get(bound, "spec");
		if (json_is_object(spec))
			json_object_set_new(spec, "nodeName", json_string(o->node));
		rc = streamed_count(x, bound, err);
		json_decref(bound);
		return rc;
	}
	return streamed_count(x, pod, err);
}

static int explain_pods_streamed(const struct offline_fleet *of, struct gs_error *err)
{
	struct streamed x = {.of = of, .all = 1};
	struct plan *pl = NULL;
	struct plan_result *r = NULL;
	int rc = -1;

	if (catalog_builtin(&x.cat, err) < 0)
		return -1;
	if (!of->n_batch) {
		gs_error_set(err, "no pod to create among the files (every Pod is already there: "
				  "name one as NS/NAME)");
		return -1;
	}
	if (offline_plan_begin(of, &pl, err) < 0)
		return -1;
	if (offline_each_pod(of, false, streamed_plan_add, pl, err) < 0) {
		plan_free(pl);
		return -1;
	}
	r = plan_finish(pl);
	x.r = r;
	x.quota = explain_quota_sum_new(of->f.quotas, NULL);
	if (explain_usage_begin(of->adv.nodes, &x.usage, err) < 0 ||
	    offline_each_pod(of, true, streamed_there, &x, err) < 0 ||
	    offline_each_pod(of, false, streamed_explain, &x, err) < 0)
		goto out;
	rc = x.all ? EXIT_OK : EXIT_FINDING;
out:
	explain_usage_free(x.usage);
	explain_quota_sum_free(x.quota);
	plan_result_free(r);
	return rc;
}

/* explain pod [NS/NAME] -f ...: the pod named, or every pod to create. */
static int explain_pods_offline(const struct offline_fleet *of, const char *ns, const char *name,
				struct gs_error *err)
{
	const struct catalog *cat;
	struct plan_result *r = NULL;
	long there = -1, at = -1;
	int rc = -1, all = 1;

	if (catalog_builtin(&cat, err) < 0)
		return -1;
	if (name) {
		there = find_pod(json_object_get(of->adv.pods, "items"), ns, name);
		at = there < 0 ? find_pod(of->batch, ns, name) : -1;
		if (there < 0 && at < 0) {
			gs_error_set(err, "no pod %s/%s among the files", ns, name);
			return -1;
		}
		if (there >= 0)
			return explain_there(
				of, json_array_get(json_object_get(of->adv.pods, "items"), there),
				cat, err);
	} else if (!json_array_size(of->batch)) {
		gs_error_set(err, "no pod to create among the files (every Pod is already there: "
				  "name one as NS/NAME)");
		return -1;
	}
	struct kubegates gates;
	struct plan_input in;
	offline_plan_input(of, &gates, &in);
	in.existing = of->adv.pods;
	in.pods = of->batch;
	if (plan_run(&in, &r, err) < 0)
		return -1;
	for (size_t i = 0; i < json_array_size(of->batch); i++) {
		if (at >= 0 && (size_t)at != i)
			continue;
		if (at < 0 && i)
			cmd_printf("\n");
		int one = explain_to_create(of, i, r, cat, err);
		if (one < 0)
			goto out;
		all &= one;
	}
	rc = all ? EXIT_OK : EXIT_FINDING;
out:
	plan_result_free(r);
	return rc;
}

/* explain quota NS -f ...: its quotas after the batch was placed as plan places it. */
static int explain_quota_offline(const struct offline_fleet *of, const char *ns, const json_t *req,
				 const char *container, struct explain_quota_report **qr,
				 struct gs_error *err)
{
	struct plan_result *r = NULL;
	json_t *pods, *quotas = NULL;
	int rc;

	if (json_array_size(of->batch)) {
		struct kubegates gates;
		struct plan_input in;
		offline_plan_input(of, &gates, &in);
		in.existing = of->adv.pods;
		in.pods = of->batch;
		if (plan_run(&in, &r, err) < 0)
			return -1;
	}
	pods = offline_pods_after(of, r, json_array_size(of->batch));
	rc = explain_quota_list_from(of->f.quotas, ns, pods, &quotas, err);
	if (rc == 0)
		rc = explain_quota(quotas, req, container, qr, err);
	json_decref(quotas);
	json_decref(pods);
	plan_result_free(r);
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

/*
 * explain node NODE: the node from the files (-f) or the cluster, and the
 * device-plugin ConfigMap it reads. The exit code, or -1 with err set.
 */
static int explain_node_cmd(struct kube_context *kx, const struct fleet_sources *src,
			    const struct configmap_ref *cmref, const char *target,
			    struct gs_error *err)
{
	struct offline_fleet of = {0};
	struct dpconfig_set *set = NULL;
	json_t *nodes = NULL, *cm = NULL;
	int rc = -1;

	if (src->n > 0) {
		const json_t *node = NULL, *x;
		size_t i;

		if (offline_fleet_load(&of, src, cmref, "explain", err) < 0)
			goto out;
		json_array_foreach (of.f.nodes, i, x)
			if (!strcmp(kobj_text(x, "metadata.name"), target))
				node = x;
		if (!node) {
			gs_error_set(err, "no Node '%s' among the files", target);
			goto out;
		}
		rc = print_node_report(node, of.set, err);
		goto out;
	}
	if (kube_context_open(kx, "explain", err) < 0)
		goto out;
	char *np = gs_xasprintf("/api/v1/nodes/%s", target);
	char *cp = gs_xasprintf("/api/v1/namespaces/%s/configmaps/%s", cmref->ns, cmref->name);
	int r = kube_get(kx->client, np, &nodes, err);
	if (r == 0)
		r = get_optional(kx->client, cp, &cm, err);
	free(np);
	free(cp);
	if (r < 0)
		goto out;
	if (cm && dpconfig_set_from_configmap(NULL, cm, &set, err) < 0) {
		gs_error_prefix(err, "configmap %s/%s: ", cmref->ns, cmref->name);
		goto out;
	}
	rc = print_node_report(nodes, set, err);
out:
	dpconfig_set_free(set);
	json_decref(nodes);
	json_decref(cm);
	offline_fleet_release(&of);
	return rc;
}

/*
 * --claim FILE: what creating its first ResourceClaim counts against the
 * quotas, added to *req; the claim's name becomes *pod_name (in *claim_name,
 * the caller frees) unless --name gave one.
 */
static int load_claim(const char *claim_file, json_t **req, const char **pod_name,
		      char **claim_name, struct gs_error *err)
{
	struct ydoc_stream *cs = NULL;
	const json_t *claim;
	long at;

	if (ydoc_load_file(claim_file, &ydoc_default_limits, &cs, err) < 0)
		return -1;
	at = kobj_find(cs, 0, "ResourceClaim", NULL);
	if (at < 0) {
		gs_error_set(err, "%s: no ResourceClaim in the file", claim_file);
		ydoc_stream_free(cs);
		return -1;
	}
	claim = ydoc_stream_doc(cs, (size_t)at);
	draclaims_quota_usage(req, claim);
	if (!strcmp(*pod_name, "POD") && kobj_name(claim)) {
		*claim_name = gs_xstrdup(kobj_name(claim));
		*pod_name = *claim_name;
	}
	ydoc_stream_free(cs);
	return 0;
}

/*
 * The DeviceClasses when DRAExtendedResource is on and the pod asks for an
 * extended resource: the scheduler may serve it through one of them. An
 * apiserver without resource.k8s.io/v1 has none.
 */
static int read_live_classes(struct kube_client *kc, const json_t *pod,
			     const struct kubegates *gates, json_t **classes, struct gs_error *err)
{
	json_t *l = NULL;
	json_t *req = NULL;
	const char *k;
	json_t *v;
	bool extended = false;

	*classes = NULL;
	if (!gates->dra_extended_resource || explain_pod_requests(pod, &req, err) < 0) {
		gs_error_clear(err);
		return 0; /* explain_pod says what does not parse */
	}
	json_object_foreach (req, k, v)
		extended |= strchr(k, '/') != NULL && strncmp(k, "kubernetes.io/", 14) &&
			    strncmp(k, "hugepages-", 10);
	json_decref(req);
	if (!extended)
		return 0;
	if (get_optional(kc, "/apis/resource.k8s.io/v1/deviceclasses", &l, err) < 0)
		return -1;
	*classes = json_incref(json_object_get(l, "items"));
	json_decref(l);
	return 0;
}

/* explain pod, live: the pod, every node, the running pods, the ConfigMap and, if it needs them,
 * its DRA objects. */
static int read_live_pod(struct kube_client *kc, const struct configmap_ref *cmref, const char *ns,
			 const char *name, struct kube_target *kt, struct kubegates *gates,
			 json_t **pod, json_t **nodes, json_t **pods, json_t **cm,
			 struct dra_objs *dra, struct gs_error *err)
{
	char *p = gs_xasprintf("/api/v1/namespaces/%s/pods/%s", ns, name);
	char *c = gs_xasprintf("/api/v1/namespaces/%s/configmaps/%s", cmref->ns, cmref->name);
	struct kube_list_opts lo = {.field_selector =
					    "status.phase!=Succeeded,status.phase!=Failed"};
	int r = kube_get(kc, p, pod, err);

	/* The cluster's release unless --kubernetes-version names one. */
	if (r == 0 && !kt->kv)
		r = sync_probe_version(kc, &kt->kv, err);
	if (r == 0)
		kube_target_gates(kt, gates);
	if (r == 0)
		r = kube_list(kc, "/api/v1/nodes", NULL, nodes, err);
	if (r == 0)
		r = kube_list(kc, "/api/v1/pods", &lo, pods, err);
	if (r == 0)
		r = get_optional(kc, c, cm, err);
	if (r == 0)
		r = read_live_classes(kc, *pod, gates, &dra->classes, err);
	if (r == 0 && (pod_needs_dra(*pod, *nodes) || json_array_size(dra->classes)))
		r = read_live_dra(kc, ns, name, dra, err);
	free(p);
	free(c);
	return r < 0 ? -1 : 0;
}

/* explain quota NS, live: the namespace's ResourceQuotas. */
static int read_live_quotas(struct kube_client *kc, const char *ns, json_t **quotas,
			    struct gs_error *err)
{
	char *p = gs_xasprintf("/api/v1/namespaces/%s/resourcequotas", ns);
	int r = kube_list(kc, p, NULL, quotas, err);
	json_t *m;

	free(p);
	if (r < 0)
		return -1;
	/* An empty list carries no namespace of its own. */
	m = json_object_get(*quotas, "metadata");
	if (json_is_object(m))
		json_object_set_new(m, "namespace", json_string(ns));
	return 0;
}

int cmd_explain(int argc, char **argv)
{
	struct kube_context kx = {0};
	struct kube_client *kc = NULL;
	struct gs_error err;
	char buf[2048];
	const char *what = NULL, *target = NULL, *pod_name = "POD", *container = NULL;
	const char *claim_file = NULL;
	struct dra_objs dra = {.slices = NULL, .claims = NULL, .templates = NULL, .events = NULL};
	struct kubegates gates;
	char *claim_name = NULL;
	struct configmap_ref cmref;
	struct fleet_sources src = {0};
	struct offline_fleet of = {0};
	char *pod_ns = NULL;
	const char *pname = NULL;
	json_t *pod = NULL, *nodes = NULL, *pods = NULL, *cm = NULL, *quotas = NULL, *req = NULL;
	struct dpconfig_set *set = NULL;
	struct explain_pod *ep = NULL;
	struct explain_quota_report *qr = NULL;
	int rc = EXIT_USAGE, n;
	struct option opts[] = {
		OPT_CONFIGMAP_REF(&cmref),
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
		OPT_FLEET_SOURCES(&src),
		OPT_KUBE_TARGET(&of.kube),
		OPT_GROUP("Older forms, each the same as -f FILE:"),
		OPT_CALLBACK(0, "nodes", &src, "FILE", "", parse_fleet_source),
		OPT_CALLBACK(0, "pods", &src, "FILE", "", parse_fleet_source),
		OPT_CALLBACK(0, "quota", &src, "FILE", "", parse_fleet_source),
		OPT_KUBE_CONNECTION(&kx.opts),
		OPT_END(),
	};

	configmap_ref_init(&cmref);
	n = parse_options(argc, argv, opts, &explain_usage);
	if (n < 0) {
		rc = parseopt_exit(n);
		goto out;
	}
	if (n > 2) {
		gs_error_set(&err, "unexpected argument '%s'", argv[2]);
		goto usage_error;
	}
	if (kube_target_check(&of.kube, &err) < 0)
		goto usage_error;
	what = n > 0 ? argv[0] : NULL;
	target = n > 1 ? argv[1] : NULL;
	if (!what || (strcmp(what, "pod") && strcmp(what, "quota") && strcmp(what, "node"))) {
		gs_error_set(&err, "say what to explain: 'pod NS/NAME', 'quota NS' or 'node NODE'");
		goto usage_error;
	}
	bool is_pod = !strcmp(what, "pod"), offline = src.n > 0;
	if (!strcmp(what, "node")) {
		if (!target || req) {
			gs_error_set(&err, "explain node NODE [-f FILE|DIR|-]");
			goto usage_error;
		}
		rc = explain_node_cmd(&kx, &src, &cmref, target, &err);
		if (rc < 0)
			goto fail;
		goto out;
	}
	if (!(offline && is_pod) && !target) {
		gs_error_set(&err, is_pod ? "explain pod needs NS/NAME" : "explain quota needs NS");
		goto usage_error;
	}
	if (is_pod && target && split_ns("pod", target, &pod_ns, &pname, &err) < 0)
		goto usage_error;
	if (claim_file && (is_pod || req)) {
		gs_error_set(&err, "--claim goes with explain quota, without --request");
		goto usage_error;
	}
	if (claim_file && load_claim(claim_file, &req, &pod_name, &claim_name, &err) < 0)
		goto fail;
	if (!is_pod && req == NULL && strcmp(pod_name, "POD")) {
		gs_error_set(&err, "--name needs --request");
		goto usage_error;
	}

	if (offline) {
		if (is_pod && !pname) {
			/* every pod to create: the pods are read one at a time */
			if (offline_fleet_stream(&of, &src, &cmref, "explain", &err) < 0)
				goto fail;
			rc = explain_pods_streamed(&of, &err);
			if (rc < 0)
				goto fail;
			goto out;
		}
		if (offline_fleet_load(&of, &src, &cmref, "explain", &err) < 0)
			goto fail;
		if (is_pod) {
			rc = explain_pods_offline(&of, pod_ns, pname, &err);
			if (rc < 0)
				goto fail;
			goto out;
		}
		if (explain_quota_offline(&of, target, req, container, &qr, &err) < 0)
			goto fail;
	} else {
		if (kube_context_open(&kx, "explain", &err) < 0)
			goto fail;
		kc = kx.client;
		if (is_pod ? read_live_pod(kc, &cmref, pod_ns, pname, &of.kube, &gates, &pod,
					   &nodes, &pods, &cm, &dra, &err) < 0
			   : read_live_quotas(kc, target, &quotas, &err) < 0)
			goto fail;
	}

	if (is_pod) {
		const struct catalog *cat = NULL;
		struct explain_pod_input in = {.pod = pod,
					       .nodes = nodes,
					       .pods = pods,
					       .configs = NULL,
					       .cat = NULL,
					       .slices = dra.slices,
					       .kube = of.kube.kv,
					       .gates = &gates,
					       .device_classes = dra.classes,
					       .claims = dra.claims};
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
		if (!qr && explain_quota(quotas, req, container, &qr, &err) < 0)
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
	free(pod_ns);
	offline_fleet_release(&of);
	fleet_sources_release(&src);
	configmap_ref_release(&cmref);
	kube_context_release(&kx);
	return rc;
}
