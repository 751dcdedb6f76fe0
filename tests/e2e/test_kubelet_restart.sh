#!/usr/bin/env bash
# A kubelet restart and a node reboot played by the cluster's `gpushare controller` as
# kubelet v1.37.2 and NVIDIA's device plugin go through them (docs/guide/faults.md
# "Kubelet restart and node reboot"), on a kwok node of its own, kubelet-node
# (2 x Tesla T4, the default config: nvidia.com/gpu 2):
#   1. `gpushare fault kubelet --restart --seconds 90`: the node NotReady (KubeletNotReady),
#      its Lease held under the node's name, nvidia.com/gpu 0/0; the running pod keeps its
#      GPU, the running pod whose init container asked for a GPU fails
#      UnexpectedAdmissionError (kubernetes#124345, #138446); a pod bound in the window fails
#      "no healthy devices present"; `explain node` says why the GPUs read 0;
#   2. the plugin registers: Ready again, 2/2, the Lease back with kwok;
#   3. `--reboot --seconds 45`: the running bare pod fails its re-admission and stays Failed
#      after the node is back (kubernetes#125579).
# e2e-timeout: 720
. "$TOP/tests/e2e/lib.sh"

cd "$TOP" || fail "no repository root"
run "$GPUSHARE" lab --timeout 90
expect_rc 0 "gpushare lab (the ConfigMap and the controller)"
state=${GS_CLUSTER_DIR:-$TOP/.cluster}
# shellcheck disable=SC1091
. "$state/env"
port=${GS_CONTROLLER_PORT:?the cluster runs no controller (env has no GS_CONTROLLER_PORT)}
node=kubelet-node
ns=e2e-kubelet
restore() {
	k delete namespace "$ns" --wait=false --ignore-not-found >/dev/null 2>&1
	k delete node "$node" --ignore-not-found >/dev/null 2>&1
}
trap 'status_=$?; restore; (exit "$status_"); _e2e_cleanup' EXIT
wait_for 30 "controller /readyz" gs_http_ready "http://127.0.0.1:$port/readyz"

restore
k delete namespace "$ns" --wait=true --ignore-not-found >/dev/null 2>&1
e2e_namespace "$ns"
k apply -f - >/dev/null <<YAML || fail "create $node"
apiVersion: v1
kind: Node
metadata:
  name: $node
  labels:
    kubernetes.io/hostname: $node
    type: kwok
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
    gpushare.io/gpu-product: Tesla T4
    gpushare.io/gpu-count: "2"
status:
  capacity: {cpu: "8", memory: 64Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 64Gi, pods: "110"}
YAML

res() { jp node "$node" "{.status.$1.nvidia\.com/gpu}"; }
both() { echo "$(res capacity)/$(res allocatable)"; }
is() { test "$(both)" = "$1"; }
ready() { jp node "$node" '{.status.conditions[?(@.type=="Ready")].status}'; }
ready_is() { test "$(ready)" = "$1"; }
holder() { k -n kube-node-lease get lease "$node" -o 'jsonpath={.spec.holderIdentity}'; }
holder_not() { test "$(holder)" != "$1"; }
phase() { jp pod "$1" "$ns" '{.status.phase}'; }
phase_is() { test "$(phase "$1")" = "$2"; }
# gpu_pod NAME [init]: a bare pod bound to the node by name, one GPU (and an init container
# asking one too).
gpu_pod() {
	local init=''
	[ "${2:-}" = init ] && init='"initContainers":[{"name":"prep","image":"registry.invalid/e2e:1",
		"resources":{"limits":{"nvidia.com/gpu":"1"}}}],'
	k create -f - >/dev/null <<-EOF || fail "create pod $1"
		{"apiVersion":"v1","kind":"Pod","metadata":{"name":"$1","namespace":"$ns"},
		 "spec":{"nodeName":"$node",$init
		  "containers":[{"name":"main","image":"registry.invalid/e2e:1",
		   "resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}
	EOF
}

wait_for 30 "$node Ready" ready_is True
wait_for 30 "$node advertises 2/2" is 2/2
gpu_pod keep
gpu_pod prep init
wait_for 60 "keep Running" phase_is keep Running
wait_for 60 "prep Running" phase_is prep Running

# --- 1. a kubelet restart: NotReady, 0/0, re-admission ----------------------------------
run "$GPUSHARE" fault kubelet "$node" --restart --seconds 90 --dry-run
expect_rc 0 "fault kubelet --dry-run"
expect_has "$out" '"gpushare.io/kubelet-restart": "restart@' "the dry run's patch"
expect_eq "$(jp node "$node" '{.metadata.annotations.gpushare\.io/kubelet-restart}')" "" "--dry-run wrote nothing"
t0=$SECONDS
run "$GPUSHARE" fault kubelet "$node" --restart --seconds 90
expect_rc 0 "fault kubelet --restart"
wait_for 60 "$node NotReady" ready_is False
expect_eq "$(jp node "$node" '{.status.conditions[?(@.type=="Ready")].reason}')" KubeletNotReady "the kubelet's reason"
wait_for 60 "nvidia.com/gpu 0/0" is 0/0
expect_eq "$(holder)" "$node" "the Lease held as the kubelet holds it"
wait_for 60 "prep failed its re-admission" phase_is prep Failed
expect_eq "$(jp pod prep "$ns" '{.status.reason}')" UnexpectedAdmissionError "prep's reason"
expect_has "$(jp pod prep "$ns" '{.status.message}')" \
	"Pod was rejected: Allocate failed due to no healthy devices present; cannot allocate unhealthy devices nvidia.com/gpu, which is unexpected" "prep's message"
gpu_pod late
wait_for 60 "late failed in the window" phase_is late Failed
expect_has "$(jp pod late "$ns" '{.status.message}')" "no healthy devices present" "late's message"
expect_eq "$(phase keep)" Running "the running pod keeps its GPU (the checkpoint)"
run "$GPUSHARE" explain node "$node" -f <(k get node "$node" -o yaml)
expect_rc 0 "explain node"
expect_has "$out" "kubelet: the kubelet restarted" "explain: the window"
expect_has "$out" "why the GPUs read 0" "explain: why 0"
echo "note: kubelet restart: NotReady and 0/0 within $((SECONDS - t0))s of the declaration"

# --- 2. the plugin registers: Ready, 2/2, the Lease back ------------------------------------
wait_for 180 "$node Ready again" ready_is True
wait_for 60 "2/2 again" is 2/2
wait_for 40 "kwok holds the Lease again" holder_not "$node"
expect_eq "$(phase keep)" Running "keep still Running"
echo "note: kubelet restart: back after $((SECONDS - t0))s (window 90s)"

# --- 3. a reboot: the running bare pod fails re-admission and stays Failed ------------------
run "$GPUSHARE" fault kubelet "$node" --reboot --seconds 45 -o json
expect_rc 0 "fault kubelet --reboot"
expect_has "$out" '"after": "reboot@' "json after"
wait_for 40 "keep failed its re-admission" phase_is keep Failed
expect_has "$(jp pod keep "$ns" '{.status.message}')" "no healthy devices present" "keep's message"
wait_for 150 "$node Ready after the reboot" ready_is True
wait_for 60 "2/2 after the reboot" is 2/2
expect_eq "$(phase keep)" Failed "a bare pod never recovers (kubernetes#125579)"
run "$GPUSHARE" fault kubelet "$node" --clear
expect_rc 0 "fault kubelet --clear"
echo "note: node reboot: the bare pod Failed and stayed so; the node back 2/2"
