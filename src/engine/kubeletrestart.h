#ifndef GS_KUBELETRESTART_H
#define GS_KUBELETRESTART_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "engine/heartbeat.h"

/*
 * A kubelet restart or a node reboot, played as kubelet v1.37.2 and NVIDIA's
 * device plugin go through one (docs/guide/faults.md "Kubelet restart and
 * node reboot"), from the declaration on the node
 * gpushare.io/kubelet-restart = "<restart|reboot>@<RFC 3339>[,<seconds>]":
 * the kubelet started again at that instant, and the device plugin
 * registers again `seconds` later. In between (the window):
 *
 *  - the device manager has read its checkpoint: every resource the plugin
 *    had registered is known with no healthy device, so the node reads
 *    capacity 0 and allocatable 0 (pkg/kubelet/cm/devicemanager/manager.go
 *    readCheckpoint :561-566, GetCapacity :477-490; after
 *    endpointStopGracePeriod the resource is dropped, :493-511, and
 *    nodestatus/setters.go:274-284 keeps writing its capacity 0);
 *  - the node reports Ready=False, KubeletNotReady (the kubelet's own words
 *    before its first runtime check, runtime.go:127), and its Lease is held
 *    and renewed as the kubelet holds it (holder the node's name, 40 s,
 *    renewed every 10 s: kubelet.go:1155-1166);
 *  - the kubelet admits every pod again and the device manager fails those
 *    asking for a registered resource (kubelet_pod_verdict);
 *  - afterwards the plugin, restarted on kubelet.sock's re-creation,
 *    registers its devices healthy (plugin_started_at).
 *
 * Pure: the node in, what to write out; `now` says where the window is.
 */

#define KUBELET_RESTART_SECONDS 10 /* default window of a restart */
#define KUBELET_REBOOT_SECONDS 60  /* default window of a reboot */
#define KUBELET_MAX_SECONDS 86400
/* endpointStopGracePeriod (pkg/kubelet/cm/devicemanager/types.go:125). */
#define KUBELET_STOP_GRACE_SECONDS 300
/* The kubelet's NodeLeaseDurationSeconds default and its renew interval (engine/heartbeat.h). */
#define KUBELET_LEASE_SECONDS HEARTBEAT_LEASE_SECONDS
#define KUBELET_LEASE_RENEW_SECONDS (HEARTBEAT_LEASE_SECONDS / HEARTBEAT_RENEW_FRACTION)
/* runtime.go:127: what a kubelet that just started reports as not ready. */
#define KUBELET_NOT_READY_MESSAGE "container runtime status check may not have completed yet"

enum kubelet_kind { KUBELET_RESTART, KUBELET_REBOOT };

struct kubelet_fault {
	enum kubelet_kind kind;
	long long at; /* Unix seconds: the kubelet started again */
	int seconds;  /* until the device plugin registers again */
};

/*
 * Parse a declaration strictly: "restart@2026-12-03T10:00:00Z" or
 * "reboot@2026-12-03T10:00:00Z,90" (seconds 0-86400; the default 10 for a
 * restart, 60 for a reboot). On error *bad_col is the 1-based character
 * where it goes wrong and err says what was expected there.
 */
int kubelet_fault_parse(const char *value, struct kubelet_fault *out, size_t *bad_col,
			struct gs_error *err) GS_WUR;
/* The declaration's canonical text (malloc'd); seconds always written. */
char *kubelet_fault_format(const struct kubelet_fault *f);
const char *kubelet_kind_name(enum kubelet_kind k);

enum kubelet_phase {
	KUBELET_STEADY,	    /* nothing to play */
	KUBELET_WINDOW,	    /* the kubelet runs, the device plugin has not registered */
	KUBELET_RECOVERING, /* the window is over but the node still shows it */
};

struct kubelet_plan {
	enum kubelet_phase phase;
	bool declared; /* a readable declaration */
	struct kubelet_fault fault;
	long long until; /* at + seconds */
	/* In the window past endpointStopGracePeriod: the resources dropped. */
	bool capacity_removed;
	/* A strategic merge patch of the node's status (its Ready condition); NULL = none. */
	json_t *status_patch;
	/* A merge patch of the node's Lease in kube-node-lease; NULL = none. */
	json_t *lease_patch;
	/* The device plugin started at this Unix second (after a window); 0 = not known. */
	long long plugin_started_at;
	/* Plan the node again at this Unix second; 0 = no need. */
	long long replan_at;
	/* One line: what the kubelet does now and where upstream does it; NULL = steady. */
	char *why;
	struct gs_warnings notes; /* an unreadable declaration, ignored */
};

/*
 * Where the node's kubelet is at Unix second `now` (0 = the clock). Reads
 * the declaration and the node's Ready condition (status.conditions): a
 * node still showing the window's Ready=False after it is over (or its
 * declaration removed) is recovering. Never fails; bad declarations are
 * notes. Release with kubelet_plan_release.
 */
void kubelet_plan_node(const json_t *node, long long now, struct kubelet_plan *out);
void kubelet_plan_release(struct kubelet_plan *p);

/*
 * What the kubelet's admission does with `pod` (a Pod; reduced is enough:
 * spec.containers and initContainers with name, resources, restartPolicy;
 * status.phase) on `node` while `k` is in its window at `now`:
 * 1 with *reason and *message (malloc'd) when it fails the pod, 0 when the
 * device manager has nothing against it (the usual admission decides, or a
 * re-admitted pod keeps what it holds).
 *
 * `readmit`: the pod was admitted before the kubelet started (every pod
 * not finished is admitted again at start: kubelet.go:2919-2924; finished
 * ones are not, the fix of kubernetes#117955). After a restart a container
 * still running keeps its devices (manager.go:632-635); a plain init
 * container has exited, so a pod whose init container asked for devices
 * fails (kubernetes#124345, #138446). After a reboot nothing runs: every
 * pod asking for devices fails (kubernetes#125579; a bare pod stays Failed).
 * `held`: {resource: count} of devices pods on the node hold (the
 * checkpoint's allocatedDevices); NULL = none.
 */
int kubelet_pod_verdict(const struct kubelet_plan *k, const json_t *node, const json_t *pod,
			bool readmit, const json_t *held, long long now, char **reason,
			char **message);

#endif
