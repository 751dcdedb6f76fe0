#ifndef GS_REPLAY_DESIGN_H
#define GS_REPLAY_DESIGN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/replay.h"
#include "model/catalog.h"

/*
 * The replay of a trace under a sharing design (docs/guide/replay.md
 * "Sharing designs"): per trace GPU model (a pool), how its GPUs are
 * shared: time-slicing with N replicas, MIG under the mixed strategy with
 * one mig-parted layout of a MIG-capable catalog GPU, the DRA driver's
 * consumable shares (S shares per GPU device), or whole GPUs. The same
 * workload as replay_run (replay_workload), placed in arrival order by
 * kube-scheduler's default filters and scores on cpu and memory, each
 * task's GPU taken as the design's device layer would (the device
 * plugin's Allocate, or the structured allocator for DRA), and measured
 * as the paper does, with its fragmentation judged per device (a card, or
 * a MIG instance). Pure: a trace and a design in, a result out, no I/O.
 */

enum replay_sharing {
	REPLAY_TIME_SLICING,
	REPLAY_MIG,
	REPLAY_DRA_SHARES,
	REPLAY_WHOLE,
};

#define REPLAY_MAX_SHARES 1000 /* DRA shares per GPU: one per milli at most */
#define REPLAY_MAX_POOLS 16
#define REPLAY_POOL_ANY "*"

/* How one pool shares its GPUs. */
struct replay_pool_design {
	char *pool; /* a trace GPU code ("G2") or REPLAY_POOL_ANY for the rest */
	enum replay_sharing how;
	int replicas; /* TIME_SLICING: 2..REPLAY_MAX_REPLICAS (the plugin's minimum) */
	int shares;   /* DRA_SHARES: 1..REPLAY_MAX_SHARES */
	const struct catalog_gpu *gpu; /* MIG: the MIG-capable catalog GPU the pool's cards are */
	char *layout;		       /* MIG: the mig-parted layout ("all-balanced") */
};

struct replay_design {
	char *name; /* how the comparison names it */
	struct replay_pool_design *pools;
	size_t n_pools;
};

void replay_design_release(struct replay_design *d);

/* The entry for trace model `code`: its own, else REPLAY_POOL_ANY's, else NULL. */
const struct replay_pool_design *replay_design_pool(const struct replay_design *d,
						    const char *code);

/* "time-slicing x4", "MIG all-balanced on NVIDIA A100-SXM4-80GB", "DRA shares 100", "whole". */
void replay_pool_describe(const struct replay_pool_design *p, struct strbuf *out);

/*
 * The MIG profile a task of `num_gpu` x `gpu_milli` takes on a GPU of
 * `gpu` configured as `m` (catalog_layout_apply), under the mixed
 * strategy: a share (gpu_milli < 1000) the profile of the layout with the
 * fewest compute slices whose share of the GPU's compute slices covers
 * gpu_milli / 1000 (ties: less memory, then layout order), one instance; a
 * whole GPU (1000) the profile covering all compute slices, num_gpu
 * instances. NULL when the layout has none that covers it (the task does
 * not fit the pool). *count gets the instances.
 */
const struct catalog_mig_profile *replay_mig_profile(const struct catalog_gpu *gpu,
						     const struct catalog_gpu_mig *m, int gpu_milli,
						     int num_gpu, int *count);

/*
 * The DRA shares a task asks of each GPU device it takes when every device
 * has `shares`: a share ceil(gpu_milli x shares / 1000) of one device
 * (ceil(gpu_milli / 10) at 100), whole GPUs all `shares` of num_gpu
 * devices. 0 for a task without GPU. *count gets the devices.
 */
int replay_dra_shares(int gpu_milli, int num_gpu, int shares, int *count);

struct replay_design_result {
	const char *name; /* borrowed from the design */
	size_t n_nodes, n_gpus;
	int64_t capacity_milli; /* GPUs x 1000 */
	int64_t arrived_milli;	/* the whole workload's gpu request */
	size_t n_arrived, n_original;
	size_t n_typical;
	struct replay_point *points; /* alloc_pct: what the design holds; asked_pct: the paper's */
	size_t n_points;
	size_t bound, pending;
	size_t no_fit; /* tasks whose GPU no pool of the design can express */
};

/*
 * Run the design. Fails on options out of range, a GPU node whose model
 * the design does not cover, a MIG layout the catalog cannot apply to the
 * pool's GPU, or a trace with nothing to replay. `trace` and `d` are
 * borrowed and must outlive the result.
 */
int replay_design_run(const struct catalog *cat, const struct replay_trace *trace,
		      const struct replay_opts *o, const struct replay_design *d,
		      struct replay_design_result **out, struct gs_error *err) GS_WUR;
void replay_design_result_free(struct replay_design_result *r);

#endif
