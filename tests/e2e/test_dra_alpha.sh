#!/usr/bin/env bash
# The dynamic-MIG form of NVIDIA's DRA driver v25.12.0 (driver gate
# DynamicMIG, declared on the node; docs/guide/dra.md "Dynamic MIG"), which needs
# the apiserver's alpha gate DRAPartitionableDevices:
#  - default gates (the CI cluster): the node is refused, with the reason,
#    by `gpushare sync` and by the controller (a Warning Event on the node),
#    and no slice is published;
#  - GS_DRA_ALPHA=1 (make e2e-dra-alpha): the controller publishes one slice
#    per GPU with its counter set, equal to `gpushare advertise --dra
#    --alpha-gates` offline; a 1g.10gb and a 3g.40gb claim on one A100 80GB
#    are allocated abstract devices whose memory slices do not overlap and
#    their pods run; a 7g.80gb claim and a whole-GPU claim on the same GPU
#    stay Pending with the scheduler's words (the counters are used up);
#    one of a two-GPU node's slices deleted by hand is restored and the
#    pool's generation bumped (the resourceslice controller's rules).
. "$TOP/tests/e2e/lib.sh"

cd "$TOP" || fail "no repository root"
# The cluster's controller publishes once its device-plugin ConfigMap exists.
e2e_device_plugin_configmap

ns=$(e2e_name dyn)
one=$(e2e_name dyn1)
two=$(e2e_name dyn2)
e2e_namespace "$ns"
declare_a100() { # NODE COUNT: an A100 80GB node whose DRA driver runs DynamicMIG
	k annotate node "$1" gpushare.io/dra-feature-gates=DynamicMIG=true \
		gpushare.io/gpu-product='NVIDIA A100-SXM4-80GB' gpushare.io/gpu-count="$2" \
		gpushare.io/driver-version=570.158.01 >/dev/null || fail "annotate $1"
}
slices_of() { k get resourceslices --field-selector "spec.nodeName=$1" -o json; }
n_slices() { slices_of "$1" | jq '.items | length'; }

e2e_node "$one" -l gpushare.io/path=dra

# --- default gates: refused, and why ---------------------------------------
if [ "${GS_DRA_GATES:-0}" != 1 ]; then
	declare_a100 "$one" 1
	run "$GPUSHARE" sync --node "$one"
	expect_rc 1 "sync refuses the DynamicMIG node"
	expect_has "$err" "gpushare sync: node $one: node '$one': the DRA driver's DynamicMIG gate needs the apiserver's DRAPartitionableDevices feature gate: without it the apiserver drops sharedCounters and consumesCounters silently" \
		"sync says why"
	node_event() { k get events -A --field-selector "involvedObject.name=$one,type=Warning" -o jsonpath='{.items[*].message}'; }
	has_event() { case $(node_event) in *DRAPartitionableDevices*) return 0 ;; esac; return 1; }
	wait_for 60 "the controller's Warning Event on $one" has_event
	expect_has "$(node_event)" "the scheduler would allocate overlapping MIG devices of one GPU" "the event says what would go wrong"
	expect_eq "$(n_slices "$one")" 0 "no slice published"
	echo "note: default gates: DynamicMIG refused; make e2e-dra-alpha runs the dynamic-MIG form"
	echo OK
	exit 0
fi

# --- alpha gates: the slices ------------------------------------------------
# From 1.35 the apiserver keeps counter sets and devices in separate slices
# ("only one of `sharedCounters` or `devices` is allowed"): the driver then
# writes one slice of counter sets more (driver.go generateSplitResourceSlices).
minor=${K8S_VERSION#v1.}
minor=${minor%%.*}
apart=0
[ "$minor" -ge 35 ] && apart=1
declare_a100 "$one" 1
has_slices() { [ "$(n_slices "$1")" = "$2" ]; }
wait_for 60 "the controller publishes $one's slices" has_slices "$one" $((1 + apart))
s=$(slices_of "$one")
expect_eq "$(jq -c '[.items[].spec.pool] | unique | .[]' <<<"$s")" "{\"generation\":1,\"name\":\"$one\",\"resourceSliceCount\":$((1 + apart))}" "pool"
expect_eq "$(jq -c '[.items[] | select(.spec.sharedCounters and .spec.devices)] | length' <<<"$s")" \
	"$((1 - apart))" "counters and devices in one slice only before 1.35"
expect_eq "$(jq -r '[.items[].spec.sharedCounters // [] | .[].name] | join(",")' <<<"$s")" gpu-0-counter-set "the counter set kept (DRAPartitionableDevices on)"
expect_eq "$(jq '[.items[].spec.devices // [] | .[] | select(.consumesCounters)] | length' <<<"$s")" 26 "every device consumes counters"
expect_eq "$(jq -c '[.items[].spec.devices // [] | .[].name | select(test("mig")) | capture("-mig-(?<p>.*)-[0-9]+-[0-9]+$").p] | group_by(.) | map({(.[0]): length}) | add' <<<"$s")" \
	'{"1g10gb":7,"1g10gb-me":7,"1g20gb":4,"2g20gb":3,"3g40gb":2,"4g40gb":1,"7g80gb":1}' "one device per placement of every C==G profile"
# Live = offline: what advertise --dra --alpha-gates prints for the node as the apiserver has it.
tmp=$(mktemp -d)
k get node "$one" -o yaml >"$tmp/one.yaml" || fail "get node $one"
run "$GPUSHARE" advertise --dra --alpha-gates --kubernetes-version "$K8S_VERSION" "$tmp/one.yaml"
rm -rf "$tmp"
expect_rc 0 "advertise --dra --alpha-gates"
both='{devices: [.items[].spec.devices // [] | .[]] | sort_by(.name), sharedCounters: [.items[].spec.sharedCounters // [] | .[]]}'
expect_eq "$(jq -cS "$both" <<<"$out")" "$(jq -cS "$both" <<<"$s")" "the live slices are what advertise prints offline"

# --- two claims share the GPU through its counters ---------------------------
claim() { # NAME CLASS [PROFILE]
	local sel=''
	[ -n "${3:-}" ] && sel="selectors: [{cel: {expression: \"device.attributes['gpu.nvidia.com'].profile == '$3'\"}}]"
	cat <<-YAML
		apiVersion: resource.k8s.io/v1
		kind: ResourceClaim
		metadata: {name: $1}
		spec:
		  devices:
		    requests:
		    - name: r
		      exactly:
		        deviceClassName: $2
		        $sel
		---
		apiVersion: v1
		kind: Pod
		metadata: {name: $1}
		spec:
		  nodeSelector: {e2e.gpushare/node: $one}
		  containers: [{name: ctr, image: registry.invalid/e2e:1, resources: {claims: [{name: c}]}}]
		  resourceClaims: [{name: c, resourceClaimName: $1}]
	YAML
}
for c in "mig-1g mig.nvidia.com 1g.10gb" "mig-3g mig.nvidia.com 3g.40gb"; do
	# shellcheck disable=SC2086
	claim $c | run k -n "$ns" create -f -
	expect_rc 0 "create claim and pod ${c%% *}"
done
device_of() { jp resourceclaim "$1" "$ns" '{.status.allocation.devices.results[0].device}'; }
for c in mig-1g mig-3g; do
	gs_wait_pod_phase "$ns" "$c" Running 60 || fail "$c not Running"
done
d1=$(device_of mig-1g) d3=$(device_of mig-3g)
expect_match "$d1" '^gpu-0-mig-1g10gb-19-[0-6]$' "a 1g.10gb abstract device"
expect_match "$d3" '^gpu-0-mig-3g40gb-9-[04]$' "a 3g.40gb abstract device"
expect_eq "$(jp resourceclaim mig-1g "$ns" '{.status.allocation.devices.results[0].pool}')" "$one" "from $one's pool"
# The memory slices each consumes: disjoint.
slices_used() { jq -c --arg d "$1" '[.items[].spec.devices // [] | .[] | select(.name == $d) | .consumesCounters[0].counters | keys[] | select(startswith("memory-slice-"))]' <<<"$s"; }
overlap=$(jq -n --argjson a "$(slices_used "$d1")" --argjson b "$(slices_used "$d3")" '[$a[] | select(. as $x | $b | index($x))] | length')
expect_eq "$overlap" 0 "$d1 and $d3 use different memory slices"

# --- beyond the counters: Pending, the scheduler's words --------------------
claim mig-7g mig.nvidia.com 7g.80gb | run k -n "$ns" create -f -
expect_rc 0 "create the 7g.80gb claim"
claim whole gpu.nvidia.com | run k -n "$ns" create -f -
expect_rc 0 "create the whole-GPU claim"
unschedulable() { [ "$(jp pod "$1" "$ns" '{.status.conditions[?(@.type=="PodScheduled")].reason}')" = Unschedulable ]; }
for p in mig-7g whole; do
	wait_for 60 "$p Unschedulable" unschedulable "$p"
	msg=$(jp pod "$p" "$ns" '{.status.conditions[?(@.type=="PodScheduled")].message}')
	expect_match "$msg" '^0/[0-9]+ nodes are available: (.*, )?1 cannot allocate all claims[,.] ' "$p: the scheduler's words"
	expect_has "$msg" "preemption: 0/" "$p: preemption part"
	expect_eq "$(jp resourceclaim "$p" "$ns" '{.status.allocation}')" "" "$p not allocated"
done
# Once the 3g.40gb pod and claim are gone the counters allow the 7g? No: the 1g still holds one slice.
k -n "$ns" delete pod mig-3g --wait=true --timeout=60s >/dev/null || fail "delete mig-3g"
k -n "$ns" delete resourceclaim mig-3g --wait=true --timeout=60s >/dev/null || fail "delete claim mig-3g"
sleep 2
expect_eq "$(jp resourceclaim mig-7g "$ns" '{.status.allocation}')" "" "7g.80gb still not allocated: the 1g.10gb holds a memory slice"

# --- a pool of two slices: one deleted by hand is restored, generation bumped --
e2e_node "$two" -l gpushare.io/path=dra
declare_a100 "$two" 2
n2=$((2 + apart))
wait_for 60 "the controller publishes $two's $n2 slices" has_slices "$two" $n2
s=$(slices_of "$two")
expect_eq "$(jq -c '[.items[].spec.pool.generation] | unique' <<<"$s")" "[1]" "generation 1"
expect_eq "$(jq -c '[.items[].spec.pool.resourceSliceCount] | unique' <<<"$s")" "[$n2]" "resourceSliceCount $n2"
expect_eq "$(jq -c '[.items[].spec.sharedCounters // [] | .[].name] | sort' <<<"$s")" '["gpu-0-counter-set","gpu-1-counter-set"]' "one counter set per GPU"
gone=$(jq -r '[.items[] | select(.spec.devices)][0].metadata.name' <<<"$s")
k delete resourceslice "$gone" >/dev/null || fail "delete $gone"
restored() {
	local now
	now=$(slices_of "$two")
	[ "$(jq '.items | length' <<<"$now")" = "$n2" ] &&
		[ "$(jq -c '[.items[].spec.pool.generation] | unique' <<<"$now")" = "[2]" ] &&
		[ "$(jq -r --arg g "$gone" '[.items[].metadata.name | select(. == $g)] | length' <<<"$now")" = 0 ]
}
wait_for 60 "$two's pool restored at generation 2" restored
expect_eq "$(slices_of "$two" | jq '[.items[].spec.devices // [] | length] | add')" 52 "every device back"
echo OK
