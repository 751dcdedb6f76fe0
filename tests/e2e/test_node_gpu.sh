#!/usr/bin/env bash
# A fake node gets GPUs in capacity and allocatable through the status
# subresource, and kwok + the node-lifecycle controller make it Ready with
# the not-ready taint removed, keeping the GPU count.
. "$TOP/tests/e2e/lib.sh"

node=$(e2e_name node)
_e2e_nodes+=("$node")
run k create -f - <<JSON
{"apiVersion":"v1","kind":"Node","metadata":{"name":"$node","labels":{"kubernetes.io/hostname":"$node"}}}
JSON
expect_rc 0 "create node"

# A new node carries the not-ready taint (TaintNodesByCondition) until the
# node-lifecycle controller sees it Ready.
run k patch node "$node" --subresource=status --type=merge -p \
	'{"status":{"capacity":{"cpu":"8","memory":"64Gi","pods":"110","nvidia.com/gpu":"2"},"allocatable":{"cpu":"8","memory":"64Gi","pods":"110","nvidia.com/gpu":"2"}}}'
expect_rc 0 "patch status"
expect_eq "$(jp node "$node" '{.status.capacity.nvidia\.com/gpu}')" "2" "capacity right after the patch"
expect_eq "$(jp node "$node" '{.status.allocatable.nvidia\.com/gpu}')" "2" "allocatable right after the patch"

gs_wait_node_ready "$node" 60 || fail "node not Ready without taints after 60s: $(jp node "$node" '{.status.conditions}{.spec.taints}')"
expect_eq "$(jp node "$node" '{.status.phase}')" "Running" "kwok's node-initialize sets the phase"
expect_eq "$(jp node "$node" '{.spec.taints}')" "" "no taint left"
expect_eq "$(jp node "$node" '{.status.capacity.nvidia\.com/gpu}')" "2" "capacity after kwok initialised the node"
expect_eq "$(jp node "$node" '{.status.allocatable.nvidia\.com/gpu}')" "2" "allocatable after kwok initialised the node"

# kwok renews the node's Lease (--node-lease-duration-seconds), which keeps
# the node-lifecycle controller from marking it unreachable.
wait_for 30 "Lease kube-node-lease/$node" k -n kube-node-lease get lease "$node" -o name

# Changing the count later works the same way.
run k patch node "$node" --subresource=status --type=merge -p \
	'{"status":{"capacity":{"nvidia.com/gpu":"8"},"allocatable":{"nvidia.com/gpu":"8"}}}'
expect_rc 0 "re-patch status"
expect_eq "$(jp node "$node" '{.status.allocatable.nvidia\.com/gpu}')" "8" "allocatable after the second patch"
expect_eq "$(jp node "$node" '{.status.allocatable.pods}')" "110" "merge patch keeps the other resources"

# A plain (non-status) update cannot change status.
run k patch node "$node" --type=merge -p '{"status":{"allocatable":{"nvidia.com/gpu":"1"}}}'
expect_eq "$(jp node "$node" '{.status.allocatable.nvidia\.com/gpu}')" "8" "status is ignored on the main resource"
