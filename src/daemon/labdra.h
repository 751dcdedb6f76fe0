#ifndef GS_LABDRA_H
#define GS_LABDRA_H

#include <jansson.h>

#include "base/error.h"
#include "daemon/lab.h"

struct kube_client;

/*
 * The lab in DRA form (`gpushare lab --dra`, docs/guide/lab.md): the seed's steps
 * on nodes that NVIDIA's DRA driver serves, from the manifests in <dir>/k8s/dra/,
 * writing <dir>/out/dra/. The MIG claim must land on a 1g.10gb device and a
 * whole-GPU claim never on the MIG node; a quota on
 * gpu.nvidia.com.deviceclass.resource.k8s.io/devices refuses the third
 * claim; a time-sliced shared claim is refused by the driver's prepare with
 * its default gates and accepted with TimeSlicingSettings. Placement is read
 * from each claim's status.allocation. Safe to re-run.
 */

struct labdra_placement {
	char *namespace;
	char *pod;
	char *claim;  /* the ResourceClaim the pod got its device through */
	char *node;   /* from status.allocation.nodeSelector */
	char *device; /* "<pool>/<device>" of every result, space-separated */
};

struct labdra_report {
	struct sync_report sync; /* the publish of the DRA nodes */
	struct labdra_placement *pods;
	size_t n_pods;
	char *quota_denied;   /* the apiserver's refusal of team-over, verbatim */
	char *quota_used;     /* e.g. "2/2" */
	char *prepare_before; /* the kubelet's event for ts-pod-1 with the default gates */
	char *prepare_after;  /* what prepare gave with TimeSlicingSettings on */
	struct gs_warnings notes;
};

/* 0 when every step reached its expected outcome; -1 with err naming the step that did not. */
int labdra_run(struct kube_client *c, const struct lab_opts *o, struct labdra_report *rep,
	       struct gs_error *err) GS_WUR;
void labdra_report_release(struct labdra_report *rep);

#endif
