#ifndef GS_STATUS_H
#define GS_STATUS_H

#include <jansson.h>

#include "model/catalog.h"
#include "dra/draclaims.h"
#include "base/error.h"

/*
 * `gpushare status`: the ledger of every managed node (ledger.h), built
 * from the objects a cluster holds — the device-plugin ConfigMap, the
 * Nodes, the Pods — with who holds each device, what is free, and which
 * namespaces share one card. Pure: the objects may come from the apiserver
 * or from a recorded List. The output is documented in docs/guide/status.md.
 */

struct status_opts {
	const char *default_config; /* config-manager's DEFAULT_CONFIG, NULL = unset */
	const char *fallbacks;	    /* FALLBACK_STRATEGIES, NULL = "named,single" */
	const char *only_node;	    /* NULL = every managed node */
};

/*
 * `configmap` may be NULL (no ConfigMap: every node gets the empty
 * config); `nodes` and `pods` are arrays of objects (a List's items). Nodes
 * without gpushare.io/gpu-product are not managed and left out. A DRA node
 * (gpushare.io/path=dra) gets its entry from draclaims_node_status with
 * the objects of `dra` (its pods are `pods`); with dra NULL, DRA nodes are
 * left out. A node gpushare cannot read is a warning and shows its error.
 * *out: {"nodes":[...]} (new reference).
 */
int status_build(const struct catalog *cat, const json_t *configmap, const json_t *nodes,
		 const json_t *pods, const struct draclaims_objects *dra,
		 const struct status_opts *o, json_t **out, struct gs_warnings *warnings,
		 struct gs_error *err) GS_WUR;

/* The table `-o table` prints, newline-terminated. Caller frees. */
char *status_table(const json_t *status);

#endif
