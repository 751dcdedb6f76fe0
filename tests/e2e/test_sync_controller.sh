#!/usr/bin/env bash
# `gpushare sync --interval` as a controller: a ConfigMap edit reaches the
# node's capacity and allocatable without anyone re-running anything, and
# SIGTERM stops it cleanly.
. "$TOP/tests/e2e/lib.sh"

cd "$TOP" || fail "no repository root"
run "$GPUSHARE" lab --timeout 90
expect_rc 0 "gpushare lab (sets up the lab nodes)"

res() { jp node "$1" "{.status.$2.${3//./\\.}}"; }
# The cluster's own controller leaves these nodes to `sync --interval` meanwhile.
lab_nodes=(lab-node-0 lab-node-1 lab-node-2)
k label node "${lab_nodes[@]}" gpushare.io/controller=off --overwrite >/dev/null ||
	fail "hand the lab nodes to sync"
log=$(mktemp)
"$GPUSHARE" sync --interval 1 >"$log" 2>&1 &
pid=$!
restore() {
	kill "$pid" 2>/dev/null
	gs_set_replicas 4
	"$GPUSHARE" sync >/dev/null 2>&1
	k label node "${lab_nodes[@]}" gpushare.io/controller- >/dev/null 2>&1
	rm -f "$log"
}
# Keep the test's own exit status through the cleanup.
trap 'status_=$?; restore; (exit "$status_"); _e2e_cleanup' EXIT

gs_set_replicas 5 || fail "set replicas 5"
node1_capacity_is() { test "$(res lab-node-1 capacity nvidia.com/gpu)" = "$1"; }
wait_for 30 "lab-node-1 capacity 10" node1_capacity_is 10
expect_eq "$(res lab-node-1 allocatable nvidia.com/gpu)" 10 "allocatable follows capacity"
expect_eq "$(res lab-node-0 capacity nvidia.com/gpu)" 2 "the default node is untouched"

kill -TERM "$pid"
wait "$pid"
rc=$?
expect_rc 0 "controller exits cleanly on SIGTERM"
expect_has "$(cat "$log")" "lab-node-1: updated [config shared] nvidia.com/gpu=10" "the controller said what it wrote"
