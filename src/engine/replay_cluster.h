#ifndef GS_REPLAY_CLUSTER_H
#define GS_REPLAY_CLUSTER_H

#include <jansson.h>

#include "base/error.h"
#include "engine/replay.h"
#include "model/catalog.h"

/*
 * A live replay's places as a cluster's objects show them
 * (docs/guide/replay.md "Live"): what kube-scheduler bound and which cards
 * gpushare's controller gave, read as `gpushare status` reads holdings.
 * Pure: the objects come from the apiserver through the caller.
 */

/*
 * Set every arrival of r (from replay_prepare) from its Pod in `pods` (an
 * array of Pods, found by name):
 *   - spec.nodeName set and the pod admitted (gpushare.io/admitted): bound
 *     to that node, its cards those its gpushare.io/devices record names,
 *     placed by the node's ledger (the Node in `nodes` under `configmap`,
 *     the device-plugin ConfigMap, as status builds it);
 *   - refused by the kubelet (phase Failed): not bound, its reason;
 *   - not bound: pending, with the scheduler's PodScheduled message.
 * Fails, naming the pod, when an arrival has no Pod, a pod is bound to a
 * node that is none of the trace's or is not admitted yet, its record
 * cannot be read, or the replicas it holds are not those it asks for.
 */
int replay_cluster_places(const struct catalog *cat, const struct replay_trace *tr,
			  struct replay_result *r, const json_t *configmap, const json_t *nodes,
			  const json_t *pods, struct gs_error *err) GS_WUR;

#endif
