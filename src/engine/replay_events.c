#include "engine/replay_events.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ledger.h"
#include "engine/plan.h"
#include "engine/replay_int.h"
#include "base/wrapper.h"
#include "base/banned.h"

/*
 * The queue is kube-scheduler v1.34's as far as a trace of bare pods of one
 * priority sees it (k8s.io/kubernetes pkg/scheduler/backend/queue,
 * framework/plugins/queuesort/priority_sort.go, and
 * framework/plugins/noderesources/fit.go isSchedulableAfterPodEvent): a pod
 * that fits nowhere waits in the unschedulable queue; the deletion of a bound
 * pod moves the waiting pods back to be tried, in priority then timestamp
 * order (here: arrival order); the deletion of a pod that was never bound
 * moves none. The backoff before a retry (1 s doubling to 10 s) is not
 * modelled: a retry comes at the departure's time.
 *
 * A waiting task can only fit on a node something left since it was last
 * tried (arrivals only take), so a retry pass tries a task only when one of
 * the nodes freed since the last pass could hold it by cpu, memory, pods,
 * free replicas and gpu_spec, which the plan's filters imply; the plan then
 * decides among all nodes.
 */

enum tstate { T_AHEAD, T_QUEUED, T_RUNNING, T_GONE };

/* An event: a task (arrival rank) at a trace time. */
struct ev {
	int64_t time;
	size_t rank;
};

struct run {
	const struct replay_trace *tr;
	int replicas;
	struct replay_result *r;
	struct replay_timeline *tl;
	struct plan *plan;
	const json_t *pods; /* by arrival rank */
	struct replay_fleet fleet;
	struct replay_meter meter;
	int64_t *mem_used, *pods_on, *replicas_used; /* per node */
	enum tstate *state;			     /* by arrival rank */
	bool *tried;				     /* given to plan_add */
	size_t *queue, n_queue;			     /* waiting ranks, in arrival order */
	size_t *dirty, n_dirty;			     /* nodes freed since the last pass */
	bool *is_dirty;
	size_t running, pending;
	/* The integration over time: the step being filled and where it is. */
	int64_t span;
	size_t step;
	double t_cur;
	double (*acc)[6]; /* per step: alloc, asked, frag %, frag, idle, frag_sched % (x seconds) */
};

static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int64_t task_milli(const struct replay_task *t)
{
	return (int64_t)t->num_gpu * t->gpu_milli;
}

/* A task's pool for the waits: its gpu_spec, "any" when empty, "none" without GPU. */
static const char *pool_of(const struct replay_task *t)
{
	if (t->num_gpu <= 0 || t->gpu_milli <= 0)
		return "none";
	return *t->gpu_spec ? t->gpu_spec : "any";
}

/* ---- the measure over time ------------------------------------------------------ */

/* The state so far holds until t1: into the steps it spans. */
static void integrate(struct run *x, double t1)
{
	const struct replay_meter *m = &x->meter;
	double alloc, asked, fr, sr;

	if (!(x->t_cur < t1) || x->step >= REPLAY_STEPS)
		return;
	alloc = replay_meter_alloc(m);
	asked = (double)m->asked;
	fr = m->idle > 0 ? 100 * m->frag / m->idle : 0;
	sr = m->idle > 0 ? 100 * m->frag_sched / m->idle : 0;
	while (x->t_cur < t1 && x->step < REPLAY_STEPS) {
		double end = (double)x->tl->start +
			     (double)x->span * (double)(x->step + 1) / REPLAY_STEPS;
		double to = t1 < end ? t1 : end, dt = to - x->t_cur;
		double *a = x->acc[x->step];
		a[0] += alloc * dt;
		a[1] += asked * dt;
		a[2] += fr * dt;
		a[3] += m->frag * dt;
		a[4] += m->idle * dt;
		a[5] += sr * dt;
		x->t_cur = to;
		if (to >= end) {
			x->tl->points[x->step].running = x->running;
			x->tl->points[x->step].pending = x->pending;
			x->step++;
		}
	}
}

/* The step an event at t counts in: (k-1)% < t - start <= k%, the start in the first. */
static size_t step_of(const struct run *x, int64_t t)
{
	int64_t d = t - x->tl->start, k = (d * REPLAY_STEPS + x->span - 1) / x->span;

	return k < 1 ? 0 : k > REPLAY_STEPS ? REPLAY_STEPS - 1 : (size_t)(k - 1);
}

/* ---- tasks on nodes ------------------------------------------------------------- */

/* The task of place pl takes (sign 1) or gives back (-1) its requests on its node. */
static int take(struct run *x, const struct replay_place *pl, int sign, struct gs_error *err)
{
	const struct replay_task *t = &x->tr->tasks[pl->task];
	size_t i = (size_t)pl->node;

	if (replay_meter_move(&x->meter, pl, sign, err) < 0)
		return -1;
	x->mem_used[i] += sign * t->memory_mib;
	x->pods_on[i] += sign;
	x->replicas_used[i] += sign * replay_task_replicas(t, x->replicas);
	return 0;
}

/* Whether node i could hold task t now by what the plan's filters check (see above). */
static bool could_fit(const struct run *x, size_t i, const struct replay_task *t)
{
	const struct replay_node *n = &x->tr->nodes[i];
	int want = replay_task_replicas(t, x->replicas);

	return x->pods_on[i] < 110 && n->cpu_milli - x->meter.rn[i].cpu_used >= t->cpu_milli &&
	       n->memory_mib - x->mem_used[i] >= t->memory_mib &&
	       (int64_t)n->gpus * x->replicas - x->replicas_used[i] >= want &&
	       (!*t->gpu_spec || replay_accessible(n->model, t->gpu_spec));
}

/* Schedule the task of rank k (arriving, or again from the queue) at trace time now. */
static int attempt(struct run *x, size_t k, int64_t now, struct gs_error *err)
{
	struct replay_place *pl = &x->r->places[k];
	const struct replay_task *t = &x->tr->tasks[pl->task];
	const json_t *pod = json_array_get(x->pods, k);
	const struct plan_pod *o;
	bool again = x->tried[k];

	if ((again ? plan_retry(x->plan, k, pod, err) : plan_add(x->plan, pod, err)) < 0)
		return -1;
	x->tried[k] = true;
	x->tl->attempts++;
	x->tl->retries += again;
	o = plan_outcome(x->plan, k);
	if (o->verdict == PLAN_PENDING) {
		if (x->state[k] != T_QUEUED) {
			x->state[k] = T_QUEUED;
			x->queue[x->n_queue++] = k;
			if (++x->pending > x->tl->max_pending)
				x->tl->max_pending = x->pending;
		}
		return 0;
	}
	if (x->state[k] == T_QUEUED)
		x->pending--; /* the pass drops it from the queue */
	x->state[k] = T_GONE;
	if (o->verdict != PLAN_BOUND) {
		pl->reason = gs_xasprintf("%s: %s", plan_verdict_name(o->verdict),
					  o->reason ? o->reason : "");
		x->tl->failed++;
		return 0;
	}
	const json_t *at = json_object_get(x->fleet.node_index, o->node);
	if (!at) {
		gs_error_set(err, "pod %s: bound to an unknown node", pl->name);
		return -1;
	}
	pl->node = (long)json_integer_value(at);
	pl->bound = true;
	if (replay_task_replicas(t, x->replicas) &&
	    replay_allocate(x->fleet.ledgers[pl->node], pod, pl, err) < 0) {
		gs_error_prefix(err, "pod %s: ", pl->name);
		return -1;
	}
	if (!pl->bound) {
		/* The kubelet refused it (replay_allocate said why): Failed, it holds nothing. */
		pl->node = -1;
		x->tl->failed++;
		return plan_remove(x->plan, k, pod, err);
	}
	x->state[k] = T_RUNNING;
	x->running++;
	pl->placed_at = now;
	return take(x, pl, 1, err);
}

/* The task of rank k is deleted at trace time now; whether it freed a node. */
static int depart(struct run *x, size_t k, int64_t now, bool *freed, struct gs_error *err)
{
	struct replay_place *pl = &x->r->places[k];
	const json_t *pod = json_array_get(x->pods, k);
	enum tstate was = x->state[k];

	pl->left_at = now;
	if (was != T_RUNNING && was != T_QUEUED)
		return 0; /* never bound: nothing to give back */
	if (was == T_QUEUED) {
		const struct plan_pod *o = plan_outcome(x->plan, k);
		pl->reason = gs_xasprintf("pending: %s", o->reason ? o->reason : "");
	}
	if (plan_remove(x->plan, k, pod, err) < 0)
		return -1;
	x->state[k] = T_GONE;
	if (was == T_QUEUED) {
		x->pending--;
		return 0;
	}
	size_t i = (size_t)pl->node;
	if (x->fleet.ledgers[i] && pl->n_cards) {
		char *holder = gs_xasprintf("default/%s", pl->name);
		ledger_release(x->fleet.ledgers[i], holder);
		free(holder);
	}
	if (take(x, pl, -1, err) < 0)
		return -1;
	x->running--;
	if (!x->is_dirty[i]) {
		x->is_dirty[i] = true;
		x->dirty[x->n_dirty++] = i;
	}
	*freed = true;
	return 0;
}

/* A bound task left: the waiting tasks, in arrival order, each where it now may fit. */
static int retry_pass(struct run *x, int64_t now, struct gs_error *err)
{
	size_t w = 0;

	for (size_t q = 0; q < x->n_queue; q++) {
		size_t k = x->queue[q];
		const struct replay_task *t = &x->tr->tasks[x->r->places[k].task];
		bool maybe = false;
		if (x->state[k] != T_QUEUED)
			continue;
		for (size_t d = 0; d < x->n_dirty && !maybe; d++)
			maybe = could_fit(x, x->dirty[d], t);
		if (maybe && attempt(x, k, now, err) < 0)
			return -1;
		if (x->state[k] == T_QUEUED)
			x->queue[w++] = k;
	}
	x->n_queue = w;
	for (size_t d = 0; d < x->n_dirty; d++)
		x->is_dirty[x->dirty[d]] = false;
	x->n_dirty = 0;
	return 0;
}

/* ---- the result ----------------------------------------------------------------- */

static void finish_points(struct run *x)
{
	struct replay_timeline *tl = x->tl;
	double dur = (double)x->span / REPLAY_STEPS, cap = (double)x->r->capacity_milli;

	for (size_t k = 0; k < REPLAY_STEPS; k++) {
		struct replay_tpoint *p = &tl->points[k];
		const double *a = x->acc[k];
		p->pct = (int)k + 1;
		p->time = tl->start + x->span * (int64_t)(k + 1) / REPLAY_STEPS;
		p->alloc_pct = 100 * a[0] / dur / cap;
		p->asked_pct = 100 * a[1] / dur / cap;
		p->frag_pct = a[2] / dur;
		p->frag_milli = a[3] / dur;
		p->idle_milli = a[4] / dur;
		p->frag_sched_pct = a[5] / dur;
	}
	tl->n_points = REPLAY_STEPS;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest wait at or above pct% of the sorted ones. */
static int64_t nearest_rank(const int64_t *w, size_t n, int pct)
{
	size_t r = ((size_t)pct * n + 99) / 100;

	return n ? w[r ? r - 1 : 0] : 0;
}

static void waits_of(struct replay_waits *s, int64_t *w, size_t n)
{
	double sum = 0;

	qsort(w, n, sizeof(*w), cmp_i64);
	for (size_t i = 0; i < n; i++)
		sum += (double)w[i];
	s->ran = n;
	s->never = s->tasks - n;
	s->mean = n ? sum / (double)n : 0;
	s->p50 = nearest_rank(w, n, 50);
	s->p95 = nearest_rank(w, n, 95);
	s->max = n ? w[n - 1] : 0;
}

/* Per pool in order of first arrival, then "all". */
static void finish_waits(struct run *x)
{
	const struct replay_result *r = x->r;
	struct replay_timeline *tl = x->tl;
	json_t *index = json_object();
	size_t *pool = gs_xcalloc(r->n_places + 1, sizeof(size_t));
	int64_t *w = gs_xcalloc(r->n_places + 1, sizeof(int64_t));

	tl->waits = gs_xcalloc(r->n_places + 2, sizeof(*tl->waits));
	for (size_t k = 0; k < r->n_places; k++) {
		const char *name = pool_of(&x->tr->tasks[r->places[k].task]);
		json_t *v = json_object_get(index, name);
		if (!v) {
			v = json_integer((json_int_t)tl->n_waits);
			json_object_set_new(index, name, v);
			tl->waits[tl->n_waits++].pool = gs_xstrdup(name);
		}
		pool[k] = (size_t)json_integer_value(v);
		tl->waits[pool[k]].tasks++;
	}
	for (size_t p = 0; p <= tl->n_waits; p++) {
		struct replay_waits *s = &tl->waits[p];
		size_t n = 0;
		for (size_t k = 0; k < r->n_places; k++) {
			const struct replay_place *pl = &r->places[k];
			if ((p == tl->n_waits || pool[k] == p) && pl->placed_at >= 0)
				w[n++] = pl->placed_at - x->tr->tasks[pl->task].created;
		}
		if (p == tl->n_waits) {
			s->pool = gs_xstrdup("all");
			s->tasks = r->n_places;
		}
		waits_of(s, w, n);
	}
	tl->n_waits++;
	free(w);
	free(pool);
	json_decref(index);
}

/* ---- the run -------------------------------------------------------------------- */

/* The events in order: arrivals by creation (ties in trace order), departures by deletion. */
static int events(const struct replay_trace *tr, struct ev **arr, struct ev **dep,
		  struct gs_error *err)
{
	size_t n = tr->n_tasks;

	*arr = gs_xcalloc(n + 1, sizeof(**arr));
	*dep = gs_xcalloc(n + 1, sizeof(**dep));
	for (size_t i = 0; i < n; i++) {
		const struct replay_task *t = &tr->tasks[i];
		if (t->created < 0 || t->deleted < t->created) {
			gs_error_set(err,
				     "task %s: no creation_time and deletion_time (read with "
				     "the trace's times)",
				     t->name);
			return -1;
		}
		(*arr)[i] = (struct ev){t->created, i};
	}
	qsort(*arr, n, sizeof(**arr), ev_cmp);
	for (size_t k = 0; k < n; k++)
		(*dep)[k] = (struct ev){tr->tasks[(*arr)[k].rank].deleted, k};
	qsort(*dep, n, sizeof(**dep), ev_cmp);
	return 0;
}

int replay_events_run(const struct catalog *cat, const struct replay_trace *tr,
		      const struct replay_opts *o, struct replay_result **out, struct gs_error *err)
{
	struct run x = {.tr = tr, .replicas = o->replicas};
	json_t *pods = json_array();
	struct ev *arr = NULL, *dep = NULL;
	size_t n = tr->n_tasks, nn = tr->n_nodes;
	int rc = -1;

	*out = NULL;
	if (replay_result_new(tr, o->replicas, &x.r, err) < 0 || events(tr, &arr, &dep, err) < 0 ||
	    replay_fleet_build(cat, tr, o->replicas, &x.fleet, err) < 0)
		goto out;
	/* The scheduler's draws among tied nodes from --seed (plan_sched), as replay_run. */
	struct plan_input in = {
		.nodes = x.fleet.fleet.nodes, .configs = x.fleet.set, .sched = {.seed = o->seed}};
	if (plan_new(&in, &x.plan, err) < 0)
		goto out;
	x.tl = x.r->timeline = gs_xcalloc(1, sizeof(*x.tl));
	x.pods = pods;
	x.r->places = gs_xcalloc(n + 1, sizeof(*x.r->places));
	for (size_t k = 0; k < n; k++) {
		const struct replay_task *t = &tr->tasks[arr[k].rank];
		struct replay_place *pl = &x.r->places[x.r->n_places++];
		pl->task = arr[k].rank;
		pl->node = -1;
		pl->name = gs_xstrdup(t->name);
		pl->placed_at = pl->left_at = -1;
		json_array_append_new(pods, replay_pod_object(t, pl->name, o->replicas));
		x.r->arrived_milli += task_milli(t);
	}
	x.r->n_original = n;

	replay_meter_init(&x.meter, tr, x.r);
	x.mem_used = gs_xcalloc(nn + 1, sizeof(int64_t));
	x.pods_on = gs_xcalloc(nn + 1, sizeof(int64_t));
	x.replicas_used = gs_xcalloc(nn + 1, sizeof(int64_t));
	x.is_dirty = gs_xcalloc(nn + 1, sizeof(bool));
	x.dirty = gs_xcalloc(nn + 1, sizeof(size_t));
	x.state = gs_xcalloc(n + 1, sizeof(*x.state));
	x.tried = gs_xcalloc(n + 1, sizeof(bool));
	x.queue = gs_xcalloc(n + 1, sizeof(size_t));
	x.acc = gs_xcalloc(REPLAY_STEPS, sizeof(*x.acc));
	x.tl->points = gs_xcalloc(REPLAY_STEPS, sizeof(*x.tl->points));
	x.tl->start = arr[0].time;
	x.tl->end = dep[n - 1].time;
	x.span = x.tl->end > x.tl->start ? x.tl->end - x.tl->start : 1;
	x.t_cur = (double)x.tl->start;

	/* At one time: its arrivals, then its departures, then the queue if a node was freed. */
	for (size_t ia = 0, id = 0; ia < n || id < n;) {
		int64_t now = ia < n && (id >= n || arr[ia].time <= dep[id].time) ? arr[ia].time
										  : dep[id].time;
		bool freed = false;
		integrate(&x, (double)now);
		for (; ia < n && arr[ia].time == now; ia++) {
			x.tl->points[step_of(&x, now)].arrived++;
			if (attempt(&x, ia, now, err) < 0)
				goto out;
		}
		for (; id < n && dep[id].time == now; id++) {
			x.tl->points[step_of(&x, now)].left++;
			if (depart(&x, dep[id].rank, now, &freed, err) < 0)
				goto out;
		}
		if (freed && retry_pass(&x, now, err) < 0)
			goto out;
	}
	integrate(&x, (double)(x.tl->start + x.span));
	finish_points(&x);
	finish_waits(&x);
	for (size_t k = 0; k < n; k++)
		if (x.r->places[k].placed_at >= 0)
			x.r->bound++;
	x.r->pending = n - x.r->bound;
	*out = x.r;
	x.r = NULL;
	rc = 0;
out:
	replay_meter_release(&x.meter);
	free(x.mem_used);
	free(x.pods_on);
	free(x.replicas_used);
	free(x.is_dirty);
	free(x.dirty);
	free(x.state);
	free(x.tried);
	free(x.queue);
	free(x.acc);
	free(arr);
	free(dep);
	plan_free(x.plan);
	replay_fleet_release(&x.fleet);
	json_decref(pods);
	replay_result_free(x.r);
	return rc;
}
