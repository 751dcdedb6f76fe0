#ifndef GS_ADVERTISE_H
#define GS_ADVERTISE_H

#include <jansson.h>
#include <stdbool.h>

#include "model/catalog.h"
#include "model/dpconfig_set.h"
#include "base/error.h"
#include "model/nodehw.h"

/*
 * What NVIDIA's stack (config-manager, mig-manager, device plugin, GPU
 * feature discovery, kubelet) would publish for one node: extended
 * resources in status.capacity/allocatable and GFD labels (k8s-device-plugin
 * v0.20.0 config-manager, plugin and GFD; mig-parted v0.15.0; docs/guide/advertise.md). And the
 * minimal JSON merge patch that brings a Node object there without touching what gpushare does not
 * own (docs/guide/advertise.md).
 */

struct advertise_options {
	const char *default_config; /* DEFAULT_CONFIG; NULL = unset */
	const char *fallbacks;	    /* FALLBACK_STRATEGIES; NULL = "named,single" (Helm chart) */
	/* Where the node was read from, for positioned errors; NULL = the apiserver. */
	const struct ydoc_stream *source;
	/* Unix seconds for nvidia.com/gfd.timestamp; 0 = now. */
	long long now;
	/*
	 * The device plugin's DP_DISABLE_HEALTHCHECKS and
	 * DP_ENABLE_HEALTHCHECKS (docs/guide/faults.md); NULL = unset.
	 */
	const char *disable_healthchecks;
	const char *enable_healthchecks;
};

#define ADVERTISE_LABEL_TIMESTAMP "nvidia.com/gfd.timestamp"
#define ADVERTISE_LABEL_MIG_STATE "nvidia.com/mig.config.state"

/*
 * What the node shows when part of the stack fails. The components run
 * apart (the plugin and GFD are separate DaemonSets, mig-manager a third),
 * so one can fail while the others publish.
 */
enum advertise_outcome {
	ADVERTISE_OK,
	/*
	 * The device plugin (or the MPS control daemon it waits for)
	 * crash-loops; GFD publishes its labels. Every resource gpushare
	 * advertised goes to 0 in capacity and allocatable, as kubelet shows a
	 * plugin gone for longer than endpointStopGracePeriod (5 minutes).
	 */
	ADVERTISE_PLUGIN_DOWN,
	/*
	 * mig-manager failed to apply nvidia.com/mig.config: it writes
	 * nvidia.com/mig.config.state=failed, nothing else changes.
	 */
	ADVERTISE_MIG_FAILED,
	/*
	 * config-manager cannot choose a config, or GFD fails as well (its
	 * labels stay as they were): no patch at all.
	 */
	ADVERTISE_REFUSED,
};

struct advertisement {
	char *node;
	char *config_name;  /* chosen ConfigMap key, "" = the empty config, NULL = none chosen */
	char *mig_strategy; /* in force: none, single, mixed (or the bad value) */
	const char *mig_strategy_source; /* "label", "config" or "default" */
	enum dp_sharing_strategy sharing;
	/*
	 * Per GPU (NVML index order): {"product", "migEnabled", "migDevices": {profile: n}}.
	 * Resources: name -> integer, equal in capacity and allocatable; names
	 * gpushare advertised before and no longer does are present at 0.
	 */
	json_t *gpus;
	json_t *resources;
	json_t *labels;	      /* every GFD label: key -> string */
	json_t *owned_labels; /* the labels gpushare owns: `labels` minus a person's mig.strategy */
	/*
	 * Non-NULL when the real stack would refuse this node (crash-looping
	 * plugin, failed mig-manager, missing config): upstream's message,
	 * prefixed with the component; `outcome` says what the node then
	 * shows.
	 */
	char *failure;
	enum advertise_outcome outcome; /* ADVERTISE_OK exactly when failure is NULL */
	/*
	 * GPU health (docs/guide/faults.md), set by advertise_node when the node
	 * declares faults or gpushare remembers some: allocatable per
	 * resource (NULL: equal to `resources`), the unhealthy device IDs
	 * ({resource: [id]}, NULL: none), those marked since the remembered
	 * state (same shape), the new gpushare.io/unhealthy-devices value
	 * (NULL: leave it alone, "": remove it), and why, one line per fault
	 * naming the upstream file and line that does it.
	 */
	json_t *allocatable;
	json_t *unhealthy;
	json_t *newly_unhealthy;
	char *health_state;
	struct gs_warnings health_why;
	struct gs_warnings warnings; /* what upstream does silently or wrongly */
};

/*
 * The whole pipeline for one Node: read its hardware (nodehw), choose its
 * config from `set` as config-manager would (NULL set = no ConfigMap, the
 * empty config), then advertise_compute. Returns -1 only for bad input
 * (unreadable node or annotations, unknown GPU model, a malformed
 * gpushare.io/gpu-health or one naming a GPU the node lacks); a node the stack
 * would refuse gives 0 with (*out)->failure set.
 */
int advertise_node(const struct catalog *cat, const json_t *node, const struct dpconfig_set *set,
		   const struct advertise_options *opt, struct advertisement **out,
		   struct gs_error *err) GS_WUR;

/*
 * The advertisement of declared hardware under one config (NULL = the empty
 * config, `config_name` ""). Pure: no I/O. Fails only on allocation-free
 * internal limits; refusals go to (*out)->failure.
 */
int advertise_compute(const struct catalog *cat, const struct nodehw *hw,
		      const struct dpconfig *config, const char *config_name,
		      struct advertisement **out, struct gs_error *err) GS_WUR;

/*
 * The JSON merge patch from `node` (as it is now) to `adv`:
 * {"metadata":{"labels":{..},"annotations":{..}},"status":{"capacity":{..},"allocatable":{..}}},
 * only what changes, empty sections left out ({} when nothing changes).
 * Labels gpushare recorded writing and no longer emits become null (unless a
 * person changed them since); resources it advertised before and no longer
 * does become "0"; the managed-* annotations record what it now owns.
 * cpu/memory/pods, labels it never wrote and other annotations are never
 * touched. nvidia.com/gfd.timestamp moves only with another label. Fails
 * when adv->outcome is ADVERTISE_REFUSED; a node whose plugin or mig-manager
 * fails gets the patch of what the rest of the stack then shows. Warnings:
 * hand-set labels it overwrites, nvidia.com resources on the node it does
 * not account for.
 */
int advertise_patch(const struct advertisement *adv, const json_t *node, json_t **patch,
		    struct gs_warnings *warnings, struct gs_error *err) GS_WUR;

/*
 * Whether `key` is a label of a family NVIDIA's stack writes on a GPU node
 * and gpushare models, so advertise_compute writes it or would on another
 * config (docs/guide/advertise.md "GFD's labels"): nvidia.com/cuda.*, the
 * nvidia.com/gpu.<attr> and nvidia.com/mig-<profile>.<attr> families
 * (count, replicas, sharing-strategy, product, memory, family, compute.*,
 * machine, mode, multiprocessors, slices.*, engines.*), gfd.timestamp,
 * vgpu.present, mig.capable, mps.capable, mig.strategy and mig-manager's
 * mig.config.state. Not one: the declarations (device-plugin.config,
 * mig.config), the GPU Operator's (gpu.present, gpu.deploy.*), and what GFD
 * writes that gpushare does not model (gpu.clique, gpu.imex-domain,
 * vgpu.host-driver-*).
 */
bool advertise_gfd_label(const char *key);

/* The whole advertisement as JSON (`advertise --full`). New reference. */
json_t *advertisement_to_json(const struct advertisement *adv);

void advertisement_free(struct advertisement *adv);

#endif
