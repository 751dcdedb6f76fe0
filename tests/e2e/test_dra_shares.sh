#!/usr/bin/env bash
# Per-GPU sharing with the real scheduler: NVIDIA's DRA driver v0.5.0 with
# ConsumableShares (`--consumable-shares=100`, declared on the node;
# docs/guide/dra.md "Consumable shares") publishes a T4 with
# allowMultipleAllocations and a `shares` capacity of 100, and the scheduler
# (DRAConsumableCapacity, beta and on from 1.36) packs claims on it:
#  - claims of 60 and 30 shares are allocated the same GPU, each a shareID
#    and its consumedCapacity, and their pods run;
#  - a claim of 20 stays Pending with the scheduler's words, and
#    `explain pod` says why (10 of 100 shares left on gpu-0);
#  - `dra allocate` offline, on the slices and claims read back, allocates
#    the same and refuses the same;
#  - `status` shows which claims share the card and what is left.
# Before 1.36 (DRAConsumableCapacity alpha and off) the apiserver drops
# allowMultipleAllocations and the claims' capacity requests: sixty takes
# gpu-0 whole, thirty stays Pending, and offline plan for that release says
# the same (docs/guide/plan.md "DRAConsumableCapacity").
. "$TOP/tests/e2e/lib.sh"

gates=${GS_DRA_GATES:-0}
cd "$TOP" || fail "no repository root"
# The cluster's controller publishes once its device-plugin ConfigMap exists.
e2e_device_plugin_configmap

ns=$(e2e_name shares)
node=$(e2e_name sh)
e2e_namespace "$ns"
e2e_node "$node" -l gpushare.io/path=dra
k annotate node "$node" gpushare.io/gpu-product='Tesla T4' gpushare.io/gpu-count=1 \
	gpushare.io/driver-version=570.158.01 gpushare.io/dra-feature-gates=ConsumableShares=true \
	gpushare.io/dra-consumable-shares=100 >/dev/null || fail "annotate $node"
slices_of() { k get resourceslices --field-selector "spec.nodeName=$node" -o json; }
published() { [ "$(slices_of | jq '[.items[].spec.devices // [] | .[] | select(.name == "gpu-0")] | length')" = 1 ]; }
wait_for 60 "the controller publishes $node's GPU" published
s=$(slices_of)
[ "$gates" = 1 ] || expect_eq "$(jq -c '[.items[].spec.devices[]] | .[0] | {name, allowMultipleAllocations, shares: .capacity.shares}' <<<"$s")" \
	'{"name":"gpu-0","allowMultipleAllocations":null,"shares":{"value":"100"}}' \
	"$K8S_VERSION: the apiserver dropped allowMultipleAllocations and the request policy"
[ "$gates" = 1 ] && expect_eq "$(jq -c '[.items[].spec.devices[]] | .[0] | {name, allowMultipleAllocations, shares: .capacity.shares}' <<<"$s")" \
	'{"name":"gpu-0","allowMultipleAllocations":true,"shares":{"requestPolicy":{"default":"1","validRange":{"max":"100","min":"1","step":"1"}},"value":"100"}}' \
	"gpu-0 published with 100 shares and their policy (the apiserver kept them)"

claim() { # NAME SHARES
	cat <<-YAML
		apiVersion: resource.k8s.io/v1
		kind: ResourceClaim
		metadata: {name: $1}
		spec:
		  devices:
		    requests:
		    - name: gpu
		      exactly:
		        deviceClassName: gpu.nvidia.com
		        capacity: {requests: {shares: "$2"}}
		---
		apiVersion: v1
		kind: Pod
		metadata: {name: $1}
		spec:
		  nodeSelector: {e2e.gpushare/node: $node}
		  containers: [{name: ctr, image: registry.invalid/e2e:1, resources: {claims: [{name: c}]}}]
		  resourceClaims: [{name: c, resourceClaimName: $1}]
	YAML
}
if [ "$gates" != 1 ]; then
	# One claim per card: sixty takes gpu-0 whole, thirty finds it allocated.
	claim sixty 60 | run k -n "$ns" create -f -
	expect_rc 0 "create claim and pod sixty"
	gs_wait_pod_phase "$ns" sixty Running 60 || fail "sixty not Running"
	expect_eq "$(jp resourceclaim sixty "$ns" '{.spec.devices.requests[0].exactly.capacity}')" "" \
		"$K8S_VERSION: the apiserver dropped the claim's capacity request"
	expect_eq "$(jp resourceclaim sixty "$ns" '{.status.allocation.devices.results[0].device}/{.status.allocation.devices.results[0].shareID}')" \
		"gpu-0/" "sixty: gpu-0 whole, no shareID"
	claim thirty 30 | run k -n "$ns" create -f -
	expect_rc 0 "create claim and pod thirty"
	pending() { [ "$(jp pod thirty "$ns" '{.status.conditions[?(@.type=="PodScheduled")].reason}')" = Unschedulable ]; }
	wait_for 60 "thirty Unschedulable" pending
	msg=$(jp pod thirty "$ns" '{.status.conditions[?(@.type=="PodScheduled")].message}')
	expect_match "$msg" '^0/[0-9]+ nodes are available: (.*, )?1 cannot allocate all claims[,.] ' "the scheduler's words"
	# Offline, the manifests as written (capacity requests kept) on the cluster's slices,
	# for the cluster's release: the same verdicts, and the gate named on stderr.
	tmp=$(mktemp -d)
	slices_of >"$tmp/slices.json"
	{ claim sixty 60; echo ---; claim thirty 30; } | sed "s/^metadata: {name: \(.*\)}/metadata: {name: \1, namespace: $ns}/" >"$tmp/pods.yaml"
	k get node "$node" -o yaml >"$tmp/node.yaml"
	k get deviceclass gpu.nvidia.com -o yaml >"$tmp/class.yaml" || fail "DeviceClass gpu.nvidia.com"
	mapfile -t target < <(plan_target)
	run "$GPUSHARE" plan "${target[@]}" -f "$tmp/node.yaml" -f "$tmp/class.yaml" -f "$tmp/slices.json" -f "$tmp/pods.yaml"
	rm -rf "$tmp"
	expect_rc 1 "plan offline for $K8S_VERSION"
	expect_match "$out" "$ns/sixty +bound +$node" "plan: sixty bound"
	expect_match "$out" "$ns/thirty +pending +- +0/1 nodes are available: 1 cannot allocate all claims" "plan: thirty pending"
	expect_has "$err" "DRAConsumableCapacity is off in $K8S_VERSION" "plan names the gate"
	echo OK
	exit 0
fi

for c in sixty:60 thirty:30; do
	claim "${c%%:*}" "${c#*:}" | run k -n "$ns" create -f -
	expect_rc 0 "create claim and pod ${c%%:*}"
	gs_wait_pod_phase "$ns" "${c%%:*}" Running 60 || fail "${c%%:*} not Running"
done
result() { jp resourceclaim "$1" "$ns" "{.status.allocation.devices.results[0].$2}"; }
for c in sixty thirty; do
	expect_eq "$(result "$c" device)" gpu-0 "$c: gpu-0"
	expect_match "$(result "$c" shareID)" '^[0-9a-f-]{36}$' "$c: a shareID"
done
expect_eq "$(result sixty consumedCapacity.shares)" 60 "sixty consumes 60 shares"
expect_eq "$(result thirty consumedCapacity.shares)" 30 "thirty consumes 30 shares"
[ "$(result sixty shareID)" != "$(result thirty shareID)" ] || fail "one shareID for two claims"

claim twenty 20 | run k -n "$ns" create -f -
expect_rc 0 "create claim and pod twenty"
unschedulable() { [ "$(jp pod twenty "$ns" '{.status.conditions[?(@.type=="PodScheduled")].reason}')" = Unschedulable ]; }
wait_for 60 "twenty Unschedulable" unschedulable
msg=$(jp pod twenty "$ns" '{.status.conditions[?(@.type=="PodScheduled")].message}')
expect_match "$msg" '^0/[0-9]+ nodes are available: (.*, )?1 cannot allocate all claims[,.] ' "the scheduler's words"
expect_eq "$(jp resourceclaim twenty "$ns" '{.status.allocation}')" "" "twenty not allocated"

run "$GPUSHARE" explain pod "$ns/twenty"
expect_rc 1 "explain pod twenty"
expect_has "$out" "scheduler: PodScheduled=False Unschedulable: $msg" "explain quotes the scheduler"
expect_has "$out" "$node gpu-0: shares: 10 left of 100 ($ns/sixty 60, $ns/thirty 30), the request consumes 20" \
	"explain: 10 of 100 shares left on gpu-0"

# Offline, on what the cluster holds: the same two on gpu-0, the third refused.
tmp=$(mktemp -d)
slices_of >"$tmp/slices.json"
k -n "$ns" get resourceclaims -o json | jq '.items |= map(del(.status)) | .items |= sort_by(if .metadata.name == "sixty" then 0 elif .metadata.name == "thirty" then 1 else 2 end)' >"$tmp/claims.json"
run "$GPUSHARE" dra allocate --slices "$tmp/slices.json" "$tmp/claims.json"
rm -rf "$tmp"
expect_rc 1 "dra allocate offline"
expect_has "$out" "$ns/sixty: allocated on $node
  gpu: gpu-0, shareID " "offline: sixty on gpu-0"
expect_has "$out" "$ns/thirty: allocated on $node
  gpu: gpu-0, shareID " "offline: thirty on gpu-0"
expect_has "$out" "$ns/twenty: not allocated: 0/1 nodes are available: 1 cannot allocate all claims." "offline: twenty refused"

run "$GPUSHARE" status -o json --node "$node"
expect_rc 0 "status --node $node"
expect_eq "$(jq -c '.nodes[0].devices[] | select(.name == "gpu-0") | {claims: (.claims | sort), left: .left.shares}' <<<"$out")" \
	"{\"claims\":[\"$ns/sixty\",\"$ns/thirty\"],\"left\":\"10\"}" \
	"status: two claims share gpu-0, 10 shares left"
echo OK
