#!/usr/bin/env bash
# explain node, live and offline: on the seed's three nodes (k8s/lab-nodes.yaml,
# renamed) and the seed's ConfigMap, after `gpushare sync` wrote their labels
# and resources, the live text is byte for byte the text of their manifests,
# and the resources it names are the ones the apiserver now shows.
. "$TOP/tests/e2e/lib.sh"

ns=$(e2e_name explain-node)
pfx=$(e2e_name lab)
dir=$(mktemp -d)
trap 'status_=$?; rm -rf "$dir"; (exit "$status_"); _e2e_cleanup' EXIT
e2e_namespace "$ns"
sed "s/namespace: gpu-share/namespace: $ns/" "$TOP/k8s/device-plugin-configs.yaml" >"$dir/cm.yaml"
sed "s/lab-node-\([0-9]\)/$pfx-\1/g" "$TOP/k8s/lab-nodes.yaml" >"$dir/nodes.yaml"
for i in 0 1 2; do _e2e_nodes+=("$pfx-$i"); done
run k apply -f "$dir/cm.yaml"
expect_rc 0 "apply the ConfigMap"
run k create -f "$dir/nodes.yaml"
expect_rc 0 "create the nodes"
for i in 0 1 2; do
	run "$GPUSHARE" sync --configmap "$ns/device-plugin-configs" --node "$pfx-$i"
	expect_rc 0 "sync $pfx-$i"
done

for i in 0 1 2; do
	node=$pfx-$i
	run "$GPUSHARE" explain node "$node" -f "$dir/nodes.yaml" -f "$dir/cm.yaml" \
		--configmap "$ns/device-plugin-configs"
	offline=$out offline_rc=$rc
	expect_rc 0 "explain node $node offline"
	run "$GPUSHARE" explain node "$node" --configmap "$ns/device-plugin-configs"
	expect_rc "$offline_rc" "explain node $node live"
	expect_eq "$out" "$offline" "explain node $node: live = offline"
	# Every resource line of the text is what the node now shows.
	seen=0
	while read -r res n; do
		seen=$((seen + 1))
		have=$(k get node "$node" -o json | jq -r --arg r "${res%:}" '.status.allocatable[$r] // "absent"')
		expect_eq "$have" "$n" "$node allocatable ${res%:}"
	done < <(printf '%s\n' "$out" | sed -n '/^resources (capacity = allocatable):/,/^labels/p' | sed -n 's/^  \(nvidia\.com[^ ]*\) \([0-9]*\)$/\1 \2/p')
	[ "$seen" -gt 0 ] || fail "no resource line in the text of $node"
done
expect_has "$out" "MIG layout: nvidia.com/mig.config=all-1g.10gb" "the MIG node's layout"
expect_has "$out" "nvidia.com/mig-1g.10gb: 7" "the MIG node's profile count"
echo "note: explain node: the seed's 3 nodes, live = offline"
