#ifndef GS_DRASLICE_H
#define GS_DRASLICE_H

#include "model/names.h"

#include <jansson.h>
#include <stdbool.h>

#include "dra/draprepare.h"
#include "model/catalog.h"
#include "base/error.h"
#include "model/nodehw.h"
#include "yaml/ydoc.h"

/*
 * The DRA path: what NVIDIA's DRA driver v25.12.0 (gpu.nvidia.com) would
 * publish for a node's declared GPUs, as resource.k8s.io/v1 objects
 * (dra-driver-nvidia-gpu v25.12.0 deployments/helm/nvidia-dra-driver-gpu/templates/,
 * cmd/gpu-kubelet-plugin/deviceinfo.go). The contract is in docs/guide/dra.md.
 */

/* A node opts into DRA with this label; it is then never a device-plugin node. */
#define DRASLICE_PATH_DRA "dra"

#define DRASLICE_DRIVER "gpu.nvidia.com"
#define DRASLICE_LAYOUT_FAILED (-2)
#define DRASLICE_MAX_DEVICES 128 /* devices in one ResourceSlice (validation.go) */

struct draslice_opts;

/* Whether `node` carries gpushare.io/path=dra. */
int draslice_node_wants_dra(const json_t *node);

/*
 * The one ResourceSlice the driver publishes for `hw` (read from `node`):
 * full GPUs as gpu-<minor>, a GPU in MIG mode as the instances of its
 * nvidia.com/mig.config layout only. Fails on a layout the catalog cannot
 * apply to a GPU (positioned at the label when `src` is given), a MIG
 * profile the catalog has no GI profile id for, or more devices than one
 * slice holds. Returns DRASLICE_LAYOUT_FAILED when the layout is what
 * fails (mig-manager would fail on the node), -1 otherwise. A node without metadata.uid gets no
 * ownerReference (a warning). A MIG GPU whose layout leaves it without instances publishes nothing
 * (a warning, as the driver logs).
 */
int draslice_build(const struct catalog *cat, const struct nodehw *hw, const json_t *node,
		   const struct ydoc_stream *src, json_t **out, struct gs_warnings *warnings,
		   struct gs_error *err) GS_WUR;
/* The same for the release and settings in `o` (NULL: draslice_build). */
int draslice_build_with(const struct catalog *cat, const struct nodehw *hw, const json_t *node,
			const struct ydoc_stream *src, const struct draslice_opts *o, json_t **out,
			struct gs_warnings *warnings, struct gs_error *err) GS_WUR;

/*
 * The forms of the pool, chosen by the driver's gates and what the
 * apiserver keeps (docs/guide/dra.md "Dynamic MIG").
 */
struct draslice_opts {
	bool dynamic_mig;   /* the driver's DynamicMIG gate is on for the node */
	bool partitionable; /* the apiserver serves DRAPartitionableDevices (keeps counters) */
	/* The driver's release (NULL: the newest) and its --consumable-shares when enabled. */
	const struct dradriver *driver;
	struct dradriver_shares shares;
	bool list_attributes; /* the driver's DRAListTypeAttributes gate */
	/*
	 * The apiserver serves DRAConsumableCapacity (keeps allowMultipleAllocations
	 * and requestPolicy). Without it (off by default before 1.36) the apiserver
	 * drops them silently and keeps the capacities, so the slice holds what it
	 * keeps (a warning): each device goes to one claim.
	 */
	bool consumable_capacity;
	/*
	 * The apiserver takes sharedCounters and devices only in separate
	 * slices (1.35 on, kubeversion.slice_counters_apart): the driver then
	 * writes every GPU's counter sets in a slice of their own, first, and
	 * one slice of devices per GPU (driver.go generateSplitResourceSlices).
	 */
	bool counters_apart;
};

/* The node's release and settings from its gates (draprepare_gates_for_node), apiserver aside. */
void draslice_opts_from_gates(struct draslice_opts *o, const struct draprepare_gates *g);

/* A node whose driver runs DynamicMIG on a cluster without DRAPartitionableDevices. */
#define DRASLICE_NEEDS_PARTITIONABLE (-3)

/*
 * Every slice of the node's pool, as a new array (*out), in the order the
 * driver publishes them. Without DynamicMIG: the one slice of
 * draslice_build. With it (driver v25.12.0, Kubernetes < 1.35: combined
 * slices): one slice per GPU holding its counter set gpu-<minor>-counter-set,
 * the full GPU and one abstract MIG device per possible placement of every
 * C==G profile, each consuming its counters; every slice's pool has
 * resourceSliceCount = the number of GPUs. The layout label plays no part
 * then (the driver makes MIG devices at prepare time). Refused with
 * DRASLICE_NEEDS_PARTITIONABLE unless o->partitionable: an apiserver
 * without the gate drops the counters silently and the scheduler would
 * hand out overlapping devices of one GPU to several claims. Other
 * failures as draslice_build.
 */
int draslice_build_pool(const struct catalog *cat, const struct nodehw *hw, const json_t *node,
			const struct ydoc_stream *src, const struct draslice_opts *o, json_t **out,
			struct gs_warnings *warnings, struct gs_error *err) GS_WUR;

/* The devices of every slice of a pool (an array of slices), counted. */
size_t draslice_pool_devices(const json_t *pool);

/*
 * The driver's DeviceClasses gpu.nvidia.com and mig.nvidia.com, as a new
 * array. extendedResourceName is added only when `extended_resource` is set
 * (alpha gate DRAExtendedResource; a 1.34 apiserver drops it otherwise).
 */
json_t *draslice_device_classes(int extended_resource);

/*
 * The UUID NVML reports for GPU `minor` (NVML index) of node `node`:
 * synthetic ("GPU-" + a UUID v4 form hashed from both), stable across runs.
 * The DRA slice and the device plugin's device IDs (ledger.h) use the same.
 */
void draslice_gpu_uuid(const char *node, int minor, char *out, size_t size);

#define DRASLICE_MAX_MIG 16 /* MIG instances of one GPU */

/* One MIG instance of a GPU, where it sits and what it is called. */
struct draslice_mig_instance {
	const struct catalog_mig_profile *profile; /* borrowed from the catalog */
	int start;				   /* placement start (memory slice) */
	char name[128];				   /* the DRA device name gpu-<minor>-mig-... */
	char uuid[64];				   /* "MIG-..." */
};

/*
 * The MIG instances a layout's device counts (`devices`, as
 * catalog_layout_apply gives them) make on GPU `minor` of `node`: placed
 * largest first, each at the lowest start that lets the rest fit, with
 * their UUIDs. Fills at most `cap` entries; returns how many, or -1 (a
 * profile without placements in the catalog, no placement fits, too many).
 */
int draslice_mig_instances(const char *node, const struct catalog_gpu *model, int minor,
			   const struct catalog_mig_count *devices, size_t n_devices,
			   struct draslice_mig_instance *out, size_t cap,
			   struct gs_error *err) GS_WUR;

/* The device name part of a MIG profile: "1g.10gb+me" -> "1g10gb-me" (dra-driver-nvidia-gpu
 * v25.12.0 cmd/gpu-kubelet-plugin/deviceinfo.go). */
void draslice_profile_name(const char *profile, char *out, size_t size);

#endif
