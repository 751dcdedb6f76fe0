#ifndef GS_DPCONFIG_H
#define GS_DPCONFIG_H

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/strbuf.h"
#include "yaml/ydoc.h"

/*
 * The NVIDIA device-plugin / GFD config file, `version: v1`
 * (k8s-device-plugin v0.20.0 api/config/v1/): the model, its findings and the plugin's
 * flag validation. Decoding is in dpdecode.c; the ConfigMap of named
 * configs that config-manager chooses from (k8s-device-plugin v0.20.0 cmd/config-manager/main.go)
 * in dpconfig_set.h.
 */

enum dp_sharing_strategy {
	DP_SHARING_NONE,
	DP_SHARING_TIME_SLICING,
	DP_SHARING_MPS,
};

/* One entry of sharing.{timeSlicing,mps}.resources[], after runtime overrides (k8s-device-plugin
 * v0.20.0 api/config/v1/config.go DisableResourceNamingInConfig). */
struct dp_replicated_resource {
	char *name;		      /* normalised, e.g. "nvidia.com/gpu" */
	int replicas;		      /* >= 2 */
	char *rename;		      /* NULL, or "<name>.shared" when renameByDefault */
	struct ydoc_pos pos;	      /* the list element */
	struct ydoc_pos replicas_pos; /* the replicas value */
};

struct dp_sharing {
	bool present; /* the block was in the file (and decoded) */
	bool rename_by_default;
	/*
	 * -1 unset, 0 false, 1 true. Unset means false for timeSlicing; for mps
	 * v0.20 defaults it to true and v0.15-v0.19 force it to true (k8s-device-plugin v0.20.0
	 * internal/rm/rm.go ValidateRequest).
	 */
	int fail_requests_greater_than_one;
	struct dp_replicated_resource *resources;
	size_t n_resources;
	struct ydoc_pos pos;		       /* the block's value ({0,0}: absent) */
	struct ydoc_pos rename_by_default_pos; /* {0,0} when not written */
	struct ydoc_pos fail_requests_pos;     /* {0,0} when not written */
};

/* A key the decoder recognised, by its canonical path, and where it was written. */
struct dp_key {
	char *path;	     /* "flags.plugin.deviceIDStrategy", "sharing.mps", "imex.channelIDs" */
	char *written;	     /* the key as written ("timeslicing" for sharing.timeSlicing) */
	struct ydoc_pos pos; /* the value, or the key when the value is null */
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

	/* Further flags and fields (NULL / -1 / empty when unset). */
	char *version;		       /* as written (after Go's coercion), NULL if absent */
	char **device_list_strategies; /* every entry of flags.plugin.deviceListStrategy */
	size_t n_device_list_strategies;
	char *nvidia_driver_root;
	int *imex_channel_ids;
	size_t n_imex_channel_ids;
	bool imex_required;
	bool resources_customised; /* resources.gpus/mig were non-empty (then discarded,
				      k8s-device-plugin v0.20.0 api/config/v1/config.go
				      DisableResourceNamingInConfig) */

	/* Every recognised key, in document order, for tools that point at them. */
	struct dp_key *keys;
	size_t n_keys;
};

/* Where a recognised key was written; NULL when it was not. */
const struct dp_key *dpconfig_key(const struct dpconfig *c, const char *path);

/*
 * Findings about a config. Errors carry upstream's innermost message; the
 * one the plugin itself would stop at (the first fatal one, in the order
 * Go decodes: sorted keys, type mismatches saved, custom decoders fatal) has
 * `upstream` set, the others would surface once it is fixed. Warnings are
 * upstream's log lines (k8s-device-plugin v0.20.0 api/config/v1/config.go
 * DisableResourceNamingInConfig) or silent traps; notes are explanations.
 */
enum dp_level { DP_ERROR, DP_WARNING, DP_NOTE };

/* Which upstream wrapping an error gets (the prefixes k8s-device-plugin v0.20.0
 * cmd/nvidia-device-plugin/main.go puts around each stage's error). */
enum dp_stage {
	DP_STAGE_NONE,	   /* ours: no upstream chain */
	DP_STAGE_YAML,	   /* YAML syntax: "...unmarshal error: error converting YAML to JSON: " */
	DP_STAGE_DECODE,   /* row 1 */
	DP_STAGE_VERSION,  /* row 2 */
	DP_STAGE_VALIDATE, /* rows 3-11 */
	DP_STAGE_SELECT,   /* config-manager (k8s-device-plugin v0.20.0 cmd/config-manager/main.go
			      updateConfigName) */
};

struct dp_diag {
	enum dp_level level;
	enum dp_stage stage;
	bool upstream;
	char *file; /* the name positions refer to */
	struct ydoc_pos pos;
	char *msg;
};

struct dp_diags {
	struct dp_diag *items;
	size_t n, cap;
};

void dp_diags_init(struct dp_diags *d);
void dp_diags_release(struct dp_diags *d);
void dp_diags_add(struct dp_diags *d, enum dp_level level, enum dp_stage stage, const char *file,
		  struct ydoc_pos pos, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The same with a va_list; returns the new item (valid until the next add). */
struct dp_diag *dp_diags_vadd(struct dp_diags *d, enum dp_level level, enum dp_stage stage,
			      const char *file, struct ydoc_pos pos, const char *fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));
/* A finding as an error: "file:line:col: msg", with fewer parts when unknown. */
void dp_diag_to_error(const struct dp_diag *d, struct gs_error *err);
/* The same text, whole, added to sb. */
void dp_diag_addstr(struct strbuf *sb, const struct dp_diag *d);
/*
 * The whole line the real component logs for an error, e.g.
 * "error starting plugins: unable to load config: unable to finalize config:
 * unable to parse config file: error parsing config file: unmarshal error:
 * error unmarshaling JSON: while decoding JSON: no resources specified".
 * Returns buf.
 */
const char *dp_diag_chain(const struct dp_diag *d, char *buf, size_t size);

/* MPS wins when present (k8s-device-plugin v0.20.0 api/config/v1/replicas.go). */
enum dp_sharing_strategy dpconfig_sharing_strategy(const struct dpconfig *c);
/* The block that is in force: mps when present, else timeSlicing. Never NULL. */
const struct dp_sharing *dpconfig_replicated(const struct dpconfig *c);
const char *
dp_sharing_strategy_name(enum dp_sharing_strategy s); /* "none", "time-slicing", "mps" */

/*
 * Parse one config document: the text of a ConfigMap value or a file.
 * `name` labels errors; `origin` is where the text starts in its file (see
 * ydoc_load_buffer), {0,0} when it has no file. Errors carry upstream's exact
 * message (the innermost text of k8s-device-plugin v0.20.0
 * api/config/v1/config.go's load errors); warnings get upstream's silent
 * behaviours (k8s-device-plugin v0.20.0 api/config/v1/config.go DisableResourceNamingInConfig). An
 * empty text is a valid, empty config.
 */
int dpconfig_parse(const char *name, const char *text, size_t len, struct ydoc_pos origin,
		   struct dpconfig **out, struct gs_warnings *warnings,
		   struct gs_error *err) GS_WUR;
/*
 * The same, for tools: `file` names positions, `key` becomes c->name (NULL:
 * file). Every error found goes to diags (not just the first), with the
 * upstream's silent behaviours (k8s-device-plugin v0.20.0 api/config/v1/config.go
 * DisableResourceNamingInConfig) as warnings, and lint-level warnings (unknown keys, case-folded
 * keys). On failure *out is NULL and err is the upstream error.
 */
int dpconfig_parse_diags(const char *file, const char *key, const char *text, size_t len,
			 struct ydoc_pos origin, struct dpconfig **out, struct dp_diags *diags,
			 struct gs_error *err) GS_WUR;
/*
 * The plugin's start-time flag validation (k8s-device-plugin v0.20.0
 * cmd/nvidia-device-plugin/main.go validateFlags; row 4 needs NVML), on the file's values with
 * built-in defaults for unset ones. Row 8 (MPS without mpsRoot) is an error here, as for a bare
 * plugin: the Helm chart and the GPU Operator always set MPS_ROOT=/run/nvidia/mps, so a caller
 * modelling them sets c->mps_root (a shallow copy is fine).
 */
int dpconfig_validate(const struct dpconfig *c, struct gs_error *err) GS_WUR;
/* Every rule's error, in upstream's order, into diags (stage VALIDATE); returns their count. */
size_t dpconfig_validate_all(const struct dpconfig *c, const char *file, struct dp_diags *diags);
void dpconfig_free(struct dpconfig *c);

/* Built-in defaults of the flags dpconfig_validate looks at (k8s-device-plugin v0.20.0
 * api/config/v1/flags.go). */
#define DP_DEFAULT_MIG_STRATEGY "none"
#define DP_DEFAULT_DEVICE_LIST_STRATEGY "envvar"
#define DP_DEFAULT_DEVICE_ID_STRATEGY "uuid"
#define DP_DEFAULT_DEVICE_DISCOVERY_STRATEGY "auto"
#define DP_DEFAULT_ALLOCATION_POLICY "distributed"
#define DP_INSTALLER_MPS_ROOT "/run/nvidia/mps"

/* For the dpconfig modules (dpdecode.c, dpconfig_set.c): building a config. */
/* A config with every field unset (NULL / -1 / empty), named `name`. */
struct dpconfig *dpconfig_new(const char *name);
/* Free a sharing block's resources and set it back to unset. */
void dp_sharing_reset(struct dp_sharing *sh);
/* Drop flags.plugin.deviceListStrategy. */
void dpconfig_clear_device_list(struct dpconfig *c);

#endif
