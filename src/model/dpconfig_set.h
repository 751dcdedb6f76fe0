#ifndef GS_DPCONFIG_SET_H
#define GS_DPCONFIG_SET_H

#include <jansson.h>
#include <stddef.h>

#include "model/dpconfig.h"
#include "base/error.h"
#include "yaml/ydoc.h"

/* A ConfigMap of named configs: key = config name (k8s-device-plugin v0.20.0
 * cmd/config-manager/main.go). */
struct dpconfig_set;

/*
 * Build from a ConfigMap object (`data` map). `s` is the stream the object
 * came from, for positions, or NULL (e.g. JSON from the apiserver). A key
 * whose config does not parse is kept with its error: only nodes choosing
 * it fail.
 *
 * `binaryData` keys count too: the ConfigMap is mounted as a volume and the
 * kubelet writes both maps as files, so config-manager sees them alike; the
 * value is the base64-decoded content. Keys starting with ".." are skipped
 * as config-manager skips such files (the apiserver refuses them anyway).
 * A `data` value that is a YAML number or boolean is taken as its text, as
 * kubectl's YAML decoding does for a map of strings; null is "".
 */
int dpconfig_set_from_configmap(const struct ydoc_stream *s, const json_t *configmap,
				struct dpconfig_set **out, struct gs_error *err) GS_WUR;
/*
 * The one ConfigMap of a YAML file (more than one, or none, is an error):
 * the loaded stream (kept for positions; caller frees), the ConfigMap in it
 * (borrowed from the stream; configmap may be NULL) and its set.
 */
int dpconfig_set_load_file(const char *path, struct ydoc_stream **stream, const json_t **configmap,
			   struct dpconfig_set **out, struct gs_error *err) GS_WUR;
size_t dpconfig_set_count(const struct dpconfig_set *set);
/* Everything found while parsing key i (errors, warnings), for lint. */
const struct dp_diags *dpconfig_set_diags(const struct dpconfig_set *set, size_t i);
/* Keys that were skipped (".."-prefixed) or refused (not a string), with why. */
const struct dp_diags *dpconfig_set_own_diags(const struct dpconfig_set *set);
/* Where key i's value starts in the stream, {0,0} when unknown. */
struct ydoc_pos dpconfig_set_key_pos(const struct dpconfig_set *set, size_t i);
/* The index of `key`, or -1. */
long dpconfig_set_find(const struct dpconfig_set *set, const char *key);
const char *dpconfig_set_key(const struct dpconfig_set *set, size_t i);
/* The parsed config of key i, or NULL with *err filled when it did not parse. */
const struct dpconfig *dpconfig_set_get(const struct dpconfig_set *set, size_t i,
					const struct gs_error **err);

/* What config-manager chose. */
struct dpconfig_choice {
	const struct dpconfig *config; /* NULL: the empty config, or none */
	const char *name;	       /* its key; "" for the empty config or none */
	long key;		       /* its index in the set; -1: the empty config or none */
};

/*
 * config-manager's choice (k8s-device-plugin v0.20.0 cmd/config-manager/main.go updateConfigName).
 * `label` is the node's nvidia.com/device-plugin.config value (NULL or "" = absent),
 * `default_config` DEFAULT_CONFIG (NULL = unset), `fallbacks` a
 * comma-separated FALLBACK_STRATEGIES list (NULL = "named,single", the Helm
 * chart's default). On success *out is the choice (config NULL, key -1 for
 * the empty config). Fails in one of two ways, told apart by out->key:
 * -1, config-manager itself fails (err is its message, e.g. "specified
 * config mps does not exist"); else the chosen key does not parse (out->name
 * and out->key name it, err is its parse error and dpconfig_set_diags its
 * findings).
 */
int dpconfig_set_select(const struct dpconfig_set *set, const char *label,
			const char *default_config, const char *fallbacks,
			struct dpconfig_choice *out, struct gs_error *err) GS_WUR;
void dpconfig_set_free(struct dpconfig_set *set);

/* FALLBACK_STRATEGIES' words, in config-manager's order (its FallbackStrategy* constants);
 * NULL-terminated. */
extern const char *const dpconfig_fallback_strategies[];
/*
 * A FALLBACK_STRATEGIES list split as dpconfig_set_select splits it: 0 when
 * config-manager knows every word (an empty list too: no fallback), else -1
 * with err naming the first word it would refuse once it got there
 * ("unknown fallback strategy 'x' (one of: named, single, empty)").
 */
int dpconfig_fallbacks_check(const char *fallbacks, struct gs_error *err) GS_WUR;

#endif
