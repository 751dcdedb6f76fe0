#ifndef GS_SOAK_H
#define GS_SOAK_H

/*
 * The soak (docs/design/soak.md): a seeded random run against the local
 * control plane (scripts/cluster/up.sh) that checks, after every step, that
 * gpushare's books balance. Not part of the product: it links the library
 * (the kube client to act and read, the engine to recompute) and lives
 * with the tests.
 *
 * A step is one line of text ("pod soak-a p12 nvidia.com/gpu=1"), made by
 * the generator (world.c) from the seed and the last snapshot, applied by
 * step_apply; a failing run's lines are replayed from a reset state to
 * shrink it (soak.c).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "kube/kubeclient.h"
#include "model/catalog.h"

/* ---- the cluster (cluster.c) ---------------------------------------------------------- */

struct soak_cluster {
	struct kube_client *c;
	const char *kubeconfig; /* the admin kubeconfig, for gpushare fault */
	const char *dir;	/* the cluster's state dir (GS_CLUSTER_DIR) */
	const char *scripts;	/* scripts/cluster */
	const char *gpushare;	/* the gpushare binary that runs `fault` */
	int controller_port;	/* gpushare controller's /metrics */
	/* Faults through `gpushare fault` (slower: a process per step) rather than the
	 * same merge patches written directly. */
	bool fault_cli;
	/*
	 * The device-plugin ConfigMap as the apiserver last returned it: the
	 * soak is its only writer here, so a PATCH's answer saves a GET per
	 * step. NULL = read it.
	 */
	json_t *configmap;
	/* Monotonic seconds at which the last controller or apiserver restart ended. */
	double restarted_at;
};

double soak_now(void);	/* monotonic seconds */
double soak_wall(void); /* Unix seconds */
void soak_sleep_ms(long ms);

/*
 * Run argv (argv[0] a path), its standard output and error into *out
 * (caller frees; may be NULL to discard). Returns the exit status, or -1
 * when it could not be started or was killed by a signal.
 */
int soak_run(char *const argv[], char **out);

/* GET /metrics of the controller into a new object {"name{labels}": value}; -1 when down. */
int soak_metrics(const struct soak_cluster *cl, json_t **out, struct gs_error *err) GS_WUR;

/* scripts/cluster/component.sh restart [-s SIG] NAME; 0 when healthy again. */
int soak_component_restart(struct soak_cluster *cl, const char *name, const char *sig,
			   struct gs_error *err) GS_WUR;

/* ---- the world: what the run made, and the next step (world.c) ------------------------ */

#define SOAK_NS_N 3
extern const char *const soak_namespaces[SOAK_NS_N];
#define SOAK_LABEL "gpushare.io/soak"
#define SOAK_CM_NS "gpu-share"
#define SOAK_CM_NAME "device-plugin-configs"

enum soak_kind {
	K_POD,
	K_DELETE_POD,
	K_DEPLOY,
	K_SCALE,
	K_DELETE_DEPLOY,
	K_JOB,
	K_DELETE_JOB,
	K_CM_REPLICAS,
	K_CM_SHARING,
	K_CM_FAIL1,
	K_CM_MIG,
	K_NODE_CONFIG,
	K_MIG,
	K_MIG_UNSTALL,
	K_FAULT_GPU,
	K_FAULT_CLEAR,
	K_RESTART_PLUGIN,
	K_KUBELET,
	K_GC,
	K_KILL_CONTROLLER,
	K_RESTART_APISERVER,
	K_N
};
extern const char *const soak_kind_names[K_N];
/* The kind of a step line, or -1. */
int soak_kind_of(const char *line);

struct world;
struct world *world_new(uint64_t seed);
void world_free(struct world *w);
/* Back to the state soak_reset leaves (the seed's stream goes on). */
void world_reset(struct world *w);
/*
 * The next step, as a line (caller frees). `pods` is the last PodList
 * (for deletions); `force` >= 0 asks for that kind.
 */
char *world_next(struct world *w, const json_t *pods, int force);
/* Keep the model in step with a line applied (also for replays). */
void world_note(struct world *w, const char *line);
/*
 * node-config steps may name a key the ConfigMap lacks (off by default: the
 * controller's admission then diverges from the plugin config-manager keeps
 * linked, docs/design/soak.md "Known").
 */
void world_allow_missing_key(struct world *w, bool on);
/* A bit per kind applied so far. */
unsigned world_seen(const struct world *w);

/* What applying a step did, for the counts. */
enum soak_outcome {
	O_DONE,	   /* written */
	O_REFUSED, /* the apiserver refused it (quota, invalid) */
	O_NOOP,	   /* nothing to act on (already gone, already there) */
	O_N
};

/*
 * Apply one line. Returns 0 with *outcome, or -1 when the line cannot be
 * applied at all (the cluster unreachable, a script failed).
 */
int step_apply(struct soak_cluster *cl, struct world *w, const char *line,
	       enum soak_outcome *outcome, struct gs_error *err) GS_WUR;

/*
 * The state every run and replay starts from: the soak's namespaces with
 * their quotas and nothing else in them, its ConfigMap keys as at first,
 * its nodes made afresh and advertised by the controller.
 */
int soak_reset(struct soak_cluster *cl, struct world *w, struct gs_error *err) GS_WUR;
/* Remove everything the soak made (namespaces, nodes, ConfigMap keys). */
int soak_cleanup(struct soak_cluster *cl, struct gs_error *err) GS_WUR;

/* ---- the invariants (check.c) ---------------------------------------------------------- */

enum soak_invariant {
	INV_HELD_TWICE,	     /* no device held by two pods */
	INV_REPLICAS,	     /* replicas per GPU never above the configured count */
	INV_REFUSED,	     /* nothing running that a real node would have refused */
	INV_BOOKS,	     /* the controller's books equal the pods' */
	INV_QUOTA,	     /* quota usage recomputed equals the apiserver's */
	INV_MIG_STUCK,	     /* no node pending past its walk's time unless stalled */
	INV_ADMISSION_STUCK, /* every bound pod is decided */
	INV_N
};
extern const char *const soak_invariant_names[INV_N];

struct snapshot {
	json_t *pods, *nodes, *configmap, *quotas; /* items arrays; configmap may be NULL */
	json_t *metrics;			   /* NULL when the controller did not answer */
	double at;				   /* monotonic */
	double wall;
};
void snapshot_release(struct snapshot *s);
/* pods may be given (a list already read): it is taken. */
int snapshot_take(struct soak_cluster *cl, json_t *pods, struct snapshot *s,
		  struct gs_error *err) GS_WUR;

struct violation {
	enum soak_invariant inv;
	bool eventual; /* may hold once the system catches up: waited for */
	char *what;    /* one line: the objects involved and how they differ */
};

struct violations {
	struct violation *v;
	size_t n, cap;
};
void violations_release(struct violations *vs);

struct checker;
struct checker *checker_new(const struct catalog *cat);
void checker_free(struct checker *ck);
void checker_reset(struct checker *ck);
/*
 * Every invariant on one snapshot. `grace` extends the time-based ones
 * (seconds the control plane was down lately). Pods whose admission
 * checked good are remembered and not checked again.
 */
void checker_run(struct checker *ck, const struct snapshot *s, const struct soak_cluster *cl,
		 struct violations *out);

/* A soak pod (in a soak namespace). */
bool soak_pod(const json_t *pod);

#endif
