#ifndef GS_REPLAY_SPREAD_H
#define GS_REPLAY_SPREAD_H

#include <stddef.h>

#include "engine/replay.h"

/*
 * The spread of several offline runs of one workload that differ only in
 * the scheduler's draws among tied nodes (replay_opts.tie_offset), per
 * percent of arrived GPU request (docs/guide/replay.md, "Ties and the
 * spread"): kube-scheduler breaks ties at random and unseeded, so a live
 * run is one draw among many, to be judged against the runs' range and
 * mean, not against one of them. Pure: results in, points out.
 */

/* At most this many runs (--tie-seeds). */
#define REPLAY_MAX_TIE_SEEDS 1000

struct replay_spread_point {
	int pct;	   /* arrived GPU request, % of capacity */
	size_t runs;	   /* runs averaged (all of them) */
	double alloc_mean; /* alloc_pct over the runs */
	double alloc_min, alloc_max;
	double alloc_sd; /* population standard deviation */
	double asked_mean, frag_mean;
	size_t pending_min, pending_max;
};

/*
 * The points at the percents every one of the `n_runs` results has, in the
 * first result's order: a new array of *n points (NULL and 0 when there
 * are no runs or no such percent). The results are borrowed.
 */
struct replay_spread_point *replay_spread(const struct replay_result *const *runs, size_t n_runs,
					  size_t *n);

/* How far `alloc` lies outside [alloc_min, alloc_max] of p, in points; 0 within. */
double replay_spread_outside(const struct replay_spread_point *p, double alloc);

#endif
