#ifndef GS_ADMISSION_H
#define GS_ADMISSION_H

#include <jansson.h>
#include <stdbool.h>

#include "engine/advertise.h"
#include "model/catalog.h"
#include "base/error.h"
#include "engine/ledger.h"

/*
 * The kubelet's admission of a pod bound to a node, for the device-plugin
 * resources of that node (kubelet v1.34.4 with NVIDIA's device plugin
 * v0.17): pure, from the node's ledger. The words are the kubelet's own;
 * docs/guide/status.md says where each comes from.
 *
 * The kubelet runs its admit handlers in order (pkg/kubelet/kubelet.go,
 * NewMainKubelet): the resource allocator (topology manager, policy none,
 * then the device manager's Allocate per init and app container,
 * pkg/kubelet/cm/devicemanager/manager.go) before the general predicates
 * (pkg/kubelet/lifecycle/predicate.go). So:
 *
 *  - a container asking for more devices of a registered resource than are
 *    free: reason "UnexpectedAdmissionError", message "Allocate failed due
 *    to requested number of devices unavailable for <res>. Requested: <n>,
 *    Available: <m>, which is unexpected" (devicesToAllocate, wrapped by
 *    pkg/kubelet/cm/admission/errors.go);
 *  - more than one replica of a shared resource where the plugin refuses it:
 *    "Allocate failed due to rpc error: code = Unknown desc = invalid
 *    allocation request for \"<res>\": invalid request: maximum request
 *    size for shared resources is 1; found <n>, which is unexpected";
 *  - a resource the node shows at 0 (registered once, its plugin gone or
 *    the resource renamed): no device plugin serves it, so the predicate
 *    judges it: reason "OutOf<res>", message "Node didn't have enough
 *    resource: <res>, requested: <n>, used: <u>, capacity: 0".
 *
 * A resource the node never had passes (removeMissingExtendedResources).
 * cpu, memory and pods are left to the scheduler.
 */

struct admission_decision {
	bool admit;
	char *reason;	 /* PodAdmitResult.Reason; NULL when admitted */
	char *message;	 /* PodAdmitResult.Message (the Event's); NULL when admitted */
	json_t *devices; /* when admitted: {resource: [ids]}, the pod's LEDGER_ANN_DEVICES */
};

/*
 * Decide for `pod` (a Pod object bound to l->node, not held in `l`) against
 * the free devices of `l`. Does not change `l`; the caller holds the IDs
 * (ledger_hold) once it recorded them. Fails only on a pod whose resource
 * quantities cannot be read.
 */
int admission_decide(const struct ledger *l, const json_t *pod, struct admission_decision *out,
		     struct gs_error *err) GS_WUR;
void admission_decision_release(struct admission_decision *d);

/*
 * The pod status the kubelet writes on rejection (rejectPod,
 * pkg/kubelet/kubelet.go): {"status":{"phase":"Failed","reason":R,
 * "message":"Pod was rejected: " M}}. New reference.
 */
json_t *admission_status_patch(const struct admission_decision *d);

/*
 * The Event the kubelet records with it (recorder.Eventf(pod, Warning,
 * reason, message)): a v1 Event for the pod, source component "kubelet" on
 * the node, at `now` (RFC 3339). New reference, to POST in the pod's
 * namespace.
 */
json_t *admission_event(const struct admission_decision *d, const json_t *pod, const char *node,
			const char *now);

/*
 * The whole decision from cluster objects, for a controller: the node's
 * advertisement under the device-plugin ConfigMap (advertise_node), its
 * ledger rebuilt from `holders` (the pods bound to the node that hold
 * devices: an array), then admission_decide. A holder without a
 * LEDGER_ANN_DEVICES record (admitted before the ledger existed) is given
 * what the kubelet would have given it, in array order, so it still
 * counts. The parsed ConfigMap is kept between calls while its uid and
 * resourceVersion stay the same.
 */
struct admission_ctx;

/* `ao` is copied (its strings borrowed for the context's life); NULL = Helm defaults. */
struct admission_ctx *admission_ctx_new(const struct catalog *cat,
					const struct advertise_options *ao);
void admission_ctx_free(struct admission_ctx *ctx);
/*
 * `configmap` NULL: no ConfigMap (the empty config). Fails on a node or
 * ConfigMap gpushare cannot read, or an unreadable pod.
 */
int admission_ctx_decide(struct admission_ctx *ctx, const json_t *node, const json_t *configmap,
			 const json_t *pod, const json_t *holders, struct admission_decision *out,
			 struct gs_error *err) GS_WUR;

#endif
