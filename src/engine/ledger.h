#ifndef GS_LEDGER_H
#define GS_LEDGER_H

#include "model/names.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine/advertise.h"
#include "model/catalog.h"
#include "model/dpconfig.h"
#include "base/error.h"
#include "model/nodehw.h"

/*
 * The ledger of one node: every device ID the NVIDIA device plugin would
 * register with the kubelet for the node's advertisement, which physical
 * GPU (and MIG instance) each sits on, and which pod holds it. The contract
 * (IDs, the allocation policy, the pod annotation) is in docs/guide/status.md.
 *
 * Device IDs are the plugin's (k8s-device-plugin v0.20.0 internal/rm/devices.go): a whole GPU is
 * its UUID "GPU-...", a MIG device its UUID "MIG-...", replica k of a
 * time-sliced or MPS device "<underlying ID>::<k>". UUIDs are the ones
 * draslice_gpu_uuid / draslice_mig_instances give, so the device-plugin and
 * DRA views of a node name the same cards.
 */

#define LEDGER_MAX_DEVICES 16384    /* device IDs on one node (256 GPUs x 64 replicas) */
#define LEDGER_MAX_ANNOTATION 65536 /* bytes of one LEDGER_ANN_DEVICES value */

struct ledger_gpu {
	int index;	     /* NVML index */
	char uuid[64];	     /* "GPU-..." */
	const char *product; /* NVML name, borrowed from the catalog */
	int memory_mib;	     /* the whole card's */
	bool mig_enabled;    /* after mig-manager */
};

struct ledger_device {
	char *id;	     /* what the kubelet and the pod annotation name */
	char *resource;	     /* "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", ... */
	char *base;	     /* the underlying device: GPU or MIG UUID (id without "::k") */
	int gpu;	     /* index into ledger.gpus */
	int replica;	     /* k of "::k"; -1 when the device is not replicated */
	const char *profile; /* MIG profile (catalog), NULL for a whole GPU */
	int mig_start;	     /* MIG placement start; -1 for a whole GPU */
	int mig_memory_mib;  /* the MIG instance's memory; 0 for a whole GPU */
	char *holder;	     /* "namespace/name" of the pod holding it, NULL when free */
};

/* A device a pod holds that the node no longer registers (its config changed since). */
struct ledger_orphan {
	char *holder;
	char *resource;
	char *id;
};

struct ledger {
	char *node;
	enum dp_sharing_strategy sharing;
	/*
	 * The plugin refuses a container more than one replica (plugin v0.17,
	 * internal/rm/rm.go ValidateRequest): time-slicing when
	 * failRequestsGreaterThanOne is true, MPS always.
	 */
	bool fail_over_one;
	char *config_name;
	struct ledger_gpu *gpus;
	size_t n_gpus;
	/* In order: resource name, GPU index, MIG placement start, replica. */
	struct ledger_device *devices;
	size_t n_devices;
	struct ledger_orphan *orphans;
	size_t n_orphans;
	/* Resources the node shows at 0: registered once, no device behind them now
	 * (k8s.io/kubernetes v1.34.4 pkg/kubelet/nodestatus/setters.go). */
	char **vanished;
	size_t n_vanished;
};

/*
 * The devices behind `adv` (advertise_compute's result for `hw` under
 * `config`, NULL = the empty config), all free. A node whose plugin would be
 * down registers nothing: an empty ledger. Fails when the devices do not add
 * up to the advertised counts (an internal inconsistency) or the MIG layout
 * cannot be placed.
 */
int ledger_new(const struct catalog *cat, const struct nodehw *hw, const struct advertisement *adv,
	       const struct dpconfig *config, struct ledger **out, struct gs_error *err) GS_WUR;
void ledger_free(struct ledger *l);

/* The index of device `id`, or -1. */
long ledger_find(const struct ledger *l, const char *id);
/* Registered devices of `resource`, and how many of them are free. */
size_t ledger_count(const struct ledger *l, const char *resource, size_t *free_out);

/*
 * Record that `holder` holds `assigned` ({resource: [ids]}). All or
 * nothing: fails, changing nothing, when an ID is held by another pod or
 * the value is not of that shape. IDs the node does not register become
 * orphans (kept, shown, freed with the pod).
 */
int ledger_hold(struct ledger *l, const char *holder, const json_t *assigned,
		struct gs_error *err) GS_WUR;
/* Free everything `holder` holds; returns how many IDs it held. */
size_t ledger_release(struct ledger *l, const char *holder);

/*
 * The plugin's preferred allocation for one container (v0.17
 * internal/rm/nvml_manager.go getPreferredAllocation): `size` devices of
 * `resource` that are not `busy` (indexed like l->devices), always
 * including the `n_must` indices in `must`. Whole GPUs without replicas go
 * by the aligned policy, everything else (replicas, MIG devices) by the
 * distributed one (allocate.go distributedAlloc: one at a time, from the
 * underlying device with the fewest replicas taken). Fills out[0..size-1]
 * with device indices; returns -1 when not enough are free.
 */
int ledger_preferred(const struct ledger *l, const char *resource, const bool *busy,
		     const size_t *must, size_t n_must, size_t size, size_t *out);

/* ---- the pod annotation ---- */

/* Parse a LEDGER_ANN_DEVICES value: a new {resource: [ids]} object, or NULL and *err. */
json_t *ledger_annotation_parse(const char *text, struct gs_error *err);
/* The annotation text of {resource: [ids]}: compact, keys sorted. Caller frees. */
char *ledger_annotation_format(const json_t *assigned);

/* "namespace/name" of a pod. Caller frees. */
char *ledger_pod_key(const json_t *pod);
/*
 * Whether the pod holds devices on its node now: admitted
 * (LEDGER_ANN_ADMITTED "true"), bound, and not ended (phase neither
 * Succeeded nor Failed). A deleted pod is simply gone from the list.
 */
bool ledger_pod_active(const json_t *pod);

/*
 * Rebuild the holdings from `pods` (an array of Pod objects, e.g. a list's
 * items): every active pod bound to l->node with a readable annotation
 * holds its IDs. The ledger is cleared first. A pod whose annotation cannot
 * be read, or whose IDs another pod already holds, is a warning and holds
 * nothing.
 */
void ledger_rebuild(struct ledger *l, const json_t *pods, struct gs_warnings *warnings);
/* The same for pods the caller knows are admitted (a controller's holders): no annotation check. */
void ledger_rebuild_admitted(struct ledger *l, const json_t *pods, struct gs_warnings *warnings);

/*
 * The ledger as JSON (`gpushare status -o json`, docs/guide/status.md): node,
 * sharing, config, and per GPU its devices with holder (null when free),
 * counts per resource, the namespaces sharing each card, orphans. New
 * reference.
 */
json_t *ledger_to_json(const struct ledger *l);

#endif
