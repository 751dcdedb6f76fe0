#!/usr/bin/env bash
# `gpushare sync --dry-run` writes nothing, wherever --dry-run stands: first,
# right after `--kubeconfig K` (whose value once swallowed it), last, and with
# `--kubeconfig=K`. Judged by every node's resourceVersion, through kubectl.
. "$TOP/tests/e2e/lib.sh"

ns=$(e2e_name dry-run)
e2e_namespace "$ns"
run k -n "$ns" create configmap dp-configs \
	--from-literal=default=$'version: v1\nflags:\n  migStrategy: none\n'
expect_rc 0 "create the ConfigMap"
node=$(e2e_name dry-node)
# gpushare.io/controller=off: the cluster's controller leaves it to sync.
e2e_node "$node" -l nvidia.com/device-plugin.config=default -l gpushare.io/controller=off
run k annotate node "$node" "gpushare.io/gpu-product=Tesla T4" gpushare.io/gpu-count=2
expect_rc 0 "declare the node's GPUs"

versions() { k get nodes -o jsonpath='{range .items[*]}{.metadata.name}={.metadata.resourceVersion} {end}'; }
K=$KUBECONFIG
for args in "--kubeconfig $K --dry-run --configmap $ns/dp-configs" \
	"--dry-run --kubeconfig $K --configmap $ns/dp-configs" \
	"--configmap $ns/dp-configs --kubeconfig $K --dry-run" \
	"--kubeconfig=$K --configmap=$ns/dp-configs --dry-run"; do
	before=$(versions)
	# Other declaring nodes (the lab's) may name configs this ConfigMap lacks: exit 1.
	run "$GPUSHARE" sync $args
	[ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "sync $args: exit $rc"
	expect_has "$out" "$node: updated (dry run)" "sync $args would update the node"
	expect_eq "$(versions)" "$before" "sync $args changed a node"
	expect_eq "$(jp node "$node" '{.status.capacity.nvidia\.com/gpu}')" "" "no GPUs written"
done

# The same command without --dry-run does write: the comparison above can see it.
before=$(jp node "$node" '{.metadata.resourceVersion}')
run "$GPUSHARE" sync --kubeconfig "$K" --configmap "$ns/dp-configs" --node "$node"
expect_rc 0 "sync without --dry-run"
expect_eq "$(jp node "$node" '{.status.capacity.nvidia\.com/gpu}')" 2 "capacity written"
[ "$(jp node "$node" '{.metadata.resourceVersion}')" != "$before" ] || fail "no write seen"
exit 0
