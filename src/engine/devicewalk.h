#ifndef GS_DEVICEWALK_H
#define GS_DEVICEWALK_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

/*
 * The kubelet device manager's Allocate over one pod, counted
 * (k8s.io/kubernetes v1.37.2 pkg/kubelet/cm/devicemanager/manager.go:
 * Allocate, allocateContainerResources, devicesToAllocate; the topology
 * manager hands it the containers, topologymanager/scope.go
 * admitPolicyNone):
 *
 *  - the init containers in order, then the app containers; the first
 *    container refused ends the pod's admission;
 *  - per container, each resource of its limits (else its requests) that a
 *    device plugin serves, in name order (Go ranges over the limits map in
 *    any order; name order keeps a refusal stable);
 *  - devices a plain init container held are reused first by the
 *    containers after it (devicesToReuse, addContainerAllocatedResources);
 *    a sidecar (init container with restartPolicy Always) or an app
 *    container keeps what it takes, which leaves the reusable set
 *    (removeContainerAllocatedResources).
 *
 * The walk tells each step how many devices come from that reusable set and
 * how many the container needs besides; the caller holds the count of free
 * devices (or the device IDs) and decides.
 */

struct devicewalk_step {
	const json_t *container;
	const char *resource;
	bool init;	/* an init container (a sidecar too) */
	bool leaves;	/* a plain init container: its devices are reusable after it */
	int64_t ask;	/* its limit, else its request; > 0 */
	int64_t reused; /* of ask, devices plain init containers before it left */
	int64_t fresh;	/* ask - reused: the devices it needs from the node's free ones */
};

/* isDevicePluginResource: whether the node's device manager allocates `resource`. */
typedef bool devicewalk_serves_fn(void *arg, const char *resource);

/* One container's ask of one resource: 0 goes on, a positive value stops the walk. */
typedef int devicewalk_step_fn(void *arg, const struct devicewalk_step *st);

/*
 * Walk `pod`'s containers, calling `step` for each container and each
 * resource `serves` accepts that the container asks for (ask > 0). Returns
 * 0 after the last container, the first positive value `step` returned, or
 * -1 with `err` on a quantity that cannot be read. With `err` NULL an
 * unreadable quantity counts as no ask (for a pod whose requests were read
 * already).
 */
int devicewalk_pod(const json_t *pod, devicewalk_serves_fn *serves, devicewalk_step_fn *step,
		   void *arg, struct gs_error *err) GS_WUR;

/*
 * What container `c` asks of `resource` as the device manager reads it: its
 * limit (extended resources have request == limit), else its request;
 * Quantity.Value(), rounded up. 0 when absent; -1 with `err` on an
 * unreadable quantity.
 */
int devicewalk_ask(const json_t *c, const char *resource, int64_t *out,
		   struct gs_error *err) GS_WUR;

#endif
