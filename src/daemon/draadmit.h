#ifndef GS_DRAADMIT_H
#define GS_DRAADMIT_H

#include <stdbool.h>
#include <stddef.h>

#include "daemon/controller.h"
#include "dra/draprepare.h"

struct kube_loop;
struct draadmit_read;

/*
 * The kubelet's prepare of DRA claims, as the controller's admission hook
 * (docs/guide/dra.md "Prepare in the cluster"): a pod with resourceClaims bound
 * to a node on the DRA path (gpushare.io/path=dra) is prepared as NVIDIA's
 * driver would (draprepare_pod on its claims and the node's slice, with the
 * node's driver gates); every other pod goes to `next`. A claim prepared
 * once is not prepared again. A refusal holds the pod as a real kubelet
 * leaves it: bound, Pending, ContainerCreating, PodReadyToStartContainers
 * False, and a Warning FailedPrepareDynamicResources with the kubelet's
 * text; it is tried again when its node changes (its gates) or later.
 *
 * The pod's claims and its node's slices are read on the controller's loop
 * (the hook returns CONTROLLER_ADMIT_LATER, then decides with them when the
 * controller asks again at the `ready` call), so the loop never waits.
 */
struct draadmit {
	struct kube_loop *l; /* where claims and slices are read; borrowed */
	struct draprepare_gates cluster;
	controller_admit_fn next; /* NULL = admit */
	void *next_arg;
	char **prepared; /* claim UIDs prepared once */
	size_t n_prepared;
	struct draadmit_read *reads; /* per pod: what was read, or is being read */
};

void draadmit_init(struct draadmit *d, struct kube_loop *l);
void draadmit_release(struct draadmit *d);

/* A controller_admit_fn; arg is a struct draadmit. */
int draadmit_decide(void *arg, const struct controller_admission *in,
		    struct controller_verdict *out, struct gs_error *err) GS_WUR;

#endif
