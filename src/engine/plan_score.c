#include "engine/plan_score.h"

#include <stddef.h>

#include "base/banned.h"

static int64_t least_requested(int64_t requested, int64_t capacity)
{
	if (capacity == 0 || requested > capacity)
		return 0;
	return (capacity - requested) * 100 / capacity;
}

/*
 * BalancedAllocation's balance of cpu and memory fractions (capped at 1):
 * (1 - std) * 100, std of two fractions |a - b| / 2 (balancedResourceScore).
 */
static int64_t balance(int64_t cpu, int64_t ac, int64_t mem, int64_t am)
{
	double f[2];
	size_t nf = 0;

	if (ac) {
		double x = (double)cpu / (double)ac;
		f[nf++] = x > 1 ? 1 : x;
	}
	if (am) {
		double x = (double)mem / (double)am;
		f[nf++] = x > 1 ? 1 : x;
	}
	double sd = 0;
	if (nf == 2)
		sd = (f[0] - f[1]) / 2 < 0 ? (f[1] - f[0]) / 2 : (f[0] - f[1]) / 2;
	return (int64_t)((1 - sd) * 100);
}

int64_t plan_resource_score(const struct kubeversion *kv, struct plan_cpumem alloc,
			    struct plan_cpumem node_nz, struct plan_cpumem pod_nz,
			    struct plan_cpumem node, struct plan_cpumem pod)
{
	int64_t sum = 0, weights = 0, fit, bal = 0;

	if (alloc.cpu) {
		sum += least_requested(node_nz.cpu + pod_nz.cpu, alloc.cpu);
		weights++;
	}
	if (alloc.mem) {
		sum += least_requested(node_nz.mem + pod_nz.mem, alloc.mem);
		weights++;
	}
	fit = weights ? sum / weights : 0;
	/* BalancedAllocation: skipped for a pod requesting neither (best effort). */
	if (pod.cpu || pod.mem) {
		int64_t with =
			balance(node.cpu + pod.cpu, alloc.cpu, node.mem + pod.mem, alloc.mem);
		/* From 1.36 the change the pod makes (balancedResourceScorer); Go's
		 * integer division truncates, and 50 + with - without is never negative. */
		bal = kv->balanced_by_change
			      ? 50 + (50 + with -
				      balance(node.cpu, alloc.cpu, node.mem, alloc.mem)) /
						2
			      : with;
	}
	return fit + bal;
}
