#ifndef GS_PLAN_H
#define GS_PLAN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/pools.h"
#include "model/dpconfig_set.h"
#include "model/kubeversion.h"
#include "base/error.h"
#include "yaml/ydoc.h"

/*
 * Place a batch of pods, in order, as kube-scheduler v1.34's default
 * profile would on a fleet of advertised nodes, with the apiserver's
 * validation (src/engine/podvalidate.h) and quota admission at create and
 * the kubelet's device admission after binding (docs/guide/plan.md).
 * Pure: objects in, an outcome out, no I/O.
 */

enum plan_verdict {
	PLAN_BOUND,   /* scheduled and admitted by the kubelet */
	PLAN_PENDING, /* no node passes the filters */
	PLAN_REFUSED, /* refused at create: by the apiserver's validation, or by quota */
	PLAN_FAILED,  /* bound, then refused by the kubelet (UnexpectedAdmissionError) */
};

const char *plan_verdict_name(enum plan_verdict v);

struct plan_pod {
	char *namespace; /* metadata.namespace, "default" when absent */
	char *name;
	enum plan_verdict verdict;
	char *node;	     /* BOUND, FAILED: the node; else NULL */
	char *reason;	     /* PENDING: the scheduler's FitError text; REFUSED: the apiserver's;
				FAILED: the kubelet's status message; BOUND: how the node was chosen */
	char *status_reason; /* FAILED: the pod's status.reason (UnexpectedAdmissionError,
				OutOfcpu, NodeAffinity, ...) */
	/* The nodes passing the filters: how many, and the first PLAN_MAX_LISTED
	   of them in node order (indexes into plan_result.nodes). */
	size_t n_feasible;
	size_t *feasible;
	size_t n_feasible_listed;
	/* BOUND by the scheduler: the nodes sharing the top score (it picks one at
	   random, plan by a seeded draw: plan_sched): how many, and the first
	   PLAN_MAX_LISTED, the chosen one first, then in the pass's order. */
	size_t n_tied;
	size_t *tied;
	size_t n_tied_listed;
	/* Scheduled: where its filter pass began in the snapshot's node order
	   and how many nodes it processed; sampled when the pass stopped at
	   numFeasibleNodesToFind before reading every node. */
	size_t start, evaluated;
	bool sampled;
	char **requests; /* "name=quantity" of its effective requests, sorted */
	size_t n_requests;
	/* PENDING: each nvidia.com/ name it asks for that no node advertises, with the
	   names the fleet does advertise ("no node advertises X; the nodes advertise Y") */
	char **hints;
	size_t n_hints;
	/* The pod's spec.resourceClaims as DynamicResources judged them: a JSON
	   array (docs/guide/plan.md "DRA claims"), NULL when it has none or
	   went no further than PreEnqueue/PreFilter. */
	json_t *claims;
	bool gone; /* left by plan_remove: it held what its verdict says until then */
};

/* One hard limit of one quota, after the batch. */
struct plan_quota_use {
	char *namespace;
	char *quota;
	char *resource;
	char *used;
	char *hard;
};

/* Headroom per pool and nvidia.com/ resource after the batch: struct pool_use (pools.h). */

struct plan_result {
	char **nodes; /* node names in input order */
	size_t n_nodes;
	struct plan_pod *pods;
	size_t n_pods;
	struct plan_quota_use *quotas;
	size_t n_quotas;
	struct pool_use *pools; /* in order of first appearance */
	size_t n_pools;
};

/*
 * How the scheduler samples nodes and breaks ties (docs/guide/plan.md,
 * "Large fleets"); all zero is the default profile with seed 0.
 */
struct plan_sched {
	uint64_t seed;	 /* of the draws among nodes of equal top score */
	int percentage;	 /* percentageOfNodesToScore: 0 adaptive (the default), 1..100 */
	size_t start;	 /* nextStartNodeIndex before the first pod */
	bool ties_first; /* the first tied node in the pass's order, no draw */
};

struct plan_input {
	const json_t *nodes;	/* NodeList as gpushare advertises it (explain_fleet) */
	const json_t *existing; /* PodList already there; NULL = none */
	const json_t *pods;	/* JSON array of the Pods to place, in order */
	const json_t *quotas;	/* the ResourceQuotas (an array), spec.hard checked; NULL = none */
	const struct dpconfig_set *configs; /* for the kubelet's admission; NULL = none */
	/* The release whose scheduler is modelled (NULL: the newest) and its
	 * gates (NULL: the release's defaults). */
	const struct kubeversion *kube;
	const struct kubegates *gates;
	/* DRA objects (arrays; NULL = none): with DRAExtendedResource, a pod's
	 * extended resource a DeviceClass serves goes to the devices of the
	 * slices on a node that lacks it, the claims' devices taken. */
	const json_t *device_classes;
	const json_t *slices;
	const json_t *claims;
	/* A pod's own spec.resourceClaims (DynamicResources): the claims it
	 * names among `claims`, or made from these ResourceClaimTemplates (an
	 * array; NULL = none) as the resourceclaim controller would. When all
	 * four DRA arrays are NULL (a caller without a view of DRA objects)
	 * the pods' claims are not read. */
	const json_t *claim_templates;
	struct plan_sched sched;
};

#define PLAN_MAX_NODES 20000
#define PLAN_MAX_PODS 200000
/* Nodes named per pod in its feasible and tied lists (the counts are whole). */
#define PLAN_MAX_LISTED 16

/*
 * Run the plan. Fails on input that is not what the fields say, or
 * quantities that do not parse (quota ones at file:line:col).
 */
int plan_run(const struct plan_input *in, struct plan_result **out, struct gs_error *err) GS_WUR;

/*
 * The same one pod at a time, for batches read as they are placed: the
 * fleet, the pods already there and the quotas of `in` (in->pods is not
 * read; every object of `in` is borrowed until plan_finish or plan_free),
 * then plan_add for each pod in order (the pod may be freed once it
 * returns), then plan_finish for the outcome (which frees the plan).
 * plan_add fails as plan_run does for that pod; the plan is then to be
 * freed.
 */
struct plan;
int plan_new(const struct plan_input *in, struct plan **out, struct gs_error *err) GS_WUR;
/*
 * plan_new with the pods already there read one at a time too:
 * plan_begin (in->existing is not read), plan_add_existing for each pod
 * of the PodList in order (not kept), then plan_start, which fails as
 * plan_new does for what it read; plan_add after it. plan_new is these three.
 */
int plan_begin(const struct plan_input *in, struct plan **out, struct gs_error *err) GS_WUR;
int plan_add_existing(struct plan *p, const json_t *pod, struct gs_error *err) GS_WUR;
int plan_start(struct plan *p, struct gs_error *err) GS_WUR;
int plan_add(struct plan *p, const json_t *pod, struct gs_error *err) GS_WUR;
struct plan_result *plan_finish(struct plan *p);
void plan_free(struct plan *p);

/*
 * Pods that come and go (a trace replayed in time, docs/guide/replay.md).
 * Pod i is the i-th given to plan_add; `pod` is the object given then (the
 * plan does not keep pods; the name must match). plan_outcome is pod i's
 * outcome so far (borrowed until the next call on the plan; NULL past the
 * last). plan_retry schedules a PENDING pod again, as kube-scheduler does
 * when it moves a pod back from its unschedulable queue: the scheduler and
 * the kubelet only (the apiserver's validation and quota took it at create);
 * its outcome is replaced. plan_remove deletes pod i: a BOUND pod gives its
 * node back what it took (NodeResourcesFit's requested and pod count, the
 * non-zero requests LeastAllocated and BalancedAllocation score), a BOUND or
 * PENDING pod gives its quotas back their usage; the outcome stays, marked
 * gone. Both fail, changing nothing, on a pod not in that state
 * (plan_remove on one gone already, plan_retry on one not pending);
 * plan_remove also refuses a pod whose devices DRA allocated on its node
 * and a BOUND or PENDING pod with spec.resourceClaims the plan judged (its
 * claims' allocations and reservations stay: giving claims back is not
 * modelled).
 */
const struct plan_pod *plan_outcome(const struct plan *p, size_t i);
int plan_retry(struct plan *p, size_t i, const json_t *pod, struct gs_error *err) GS_WUR;
int plan_remove(struct plan *p, size_t i, const json_t *pod, struct gs_error *err) GS_WUR;
void plan_result_free(struct plan_result *r);

/* The outcome as contract JSON: {"pods":[...],"quotas":[...]} (docs/guide/plan.md). */
json_t *plan_result_json(const struct plan_result *r);
/* Its parts, to print one pod at a time: pod i's object, the quotas' array. New references. */
json_t *plan_pod_json(const struct plan_result *r, size_t i);
json_t *plan_quotas_json(const struct plan_result *r);
/* [{"pool", "resource", "nodes", "registered", "held", "free", "stranded"}]; new reference. */
json_t *plan_pools_json(const struct plan_result *r);

/*
 * What changes between two outcomes of the same pods (`before` on the
 * NodeList `nodes_before`, `after` on `nodes_after`), as one JSON object
 * (docs/guide/plan.md): "changes", the pods whose verdict or node differ;
 * "unadvertised", each pod's nvidia.com/ resource no node advertises after
 * the change (with "instead": what the nodes that advertised it before, or
 * else all nodes, advertise now); "quotas", the uses that differ; "pools",
 * each pool and resource whose headroom differs ({"pool", "resource",
 * "before", "after"}, a side without it all zeros). New reference.
 */
json_t *plan_diff_json(const struct plan_result *before, const struct plan_result *after,
		       const json_t *nodes_before, const json_t *nodes_after);

#endif
