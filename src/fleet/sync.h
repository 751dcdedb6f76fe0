#ifndef GS_SYNC_H
#define GS_SYNC_H

#include <jansson.h>
#include <stdbool.h>

#include "model/kubeversion.h"
#include "base/error.h"
#include "engine/sync_plan.h"

/*
 * The device plugin's and GFD's writes: read what sync_plan needs from a
 * cluster and write its plan (engine/sync_plan.h says what is planned).
 */

struct kube_client;

/*
 * The writer: PATCH every SYNC_UPDATED node's patch, and the patch of a
 * SYNC_FAILED node that has one (its plugin or mig-manager fails, the rest
 * of the stack still publishes: docs/guide/advertise.md), metadata through the
 * node, capacity and allocatable through its status. A node whose write
 * fails becomes SYNC_FAILED with the reason. The DeviceClasses first; per
 * node its slice deletions, then its patch, then its slice create or
 * update, so a node never shows nvidia.com resources and a slice at once.
 * Returns 1 when some node failed or a DeviceClass could not be written,
 * else 0.
 */
int sync_write(struct kube_client *c, struct sync_report *rep) GS_WUR;

/*
 * Only the DRA writes of sync_write (rep->ops: the DeviceClasses, then per
 * node its slice deletions before its creations and updates), for a caller
 * that writes the node objects itself (the controller). Returns 1 when some
 * write failed (the node becomes SYNC_FAILED), else 0.
 */
int sync_write_dra(struct kube_client *c, struct sync_report *rep) GS_WUR;

/* GET the ConfigMap and the nodes (o->only_node: that one) sync_plan reads. */
int sync_read(struct kube_client *c, const struct sync_opts *o, json_t **configmap, json_t **nodes,
	      struct gs_error *err) GS_WUR;

/*
 * LIST the gpu.nvidia.com ResourceSlices and GET the driver's DeviceClasses
 * sync_plan_dra reads. An apiserver that does not serve resource.k8s.io/v1
 * (404) has none of either.
 */
int sync_read_dra(struct kube_client *c, json_t **slices, json_t **classes,
		  struct gs_error *err) GS_WUR;

struct kube_loop;

/*
 * sync_read_dra on an event loop (the controller's): the LIST and the GETs
 * go out at once, and done is called exactly once from kube_loop_step with
 * the slices and classes (the callee's to free), or with both NULL and
 * err saying what could not be read, in sync_read_dra's words. -1 when
 * nothing could be sent (done is then never called).
 */
typedef void (*sync_dra_read_fn)(void *arg, json_t *slices, json_t *classes,
				 const struct gs_error *err);
int sync_read_dra_loop(struct kube_loop *l, sync_dra_read_fn done, void *arg) GS_WUR;

/*
 * sync_write_dra on an event loop: each DeviceClass and each node's slices
 * at once, a node's deletions before its creations and updates, one after
 * the other; a node's first failure makes it SYNC_FAILED and ends its
 * writes. rep is borrowed until done(arg, rc) is called, exactly once (at
 * once when there is nothing to write), rc as sync_write_dra's.
 */
void sync_write_dra_loop(struct kube_loop *l, struct sync_report *rep,
			 void (*done)(void *arg, int rc), void *arg);

/*
 * sync_read, sync_plan, sync_read_dra + sync_plan_dra, then sync_write
 * unless o->dry_run. The DRA objects are read when some node declares its
 * GPUs; when they cannot be read, the DRA nodes fail with the apiserver's
 * message and the other nodes are synced as before (their stale slices, if
 * any, stay). Returns 0 when
 * every declaring node was synced or was already in sync, 1 when at least
 * one node failed (see the report), -1 when nothing could be done
 * (ConfigMap or node list unreadable) with err filled.
 */
int sync_run(struct kube_client *c, const struct sync_opts *o, struct sync_report *rep,
	     struct gs_error *err) GS_WUR;

/*
 * Whether the apiserver keeps DRAPartitionableDevices' fields: a ResourceSlice
 * carrying sharedCounters is created with dryRun=All (nothing is stored) and
 * the answer read; a 1.34 apiserver without the gate drops the field
 * silently. -1 with the apiserver's message when the probe fails.
 */
int sync_probe_partitionable(struct kube_client *c, bool *out, struct gs_error *err) GS_WUR;
/*
 * The apiserver's /version: *release the Kubernetes release it behaves as
 * (kubeversion_for_server), e.g. for slice_counters_apart.
 */
int sync_probe_version(struct kube_client *c, const struct kubeversion **release,
		       struct gs_error *err) GS_WUR;

#endif
