#ifndef GS_HEARTBEAT_H
#define GS_HEARTBEAT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * A node's two heartbeats as its kubelet writes them (k8s.io/kubernetes
 * v1.37.2): its Lease in kube-node-lease, renewed by the lease controller
 * the kubelet starts (pkg/kubelet/kubelet.go:1155-1166; the controller is
 * k8s.io/component-helpers v0.37.2 apimachinery/lease/controller.go), and
 * the conditions it posts in the node's status
 * (pkg/kubelet/nodestatus/setters.go). kube-controller-manager's node
 * lifecycle controller counts a node alive while it sees the Lease's
 * renewTime move or the Ready condition change
 * (pkg/controller/nodelifecycle/node_lifecycle_controller.go
 * tryUpdateNodeHealth :956-962), and marks it Unknown after
 * --node-monitor-grace-period (50 s) without either.
 *
 * Written in two places: a kubelet restart's window (kubeletrestart.h) and
 * the controller's renewal of a Lease its holder stopped renewing
 * (docs/design/kwok-lease-stall.md). Pure: objects in, patches out.
 */

/* The kubelet's NodeLeaseDurationSeconds default. */
#define HEARTBEAT_LEASE_SECONDS 40
/* kubelet.go:237 nodeLeaseRenewIntervalFraction: renewed every quarter of the duration. */
#define HEARTBEAT_RENEW_FRACTION 4
/* controller.go Run: wait.JitterUntil(sync, renewInterval, 0.04, ...): up to 4% later. */
#define HEARTBEAT_JITTER_PERCENT 4

/* What is read of a Lease; the strings are borrowed from it. */
struct heartbeat_lease {
	const char *holder; /* spec.holderIdentity; NULL = none */
	const char *rv;	    /* metadata.resourceVersion; NULL = none */
	int duration;	    /* spec.leaseDurationSeconds; 0 = none */
	long long renew_us; /* spec.renewTime, Unix microseconds; -1 = none or unreadable */
	bool owned;	    /* metadata.ownerReferences is not empty */
};

void heartbeat_lease_read(const json_t *lease, struct heartbeat_lease *out);

/* An RFC 3339 time in UTC ("...T10:00:00Z", "...T10:00:00.123456Z"): Unix microseconds, or -1. */
long long heartbeat_parse_micro(const char *s);

/*
 * A merge patch of a Lease renewing it at now_us: spec.renewTime as
 * metav1.MicroTime writes it (six fraction digits, UTC). holder and
 * duration are written when given (NULL and 0 leave them as they are, as a
 * renewal by the holder itself does: newLease copies its base). rv, when
 * given, makes the patch conditional on the Lease's resourceVersion, as
 * the kubelet's Update of its latestLease is (controller.go sync): a 409
 * when anyone wrote it since. node and node_uid, when given, make the Node
 * its owner (SetNodeOwnerFunc, pkg/kubelet/util/nodelease.go:32-55).
 * Caller decrefs.
 */
json_t *heartbeat_lease_patch(const char *holder, int duration, long long now_us, const char *rv,
			      const char *node, const char *node_uid);

/*
 * The kubelet's wait before its next renewal, in ms: a quarter of
 * `duration` seconds (HEARTBEAT_LEASE_SECONDS when 0), up to 4% more
 * (wait.Jitter). *rng is the jitter's xorshift state (never 0).
 */
long heartbeat_renew_ms(int duration, uint64_t *rng);

/*
 * The node's conditions as the kubelet posts them, as a strategic merge
 * patch of its status (conditions merge by type): not_ready NULL, Ready=True
 * KubeletReady "kubelet is posting ready status" (setters.go:494); else
 * Ready=False KubeletNotReady with that message. With pressures, also
 * MemoryPressure, DiskPressure and PIDPressure False in the kubelet's words
 * (setters.go:608-609, :732-733, :670-671): what kube-controller-manager
 * set to Unknown with Ready. Times are `now` (Unix seconds). Caller decrefs.
 */
json_t *heartbeat_status_patch(const char *not_ready, bool pressures, long long now);

#endif
