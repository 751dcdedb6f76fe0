#include "engine/replay_design.h"

#include <stdlib.h>
#include <string.h>

#include "engine/plan_score.h"
#include "engine/plan_select.h"
#include "model/kubeversion.h"
#include "base/strbuf.h"
#include "base/wrapper.h"
#include "base/banned.h"

/*
 * The model (docs/guide/replay.md "Sharing designs"):
 *
 * Scheduling: kube-scheduler's default profile as src/engine/plan.c models
 * it, reduced to what differs between the trace's nodes: the filters
 * NodeAffinity (gpu_spec against gpushare.io/trace-gpu-model) and
 * NodeResourcesFit (cpu, memory, pods, and the GPU as the design exposes
 * it), the scores LeastAllocated and BalancedAllocation on cpu and memory
 * by plan's own scorer for the newest release (engine/plan_score.h; the
 * taint and affinity scores are alike on every node), the highest total
 * wins; the filter pass samples and a tie is drawn from --seed as plan does
 * (engine/plan_select.h). Under time-slicing and whole GPUs the
 * GPU is a count on the node (nvidia.com/gpu replicas or GPUs); under MIG
 * a count per profile (nvidia.com/mig-<profile>, mixed strategy); under
 * DRA shares the claim is judged per device, as the structured allocator
 * does (k8s.io/dynamic-resource-allocation v0.34 allocator_experimental.go
 * with consumable_capacity.go, src/dra/draalloc.c): the node fits when
 * enough devices each have the shares left.
 *
 * Devices: time-slicing's replicas one at a time to the card with the
 * fewest taken (k8s-device-plugin v0.17 internal/rm/allocate.go
 * distributedAlloc, ledger_preferred); whole GPUs and MIG instances the
 * lowest free indexes; DRA shares the first devices in slice order with
 * enough shares left (the allocator walks them in order).
 *
 * Every device layer reduces to units: a card (time-slicing: N replicas;
 * DRA: S shares; whole: 1) or a MIG instance (1), each with the milli one
 * of its parts stands for. A MIG GPU's compute slices its layout leaves
 * unused are idle for good ("dead").
 */

void replay_design_release(struct replay_design *d)
{
	for (size_t i = 0; i < d->n_pools; i++) {
		free(d->pools[i].pool);
		free(d->pools[i].layout);
	}
	free(d->pools);
	free(d->name);
	memset(d, 0, sizeof(*d));
}

const struct replay_pool_design *replay_design_pool(const struct replay_design *d, const char *code)
{
	const struct replay_pool_design *any = NULL;

	for (size_t i = 0; i < d->n_pools; i++) {
		if (!strcmp(d->pools[i].pool, code))
			return &d->pools[i];
		if (!strcmp(d->pools[i].pool, REPLAY_POOL_ANY))
			any = &d->pools[i];
	}
	return any;
}

void replay_pool_describe(const struct replay_pool_design *p, struct strbuf *out)
{
	switch (p->how) {
	case REPLAY_TIME_SLICING:
		strbuf_addf(out, "time-slicing x%d", p->replicas);
		break;
	case REPLAY_MIG:
		strbuf_addf(out, "MIG %s on %s", p->layout, p->gpu->name);
		break;
	case REPLAY_DRA_SHARES:
		strbuf_addf(out, "DRA shares %d", p->shares);
		break;
	case REPLAY_WHOLE:
		strbuf_addf(out, "whole");
		break;
	}
}

const struct catalog_mig_profile *replay_mig_profile(const struct catalog_gpu *gpu,
						     const struct catalog_gpu_mig *m, int gpu_milli,
						     int num_gpu, int *count)
{
	const struct catalog_mig_profile *best = NULL;
	int cs = gpu->mig ? gpu->mig->compute_slices : 0;

	*count = 0;
	if (!cs || num_gpu <= 0 || gpu_milli <= 0 || !m->mig_enabled)
		return NULL;
	for (size_t i = 0; i < m->n_devices; i++) {
		const struct catalog_mig_profile *p =
			catalog_gpu_profile(gpu, m->devices[i].profile);
		if (!p || m->devices[i].count <= 0)
			continue;
		if (gpu_milli >= REPLAY_MILLI
			    ? p->gi_slices != cs
			    : (int64_t)p->gi_slices * REPLAY_MILLI < (int64_t)gpu_milli * cs)
			continue;
		if (!best || p->gi_slices < best->gi_slices ||
		    (p->gi_slices == best->gi_slices && p->memory_mib < best->memory_mib))
			best = p;
	}
	if (best)
		*count = gpu_milli >= REPLAY_MILLI ? num_gpu : 1;
	return best;
}

int replay_dra_shares(int gpu_milli, int num_gpu, int shares, int *count)
{
	*count = 0;
	if (num_gpu <= 0 || gpu_milli <= 0 || shares <= 0)
		return 0;
	if (gpu_milli >= REPLAY_MILLI) {
		*count = num_gpu;
		return shares;
	}
	*count = 1;
	return (int)(((int64_t)gpu_milli * shares + REPLAY_MILLI - 1) / REPLAY_MILLI);
}

/* ---- the fleet as units ------------------------------------------------------- */

struct unit {
	int card;
	int cap, used;
	double milli; /* what one part stands for */
	const struct catalog_mig_profile *prof;
};

/* A pool of the run: the design's entry and, for MIG, the layout applied. */
struct dpool {
	const struct replay_pool_design *pd;
	struct catalog_gpu_mig mig;
	int dead_slices;  /* MIG: compute slices per GPU the layout leaves unused */
	struct expr *mix; /* each typical shape as this pool expresses it */
};

/* A task as one pool expresses it. */
struct expr {
	bool gpu;  /* asks for GPU at all */
	bool fits; /* the pool can express it */
	int need;  /* parts of each unit it takes */
	int count; /* units */
	int total; /* time-slicing: replicas over the node's cards */
	const struct catalog_mig_profile *prof;
};

struct dnode {
	int pool; /* index into the run's pools; -1 without GPUs */
	struct unit *u;
	int n_u;
	int64_t cpu_used, mem_used;
	int n_pods;
	double dead; /* idle milli no task can ever take (MIG slices left out) */
	double frag, idle, stranded;
};

#define MAX_PODS 110 /* the kubelet's default, as the replay's Nodes */

static struct expr express(const struct dpool *p, int gpu_milli, int num_gpu)
{
	struct expr e = {0};

	if (num_gpu <= 0 || gpu_milli <= 0)
		return e;
	e.gpu = true;
	switch (p->pd->how) {
	case REPLAY_TIME_SLICING:
		e.need = replay_dra_shares(gpu_milli, num_gpu, p->pd->replicas, &e.count);
		e.total = e.need * e.count;
		e.fits = true;
		break;
	case REPLAY_DRA_SHARES:
		e.need = replay_dra_shares(gpu_milli, num_gpu, p->pd->shares, &e.count);
		e.fits = true;
		break;
	case REPLAY_WHOLE:
		e.need = 1;
		e.count = gpu_milli >= REPLAY_MILLI ? num_gpu : 1;
		e.fits = true;
		break;
	case REPLAY_MIG:
		e.prof = replay_mig_profile(p->pd->gpu, &p->mig, gpu_milli, num_gpu, &e.count);
		e.need = 1;
		e.fits = e.prof != NULL;
		break;
	}
	return e;
}

static bool unit_fits(const struct unit *u, const struct expr *e)
{
	return u->cap - u->used >= e->need && (!e->prof || u->prof == e->prof);
}

/* Whether the node's GPU can take e, as the scheduler judges it. */
static bool node_gpu_fits(const struct dnode *n, const struct dpool *p, const struct expr *e)
{
	int got = 0;

	if (!e->gpu)
		return true;
	if (!p || !e->fits)
		return false;
	if (p->pd->how == REPLAY_TIME_SLICING) {
		for (int i = 0; i < n->n_u; i++)
			got += n->u[i].cap - n->u[i].used;
		return got >= e->total;
	}
	for (int i = 0; i < n->n_u && got < e->count; i++)
		got += unit_fits(&n->u[i], e);
	return got >= e->count;
}

/* Take e's devices on the node; returns the milli they stand for. */
static double take(struct dnode *n, const struct dpool *p, const struct expr *e)
{
	double held = 0;

	if (p->pd->how == REPLAY_TIME_SLICING) {
		/* distributedAlloc: one at a time, the card with the fewest taken. */
		for (int k = 0; k < e->total; k++) {
			int best = -1;
			for (int i = 0; i < n->n_u; i++)
				if (n->u[i].used < n->u[i].cap &&
				    (best < 0 || n->u[i].used < n->u[best].used))
					best = i;
			n->u[best].used++;
		}
		return e->total * n->u[0].milli;
	}
	for (int i = 0, got = 0; i < n->n_u && got < e->count; i++)
		if (unit_fits(&n->u[i], e)) {
			n->u[i].used += e->need;
			held += e->need * n->u[i].milli;
			got++;
		}
	return held;
}

/* ---- the fragmentation, per unit ------------------------------------------------ */

/*
 * frag.go's NodeGpuShareFragAmount with a unit for a card: for each typical
 * shape, all the node's idle GPU is fragmented when the shape asks none,
 * cannot use the node's model, cannot be expressed by the pool, or does
 * not find `count` units it fits plus its cpu (q1, q2, q4, no_access,
 * xl/xr); else (q3) the idle of the units it does not fit. A unit fits a
 * shape when it has the parts the shape takes of one unit left (for a card,
 * frag.go's "idle milli >= gpu_milli"; for a MIG instance, free and of the
 * shape's profile). The stranded idle: units no shape that fits the node
 * could take, and dead slices.
 */
static void node_measure(const struct replay_node *tn, struct dnode *n, const struct dpool *p,
			 const struct replay_typical *mix, size_t n_mix, bool *usable)
{
	double idle = n->dead, frag = 0, stranded = n->dead;
	int64_t cpu_left = tn->cpu_milli - n->cpu_used;

	for (int i = 0; i < n->n_u; i++) {
		idle += (n->u[i].cap - n->u[i].used) * n->u[i].milli;
		usable[i] = false;
	}
	n->idle = idle;
	n->frag = n->stranded = 0;
	if (idle <= 0)
		return;
	for (size_t k = 0; k < n_mix; k++) {
		const struct replay_typical *t = &mix[k];
		const struct expr *e = &p->mix[k];
		double part = n->dead;
		int fit = 0;
		if (!e->gpu || !e->fits || !replay_accessible(tn->model, t->gpu_spec)) {
			frag += t->weight * idle;
			continue;
		}
		for (int i = 0; i < n->n_u; i++) {
			if (unit_fits(&n->u[i], e))
				fit++;
			else
				part += (n->u[i].cap - n->u[i].used) * n->u[i].milli;
		}
		if (fit >= e->count && cpu_left >= t->cpu_milli) {
			frag += t->weight * part;
			for (int i = 0; i < n->n_u; i++)
				usable[i] = usable[i] || unit_fits(&n->u[i], e);
		} else
			frag += t->weight * idle;
	}
	for (int i = 0; i < n->n_u; i++)
		if (!usable[i])
			stranded += (n->u[i].cap - n->u[i].used) * n->u[i].milli;
	n->frag = frag;
	n->stranded = stranded;
}

/* ---- the scheduler's scores ------------------------------------------------------ */

/*
 * plan's resource score (engine/plan_score.h) of t on the node. The Pods ask
 * cpu and memory explicitly, 0 included: the scheduler's non-zero defaults
 * (100m, 200Mi) apply only to requests not set, so both counts are the same.
 */
static int64_t score(const struct kubeversion *kv, const struct replay_node *tn,
		     const struct dnode *n, const struct replay_task *t)
{
	struct plan_cpumem node = {n->cpu_used, n->mem_used}, pod = {t->cpu_milli, t->memory_mib};

	return plan_resource_score(kv, (struct plan_cpumem){tn->cpu_milli, tn->memory_mib}, node,
				   pod, node, pod);
}

/* ---- the run ---------------------------------------------------------------------- */

struct run {
	const struct replay_trace *tr;
	struct dpool *pools;
	size_t n_pools;
	struct dnode *nodes;
	struct expr *ex;	      /* the arrival as each pool expresses it */
	const struct kubeversion *kv; /* whose scheduler scores */
	struct plan_select *sel;      /* the filter pass's start and the draws among ties */
	size_t *tied;		      /* the nodes of the top score so far, in the pass's order */
};

static int build_pools(const struct catalog *cat, const struct replay_design *d,
		       const struct replay_typical *mix, size_t n_mix, struct run *rn,
		       struct gs_error *err)
{
	rn->pools = gs_xcalloc(d->n_pools + 1, sizeof(*rn->pools));
	for (size_t i = 0; i < d->n_pools; i++) {
		struct dpool *p = &rn->pools[rn->n_pools++];
		const struct replay_pool_design *pd = &d->pools[i];
		p->pd = pd;
		if (pd->how == REPLAY_MIG) {
			int used = 0;
			if (!pd->gpu || !pd->gpu->mig ||
			    catalog_layout_apply(cat, pd->layout, pd->gpu, &p->mig, err) < 0 ||
			    p->mig.result != CATALOG_APPLY_OK || !p->mig.mig_enabled) {
				if (!pd->gpu || !pd->gpu->mig ||
				    p->mig.result != CATALOG_APPLY_OK || !p->mig.mig_enabled)
					gs_error_set(err,
						     "layout '%s' makes no MIG devices on this GPU",
						     pd->layout);
				gs_error_prefix(err, "design %s: pool %s: ", d->name, pd->pool);
				return -1;
			}
			for (size_t k = 0; k < p->mig.n_devices; k++) {
				const struct catalog_mig_profile *pr =
					catalog_gpu_profile(pd->gpu, p->mig.devices[k].profile);
				used += pr ? pr->gi_slices * p->mig.devices[k].count : 0;
			}
			p->dead_slices = pd->gpu->mig->compute_slices - used;
			if (p->dead_slices < 0)
				p->dead_slices = 0;
		} else if ((pd->how == REPLAY_TIME_SLICING &&
			    (pd->replicas < 2 || pd->replicas > REPLAY_MAX_REPLICAS)) ||
			   (pd->how == REPLAY_DRA_SHARES &&
			    (pd->shares < 1 || pd->shares > REPLAY_MAX_SHARES))) {
			gs_error_set(err,
				     "design %s: pool %s: replicas must be 2..%d, shares 1..%d",
				     d->name, pd->pool, REPLAY_MAX_REPLICAS, REPLAY_MAX_SHARES);
			return -1;
		}
		p->mix = gs_xcalloc(n_mix + 1, sizeof(*p->mix));
		for (size_t k = 0; k < n_mix; k++)
			p->mix[k] = express(p, mix[k].gpu_milli, mix[k].num_gpu);
	}
	return 0;
}

/* The units of one GPU node under its pool. */
static void build_units(const struct replay_node *tn, const struct dpool *p, struct dnode *n)
{
	const struct replay_pool_design *pd = p->pd;
	int per = 1;

	if (pd->how == REPLAY_MIG) {
		per = 0;
		for (size_t k = 0; k < p->mig.n_devices; k++)
			per += p->mig.devices[k].count;
	}
	n->u = gs_xcalloc((size_t)tn->gpus * (size_t)per + 1, sizeof(*n->u));
	for (int c = 0; c < tn->gpus; c++) {
		switch (pd->how) {
		case REPLAY_TIME_SLICING:
		case REPLAY_DRA_SHARES:
		case REPLAY_WHOLE: {
			int cap = pd->how == REPLAY_TIME_SLICING ? pd->replicas
				  : pd->how == REPLAY_DRA_SHARES ? pd->shares
								 : 1;
			n->u[n->n_u++] = (struct unit){c, cap, 0, (double)REPLAY_MILLI / cap, NULL};
			break;
		}
		case REPLAY_MIG: {
			int cs = pd->gpu->mig->compute_slices;
			for (size_t k = 0; k < p->mig.n_devices; k++) {
				const struct catalog_mig_profile *pr =
					catalog_gpu_profile(pd->gpu, p->mig.devices[k].profile);
				for (int j = 0; pr && j < p->mig.devices[k].count; j++)
					n->u[n->n_u++] = (struct unit){
						c, 1, 0, (double)pr->gi_slices * REPLAY_MILLI / cs,
						pr};
			}
			n->dead += (double)p->dead_slices * REPLAY_MILLI / cs;
			break;
		}
		}
	}
}

/* Whether t passes the filters on node i. */
static bool node_fits(const struct run *rn, size_t i, const struct replay_task *t)
{
	const struct replay_node *tn = &rn->tr->nodes[i];
	const struct dnode *n = &rn->nodes[i];
	bool gpu = t->num_gpu > 0 && t->gpu_milli > 0;

	if (*t->gpu_spec && !replay_accessible(tn->model, t->gpu_spec))
		return false;
	if (n->n_pods + 1 > MAX_PODS || n->cpu_used + t->cpu_milli > tn->cpu_milli ||
	    n->mem_used + t->memory_mib > tn->memory_mib)
		return false;
	return !gpu || (n->pool >= 0 && node_gpu_fits(n, &rn->pools[n->pool], &rn->ex[n->pool]));
}

/*
 * The node kube-scheduler picks for t, or -1: as plan picks it
 * (engine/plan_select.h), the filter pass from the start index stopping at
 * numFeasibleNodesToFind, the highest score among the nodes it kept, a
 * tie drawn from the run's stream. The same walk and draws as plan's on the
 * same nodes, so a timeSlicing design places as the replay does.
 */
static long pick(struct run *rn, const struct replay_task *t)
{
	struct plan_walk w;
	size_t i, n_feasible = 0, n_tied = 0;
	int64_t best = INT64_MIN;

	plan_walk_begin(&w, rn->sel, NULL, rn->tr->n_nodes);
	while (plan_walk_next(&w, &i)) {
		if (!node_fits(rn, i, t))
			continue;
		if (!plan_walk_take(&w))
			break;
		n_feasible++;
		int64_t s = score(rn->kv, &rn->tr->nodes[i], &rn->nodes[i], t);
		if (s > best) {
			best = s;
			n_tied = 0;
		}
		if (s == best)
			rn->tied[n_tied++] = i;
	}
	plan_walk_end(&w, rn->sel);
	if (!n_feasible)
		return -1;
	/* One feasible node is bound unscored (schedulePod): no draw, as plan. */
	return (long)rn->tied[n_feasible == 1 ? 0 : plan_select_tie(rn->sel, n_tied, false)];
}

int replay_design_run(const struct catalog *cat, const struct replay_trace *tr,
		      const struct replay_opts *o, const struct replay_design *d,
		      struct replay_design_result **out, struct gs_error *err)
{
	struct replay_design_result *r = NULL;
	struct replay_typical *mix = NULL;
	struct run rn = {.tr = tr, .kv = kubeversion_newest()};
	struct replay_row *rows = NULL;
	size_t *order = NULL, n_order = 0, n_original = 0, n_mix = 0;
	double alloc = 0, asked = 0, frag = 0, idle = 0, stranded = 0;
	bool *usable = NULL;
	int rc = -1, max_units = 0;

	*out = NULL;
	if (!(o->inflate > 0) || o->inflate > 1000 || !d->n_pools ||
	    d->n_pools > REPLAY_MAX_POOLS) {
		gs_error_set(err,
			     "the inflation must be above 0 (at most 1000) and a design has "
			     "1..%d pools",
			     REPLAY_MAX_POOLS);
		goto out;
	}
	if (replay_check_size(tr, err) < 0)
		goto out;
	r = gs_xcalloc(1, sizeof(*r));
	r->name = d->name;
	r->n_nodes = tr->n_nodes;
	for (size_t i = 0; i < tr->n_nodes; i++)
		r->n_gpus += (size_t)(tr->nodes[i].gpus > 0 ? tr->nodes[i].gpus : 0);
	r->capacity_milli = (int64_t)r->n_gpus * REPLAY_MILLI;
	if (!r->capacity_milli || !tr->n_tasks) {
		gs_error_set(err, "nothing to replay: the trace has %s",
			     tr->n_tasks ? "no GPU" : "no task");
		goto out;
	}
	mix = replay_typical_mix(tr->tasks, tr->n_tasks, &n_mix);
	r->n_typical = n_mix;
	if (build_pools(cat, d, mix, n_mix, &rn, err) < 0)
		goto out;
	rn.nodes = gs_xcalloc(tr->n_nodes + 1, sizeof(*rn.nodes));
	for (size_t i = 0; i < tr->n_nodes; i++) {
		const struct replay_node *tn = &tr->nodes[i];
		rn.nodes[i].pool = -1;
		if (tn->gpus <= 0)
			continue;
		const struct replay_pool_design *pd = replay_design_pool(d, tn->model);
		if (!pd) {
			gs_error_set(err,
				     "design %s says nothing of the trace's GPU model '%s' (node "
				     "%s): add a pool %s or '*'",
				     d->name, tn->model, tn->name, tn->model);
			goto out;
		}
		rn.nodes[i].pool = (int)(pd - d->pools);
		build_units(tn, &rn.pools[rn.nodes[i].pool], &rn.nodes[i]);
		if (rn.nodes[i].n_u > max_units)
			max_units = rn.nodes[i].n_u;
	}
	if (replay_workload(tr, o, r->capacity_milli, &order, &n_order, &n_original, err) < 0)
		goto out;
	r->n_arrived = n_order;
	r->n_original = n_original;
	usable = gs_xcalloc((size_t)max_units + 1, sizeof(*usable));
	rn.ex = gs_xcalloc(rn.n_pools + 1, sizeof(*rn.ex));
	/* The replay's plan reads the trace's nodes in order, none with a zone label. */
	rn.sel = plan_select_new_plain(tr->n_nodes, 0, o->seed, 0);
	rn.tied = gs_xcalloc(tr->n_nodes + 1, sizeof(*rn.tied));
	for (size_t i = 0; i < tr->n_nodes; i++) {
		struct dnode *n = &rn.nodes[i];
		if (n->pool < 0)
			continue;
		node_measure(&tr->nodes[i], n, &rn.pools[n->pool], mix, n_mix, usable);
		frag += n->frag;
		idle += n->idle;
		stranded += n->stranded;
	}
	rows = gs_xcalloc(n_order + 2, sizeof(*rows));
	rows[0] = (struct replay_row){0, 0, 0, frag, idle, 0, 0, 0, stranded};
	int64_t arrived = 0;
	for (size_t i = 0; i < n_order; i++) {
		const struct replay_task *t = &tr->tasks[order[i]];
		bool expressible = false;
		int64_t milli = (int64_t)t->num_gpu * t->gpu_milli;
		arrived += milli;
		r->arrived_milli += milli;
		for (size_t k = 0; k < rn.n_pools; k++) {
			rn.ex[k] = express(&rn.pools[k], t->gpu_milli, t->num_gpu);
			expressible = expressible || rn.ex[k].fits;
		}
		long at = pick(&rn, t);
		if (at >= 0) {
			struct dnode *n = &rn.nodes[at];
			n->cpu_used += t->cpu_milli;
			n->mem_used += t->memory_mib;
			n->n_pods++;
			if (n->pool >= 0) {
				const struct dpool *p = &rn.pools[n->pool];
				if (rn.ex[n->pool].gpu)
					alloc += take(n, p, &rn.ex[n->pool]);
				frag -= n->frag;
				idle -= n->idle;
				stranded -= n->stranded;
				node_measure(&tr->nodes[at], n, p, mix, n_mix, usable);
				frag += n->frag;
				idle += n->idle;
				stranded += n->stranded;
			}
			asked += (double)milli;
			r->bound++;
		} else {
			r->pending++;
			if (milli && !expressible)
				r->no_fit++;
		}
		rows[i + 1] = (struct replay_row){arrived, alloc,    asked,	 frag,	  idle,
						  0,	   r->bound, r->pending, stranded};
	}
	r->points = replay_bucket(rows, n_order + 1, r->capacity_milli, &r->n_points);
	*out = r;
	r = NULL;
	rc = 0;
out:
	for (size_t i = 0; rn.nodes && i < tr->n_nodes; i++)
		free(rn.nodes[i].u);
	free(rn.nodes);
	for (size_t i = 0; i < rn.n_pools; i++)
		free(rn.pools[i].mix);
	free(rn.pools);
	free(rn.ex);
	plan_select_free(rn.sel);
	free(rn.tied);
	free(usable);
	free(rows);
	free(order);
	free(mix);
	replay_design_result_free(r);
	return rc;
}

void replay_design_result_free(struct replay_design_result *r)
{
	if (!r)
		return;
	free(r->points);
	free(r);
}
