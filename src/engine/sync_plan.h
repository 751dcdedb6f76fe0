#ifndef GS_SYNC_PLAN_H
#define GS_SYNC_PLAN_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"

/*
 * Play the device plugin + GFD for every node that declares its GPUs
 * (annotation gpushare.io/gpu-product): read the device-plugin ConfigMap,
 * compute each node's advertisement (a pure plan, sync_plan) and PATCH only
 * what changed (sync_write) (labels
 * through the node, capacity and allocatable through its status). A node
 * whose config is invalid, or whose label names a missing key, is left
 * untouched and reported; it does not stop the others.
 */

/* Where the DRA objects a sync_op names live on the apiserver. */
#define SLICES_PATH "/apis/resource.k8s.io/v1/resourceslices"
#define CLASSES_PATH "/apis/resource.k8s.io/v1/deviceclasses"

struct sync_opts {
	const char *configmap_namespace; /* NULL = GS_DEFAULT_NAMESPACE */
	const char *configmap_name;	 /* NULL = GS_DEFAULT_CONFIGMAP */
	const char *default_config;	 /* DEFAULT_CONFIG; NULL = unset */
	const char *fallbacks;		 /* FALLBACK_STRATEGIES; NULL = "named,single" */
	const char *only_node;		 /* NULL = every declaring node */
	bool dry_run;			 /* compute and report, write nothing */
	/*
	 * The apiserver serves DRAPartitionableDevices (keeps sharedCounters
	 * and consumesCounters): a node whose driver runs DynamicMIG is
	 * published only then. sync_run finds it out itself
	 * (sync_probe_partitionable) when some node needs it.
	 */
	bool dra_partitionable;
	/*
	 * Why that could not be found out (the probe's error), or NULL: a
	 * DynamicMIG node then fails with it instead of the gate's absence.
	 */
	const char *dra_probe_error;
	/* The apiserver takes sharedCounters and devices only in separate slices
	 * (its /version is 1.35 or later: sync_probe_version). */
	bool dra_counters_apart;
	/* The device plugin's DP_DISABLE_HEALTHCHECKS / DP_ENABLE_HEALTHCHECKS; NULL = unset. */
	const char *disable_healthchecks;
	const char *enable_healthchecks;
	/* Unix seconds stamping DRA device taints (timeAdded); 0 = now. */
	long long now;
	/*
	 * Play a change of nvidia.com/mig.config over time as mig-manager does
	 * (engine/migwalk.h, docs/guide/faults.md "MIG reconfiguration"): the
	 * controller does; a one-shot plan shows the layout the label names.
	 * gpu_pods counts the pods on a node that hold nvidia.com devices
	 * (NULL = none).
	 */
	bool mig_walk;
	unsigned (*gpu_pods)(void *arg, const char *node);
	void *gpu_pods_arg;
};

enum sync_outcome {
	SYNC_UPDATED,
	SYNC_UNCHANGED,
	SYNC_SKIPPED, /* declares no GPUs: not ours */
	SYNC_FAILED,
};

struct sync_node {
	char *name;
	enum sync_outcome outcome;
	/*
	 * On the DRA path (label gpushare.io/path=dra, docs/guide/dra.md): no
	 * nvidia.com resource, no device-plugin or GFD label; `pool` is the
	 * array of ResourceSlices the DRA driver would publish (one, or one
	 * per GPU with DynamicMIG; NULL when the node failed) and `slice` its
	 * first, and sync_plan_dra turns them into slice operations.
	 */
	bool dra;
	json_t *slice;
	json_t *pool;
	/* Set by the controller: someone else wrote one of its gpu.nvidia.com slices. */
	bool slice_touched;
	char *config;	   /* the chosen ConfigMap key; "" for the empty config */
	char *message;	   /* why it failed or was skipped; NULL otherwise */
	json_t *patch;	   /* the merge patch written (or that would be); NULL if none */
	json_t *resources; /* advertised extended resources: {"nvidia.com/gpu": "8"} */
	/*
	 * Devices the plugin (or the DRA driver) marks unhealthy in this plan
	 * that it had not before (docs/guide/faults.md): the Event's message, in
	 * the plugin's words; NULL when none.
	 */
	char *health_event;
	/*
	 * With mig_walk: what mig-manager did in this plan, one line naming
	 * upstream (NULL: nothing new); mig_failed when its walk ended in
	 * state failed; replan_at the Unix second the walk moves on (0 = none).
	 */
	char *mig_event;
	bool mig_failed;
	long long replan_at;
	/*
	 * A kubelet restart or node reboot (engine/kubeletrestart.h): in its
	 * window the plugin's resources read 0 and the kubelet fails GPU pods;
	 * kubelet_status is a strategic merge patch of the node's status (its
	 * Ready condition) and kubelet_lease a merge patch of its Lease in
	 * kube-node-lease, for the controller to write (NULL: none);
	 * kubelet_event says what changed, once (NULL: nothing new).
	 */
	bool kubelet_window;
	json_t *kubelet_status;
	json_t *kubelet_lease;
	char *kubelet_event;
	/*
	 * With mig_walk: mig-manager's own writes in this plan (its state
	 * label, the operands' gpu.deploy.* labels, the walk's record), a merge
	 * patch of metadata alone; NULL when it writes nothing. Set on a node
	 * that fails too: mig-manager walks whatever the device plugin then
	 * does, so a controller keeping a failed node's advertisement still
	 * writes this.
	 */
	json_t *mig_patch;
	struct gs_warnings warnings;
};

enum sync_op_action {
	SYNC_OP_CREATE,
	SYNC_OP_UPDATE,
	SYNC_OP_DELETE,
};

/* One write to a resource.k8s.io object: a node's ResourceSlice or a DeviceClass. */
struct sync_op {
	enum sync_op_action action;
	char *node;	      /* the node whose slice it is; NULL for a DeviceClass */
	char *kind;	      /* "ResourceSlice" or "DeviceClass" */
	char *name;	      /* the object's name; NULL for a slice to create (generateName) */
	char *path;	      /* the collection (CREATE) or the object (UPDATE, DELETE) */
	json_t *body;	      /* the object to POST or PUT; NULL for DELETE */
	long long generation; /* a slice's spec.pool.generation after the write; 0 otherwise */
	char *result_rv; /* the object's resourceVersion after a create or update; NULL otherwise */
	bool done;	 /* written (a deletion: gone) */
};

struct sync_report {
	struct sync_node *nodes;
	size_t n;
	struct sync_op *ops; /* from sync_plan_dra, in write order */
	size_t n_ops;
};

const char *sync_outcome_name(enum sync_outcome o);

/*
 * The plan, pure: what every node of `nodes` (a NodeList, or an array of
 * Nodes) should advertise under the device-plugin `configmap` (NULL: there
 * is none, the plugin runs without a config file and every node gets the
 * empty config, its config label unread), and the merge
 * patch that would bring it there. No I/O: it reads only its arguments
 * (o->dry_run is ignored; o->only_node keeps one node). Returns 0 when
 * every declaring node can be synced or already is, 1 when at least one
 * failed (see the report), -1 with err when the ConfigMap is unusable.
 * The report is the caller's to release, also after -1.
 */
int sync_plan(const json_t *configmap, const json_t *nodes, const struct sync_opts *o,
	      struct sync_report *rep, struct gs_error *err) GS_WUR;

/*
 * The DRA half of the plan, pure: from the report of sync_plan and what the
 * cluster holds (`slices`: a ResourceSliceList or an array, `classes`: a
 * DeviceClassList or an array; NULL = none), the writes that bring the
 * cluster where the DRA driver would (docs/guide/dra.md "Publishing"):
 *   - the DeviceClasses gpu.nvidia.com and mig.nvidia.com, created or
 *     updated as the chart renders them, when some node is on the DRA path;
 *   - per DRA node, its pool reconciled as the driver's resourceslice
 *     controller does (syncPool): the highest pool generation counts,
 *     older slices are deleted, existing slices are matched to wanted ones
 *     by device names (one to one when both are one), unmatched ones are
 *     deleted; the generation is kept when nothing is created and at most
 *     one slice is updated, else bumped and every kept slice rewritten;
 *   - per node that declares its GPUs and is not on the DRA path, every
 *     gpu.nvidia.com slice of that node deleted (the kubelet wipes the
 *     slices of a driver that went away).
 * Slices on nodes gpushare does not manage are never touched. A node with a
 * slice operation becomes SYNC_UPDATED. Appends to rep->ops.
 */
void sync_plan_dra(struct sync_report *rep, const json_t *slices, const json_t *classes);

/*
 * Whether some node of `nodes` (a NodeList or an array) is on the DRA path
 * with DynamicMIG or consumable shares on: what the apiserver keeps decides
 * its slices (the probe).
 */
bool sync_wants_dynamic_mig(const json_t *nodes);

/* "nvidia.com/gpu=8 nvidia.com/mig-1g.10gb=7": what a node advertises. Caller frees. */
char *sync_resources_text(const struct sync_node *n);

void sync_report_release(struct sync_report *rep);

/* For the writer: mark a node failed with fmt's message (fmt takes one %s, msg). */
void sync_node_fail(struct sync_node *n, const char *fmt, const char *msg);
/* 1 when some node of the report failed, else 0. */
int sync_report_failed(const struct sync_report *rep);

#endif
