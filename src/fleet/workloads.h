#ifndef GS_FLEET_WORKLOADS_H
#define GS_FLEET_WORKLOADS_H

#include <jansson.h>
#include <stdbool.h>

#include "base/error.h"
#include "fleet/fleet.h"

/*
 * The pods a fleet's objects would make once applied (docs/guide/cli.md,
 * "Workloads"): each workload's pods as its controller would create them,
 * and LimitRange defaults as the apiserver's LimitRanger admission plugin
 * sets them. Pure: no I/O. Pods made are new objects; positions in errors are those of
 * the workload's manifest.
 */

/* At most this many pods from one workload (replicas, parallelism). */
#define FLEET_MAX_WORKLOAD_PODS 100000

/*
 * Append to `out` (an array) the pods workload `w` (an object of
 * f->workloads) would make, in the order its controller creates them:
 *   Deployment      spec.replicas (default 1), named NAME-HASH-i
 *   ReplicaSet, ReplicationController  spec.replicas, named NAME-i
 *   StatefulSet     spec.replicas, named NAME-k for k from spec.ordinals.start
 *                   (default 0), as the controller names them
 *   Job             spec.parallelism (default 1), at most spec.completions;
 *                   none when suspended; named NAME-i
 *   CronJob         one Job of spec.jobTemplate (none when suspended), NAME-i
 *   DaemonSet       one pod per node of `nodes` (a NodeList or an array; NULL =
 *                   none) the daemonset controller would run it on: its
 *                   nodeSelector and required node affinity select the node
 *                   and every NoSchedule/NoExecute taint is tolerated, with the
 *                   tolerations the controller adds; the pod gets those
 *                   tolerations and a required affinity to its node, as the
 *                   controller writes them; named NAME-NODE.
 * The controllers pick random suffixes (and a hash of the Go object for a
 * Deployment's HASH); these are deterministic instead. Each pod: the
 * workload's namespace, the template's labels and annotations (plus the
 * labels the controller adds: pod-template-hash, statefulset.kubernetes.io/
 * pod-name, apps.kubernetes.io/pod-index, job-name, batch.kubernetes.io/
 * job-name) and a copy of the template's spec. A workload with metadata.uid
 * came from a cluster, where its pods exist already: it makes none.
 * Fails at the workload's file:line:col for what the apiserver would
 * refuse: no template or template spec, counts that are not whole numbers
 * >= 0, a missing or empty selector (apps/v1), a selector that does not
 * match the template's labels, quantities that do not parse.
 */
int fleet_workload_pods(const struct fleet *f, const json_t *w, const json_t *nodes, json_t *out,
			struct gs_error *err) GS_WUR;

/*
 * LimitRanger on a pod being created, in place (src/fleet/limitranger.c):
 * when its namespace has LimitRanges, each container's and init
 * container's requests are first defaulted from its limits (the
 * apiserver's defaulting of a v1 Pod), then every LimitRange of f in the
 * namespace, in reading order, sets each limit a container lacks to its
 * Container items' `default` and each request it lacks to their
 * `defaultRequest` (each item first defaulted as the apiserver stores it:
 * `max` gives a missing default, `default` and then `min` a missing
 * defaultRequest; of two items, the later one's value for a key). A key the
 * first LimitRange set is not the next one's to set. Returns whether the pod
 * changed. Min, max and ratio are not enforced.
 */
bool fleet_limitranges_apply(const struct fleet *f, json_t *pod);

/*
 * Every pod of f as the cluster would hold them after every object is
 * applied, in reading order: the Pods with spec.nodeName are already there
 * (*existing, a PodList, as read); every other Pod and every pod a
 * workload makes (in the workload's place) are to be created (*batch, an
 * array), with LimitRange defaults applied (fleet_limitranges_apply; the
 * Pods as read are copied first). `nodes` is what DaemonSets are judged
 * against (the nodes as advertised). Fails at file:line:col on a workload fleet_workload_pods
 * refuses, or on two pods of one namespace and name. New references.
 */
int fleet_pods(const struct fleet *f, const json_t *nodes, json_t **existing, json_t **batch,
	       struct gs_error *err) GS_WUR;

/*
 * The same for a fleet read with stream_pods (its Pods are not kept):
 * fleet_pods_check makes the same checks in the same order and counts the
 * pods to create (*n_batch); fleet_pods_each gives fn, in reading order,
 * each pod already there (`there`) or each pod to create (workloads' made
 * again, LimitRange defaults applied), borrowed until fn returns. fn
 * returns 0, or -1 with err filled, which stops the walk.
 */
typedef int (*fleet_pod_fn)(void *ctx, const json_t *pod, struct gs_error *err);
int fleet_pods_check(const struct fleet *f, const json_t *nodes, size_t *n_batch,
		     struct gs_error *err) GS_WUR;
int fleet_pods_each(const struct fleet *f, const json_t *nodes, bool there, fleet_pod_fn fn,
		    void *ctx, struct gs_error *err) GS_WUR;

#endif
