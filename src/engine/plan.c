#include "engine/plan.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/devicewalk.h"
#include "engine/explain.h"
#include "engine/explain_offline.h"
#include "engine/plan_dra.h"
#include "engine/plan_score.h"
#include "engine/plan_select.h"
#include "engine/podvalidate.h"
#include "engine/pools.h"
#include "dra/draalloc.h"
#include "dra/draextended.h"
#include "model/kobj.h"
#include "model/names.h"
#include "model/quantity.h"
#include "base/strbuf.h"
#include "base/banned.h"

/*
 * The model (docs/guide/plan.md, read from k8s.io/kubernetes v1.34.4
 * pkg/scheduler): per pod, the default filters in the default order
 * (NodeUnschedulable, TaintToleration, NodeAffinity, NodeResourcesFit; the
 * first that fails decides the node's status), then the scores that differ
 * between nodes for bare pods (NodeResourcesFit LeastAllocated, weight 1;
 * NodeResourcesBalancedAllocation, 1; TaintToleration, 3; NodeAffinity, 2),
 * the highest total wins, ties by a seeded draw (selectHost's reservoir).
 * The filter pass walks the nodes in the snapshot's order from a rotating
 * start and stops at numFeasibleNodesToFind (src/engine/plan_select.h).
 *
 * Speed: requests are parsed once per pod into integer vectors; the
 * label, affinity and taint filters and the two label scores are computed
 * once per scheduling class (the pod's nodeSelector, node affinity and
 * tolerations) and node; nodes are indexed by the extended resources they
 * advertise, so a pod asking for nvidia.com/mig-1g.10gb only visits the
 * nodes that have some.
 *
 * Memory is linear in the input (docs/design/complexity.md): a node keeps
 * only the extended resources it has (sorted, searched by halves), a pod
 * what it asks for, an outcome at most PLAN_MAX_LISTED node names; the
 * per-node verdicts of at most CLASS_CELLS / nodes scheduling classes are
 * kept at once (the oldest class's are dropped, and computed again if a
 * later pod has it).
 */

enum { R_CPU, R_MEM, R_EPH, R_FIRST_SCALAR };

enum static_code { ST_PASS, ST_UNSCHEDULABLE, ST_TAINT, ST_AFFINITY };

static const char *const static_reason[] = {
	NULL,
	"node(s) were unschedulable",
	"node(s) had untolerated taint(s)",
	"node(s) didn't match Pod's node affinity/selector",
};

/* An extended resource a node has in allocatable. */
struct pscalar {
	size_t res;
	int64_t alloc, used;
};

struct pnode {
	const json_t *obj;
	const char *name;
	int64_t alloc[R_FIRST_SCALAR]; /* cpu, memory, ephemeral-storage */
	int64_t used[R_FIRST_SCALAR];
	struct pscalar *sc; /* the extended resources of its allocatable, by index */
	size_t n_sc;
	int64_t nz_cpu, nz_mem; /* non-zero requested, for LeastAllocated */
	int64_t n_pods, max_pods;
};

struct preq {
	size_t res;
	int64_t v;
	const char
		*dra_class; /* the DeviceClass serving it by DRA where a node lacks it, or NULL */
};

/*
 * The pod's DynamicResources claim for the requests a node lacks: bit k of
 * `lacks` is the k-th request that a DeviceClass serves.
 */
struct pclaim {
	uint64_t lacks;
	json_t *claim;
};

struct ppod {
	const json_t *obj;
	json_t *requests;
	struct preq *req;
	size_t n_req;
	int64_t cpu, mem;	/* actual requests (BalancedAllocation) */
	int64_t nz_cpu, nz_mem; /* with the scheduler's defaults for a missing one */
	bool has_request;	/* NodeResourcesFit looks at resources at all */
	bool dra_ext;		/* some request may be served by DRA (DRAExtendedResource) */
	size_t cls;
	struct pclaim *dra_claims; /* the claims dra_fits made for it, one per set of lacks */
	size_t n_dra_claims;
	bool claims_read; /* dra_pod holds its spec.resourceClaims (plan_dra) */
	struct plan_dra_pod dra_pod;
};

struct pclass {
	json_t *spec;	     /* of the first pod of the class (a reference: the pod may go) */
	unsigned char *code; /* per node: enum static_code, ST_UNKNOWN until computed;
				NULL while the class holds no per-node verdicts */
	int64_t *pref;	     /* preferred node affinity weight sum */
	int64_t *ptaint;     /* untolerated PreferNoSchedule taints */
};

/* Per-node class verdicts kept at once, in nodes x classes (17 bytes each). */
#define CLASS_CELLS (1u << 20)

struct plan {
	struct plan_input in; /* in.pods unused: plan_add gives them */
	struct pnode *nodes;
	size_t n_nodes;
	json_t *res_index; /* name -> index */
	char **res_names;
	size_t n_res;
	size_t n_res_nodes; /* names known when the nodes were filled: only these have nodes */
	size_t **by_res;    /* per scalar resource < n_res_nodes: the nodes advertising it */
	size_t *n_by_res;
	struct ppod *existing; /* the pods already bound (obj NULL: they may be gone) */
	long *existing_node;   /* the node of each */
	size_t n_existing, cap_existing, n_existing_read;
	struct explain_quota_sum *quota_sum; /* until plan_start */
	bool quota_failed;		     /* quota_err is to be said at plan_start */
	struct gs_error quota_err;
	bool started;
	struct plan_result *r; /* the outcomes so far */
	size_t cap_pods;
	json_t *class_index; /* key -> index */
	struct pclass *classes;
	size_t n_classes;
	size_t *live; /* a ring of the classes holding per-node verdicts, oldest first */
	size_t n_live, live_head, max_live;
	char *advertised;   /* "; the nodes advertise a, b": the hints' tail, made once */
	json_t *quotas;	    /* namespace -> ResourceQuotaList (status.used kept current) */
	json_t *node_index; /* name -> index */
	size_t *scratch;    /* n_nodes + 1 */
	const struct kubeversion *kv;
	struct plan_select *sel; /* the snapshot's order, the pass's start, the draws */
	json_t *ext_classes;	 /* extended resource name -> DeviceClass name */
	struct draalloc *dra;	 /* the slices' devices (the claims' taken) */
	struct plan_dra *pdra;	 /* the claims pods name or get from templates */
};

const char *plan_verdict_name(enum plan_verdict v)
{
	switch (v) {
	case PLAN_BOUND:
		return "bound";
	case PLAN_PENDING:
		return "pending";
	case PLAN_REFUSED:
		return "refused";
	case PLAN_FAILED:
		return "failed";
	}
	return "?";
}

/* ---- resources ------------------------------------------------------------ */

static size_t res_intern(struct plan *p, const char *name)
{
	json_t *v = json_object_get(p->res_index, name);

	if (v)
		return (size_t)json_integer_value(v);
	p->res_names = gs_xrealloc(p->res_names, (p->n_res + 1) * sizeof(char *));
	p->res_names[p->n_res] = gs_xstrdup(name);
	json_object_set_new(p->res_index, name, json_integer((json_int_t)p->n_res));
	return p->n_res++;
}

/* cpu in millicores, everything else Quantity.Value() (rounded up). */
static int qint(const json_t *v, bool milli, int64_t *out, struct gs_error *err)
{
	struct quantity q;

	if (quantity_from_json(&q, v, err) < 0)
		return -1;
	if ((milli ? quantity_milli_value(&q, out) : quantity_value(&q, out)) < 0) {
		gs_error_set(err, "quantity out of range");
		return -1;
	}
	return 0;
}

/* Defaults for scoring a container that requests no cpu or memory (schedutil). */
#define DEFAULT_MILLI_CPU 100
#define DEFAULT_MEMORY (200LL * 1024 * 1024)

/* The pod with every container lacking a cpu or memory request given the defaults. */
static json_t *with_nonzero_defaults(const json_t *pod)
{
	json_t *copy = json_deep_copy(pod);
	const char *lists[] = {"containers", "initContainers"};
	json_t *spec = json_object_get(copy, "spec");

	for (size_t l = 0; l < 2; l++) {
		json_t *c;
		size_t i;
		json_array_foreach (json_object_get(spec, lists[l]), i, c) {
			if (!json_is_object(c))
				continue;
			json_t *res = json_object_get(c, "resources");
			if (!json_is_object(res)) {
				res = json_object();
				json_object_set_new(c, "resources", res);
			}
			json_t *req = json_object_get(res, "requests");
			json_t *lim = json_object_get(res, "limits");
			if (!json_is_object(req)) {
				req = json_object();
				json_object_set_new(res, "requests", req);
			}
			if (!json_object_get(req, "cpu") && !json_object_get(lim, "cpu"))
				json_object_set_new(req, "cpu", json_string("100m"));
			if (!json_object_get(req, "memory") && !json_object_get(lim, "memory"))
				json_object_set_new(req, "memory", json_string("200Mi"));
		}
	}
	return copy;
}

static int prepare_pod(struct plan *p, const json_t *pod, struct ppod *pp, struct gs_error *err)
{
	const char *k;
	json_t *v, *nz = NULL, *nzpod;

	memset(pp, 0, sizeof(*pp));
	pp->obj = pod;
	if (explain_pod_requests(pod, &pp->requests, err) < 0)
		goto fail;
	pp->req = gs_xcalloc(json_object_size(pp->requests) + 1, sizeof(*pp->req));
	json_object_foreach (pp->requests, k, v) {
		int64_t n;
		if (qint(v, !strcmp(k, "cpu"), &n, err) < 0) {
			gs_error_prefix(err, "%s: ", k);
			goto fail;
		}
		if (!strcmp(k, "pods"))
			continue;
		size_t r = res_intern(p, k);
		const char *cls = json_string_value(json_object_get(p->ext_classes, k));
		pp->req[pp->n_req++] = (struct preq){r, n, cls};
		if (cls && n > 0)
			pp->dra_ext = true;
		if (r == R_CPU)
			pp->cpu = n;
		else if (r == R_MEM)
			pp->mem = n;
		pp->has_request = true;
	}
	nzpod = with_nonzero_defaults(pod);
	int r = explain_pod_requests(nzpod, &nz, err);
	json_decref(nzpod);
	if (r < 0 || qint(json_object_get(nz, "cpu"), true, &pp->nz_cpu, err) < 0 ||
	    qint(json_object_get(nz, "memory"), false, &pp->nz_mem, err) < 0)
		goto fail;
	json_decref(nz);
	return 0;
fail:
	json_decref(nz);
	gs_error_prefix(err, "pod %s/%s: ", kobj_text(pod, "metadata.namespace"),
			kobj_text(pod, "metadata.name"));
	return -1;
}

static void ppod_release(struct ppod *pp)
{
	json_decref(pp->requests);
	free(pp->req);
	for (size_t i = 0; i < pp->n_dra_claims; i++)
		json_decref(pp->dra_claims[i].claim);
	free(pp->dra_claims);
	if (pp->claims_read)
		plan_dra_pod_release(&pp->dra_pod);
}

/* ---- scheduling classes ----------------------------------------------------- */

/* Preferred node affinity: the summed weights of the terms that select the node. */
static int64_t preferred_weight(const json_t *spec, const json_t *node)
{
	const json_t *terms = json_object_get(kobj_get(spec, "affinity.nodeAffinity"),
					      "preferredDuringSchedulingIgnoredDuringExecution");
	const json_t *t;
	size_t i;
	int64_t sum = 0;

	json_array_foreach (terms, i, t) {
		const json_t *pref = json_object_get(t, "preference");
		char *why = explain_term_mismatch(pref, node);
		if (!why)
			sum += json_integer_value(json_object_get(t, "weight"));
		free(why);
	}
	return sum;
}

#define ST_UNKNOWN 0xff

static void class_detach(struct pclass *c)
{
	free(c->code);
	free(c->pref);
	free(c->ptaint);
	c->code = NULL;
	c->pref = c->ptaint = NULL;
}

/*
 * Give class idx its per-node arrays (every node's verdict unknown) unless
 * it has them; when max_live classes have theirs, the oldest gives them up.
 */
static void class_attach(struct plan *p, size_t idx)
{
	struct pclass *c = &p->classes[idx];
	size_t n = p->n_nodes;

	if (c->code)
		return;
	if (p->n_live == p->max_live) {
		class_detach(&p->classes[p->live[p->live_head]]);
		p->live[p->live_head] = idx;
		p->live_head = (p->live_head + 1) % p->max_live;
	} else {
		p->live[(p->live_head + p->n_live++) % p->max_live] = idx;
	}
	c->code = gs_xmalloc(n + 1);
	memset(c->code, ST_UNKNOWN, n + 1);
	c->pref = gs_xcalloc(n + 1, sizeof(int64_t));
	c->ptaint = gs_xcalloc(n + 1, sizeof(int64_t));
}

/* The class's filters and label scores on node i, computed on first use. */
static unsigned char class_code(struct pclass *c, const struct pnode *nodes, size_t i)
{
	if (c->code[i] != ST_UNKNOWN)
		return c->code[i];
	const json_t *spec = c->spec, *tols = json_object_get(spec, "tolerations");
	const json_t *node = nodes[i].obj, *nspec = json_object_get(node, "spec"), *t;
	size_t j;

	c->code[i] = ST_PASS;
	json_array_foreach (json_object_get(nspec, "taints"), j, t)
		if (!strcmp(kobj_text(t, "effect"), "PreferNoSchedule") &&
		    !explain_tolerates(tols, t))
			c->ptaint[i]++;
	c->pref[i] = preferred_weight(spec, node);
	if (json_is_true(json_object_get(nspec, "unschedulable"))) {
		json_t *unsched = json_pack("{s:s,s:s}", "key", "node.kubernetes.io/unschedulable",
					    "effect", "NoSchedule");
		bool tolerated = explain_tolerates(tols, unsched);
		json_decref(unsched);
		if (!tolerated)
			return c->code[i] = ST_UNSCHEDULABLE;
	}
	json_array_foreach (json_object_get(nspec, "taints"), j, t) {
		const char *eff = kobj_text(t, "effect");
		if ((!strcmp(eff, "NoSchedule") || !strcmp(eff, "NoExecute")) &&
		    !explain_tolerates(tols, t))
			return c->code[i] = ST_TAINT;
	}
	char *why = explain_selector_mismatch(spec, node);
	if (why)
		c->code[i] = ST_AFFINITY;
	free(why);
	return c->code[i];
}

static size_t class_of(struct plan *p, const json_t *pod)
{
	const json_t *spec = json_object_get(pod, "spec");
	json_t *key = json_pack("{s:O?,s:O?,s:O?}", "s", json_object_get(spec, "nodeSelector"), "a",
				json_object_get(spec, "affinity"), "t",
				json_object_get(spec, "tolerations"));
	char *text = json_dumps(key, JSON_COMPACT | JSON_SORT_KEYS);
	json_t *have = json_object_get(p->class_index, text);
	size_t idx;

	if (have) {
		idx = (size_t)json_integer_value(have);
	} else {
		idx = p->n_classes++;
		p->classes = gs_xrealloc(p->classes, p->n_classes * sizeof(*p->classes));
		memset(&p->classes[idx], 0, sizeof(p->classes[idx]));
		p->classes[idx].spec = json_incref(json_object_get(pod, "spec"));
		json_object_set_new(p->class_index, text, json_integer((json_int_t)idx));
	}
	class_attach(p, idx);
	free(text);
	json_decref(key);
	return idx;
}

/* ---- filters and scores ------------------------------------------------------ */

/* Reason ids for the FitError histogram: the static codes, then Too many pods. */
enum { RS_TOO_MANY = 4, RS_DRA = 5, RS_DRA_UNAVAILABLE = 6, RS_N = 7 };

/* The pod's own claims passed PreEnqueue and PreFilter: DynamicResources filters them. */
static bool has_claims(const struct ppod *pp)
{
	return pp->claims_read && pp->dra_pod.n && !pp->dra_pod.reject;
}

/* The node's entry for extended resource r, NULL when its allocatable lacks it. */
static struct pscalar *scalar_of(const struct pnode *n, size_t r)
{
	size_t lo = 0, hi = n->n_sc;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (n->sc[mid].res == r)
			return &n->sc[mid];
		if (n->sc[mid].res < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* allocatable and used of resource r on the node (0 for a resource it lacks). */
static void node_res(const struct pnode *n, size_t r, int64_t *alloc, int64_t *used)
{
	const struct pscalar *x;

	if (r < R_FIRST_SCALAR) {
		*alloc = n->alloc[r];
		*used = n->used[r];
		return;
	}
	x = scalar_of(n, r);
	*alloc = x ? x->alloc : 0;
	*used = x ? x->used : 0;
}

/*
 * NodeResourcesFit's Filter; with hist non-NULL, counts Too many pods in
 * hist[RS_TOO_MANY] and each insufficient request i of the pod in
 * per_req[i], and returns whether some insufficiency is beyond the node's
 * allocatable (UnschedulableAndUnresolvable). Returns 0 when the pod fits.
 */
static int fit_check(const struct pnode *n, const struct ppod *pp, size_t *hist, size_t *per_req,
		     bool *unresolvable)
{
	int fails = 0;

	if (n->n_pods + 1 > n->max_pods) {
		fails++;
		if (hist)
			hist[RS_TOO_MANY]++;
	}
	if (!pp->has_request)
		return fails;
	for (size_t i = 0; i < pp->n_req; i++) {
		const struct preq *r = &pp->req[i];
		int64_t alloc, used;
		if (r->v <= 0)
			continue;
		node_res(n, r->res, &alloc, &used);
		if (r->v <= alloc - used || (r->dra_class && alloc <= 0))
			continue; /* the latter is DynamicResources' to judge (dra_fits) */
		fails++;
		if (per_req)
			per_req[i]++;
		if (unresolvable && r->v > alloc)
			*unresolvable = true;
	}
	return fails;
}

/* NodeResourcesFit (LeastAllocated) and BalancedAllocation as p's release scores them. */
static int64_t resource_score(const struct plan *p, const struct pnode *n, const struct ppod *pp)
{
	return plan_resource_score(p->kv, (struct plan_cpumem){n->alloc[R_CPU], n->alloc[R_MEM]},
				   (struct plan_cpumem){n->nz_cpu, n->nz_mem},
				   (struct plan_cpumem){pp->nz_cpu, pp->nz_mem},
				   (struct plan_cpumem){n->used[R_CPU], n->used[R_MEM]},
				   (struct plan_cpumem){pp->cpu, pp->mem});
}

static void consume(struct pnode *n, const struct ppod *pp, int sign)
{
	for (size_t i = 0; i < pp->n_req; i++) {
		size_t r = pp->req[i].res;
		struct pscalar *x;
		if (r < R_FIRST_SCALAR)
			n->used[r] += sign * pp->req[i].v;
		else if ((x = scalar_of(n, r)))
			/* A resource the node lacks stays short there whatever is used. */
			x->used += sign * pp->req[i].v;
	}
	n->nz_cpu += sign * pp->nz_cpu;
	n->nz_mem += sign * pp->nz_mem;
	n->n_pods += sign;
}

static const char *ns_of(const json_t *obj)
{
	const char *ns = kobj_text(obj, "metadata.namespace");
	return *ns ? ns : "default";
}

/*
 * The claim the scheduler makes for pod pp on node n
 * (extendeddynamicresources.go): a request of the serving class per
 * resource n lacks in allocatable, `count` the amount asked.
 */
static json_t *dra_claim(const struct plan *p, const struct ppod *pp, const struct pnode *n)
{
	json_t *reqs = json_array(), *claim;

	for (size_t k = 0; k < pp->n_req; k++) {
		const struct preq *r = &pp->req[k];
		int64_t alloc, used;
		if (!r->dra_class || r->v <= 0)
			continue;
		node_res(n, r->res, &alloc, &used);
		if (alloc > 0)
			continue;
		json_array_append_new(
			reqs, json_pack("{s:s%,s:{s:s,s:s,s:I}}", "name", p->res_names[r->res],
					strlen(p->res_names[r->res]), "exactly", "deviceClassName",
					r->dra_class, "allocationMode", "ExactCount", "count",
					(json_int_t)r->v));
	}
	char *name = gs_xasprintf("%s-extended-resources", kobj_text(pp->obj, "metadata.name"));
	claim = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:{s:o}}}", "apiVersion", "resource.k8s.io/v1",
			  "kind", "ResourceClaim", "metadata", "namespace", ns_of(pp->obj), "name",
			  name, "spec", "devices", "requests", reqs);
	free(name);
	return claim;
}

/*
 * DynamicResources' Filter on node i: the pod's own claims (plan_dra:
 * allocated ones pin it to their node selector, the others are allocated
 * on the node) and, with DRAExtendedResource, the requests node i lacks
 * in allocatable that a DeviceClass serves (extendeddynamicresources.go):
 * one claim for the pod, a request of the class per such resource,
 * allocated from this node's devices together with its own claims. 0 when
 * nothing is delegated on the node or everything fits, else the reason
 * (RS_DRA, RS_DRA_UNAVAILABLE); with commit, the devices are then taken
 * and *allocs (when not NULL) holds the allocations. The extended claim
 * is made once per pod and set of lacking requests (nodes mostly lack the
 * same ones), kept in pp.
 */
static int dra_fits(struct plan *p, struct ppod *pp, size_t i, bool commit, json_t **allocs)
{
	const struct pnode *n = &p->nodes[i];
	json_t *claim = NULL;
	uint64_t lacks = 0;
	size_t rank = 0;
	bool some = false, keep = true;

	for (size_t k = 0; pp->dra_ext && k < pp->n_req; k++) {
		const struct preq *r = &pp->req[k];
		int64_t alloc, used;
		if (!r->dra_class || r->v <= 0)
			continue;
		node_res(n, r->res, &alloc, &used);
		if (alloc <= 0) {
			some = true;
			if (rank < 64)
				lacks |= (uint64_t)1 << rank;
			else
				keep = false; /* past the key's bits: made for this node only */
		}
		rank++;
	}
	if (!some && !has_claims(pp))
		return 0;
	for (size_t k = 0; some && keep && k < pp->n_dra_claims && !claim; k++)
		if (pp->dra_claims[k].lacks == lacks)
			claim = pp->dra_claims[k].claim;
	if (some && !claim) {
		claim = dra_claim(p, pp, n);
		if (keep) {
			pp->dra_claims = gs_xrealloc(
				pp->dra_claims, (pp->n_dra_claims + 1) * sizeof(*pp->dra_claims));
			pp->dra_claims[pp->n_dra_claims++] = (struct pclaim){lacks, claim};
		}
	}
	enum plan_dra_filter v =
		plan_dra_filter(p->dra, &pp->dra_pod, n->obj, claim, commit, allocs);
	if (!keep)
		json_decref(claim);
	return v == PLAN_DRA_FITS ? 0 : v == PLAN_DRA_CANNOT_ALLOCATE ? RS_DRA : RS_DRA_UNAVAILABLE;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "3 Insufficient cpu, 1 node(s) ..." as sortReasonsHistogram joins them. */
static void histogram(struct strbuf *sb, char **items, size_t n)
{
	qsort(items, n, sizeof(*items), cmp_str);
	for (size_t i = 0; i < n; i++) {
		strbuf_addf(sb, "%s%s", i ? ", " : "", items[i]);
		free(items[i]);
	}
}

/* FitError.Error() with DynamicResources' and DefaultPreemption's PostFilter messages. */
static char *fit_error(struct plan *p, struct ppod *pp)
{
	size_t hist[RS_N] = {0}, n_unres = 0;
	size_t *per_req = gs_xcalloc(pp->n_req + 1, sizeof(size_t));
	struct pclass *c = &p->classes[pp->cls];
	struct strbuf sb = STRBUF_INIT;
	char **items = gs_xcalloc(RS_N + pp->n_req + 2, sizeof(char *));
	size_t ni = 0;

	if (!p->n_nodes) {
		free(per_req);
		free(items);
		return gs_xstrdup("no nodes available to schedule pods");
	}
	/* DynamicResources' PreFilter refused it: its message alone, every node unresolvable. */
	bool prefilter = pp->claims_read && pp->dra_pod.reject == PLAN_DRA_PREFILTER;
	for (size_t i = 0; i < p->n_nodes && prefilter; i++)
		n_unres++;
	for (size_t i = 0; i < p->n_nodes && !prefilter; i++) {
		unsigned char code = class_code(c, p->nodes, i);
		if (code != ST_PASS) {
			hist[code]++;
			n_unres++;
			continue;
		}
		bool unres = false;
		int dra;
		if (!fit_check(&p->nodes[i], pp, hist, per_req, &unres) &&
		    (dra = dra_fits(p, pp, i, false, NULL))) {
			/* statusUnschedulable: UnschedulableAndUnresolvable */
			hist[dra]++;
			unres = true;
		}
		n_unres += unres;
	}
	for (size_t r = 1; r < RS_N; r++) {
		if (!hist[r])
			continue;
		if (r < RS_TOO_MANY)
			items[ni++] = gs_xasprintf("%zu %s", hist[r], static_reason[r]);
		else if (r == RS_TOO_MANY)
			items[ni++] = gs_xasprintf("%zu Too many pods", hist[r]);
		else if (r == RS_DRA)
			items[ni++] = gs_xasprintf("%zu cannot allocate all claims", hist[r]);
		else
			items[ni++] = gs_xasprintf("%zu resourceclaim not available on the node",
						   hist[r]);
	}
	/* A pod's requests name distinct resources. */
	for (size_t i = 0; i < pp->n_req; i++)
		if (per_req[i])
			items[ni++] = gs_xasprintf("%zu Insufficient %s", per_req[i],
						   p->res_names[pp->req[i].res]);
	strbuf_addf(&sb, "0/%zu nodes are available: ", p->n_nodes);
	if (prefilter)
		strbuf_addstr(&sb, pp->dra_pod.message);
	histogram(&sb, items, ni);
	/* DynamicResources' PostFilter message, then DefaultPreemption's. */
	const char *pf = pp->dra_ext || has_claims(pp) ? p->kv->postfilter_still
						       : p->kv->postfilter_no_claims;
	if (has_claims(pp) && plan_dra_deallocates(&pp->dra_pod, pp->obj))
		pf = p->kv->postfilter_deallocated;
	strbuf_addf(&sb, ". %s%spreemption: 0/%zu nodes are available: ", pf ? pf : "",
		    pf ? ", " : "", p->n_nodes);
	ni = 0;
	if (p->n_nodes - n_unres)
		items[ni++] = gs_xasprintf("%zu No preemption victims found for incoming pod",
					   p->n_nodes - n_unres);
	if (n_unres)
		items[ni++] = gs_xasprintf("%zu Preemption is not helpful for scheduling", n_unres);
	histogram(&sb, items, ni);
	strbuf_addstr(&sb, ".");
	free(per_req);
	free(items);
	return strbuf_detach(&sb, NULL);
}

/*
 * The candidate nodes: those advertising the rarest extended resource asked
 * for (in the snapshot's order), else all (list NULL).
 */
static void candidates(const struct plan *p, const struct ppod *pp, const size_t **list, size_t *n)
{
	bool some = false;

	*list = NULL;
	*n = p->n_nodes;
	if (pp->dra_ext)
		return; /* a node lacking the resource may serve it by DRA */
	for (size_t i = 0; i < pp->n_req; i++) {
		size_t r = pp->req[i].res;
		if (r < R_FIRST_SCALAR || pp->req[i].v <= 0)
			continue;
		/* A resource no node has: no candidate (list NULL, n 0). */
		size_t have = r < p->n_res_nodes ? p->n_by_res[r] : 0;
		if (!some || have < *n) {
			*list = have ? p->by_res[r] : NULL;
			*n = have;
			some = true;
		}
	}
}

/* ---- quotas -------------------------------------------------------------------- */

/* status.used += sign * usage, for the keys each quota limits. */
static int quota_charge(json_t *list, const json_t *usage, int sign, struct gs_error *err)
{
	json_t *q;
	size_t i;

	json_array_foreach (json_object_get(list, "items"), i, q) {
		json_t *st = json_object_get(q, "status");
		json_t *used = json_object_get(st, "used");
		const char *k;
		json_t *v;
		json_object_foreach (json_object_get(st, "hard"), k, v) {
			const json_t *add = json_object_get(usage, k);
			struct quantity a, b, sum;
			char buf[QUANTITY_STR_MAX];
			if (!add)
				continue;
			if (quantity_from_json(&a, json_object_get(used, k), err) < 0 ||
			    quantity_from_json(&b, add, err) < 0)
				return -1;
			if (sign < 0 && !quantity_is_zero(&b))
				b.negative = !b.negative;
			b.text[0] = '\0';
			if (quantity_add(&sum, &a, &b, err) < 0)
				return -1;
			json_object_set_new(used, k,
					    json_string(quantity_string(&sum, buf, sizeof(buf))));
		}
	}
	return 0;
}

static int quotas_init(struct plan *p, struct gs_error *err)
{
	int rc = explain_quota_sum_lists(p->quota_sum, &p->quotas, err);

	explain_quota_sum_free(p->quota_sum);
	p->quota_sum = NULL;
	return rc;
}

/* 1 and *msg when a quota refuses the pod, 0 when admitted (and charged). */
static int quota_admit(struct plan *p, const json_t *pod, json_t **usage, char **msg,
		       struct gs_error *err)
{
	json_t *list = json_object_get(p->quotas, ns_of(pod));
	struct explain_quota_report *qr = NULL;
	int rc = 0;

	*msg = NULL;
	*usage = NULL;
	if (!list)
		return 0;
	if (explain_quota_pod(list, pod, &qr, err) < 0)
		return -1;
	*usage = json_incref(qr->usage);
	for (size_t i = 0; i < qr->n; i++) {
		if (qr->quotas[i].verdict == EXPLAIN_REFUSE) {
			*msg = gs_xasprintf("pods \"%s\" is forbidden: %s",
					    kobj_text(pod, "metadata.name"), qr->quotas[i].message);
			rc = 1;
			break;
		}
	}
	explain_quota_report_free(qr);
	if (rc == 0 && quota_charge(list, *usage, 1, err) < 0)
		return -1;
	return rc;
}

/* ---- the run ----------------------------------------------------------------------- */

static int nodes_init(struct plan *p, struct gs_error *err)
{
	const json_t *items = json_object_get(p->in.nodes, "items"), *node;
	size_t i;

	if (!json_is_array(items)) {
		gs_error_set(err, "the node list has no items");
		return -1;
	}
	if (json_array_size(items) > PLAN_MAX_NODES) {
		gs_error_set(err, "more than %d nodes", PLAN_MAX_NODES);
		return -1;
	}
	p->n_nodes = json_array_size(items);
	p->nodes = gs_xcalloc(p->n_nodes + 1, sizeof(*p->nodes));
	json_array_foreach (items, i, node) {
		const char *k;
		json_t *v;
		p->nodes[i].obj = node;
		p->nodes[i].name = kobj_text(node, "metadata.name");
		if (!json_object_get(p->node_index, p->nodes[i].name))
			json_object_set_new(p->node_index, p->nodes[i].name,
					    json_integer((json_int_t)i));
		json_object_foreach ((json_t *)kobj_get(node, "status.allocatable"), k, v)
			if (strcmp(k, "pods"))
				res_intern(p, k);
	}
	return 0;
}

static int cmp_scalar(const void *a, const void *b)
{
	const struct pscalar *x = a, *y = b;
	return x->res < y->res ? -1 : x->res > y->res;
}

/* After every name is interned: each node's resources and the per-resource index. */
static int nodes_fill(struct plan *p, struct gs_error *err)
{
	p->scratch = gs_xcalloc(p->n_nodes + 1, sizeof(size_t));
	p->by_res = gs_xcalloc(p->n_res + 1, sizeof(*p->by_res));
	p->n_by_res = gs_xcalloc(p->n_res + 1, sizeof(*p->n_by_res));
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct pnode *n = &p->nodes[i];
		const json_t *alloc = kobj_get(n->obj, "status.allocatable");
		const char *k;
		json_t *v;
		n->sc = gs_xcalloc(json_object_size(alloc) + 1, sizeof(*n->sc));
		n->max_pods = 110;
		json_object_foreach ((json_t *)alloc, k, v) {
			int64_t x;
			if (qint(v, !strcmp(k, "cpu"), &x, err) < 0) {
				gs_error_prefix(err, "node %s: allocatable %s: ", n->name, k);
				return -1;
			}
			if (!strcmp(k, "pods")) {
				n->max_pods = x;
				continue;
			}
			size_t r = res_intern(p, k);
			if (r < R_FIRST_SCALAR)
				n->alloc[r] = x;
			else
				n->sc[n->n_sc++] = (struct pscalar){r, x, 0};
		}
		qsort(n->sc, n->n_sc, sizeof(*n->sc), cmp_scalar);
		for (size_t j = 0; j < n->n_sc; j++)
			p->n_by_res[n->sc[j].res] += n->sc[j].alloc > 0;
	}
	p->n_res_nodes = p->n_res;
	for (size_t r = R_FIRST_SCALAR; r < p->n_res; r++)
		if (p->n_by_res[r])
			p->by_res[r] = gs_xmalloc(p->n_by_res[r] * sizeof(size_t));
	memset(p->n_by_res, 0, (p->n_res + 1) * sizeof(*p->n_by_res));
	/* In the snapshot's order, as the filter pass reads them. */
	for (size_t k = 0; k < p->n_nodes; k++)
		for (size_t i = plan_select_node_at(p->sel, k), j = 0; j < p->nodes[i].n_sc; j++) {
			const struct pscalar *x = &p->nodes[i].sc[j];
			if (x->alloc > 0)
				p->by_res[x->res][p->n_by_res[x->res]++] = i;
		}
	return 0;
}

static long node_index(const struct plan *p, const char *name)
{
	const json_t *v = json_object_get(p->node_index, name);

	return v ? (long)json_integer_value(v) : -1;
}

static bool terminal(const json_t *pod)
{
	const char *phase = kobj_text(pod, "status.phase");
	return !strcmp(phase, "Succeeded") || !strcmp(phase, "Failed");
}

static void requests_text(struct plan_pod *out, const struct ppod *pp)
{
	const char *k;
	json_t *v;

	out->requests = gs_xcalloc(json_object_size(pp->requests) + 1, sizeof(char *));
	json_object_foreach (pp->requests, k, v)
		out->requests[out->n_requests++] = gs_xasprintf("%s=%s", k, json_string_value(v));
	qsort(out->requests, out->n_requests, sizeof(char *), cmp_str);
}

static void first_failure(void *ctx, const struct explain_admission_fail *f)
{
	char **msg = ctx;

	if (!*msg)
		*msg = explain_admission_message(f);
}

/* Schedule one pod (quota already passed); fills verdict, node, reason, feasible. */
static void schedule(struct plan *p, struct ppod *pp, struct plan_pod *out)
{
	const size_t *list;
	size_t n, best_n = 0, i;
	struct pclass *c = &p->classes[pp->cls];
	int64_t max_taint = 0, max_pref = 0, best = INT64_MIN;
	struct plan_walk w;

	candidates(p, pp, &list, &n);
	/* The feasible nodes for scoring, in the pass's order; the outcome keeps the first few. */
	size_t *feasible = p->scratch;
	plan_walk_begin(&w, p->sel, list, n);
	while (plan_walk_next(&w, &i)) {
		if (class_code(c, p->nodes, i) != ST_PASS ||
		    fit_check(&p->nodes[i], pp, NULL, NULL, NULL) ||
		    dra_fits(p, pp, i, false, NULL))
			continue;
		if (!plan_walk_take(&w))
			break;
		feasible[out->n_feasible++] = i;
		if (c->ptaint[i] > max_taint)
			max_taint = c->ptaint[i];
		if (c->pref[i] > max_pref)
			max_pref = c->pref[i];
	}
	out->start = w.start;
	plan_walk_end(&w, p->sel);
	out->evaluated = w.processed;
	out->sampled = w.stopped;
	out->n_feasible_listed =
		out->n_feasible < PLAN_MAX_LISTED ? out->n_feasible : PLAN_MAX_LISTED;
	out->feasible = gs_xmalloc((out->n_feasible_listed + 1) * sizeof(size_t));
	memcpy(out->feasible, feasible, out->n_feasible_listed * sizeof(size_t));
	if (!out->n_feasible) {
		out->verdict = PLAN_PENDING;
		out->reason = fit_error(p, pp);
		return;
	}
	/* In place: the tied nodes so far are a prefix of what was read. */
	size_t *tied = p->scratch;
	for (size_t j = 0; j < out->n_feasible && out->n_feasible > 1; j++) {
		i = feasible[j];
		int64_t taint = max_taint ? 100 - 100 * c->ptaint[i] / max_taint : 100;
		int64_t aff = max_pref ? 100 * c->pref[i] / max_pref : 0;
		int64_t total = resource_score(p, &p->nodes[i], pp) + 3 * taint + 2 * aff;
		if (total > best) {
			best = total;
			best_n = 0;
		}
		if (total == best)
			tied[best_n++] = i;
	}
	if (out->n_feasible == 1)
		best_n = 1; /* tied[0] is feasible[0]; schedulePod binds it unscored */
	size_t pick = plan_select_tie(p->sel, best_n, p->in.sched.ties_first);
	out->n_tied = best_n;
	out->n_tied_listed = best_n < PLAN_MAX_LISTED ? best_n : PLAN_MAX_LISTED;
	out->tied = gs_xmalloc((out->n_tied_listed + 1) * sizeof(size_t));
	/* The chosen one first, then the others in the pass's order. */
	out->tied[0] = tied[pick];
	for (size_t j = 0, k = 1; k < out->n_tied_listed; j++)
		if (j != pick)
			out->tied[k++] = tied[j];
	size_t chosen = out->tied[0];
	char *sample = out->sampled ? gs_xasprintf(" in the scheduler's sample (%zu of %zu nodes "
						   "read, from #%zu of its order)",
						   out->evaluated, p->n_nodes, out->start)
				    : gs_xstrdup("");
	if (out->n_feasible == 1)
		out->reason = gs_xasprintf("the only feasible node%s", sample);
	else if (best_n == 1)
		out->reason = gs_xasprintf("the highest score (%lld) of %zu feasible nodes%s",
					   (long long)best, out->n_feasible, sample);
	else
		out->reason = gs_xasprintf("%zu of %zu feasible nodes%s tie at score %lld: %s",
					   best_n, out->n_feasible, sample, (long long)best,
					   p->in.sched.ties_first
						   ? "the first in the scheduler's node order"
						   : "one drawn at random, as the scheduler does");
	free(sample);
	out->verdict = PLAN_BOUND;
	out->node = gs_xstrdup(p->nodes[chosen].name);
}

/* PENDING: the nvidia.com/ names asked for that no node advertises, and what is advertised. */
static void unadvertised_hints(struct plan *p, const struct ppod *pp, struct plan_pod *out)
{
	for (size_t i = 0; i < pp->n_req; i++) {
		size_t r = pp->req[i].res;
		const char *name = p->res_names[r];
		if (r < R_FIRST_SCALAR || pp->req[i].v <= 0 ||
		    (r < p->n_res_nodes && p->n_by_res[r]) || strncmp(name, "nvidia.com/", 11))
			continue;
		if (!p->advertised) {
			/* What the fleet advertises is the same for every pod: once. */
			const char **have = gs_xcalloc(p->n_res + 1, sizeof(char *));
			size_t n = 0;
			struct strbuf sb = STRBUF_INIT;
			for (size_t k = R_FIRST_SCALAR; k < p->n_res_nodes; k++)
				if (p->n_by_res[k] && !strncmp(p->res_names[k], "nvidia.com/", 11))
					have[n++] = p->res_names[k];
			qsort(have, n, sizeof(*have), cmp_str);
			for (size_t k = 0; k < n; k++)
				strbuf_addf(&sb, "%s%s", k ? ", " : "; the nodes advertise ",
					    have[k]);
			free(have);
			p->advertised = strbuf_detach(&sb, NULL);
		}
		out->hints = gs_xrealloc(out->hints, (out->n_hints + 1) * sizeof(char *));
		out->hints[out->n_hints++] =
			gs_xasprintf("no node advertises %s%s", name, p->advertised);
	}
}

/* The kubelet's admission on the node: FAILED with its message, else nothing. */
static bool kubelet_refuses(struct plan *p, const json_t *pod, size_t node, struct plan_pod *out)
{
	char *msg = NULL;

	explain_admission_failures(p->in.configs, p->nodes[node].obj, pod, first_failure, &msg);
	if (!msg)
		return false;
	free(out->reason);
	out->reason = msg;
	out->status_reason = gs_xstrdup("UnexpectedAdmissionError");
	out->verdict = PLAN_FAILED;
	return true;
}

/* The device manager's count of one pinned pod on one node (devicewalk). */
struct pinned_walk {
	const struct plan *p;
	size_t at;
	int64_t *taken; /* per resource: devices the pod's containers took so far (lazily) */
	struct plan_pod *out;
};

/* The nvidia.com/ resources the node shows above 0: a device plugin serves them. */
static bool pinned_serves(void *arg, const char *res)
{
	const struct pinned_walk *w = arg;
	const json_t *v = json_object_get(w->p->res_index, res);
	int64_t alloc, used;

	if (!v || strncmp(res, "nvidia.com/", 11))
		return false;
	node_res(&w->p->nodes[w->at], (size_t)json_integer_value(v), &alloc, &used);
	return alloc > 0;
}

/* devicesToAllocate's refusal when the container needs more than the node has free. */
static int pinned_step(void *arg, const struct devicewalk_step *st)
{
	struct pinned_walk *w = arg;
	size_t r = (size_t)json_integer_value(json_object_get(w->p->res_index, st->resource));
	int64_t alloc, used, free_n;

	if (!w->taken)
		w->taken = gs_xcalloc(w->p->n_res, sizeof(*w->taken));
	node_res(&w->p->nodes[w->at], r, &alloc, &used);
	free_n = alloc - used - w->taken[r];
	if (st->fresh > free_n) {
		free(w->out->reason);
		w->out->reason = gs_xasprintf(
			"Allocate failed due to requested number of devices unavailable for %s. "
			"Requested: %lld, Available: %lld, which is unexpected",
			st->resource, (long long)st->fresh, (long long)(free_n < 0 ? 0 : free_n));
		w->out->status_reason = gs_xstrdup("UnexpectedAdmissionError");
		return 1;
	}
	w->taken[r] += st->fresh;
	return 0;
}

/*
 * The device manager's Allocate for the nvidia.com/ resources of a pod
 * bound as written (devicewalk). Fills the refusal and returns true when
 * some container finds too few devices.
 */
static bool devices_short(const struct plan *p, const struct ppod *pp, size_t at,
			  struct plan_pod *out)
{
	struct pinned_walk w = {p, at, NULL, out};
	/* The pod's requests were read already: an unreadable limit asks nothing. */
	int rc = devicewalk_pod(pp->obj, pinned_serves, pinned_step, &w, NULL);

	free(w.taken);
	return rc > 0;
}

/* InsufficientResourceError as the kubelet words it; its reason is OutOf + the name. */
static void out_of(struct plan_pod *out, const char *res, int64_t asked, int64_t used, int64_t cap)
{
	free(out->reason);
	out->reason = gs_xasprintf("Node didn't have enough resource: %s, requested: %lld, used: "
				   "%lld, capacity: %lld",
				   res, (long long)asked, (long long)used, (long long)cap);
	out->status_reason = gs_xasprintf("OutOf%s", res);
}

/*
 * A pod bound as written meets no scheduler, only its node's kubelet
 * (k8s.io/kubernetes v1.34 pkg/kubelet): the device manager allocates the
 * nvidia.com/ resources first, then the predicate admit handler runs
 * generalFilter: pods, cpu, memory, ephemeral-storage and the other
 * extended resources the node lists (one it does not list is dropped,
 * removeMissingExtendedResources), then node affinity, then NoExecute
 * taints; the first failure is the pod's reason. True when refused.
 */
static bool kubelet_refuses_pinned(struct plan *p, const struct ppod *pp, size_t at,
				   struct plan_pod *out)
{
	const struct pnode *n = &p->nodes[at];
	const json_t *spec = json_object_get(pp->obj, "spec"), *nspec, *t;
	char *why;
	size_t j;

	if (devices_short(p, pp, at, out))
		goto refused;
	if (n->n_pods + 1 > n->max_pods) {
		out_of(out, "pods", 1, n->n_pods, n->max_pods);
		goto refused;
	}
	for (size_t i = 0; i < pp->n_req; i++) {
		size_t r = pp->req[i].res;
		int64_t v = pp->req[i].v;
		const char *name = p->res_names[r];
		int64_t alloc, used;

		node_res(n, r, &alloc, &used);
		if (v <= 0 || v <= alloc - used)
			continue;
		/* Served by a device plugin: the allocation above is the check. */
		if (r >= R_FIRST_SCALAR && !strncmp(name, "nvidia.com/", 11) && alloc > 0)
			continue;
		if (r >= R_FIRST_SCALAR && strchr(name, '/') &&
		    !json_object_get(kobj_map(n->obj, "status.allocatable"), name))
			continue;
		out_of(out, name, v, used, alloc);
		goto refused;
	}
	why = explain_selector_mismatch(spec, n->obj);
	if (why) {
		free(why);
		free(out->reason);
		out->reason = gs_xstrdup("Predicate NodeAffinity failed: node(s) didn't match "
					 "Pod's node affinity/selector");
		out->status_reason = gs_xstrdup("NodeAffinity");
		goto refused;
	}
	nspec = json_object_get(n->obj, "spec");
	json_array_foreach (json_object_get(nspec, "taints"), j, t)
		if (!strcmp(kobj_text(t, "effect"), "NoExecute") &&
		    !explain_tolerates(json_object_get(spec, "tolerations"), t)) {
			free(out->reason);
			out->reason = gs_xstrdup("Predicate TaintToleration failed: node(s) had "
						 "taints that the pod didn't tolerate");
			out->status_reason = gs_xstrdup("TaintToleration");
			goto refused;
		}
	return false;
refused:
	out->verdict = PLAN_FAILED;
	return true;
}

static void plan_release(struct plan *p)
{
	for (size_t i = 0; i < p->n_nodes; i++)
		free(p->nodes[i].sc);
	free(p->nodes);
	for (size_t r = 0; r < p->n_res; r++) {
		free(p->res_names[r]);
		free(p->by_res && r < p->n_res_nodes ? p->by_res[r] : NULL);
	}
	free(p->res_names);
	free(p->by_res);
	free(p->n_by_res);
	for (size_t c = 0; c < p->n_classes; c++) {
		class_detach(&p->classes[c]);
		json_decref(p->classes[c].spec);
	}
	for (size_t i = 0; i < p->n_existing; i++)
		ppod_release(&p->existing[i]);
	free(p->existing);
	free(p->existing_node);
	explain_quota_sum_free(p->quota_sum);
	plan_result_free(p->r);
	free(p->classes);
	free(p->live);
	free(p->advertised);
	json_decref(p->res_index);
	json_decref(p->class_index);
	json_decref(p->quotas);
	json_decref(p->node_index);
	free(p->scratch);
	json_decref(p->ext_classes);
	draalloc_free(p->dra);
	plan_dra_free(p->pdra);
	plan_select_free(p->sel);
}

static void quota_report(struct plan *p, struct plan_result *r)
{
	const char *ns;
	json_t *list;
	size_t n = 0;

	json_object_foreach (p->quotas, ns, list) {
		json_t *q;
		size_t i;
		json_array_foreach (json_object_get(list, "items"), i, q)
			n += json_object_size(kobj_get(q, "status.hard"));
	}
	r->quotas = gs_xcalloc(n + 1, sizeof(*r->quotas));
	json_object_foreach (p->quotas, ns, list) {
		json_t *q;
		size_t i;
		json_array_foreach (json_object_get(list, "items"), i, q) {
			const json_t *used = kobj_get(q, "status.used");
			const char *k;
			json_t *v;
			json_object_foreach ((json_t *)kobj_get(q, "status.hard"), k, v) {
				struct plan_quota_use *u = &r->quotas[r->n_quotas++];
				struct quantity qq;
				struct gs_error e;
				char buf[QUANTITY_STR_MAX];
				u->namespace = gs_xstrdup(ns);
				u->quota = gs_xstrdup(kobj_text(q, "metadata.name"));
				u->resource = gs_xstrdup(k);
				u->hard =
					gs_xstrdup(quantity_from_json(&qq, v, &e) == 0
							   ? quantity_string(&qq, buf, sizeof(buf))
							   : "?");
				const json_t *uv = json_object_get(used, k);
				u->used =
					gs_xstrdup(uv && quantity_from_json(&qq, uv, &e) == 0
							   ? quantity_string(&qq, buf, sizeof(buf))
							   : "0");
			}
		}
	}
}

void plan_free(struct plan *p)
{
	if (!p)
		return;
	plan_release(p);
	free(p);
}

/* The extended resources DeviceClasses serve (draextended_classes); returns how many. */
static size_t ext_classes_init(struct plan *p)
{
	p->ext_classes = draextended_classes(p->in.device_classes);
	return json_object_size(p->ext_classes);
}

int plan_begin(const struct plan_input *in, struct plan **out, struct gs_error *err)
{
	struct plan *p = gs_xcalloc(1, sizeof(*p));

	*out = NULL;
	p->in = *in;
	p->in.pods = NULL;
	p->in.existing = NULL;
	p->res_index = json_object();
	p->class_index = json_object();
	p->node_index = json_object();
	res_intern(p, "cpu");
	res_intern(p, "memory");
	res_intern(p, "ephemeral-storage");
	p->kv = in->kube ? in->kube : kubeversion_newest();
	/* DRAExtendedResource: the gates if given (read here only), else the release's. */
	bool dra_ext = in->gates ? in->gates->dra_extended_resource : p->kv->dra_extended_resource;
	bool dra_cc =
		in->gates ? in->gates->dra_consumable_capacity : p->kv->dra_consumable_capacity;
	p->in.gates = NULL; /* read here only; the caller's may go */
	if (dra_ext)
		ext_classes_init(p);
	/* DynamicResources: the slices' devices, the allocated claims' taken. */
	p->dra = draalloc_new(in->slices);
	if (!dra_cc)
		draalloc_without_consumable_capacity(p->dra);
	for (size_t i = 0; i < json_array_size(in->claims); i++)
		if (kobj_map(json_array_get(in->claims, i), "status.allocation"))
			draalloc_take(p->dra, json_array_get(in->claims, i));
	/* A caller that gives no DRA objects at all has no view of them: claims unread. */
	if (in->claims || in->claim_templates || in->device_classes || in->slices)
		p->pdra = plan_dra_new(in->claims, in->claim_templates, in->device_classes);
	if (nodes_init(p, err) < 0) {
		plan_free(p);
		return -1;
	}
	p->sel = plan_select_new(json_object_get(in->nodes, "items"), in->sched.percentage,
				 in->sched.seed, in->sched.start);
	p->quota_sum = explain_quota_sum_new(p->in.quotas, NULL);
	*out = p;
	return 0;
}

/* A pod counted against its quotas; an error waits for plan_start (after the nodes'). */
static int quota_sum_add(struct plan *p, const json_t *pod)
{
	if (!p->quota_failed && explain_quota_sum_add(p->quota_sum, pod, &p->quota_err) < 0)
		p->quota_failed = true;
	return 0;
}

int plan_add_existing(struct plan *p, const json_t *pod, struct gs_error *err)
{
	if (p->started) {
		gs_error_set(err, "a pod already there after the plan started");
		return -1;
	}
	if (p->n_existing_read++ >= PLAN_MAX_PODS) {
		gs_error_set(err, "expected a list of at most %d pods", PLAN_MAX_PODS);
		return -1;
	}
	if (!*kobj_text(pod, "spec.nodeName") || terminal(pod))
		return quota_sum_add(p, pod);
	if (p->n_existing == p->cap_existing) {
		p->cap_existing = p->cap_existing ? 2 * p->cap_existing : 64;
		p->existing = gs_xrealloc(p->existing, p->cap_existing * sizeof(*p->existing));
		p->existing_node =
			gs_xrealloc(p->existing_node, p->cap_existing * sizeof(*p->existing_node));
	}
	struct ppod *pp = &p->existing[p->n_existing];
	if (prepare_pod(p, pod, pp, err) < 0) {
		ppod_release(pp);
		return -1;
	}
	/* What consume reads is kept; the pod may go. */
	json_decref(pp->requests);
	pp->requests = NULL;
	pp->obj = NULL;
	p->existing_node[p->n_existing++] = node_index(p, kobj_text(pod, "spec.nodeName"));
	return quota_sum_add(p, pod);
}

int plan_start(struct plan *p, struct gs_error *err)
{
	if (p->started)
		return 0;
	p->started = true;
	if (nodes_fill(p, err) < 0)
		return -1;
	if (p->quota_failed) {
		*err = p->quota_err;
		return -1;
	}
	if (quotas_init(p, err) < 0)
		return -1;
	p->max_live = CLASS_CELLS / (p->n_nodes + 1);
	if (!p->max_live)
		p->max_live = 1;
	p->live = gs_xcalloc(p->max_live, sizeof(size_t));
	for (size_t i = 0; i < p->n_existing; i++)
		if (p->existing_node[i] >= 0)
			consume(&p->nodes[p->existing_node[i]], &p->existing[i], 1);
	p->r = gs_xcalloc(1, sizeof(*p->r));
	p->r->n_nodes = p->n_nodes;
	p->r->nodes = gs_xcalloc(p->n_nodes + 1, sizeof(char *));
	for (size_t i = 0; i < p->n_nodes; i++)
		p->r->nodes[i] = gs_xstrdup(p->nodes[i].name);
	return 0;
}

int plan_new(const struct plan_input *in, struct plan **out, struct gs_error *err)
{
	const json_t *ex_items = in->existing ? json_object_get(in->existing, "items") : NULL;
	struct plan *p;

	*out = NULL;
	if (json_array_size(ex_items) > PLAN_MAX_PODS) {
		gs_error_set(err, "expected a list of at most %d pods", PLAN_MAX_PODS);
		return -1;
	}
	if (plan_begin(in, &p, err) < 0)
		return -1;
	for (size_t i = 0; i < json_array_size(ex_items); i++)
		if (plan_add_existing(p, json_array_get(ex_items, i), err) < 0)
			goto fail;
	if (plan_start(p, err) < 0)
		goto fail;
	*out = p;
	return 0;
fail:
	plan_free(p);
	return -1;
}

/*
 * DynamicResources' PreEnqueue and PreFilter for the pod's own claims
 * (plan_dra_prefilter). False with o pending when they refuse it: a pod
 * PreEnqueue refuses never gets a scheduling cycle (its reason is the
 * plugin's status message); one PreFilter refuses gets the FitError.
 */
static bool dra_prefilter(struct plan *p, struct ppod *pp, struct plan_pod *o)
{
	if (!p->pdra || !json_array_size(kobj_get(pp->obj, "spec.resourceClaims")))
		return true;
	plan_dra_prefilter(p->pdra, pp->obj, &pp->dra_pod);
	pp->claims_read = true;
	if (!pp->dra_pod.reject)
		return true;
	o->verdict = PLAN_PENDING;
	o->reason = pp->dra_pod.reject == PLAN_DRA_PREENQUEUE ? gs_xstrdup(pp->dra_pod.message)
							      : fit_error(p, pp);
	if (pp->dra_pod.hint) {
		o->hints = gs_xrealloc(o->hints, (o->n_hints + 1) * sizeof(char *));
		o->hints[o->n_hints++] = gs_xstrdup(pp->dra_pod.hint);
	}
	return false;
}

/* Reserve on the chosen node: the devices taken, the claims allocated and reserved. */
static void dra_reserve(struct plan *p, struct ppod *pp, size_t at, struct plan_pod *o)
{
	json_t *allocs = NULL;

	dra_fits(p, pp, at, true, &allocs);
	if (has_claims(pp))
		o->claims = plan_dra_reserve(p->pdra, &pp->dra_pod, pp->obj, allocs);
	json_decref(allocs);
}

/*
 * The scheduler (or spec.nodeName) and the kubelet for a pod the quotas
 * admitted, `usage` what they charged for it (NULL: none): the outcome in o;
 * a bound pod takes its node's resources.
 */
static int bind_pod(struct plan *p, struct ppod *pp, struct plan_pod *o, const json_t *usage,
		    struct gs_error *err)
{
	const char *nn = kobj_text(pp->obj, "spec.nodeName");
	long at = -1;
	if (*nn) {
		/* Not the scheduler's: bound as written, the kubelet still admits it. */
		at = node_index(p, nn);
		o->verdict = at >= 0 ? PLAN_BOUND : PLAN_PENDING;
		o->node = at >= 0 ? gs_xstrdup(nn) : NULL;
		o->reason = gs_xstrdup(at >= 0 ? "spec.nodeName: bound as written, "
						 "without the scheduler"
					       : "spec.nodeName names no node");
	} else {
		pp->cls = class_of(p, pp->obj);
		if (dra_prefilter(p, pp, o))
			schedule(p, pp, o);
		if (o->verdict == PLAN_PENDING)
			unadvertised_hints(p, pp, o);
		if (o->verdict == PLAN_BOUND)
			at = node_index(p, o->node);
	}
	if (at >= 0 && ((*nn && kubelet_refuses_pinned(p, pp, (size_t)at, o)) ||
			kubelet_refuses(p, pp->obj, (size_t)at, o))) {
		/* Failed is terminal: it holds neither the node nor the quota. */
		if (usage &&
		    quota_charge(json_object_get(p->quotas, o->namespace), usage, -1, err) < 0)
			return -1;
	} else if (at >= 0) {
		consume(&p->nodes[at], pp, 1);
		if (!*nn)
			dra_reserve(p, pp, (size_t)at, o);
	}
	if (has_claims(pp) && !o->claims) {
		o->claims = plan_dra_unbound_json(&pp->dra_pod);
		if (o->verdict == PLAN_PENDING)
			plan_dra_why(p->dra, &pp->dra_pod, PLAN_MAX_LISTED, &o->hints, &o->n_hints);
	}
	return 0;
}

/* Quota admission, the scheduler, the kubelet: the pod's outcome in o. */
static int place(struct plan *p, struct ppod *pp, struct plan_pod *o, struct gs_error *err)
{
	json_t *usage = NULL;
	char *msg = NULL;
	int q = quota_admit(p, pp->obj, &usage, &msg, err);

	if (q < 0) {
		gs_error_prefix(err, "pod %s/%s: ", o->namespace, o->name);
		json_decref(usage);
		return -1;
	}
	if (q > 0) {
		o->verdict = PLAN_REFUSED;
		o->reason = msg;
		json_decref(usage);
		return 0;
	}
	int rc = bind_pod(p, pp, o, usage, err);
	json_decref(usage);
	return rc;
}

int plan_add(struct plan *p, const json_t *pod, struct gs_error *err)
{
	struct plan_result *r;
	struct ppod pp;
	char *invalid = NULL; /* the apiserver's refusal at create */
	int rc;

	if (!p->started && plan_start(p, err) < 0)
		return -1;
	r = p->r;

	if (r->n_pods >= PLAN_MAX_PODS) {
		gs_error_set(err, "expected a list of at most %d pods", PLAN_MAX_PODS);
		return -1;
	}
	/* The apiserver's validation comes first: a pod it refuses never exists. */
	if (podvalidate_refusal(pod, NULL, &invalid, err) < 0) {
		gs_error_prefix(err, "pod %s/%s: ", ns_of(pod), kobj_text(pod, "metadata.name"));
		return -1;
	}
	if (!invalid && prepare_pod(p, pod, &pp, err) < 0) {
		ppod_release(&pp);
		return -1;
	}
	if (r->n_pods == p->cap_pods) {
		p->cap_pods = p->cap_pods ? 2 * p->cap_pods : 64;
		r->pods = gs_xrealloc(r->pods, p->cap_pods * sizeof(*r->pods));
	}
	struct plan_pod *o = &r->pods[r->n_pods++];
	memset(o, 0, sizeof(*o));
	o->namespace = gs_xstrdup(ns_of(pod));
	o->name = gs_xstrdup(kobj_text(pod, "metadata.name"));
	if (invalid) {
		/* It holds no quota, node or GPU. */
		o->verdict = PLAN_REFUSED;
		o->reason = invalid;
		return 0;
	}
	requests_text(o, &pp);
	rc = place(p, &pp, o, err);
	ppod_release(&pp);
	return rc;
}

/* ---- pods that come and go --------------------------------------------------------- */

const struct plan_pod *plan_outcome(const struct plan *p, size_t i)
{
	return p->r && i < p->r->n_pods ? &p->r->pods[i] : NULL;
}

/* Pod i's outcome, checked to be `pod`'s. */
static int outcome_of(struct plan *p, size_t i, const json_t *pod, struct plan_pod **o,
		      struct gs_error *err)
{
	const char *name = kobj_text(pod, "metadata.name");

	if (!p->r || i >= p->r->n_pods) {
		gs_error_set(err, "pod %s/%s: the plan has no pod %zu", ns_of(pod), name, i);
		return -1;
	}
	*o = &p->r->pods[i];
	if (strcmp((*o)->name, name) || strcmp((*o)->namespace, ns_of(pod))) {
		gs_error_set(err, "pod %s/%s: pod %zu of the plan is %s/%s", ns_of(pod), name, i,
			     (*o)->namespace, (*o)->name);
		return -1;
	}
	return 0;
}

/* What the pod's quotas charged for it at create (NULL: no quota in its namespace). */
static int quota_usage(struct plan *p, const json_t *pod, json_t **usage, struct gs_error *err)
{
	json_t *list = json_object_get(p->quotas, ns_of(pod));
	struct explain_quota_report *qr = NULL;

	*usage = NULL;
	if (!list)
		return 0;
	if (explain_quota_pod(list, pod, &qr, err) < 0)
		return -1;
	*usage = json_incref(qr->usage);
	explain_quota_report_free(qr);
	return 0;
}

/* Whether DynamicResources took devices for pod pp on node i (it lacks a request a class serves).
 */
static bool dra_delegated(const struct plan *p, const struct ppod *pp, size_t i)
{
	for (size_t k = 0; pp->dra_ext && k < pp->n_req; k++) {
		int64_t alloc, used;
		if (!pp->req[k].dra_class || pp->req[k].v <= 0)
			continue;
		node_res(&p->nodes[i], pp->req[k].res, &alloc, &used);
		if (alloc <= 0)
			return true;
	}
	return false;
}

/* The scheduler's and the kubelet's part of an outcome, gone before it is made again. */
static void outcome_clear(struct plan_pod *o)
{
	free(o->node);
	free(o->reason);
	free(o->status_reason);
	free(o->feasible);
	free(o->tied);
	for (size_t j = 0; j < o->n_hints; j++)
		free(o->hints[j]);
	free(o->hints);
	json_decref(o->claims);
	o->claims = NULL;
	o->node = o->reason = o->status_reason = NULL;
	o->feasible = o->tied = NULL;
	o->hints = NULL;
	o->n_feasible = o->n_feasible_listed = o->n_tied = o->n_tied_listed = o->n_hints = 0;
}

int plan_retry(struct plan *p, size_t i, const json_t *pod, struct gs_error *err)
{
	struct plan_pod *o;
	struct ppod pp;
	json_t *usage = NULL;
	int rc;

	if (outcome_of(p, i, pod, &o, err) < 0)
		return -1;
	if (o->gone || o->verdict != PLAN_PENDING) {
		gs_error_set(err, "pod %s/%s is %s, not pending", o->namespace, o->name,
			     o->gone ? "gone" : plan_verdict_name(o->verdict));
		return -1;
	}
	if (prepare_pod(p, pod, &pp, err) < 0 || quota_usage(p, pod, &usage, err) < 0) {
		ppod_release(&pp);
		return -1;
	}
	outcome_clear(o);
	rc = bind_pod(p, &pp, o, usage, err);
	json_decref(usage);
	ppod_release(&pp);
	return rc;
}

int plan_remove(struct plan *p, size_t i, const json_t *pod, struct gs_error *err)
{
	struct plan_pod *o;
	struct ppod pp = {0};
	json_t *usage = NULL;
	long at = -1;
	int rc = -1;

	if (outcome_of(p, i, pod, &o, err) < 0)
		return -1;
	if (o->gone) {
		gs_error_set(err, "pod %s/%s is gone already", o->namespace, o->name);
		return -1;
	}
	/* Refused and failed pods hold nothing: neither node nor quota. */
	if (o->verdict == PLAN_BOUND || o->verdict == PLAN_PENDING) {
		/* Its own claims as dra_prefilter read them: Reserve kept their
		   allocations and reservations for the pods after. */
		if (p->pdra && json_array_size(kobj_get(pod, "spec.resourceClaims"))) {
			gs_error_set(err,
				     "pod %s/%s holds spec.resourceClaims; giving claims back is "
				     "not modelled",
				     o->namespace, o->name);
			goto out;
		}
		if (prepare_pod(p, pod, &pp, err) < 0 || quota_usage(p, pod, &usage, err) < 0)
			goto out;
		if (o->verdict == PLAN_BOUND && (at = node_index(p, o->node)) >= 0 &&
		    !*kobj_text(pod, "spec.nodeName") && dra_delegated(p, &pp, (size_t)at)) {
			gs_error_set(err,
				     "pod %s/%s: DRA allocated its devices on %s; giving them "
				     "back is not modelled",
				     o->namespace, o->name, o->node);
			goto out;
		}
		if (usage &&
		    quota_charge(json_object_get(p->quotas, o->namespace), usage, -1, err) < 0)
			goto out;
		if (at >= 0)
			consume(&p->nodes[at], &pp, -1);
	}
	o->gone = true;
	rc = 0;
out:
	json_decref(usage);
	ppod_release(&pp);
	return rc;
}

/* Each pool's nvidia.com/ resources after the batch (src/engine/pools.h). */
static void pool_report(struct plan *p, struct plan_result *r)
{
	json_t *pending = json_object();
	struct pools t;

	/* The resources a pending pod asks for ("name=quantity" of its requests). */
	for (size_t i = 0; i < r->n_pods; i++)
		for (size_t k = 0; r->pods[i].verdict == PLAN_PENDING && !r->pods[i].gone &&
				   k < r->pods[i].n_requests;
		     k++) {
			const char *rq = r->pods[i].requests[k], *eq = strchr(rq, '=');
			char *name = eq ? gs_xstrndup(rq, (size_t)(eq - rq)) : gs_xstrdup(rq);
			json_object_set_new(pending, name, json_true());
			free(name);
		}
	pools_init(&t);
	for (size_t i = 0; i < p->n_nodes; i++) {
		const struct pnode *n = &p->nodes[i];
		char *pool = NULL;

		for (size_t k = 0; k < n->n_sc; k++)
			pools_add(&t, n->obj, &pool, p->res_names[n->sc[k].res], n->sc[k].alloc,
				  n->sc[k].used);
		free(pool);
	}
	pools_finish(&t, pending, &r->pools, &r->n_pools);
	json_decref(pending);
}

struct plan_result *plan_finish(struct plan *p)
{
	struct plan_result *r = p->r;

	quota_report(p, r);
	pool_report(p, r);
	p->r = NULL;
	plan_free(p);
	return r;
}

int plan_run(const struct plan_input *in, struct plan_result **out, struct gs_error *err)
{
	struct plan *p;

	*out = NULL;
	if (!json_is_array(in->pods) || json_array_size(in->pods) > PLAN_MAX_PODS) {
		gs_error_set(err, "expected a list of at most %d pods", PLAN_MAX_PODS);
		return -1;
	}
	if (plan_new(in, &p, err) < 0)
		return -1;
	for (size_t i = 0; i < json_array_size(in->pods); i++) {
		if (plan_add(p, json_array_get(in->pods, i), err) < 0) {
			plan_free(p);
			return -1;
		}
	}
	*out = plan_finish(p);
	return 0;
}

void plan_result_free(struct plan_result *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_nodes; i++)
		free(r->nodes[i]);
	free(r->nodes);
	for (size_t i = 0; i < r->n_pods; i++) {
		struct plan_pod *o = &r->pods[i];
		outcome_clear(o);
		free(o->namespace);
		free(o->name);
		for (size_t j = 0; j < o->n_requests; j++)
			free(o->requests[j]);
		free(o->requests);
	}
	free(r->pods);
	for (size_t i = 0; i < r->n_quotas; i++) {
		free(r->quotas[i].namespace);
		free(r->quotas[i].quota);
		free(r->quotas[i].resource);
		free(r->quotas[i].used);
		free(r->quotas[i].hard);
	}
	free(r->quotas);
	pools_free_uses(r->pools, r->n_pools);
	free(r);
}

static json_t *names(const struct plan_result *r, const size_t *idx, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(r->nodes[idx[i]]));
	return a;
}

json_t *plan_pod_json(const struct plan_result *r, size_t i)
{
	const struct plan_pod *o = &r->pods[i];
	json_t *j = json_pack(
		"{s:s,s:s,s:s,s:s?,s:s,s:o,s:I,s:o,s:I}", "namespace", o->namespace, "name",
		o->name, "verdict", plan_verdict_name(o->verdict), "node", o->node, "reason",
		o->reason ? o->reason : "", "feasible", names(r, o->feasible, o->n_feasible_listed),
		"feasibleCount", (json_int_t)o->n_feasible, "tied",
		names(r, o->tied, o->n_tied_listed), "tiedCount", (json_int_t)o->n_tied);

	if (!o->node)
		json_object_set_new(j, "node", json_null());
	if (o->status_reason)
		json_object_set_new(j, "statusReason", json_string(o->status_reason));
	if (o->n_hints) {
		json_t *h = json_array();
		for (size_t k = 0; k < o->n_hints; k++)
			json_array_append_new(h, json_string(o->hints[k]));
		json_object_set_new(j, "hints", h);
	}
	if (o->claims)
		json_object_set(j, "claims", o->claims);
	/* Only where the scheduler stops early, so small fleets read as before. */
	if (o->sampled)
		json_object_set_new(j, "sample",
				    json_pack("{s:I,s:I,s:I}", "start", (json_int_t)o->start,
					      "evaluated", (json_int_t)o->evaluated, "nodes",
					      (json_int_t)r->n_nodes));
	return j;
}

json_t *plan_quotas_json(const struct plan_result *r)
{
	json_t *quotas = json_array();

	for (size_t i = 0; i < r->n_quotas; i++) {
		const struct plan_quota_use *u = &r->quotas[i];
		json_array_append_new(quotas,
				      json_pack("{s:s,s:s,s:s,s:s,s:s}", "namespace", u->namespace,
						"quota", u->quota, "resource", u->resource, "used",
						u->used, "hard", u->hard));
	}
	return quotas;
}

json_t *plan_pools_json(const struct plan_result *r)
{
	json_t *pools = json_array();

	for (size_t i = 0; i < r->n_pools; i++) {
		const struct pool_use *u = &r->pools[i];
		json_array_append_new(
			pools,
			json_pack("{s:s,s:s,s:I,s:I,s:I,s:I,s:I}", "pool", u->pool, "resource",
				  u->resource, "nodes", (json_int_t)u->nodes, "registered",
				  (json_int_t)u->registered, "held", (json_int_t)u->held, "free",
				  (json_int_t)u->free, "stranded", (json_int_t)u->stranded));
	}
	return pools;
}

json_t *plan_result_json(const struct plan_result *r)
{
	json_t *pods = json_array();

	for (size_t i = 0; i < r->n_pods; i++)
		json_array_append_new(pods, plan_pod_json(r, i));
	return json_pack("{s:o,s:o,s:o}", "pods", pods, "quotas", plan_quotas_json(r), "pools",
			 plan_pools_json(r));
}

/* ---- what-if ----------------------------------------------------------------------- */

/* The nvidia.com/ resources a node advertises (allocatable > 0), as a JSON object. */
static bool advertises(const json_t *node, const char *res)
{
	const json_t *v = json_object_get(kobj_get(node, "status.allocatable"), res);
	int64_t n;
	struct gs_error e;

	return v && qint(v, false, &n, &e) == 0 && n > 0;
}

/* The names some node of the NodeList advertises (allocatable > 0), as a set. */
static json_t *advertised_set(const json_t *nodes)
{
	json_t *set = json_object();
	const json_t *n;
	size_t i;

	json_array_foreach (json_object_get(nodes, "items"), i, n) {
		const char *k;
		json_t *v;
		json_object_foreach ((json_t *)kobj_get(n, "status.allocatable"), k, v)
			if (!json_object_get(set, k) && advertises(n, k))
				json_object_set_new(set, k, json_true());
	}
	return set;
}

/* name -> node of a NodeList (the last of a name, as a search from the start finds it). */
static json_t *nodes_by_name(const json_t *nodes)
{
	json_t *idx = json_object();
	const json_t *n;
	size_t i;

	json_array_foreach (json_object_get(nodes, "items"), i, n)
		json_object_set(idx, kobj_text(n, "metadata.name"), (json_t *)n);
	return idx;
}

/*
 * Sorted unique nvidia.com/ names advertised now by the nodes that had
 * `res` before (before_by_name: nodes_by_name of the NodeList before), or
 * when none had it, by every node now.
 */
static json_t *instead(const json_t *before_by_name, const json_t *after, const char *res)
{
	json_t *seen = json_object(), *out = json_array();
	const json_t *n;
	size_t i;
	int pass;

	for (pass = 0; pass < 2 && !json_object_size(seen); pass++) {
		json_array_foreach (json_object_get(after, "items"), i, n) {
			const char *k;
			json_t *v;
			if (pass == 0) {
				/* the same node, before the change */
				const json_t *b = json_object_get(before_by_name,
								  kobj_text(n, "metadata.name"));
				if (!b || !advertises(b, res))
					continue;
			}
			json_object_foreach ((json_t *)kobj_get(n, "status.allocatable"), k, v)
				if (!strncmp(k, "nvidia.com/", 11) && advertises(n, k))
					json_object_set_new(seen, k, json_true());
		}
	}
	const char **keys = gs_xcalloc(json_object_size(seen) + 1, sizeof(char *));
	size_t nk = 0;
	const char *k;
	json_t *v;
	json_object_foreach (seen, k, v)
		keys[nk++] = k;
	qsort(keys, nk, sizeof(*keys), cmp_str);
	for (size_t j = 0; j < nk; j++)
		json_array_append_new(out, json_string(keys[j]));
	free(keys);
	json_decref(seen);
	return out;
}

static json_t *outcome(const struct plan_pod *o)
{
	json_t *j = json_pack("{s:s,s:s?,s:s}", "verdict", plan_verdict_name(o->verdict), "node",
			      o->node, "reason", o->reason ? o->reason : "");
	if (!o->node)
		json_object_set_new(j, "node", json_null());
	if (o->status_reason)
		json_object_set_new(j, "statusReason", json_string(o->status_reason));
	return j;
}

static char *quota_key(const struct plan_quota_use *u)
{
	return gs_xasprintf("%s/%s/%s", u->namespace, u->quota, u->resource);
}

static json_t *pool_use_json(const struct pool_use *u)
{
	if (!u)
		return json_pack("{s:I,s:I,s:I,s:I,s:I}", "nodes", (json_int_t)0, "registered",
				 (json_int_t)0, "held", (json_int_t)0, "free", (json_int_t)0,
				 "stranded", (json_int_t)0);
	return json_pack("{s:I,s:I,s:I,s:I,s:I}", "nodes", (json_int_t)u->nodes, "registered",
			 (json_int_t)u->registered, "held", (json_int_t)u->held, "free",
			 (json_int_t)u->free, "stranded", (json_int_t)u->stranded);
}

/*
 * Each pool and resource whose headroom differs between two outcomes:
 * [{"pool", "resource", "before": {...}, "after": {...}}], a pool only on
 * one side counted as empty on the other; in the before order, then the
 * pools new after.
 */
static json_t *pool_changes(const struct plan_result *before, const struct plan_result *after)
{
	json_t *out = json_array(), *index = json_object();

	for (size_t i = 0; i < before->n_pools; i++) {
		char *key =
			gs_xasprintf("%s\x1f%s", before->pools[i].pool, before->pools[i].resource);
		json_object_set_new(index, key, json_integer((json_int_t)i));
		free(key);
	}
	const struct pool_use **pair = gs_xcalloc(before->n_pools + 1, sizeof(*pair));
	for (size_t i = 0; i < after->n_pools; i++) {
		char *key =
			gs_xasprintf("%s\x1f%s", after->pools[i].pool, after->pools[i].resource);
		json_t *at = json_object_get(index, key);
		free(key);
		if (at)
			pair[json_integer_value(at)] = &after->pools[i];
	}
	for (size_t i = 0; i < before->n_pools; i++) {
		const struct pool_use *b = &before->pools[i], *a = pair[i];
		if (a && a->nodes == b->nodes && a->registered == b->registered &&
		    a->held == b->held && a->stranded == b->stranded)
			continue;
		json_array_append_new(out, json_pack("{s:s,s:s,s:o,s:o}", "pool", b->pool,
						     "resource", b->resource, "before",
						     pool_use_json(b), "after", pool_use_json(a)));
	}
	for (size_t i = 0; i < after->n_pools; i++) {
		const struct pool_use *a = &after->pools[i];
		char *key = gs_xasprintf("%s\x1f%s", a->pool, a->resource);
		bool old = json_object_get(index, key) != NULL;
		free(key);
		if (!old)
			json_array_append_new(out, json_pack("{s:s,s:s,s:o,s:o}", "pool", a->pool,
							     "resource", a->resource, "before",
							     pool_use_json(NULL), "after",
							     pool_use_json(a)));
	}
	free(pair);
	json_decref(index);
	return out;
}

json_t *plan_diff_json(const struct plan_result *before, const struct plan_result *after,
		       const json_t *nodes_before, const json_t *nodes_after)
{
	json_t *changes = json_array(), *unadv = json_array(), *quotas = json_array();
	/* Each read once: the fleets' advertised names, the nodes before by
	 * name, "instead" per resource, the quota uses before by key. */
	json_t *adv_before = advertised_set(nodes_before), *adv_after = advertised_set(nodes_after);
	json_t *by_name = nodes_by_name(nodes_before), *instead_of = json_object();
	json_t *uses_before = json_object();

	for (size_t i = 0; i < before->n_pods && i < after->n_pods; i++) {
		const struct plan_pod *b = &before->pods[i], *a = &after->pods[i];
		bool same_node =
			(!b->node && !a->node) || (b->node && a->node && !strcmp(b->node, a->node));
		if (b->verdict != a->verdict || !same_node)
			json_array_append_new(changes,
					      json_pack("{s:s,s:s,s:o,s:o}", "namespace",
							a->namespace, "name", a->name, "before",
							outcome(b), "after", outcome(a)));
		for (size_t r = 0; r < a->n_requests; r++) {
			const char *req = a->requests[r], *eq = strchr(req, '=');
			char *res = gs_xstrndup(req, eq ? (size_t)(eq - req) : strlen(req));
			if (!strncmp(res, "nvidia.com/", 11) && !json_object_get(adv_after, res)) {
				json_t *alt = json_object_get(instead_of, res);
				if (!alt) {
					alt = instead(by_name, nodes_after, res);
					json_object_set_new(instead_of, res, alt);
				}
				json_array_append_new(
					unadv, json_pack("{s:s,s:s,s:s,s:b,s:O}", "namespace",
							 a->namespace, "name", a->name, "resource",
							 res, "before",
							 json_object_get(adv_before, res) != NULL,
							 "instead", alt));
			}
			free(res);
		}
	}
	for (size_t j = before->n_quotas; j-- > 0;) {
		/* The first of a key wins, as a search from the start finds it. */
		char *key = quota_key(&before->quotas[j]);
		json_object_set_new(uses_before, key, json_integer((json_int_t)j));
		free(key);
	}
	for (size_t i = 0; i < after->n_quotas; i++) {
		const struct plan_quota_use *a = &after->quotas[i], *b = NULL;
		char *key = quota_key(a);
		const json_t *at = json_object_get(uses_before, key);
		free(key);
		if (at)
			b = &before->quotas[json_integer_value(at)];
		if (b && !strcmp(b->used, a->used))
			continue;
		json_array_append_new(quotas, json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "namespace",
							a->namespace, "quota", a->quota, "resource",
							a->resource, "before", b ? b->used : "0",
							"after", a->used, "hard", a->hard));
	}
	json_decref(adv_before);
	json_decref(adv_after);
	json_decref(by_name);
	json_decref(instead_of);
	json_decref(uses_before);
	return json_pack("{s:o,s:o,s:o,s:o}", "changes", changes, "unadvertised", unadv, "quotas",
			 quotas, "pools", pool_changes(before, after));
}
