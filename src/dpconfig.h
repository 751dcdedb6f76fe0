#ifndef GS_DPCONFIG_H
#define GS_DPCONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "yaml.h"

/*
 * The NVIDIA device-plugin / GFD config file, `version: v1`
 * (spec nvidia-semantics §1), and the ConfigMap of named configs that
 * config-manager chooses from (§2).
 */

enum dp_sharing_strategy {
	DP_SHARING_NONE,
	DP_SHARING_TIME_SLICING,
	DP_SHARING_MPS,
};

/* One entry of sharing.{timeSlicing,mps}.resources[], after runtime overrides (§1.12). */
struct dp_replicated_resource {
	char *name;   /* normalised, e.g. "nvidia.com/gpu" */
	int replicas; /* >= 2 */
	char *rename; /* NULL, or "<name>.shared" when renameByDefault */
};

struct dp_sharing {
	bool present;           /* the block was in the file (and decoded) */
	bool rename_by_default;
	int fail_requests_greater_than_one; /* -1 unset, 0 false, 1 true */
	struct dp_replicated_resource *resources;
	size_t n_resources;
};

struct dpconfig {
	char *name; /* the ConfigMap key it came from, or the file name */

	/* flags.*: NULL / -1 when the file left them unset. */
	char *mig_strategy; /* raw value as written; validated by dpconfig_validate */
	int fail_on_init_error;
	char *mps_root;
	char *device_list_strategy; /* first entry when given as a list */
	char *device_id_strategy;
	char *device_discovery_strategy;
	char *shared_devices_allocation_policy;

	struct dp_sharing time_slicing;
	struct dp_sharing mps;
};

/* MPS wins when present (§1.7). */
enum dp_sharing_strategy dpconfig_sharing_strategy(const struct dpconfig *c);
/* The block that is in force: mps when present, else timeSlicing. Never NULL. */
const struct dp_sharing *dpconfig_replicated(const struct dpconfig *c);
const char *dp_sharing_strategy_name(enum dp_sharing_strategy s); /* "none", "time-slicing", "mps" */

void dpconfig_free(struct dpconfig *c);

#endif
