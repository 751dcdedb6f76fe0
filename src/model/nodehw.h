#ifndef GS_NODEHW_H
#define GS_NODEHW_H

#include "model/names.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "model/catalog.h"
#include "base/error.h"
#include "yaml/ydoc.h"

/*
 * A node's declared GPU hardware and what gpushare wrote on it before, read
 * from a Node object (jansson tree, from YAML or the apiserver). The
 * contract of the annotations is in docs/guide/advertise.md.
 */

/* Defaults of NODEHW_ANN_DRIVER and NODEHW_ANN_MACHINE (names.h). */
#define NODEHW_DEFAULT_DRIVER "580.65.06" /* R580: CUDA 13.0, B300/GB300 and RTX PRO 6000 */
#define NODEHW_DEFAULT_MACHINE "unknown"  /* what GFD writes when DMI cannot be read */

/* Labels read from the node (written by people or other NVIDIA components). */
#define NODEHW_LABEL_CONFIG "nvidia.com/device-plugin.config"
#define NODEHW_LABEL_MIG_CONFIG "nvidia.com/mig.config"
#define NODEHW_LABEL_MIG_STRATEGY "nvidia.com/mig.strategy"

#define NODEHW_MAX_GPUS 256	/* per node, all models */
#define NODEHW_MAX_MODELS 16	/* entries in gpushare.io/gpu-product */
#define NODEHW_MAX_RECORD 65536 /* bytes of one managed-* annotation */

struct nodehw_gpus {
	const struct catalog_gpu *model; /* borrowed from the catalog */
	int count;
};

struct nodehw {
	char *name;
	struct nodehw_gpus *gpus; /* declaration order = NVML index order */
	size_t n_gpus;
	int total;		    /* GPUs on the node */
	char *driver_version;	    /* "X.Y[.Z]", NODEHW_DEFAULT_DRIVER when undeclared */
	int cuda_major, cuda_minor; /* the CUDA version that driver reports (NVML) */
	char *machine;		    /* GFD's gpu.machine value: sanitized product name */
	char *config_label;	    /* nvidia.com/device-plugin.config; NULL when absent or "" */
	char *mig_config;	    /* nvidia.com/mig.config; NULL when absent or "" */
	/*
	 * nvidia.com/mig.strategy when a person set it: present, non-empty,
	 * and not the value gpushare recorded writing. NULL otherwise.
	 */
	char *declared_mig_strategy;
	json_t *managed_labels;	   /* object key -> string, from NODEHW_ANN_MANAGED_LABELS */
	json_t *managed_resources; /* object name -> true, from NODEHW_ANN_MANAGED_RESOURCES */
};

/*
 * Read `node`. Fails (bad input) when it is not a Node with a name, when a
 * label or annotation is not a string, or when the hardware annotations are
 * malformed or name a model the catalog does not know. A node without the
 * hardware annotations has no GPUs. An unreadable managed-* record is a
 * warning and counts as empty (gpushare then owns nothing on the node).
 * `src` is the stream the node was loaded from (NULL when it came from the
 * apiserver): errors then carry file:line:col of the offending value.
 */
int nodehw_from_node(const struct catalog *cat, const json_t *node, const struct ydoc_stream *src,
		     struct nodehw **out, struct gs_warnings *warnings,
		     struct gs_error *err) GS_WUR;
void nodehw_free(struct nodehw *hw);

/*
 * gpushare's records on `node` (NODEHW_ANN_MANAGED_*): new objects, empty
 * when absent. *ok is set to 0 when the annotation was malformed (then the
 * object is empty too), else 1.
 */
json_t *nodehw_managed_labels(const json_t *node, int *ok);
json_t *nodehw_managed_resources(const json_t *node, int *ok);

/*
 * The CUDA driver API version (NVML's cudaDriverVersion) a driver of this
 * version reports, by branch (the major number): 535 -> 12.2, 580 -> 13.0.
 * Returns -1 for a branch gpushare does not know.
 */
int nodehw_cuda_version(const char *driver_version, int *major, int *minor);

/* "X.Y" or "X.Y.Z", each part 1-9 digits: the form GFD's version labeler accepts. */
bool nodehw_driver_version_ok(const char *s);

/* The annotation texts: "k=v,k=v" from an object of strings, "a,b" from an object's keys. */
char *nodehw_format_labels(const json_t *labels);
char *nodehw_format_names(const json_t *names);

#endif
