#!/usr/bin/env bash
# `gpushare lab --dra` against the real control plane, judged through
# kubectl: placement read from each claim's status.allocation, the MIG claim
# on a 1g.10gb device of the MIG node and no whole-GPU claim there, the
# device-class quota's refusal of the third claim, the time-sliced shared
# claim, and the files under out/dra/. Run twice: re-running changes nothing.
# Then `gpushare status -o json` and `explain pod` on the lab's claims, judged
# against kubectl's view of them (status.allocation, reservedFor, events).
. "$TOP/tests/e2e/lib.sh"
# The lab's objects go at exit, so later tests see only their own nodes.
_e2e_nodes+=(dra-node-0 dra-node-1 dra-node-2)
_e2e_namespaces+=(dra-demo dra-team-a)

cd "$TOP" || fail "no repository root"
run "$GPUSHARE" lab --dra --timeout 90
expect_rc 0 "gpushare lab --dra"

claim_of() { # NS POD -> the claim the pod uses
	local c
	c=$(jp pod "$2" "$1" '{.spec.resourceClaims[0].resourceClaimName}')
	[ -n "$c" ] || c=$(jp pod "$2" "$1" '{.status.resourceClaimStatuses[0].resourceClaimName}')
	printf '%s' "$c"
}
alloc() { # NS POD -> "node pool/device" from status.allocation
	k -n "$1" get resourceclaim "$(claim_of "$1" "$2")" -o json |
		jq -r '.status.allocation | (.nodeSelector.nodeSelectorTerms[0].matchFields[0].values[0]) + " " +
			([.devices.results[] | .pool + "/" + .device] | join(" "))'
}

# The nodes: one slice each, no nvidia.com resource.
for n in dra-node-0 dra-node-1 dra-node-2; do
	expect_eq "$(k get resourceslices --field-selector "spec.nodeName=$n" -o json | jq '.items | length')" 1 "one slice on $n"
	expect_eq "$(k get node "$n" -o json | jq -c '[.status.allocatable | keys[] | select(startswith("nvidia.com/"))]')" \
		"[]" "$n advertises no nvidia.com resource"
done

# Step 4: the MIG claim on a 1g.10gb device of dra-node-2; the whole GPU elsewhere.
mig=$(alloc dra-demo mig-job)
expect_match "$mig" '^dra-node-2 dra-node-2/gpu-0-mig-1g10gb-19-[0-6]$' "mig-job's allocation"
dev=${mig##*/}
expect_eq "$(k get resourceslices --field-selector spec.nodeName=dra-node-2 -o json |
	jq -r --arg d "$dev" '.items[0].spec.devices[] | select(.name == $d) | .attributes.profile.string')" \
	1g.10gb "the device's profile attribute"
expect_eq "$(jp pod mig-job dra-demo '{.spec.nodeName}')" dra-node-2 "mig-job bound to dra-node-2"
plain=$(alloc dra-demo plain-gpu)
expect_match "$plain" '^dra-node-[01] dra-node-[01]/gpu-[01]$' "plain-gpu's allocation: a whole GPU, never the MIG node"

# Step 5: both pods on the one device of the shared claim.
ts1=$(alloc dra-demo ts-pod-1)
expect_match "$ts1" '^dra-node-1 dra-node-1/gpu-[01]$' "shared-t4 on a T4"
expect_eq "$(claim_of dra-demo ts-pod-2)" shared-t4 "ts-pod-2 names the same claim"
expect_eq "$(jp resourceclaim shared-t4 dra-demo '{.status.reservedFor[*].name}')" "ts-pod-1 ts-pod-2" "reservedFor both pods"
expect_eq "$(jp node dra-node-1 '{.metadata.annotations.gpushare\.io/dra-feature-gates}')" \
	TimeSlicingSettings=true "the driver's gates on dra-node-1"
for p in ts-pod-1 ts-pod-2; do
	expect_eq "$(jp pod "$p" dra-demo '{.status.phase}')" Running "$p runs with TimeSlicingSettings"
done
uid=$(jp resourceclaim shared-t4 dra-demo '{.metadata.uid}')
# gpushare's controller played the kubelet's prepare while the gates were the default.
expect_eq "$(k -n dra-demo get events --field-selector involvedObject.name=ts-pod-1,reason=FailedPrepareDynamicResources -o jsonpath='{.items[0].message}')" \
	"Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources failed for ResourceClaim shared-t4: error preparing devices for claim dra-demo/shared-t4:$uid: prepare devices failed: error validating GPU config: \"TimeSlicing\" is selected as the GPU sharing strategy, but the \"TimeSlicingSettings\" feature gate is not enabled" \
	"the cluster's event for ts-pod-1"
expect_eq "$(sed -n 2p out/dra/prepare.txt)" \
	"dra-demo/ts-pod-1 Warning FailedPrepareDynamicResources: Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources failed for ResourceClaim shared-t4: error preparing devices for claim dra-demo/shared-t4:$uid: prepare devices failed: error validating GPU config: \"TimeSlicing\" is selected as the GPU sharing strategy, but the \"TimeSlicingSettings\" feature gate is not enabled" \
	"the kubelet's event with the driver's default gates"
expect_match "$(sed -n 4p out/dra/prepare.txt)" "^dra-demo/ts-pod-1 prepared: gpu-[01] GPU-[0-9a-f-]+, sharing TimeSlicing, interval Long \(FromClaim config\)$" \
	"prepared with TimeSlicingSettings"

# Step 6: the quota refuses the third claim; no claim object.
expect_eq "$(jp resourcequota gpu-quota dra-team-a '{.status.used.gpu\.nvidia\.com\.deviceclass\.resource\.k8s\.io/devices}')" 2 "quota used"
expect_eq "$(cat out/dra/quota-denied.txt)" \
	'Error from server (Forbidden): error when creating "k8s/dra/team-over.yaml": resourceclaims.resource.k8s.io "team-over" is forbidden: exceeded quota: gpu-quota, requested: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=1, used: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=2, limited: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=2' \
	"out/dra/quota-denied.txt"
run k -n dra-team-a apply -f k8s/dra/team-over.yaml
expect_rc 1 "kubectl apply of the third claim"
expect_eq "$err" "$(cat out/dra/quota-denied.txt)" "kubectl prints what the lab wrote"
run k -n dra-team-a get resourceclaim team-over
expect_rc 1 "no team-over claim"

# Step 7: the placement file is status.allocation, pod by pod.
for p in dra-demo/mig-job dra-demo/plain-gpu dra-demo/ts-pod-1 dra-team-a/team-a-0 dra-team-a/team-a-1; do
	expect_has "$(cat out/dra/placement.txt)" "$p=$(alloc "${p%/*}" "${p#*/}") claim=$(claim_of "${p%/*}" "${p#*/}")" "placement of $p"
done

# Re-running changes nothing it made.
run "$GPUSHARE" lab --dra --timeout 90
expect_rc 0 "second gpushare lab --dra"
expect_eq "$(alloc dra-demo mig-job)" "$mig" "mig-job keeps its device"
expect_has "$out" "node dra-node-2: unchanged" "the slice is not rewritten"

# --- gpushare status and explain understand the claims --------------------
# Judged against kubectl's view: the claims' status.allocation and reservedFor.
lab_nodes='["dra-node-0","dra-node-1","dra-node-2"]'
claims=$(k get resourceclaims -A -o json)
run "$GPUSHARE" status -o json
expect_rc 0 "gpushare status -o json"
st=$out
expect_eq "$(jq -c --argjson n "$lab_nodes" '[.nodes[] | select(.node as $x | $n | index($x)) | .path] | unique' <<<"$st")" \
	'["dra"]' "the lab's nodes are DRA entries"
# Every allocated device: the claim and request the scheduler wrote, nothing more.
want=$(jq -c --argjson n "$lab_nodes" '[.items[] | (.metadata.namespace + "/" + .metadata.name) as $c |
	.status.allocation.devices.results[]? | select(.pool as $p | $n | index($p)) |
	{node: .pool, device, claim: $c, request}] | sort' <<<"$claims")
got=$(jq -c --argjson n "$lab_nodes" '[.nodes[] | select(.node as $x | $n | index($x)) | .node as $node |
	.devices[] | select(.claim) | {node: $node, device: .name, claim, request}] | sort' <<<"$st")
expect_eq "$got" "$want" "status: each device's claim is status.allocation's"
# The pods of each claim are its reservedFor; several means shared.
want=$(jq -c --argjson n "$lab_nodes" '[.items[] | select(.status.allocation.devices.results[0].pool as $p | $n | index($p)) |
	{claim: (.metadata.namespace + "/" + .metadata.name), pods: [.metadata.namespace as $ns | .status.reservedFor[] | $ns + "/" + .name],
	 shared: ((.status.reservedFor | length) > 1)}] | sort_by(.claim)' <<<"$claims")
got=$(jq -c --argjson n "$lab_nodes" '[.nodes[] | select(.node as $x | $n | index($x)) | .claims[] | {claim, pods, shared}] | sort_by(.claim)' <<<"$st")
expect_eq "$got" "$want" "status: each claim's pods are its reservedFor"
expect_eq "$(jq -c '[.nodes[] | .sharing[]? | select(.claim) | {claim, pods, method}]' <<<"$st")" \
	'[{"claim":"dra-demo/shared-t4","pods":["dra-demo/ts-pod-1","dra-demo/ts-pod-2"],"method":"time-slicing"}]' \
	"status: the one shared claim"
# What is free: the slice's devices no claim holds.
for n in dra-node-0 dra-node-1 dra-node-2; do
	want=$(jq -c --arg n "$n" --argjson c "$claims" '[.items[0].spec.devices[].name] -
		[$c.items[] | .status.allocation.devices.results[]? | select(.pool == $n) | .device]' \
		<<<"$(k get resourceslices --field-selector "spec.nodeName=$n" -o json)")
	expect_eq "$(jq -c --arg n "$n" '.nodes[] | select(.node == $n) | .free' <<<"$st")" "$want" "status: free devices of $n"
done
# Prepared everywhere now; shared-t4 after the driver's default gates refused it.
expect_eq "$(jq -c '[.nodes[] | .claims[]? | .prepare] | unique' <<<"$st")" '["prepared"]' "status: every lab claim prepared"
expect_eq "$(jq -r '.nodes[] | .claims[]? | select(.claim == "dra-demo/shared-t4") | .lastRefusal' <<<"$st")" \
	"$(k -n dra-demo get events --field-selector involvedObject.name=ts-pod-1,reason=FailedPrepareDynamicResources -o jsonpath='{.items[0].message}')" \
	"status: shared-t4's refusal with the default gates, the cluster's event text"
run "$GPUSHARE" status
expect_rc 0 "gpushare status (table)"
expect_match "$out" "dra-node-1 +$(jq -r '.items[] | select(.metadata.name == "shared-t4") | .status.allocation.devices.results[0].device' <<<"$claims") +Tesla T4 +- +dra-demo/shared-t4 +gpu +dra-demo/ts-pod-1,dra-demo/ts-pod-2 +prepared" \
	"status table: shared-t4's row"

# explain pod: the MIG claim from its template, on the device status.allocation names.
run "$GPUSHARE" explain pod dra-demo/mig-job
expect_rc 0 "explain pod mig-job"
expect_has "$out" "  mig: ResourceClaim dra-demo/$(claim_of dra-demo mig-job), made from template mig-1g10gb
    request mig: 1 device of class mig.nvidia.com where device.attributes['gpu.nvidia.com'].profile == '1g.10gb'
    allocated on dra-node-2:
      ${dev} (request mig, driver gpu.nvidia.com, pool dra-node-2): NVIDIA A100-SXM4-80GB MIG 1g.10gb, 9728Mi
    reserved for: dra-demo/mig-job
    prepare: prepared on dra-node-2" "explain pod mig-job: claim, request, allocation, prepare"
run "$GPUSHARE" explain pod dra-demo/ts-pod-2
expect_rc 0 "explain pod ts-pod-2"
expect_has "$out" "    reserved for: $(jp resourceclaim shared-t4 dra-demo '{range .status.reservedFor[*]}dra-demo/{.name}, {end}' | sed 's/, $//')
    shared: 2 pods use this claim's device (the driver's TimeSlicing)" "explain pod ts-pod-2: the pods sharing shared-t4"

# The quota refusal, in the apiserver's words, before the claim is created.
run "$GPUSHARE" explain quota dra-team-a --claim k8s/dra/team-over.yaml
expect_rc 1 "explain quota --claim team-over"
expect_has "$out" "  refuses the request: $(sed 's/^Error from server (Forbidden): error when creating "k8s\/dra\/team-over.yaml": //' out/dra/quota-denied.txt)" \
	"explain quota: the apiserver's refusal of team-over"

# A pod naming the refused claim is held back; a template pod's claim is refused by the quota.
run k -n dra-team-a create -f - <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: over-pod}
spec:
  containers: [{name: work, image: registry.k8s.io/pause:3.10, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimName: team-over}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}
---
apiVersion: v1
kind: Pod
metadata: {name: tmpl-pod}
spec:
  containers: [{name: work, image: registry.k8s.io/pause:3.10, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
---
apiVersion: v1
kind: Pod
metadata: {name: dp-pod}
spec:
  nodeSelector: {gpushare.io/path: dra}   # the seed's lab nodes may share this cluster
  containers: [{name: work, image: registry.k8s.io/pause:3.10, resources: {limits: {nvidia.com/gpu: 1}}}]
YAML
expect_rc 0 "create over-pod, tmpl-pod, dp-pod"
creation_refused() { [ -n "$(k -n dra-team-a get events --field-selector involvedObject.name=tmpl-pod,reason=FailedResourceClaimCreation -o jsonpath='{.items[0].message}')" ]; }
wait_for 60 "FailedResourceClaimCreation on tmpl-pod" creation_refused
run "$GPUSHARE" explain pod dra-team-a/tmpl-pod
expect_rc 1 "explain pod tmpl-pod"
expect_has "$out" "resourceclaim-controller could not create it: Warning FailedResourceClaimCreation (" "explain: resourceclaim-controller's event"
expect_match "$out" 'PodResourceClaim gpu: create ResourceClaim : resourceclaims.resource.k8s.io "tmpl-pod-gpu-[a-z0-9]+" is forbidden: exceeded quota: gpu-quota, requested: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=1, used: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=2, limited: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=2$' \
	"explain: the quota's words through the template"
expect_has "$(k -n dra-team-a get events --field-selector involvedObject.name=tmpl-pod,reason=FailedResourceClaimCreation -o json | jq -r '.items[].message')" \
	"$(grep -o 'PodResourceClaim gpu: create ResourceClaim : .*' <<<"$out")" "explain quotes one of the cluster's events"
run "$GPUSHARE" explain pod dra-team-a/over-pod
expect_rc 1 "explain pod over-pod"
expect_has "$out" "    not found: no ResourceClaim team-over in namespace dra-team-a" "explain: the claim the quota refused does not exist"
expect_has "$out" "scheduler: no PodScheduled condition yet" "explain: no condition"
expect_eq "$(jp pod over-pod dra-team-a '{.status.conditions}')" "" "kubectl: over-pod has no condition"
expect_eq "$(k -n dra-team-a get events --field-selector involvedObject.name=over-pod -o name)" "" "kubectl: over-pod has no event"
# nvidia.com/gpu on DRA nodes: they advertise none; their slice devices instead.
run "$GPUSHARE" explain pod dra-team-a/dp-pod
expect_rc 1 "explain pod dp-pod"
# With DRAExtendedResource (on from 1.36) the chart's gpu.nvidia.com class
# serves nvidia.com/gpu there, and explain judges the node's devices instead.
case $out in
*"cannot allocate all claims"*)
	for n in dra-node-0 dra-node-1; do
		expect_has "$out" "node $n: does not fit
  - cannot allocate all claims
  nvidia.com/gpu: requested 1, allocatable 0: through DeviceClass gpu.nvidia.com (DRAExtendedResource), the node's devices do not take it (insufficient)" \
			"explain: $n's devices are all held"
	done
	;;
*)
	for n in dra-node-0 dra-node-1; do
		devs=$(k get resourceslices --field-selector "spec.nodeName=$n" -o json | jq -r '[.items[].spec.devices[].name] | join(", ")')
		expect_has "$out" "  hint: this node is on the DRA path (gpushare.io/path=dra): it advertises no nvidia.com/* resource, so nvidia.com/gpu cannot fit here; its GPUs are the devices of its gpu.nvidia.com ResourceSlice ($devs)" \
			"explain: $n is DRA, its devices"
	done
	;;
esac
k -n dra-team-a delete pod over-pod tmpl-pod dp-pod --wait=false >/dev/null

# gpushare report draws each DRA device with the pods of the claim allocated it.
svg=$(mktemp)
run "$GPUSHARE" report --svg "$svg"
expect_rc 0 "gpushare report --svg"
got=$(python3 - "$svg" <<'PY'
import sys, xml.etree.ElementTree as ET
S = '{http://www.w3.org/2000/svg}'
out = []
for g in ET.parse(sys.argv[1]).getroot().iter(S + 'g'):
    if g.get('class') == 'card' and g.get('data-card', '').startswith('dra-node-'):
        for s in g.iter(S + 'g'):
            if s.get('class') == 'slot' and s.get('data-pod'):
                out.append(g.get('data-card') + ' ' + s.get('data-pod'))
print('\n'.join(sorted(out)))
PY
)
rm -f "$svg"
want=$(jq -r '.items[] | select(.status.allocation) | .metadata.namespace as $ns |
	.status.allocation.devices.results[0] as $r | select($r.pool | startswith("dra-node-")) | .status.reservedFor[] |
	$r.pool + "/" + ($r.device | capture("^gpu-(?<m>[0-9]+)").m) + " " + $ns + "/" + .name' <<<"$claims" | sort)
expect_eq "$got" "$want" "report: each card's slots are the pods of the claims allocated on it"
echo OK
