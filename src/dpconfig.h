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

/*
 * Parse one config document: the text of a ConfigMap value or a file.
 * `name` labels errors; `origin` is where the text starts in its file (see
 * yaml_load_buffer), {0,0} when it has no file. Errors carry upstream's exact
 * message (§1.11 row 1/2 innermost text); warnings get upstream's silent
 * behaviours (§1.12). An empty text is a valid, empty config.
 */
int dpconfig_parse(const char *name, const char *text, size_t len, struct yaml_pos origin,
		   struct dpconfig **out, struct gs_warnings *warnings, struct gs_error *err) GS_WUR;
/* The plugin's start-time flag validation (§1.11 rows 3-11), hardware-free part. */
int dpconfig_validate(const struct dpconfig *c, struct gs_error *err) GS_WUR;
void dpconfig_free(struct dpconfig *c);

/* A ConfigMap of named configs: key = config name (§2.1). */
struct dpconfig_set;

/*
 * Build from a ConfigMap object (`data` map). `s` is the stream the object
 * came from, for positions, or NULL (e.g. JSON from the apiserver). A key
 * whose config does not parse is kept with its error: only nodes choosing
 * it fail.
 */
int dpconfig_set_from_configmap(const struct yaml_stream *s, const json_t *configmap,
				struct dpconfig_set **out, struct gs_error *err) GS_WUR;
size_t dpconfig_set_count(const struct dpconfig_set *set);
const char *dpconfig_set_key(const struct dpconfig_set *set, size_t i);
/* The parsed config of key i, or NULL with *err filled when it did not parse. */
const struct dpconfig *dpconfig_set_get(const struct dpconfig_set *set, size_t i,
					const struct gs_error **err);

/*
 * config-manager's choice (§2.2). `label` is the node's
 * nvidia.com/device-plugin.config value (NULL or "" = absent),
 * `default_config` DEFAULT_CONFIG (NULL = unset), `fallbacks` a
 * comma-separated FALLBACK_STRATEGIES list (NULL = "named,single", the Helm
 * chart's default). On success *chosen is the config (NULL means the empty
 * config) and *chosen_name its key ("" for empty). Fails with upstream's
 * message, e.g. "specified config mps does not exist", or with the parse
 * error of the chosen key.
 */
int dpconfig_set_select(const struct dpconfig_set *set, const char *label,
			const char *default_config, const char *fallbacks,
			const struct dpconfig **chosen, const char **chosen_name,
			struct gs_error *err) GS_WUR;
void dpconfig_set_free(struct dpconfig_set *set);

#endif
