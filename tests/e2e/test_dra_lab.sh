#!/usr/bin/env bash
# `gpushare lab --dra` against the real control plane, judged through
# kubectl: placement read from each claim's status.allocation, the MIG claim
# on a 1g.10gb device of the MIG node and no whole-GPU claim there, the
# device-class quota's refusal of the third claim, the time-sliced shared
# claim, and the files under out/dra/. Run twice: re-running changes nothing.
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
	"Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources failed for ResourceClaim shared-t4: error preparing devices for claim dra-demo/shared-t4:$uid: prepare devices failed: error validating GPU config: unknown GPU sharing strategy: TimeSlicing" \
	"the cluster's event for ts-pod-1"
expect_eq "$(sed -n 2p out/dra/prepare.txt)" \
	"dra-demo/ts-pod-1 Warning FailedPrepareDynamicResources: Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources failed for ResourceClaim shared-t4: error preparing devices for claim dra-demo/shared-t4:$uid: prepare devices failed: error validating GPU config: unknown GPU sharing strategy: TimeSlicing" \
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
echo OK
