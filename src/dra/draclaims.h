#ifndef GS_DRACLAIMS_H
#define GS_DRACLAIMS_H

#include <jansson.h>
#include <stdbool.h>

/*
 * Who holds which device on the DRA path, read from the objects a cluster
 * holds (docs/guide/status.md "DRA nodes", docs/guide/explain.md "Claims"): the
 * ResourceSlices NVIDIA's DRA driver publishes for a node (gpushare sync /
 * the controller, src/dra/draslice.c), the ResourceClaims the scheduler
 * allocated from them (status.allocation.devices.results), the pods each
 * claim is reserved for (status.reservedFor), and the prepare verdict the
 * kubelet's stand-in recorded for each pod (src/daemon/draadmit.c: the annotation
 * gpushare.io/admitted once prepared, else a Warning
 * FailedPrepareDynamicResources event, the pod left Pending). Pure: objects
 * in, JSON or text out; every object pointer is borrowed.
 */

#define DRACLAIMS_EVENT_PREPARE "FailedPrepareDynamicResources"
#define DRACLAIMS_EVENT_CREATE "FailedResourceClaimCreation"
/* Quota names of DRA (k8s.io/kubernetes v1.34.4 pkg/quota/v1/evaluator/core/resource_claims.go,
 * k8s.io/api core/v1 ResourceClaimsPerClass). */
#define DRACLAIMS_QUOTA_SUFFIX ".deviceclass.resource.k8s.io/devices"
#define DRACLAIMS_QUOTA_COUNT "count/resourceclaims.resource.k8s.io"
/* AllocationResultsMaxSize: what allocationMode All is charged. */
#define DRACLAIMS_ALL_DEVICES 32

/* Arrays of objects (a List's items); NULL reads as none. */
struct draclaims_objects {
	const json_t *slices;	 /* ResourceSlice */
	const json_t *claims;	 /* ResourceClaim, any namespace */
	const json_t *templates; /* ResourceClaimTemplate, any namespace */
	const json_t *pods;	 /* Pod */
	const json_t *events;	 /* Event */
};

/*
 * One DRA node's entry of `gpushare status -o json` (docs/guide/status.md):
 * its published devices (the gpu.nvidia.com slices of its pool at the
 * highest generation), the claims allocated from them with their pods and
 * prepare verdict, what is free, and who shares a device. New reference.
 */
json_t *draclaims_node_status(const json_t *node, const struct draclaims_objects *o);

/*
 * The claims part of `explain pod` for a pod with spec.resourceClaims:
 * per entry the claim (named, or made from a template), its requests,
 * where it is allocated, who else uses it, and the prepare verdict or why
 * there is none yet (resourceclaim-controller's and the kubelet's events
 * verbatim). Newline-terminated text, "" for a pod without claims;
 * *trouble (may be NULL) is set when a claim is missing, unallocated or
 * refused at prepare. Caller frees.
 */
char *draclaims_explain_pod(const json_t *pod, const struct draclaims_objects *o, bool *trouble);

/*
 * One line about a DRA node for explain's node list: what its slice
 * publishes and what is free, or that it publishes nothing. NULL for a
 * node not on the DRA path. Caller frees.
 */
char *draclaims_node_line(const json_t *node, const struct draclaims_objects *o);

struct strbuf;

/*
 * What is left of a shared device (an entry of draclaims_node_status's
 * "devices" with "shares"): "<capacity> <left> of <value>" per capacity
 * counted, comma-separated, between before and after; nothing when none
 * could be counted.
 */
void draclaims_add_left(struct strbuf *sb, const json_t *device, const char *before,
			const char *after);

/* "gpu-0, gpu-1" the node's published device names; "" when none. Caller frees. */
char *draclaims_device_names(const char *node, const json_t *slices);

/*
 * What a ResourceClaim counts against quotas (pkg/quota/v1/evaluator/core/
 * resource_claims.go Usage): count/resourceclaims.resource.k8s.io 1, and
 * per device class `<class>.deviceclass.resource.k8s.io/devices` the count
 * of an ExactCount request, 32 for All, a firstAvailable request its
 * largest subrequest per class. Added into *usage (created when NULL).
 */
void draclaims_quota_usage(json_t **usage, const json_t *claim);

#endif
