#ifndef GS_EXPLAIN_H
#define GS_EXPLAIN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "model/catalog.h"
#include "model/dpconfig_set.h"
#include "model/kubeversion.h"
#include "base/error.h"

/*
 * Why a pod landed where it did or stays Pending, and whether a namespace's
 * quotas would admit one more pod (docs/guide/explain.md). Pure: objects in, a
 * report out, no I/O. The objects are as the apiserver returns them.
 */

/* One resource the pod asks for, on one node. Quantities as Quantity.String(). */
struct explain_resource {
	char *name;
	char *requested;   /* by the pod (its effective request) */
	char *allocatable; /* status.allocatable, "0" when the node lacks it */
	char *used;	   /* requested by the other non-terminal pods bound to the node */
	char *free;	   /* allocatable - used */
	bool fits;
	/* The DeviceClass that serves it on this node through DRA
	 * (DRAExtendedResource: the node's allocatable lacks it and a class names
	 * it), NULL when NodeResourcesFit judges it; then allocatable, used and
	 * free are the node's counts and fits says whether the node's devices
	 * take the pod's extended-resource claim. */
	char *dra_class;
	/* dra_class and !fits: one line per device of the class on the node,
	 * why it does not take the request ("gpu-0: in use by claim ns/c"). */
	char *dra_why;
	/* The first of the node's hints about this resource (explain_node.hints:
	 * the name the node publishes instead, its DRA path); NULL when none.
	 * Borrowed from hints. */
	const char *hint;
};

struct explain_node {
	char *name;
	bool fits; /* no reason below: the scheduler's filters would pass it */
	/* nodeSelector, required node affinity, taints and spec.unschedulable let
	 * the pod here: every filter but the resource and pod counts passes. */
	bool selected;
	bool bound; /* the pod is bound to this node */
	/* One per request of the pod, in the order json_object_foreach walks
	 * explain_pod.requests: the request at position i is res[i]. */
	struct explain_resource *res;
	size_t n_res;
	char *advertised; /* "nvidia.com/gpu=8 ..." non-zero nvidia.com/ allocatable, "" if none */
	/* The scheduler's filter words, each with what made it so, e.g.
	 * "Insufficient nvidia.com/gpu", "node(s) had untolerated taint(s) (k=v:NoSchedule)". */
	struct gs_warnings reasons;
	struct gs_warnings hints; /* GPU-sharing traps on this node (docs/guide/explain.md) */
	/* The scheduler would pass it but the device plugin refuses the pod at
	 * Allocate (failRequestsGreaterThanOne, k8s-device-plugin v0.20.0 internal/rm/rm.go
	 * ValidateRequest): one of the hints. */
	bool fails_admission;
};

struct explain_pod {
	char *namespace;
	char *name;
	char *node;	     /* spec.nodeName, NULL when unbound */
	char *phase;	     /* status.phase, "" when absent */
	char *status_reason; /* status.reason (e.g. UnexpectedAdmissionError), NULL when absent */
	char *status_message;
	int scheduled;	    /* PodScheduled condition: 1 True, 0 False, -1 absent */
	char *sched_reason; /* its reason and message, verbatim; NULL when absent */
	char *sched_message;
	json_t *requests; /* resource -> quantity string: the pod's effective requests */
	struct explain_node *nodes;
	size_t n_nodes;
	struct gs_warnings hints; /* pod-wide GPU-sharing traps */
	/* Per request (positions as explain_node.res): the pod-wide hints about
	 * it, borrowed from hints; NULL when none. `selector`: its GPU feature
	 * discovery product label in the nodeSelector (nvidia.com/<R>.product
	 * for nvidia.com/<R>) matches no node; `profile`: no node's GPU has the
	 * MIG profile. */
	struct explain_request_hints {
		const char *selector;
		const char *profile;
	} * request_hints;
};

/*
 * The pods bound to each node of a NodeList, read once for explaining many
 * pods against the same fleet: per node name, what its non-terminal pods
 * request and how many there are, and who they are (to leave the explained
 * pod out of its own node). The pods are not kept.
 */
struct explain_usage;

struct explain_pod_input {
	const json_t *pod;
	const json_t *nodes; /* a NodeList */
	const json_t *pods;  /* a PodList of every pod (what bound pods use); NULL = none */
	const struct dpconfig_set *configs; /* the device-plugin ConfigMap; NULL = absent */
	const struct catalog *cat;	    /* for MIG profile hints; NULL = none */
	/* ResourceSlice objects (an array), to name a DRA node's devices; NULL = none */
	const json_t *slices;
	/* explain_usage_new(nodes, pods); NULL = read from them for this call */
	const struct explain_usage *usage;
	/*
	 * The release whose scheduler is explained (NULL = the newest modelled)
	 * and its gates (NULL = the release's defaults). With DRAExtendedResource
	 * on, a resource a node lacks and a DeviceClass of device_classes (an
	 * array) names is judged as DynamicResources' Filter does, on the node's
	 * devices of `slices` less those claims (an array of ResourceClaims)
	 * hold: the claims the pod itself owns are not counted.
	 */
	const struct kubeversion *kube;
	const struct kubegates *gates;
	const json_t *device_classes;
	const json_t *claims;
};

#define EXPLAIN_MAX_NODES 20000
#define EXPLAIN_MAX_PODS 150000
#define EXPLAIN_MAX_QUOTAS 5000

/*
 * Explain one pod against the nodes. Fails only for input that is not a pod
 * or a list, or quantities that do not parse (err says which).
 */
int explain_pod(const struct explain_pod_input *in, struct explain_pod **out,
		struct gs_error *err) GS_WUR;
/*
 * Index `pods` (a PodList, NULL = none) by the nodes of `nodes` (a
 * NodeList) they are bound to: one pass, each pod's effective request read
 * once. Fails on a list over the limits or a bound pod whose quantities do
 * not parse (err names it).
 */
int explain_usage_new(const json_t *nodes, const json_t *pods, struct explain_usage **out,
		      struct gs_error *err) GS_WUR;
/*
 * The same a pod at a time, for pods read as a stream: begin with the
 * nodes (borrowed for the index's life), add each pod in list order (it
 * is not kept: what it asks for is), and the index is the same as
 * explain_usage_new's.
 */
int explain_usage_begin(const json_t *nodes, struct explain_usage **out,
			struct gs_error *err) GS_WUR;
int explain_usage_add(struct explain_usage *u, const json_t *pod, struct gs_error *err) GS_WUR;
void explain_usage_free(struct explain_usage *u);
/* True when the pod is bound and not Failed. */
bool explain_pod_is_placed(const struct explain_pod *e);
void explain_pod_free(struct explain_pod *e);

/* One hard/used pair of a quota. */
struct explain_quota_item {
	char *resource;
	char *hard;	/* status.hard, or spec.hard when status.hard is unset */
	char *used;	/* status.used, NULL when absent */
	char *headroom; /* hard - used, NULL when used is absent */
};

enum explain_verdict {
	EXPLAIN_NO_REQUEST, /* nothing asked */
	EXPLAIN_ADMIT,
	EXPLAIN_REFUSE,
	EXPLAIN_UNCONSTRAINED, /* status.hard unset: the quota limits nothing yet */
};

struct explain_quota {
	char *name;
	bool enforced; /* status.hard is set (k8s.io/apiserver v0.34.4
			  pkg/admission/plugin/resourcequota/controller.go) */
	bool scoped;   /* spec.scopes or spec.scopeSelector: only some pods count */
	struct explain_quota_item *items;
	size_t n_items;
	enum explain_verdict verdict;
	/* EXPLAIN_REFUSE: the apiserver's error, e.g. "exceeded quota: q, requested: ...". */
	char *message;
};

struct explain_quota_report {
	char *namespace;
	struct explain_quota *quotas;
	size_t n;
	json_t *usage; /* what one more pod would add, quota resource name -> quantity; NULL = no
			  request */
};

/*
 * Parse "RES=N" (e.g. "nvidia.com/gpu=2", "cpu=500m", "requests.cpu=1")
 * and add what a pod asking for it counts against quotas into *usage
 * (created when NULL): pods and count/pods 1, cpu/memory/ephemeral-storage
 * and hugepages-* as both the plain and the requests. name, other resources
 * as requests.<name>; names already prefixed (requests., limits., count/)
 * as written. Fails on a malformed argument.
 */
int explain_quota_add_request(json_t **usage, const char *arg, struct gs_error *err) GS_WUR;
/*
 * A usage made by RES=N of the ResourceClaim evaluator
 * (`<class>.deviceclass.resource.k8s.io/devices`,
 * `count/resourceclaims.resource.k8s.io`; k8s.io/kubernetes v1.34.4
 * pkg/quota/v1/evaluator/core/resource_claims.go) is a claim's: it counts one claim and no pod, and
 * the "must specify" constraints do not apply. Mixing it with a pod's resources is refused. Also
 * the usage draclaims_quota_usage makes of a claim.
 */
bool explain_quota_usage_is_claim(const json_t *usage);

/*
 * Add what the pod counts against quotas into *usage (created when NULL):
 * pods and count/pods 1, its effective requests as explain_quota_add_request
 * counts them, and limits.<name> for its containers' limits. Called for
 * several pods, *usage is their sum. Fails on a quantity that does not parse.
 */
int explain_quota_add_pod(json_t **usage, const json_t *pod, struct gs_error *err) GS_WUR;

/*
 * Every quota of a ResourceQuotaList, and with usage (NULL = none) what
 * admission would say to a pod of one container (named `container`, NULL =
 * "main") that adds it, message as the 1.34 apiserver words it
 * (k8s.io/apiserver v0.34.4 pkg/admission/plugin/resourcequota/controller.go): "exceeded quota:
 * ...", "failed quota: q: must specify requests.cpu for: main" (cpu/memory keys in the quota and
 * none in the request), "status unknown for quota: ...". Quota scopes are not evaluated: a scoped
 * quota is judged as if it selected the pod. Fails on a malformed list.
 */
int explain_quota(const json_t *quota_list, const json_t *usage, const char *container,
		  struct explain_quota_report **out, struct gs_error *err) GS_WUR;
/*
 * The same for one pod: its usage (explain_quota_add_pod), and the
 * "must specify" constraint judged per container and init container as the
 * quota evaluator does (each missing resource names every container that
 * lacks it, sorted: "must specify limits.cpu for: c0,i0; requests.cpu for:
 * c0"). r->usage is the pod's.
 */
int explain_quota_pod(const json_t *quota_list, const json_t *pod,
		      struct explain_quota_report **out, struct gs_error *err) GS_WUR;
void explain_quota_report_free(struct explain_quota_report *r);

/* ---- building blocks shared with plan (docs/guide/plan.md) ---------------------- */

/*
 * The scheduler's effective request of a pod (computePodResourceRequest):
 * containers and sidecars summed, an init container's own when larger,
 * plus spec.overhead; a limit without a request counts as the request.
 * *out is a new object, resource -> quantity string.
 */
int explain_pod_requests(const json_t *pod, json_t **out, struct gs_error *err) GS_WUR;
/* v1helper.TolerationsTolerateTaint: some toleration of the list tolerates the taint. */
bool explain_tolerates(const json_t *tolerations, const json_t *taint);
/* NULL when the node passes nodeSelector and required node affinity, else why not (allocated). */
char *explain_selector_mismatch(const json_t *pod_spec, const json_t *node);
/* NULL when a NodeSelectorTerm selects the node, else the requirement it fails (allocated). */
char *explain_term_mismatch(const json_t *term, const json_t *node);

/* One container the device plugin refuses at Allocate (failRequestsGreaterThanOne). */
struct explain_admission_fail {
	const char *container;
	const char *resource; /* as the pod asks for it (a rename when there is one) */
	long long count;
	const char *config;   /* the device-plugin config chosen for the node */
	const char *strategy; /* "time-slicing" or "MPS" */
};
typedef void (*explain_admission_fn)(void *ctx, const struct explain_admission_fail *f);

/*
 * Every container of the pod that asks for more than one slice of a shared
 * resource on a node whose config sets failRequestsGreaterThanOne (k8s-device-plugin v0.20.0
 * internal/rm/rm.go ValidateRequest), each passed to fn (NULL = only count); returns how many.
 */
size_t explain_admission_failures(const struct dpconfig_set *configs, const json_t *node,
				  const json_t *pod, explain_admission_fn fn, void *ctx);
/* The kubelet's pod status message for it (reason UnexpectedAdmissionError), allocated. */
char *explain_admission_message(const struct explain_admission_fail *f);

#endif
