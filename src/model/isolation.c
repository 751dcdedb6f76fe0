#include "model/isolation.h"

#include <string.h>

#include "base/error.h"
#include "base/banned.h"

/*
 * Isolation of the three ways to share a GPU (the lab's step 7, README.md;
 * upstream: the GPU Operator docs gpu-operator/gpu-sharing.rst for
 * time-slicing, k8s-device-plugin v0.20.0 cmd/mps-control-daemon/mps/daemon.go
 * for MPS, the NVIDIA MIG User Guide for MIG). Values are yes / partial /
 * no: yes = enforced by hardware, partial = a limit exists but is not an
 * isolation boundary, no = none.
 */
static const struct isolation_method methods[] = {
	{"time-slicing", "nvidia.com/gpu x replicas",
	 "nothing: the same GPU is registered N times (replicas), so N pods each get \"a GPU\"",
	 "no",
	 "all replicas share one undivided VRAM; a greedy pod can make the others run out of "
	 "memory (the plugin sets no limit; GPU Operator docs gpu-sharing.rst)",
	 "no",
	 "the pods' contexts are time-sliced on one GPU; a fault that resets the GPU hits every "
	 "replica on it"},
	{"mps", "nvidia.com/gpu x replicas",
	 "compute: kernels of several processes run truly concurrently in one MPS context",
	 "partial",
	 "the MPS control daemon sets a per-client pinned-memory limit (total / replicas, "
	 "k8s-device-plugin cmd/mps-control-daemon/mps/daemon.go) and an active-thread share, "
	 "but clients share one context: a limit, not an "
	 "isolation boundary",
	 "no", "one client crashing can take down the MPS server and the other clients with it"},
	{"mig", "nvidia.com/mig-<profile> (mixed) or nvidia.com/gpu (single)",
	 "the hardware: each instance gets its own SMs, memory slices, caches and engines", "yes",
	 "each MIG instance has its own memory slices (NVIDIA MIG User Guide); one instance cannot "
	 "use "
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
	/* The lab's keys, in the lab's order (step 7 of README.md, The lab). */
	return gs_xasprintf("TIMESLICING_MEMORY_ISOLATION=%s\n"
			    "MPS_MEMORY_ISOLATION=%s\n"
			    "MIG_MEMORY_ISOLATION=%s\n"
			    "TIMESLICING_FAULT_ISOLATION=%s\n"
			    "MIG_FAULT_ISOLATION=%s\n",
			    methods[0].memory, methods[1].memory, methods[2].memory,
			    methods[0].fault, methods[2].fault);
}
