#ifndef GS_SYNC_H
#define GS_SYNC_H

#include <jansson.h>
#include <stdbool.h>

#include "error.h"

struct kube_client;

/*
 * Play the device plugin + GFD for every node that declares its GPUs
 * (annotation gpushare.io/gpu-product): read the device-plugin ConfigMap,
 * compute each node's advertisement and PATCH only what changed (labels
 * through the node, capacity and allocatable through its status). A node
 * whose config is invalid, or whose label names a missing key, is left
 * untouched and reported; it does not stop the others.
 */

struct sync_opts {
	const char *configmap_namespace; /* NULL = GS_DEFAULT_NAMESPACE */
	const char *configmap_name;	 /* NULL = GS_DEFAULT_CONFIGMAP */
	const char *default_config;	 /* DEFAULT_CONFIG; NULL = unset */
	const char *fallbacks;		 /* FALLBACK_STRATEGIES; NULL = "named,single" */
	const char *only_node;		 /* NULL = every declaring node */
	bool dry_run;			 /* compute and report, write nothing */
};

enum sync_outcome {
	SYNC_UPDATED,
	SYNC_UNCHANGED,
	SYNC_SKIPPED, /* declares no GPUs: not ours */
	SYNC_FAILED,
};

struct sync_node {
	char *name;
	enum sync_outcome outcome;
	char *config;	   /* the chosen ConfigMap key; "" for the empty config */
	char *message;	   /* why it failed or was skipped; NULL otherwise */
	json_t *patch;	   /* the merge patch written (or that would be); NULL if none */
	json_t *resources; /* advertised extended resources: {"nvidia.com/gpu": "8"} */
	struct gs_warnings warnings;
};

struct sync_report {
	struct sync_node *nodes;
	size_t n;
};

const char *sync_outcome_name(enum sync_outcome o);

/*
 * Returns 0 when every declaring node was synced or was already in sync,
 * 1 when at least one node failed (see the report), -1 when nothing could
 * be done (ConfigMap or node list unreadable) with err filled.
 */
int sync_run(struct kube_client *c, const struct sync_opts *o, struct sync_report *rep,
	     struct gs_error *err) GS_WUR;
void sync_report_release(struct sync_report *rep);

#endif
