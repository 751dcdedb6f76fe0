#ifndef GS_KUBEVERSION_H
#define GS_KUBEVERSION_H

#include <stdbool.h>

#include "base/error.h"

/*
 * The Kubernetes releases gpushare models (v1.34.4 to v1.37.2) and every
 * fact that differs between them, in one table: the scheduler's wording and
 * the feature gates' defaults switch on these fields, never on a version
 * compared by hand. docs/guide/plan.md ("Kubernetes versions") names the
 * source file of each.
 */
/* A feature gate's stage in a release (component-base featuregate's PreRelease). */
enum kubegate_stage {
	KUBEGATE_ALPHA,
	KUBEGATE_BETA,
	KUBEGATE_GA,
};

struct kubeversion {
	const char *version; /* "v1.37.2" */
	int minor;
	/*
	 * DRAExtendedResource on by default (alpha in 1.34 and 1.35, beta in
	 * 1.36, GA in 1.37): a pod's extended resource that some DeviceClass
	 * names in extendedResourceName is served by DRA on a node whose
	 * allocatable lacks it (noderesources/fit.go shouldDelegateResourceToDRA).
	 */
	bool dra_extended_resource;
	/* Its stage: alpha in 1.34 and 1.35, beta in 1.36, GA in 1.37. */
	enum kubegate_stage dra_extended_resource_stage;
	/* GA and LockToDefault (1.37): component-base refuses to turn it off. */
	bool dra_extended_resource_locked;
	/*
	 * With the gate on, a ResourceClaim is also charged
	 * requests.<extendedResourceName> and
	 * requests.deviceclass.resource.kubernetes.io/<class>
	 * (pkg/quota/v1/evaluator/core/resource_claims.go addExtendedResourceQuota,
	 * from v1.35.4).
	 */
	bool claims_charge_extended_resource;
	/*
	 * DynamicResources' PostFilter status message when nothing can be
	 * deallocated: for a pod without claims ("no new claims to deallocate"
	 * up to 1.36) and for a pod whose only claim is the extended-resource
	 * one ("still not schedulable" up to 1.36); NULL when the status has no
	 * message (1.37), so FitError has no text before "preemption:".
	 */
	const char *postfilter_no_claims;
	const char *postfilter_still;
	/*
	 * DynamicResources' PostFilter message when it deallocates a claim of
	 * the pod that is allocated where Filter found it unavailable and
	 * reserved for no other pod ("deallocation of ResourceClaim completed").
	 */
	const char *postfilter_deallocated;
	/*
	 * A ResourceSlice holds sharedCounters or devices, never both (1.35
	 * on: pkg/apis/resource/validation "only one of `sharedCounters` or
	 * `devices` is allowed"); 1.34 wants the counters a device consumes in
	 * its own slice.
	 */
	bool slice_counters_apart;
	/*
	 * NodeResourcesBalancedAllocation scores the change a pod makes to the
	 * node's balance, 50 + (50 + with - without) / 2, instead of the
	 * balance with the pod (1.36 on: noderesources/balanced_allocation.go
	 * balancedResourceScorer).
	 */
	bool balanced_by_change;
	/*
	 * DRAConsumableCapacity on by default (alpha and off in 1.34 and 1.35,
	 * beta from 1.36): off, the apiserver drops allowMultipleAllocations
	 * and capacity requests, and every DRA device goes to one claim whole.
	 */
	bool dra_consumable_capacity;
};

/* The newest release modelled (the default of --kubernetes-version). */
const struct kubeversion *kubeversion_newest(void);
/* The release named; v1.36.3, 1.36.3, v1.36, 1.36 and a /version gitVersion
 * such as v1.36.3+k3s1 name v1.36's facts. NULL with err naming the known
 * releases. */
const struct kubeversion *kubeversion_parse(const char *version, struct gs_error *err) GS_WUR;
/*
 * The release an apiserver's /version gitVersion behaves as: the one of
 * its minor, else the nearest modelled (a newer server as the newest, an
 * older one as the oldest); NULL when it names no 1.x version.
 */
const struct kubeversion *kubeversion_for_server(const char *git_version);
/* "v1.34.4, v1.35.4, v1.36.3, v1.37.2" (static). */
const char *kubeversion_list(void);

/* "alpha", "beta" or "GA" (static), as the Kubernetes docs name the stages. */
const char *kubegate_stage_name(enum kubegate_stage stage);

/* Feature gates a command may set for a cluster that departs from its
 * release's defaults (--feature-gates). */
struct kubegates {
	bool dra_extended_resource;
	bool dra_consumable_capacity;
};

/* The release's defaults. */
void kubegates_defaults(struct kubegates *g, const struct kubeversion *kv);
/* Gates the release cannot take: a locked gate set against its default, in
 * component-base's words. */
int kubegates_check(const struct kubegates *g, const struct kubeversion *kv,
		    struct gs_error *err) GS_WUR;
/* "DRAExtendedResource=true,..." over *g: the gates gpushare models; an
 * unknown gate or a value other than true/false is refused naming them. */
int kubegates_parse(struct kubegates *g, const char *spec, struct gs_error *err) GS_WUR;

#endif
