#ifndef GS_REPLAY_INT_H
#define GS_REPLAY_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "engine/explain_offline.h"

struct catalog;
struct dpconfig_set;
struct ledger;
struct replay_place;
struct replay_result;
struct replay_trace;

/*
 * Private to src/engine/replay*.c: the pieces of the arrivals-only replay
 * (replay.c) that the replay in trace time (replay_events.c) builds on, so
 * that both place through the same fleet, ledgers and device plugin and
 * are measured by the same code.
 */

/*
 * A new result for `trace` under `replicas` per GPU, no arrival yet:
 * replicas in range, the trace within the limits, every GPU model in the
 * catalog, some GPU and some task; capacity and the typical mix set.
 */
int replay_result_new(const struct replay_trace *trace, int replicas, struct replay_result **out,
		      struct gs_error *err) GS_WUR;

/*
 * The fleet a replay places on offline: the trace's nodes as Nodes
 * advertised under the time-slicing config, and each GPU node's device
 * plugin ledger. Release frees it all (also after a failed build).
 */
struct replay_fleet {
	json_t *configmap;
	struct dpconfig_set *set;
	struct explain_fleet fleet; /* fleet.nodes: the advertised NodeList, by trace index */
	json_t *node_index;	    /* node name -> trace index */
	struct ledger **ledgers;    /* per trace node; NULL without GPU */
	size_t n_nodes;
};
int replay_fleet_build(const struct catalog *cat, const struct replay_trace *trace, int replicas,
		       struct replay_fleet *f, struct gs_error *err) GS_WUR;
void replay_fleet_release(struct replay_fleet *f);

/*
 * The device plugin's Allocate of a bound pod's replicas on its node's
 * ledger `l` (admission_decide, then ledger_hold as "default/<name>"):
 * sets pl's cards and replicas; a refusal sets pl->bound false and
 * pl->reason. Fails on an unreadable pod or a ledger that refuses the hold.
 */
int replay_allocate(struct ledger *l, const json_t *pod, struct replay_place *pl,
		    struct gs_error *err) GS_WUR;

/* One node as measured: the replicas held on its cards and its cpu requested. */
struct rnode {
	int *held; /* replicas held per card, by NVML index */
	int n_cards;
	int64_t cpu_used;
	double frag, idle, frag_sched;
};

/*
 * What replay_measure measures, while bound tasks come (and, in trace
 * time, go): per node, and the sums over the nodes.
 */
struct replay_meter {
	const struct replay_trace *tr;
	const struct replay_result *r; /* its replicas and typical mix, borrowed */
	struct rnode *rn;	       /* per trace node */
	double *left;		       /* scratch: one node's cards */
	double frag, idle, frag_sched; /* milli, sums over the nodes */
	int64_t held;		       /* replicas the bound tasks ask */
	int64_t asked;		       /* gpu_milli they ask */
};

/* Every node empty and measured. Release frees it. */
void replay_meter_init(struct replay_meter *m, const struct replay_trace *trace,
		       const struct replay_result *r);
/*
 * A bound place's task comes (sign 1) or goes (-1): its replicas on its
 * cards, its cpu, its node measured again. Fails, naming the pod, on a node
 * that is not the trace's or cards the node lacks, overfills (more than
 * r->replicas held) or does not hold.
 */
int replay_meter_move(struct replay_meter *m, const struct replay_place *pl, int sign,
		      struct gs_error *err) GS_WUR;
/* The allocation (milli of GPU the bound tasks' replicas stand for). */
double replay_meter_alloc(const struct replay_meter *m);
void replay_meter_release(struct replay_meter *m);

#endif
