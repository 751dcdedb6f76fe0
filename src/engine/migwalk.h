#ifndef GS_MIGWALK_H
#define GS_MIGWALK_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"
#include "model/catalog.h"
#include "model/nodehw.h"

/*
 * A change of a node's nvidia.com/mig.config played as NVIDIA's
 * k8s-mig-manager does it (mig-parted v0.15.0 pkg/mig/reconfigure/reconfigure.go
 * Run, cmd/nvidia-mig-manager/main.go; docs/guide/faults.md "MIG
 * reconfiguration"): state `pending`, the operands' gpu.deploy.* labels at
 * `paused-for-mig-change`, the device plugin gone (the kubelet keeps
 * capacity, allocatable 0; capacity 0 too after endpointStopGracePeriod),
 * then the layout applied, state `success` and the operands back; or
 * `failed` with the GPUs as they were.
 *
 * Pure: what mig-manager did so far comes in as the node's
 * gpushare.io/mig-reconfigure record and goes out as its new value; `now`
 * says where the walk is. The caller (sync_plan) advertises the node with
 * the layout the GPUs hold and writes labels, record and zeros.
 */

/* How long the walk takes when the node does not say (gpushare.io/mig-reconfigure-seconds). */
#define MIGWALK_DEFAULT_SECONDS 5
#define MIGWALK_MAX_SECONDS 86400
/* kubelet's endpointStopGracePeriod (pkg/kubelet/cm/devicemanager/types.go): 5 minutes. */
#define MIGWALK_STOP_GRACE_SECONDS 300
#define MIGWALK_PAUSED "paused-for-mig-change"

enum migwalk_step {
	MIGWALK_OFF,	 /* no MIG-capable GPU, or no layout ever asked: mig-manager does nothing */
	MIGWALK_IDLE,	 /* the GPUs hold the layout last asked for (or it failed) */
	MIGWALK_PENDING, /* operands paused, the layout being applied */
	MIGWALK_STALLED, /* the #485 wedge: pending forever (gpushare.io/mig-fault=stall) */
};

struct migwalk {
	enum migwalk_step step;
	/* The layout the GPUs hold now (advertise with it); NULL = none applied. */
	char *layout;
	/* The value mig-manager acts on (the label it last read); NULL = none. */
	char *config;
	/* nvidia.com/mig.config.state to show; NULL = leave it to the advertisement. */
	const char *state;
	/* gpu.deploy.* labels mig-manager writes now (key -> string); NULL = none. */
	json_t *labels;
	/* The new gpushare.io/mig-reconfigure value; NULL = leave it as it is. */
	char *record;
	/* The device plugin is down: allocatable 0 for its resources; capacity too when gone. */
	bool plugin_down;
	bool capacity_gone;
	long long paused_at, since; /* Unix seconds; 0 when not walking */
	int seconds;		    /* the walk's length */
	/* Plan the node again at this Unix second (the walk moves on); 0 = no need. */
	long long replan_at;
	/* Set when this plan ended a walk: "success" or "failed", and why it failed. */
	const char *ended;
	char *failure;
	/* One line of what mig-manager does now and where upstream does it. */
	char *why;
	struct gs_warnings notes; /* unreadable annotations, ignored */
};

/*
 * Where the walk of `node` (read as `hw`) is at Unix second `now` (0 =
 * the clock), with `gpu_pods` pods on the node holding nvidia.com devices
 * (mig-manager does not evict them: the apply then fails, the GPU in use).
 * Fails only on allocation-free internal limits; bad annotations are
 * notes. Release with migwalk_release.
 */
int migwalk_plan(const struct catalog *cat, const json_t *node, const struct nodehw *hw,
		 long long now, unsigned gpu_pods, struct migwalk *out,
		 struct gs_error *err) GS_WUR;
void migwalk_release(struct migwalk *w);

/*
 * The node as its device plugin serves it now, by the record mig-manager
 * left (gpushare.io/mig-reconfigure): a new copy whose nvidia.com/mig.config
 * names the layout the GPUs hold, or NULL when the label already does (no
 * record, an unreadable one, or the same layout). *plugin_down is set
 * while a walk is pending or stalled: mig-manager has the plugin off then
 * (the kubelet counts its devices unhealthy). What a kubelet admits
 * against: after a failed walk the label names a layout the GPUs never got.
 */
json_t *migwalk_node_as_held(const json_t *node, bool *plugin_down);

/* "2026-12-03T10:00:00Z" into Unix seconds; -1 when not of that form. */
long long migwalk_parse_time(const char *s);

#endif
