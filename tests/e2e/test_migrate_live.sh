#!/usr/bin/env bash
# `gpushare migrate --to dra --pool` rehearsed on the live cluster for one
# pool: a time-sliced T4 pool moves to the DRA driver while an A100 pool
# keeps the device plugin. migrate judges the workloads as written (the
# user's manifests) on the cluster's own Nodes and ConfigMap; then the move
# is made for real (the pool's node labelled gpushare.io/path=dra, the
# driver's DeviceClasses, the claims and rewritten pods migrate prints) and
# every verdict and quota figure it gave is held against what the apiserver,
# the scheduler and the quota controller do.
. "$TOP/tests/e2e/lib.sh"

cd "$TOP" || fail "no repository root"
k -n gpu-share get configmap device-plugin-configs >/dev/null 2>&1 || fail "no device-plugin ConfigMap"
ns=$(e2e_name mig) t4=$(e2e_name mig-t4) a100=$(e2e_name mig-a100)
dir=$(mktemp -d)
trap 'rm -rf "$dir"; _e2e_cleanup' EXIT

e2e_namespace "$ns"
# The pool label is the node's name: the pools are these two nodes alone.
e2e_node "$t4" -l "gpushare.io/pool=$t4" -l nvidia.com/device-plugin.config=shared
e2e_node "$a100" -l "gpushare.io/pool=$a100"
k annotate node "$t4" gpushare.io/gpu-product='Tesla T4' gpushare.io/gpu-count=2 \
	gpushare.io/driver-version=570.158.01 >/dev/null || fail "annotate $t4"
k annotate node "$a100" gpushare.io/gpu-product='NVIDIA A100-SXM4-80GB' gpushare.io/gpu-count=1 \
	gpushare.io/driver-version=570.158.01 >/dev/null || fail "annotate $a100"
# nb-0 and nb-1 take time-slicing replicas of the T4s; train a whole A100.
{
	cat <<-EOF
		apiVersion: v1
		kind: ResourceQuota
		metadata: {name: gpus, namespace: $ns}
		spec:
		  hard: {requests.nvidia.com/gpu: "3", gpu.nvidia.com.deviceclass.resource.k8s.io/devices: "2"}
	EOF
	for p in nb-0:"$t4" nb-1:"$t4" train:"$a100"; do
		cat <<-EOF
			---
			apiVersion: v1
			kind: Pod
			metadata: {name: ${p%%:*}, namespace: $ns}
			spec:
			  nodeSelector: {gpushare.io/pool: ${p#*:}}
			  containers:
			  - name: main
			    image: registry.k8s.io/pause:3.10
			    resources: {limits: {nvidia.com/gpu: 1}}
		EOF
	done
} >"$dir/work.yaml"

replicas() { jp node "$t4" '{.status.allocatable.nvidia\.com/gpu}'; }
t4_shared() { [ -n "$(replicas)" ] && [ "$(replicas)" -gt 2 ]; }
wait_for 60 "$t4 advertises time-slicing replicas" t4_shared
a100_one() { [ "$(jp node "$a100" '{.status.allocatable.nvidia\.com/gpu}')" = 1 ]; }
wait_for 60 "$a100 advertises one GPU" a100_one
run k apply -f "$dir/work.yaml"
expect_rc 0 "apply the workloads"
running() { [ "$(jp pod "$1" "$ns" '{.status.phase}')" = Running ]; }
for p in nb-0 nb-1 train; do wait_for 60 "$p Running on the device plugin" running "$p"; done
used() { jp resourcequota gpus "$ns" "{.status.used.${1//./\\.}}"; }

# migrate, offline, on the cluster's Nodes and ConfigMap and the manifests.
k get node "$t4" "$a100" -o json >"$dir/nodes.json" || fail "dump the nodes"
k -n gpu-share get configmap device-plugin-configs -o json >"$dir/cm.json" || fail "dump the ConfigMap"
mapfile -t target < <(plan_target)
run "$GPUSHARE" migrate --to dra -f "$dir/nodes.json" -f "$dir/cm.json" -f "$dir/work.yaml" \
	--pool "$t4" "${target[@]}" -o json
expect_rc 0 "migrate --pool $t4"
printf '%s\n' "$out" >"$dir/plan.json"
verdict() { jq -r --arg n "$1" '.workloads[] | select(.name == $n) | .verdict' "$dir/plan.json"; }
expect_eq "$(verdict nb-0) $(verdict nb-1) $(verdict train)" "needs-claim needs-claim unchanged" "the verdicts"
expect_eq "$(jq -r --arg p "$t4" '.pools[] | select(.name == $p) | .stack' "$dir/plan.json")" dra "$t4 moves"
expect_eq "$(jq -r --arg p "$a100" '.pools[] | select(.name == $p) | .stack' "$dir/plan.json")" device-plugin \
	"$a100 stays"
quota() { jq -r --arg r "$1" --arg w "$2" '.quotas[] | select(.resource == $r) | .[$w]' "$dir/plan.json"; }
# Before the move, as the quota controller counts it.
quota_before() { [ "$(used requests.nvidia.com/gpu)" = "$(quota requests.nvidia.com/gpu before)" ]; }
wait_for 30 "requests.nvidia.com/gpu used = migrate's before ($(quota requests.nvidia.com/gpu before))" quota_before
expect_eq "$(used gpu.nvidia.com.deviceclass.resource.k8s.io/devices)" \
	"$(quota gpu.nvidia.com.deviceclass.resource.k8s.io/devices before)" "devices used before"

# The move: the pool's node on the DRA path, the driver's DeviceClasses.
k label node "$t4" gpushare.io/path=dra >/dev/null || fail "put $t4 on the DRA path"
slice() { [ "$(k get resourceslices --field-selector "spec.nodeName=$t4" -o json | jq '.items | length')" = 1 ]; }
wait_for 60 "$t4 publishes its ResourceSlice" slice
no_replicas() { [ -z "$(replicas)" ]; }
wait_for 60 "$t4 advertises no nvidia.com/gpu" no_replicas
jq '{apiVersion: "v1", kind: "List", items: .deviceClasses}' "$dir/plan.json" | run k apply -f -
expect_rc 0 "apply migrate's DeviceClasses"

# Workloads that need claims: their objects, then the rewritten pods.
for p in nb-0 nb-1; do
	k -n "$ns" delete pod "$p" --wait=true --timeout=60s >/dev/null || fail "delete $p"
done
jq '{apiVersion: "v1", kind: "List", items: ([.workloads[].write[]?] | unique)}' "$dir/plan.json" | run k apply -f -
expect_rc 0 "apply the claims migrate writes"
jq '{apiVersion: "v1", kind: "List", items: [.workloads[] | select(.verdict == "needs-claim") | .rewritten]}' \
	"$dir/plan.json" | run k create -f -
expect_rc 0 "create the rewritten pods"
for p in nb-0 nb-1 train; do wait_for 90 "$p Running after the move" running "$p"; done

# needs-claim held: each rewritten pod on the moved pool, its claim allocated
# on that node's devices; unchanged held: train where it was, no claim.
devs=()
for p in nb-0 nb-1; do
	expect_eq "$(jp pod "$p" "$ns" '{.spec.nodeName}')" "$t4" "$p on the moved pool"
	c=$(jp pod "$p" "$ns" '{.status.resourceClaimStatuses[0].resourceClaimName}')
	[ -n "$c" ] || fail "$p has no claim"
	a=$(k -n "$ns" get resourceclaim "$c" -o json | jq -r '.status.allocation.devices.results[0] | .pool + "/" + .device')
	expect_match "$a" "^$t4/gpu-[01]\$" "$p's claim on $t4"
	devs+=("$a")
done
[ "${devs[0]}" != "${devs[1]}" ] || fail "nb-0 and nb-1 share ${devs[0]}: each claim of the template is a whole GPU"
expect_eq "$(jp pod train "$ns" '{.spec.nodeName}')" "$a100" "train stays on $a100"
expect_eq "$(jp pod train "$ns" '{.spec.resourceClaims}')" "" "train has no claim"

# The quotas after the move are migrate's "after", resource by resource.
for r in requests.nvidia.com/gpu gpu.nvidia.com.deviceclass.resource.k8s.io/devices; do
	want=$(quota "$r" after)
	quota_after() { [ "$(used "$r")" = "$want" ]; }
	wait_for 30 "$r used = migrate's after ($want; used $(used "$r"))" quota_after
done
exit 0
