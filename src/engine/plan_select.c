#include "engine/plan_select.h"

#include <stdlib.h>
#include <string.h>

#include "model/kobj.h"
#include "base/splitmix.h"
#include "base/strbuf.h"
#include "base/wrapper.h"
#include "base/banned.h"

struct plan_select {
	size_t n;
	size_t *order; /* position -> node index */
	size_t *pos;   /* node index -> position */
	size_t next_start;
	int percentage;
	struct splitmix rng;
};

size_t plan_select_to_find(size_t n_all, int percentage)
{
	size_t pct;

	if (n_all < PLAN_MIN_FEASIBLE_NODES || percentage >= 100)
		return n_all;
	if (percentage > 0)
		pct = (size_t)percentage;
	else {
		/* 50 - n/125 in int32 arithmetic, floored at 5 */
		size_t drop = n_all / 125;
		pct = drop >= 50 - PLAN_MIN_FEASIBLE_PERCENT ? PLAN_MIN_FEASIBLE_PERCENT
							     : 50 - drop;
	}
	size_t k = n_all * pct / 100;
	return k < PLAN_MIN_FEASIBLE_NODES ? PLAN_MIN_FEASIBLE_NODES : k;
}

/* ---- the snapshot's order ---------------------------------------------------- */

/*
 * utilnode.GetZoneKey (k8s.io/component-helpers node/topology): region and
 * zone from the GA labels, else the beta ones; "" when both are empty.
 */
static char *zone_key(const json_t *node)
{
	const json_t *labels = kobj_get(node, "metadata.labels");
	const json_t *z = json_object_get(labels, "topology.kubernetes.io/zone");
	const json_t *r = json_object_get(labels, "topology.kubernetes.io/region");
	const char *zone, *region;

	if (!z)
		z = json_object_get(labels, "failure-domain.beta.kubernetes.io/zone");
	if (!r)
		r = json_object_get(labels, "failure-domain.beta.kubernetes.io/region");
	zone = json_is_string(z) ? json_string_value(z) : "";
	region = json_is_string(r) ? json_string_value(r) : "";
	if (!*zone && !*region)
		return gs_xstrdup("");
	/* Label values hold no newline: a separator no region or zone has. */
	return gs_xasprintf("%s\n%s", region, zone);
}

struct zone {
	size_t *nodes;
	size_t n, cap;
};

/*
 * nodeTree.list: zones in the order their first node was added, one node
 * of each zone in turn. Nodes are added to the scheduler's cache in the
 * order its informer delivers them; for files, the order read.
 */
static void snapshot_order(struct plan_select *s, const json_t *items)
{
	json_t *index = json_object();
	struct zone *zones = gs_xcalloc(s->n + 1, sizeof(*zones));
	size_t n_zones = 0, i, k = 0;
	const json_t *node;

	json_array_foreach (items, i, node) {
		char *key = zone_key(node);
		const json_t *zi = json_object_get(index, key);
		size_t z = zi ? (size_t)json_integer_value(zi) : n_zones;
		if (!zi)
			json_object_set_new(index, key, json_integer((json_int_t)n_zones++));
		free(key);
		if (zones[z].n == zones[z].cap) {
			zones[z].cap = zones[z].cap ? 2 * zones[z].cap : 8;
			zones[z].nodes = gs_xrealloc(zones[z].nodes, zones[z].cap * sizeof(size_t));
		}
		zones[z].nodes[zones[z].n++] = i;
	}
	for (size_t round = 0; k < s->n; round++)
		for (size_t z = 0; z < n_zones; z++)
			if (round < zones[z].n)
				s->order[k++] = zones[z].nodes[round];
	for (k = 0; k < s->n; k++)
		s->pos[s->order[k]] = k;
	for (size_t z = 0; z < n_zones; z++)
		free(zones[z].nodes);
	free(zones);
	json_decref(index);
}

static struct plan_select *select_alloc(size_t n, int percentage, uint64_t seed, size_t start)
{
	struct plan_select *s = gs_xcalloc(1, sizeof(*s));

	s->n = n;
	s->order = gs_xcalloc(s->n + 1, sizeof(size_t));
	s->pos = gs_xcalloc(s->n + 1, sizeof(size_t));
	s->percentage = percentage;
	s->rng.s = seed;
	s->next_start = s->n ? start % s->n : 0;
	return s;
}

struct plan_select *plan_select_new(const json_t *items, int percentage, uint64_t seed,
				    size_t start)
{
	struct plan_select *s = select_alloc(json_array_size(items), percentage, seed, start);

	snapshot_order(s, items);
	return s;
}

struct plan_select *plan_select_new_plain(size_t n, int percentage, uint64_t seed, size_t start)
{
	struct plan_select *s = select_alloc(n, percentage, seed, start);

	for (size_t k = 0; k < n; k++)
		s->order[k] = s->pos[k] = k;
	return s;
}

void plan_select_free(struct plan_select *s)
{
	if (!s)
		return;
	free(s->order);
	free(s->pos);
	free(s);
}

size_t plan_select_node_at(const struct plan_select *s, size_t k)
{
	return s->order[k];
}

size_t plan_select_pos(const struct plan_select *s, size_t i)
{
	return s->pos[i];
}

size_t plan_select_start(const struct plan_select *s)
{
	return s->next_start;
}

/* ---- the filter pass --------------------------------------------------------- */

void plan_walk_begin(struct plan_walk *w, const struct plan_select *s, const size_t *list,
		     size_t n_list)
{
	memset(w, 0, sizeof(*w));
	w->order = s->order;
	w->list = list;
	w->n_list = list ? n_list : s->n;
	w->n_all = s->n;
	w->start = s->next_start;
	w->to_find = plan_select_to_find(s->n, s->percentage);
	if (list) {
		/* The first of the list at or after the start (the list is in snapshot order). */
		size_t lo = 0, hi = n_list;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (s->pos[list[mid]] < w->start)
				lo = mid + 1;
			else
				hi = mid;
		}
		w->first = lo == n_list ? 0 : lo;
	}
}

bool plan_walk_next(struct plan_walk *w, size_t *node)
{
	if (w->stopped || w->k >= w->n_list)
		return false;
	if (w->list)
		w->cur = w->list[(w->first + w->k) % w->n_list];
	else
		w->cur = w->order[(w->start + w->k) % w->n_all];
	w->k++;
	*node = w->cur;
	return true;
}

bool plan_walk_take(struct plan_walk *w)
{
	if (++w->found > w->to_find) {
		w->found--;
		w->stopped = true;
		return false;
	}
	return true;
}

void plan_walk_end(struct plan_walk *w, struct plan_select *s)
{
	if (!w->n_all)
		return;
	/* processedNodes: the feasible nodes kept and every node that failed
	   before the pass stopped (the one past to_find is neither) */
	w->processed = w->stopped ? (s->pos[w->cur] + w->n_all - w->start) % w->n_all : w->n_all;
	s->next_start = (w->start + w->processed) % w->n_all;
}

size_t plan_select_tie(struct plan_select *s, size_t n, bool first)
{
	size_t pick = 0;

	if (first)
		return 0;
	for (size_t k = 2; k <= n; k++)
		if (splitmix_below(&s->rng, k) == 0)
			pick = k - 1;
	return pick;
}
