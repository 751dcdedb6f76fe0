#ifndef GS_LAB_H
#define GS_LAB_H

#include <jansson.h>

#include "base/error.h"
#include "daemon/labkit.h"
#include "fleet/sync.h"

struct kube_client;

/*
 * The eight-step GPU sharing scenario, run against the cluster the client
 * talks to, from the manifests under <dir>/k8s/, writing <dir>/out/.
 * Safe to re-run: objects that exist are brought in line, not duplicated.
 */

struct lab_placement {
	char *namespace;
	char *pod;
	char *node; /* "" when never scheduled */
	char *why;  /* the scheduler's message or the selector that chose the node */
};

struct lab_report {
	struct sync_report sync; /* the last sync of the nodes (SYNC_UPDATED or _UNCHANGED) */
	struct lab_placement *pods;
	size_t n_pods;
	char *quota_denied;	  /* the apiserver's refusal of team-over, verbatim */
	char *quota_used;	  /* e.g. "2/2" */
	struct gs_warnings notes; /* things the user should know (seed mistakes, ...) */
};

/* 0 when every step reached its expected outcome; -1 with err naming the step that did not. */
int lab_run(struct kube_client *c, const struct lab_opts *o, struct lab_report *rep,
	    struct gs_error *err) GS_WUR;
void lab_report_release(struct lab_report *rep);

#endif
