#ifndef GS_HEALTH_H
#define GS_HEALTH_H

#include "model/names.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "engine/advertise.h"
#include "engine/ledger.h"

/*
 * GPU health faults (docs/guide/faults.md): what a node declares in its
 * gpushare.io/gpu-health annotation ("0=xid:79,3=lost"), played as NVIDIA's
 * device plugin (k8s-device-plugin v0.20.0 internal/rm/health.go,
 * internal/plugin/server.go) and DRA driver (dra-driver-nvidia-gpu v0.4.1
 * cmd/gpu-kubelet-plugin/device_health.go) play the NVML events behind it.
 * Pure: no I/O; the state a plugin keeps between events comes in as the
 * node's gpushare.io/unhealthy-devices annotation and goes out as its new
 * value.
 */

#define HEALTH_MAX_FAULTS 256
#define HEALTH_MAX_VALUE 4096 /* bytes of one gpushare.io/gpu-health value */
/* An event without instance information (NVML's 0xFFFFFFFF). */
#define HEALTH_NO_INSTANCE 0xFFFFFFFFu

enum health_kind {
	HEALTH_XID,  /* an Xid critical error event on the GPU */
	HEALTH_LOST, /* the GPU is lost: waiting for its events fails */
};

struct health_fault {
	int gpu; /* NVML index (the GPU's minor) */
	enum health_kind kind;
	unsigned long long xid;
	/* The event's GPU and compute instance (a MIG device), else HEALTH_NO_INSTANCE. */
	unsigned gi, ci;
	size_t col; /* 1-based character of the entry in the annotation's value */
};

struct health_faults {
	struct health_fault *items;
	size_t n;
};

/*
 * Parse a gpushare.io/gpu-health value: "" or a comma-separated list of
 * INDEX=xid:N, INDEX=xid:N/GI/CI (a MIG instance, as the legacy MIG UUID
 * MIG-GPU-<uuid>/<gi>/<ci> writes it) or INDEX=lost. Strict: on error
 * *bad_col is the 1-based character of the value where it goes wrong and
 * err says what (without the node or the annotation: the caller names
 * them). An index twice (with the same instance) is an error. `out` is
 * filled in order; release it with health_faults_release.
 */
int health_parse(const char *value, struct health_faults *out, size_t *bad_col,
		 struct gs_error *err) GS_WUR;
void health_faults_release(struct health_faults *f);

struct ydoc_stream;
/*
 * The faults `node` (named `name`, with `n_gpus` GPUs) declares in its
 * gpushare.io/gpu-health annotation (none when absent). Fails on a
 * malformed value or an index the node lacks, naming the node, the
 * character of the value, and file:line:col when `src` (the stream it was
 * read from) is given.
 */
int health_from_node(const json_t *node, const char *name, int n_gpus,
		     const struct ydoc_stream *src, struct health_faults *f,
		     struct gs_error *err) GS_WUR;
/* The canonical value: entries by index (then instance), "" for none. Caller frees. */
char *health_format(const struct health_faults *f);
/* One entry's form "xid:79", "xid:79/1/0", "lost" into out. */
void health_fault_text(const struct health_fault *x, char *out, size_t size);

/*
 * Which XIDs the device plugin skips (internal/rm/health.go
 * getDisabledHealthCheckXids): 13, 31, 43, 45, 68 and 109 always, plus the
 * comma-separated DP_DISABLE_HEALTHCHECKS ("all" or "xids": every XID),
 * minus DP_ENABLE_HEALTHCHECKS (which wins, "all" enabling every XID).
 * Malformed entries are ignored, as upstream does.
 */
#define HEALTH_MAX_XIDS 64
struct health_policy {
	size_t n;
	struct {
		unsigned long long xid; /* 0: every XID (upstream's allXIDs key) */
		bool disabled;
	} e[HEALTH_MAX_XIDS + 8];
};
void health_policy_init(struct health_policy *p, const char *disable_env, const char *enable_env);
/* checkHealth returns at once: no health check at all (not even a lost GPU). */
bool health_policy_all_disabled(const struct health_policy *p);
bool health_policy_skips(const struct health_policy *p, unsigned long long xid);

/* What the device plugin shows for the node's faults. */
struct health_dp_result {
	json_t *allocatable; /* resource -> integer: registered minus unhealthy */
	json_t *unhealthy;   /* resource -> [device ID] (ledger order); resources without any absent
			      */
	json_t *marked;	     /* the same shape: marked unhealthy since the remembered state */
	bool restarted;	     /* the remembered state belongs to an earlier plugin start */
	/*
	 * The new gpushare.io/unhealthy-devices value ("" when nothing is
	 * unhealthy): {"restartedAt":..,"config":..,"devices":{resource:[ids]}}.
	 */
	char *state;
	struct gs_warnings
		why; /* one line per fault: what the plugin does and where upstream does it */
};

/*
 * The device plugin's health loop over the node's devices `l` (ledger_new)
 * for `faults`, given `remembered` (the node's gpushare.io/unhealthy-devices,
 * NULL = none) and `restarted_at` (gpushare.io/device-plugin-restarted-at,
 * NULL = never): a plugin started again since the remembered state, or on
 * another config, starts with every device healthy; otherwise devices
 * marked before stay unhealthy (no recovery while the plugin runs).
 * Unreadable remembered state counts as none, with a line in `why`.
 * Fills *out (release with health_dp_result_release).
 */
void health_dp(const struct ledger *l, const struct health_faults *faults,
	       const struct health_policy *policy, const char *remembered, const char *restarted_at,
	       struct health_dp_result *out);
void health_dp_result_release(struct health_dp_result *r);

/*
 * The DRA driver's taints for `faults` on the devices of `pool` (an array of
 * ResourceSlices, changed in place: each affected device gets
 * spec.devices[].taints), given the remembered state and restart as
 * health_dp. `ignored_xids` is the driver's additionalXidsToIgnore (NULL =
 * none); `now` (Unix seconds) stamps a taint added or changed. With
 * `dynamic_mig`, MIG devices are the driver's dynamic ones, which its
 * health monitor leaves out. *state is the new gpushare.io/unhealthy-devices
 * value ("" = none, caller frees); `why` as health_dp. Returns how many
 * taints were added or changed since the remembered state.
 */
size_t health_dra(json_t *pool, const struct health_faults *faults, const char *ignored_xids,
		  bool dynamic_mig, const char *remembered, const char *restarted_at, long long now,
		  char **state, struct gs_warnings *why);

/*
 * advertise_node, then the device plugin's health loop on its devices:
 * (*out)->allocatable, unhealthy, newly_unhealthy, health_state and
 * health_why (advertise.h) for the node's gpushare.io/gpu-health and what
 * gpushare remembers in gpushare.io/unhealthy-devices. Fails as
 * advertise_node, and on a malformed gpu-health (health_from_node).
 */
int health_advertise_node(const struct catalog *cat, const json_t *node,
			  const struct dpconfig_set *set, const struct advertise_options *opt,
			  struct advertisement **out, struct gs_error *err) GS_WUR;

#endif
