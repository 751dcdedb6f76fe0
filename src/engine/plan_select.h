#ifndef GS_PLAN_SELECT_H
#define GS_PLAN_SELECT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Where kube-scheduler looks for a pod's node and which of the top-scored
 * nodes it takes (k8s.io/kubernetes v1.37.2 pkg/scheduler/schedule_one.go
 * findNodesThatPassFilters, numFeasibleNodesToFind, selectHost;
 * pkg/scheduler/backend/cache/node_tree.go list): the snapshot's node order,
 * the rotating start of the filter pass, the stop once enough feasible
 * nodes are found, and a seeded draw among equal top scores
 * (docs/guide/plan.md, "Large fleets"). No I/O.
 */

/* kube-scheduler's minFeasibleNodesToFind and minFeasibleNodesPercentageToFind. */
#define PLAN_MIN_FEASIBLE_NODES 100
#define PLAN_MIN_FEASIBLE_PERCENT 5

/*
 * numFeasibleNodesToFind: how many feasible nodes end the filter pass over
 * `n_all` nodes under percentageOfNodesToScore `percentage` (0: adaptive,
 * 50 - n_all/125 floored at 5; 1..100 as given): all nodes below 100 or at
 * 100%, else n_all x percentage / 100, at least 100.
 */
size_t plan_select_to_find(size_t n_all, int percentage);

struct plan_select;

/*
 * The selection state for the nodes `items` (a NodeList's items, borrowed
 * only during the call): the snapshot's order (zone round-robin, the zones
 * and the nodes of each in the order read), the filter pass starting at
 * `start` (mod the node count), the draws from `seed`.
 */
struct plan_select *plan_select_new(const json_t *items, int percentage, uint64_t seed,
				    size_t start);
/*
 * The same for `n` nodes without zone labels (one zone ""): the snapshot's
 * order is their index order, as plan_select_new gives for a NodeList whose
 * nodes carry no region or zone label.
 */
struct plan_select *plan_select_new_plain(size_t n, int percentage, uint64_t seed, size_t start);
void plan_select_free(struct plan_select *s);

/* The node at position k of the snapshot's order, and node i's position. */
size_t plan_select_node_at(const struct plan_select *s, size_t k);
size_t plan_select_pos(const struct plan_select *s, size_t i);
/* The start of the next filter pass (the scheduler's nextStartNodeIndex). */
size_t plan_select_start(const struct plan_select *s);

/*
 * One filter pass, from the start, over every node or over `list` (nodes
 * in snapshot order; the nodes outside it fail the filters and count as
 * processed):
 *	plan_walk_begin(&w, s, list, n);
 *	while (plan_walk_next(&w, &i))
 *		if (node i passes the filters && !plan_walk_take(&w))
 *			break;
 *	plan_walk_end(&w, s);
 * plan_walk_take says whether the feasible node just found is kept (false:
 * it is one past numFeasibleNodesToFind, the pass stops without it);
 * plan_walk_end moves the start on by the nodes processed.
 */
struct plan_walk {
	const size_t *order; /* the selection's */
	const size_t *list;
	size_t n_list;
	size_t n_all, start, to_find;
	size_t k;	  /* steps taken */
	size_t first;	  /* list mode: the list index the pass begins at */
	size_t cur;	  /* the node of the last step */
	size_t found;	  /* feasible nodes kept */
	bool stopped;	  /* at cur, one past to_find */
	size_t processed; /* after plan_walk_end: the nodes the pass counted */
};
void plan_walk_begin(struct plan_walk *w, const struct plan_select *s, const size_t *list,
		     size_t n_list);
bool plan_walk_next(struct plan_walk *w, size_t *node);
bool plan_walk_take(struct plan_walk *w);
void plan_walk_end(struct plan_walk *w, struct plan_select *s);

/*
 * selectHost's reservoir over `n` nodes of equal top score, in the order
 * they were scored: the k-th (k >= 2) replaces the pick when a draw below k
 * is 0, one draw each. Returns the index (0..n-1) picked; no draw for n 1.
 * With `first`, 0 without drawing.
 */
size_t plan_select_tie(struct plan_select *s, size_t n, bool first);

#endif
