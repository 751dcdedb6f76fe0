#include "model/isolation.h"

#include <string.h>

#include "base/error.h"
#include "base/banned.h"

/*
 * Isolation of the three ways to share a GPU (MISSION table; spec
 * nvidia-semantics §1.7, §3.2, §3.6, §5, §6.4). Values are yes / partial /
 * no: yes = enforced by hardware, partial = a limit exists but is not an
 * isolation boundary, no = none.
 */
static const struct isolation_method methods[] = {
	{"time-slicing", "nvidia.com/gpu x replicas",
	 "nothing: the same GPU is registered N times (replicas), so N pods each get \"a GPU\"",
	 "no",
	 "all replicas share one undivided VRAM; a greedy pod can make the others run out of "
	 "memory (the plugin sets no limit, spec §3.2)",
	 "no",
	 "the pods' contexts are time-sliced on one GPU; a fault that resets the GPU hits every "
	 "replica on it"},
	{"mps", "nvidia.com/gpu x replicas",
	 "compute: kernels of several processes run truly concurrently in one MPS context",
	 "partial",
	 "the MPS control daemon sets a per-client pinned-memory limit (total / replicas, spec "
	 "§6.4) and an active-thread share, but clients share one context: a limit, not an "
	 "isolation boundary",
	 "no", "one client crashing can take down the MPS server and the other clients with it"},
	{"mig", "nvidia.com/mig-<profile> (mixed) or nvidia.com/gpu (single)",
	 "the hardware: each instance gets its own SMs, memory slices, caches and engines", "yes",
	 "each MIG instance has its own memory slices (spec §5.2); one instance cannot use "
	 "another's memory",
	 "yes", "faults stay inside the GPU instance; other instances keep running"},
};

#define N_METHODS (sizeof(methods) / sizeof(methods[0]))

const struct isolation_method *isolation_methods(size_t *n)
{
	*n = N_METHODS;
	return methods;
}

const struct isolation_method *isolation_method_find(const char *name)
{
	for (size_t i = 0; i < N_METHODS; i++)
		if (!strcmp(methods[i].name, name))
			return &methods[i];
	return NULL;
}

char *isolation_env_text(void)
{
	/* The seed's keys, in the seed's order (MISSION step 7). */
	return gs_xasprintf("TIMESLICING_MEMORY_ISOLATION=%s\n"
			    "MPS_MEMORY_ISOLATION=%s\n"
			    "MIG_MEMORY_ISOLATION=%s\n"
			    "TIMESLICING_FAULT_ISOLATION=%s\n"
			    "MIG_FAULT_ISOLATION=%s\n",
			    methods[0].memory, methods[1].memory, methods[2].memory,
			    methods[0].fault, methods[2].fault);
}
