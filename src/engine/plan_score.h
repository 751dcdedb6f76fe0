#ifndef GS_PLAN_SCORE_H
#define GS_PLAN_SCORE_H

#include <stdint.h>

#include "model/kubeversion.h"

/*
 * kube-scheduler's resource scores of a pod on a node, per release: the
 * one scorer plan (engine/plan.c) and the design replay
 * (engine/replay_design.c) rank nodes by.
 */

/* A node's or a pod's cpu (milli) and memory (any one unit throughout). */
struct plan_cpumem {
	int64_t cpu, mem;
};

/*
 * NodeResourcesFit's LeastAllocated (cpu and memory, weight 1 each) plus
 * NodeResourcesBalancedAllocation, as release kv scores a pod on a node of
 * allocatable `alloc` (k8s.io/kubernetes pkg/scheduler/framework/plugins/
 * noderesources least_allocated.go, balanced_allocation.go).
 * LeastAllocated counts requests with the scheduler's non-zero defaults for
 * a missing one (`node_nz` on the node, `pod_nz` the pod's),
 * BalancedAllocation the requests as set (`node`, `pod`); it is skipped
 * for a pod that sets neither, and from 1.36 scores the change the pod
 * makes (kv->balanced_by_change).
 */
int64_t plan_resource_score(const struct kubeversion *kv, struct plan_cpumem alloc,
			    struct plan_cpumem node_nz, struct plan_cpumem pod_nz,
			    struct plan_cpumem node, struct plan_cpumem pod);

#endif
