#ifndef GS_REPLAY_H
#define GS_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/error.h"
#include "model/catalog.h"

struct ledger;

/*
 * Replay of a GPU-sharing trace in the form of Alibaba's
 * cluster-trace-gpu-v2023 (the FGD paper's openb trace; docs/guide/replay.md):
 * the trace's nodes become Nodes under a time-slicing device-plugin config
 * of N replicas per GPU, its tasks Pods asking for replicas of
 * nvidia.com/gpu; the workload is built as the paper's simulator builds it
 * (every task, shuffled, then tasks drawn with replacement up to X times
 * the GPU capacity); plan_run places the pods in arrival order, the device
 * plugin's Allocate (admission_decide) picks each pod's replicas, and after
 * every arrival the GPU allocation and the paper's fragmentation are
 * measured. Pure: a trace in, a result out, no I/O.
 */

#define REPLAY_MAX_NODES 20000
#define REPLAY_MAX_TASKS 200000	   /* tasks read from a trace */
#define REPLAY_MAX_ARRIVALS 200000 /* pods after inflation (plan's own cap) */
#define REPLAY_MAX_REPLICAS 100
#define REPLAY_MAX_GPUS 64		 /* per node and per task */
#define REPLAY_MAX_CPU_MILLI 100000000LL /* 100,000 cores */
#define REPLAY_MAX_MEMORY_MIB (1LL << 32)
#define REPLAY_MILLI 1000		/* one whole GPU in the trace's gpu_milli */
#define REPLAY_MAX_TIME 1000000000000LL /* trace seconds (about 31,700 years) */

/* The node label carrying the trace's GPU model code (what gpu_spec names). */
#define REPLAY_LABEL_MODEL "gpushare.io/trace-gpu-model"
/* The device-plugin ConfigMap key every GPU node is labelled with. */
#define REPLAY_CONFIG_KEY "time-sliced"

struct replay_node {
	char *name;
	int64_t cpu_milli;
	int64_t memory_mib;
	int gpus;
	char *model; /* the trace's GPU code ("T4", "G2", ...); "" without GPUs */
};

struct replay_task {
	char *name;
	int64_t cpu_milli;
	int64_t memory_mib;
	int num_gpu;
	int gpu_milli;	/* per GPU: < 1000 shares one GPU, 1000 whole GPUs */
	char *gpu_spec; /* "" any model, else trace codes separated by '|' */
	/* Trace times in seconds, read for a replay with departures (-1: not read;
	   scheduled -1 also when the trace has none: never scheduled there). */
	int64_t created, deleted, scheduled;
};

struct replay_trace {
	struct replay_node *nodes;
	size_t n_nodes;
	struct replay_task *tasks;
	size_t n_tasks;
};

void replay_trace_release(struct replay_trace *t);

/*
 * The catalog GPU (its NVML name) a trace GPU code stands for, NULL for a
 * code the replay does not know. The table is in docs/guide/replay.md.
 */
const char *replay_gpu_product(const char *code);

struct replay_opts {
	int replicas;	/* time-slicing replicas per GPU, 1..REPLAY_MAX_REPLICAS */
	uint64_t seed;	/* of the shuffle, the draws and the scheduler's ties */
	double inflate; /* requested GPU of the workload, in times the capacity (> 0) */
	/* replay_run's scheduler draws among tied nodes come from seed +
	   tie_offset, its workload from seed alone (0: both from seed); the
	   designs and the replay in trace time read seed only. */
	uint64_t tie_offset;
};

/*
 * Replicas of nvidia.com/gpu a task asks for under `replicas` per GPU:
 * ceil(gpu_milli / (1000 / replicas)) for a share, num_gpu x replicas for
 * whole GPUs, 0 for none.
 */
int replay_task_replicas(const struct replay_task *t, int replicas);

/* One arrival. */
struct replay_place {
	size_t task;   /* index into the trace's tasks */
	char *name;    /* the pod's name (a drawn copy: "<task>-tuned-<i>") */
	bool bound;    /* false: pending (or refused by the kubelet, see reason) */
	long node;     /* index into the trace's nodes; -1 when not bound */
	char *reason;  /* not bound: the scheduler's (or kubelet's) words */
	int n_cards;   /* cards holding its replicas */
	int *cards;    /* their indexes on the node (NVML order) */
	int *replicas; /* replicas held on each */
	/* In trace time (replay_events.h): when it was bound and when it left,
	   trace seconds; placed_at -1 when it never ran. */
	int64_t placed_at, left_at;
};

/* The measures at one percent of arrived GPU request (means over its arrivals). */
struct replay_point {
	int pct;	       /* arrived GPU request, % of capacity, rounded */
	size_t samples;	       /* arrivals averaged */
	double alloc_pct;      /* replicas held x (1000 / N) / capacity milli */
	double asked_pct;      /* gpu_milli the trace asked of the bound tasks / capacity */
	double frag_pct;       /* fragmented idle / idle GPU (the paper's definition) */
	double frag_milli;     /* fragmented idle GPU, milli */
	double idle_milli;     /* idle GPU, milli */
	double frag_sched_pct; /* the same judged by replica counts (the scheduler's view) */
	double stranded_milli; /* idle GPU no typical task can use where it is (designs only) */
	size_t bound;	       /* after the last arrival of the percent */
	size_t pending;
};

/* A task shape of the typical mix (the paper's "typical pods"). */
struct replay_typical {
	int64_t cpu_milli;
	int gpu_milli;
	int num_gpu;
	const char *gpu_spec; /* borrowed from the trace */
	double weight;	      /* its share of the mix, the shares sum to 1 */
};

/* The replay in trace time (replay_events.h): its measures. */

#define REPLAY_STEPS 100 /* the span is measured in 1% steps */

/* One 1% step of the span: time-weighted means over it, counts at its end. */
struct replay_tpoint {
	int pct;		 /* 1..100: the step ends at pct% of the span */
	int64_t time;		 /* trace seconds at its end (rounded down) */
	double alloc_pct;	 /* replicas held x (1000 / N) / capacity milli */
	double asked_pct;	 /* gpu_milli the running tasks asked / capacity */
	double frag_pct;	 /* the paper's fragmentation / idle GPU */
	double frag_milli;	 /* fragmented idle GPU, milli */
	double idle_milli;	 /* idle GPU, milli */
	double frag_sched_pct;	 /* the same by replica counts */
	size_t arrived, left;	 /* tasks that arrived, left in the step */
	size_t running, pending; /* at its end */
};

/* The waits of one pool's tasks (arrival to placement, trace seconds). */
struct replay_waits {
	char *pool; /* the task's gpu_spec, "any" when empty, "none" without GPU; "all" */
	size_t tasks, ran, never;
	double mean;	       /* over the tasks that ran */
	int64_t p50, p95, max; /* nearest rank over the tasks that ran; 0 when none */
};

struct replay_timeline {
	int64_t start, end;	      /* first arrival, last departure */
	struct replay_tpoint *points; /* REPLAY_STEPS of them */
	size_t n_points;
	struct replay_waits *waits; /* per pool in order of first arrival, then "all" */
	size_t n_waits;
	size_t attempts;    /* scheduling attempts: arrivals and retries */
	size_t retries;	    /* of them, retries of a waiting task */
	size_t max_pending; /* the longest queue */
	size_t failed;	    /* bound, then refused (apiserver, kubelet): never ran */
};

struct replay_result {
	int replicas;
	size_t n_nodes, n_gpus;
	int64_t capacity_milli;	     /* GPUs x 1000 */
	int64_t arrived_milli;	     /* the whole workload's gpu request */
	struct replay_place *places; /* in arrival order */
	size_t n_places;
	size_t n_original; /* arrivals that are the trace's own tasks (the rest are draws) */
	struct replay_point *points; /* by pct, only percents some arrival rounds to */
	size_t n_points;
	struct replay_typical *typical;
	size_t n_typical;
	size_t bound, pending;
	/* In trace time (replay_events.h): bound counts the tasks that ran,
	   pending those that never did; points is empty. NULL otherwise. */
	struct replay_timeline *timeline;
};

void replay_timeline_free(struct replay_timeline *t);

/*
 * Run the replay. Fails on options out of range, a trace the fleet cannot
 * be built from (a GPU code without a catalog GPU, nothing to place), or
 * the plan engine's failures. `trace` is borrowed and must outlive the
 * result (names and specs are shared).
 */
int replay_run(const struct catalog *cat, const struct replay_trace *trace,
	       const struct replay_opts *o, struct replay_result **out,
	       struct gs_error *err) GS_WUR;
void replay_result_free(struct replay_result *r);

/*
 * replay_run is these steps; a live replay (docs/guide/replay.md) places
 * the same arrivals on a cluster instead and measures them the same way.
 *
 * replay_prepare: the workload, every arrival unplaced (pending, node -1,
 * no cards): options and trace checked, capacity, typical mix, arrivals
 * (names, tasks) set, no points yet. `trace` must outlive the result.
 */
int replay_prepare(const struct replay_trace *trace, const struct replay_opts *o,
		   struct replay_result **out, struct gs_error *err) GS_WUR;
/*
 * The measures of r's places in arrival order (bound, node, the replicas
 * on each card): r->points, r->bound and r->pending, replacing any before.
 * Fails, naming the pod, on a bound place whose node is not the trace's or
 * whose cards the node lacks or overfill (more than r->replicas held).
 */
int replay_measure(const struct replay_trace *trace, struct replay_result *r,
		   struct gs_error *err) GS_WUR;
/*
 * Set pl's cards and replicas from `devices` ({resource: [device IDs]}, a
 * pod's gpushare.io/devices record or an admission's choice) as `l`, its
 * node's ledger, places them: cards in the order the IDs first name them.
 * IDs the ledger does not register are skipped.
 */
void replay_place_devices(struct replay_place *pl, const struct ledger *l, const json_t *devices);

/*
 * The objects the replay models (docs/guide/replay.md), new references:
 * a trace node as a Node (capacity, GPU annotations, the model label and
 * the device-plugin config label set to `config_key`), a task as a Pod in
 * namespace default, and the time-slicing config text (caller frees).
 */
json_t *replay_node_object(const struct replay_node *n, const char *config_key);
json_t *replay_pod_object(const struct replay_task *t, const char *name, int replicas);
char *replay_config_text(int replicas);

/*
 * The typical mix of `tasks` (the simulator's GetTypicalPods with
 * isInvolvedCpuPods true, podPopularityThreshold 95, podIncreaseStep 1).
 * A new array (*n entries); specs borrowed from the tasks.
 */
struct replay_typical *replay_typical_mix(const struct replay_task *tasks, size_t n_tasks,
					  size_t *n);

/*
 * The paper's fragmentation of one node (the simulator's
 * NodeGpuShareFragAmount): `left` the idle milli of each of its cards,
 * `cpu_left` its unrequested cpu, `model` its GPU code. Returns the
 * fragmented milli (every class but "satisfied"); *idle gets the idle milli.
 */
double replay_node_frag(const double *left, int n_cards, int64_t cpu_left, const char *model,
			const struct replay_typical *mix, size_t n_mix, double *idle);

/*
 * Shared with the design replay (engine/replay_design.h): the same
 * workload, the same node access rule and the same per-percent means.
 */

/*
 * The trace within REPLAY_MAX_NODES nodes and REPLAY_MAX_TASKS tasks (a
 * trace not read by fleet/trace.h may be larger); -1 with err otherwise.
 */
int replay_check_size(const struct replay_trace *tr, struct gs_error *err) GS_WUR;

/*
 * The arrival order (indexes into tr->tasks) for o->seed and o->inflate
 * against `capacity` milli: a new array of *n_out entries, the first
 * *n_original of them the trace's own tasks. Fails when the tasks ask for
 * no GPU or the inflation needs more than REPLAY_MAX_ARRIVALS pods.
 */
int replay_workload(const struct replay_trace *tr, const struct replay_opts *o, int64_t capacity,
		    size_t **order_out, size_t *n_out, size_t *n_original,
		    struct gs_error *err) GS_WUR;

/* Whether a node of trace model `model` ("" without GPUs) passes a gpu_spec
 * (IsNodeAccessibleToPodByType). */
bool replay_accessible(const char *model, const char *spec);

/* The cluster after one arrival (or before the first). */
struct replay_row {
	int64_t arrived;
	double alloc, asked, frag, idle, frag_sched;
	size_t bound, pending;
	double stranded;
};

/* The rows' means per percent of `capacity` (merge_*_discrete.py): a new array of *n points. */
struct replay_point *replay_bucket(const struct replay_row *rows, size_t n_rows, int64_t capacity,
				   size_t *n);

#endif
