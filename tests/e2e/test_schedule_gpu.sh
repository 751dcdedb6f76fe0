#!/usr/bin/env bash
# The real scheduler places a pod asking for nvidia.com/gpu on a node that
# advertises it; kwok runs it; deleting it finishes (pod-delete stage).
. "$TOP/tests/e2e/lib.sh"

ns=$(e2e_name sched)
node=$(e2e_name gpu)
e2e_node "$node" nvidia.com/gpu=2
e2e_namespace "$ns"

e2e_pod "$ns" gpu-pod nvidia.com/gpu=1 -s "e2e.gpushare/node=$node" | run k create -f -
expect_rc 0 "create pod"
gs_wait_pod_phase "$ns" gpu-pod Running 60 || fail "pod Running"
expect_eq "$(jp pod gpu-pod "$ns" '{.spec.nodeName}')" "$node" "bound to the GPU node"
expect_eq "$(jp pod gpu-pod "$ns" '{.status.conditions[?(@.type=="Ready")].status}')" "True" "Ready"
# Requests default to limits for extended resources.
expect_eq "$(jp pod gpu-pod "$ns" '{.spec.containers[0].resources.requests.nvidia\.com/gpu}')" "1" "requests defaulted from limits"

# Two GPUs on the node: a second pod fits, a third asking for 1 does not.
e2e_pod "$ns" gpu-pod-2 nvidia.com/gpu=1 -s "e2e.gpushare/node=$node" | run k create -f -
expect_rc 0 "create second pod"
gs_wait_pod_phase "$ns" gpu-pod-2 Running 60 || fail "second pod Running"
e2e_pod "$ns" gpu-pod-3 nvidia.com/gpu=1 -s "e2e.gpushare/node=$node" | run k create -f -
expect_rc 0 "create third pod"
msg() { jp pod gpu-pod-3 "$ns" '{.status.conditions[?(@.type=="PodScheduled")].message}'; }
has_msg() { [ -n "$(msg)" ]; }
wait_for 60 "PodScheduled condition on the third pod" has_msg
expect_has "$(msg)" "Insufficient nvidia.com/gpu" "node full"
expect_eq "$(jp pod gpu-pod-3 "$ns" '{.spec.nodeName}')" "" "third pod not bound"

# Freeing a GPU lets the pending pod in (the scheduler requeues it).
run k -n "$ns" delete pod gpu-pod --wait=false
expect_rc 0 "delete pod"
gs_wait_gone pod gpu-pod "$ns" 60 || fail "deleted pod gone"
gs_wait_pod_phase "$ns" gpu-pod-3 Running 60 || fail "third pod Running after a GPU freed"
expect_eq "$(jp pod gpu-pod-3 "$ns" '{.spec.nodeName}')" "$node" "third pod bound to the GPU node"
