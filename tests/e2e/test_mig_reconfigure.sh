#!/usr/bin/env bash
# A change of nvidia.com/mig.config walked by the cluster's `gpushare controller` as
# k8s-mig-manager does (docs/guide/faults.md "MIG reconfiguration"), on a kwok node of
# its own, mig-walk-node (1 x A100 80GB, MIG strategy mixed, first seen at all-disabled):
#   1. label all-1g.10gb: state pending, gpu.deploy.device-plugin paused-for-mig-change,
#      nvidia.com/gpu capacity 1 allocatable 0; then success, the operands back to true,
#      nvidia.com/mig-1g.10gb 7/7;
#   2. an invalid layout (all-1g.5gb, an A100 40GB profile): failed at once, 7/7 kept;
#   3. `gpushare fault mig --config all-3g.40gb --stall`: pending and paused, and still so
#      well past the walk's seconds (mig-parted#485);
#   4. `--no-fault`: the walk completes, nvidia.com/mig-3g.40gb 2/2.
. "$TOP/tests/e2e/lib.sh"

cd "$TOP" || fail "no repository root"
# The device-plugin ConfigMap (the lab's, k8s/device-plugin-configs.yaml) when no
# test made it yet; the controller is the cluster's (scripts/cluster/up.sh).
e2e_device_plugin_configmap
state=${GS_CLUSTER_DIR:-$TOP/.cluster}
# shellcheck disable=SC1091
. "$state/env"
port=${GS_CONTROLLER_PORT:?the cluster runs no controller (env has no GS_CONTROLLER_PORT)}
node=mig-walk-node
restore() { k delete node "$node" --ignore-not-found >/dev/null 2>&1; }
trap 'status_=$?; restore; (exit "$status_"); _e2e_cleanup' EXIT
wait_for 30 "controller /readyz" gs_http_ready "http://127.0.0.1:$port/readyz"

restore
k apply -f - >/dev/null <<YAML || fail "create $node"
apiVersion: v1
kind: Node
metadata:
  name: $node
  labels:
    kubernetes.io/hostname: $node
    type: kwok
    nvidia.com/mig.strategy: mixed
    nvidia.com/mig.config: all-disabled
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
    gpushare.io/gpu-product: NVIDIA A100-SXM4-80GB
    gpushare.io/gpu-count: "1"
    gpushare.io/mig-reconfigure-seconds: "6"
status:
  capacity: {cpu: "8", memory: 64Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 64Gi, pods: "110"}
YAML

# jsonpath needs each dot of a key escaped; callers' backslashes are gone by now.
esc() { local k=${1//\\/}; printf '%s' "${k//./\\.}"; }
lab() { jp node "$node" "{.metadata.labels.nvidia\.com/$(esc "$1")}"; }
res() { jp node "$node" "{.status.$1.nvidia\.com/$(esc "$2")}"; }
both() { echo "$(res capacity "$1")/$(res allocatable "$1")"; }
is() { test "$(both "$1")" = "$2"; }
state_is() { test "$(lab mig\.config\.state)" = "$1"; }
event() {
	k get events -n default --field-selector "involvedObject.name=$node,reason=$1,type=Warning" \
		-o json | jq -e '.items | length > 0' >/dev/null
}

wait_for 20 "$node advertises its whole GPU (1/1)" is gpu 1/1
expect_has "$(jp node "$node" '{.metadata.annotations.gpushare\.io/mig-reconfigure}')" \
	'"applied":"all-disabled"' "first sight recorded"

# --- 1. a new layout: pending, paused, 0 allocatable; then success -----------------
k label node "$node" --overwrite nvidia.com/mig.config=all-1g.10gb >/dev/null || fail "label"
wait_for 10 "state pending" state_is pending
expect_eq "$(lab gpu\.deploy\.device-plugin)" paused-for-mig-change "device plugin paused"
expect_eq "$(lab gpu\.deploy\.gpu-feature-discovery)" paused-for-mig-change "GFD paused"
expect_eq "$(both gpu)" 1/0 "the kubelet keeps capacity, allocatable 0"
wait_for 30 "state success" state_is success
expect_eq "$(lab gpu\.deploy\.device-plugin)" true "device plugin back"
expect_eq "$(both mig-1g\.10gb)" 7/7 "the new layout's resources"

# --- 2. an invalid layout: failed at once, nothing paused --------------------------
k label node "$node" --overwrite nvidia.com/mig.config=all-1g.5gb >/dev/null || fail "label"
wait_for 10 "state failed" state_is failed
expect_eq "$(lab gpu\.deploy\.device-plugin)" true "never paused"
expect_eq "$(both mig-1g\.10gb)" 7/7 "the GPUs keep all-1g.10gb"
wait_for 10 "a FailedMIGReconfigure Event" event FailedMIGReconfigure

# --- 3. stalled: pending forever ----------------------------------------------------
run "$GPUSHARE" fault mig "$node" --config all-3g.40gb --stall --dry-run
expect_rc 0 "fault mig --dry-run"
expect_has "$out" '"gpushare.io/mig-fault": "stall"' "the dry run's patch"
run "$GPUSHARE" fault mig "$node" --config all-3g.40gb --stall
expect_rc 0 "fault mig --stall"
wait_for 10 "state pending" state_is pending
sleep 12 # twice the walk's seconds
expect_eq "$(lab mig\.config\.state)" pending "still pending (mig-parted#485)"
expect_eq "$(lab gpu\.deploy\.device-plugin)" paused-for-mig-change "still paused"
expect_eq "$(res allocatable mig-1g\.10gb)" 0 "allocatable 0 while wedged"

# --- 4. the fault removed: the walk completes ---------------------------------------
run "$GPUSHARE" fault mig "$node" --no-fault
expect_rc 0 "fault mig --no-fault"
wait_for 30 "state success" state_is success
expect_eq "$(both mig-3g\.40gb)" 2/2 "all-3g.40gb applied"
expect_eq "$(lab gpu\.deploy\.device-plugin)" true "device plugin back"
echo "note: mig reconfigure: pending/paused/0 then success; invalid failed at once; stall held, cleared completed"
