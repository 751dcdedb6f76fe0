#!/usr/bin/env bash
# GPU health faults through the cluster's `gpushare controller` (docs/guide/faults.md),
# on lab-node-1 (2 x T4, config shared: time-slicing, 4 replicas, 8 devices):
#   1. `gpushare fault gpu lab-node-1 0=xid:79`: allocatable drops by exactly
#      one (the device plugin keeps one device per GPU in its health map),
#      capacity stays 8, a Warning Event GPUUnhealthy names the replica;
#   2. an Xid the plugin skips (1=xid:13): nothing changes;
#   3. `gpushare fault clear`: still 7, the running plugin never recovers;
#   4. `gpushare fault restart-plugin`: back to 8, the record removed;
#   5. a malformed value: a FailedGPUHealth Event, the node keeps 8/8.
. "$TOP/tests/e2e/lib.sh"

cd "$TOP" || fail "no repository root"
run "$GPUSHARE" lab --timeout 90
expect_rc 0 "gpushare lab (sets up the lab nodes)"

state=${GS_CLUSTER_DIR:-$TOP/.cluster}
# shellcheck disable=SC1091
. "$state/env"
port=${GS_CONTROLLER_PORT:?the cluster runs no controller (env has no GS_CONTROLLER_PORT)}
restore() {
	k annotate node lab-node-1 gpushare.io/gpu-health- >/dev/null 2>&1
	"$GPUSHARE" fault restart-plugin lab-node-1 >/dev/null 2>&1
}
trap 'status_=$?; restore; (exit "$status_"); _e2e_cleanup' EXIT
wait_for 30 "controller /readyz" gs_http_ready "http://127.0.0.1:$port/readyz"

res() { jp node lab-node-1 "{.status.$1.nvidia\.com/gpu}"; }
both() { echo "$(res capacity)/$(res allocatable)"; }
is() { test "$(both)" = "$1"; }
# The controller's plans so far (/metrics): a change it has planned is one past the count before it.
plans() { curl -sS "http://127.0.0.1:$port/metrics" | awk '$1 == "gpushare_reconciles_total" { print $2 }'; }
planned_since() { [ "$(plans)" -gt "$1" ]; }
event() {
	k get events -n default --field-selector "involvedObject.name=lab-node-1,reason=$1,type=Warning" \
		-o json | jq -e --arg w "$2" '[.items[] | select(.message | contains($w))] | length > 0' >/dev/null
}

# A plugin that starts afresh: nothing remembered from an earlier run.
run "$GPUSHARE" fault clear lab-node-1
expect_rc 0 "fault clear"
run "$GPUSHARE" fault restart-plugin lab-node-1
expect_rc 0 "fault restart-plugin"
wait_for 10 "lab-node-1 at 8/8" is 8/8

# --- 1. Xid 79 on GPU 0: one replica ----------------------------------------
run "$GPUSHARE" fault gpu lab-node-1 0=xid:79 --dry-run
expect_rc 0 "fault gpu --dry-run"
expect_has "$out" '"gpushare.io/gpu-health": "0=xid:79"' "the dry run's patch"
expect_eq "$(jp node lab-node-1 '{.metadata.annotations.gpushare\.io/gpu-health}')" "" "--dry-run wrote nothing"
run "$GPUSHARE" fault gpu lab-node-1 0=xid:79
expect_rc 0 "fault gpu 0=xid:79"
wait_for 10 "lab-node-1 allocatable 7 of 8" is 8/7
unhealthy=$(jp node lab-node-1 '{.metadata.annotations.gpushare\.io/unhealthy-devices}')
expect_eq "$(printf '%s' "$unhealthy" | jq -r '.devices["nvidia.com/gpu"] | length')" 1 "one device marked"
wait_for 10 "a GPUUnhealthy Event" event GPUUnhealthy "'nvidia.com/gpu' device marked unhealthy: "

# --- 2. a skipped Xid --------------------------------------------------------
p0=$(plans)
run "$GPUSHARE" fault gpu lab-node-1 1=xid:13
expect_rc 0 "fault gpu 1=xid:13"
wait_for 10 "the controller plans lab-node-1 again" planned_since "$p0"
expect_eq "$(both)" 8/7 "Xid 13 changes nothing"

# --- 3. cleared: no recovery while the plugin runs -----------------------------
p0=$(plans)
run "$GPUSHARE" fault clear lab-node-1
expect_rc 0 "fault clear"
wait_for 10 "the controller plans lab-node-1 again" planned_since "$p0"
expect_eq "$(both)" 8/7 "the running plugin never marks a device healthy again"

# --- 4. restarted: back --------------------------------------------------------
run "$GPUSHARE" fault restart-plugin lab-node-1
expect_rc 0 "fault restart-plugin"
wait_for 10 "lab-node-1 back to 8/8" is 8/8
expect_eq "$(jp node lab-node-1 '{.metadata.annotations.gpushare\.io/unhealthy-devices}')" "" "the record is removed"

# --- 5. malformed: Event, last good state kept ----------------------------------
k annotate node lab-node-1 --overwrite gpushare.io/gpu-health=0=xid: >/dev/null || fail "annotate"
wait_for 10 "a FailedGPUHealth Event" event FailedGPUHealth "character 7"
expect_eq "$(both)" 8/8 "a malformed declaration keeps the last good state"
echo "note: gpu faults: Xid 79 took 1 of 8 replicas, restart-plugin brought it back"
