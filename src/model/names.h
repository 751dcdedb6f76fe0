#ifndef GS_NAMES_H
#define GS_NAMES_H

/*
 * Every gpushare.io/ label and annotation gpushare reads or writes, in one
 * place (docs/guide/advertise.md, docs/guide/controller.md and docs/guide/dra.md say what each
 * means).
 */

/*
 * Declarations a person (or the lab) puts on the node: the NVML name or its
 * label form ("a,b" for several models), and the count ("2"; "1,1" with
 * several products).
 */
#define NODEHW_ANN_PRODUCT "gpushare.io/gpu-product"
#define NODEHW_ANN_COUNT "gpushare.io/gpu-count"
/*
 * What NVML and DMI would report on the node, for GFD's cuda.* and
 * gpu.machine labels: the driver version "X.Y[.Z]" and the machine's
 * product name (/sys/class/dmi/id/product_name).
 */
#define NODEHW_ANN_DRIVER "gpushare.io/driver-version"
#define NODEHW_ANN_MACHINE "gpushare.io/machine"
/* gpushare's own records of what it wrote last time: "k=v,k=v" and "r1,r2", sorted. */
#define NODEHW_ANN_MANAGED_LABELS "gpushare.io/managed-labels"
#define NODEHW_ANN_MANAGED_RESOURCES "gpushare.io/managed-resources"

/*
 * On a pod, set together with LEDGER_ANN_ADMITTED once admitted: a compact
 * JSON object {"<resource>":["<device id>",...],...}, resources sorted, IDs
 * in the order the pod got them.
 */
#define LEDGER_ANN_DEVICES "gpushare.io/devices"
#define LEDGER_ANN_ADMITTED "gpushare.io/admitted"

/*
 * GPU health faults a person (or `gpushare fault`) declares on a node:
 * "0=xid:79,3=lost" by GPU index, "" or absent = healthy; and when the
 * device plugin (or the DRA kubelet plugin) was last restarted (RFC 3339,
 * as `kubectl rollout restart` stamps a pod template). The controller keeps
 * the plugin's memory of what it marked unhealthy since that restart in
 * gpushare.io/unhealthy-devices (docs/guide/faults.md).
 */
#define NODEHW_ANN_GPU_HEALTH "gpushare.io/gpu-health"
#define NODEHW_ANN_RESTARTED_AT "gpushare.io/device-plugin-restarted-at"
#define NODEHW_ANN_UNHEALTHY "gpushare.io/unhealthy-devices"

/*
 * A MIG reconfiguration (docs/guide/faults.md "MIG reconfiguration"): a
 * fault a person (or `gpushare fault mig`) declares, "stall" (the
 * mig-parted#485 wedge) or "fail" (the apply fails); how many seconds the
 * walk takes (default 5); and the controller's record of what mig-manager
 * did so far: {"config":..,"applied":..[,"step","pausedAt","since"]}.
 */
#define NODEHW_ANN_MIG_FAULT "gpushare.io/mig-fault"
#define NODEHW_ANN_MIG_SECONDS "gpushare.io/mig-reconfigure-seconds"
#define NODEHW_ANN_MIG_RECORD "gpushare.io/mig-reconfigure"

/*
 * A kubelet restart or node reboot a person (or `gpushare fault kubelet`)
 * declares (docs/guide/faults.md "Kubelet restart and node reboot"):
 * "restart@2026-12-03T10:00:00Z" or "reboot@...,SECONDS", the instant the
 * kubelet started again and how long until the device plugin registers.
 */
#define NODEHW_ANN_KUBELET_RESTART "gpushare.io/kubelet-restart"

/* On the nodes `gpushare import --pool NAME=...` writes: the pool's name. */
#define IMPORT_LABEL_POOL "gpushare.io/pool"

/* Which path (device plugin or DRA) a node is on. */
#define DRASLICE_LABEL_PATH "gpushare.io/path"

/* The DRA driver's feature gates on a node. */
#define DRAPREPARE_ANNOTATION_GATES "gpushare.io/dra-feature-gates"

/*
 * The DRA driver's release on a node ("v25.12.0", "v0.5.0"; default the
 * newest gpushare models) and its kubelet plugin's --consumable-shares
 * ("unlimited", "memory", N), each an annotation or a label.
 */
#define DRADRIVER_ANN_VERSION "gpushare.io/dra-driver-version"
#define DRADRIVER_ANN_SHARES "gpushare.io/dra-consumable-shares"
/*
 * The NUMA node of each GPU in NVML index order, as sysfs numa_node gives
 * it ("0,0,1,1"; -1: no affinity). Absent: not known, as on a machine
 * whose sysfs has none.
 */
#define NODEHW_ANN_NUMA "gpushare.io/gpu-numa-nodes"

#endif
