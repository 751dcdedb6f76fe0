#ifndef GS_DRAALLOC_H
#define GS_DRAALLOC_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"

/*
 * The scheduler's DRA allocation, offline: ResourceClaims allocated one
 * after another from the gpu.nvidia.com devices of the slices given, as
 * the structured allocator of k8s.io/dynamic-resource-allocation v0.34.4
 * does with DRAConsumableCapacity on
 * (structured/internal/experimental/allocator_experimental.go
 * allocateDevice, consumable_capacity.go). A device with
 * allowMultipleAllocations goes to several claims while every capacity
 * stays within its value: each claim consumes, per capacity of the device,
 * its request rounded up per the capacity's requestPolicy (validRange
 * from min in steps, or the next validValues entry), the policy's default
 * when it asks nothing, or all of it without a policy; a request the
 * policy does not allow (above max, off the step) is not allocated there.
 * Any other device goes to one claim. docs/guide/dra.md ("Allocation offline").
 *
 * Judged: requests `exactly` with ExactCount, the driver's classes
 * (gpu.nvidia.com, mig.nvidia.com, vfio.gpu.nvidia.com) and capacity
 * requests. A claim with CEL selectors, firstAvailable or allocationMode
 * All is not judged (DRAALLOC_NOT_JUDGED). Every json_t passed in is
 * borrowed.
 */

struct draalloc;

/*
 * The devices of `slices` (an array of ResourceSlice objects), indexed by
 * node and by pool and name: a claim on one node tries that node's devices
 * only, an allocated claim finds its devices without a scan.
 */
struct draalloc *draalloc_new(const json_t *slices);
void draalloc_free(struct draalloc *a);

/*
 * A cluster with DRAConsumableCapacity off (alpha and off by default in
 * 1.34 and 1.35): the apiserver drops allowMultipleAllocations from
 * ResourceSlices and capacity requests from ResourceClaims on create
 * (pkg/registry/resource/resourceslice/strategy.go
 * dropDisabledDRAConsumableCapacityFields, pkg/api/resourceclaimspec/util.go
 * dropDisabledDRAResourceClaimConsumableCapacityFields), so every device
 * goes to one claim, whole.
 */
void draalloc_without_consumable_capacity(struct draalloc *a);
/*
 * Whether any of the objects uses a field DRAConsumableCapacity guards: a
 * slice device's allowMultipleAllocations or a capacity's requestPolicy, a
 * claim's (or a ResourceClaimTemplate's) capacity requests or
 * distinctAttribute constraint (the fields the apiserver drops with the
 * gate off).
 */
bool draalloc_uses_consumable_capacity(const json_t *slices, const json_t *claims,
				       const json_t *templates);

/* A claim already allocated (status.allocation): its devices are in use. */
void draalloc_take(struct draalloc *a, const json_t *claim);

enum draalloc_outcome {
	DRAALLOC_ALLOCATED,
	DRAALLOC_UNSCHEDULABLE, /* no node's devices fit: the scheduler's words in why */
	DRAALLOC_NOT_JUDGED,	/* a request shape gpushare does not evaluate */
	DRAALLOC_ERROR,		/* the allocator's own error (an unknown class) */
};

struct draalloc_result {
	enum draalloc_outcome outcome;
	char *node;	    /* ALLOCATED: where */
	json_t *allocation; /* ALLOCATED: status.allocation as the scheduler writes it */
	/*
	 * UNSCHEDULABLE: "0/N nodes are available: N cannot allocate all
	 * claims." then, one line each, why every device of the class did not
	 * take the request ("dra-t4 gpu-0: shares: 10 left of 100 ..."); the
	 * allocator itself says no more than the first line. NOT_JUDGED /
	 * ERROR: the reason.
	 */
	char *why;
};

void draalloc_result_release(struct draalloc_result *r);

/*
 * Allocate `claim` (a ResourceClaim with spec.devices.requests) on the
 * first node, by name, whose devices fit; the devices it gets are then in
 * use for the claims after it. -1 with err when `claim` is not a
 * ResourceClaim.
 */
int draalloc_claim(struct draalloc *a, const json_t *claim, struct draalloc_result *out,
		   struct gs_error *err) GS_WUR;
/*
 * The same on node `only` (NULL: any, as draalloc_claim); with `commit`
 * false, whether it would fit, nothing taken and no allocation written.
 * With `only`, the reasons of UNSCHEDULABLE are about that node's
 * devices alone.
 */
int draalloc_claim_on(struct draalloc *a, const json_t *claim, const char *only, bool commit,
		      struct draalloc_result *out, struct gs_error *err) GS_WUR;
/*
 * One pod's claims[0..n_claims) together on node `only` (NULL: any), as
 * the scheduler's Filter allocates them in one call: their requests in
 * order, a device one claim takes is not there for the next. ALLOCATED
 * when they all fit; with commit, out->allocation is then an array of each
 * claim's status.allocation and the devices are taken.
 */
int draalloc_claims_on(struct draalloc *a, const json_t *const *claims, size_t n_claims,
		       const char *only, bool commit, struct draalloc_result *out,
		       struct gs_error *err) GS_WUR;
/*
 * Whether the allocator judges `claim`'s request shapes and classes; when
 * not, *why says why (allocated), else *why is NULL.
 */
bool draalloc_claim_judged(const json_t *claim, char **why);

#endif
