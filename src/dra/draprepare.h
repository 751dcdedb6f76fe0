#ifndef GS_DRAPREPARE_H
#define GS_DRAPREPARE_H

#include "model/names.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "dra/dradriver.h"

/*
 * What NVIDIA's DRA driver v25.12.0 (gpu.nvidia.com) does when the kubelet
 * asks it to prepare a ResourceClaim (cmd/gpu-kubelet-plugin device_state.go
 * Prepare/prepareDevices, dra-driver-nvidia-gpu v25.12.0 pkg/featuregates/featuregates.go,
 * cmd/gpu-kubelet-plugin/device_state.go prepareDevices), and how the kubelet of Kubernetes 1.34
 * reports a refusal (pkg/kubelet/cm/dra/manager.go, kuberuntime_manager.go). Pure: objects in, a
 * decision out. The contract and what was read upstream are in docs/guide/dra.md ("Prepare").
 *
 * Every json_t passed in is borrowed. Results own their strings and their
 * json_t (config): draprepare_result_release.
 */

/* The driver's feature gates (pkg/featuregates, env FEATURE_GATES). */
struct draprepare_gates {
	bool time_slicing_settings;	    /* TimeSlicingSettings, alpha, off */
	bool mps_support;		    /* MPSSupport, alpha, off */
	bool dynamic_mig;		    /* DynamicMIG, alpha, off */
	bool passthrough_support;	    /* PassthroughSupport, alpha, off */
	bool nvml_device_health_check;	    /* NVMLDeviceHealthCheck, alpha, off */
	bool imex_daemons_with_dns_names;   /* IMEXDaemonsWithDNSNames, beta, on */
	bool compute_domain_cliques;	    /* ComputeDomainCliques, beta, on */
	bool crash_on_nvlink_fabric_errors; /* CrashOnNVLinkFabricErrors, beta, on */
	/* from v0.5.0 (pkg/featuregates/featuregates.go of that release) */
	bool device_metadata;		  /* DeviceMetadata, alpha, off */
	bool fabric_manager_partitioning; /* FabricManagerPartitioning, alpha, off */
	bool host_managed_imex_daemon;	  /* HostManagedIMEXDaemon, alpha, off */
	bool dra_list_type_attributes;	  /* DRAListTypeAttributes, alpha, off */
	bool consumable_shares;		  /* ConsumableShares, alpha, off */
	/* The release these gates belong to (never NULL after _default). */
	const struct dradriver *driver;
	/* The kubelet plugin's --consumable-shares (DRADRIVER_ANN_SHARES on the node). */
	struct dradriver_shares shares;
};

/* Whether the plugin publishes and prepares shared devices (isConsumableSharesEnabled). */
bool draprepare_consumable_shares(const struct draprepare_gates *g);

/* A node declares the driver's gates it runs with in this annotation, in FEATURE_GATES syntax. */

/* The newest release's defaults. */
void draprepare_gates_default(struct draprepare_gates *g);
/* The defaults of release `d`. */
void draprepare_gates_default_for(struct draprepare_gates *g, const struct dradriver *d);
/*
 * Apply a FEATURE_GATES value ("TimeSlicingSettings=true,MPSSupport=true")
 * on top of *g, as component-base's featuregate Set does, then the driver's
 * ValidateFeatureGates. Errors are theirs: "unrecognized feature gate: X",
 * "missing bool value for X", "invalid value of X=Y, err: strconv.ParseBool:
 * parsing \"Y\": invalid syntax", "feature gate DynamicMIG is currently
 * mutually exclusive with MPSSupport". On error *g is unchanged.
 */
int draprepare_gates_parse(struct draprepare_gates *g, const char *spec,
			   struct gs_error *err) GS_WUR;
/*
 * The gates of a node: its release (DRADRIVER_ANN_VERSION, else cluster's),
 * `cluster` on it (a gate that release does not have stays off), the
 * node's DRAPREPARE_ANNOTATION_GATES on top, then its --consumable-shares
 * (DRADRIVER_ANN_SHARES), checked as the plugin's flags are at start
 * ("--consumable-shares requires feature gate ConsumableShares to be
 * enabled"; a release without the flag: "flag provided but not defined:
 * -consumable-shares").
 */
int draprepare_gates_for_node(const json_t *node, const struct draprepare_gates *cluster,
			      struct draprepare_gates *out, struct gs_error *err) GS_WUR;
/* "TimeSlicingSettings=true,MPSSupport=false,..." for every gate of the release, in the order
 * above. */
void draprepare_gates_string(const struct draprepare_gates *g, char *buf, size_t size);

/*
 * A device some claim already holds on the node, as the driver's checkpoint
 * records completed preparations: a claim whose own UID is here is already
 * prepared (Prepare is idempotent and answers at once); a device here held
 * by another claim UID is refused (validateNoOverlappingPreparedDevices).
 * Devices a claim got with adminAccess are not held.
 *
 * With consumable shares (v0.5.0, draprepare_consumable_shares) a device
 * another claim holds is prepared again for this one when both get the
 * same normalized config (`config`, the draprepare_device.config the
 * holder got; NULL: not known, not compared), else refused ("requested
 * device gpu-0 has conflicting configuration with already prepared claim
 * <uid>"; device_state.go validateNoOverlappingPreparedDevices).
 */
struct draprepare_held {
	const char *claim_uid;
	const char *device;
	const json_t *config;
};

/* One prepared device: what the pod's container gets. */
struct draprepare_device {
	char *request; /* the result's request ("gpu", "acc/mig") */
	char *pool;
	char *device; /* "gpu-0", "gpu-0-mig-1g10gb-19-0" */
	char *type;   /* "gpu" / "mig" / "vfio" */
	char *uuid;   /* from the slice, "" when it has none */
	/* The config applied: "default" (the driver's own), "FromClass" or "FromClaim". */
	char *config_source;
	long config_index; /* index in status.allocation.devices.config; -1 for default */
	char *config_kind; /* "GpuConfig" / "MigDeviceConfig" / "VfioDeviceConfig" */
	/* After Normalize: "" (no sharing), "TimeSlicing" or "MPS". */
	char *sharing;
	char *interval; /* TimeSlicing on a full GPU: "Default"/"Short"/"Medium"/"Long"; else "" */
	/* The normalized config as the driver holds it (a new reference). */
	json_t *config;
};

enum draprepare_outcome {
	DRAPREPARE_OK,	    /* prepared (or already prepared): the pod may run */
	DRAPREPARE_REFUSED, /* the driver answered with an error for the claim */
	DRAPREPARE_CRASHED, /* the driver panics: the gRPC call fails, the plugin restarts */
	DRAPREPARE_KUBELET, /* the kubelet refuses before asking the driver */
};

struct draprepare_result {
	enum draprepare_outcome outcome;
	/* OK because the claim UID was prepared before: the driver answers
	 * from its checkpoint whatever the gates are now (devices are listed
	 * only when today's decision would also accept the claim) */
	bool already_prepared;
	char *claim_name; /* the claim the message is about ("" for none) */
	char *claim_uid;
	/*
	 * The driver's innermost error, as prepareDevices returns it:
	 * "error validating GPU config: unknown GPU sharing strategy: TimeSlicing".
	 */
	char *step_error;
	/* The driver's whole answer for the claim (NodePrepareResourceResponse.error). */
	char *driver_error;
	/* The kubelet's error: "prepare dynamic resources: ..." */
	char *kubelet_error;
	/* The Warning event FailedPrepareDynamicResources: "Failed to prepare dynamic resources:
	 * ..." */
	char *event_message;
	struct draprepare_device *devices;
	size_t n_devices;
};

#define DRAPREPARE_EVENT_REASON "FailedPrepareDynamicResources"
#define DRAPREPARE_DRIVER "gpu.nvidia.com"

void draprepare_result_init(struct draprepare_result *r);
void draprepare_result_release(struct draprepare_result *r);

/*
 * Prepare one ResourceClaim (resource.k8s.io/v1 JSON, with metadata.uid and
 * status.allocation) on a node whose driver published `slices` (an array of
 * ResourceSlice objects or a single one; only driver gpu.nvidia.com counts;
 * NULL = nothing published). `held` lists what is already prepared on the
 * node. Returns 0 with the decision in *out (OK or not), -1 with err when
 * `claim` is not a ResourceClaim object.
 */
int draprepare_claim(const json_t *claim, const json_t *slices,
		     const struct draprepare_gates *gates, const struct draprepare_held *held,
		     size_t n_held, struct draprepare_result *out, struct gs_error *err) GS_WUR;

/*
 * The kubelet's PrepareResources for a bound pod: every entry of
 * spec.resourceClaims resolved as the kubelet does (resourceClaimName, or
 * the generated claim named in status.resourceClaimStatuses), fetched from
 * `claims` (an array of the namespace's ResourceClaim objects), checked
 * (owner for generated claims, reservedFor, allocated), then each claim
 * not yet prepared goes to draprepare_claim. The first refusal is the
 * answer (the kubelet stops there); devices of every claim otherwise, in
 * order. A pod without claims is OK.
 */
int draprepare_pod(const json_t *pod, const json_t *claims, const json_t *slices,
		   const struct draprepare_gates *gates, const struct draprepare_held *held,
		   size_t n_held, struct draprepare_result *out, struct gs_error *err) GS_WUR;

/*
 * What unprepare does to one device of a claim (device_state.go
 * unprepareDevices): the devices of several claims are reference counted
 * with consumable shares, so a device is torn down only when the last
 * claim holding it goes.
 */
enum draprepare_teardown {
	DRAPREPARE_TEARDOWN_NONE,	/* nothing to undo (a full GPU or static MIG device) */
	DRAPREPARE_TEARDOWN_KEPT,	/* still prepared for another claim (`by`): left alone */
	DRAPREPARE_TEARDOWN_TIMESLICE,	/* its time slice goes back to Default */
	DRAPREPARE_TEARDOWN_DELETE_MIG, /* DynamicMIG: the MIG device is destroyed */
};

struct draprepare_unprepared {
	const char *device; /* borrowed from the claim's devices */
	const char *by;	    /* KEPT: a claim UID still holding it (borrowed from held) */
	enum draprepare_teardown what;
};

/*
 * Unprepare claim `claim_uid`, whose prepare gave `devices` (n), on a node
 * where `held` lists every prepared device (this claim's included: they
 * are skipped). Fills out[0..n). Release v25.12.0 resets the time slice of
 * every full GPU when TimeSlicingSettings is on; v0.5.0 only where prepare
 * set one (TimeSlicing on a full GPU), and, with consumable shares, only
 * when no other claim holds the GPU (isGpuUUIDInUseByOtherClaims; a MIG
 * device likewise, isMigDeviceInUseByOtherClaims). An MPS daemon is per
 * claim and always stopped; it is not listed.
 */
void draprepare_unprepare(const struct draprepare_gates *gates, const char *claim_uid,
			  const struct draprepare_device *devices, size_t n,
			  const struct draprepare_held *held, size_t n_held,
			  struct draprepare_unprepared *out);

/*
 * The pod status a real kubelet shows while prepare fails (k8s.io/kubernetes v1.34.4
 * pkg/kubelet/status/generate.go): phase Pending; conditions PodReadyToStartContainers False,
 * Initialized (False "ContainersNotInitialized" with init containers, else True), Ready and
 * ContainersReady False "ContainersNotReady" "containers with unready status: [a b]"; every
 * container waiting "ContainerCreating" (with init containers: "PodInitializing"). A new object,
 * without lastTransitionTime (the caller stamps it) and without PodScheduled (the scheduler's).
 */
json_t *draprepare_pending_status(const json_t *pod);

#endif
