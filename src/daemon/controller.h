#ifndef GS_CONTROLLER_H
#define GS_CONTROLLER_H

#include "model/names.h"

/*
 * gpushare's controller (docs/guide/controller.md): it plays, for every node that
 * declares its GPUs (annotation gpushare.io/gpu-product), the device plugin
 * + GFD and the kubelet's admission, continuously.
 *
 * It lists and watches the device-plugin ConfigMap, the nodes and the pods
 * bound to a node (kubeloop.h), keeps a compact state of them (what
 * reconciling needs, not whole objects) and:
 *
 *  - re-advertises a node (sync_plan, one PATCH of its status subresource
 *    carrying labels, annotations, capacity and allocatable; none when
 *    nothing differs) whenever the ConfigMap, its labels or annotations
 *    change;
 *  - keeps a node's last good advertisement when its config is invalid or
 *    its label names a missing key, and posts a Warning Event on the node
 *    saying why and what a real node would do (once per distinct message);
 *  - re-plans a node when one of its gpu.nvidia.com ResourceSlices is
 *    changed or deleted by someone else (a watch on the slices; its own
 *    writes are known by resourceVersion and ignored), so the publish hook
 *    restores the node's pool as the driver's resourceslice controller
 *    would and removes stale slices;
 *  - plays the GPU faults a node declares (gpushare.io/gpu-health,
 *    docs/guide/faults.md): allocatable drops, DRA devices get taints, and a
 *    Warning Event GPUUnhealthy names the devices marked unhealthy;
 *  - admits every pod bound to a node: the admission hook decides, the
 *    controller writes the verdict (the annotation gpushare.io/admitted:
 *    "true" and the hook's annotations in one PATCH, or phase Failed with
 *    the kubelet's reason and message plus a Warning Event).
 *  - with heal_leases, renews a managed node's Lease in kube-node-lease
 *    that nobody renewed for heal_after_ms while the apiserver answered
 *    (kwok v0.8.0's stall, docs/design/kwok-lease-stall.md), as the node's
 *    kubelet would, until someone else renews it again.
 *
 * Library code: never prints; one line per event goes to opts.log.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "kube/kubeloop.h"
#include "base/strbuf.h"
#include "fleet/sync.h"

/*
 * The admission hook's input. Objects are reduced: a Node keeps
 * metadata.{name,uid,resourceVersion,labels,annotations} and
 * status.{capacity,allocatable}; a Pod keeps
 * metadata.{name,namespace,uid,resourceVersion,annotations,deletionTimestamp},
 * spec.{nodeName,containers,initContainers} with each container's name and
 * resources only, and status.phase. All borrowed for the call.
 */
struct controller_admission {
	const json_t *node;	 /* the managed node the pod is bound to */
	const json_t *configmap; /* the device-plugin ConfigMap; NULL while it does not exist */
	const json_t *pod;	 /* the pod to admit */
	/*
	 * Pods bound to the same node that hold its devices: admitted, not
	 * finished, not being deleted (an array; their annotations carry
	 * what they hold, e.g. gpushare.io/devices).
	 */
	const json_t *holders;
	/*
	 * For a hook that must read the cluster first (on the loop, never
	 * blocking it): it starts its reads, returns CONTROLLER_ADMIT_LATER,
	 * and calls ready(ready_arg) exactly once when they ended, never from
	 * inside the hook; the pod is then decided again at once.
	 */
	void (*ready)(void *ready_arg);
	void *ready_arg;
};

struct controller_verdict {
	bool admit;
	/*
	 * admit: annotations to set with gpushare.io/admitted in the same
	 * PATCH (e.g. gpushare.io/devices), or NULL. The controller takes
	 * this reference.
	 */
	json_t *annotations;
	/* refuse: the kubelet's reason and message (malloc'd; the controller frees them). */
	char *reason;
	char *message;
	/*
	 * hold (with admit false): not refused for good, as by a kubelet whose
	 * prepare of the pod's DRA resources fails: the pod stays bound and
	 * Pending with `status` (a strategic merge patch of its status; the
	 * controller takes this reference), a Warning Event `reason` /
	 * `message` is posted, and the pod is decided again once its node
	 * changes or CONTROLLER_HOLD_RETRY_S seconds have passed (the kubelet
	 * retries and the event repeats).
	 */
	bool hold;
	json_t *status;
};

#define CONTROLLER_HOLD_RETRY_S 30

/*
 * Decide one pod's admission. Called once per pod bound to a managed node
 * that is neither admitted nor finished, one pod per node at a time, so
 * `holders` always includes what the previous decision on that node handed
 * out. Return 0 with *out filled, -1 with err (the pod is tried again
 * later and the error logged), or CONTROLLER_ADMIT_LATER (see `ready`). The
 * default (NULL hook) admits every pod with no further annotation.
 */
#define CONTROLLER_ADMIT_LATER 1
typedef int (*controller_admit_fn)(void *arg, const struct controller_admission *in,
				   struct controller_verdict *out, struct gs_error *err);

struct controller_opts {
	const char *configmap_namespace; /* NULL = GS_DEFAULT_NAMESPACE */
	const char *configmap_name;	 /* NULL = GS_DEFAULT_CONFIGMAP */
	const char *default_config;	 /* config-manager's DEFAULT_CONFIG; NULL = unset */
	const char *fallbacks;		 /* FALLBACK_STRATEGIES; NULL = "named,single" */
	const char *node_selector;	 /* label selector narrowing the nodes; NULL = all */
	const char *event_namespace;	 /* where Events about nodes go; NULL = "default" */
	/* writes queued or in flight at once [4 x the loop's limit; 64 without a loop] */
	unsigned max_pending;
	controller_admit_fn admit; /* NULL = admit every pod */
	void *admit_arg;
	/*
	 * Called after each plan of changed nodes with its report (sync_plan:
	 * DRA nodes carry their wanted ResourceSlice), before the node objects
	 * are written: publishes what the DRA path needs beyond them, on the
	 * loop (gpushare controller: sync_read_dra_loop, sync_plan_dra,
	 * sync_write_dra_loop), then calls done(done_arg) exactly once, at
	 * once when there is nothing to publish. The report is the hook's to
	 * read and mark until then; the nodes are written after. One plan is
	 * published at a time, and the slices' watch events wait for its end
	 * (so the writes' own events are known as ours). NULL = nothing.
	 */
	void (*publish)(void *arg, struct sync_report *rep, void (*done)(void *done_arg),
			void *done_arg);
	void *publish_arg;
	/*
	 * The apiserver keeps DRAPartitionableDevices' fields
	 * (sync_probe_partitionable): nodes whose DRA driver runs DynamicMIG
	 * are published only then (sync_opts.dra_partitionable).
	 */
	bool dra_partitionable;
	const char *dra_probe_error; /* why that is not known (borrowed), or NULL */
	bool dra_counters_apart;     /* sync_opts.dra_counters_apart */
	void (*log)(void *arg, const char *line);
	void *log_arg;
	/* The device plugin's DP_DISABLE_HEALTHCHECKS / DP_ENABLE_HEALTHCHECKS
	 * (docs/guide/faults.md). */
	const char *disable_healthchecks;
	const char *enable_healthchecks;
	/*
	 * Lease healing (docs/guide/controller.md "Leases that stop"): the
	 * Leases of kube-node-lease are watched, and the Lease of a managed node
	 * that nobody renewed for heal_after_ms, counted from when the apiserver
	 * answers again after an outage, is renewed every quarter of its
	 * duration (the kubelet's cadence) with a 1 s duration, its holder kept,
	 * conditional on its resourceVersion, until someone else renews it;
	 * the node's Ready condition is posted again when
	 * kube-controller-manager marked it Unknown meanwhile. Off by default
	 * here; gpushare controller turns it on.
	 */
	bool heal_leases;
	long heal_after_ms; /* 0 = CONTROLLER_HEAL_AFTER_MS */
	/* The healing's monotonic clock in ms; NULL = CLOCK_MONOTONIC (the unit tests drive it). */
	long long (*clock_ms)(void);
};

/* kwok renews every 10 s (a quarter of its 40 s): 25 s is two and a half renewals missed. */
#define CONTROLLER_HEAL_AFTER_MS 25000L
/* Shorter would take a live holder's next renewal for a stall. */
#define CONTROLLER_HEAL_AFTER_MIN_MS 11000L

struct controller;

/*
 * Start the watches on loop l (borrowed; it must outlive the controller).
 * With l NULL nothing is watched or sent: events are fed through
 * controller_watch_ops and what the controller wants done is read with
 * controller_take_effects (the unit tests drive it so, with no network).
 */
int controller_new(struct controller **out, struct kube_loop *l, const struct controller_opts *o,
		   struct gs_error *err) GS_WUR;
/* NULL-safe. Effects never handed out end first (requests see done(arg, NULL)). */
void controller_free(struct controller *ctl);

/*
 * Do what the last loop steps made due: reconcile changed nodes, admit
 * pods; then hand what they and the events want done to the loop. Call
 * after every kube_loop_step.
 */
void controller_tick(struct controller *ctl);

/*
 * The state machine's inputs: the callbacks controller_new registers for
 * each watch, called with the controller as arg. A relist (the first list,
 * or one after 410 Gone) is list_begin, KUBE_EV_LISTED per object,
 * list_end; what it did not show is dropped.
 */
enum controller_watch {
	CONTROLLER_WATCH_CONFIGMAP,
	CONTROLLER_WATCH_NODES,
	CONTROLLER_WATCH_PODS,
	CONTROLLER_WATCH_SLICES,
	CONTROLLER_WATCH_LEASES,
	CONTROLLER_WATCH_N
};
const struct kube_watch_ops *controller_watch_ops(enum controller_watch w);

/*
 * The state machine's outputs: a request to send (method set) or a timer to
 * set (method NULL). The controller does no I/O of its own; controller_tick
 * hands its effects to the loop.
 */
struct controller_effect {
	const char *method; /* "GET", "PATCH", "POST"; NULL for a timer (static) */
	char *path;	    /* e.g. /api/v1/nodes/n1/status */
	const char *ctype;  /* NULL = application/json (static) */
	char *body;	    /* NULL = none */
	/* a request: called exactly once with the answer, or with NULL when never sent */
	kube_done_fn done;
	/* a timer: fire once after delay_ms; drop (may be NULL) frees arg if it never fires */
	long delay_ms;
	void (*fire)(void *arg);
	void (*drop)(void *arg);
	void *arg;
};

/*
 * Move the effects queued since the last call to the caller (*out, n
 * returned), who calls each request's done or timer's fire/drop exactly
 * once, then frees the array with controller_effects_free.
 */
size_t controller_take_effects(struct controller *ctl, struct controller_effect **out);
void controller_effects_free(struct controller_effect *e, size_t n);

/* The ConfigMap, node and pod lists have been read once (readiness). */
bool controller_ready(const struct controller *ctl);

/* Stop reconciling and admitting (SIGTERM); writes already queued finish. */
void controller_drain(struct controller *ctl);

/* Prometheus text exposition of the controller's and the loop's counters
 * (docs/guide/controller.md). */
void controller_metrics(const struct controller *ctl, struct strbuf *out);

#endif
