#!/usr/bin/env bash
# gpushare explain against the real scheduler and apiserver: a scheduled pod,
# a pending one with the scheduler's own words, nvidia.com/gpu asked of a
# MIG-only node, and a quota prediction that matches the real refusal.
. "$TOP/tests/e2e/lib.sh"

ns=$(e2e_name explain)
qns=$(e2e_name explain-quota)
gpu=$(e2e_name gpu)
mig=$(e2e_name mig)
e2e_node "$gpu" nvidia.com/gpu=2
e2e_node "$mig" nvidia.com/mig-1g.10gb=7 -l nvidia.com/mig.strategy=mixed
e2e_namespace "$ns"
e2e_namespace "$qns"

# condition MESSAGE of a pod's PodScheduled condition
cond() { jp pod "$1" "$ns" '{.status.conditions[?(@.type=="PodScheduled")].message}'; }
has_cond() { [ -n "$(cond "$1")" ]; }

# 1. Scheduled: where and why.
e2e_pod "$ns" placed nvidia.com/gpu=1 -s e2e.gpushare/node="$gpu" | run k create -f -
expect_rc 0 "create placed"
gs_wait_pod_scheduled "$ns" placed 60 || fail "placed not scheduled"
run "$GPUSHARE" explain pod "$ns/placed"
expect_rc 0 "explain a scheduled pod"
expect_has "$out" "pod $ns/placed: scheduled on $gpu" "where it landed"
expect_has "$out" "node $gpu: fits (the pod is bound here)" "its node fits"
expect_has "$out" "nvidia.com/gpu: requested 1, allocatable 2, used by bound pods 0, free 2" "its node's numbers"
expect_has "$out" "scheduler: PodScheduled=True" "condition"

# 2. Pending for want of GPUs: one GPU is left on the node, the pod asks for 2.
e2e_pod "$ns" hungry nvidia.com/gpu=2 -s e2e.gpushare/node="$gpu" | run k create -f -
expect_rc 0 "create hungry"
wait_for 60 "hungry gets a PodScheduled condition" has_cond hungry
before=$(cond hungry)
run "$GPUSHARE" explain pod "$ns/hungry"
after=$(cond hungry)
expect_rc 1 "explain a pending pod"
expect_has "$before" "Insufficient nvidia.com/gpu" "the scheduler says Insufficient"
expect_has "$out" "node $gpu: does not fit" "its node"
expect_has "$out" "nvidia.com/gpu: requested 2, allocatable 2, used by bound pods 1, free 1 (insufficient)" "the numbers"
# The condition may be rewritten between two reads when nodes come and go.
case $out in
*"scheduler: PodScheduled=False Unschedulable: $before"* | *"scheduler: PodScheduled=False Unschedulable: $after"*) ;;
*) fail "the scheduler's message is not quoted verbatim: '$before'" ;;
esac

# 3. nvidia.com/gpu asked of a node that advertises MIG profiles only.
e2e_pod "$ns" gpu-on-mig nvidia.com/gpu=1 -s e2e.gpushare/node="$mig" | run k create -f -
expect_rc 0 "create gpu-on-mig"
wait_for 60 "gpu-on-mig gets a PodScheduled condition" has_cond gpu-on-mig
run "$GPUSHARE" explain pod "$ns/gpu-on-mig"
expect_rc 1 "explain gpu-on-mig"
expect_has "$out" "node $mig: does not fit" "the MIG node"
expect_has "$out" "hint: this node advertises profiles, not whole GPUs (MIG mixed strategy): nvidia.com/mig-1g.10gb=7" "the MIG hint"
# With DRAExtendedResource (on from 1.36) and a DeviceClass naming
# nvidia.com/gpu, a node that lacks it is DynamicResources' to refuse, and
# explain names the same filter as the scheduler.
sched=$(cond gpu-on-mig)
case $sched in
*"cannot allocate all claims"*)
	expect_has "$out" "  - cannot allocate all claims" "explain names DynamicResources' refusal"
	expect_has "$out" "nvidia.com/gpu: requested 1, allocatable 0: through DeviceClass" "served through DRA"
	;;
*)
	expect_has "$sched" "Insufficient nvidia.com/gpu" "the scheduler agrees"
	expect_has "$out" "  - Insufficient nvidia.com/gpu" "explain names NodeResourcesFit's refusal"
	;;
esac

run "$GPUSHARE" explain pod "$ns/nope"
expect_rc 2 "a pod that does not exist"
expect_has "$err" "pods \"nope\" not found" "the apiserver's message"

# 4. Quota: the prediction is the apiserver's refusal, word for word.
run k -n "$qns" create -f - <<JSON
{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"gpu-quota"},
 "spec":{"hard":{"requests.nvidia.com/gpu":"1"}}}
JSON
expect_rc 0 "create quota"
gs_wait_quota_hard "$qns" gpu-quota requests.nvidia.com/gpu 60 || fail "quota status.hard not set after 60s"
run "$GPUSHARE" explain quota "$qns" --request nvidia.com/gpu=1
expect_rc 0 "the first GPU fits"
expect_has "$out" "requests.nvidia.com/gpu: hard 1, used 0, headroom 1" "headroom"
expect_has "$out" "admits the request" "admitted"
e2e_pod "$qns" first nvidia.com/gpu=1 | run k create -f -
expect_rc 0 "create first"
gs_wait_quota_used "$qns" gpu-quota requests.nvidia.com/gpu 1 30 || fail "status.used not 1"

run "$GPUSHARE" explain quota "$qns" --request nvidia.com/gpu=1 --name second
expect_rc 1 "the second GPU is over"
predicted=$(printf '%s\n' "$out" | sed -n 's/^  refuses the request: //p')
[ -n "$predicted" ] || fail "no prediction"
e2e_pod "$qns" second nvidia.com/gpu=1 | run k create -f -
expect_rc 1 "the apiserver refuses second"
expect_eq "${err#Error from server (Forbidden): error when creating \"STDIN\": }" "$predicted" "prediction == refusal"
