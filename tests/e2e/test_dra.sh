#!/usr/bin/env bash
# The DRA path against the real apiserver and scheduler (docs/guide/dra.md):
#  1. `gpushare sync` publishes the slices NVIDIA's DRA driver v25.12.0 would,
#     field by field (an A100 80GB in all-1g.10gb, two T4s), and the classes;
#     a second sync writes nothing.
#  2. a template claim for `profile == '1g.10gb'` from mig.nvidia.com is
#     allocated one of the A100's MIG devices and its pod is bound and runs;
#  3. a claim for more GPUs than exist stays Pending with the scheduler's text;
#  4. a quota on gpu.nvidia.com.deviceclass.resource.k8s.io/devices refuses
#     the third claim with the apiserver's text;
#  5. a node switched device plugin -> DRA loses its nvidia.com resources and
#     GFD labels and gains a slice; switched back, the reverse;
#  7. the driver's prepare refusals (dra-driver-nvidia-gpu v25.12.0 api/nvidia.com/resource/v1beta1/) as the kubelet reports them,
#     the pod left bound and ContainerCreating, and run once the gate is on;
#  6. a layout change updates the slice in place (same generation), an
#     obsolete older-generation slice is removed;
#  8. a slice edited, deleted or added by someone else is put back by the
#     controller (docs/guide/dra.md "Slices kept in step").
# gpushare status and explain pod are judged against kubectl's view of the
# claims (allocation, the scheduler's words, the quota's, the kubelet's).
. "$TOP/tests/e2e/lib.sh"

ns=$(e2e_name dra)
qns=$(e2e_name dra-quota)
a100=$(e2e_name a100)
t4=$(e2e_name t4)
sw=$(e2e_name sw)
e2e_namespace "$ns"
e2e_namespace "$qns"

run k -n "$ns" create -f - <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata: {name: device-plugin-configs}
data:
  shared: |-
    version: v1
    sharing:
      timeSlicing:
        resources:
        - name: nvidia.com/gpu
          replicas: 4
YAML
expect_rc 0 "create the device-plugin ConfigMap"

# The prepare texts judged below are driver v25.12.0's (docs/guide/dra.md, "Driver
# releases"); the nodes say so, as a fleet still on that release does.
e2e_node "$a100" -l gpushare.io/path=dra -l nvidia.com/mig.config=all-1g.10gb \
	-l gpushare.io/dra-driver-version=v25.12.0
e2e_node "$t4" -l gpushare.io/path=dra -l gpushare.io/dra-driver-version=v25.12.0
# The controller leaves this one to sync (it reads another ConfigMap).
e2e_node "$sw" -l nvidia.com/device-plugin.config=shared -l gpushare.io/controller=off
# A driver 570.158.01 (CUDA 12.8), as in the golden dra-t4-x8.
k annotate node "$a100" gpushare.io/gpu-product='NVIDIA A100-SXM4-80GB' gpushare.io/gpu-count=1 \
	gpushare.io/driver-version=570.158.01 >/dev/null || fail "annotate $a100"
k annotate node "$t4" gpushare.io/gpu-product='Tesla T4' gpushare.io/gpu-count=2 \
	gpushare.io/driver-version=570.158.01 >/dev/null || fail "annotate $t4"
k annotate node "$sw" gpushare.io/gpu-product='Tesla T4' gpushare.io/gpu-count=2 >/dev/null ||
	fail "annotate $sw"

sync_node() { # NODE: one node's sync, as a person runs it
	run "$GPUSHARE" sync --configmap "$ns/device-plugin-configs" --node "$1"
}
slices_of() { k get resourceslices --field-selector "spec.nodeName=$1" -o json; }

# --- 1. publish ------------------------------------------------------------
# gpushare's controller publishes the same slices when it reconciles these
# nodes; settle NODE runs sync until it finds nothing to change (a slice both
# made at once is settled by the next pass: one is kept).
settle() {
	local i
	for i in 1 2 3 4 5; do
		sync_node "$1"
		# A write that lost a race with the controller (409) is retried.
		[ "$rc" = 0 ] && case $out in *": unchanged "*) return 0 ;; esac
		sleep 0.5
	done
	fail "sync of $1 never settled"
}
for n in "$a100" "$t4"; do
	settle "$n"
	expect_match "$out" "^$n: unchanged \[dra\] gpu.nvidia.com [0-9]+ devices" "sync says what is published"
done

# The classes as the chart renders them; extendedResourceName only with the gate.
for c in gpu mig; do
	expect_eq "$(jp deviceclass "$c.nvidia.com" '{.spec.selectors[*].cel.expression}')" \
		"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == '$c'" \
		"DeviceClass $c.nvidia.com selector"
done
ext=$(jp deviceclass gpu.nvidia.com '{.spec.extendedResourceName}')
if [ "$GS_DRA_GATES" = 1 ]; then
	expect_eq "$ext" "nvidia.com/gpu" "extendedResourceName kept with DRAExtendedResource"
else
	expect_eq "$ext" "" "extendedResourceName dropped by a 1.34 apiserver without the gate"
fi

# One slice per node, driver and pool as the driver's controller writes them.
check_slice_meta() { # NODE DEVICES
	local s uid
	s=$(slices_of "$1")
	uid=$(jp node "$1" '{.metadata.uid}')
	expect_eq "$(jq '.items | length' <<<"$s")" 1 "one slice for $1"
	expect_eq "$(jq -c '.items[0].metadata.ownerReferences' <<<"$s")" \
		"[{\"apiVersion\":\"v1\",\"controller\":true,\"kind\":\"Node\",\"name\":\"$1\",\"uid\":\"$uid\"}]" \
		"ownerReference to the Node"
	expect_eq "$(jq -r '.items[0].metadata.generateName' <<<"$s")" "$1-gpu.nvidia.com-" "generateName"
	expect_eq "$(jq -c '.items[0].spec | {driver, nodeName, pool}' <<<"$s")" \
		"{\"driver\":\"gpu.nvidia.com\",\"nodeName\":\"$1\",\"pool\":{\"generation\":1,\"name\":\"$1\",\"resourceSliceCount\":1}}" \
		"driver, nodeName, pool"
	expect_eq "$(jq -c '[.items[0].spec.devices[].name]' <<<"$s")" "$2" "device names"
	expect_eq "$(jq -c '.items[0].spec | keys' <<<"$s")" '["devices","driver","nodeName","pool"]' \
		"no alpha field (sharedCounters) in the slice"
}
check_slice_meta "$a100" \
	'["gpu-0-mig-1g10gb-19-0","gpu-0-mig-1g10gb-19-1","gpu-0-mig-1g10gb-19-2","gpu-0-mig-1g10gb-19-3","gpu-0-mig-1g10gb-19-4","gpu-0-mig-1g10gb-19-5","gpu-0-mig-1g10gb-19-6"]'
check_slice_meta "$t4" '["gpu-0","gpu-1"]'

# Every attribute and capacity with its type (dra-driver-nvidia-gpu v25.12.0 cmd/gpu-kubelet-plugin/deviceinfo.go), for every device.
s=$(slices_of "$a100")
bad=$(jq -r '.items[0].spec.devices[] | . as $d | ($d.name | capture("-(?<i>[0-6])$").i) as $i |
	select(
		($d.attributes | keys) != ["architecture","brand","cudaComputeCapability","cudaDriverVersion",
			"driverVersion","parentUUID","productName","profile","resource.kubernetes.io/pciBusID","type","uuid"]
		or $d.attributes.type != {string: "mig"}
		or $d.attributes.profile != {string: "1g.10gb"}
		or $d.attributes.productName != {string: "NVIDIA A100-SXM4-80GB"}
		or $d.attributes.brand != {string: "Nvidia"}
		or $d.attributes.architecture != {string: "Ampere"}
		or $d.attributes.cudaComputeCapability != {version: "8.0.0"}
		or $d.attributes.driverVersion != {version: "570.158.1"}
		or $d.attributes.cudaDriverVersion != {version: "12.8.0"}
		or ($d.attributes.uuid.string | test("^MIG-[0-9a-f-]{36}$") | not)
		or ($d.attributes.parentUUID.string | test("^GPU-[0-9a-f-]{36}$") | not)
		or ($d.attributes["resource.kubernetes.io/pciBusID"].string | test("^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]$") | not)
		or $d.capacity != {multiprocessors: {value: "14"}, copyEngines: {value: "1"}, decoders: {value: "0"},
			encoders: {value: "0"}, jpegEngines: {value: "0"}, ofaEngines: {value: "0"},
			memory: {value: "9728Mi"}, ("memorySlice" + $i): {value: "1"}}
	) | .name' <<<"$s")
expect_eq "$bad" "" "A100 MIG devices whose attributes or capacity differ from the driver's (dra-driver-nvidia-gpu v25.12.0 cmd/gpu-kubelet-plugin/deviceinfo.go) or data/gpus.tab"
expect_eq "$(jq '[.items[0].spec.devices[].attributes.uuid.string] | unique | length' <<<"$s")" 7 "seven MIG UUIDs"
expect_eq "$(jq '[.items[0].spec.devices[].attributes.parentUUID.string] | unique | length' <<<"$s")" 1 \
	"one parent, itself not published"

s=$(slices_of "$t4")
bad=$(jq -r '.items[0].spec.devices[] | . as $d | select(
		($d.attributes | keys) != ["architecture","brand","cudaComputeCapability","cudaDriverVersion",
			"driverVersion","productName","resource.kubernetes.io/pciBusID","type","uuid"]
		or $d.attributes.type != {string: "gpu"}
		or $d.attributes.productName != {string: "Tesla T4"}
		or $d.attributes.brand != {string: "Nvidia"}
		or $d.attributes.architecture != {string: "Turing"}
		or $d.attributes.cudaComputeCapability != {version: "7.5.0"}
		or $d.attributes.driverVersion != {version: "570.158.1"}
		or $d.attributes.cudaDriverVersion != {version: "12.8.0"}
		or ($d.attributes.uuid.string | test("^GPU-[0-9a-f-]{36}$") | not)
		or $d.capacity != {memory: {value: "15Gi"}}
	) | .name' <<<"$s")
expect_eq "$bad" "" "T4 devices whose attributes or capacity differ from the driver's (dra-driver-nvidia-gpu v25.12.0 cmd/gpu-kubelet-plugin/deviceinfo.go) or data/gpus.tab"
expect_eq "$(jq '[.items[0].spec.devices[].attributes | .uuid.string, .["resource.kubernetes.io/pciBusID"].string] | unique | length' <<<"$s")" 4 \
	"each T4 its own UUID and bus ID"

# Nothing changes: no write, same resourceVersion.
rv=$(jq -r '.items[0].metadata.resourceVersion' <<<"$s")
sync_node "$t4"
expect_rc 0 "second sync"
expect_eq "$out" "$t4: unchanged [dra] gpu.nvidia.com 2 devices" "second sync writes nothing"
expect_eq "$(slices_of "$t4" | jq -r '.items[0].metadata.resourceVersion')" "$rv" "slice untouched"
for n in "$a100" "$t4"; do
	expect_eq "$(k get node "$n" -o json | jq -c '[.status.capacity, .status.allocatable | keys[] | select(startswith("nvidia.com/"))]')" \
		"[]" "a DRA node advertises no nvidia.com resource"
done

# --- 2. a MIG claim is allocated ------------------------------------------
run k -n "$ns" create -f - <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: mig-1g10gb}
spec:
  spec:
    devices:
      requests:
      - name: mig
        exactly:
          deviceClassName: mig.nvidia.com
          selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}]
---
apiVersion: v1
kind: Pod
metadata: {name: mig-pod}
spec:
  nodeSelector: {e2e.gpushare/node: $a100}
  containers: [{name: ctr, image: registry.invalid/e2e:1, resources: {claims: [{name: mig}]}}]
  resourceClaims: [{name: mig, resourceClaimTemplateName: mig-1g10gb}]
YAML
expect_rc 0 "create the MIG template and pod"
claim_of() { jp pod "$1" "$ns" '{.status.resourceClaimStatuses[0].resourceClaimName}'; }
has_claim() { [ -n "$(claim_of mig-pod)" ]; }
wait_for 60 "resourceclaim-controller made mig-pod's claim" has_claim
claim=$(claim_of mig-pod)
allocated() { [ -n "$(jp resourceclaim "$claim" "$ns" '{.status.allocation.devices.results[0].device}')" ]; }
wait_for 60 "claim $claim allocated" allocated
c=$(k -n "$ns" get resourceclaim "$claim" -o json)
expect_eq "$(jq -r '.metadata.annotations["resource.kubernetes.io/pod-claim-name"]' <<<"$c")" mig "pod-claim-name annotation"
expect_eq "$(jq -c '.status.allocation.devices.results[0] | {driver, pool, request}' <<<"$c")" \
	"{\"driver\":\"gpu.nvidia.com\",\"pool\":\"$a100\",\"request\":\"mig\"}" "allocation result"
expect_match "$(jq -r '.status.allocation.devices.results[0].device' <<<"$c")" '^gpu-0-mig-1g10gb-19-[0-6]$' \
	"a 1g.10gb MIG device"
expect_eq "$(jq -c '.status.allocation.nodeSelector.nodeSelectorTerms[0].matchFields' <<<"$c")" \
	"[{\"key\":\"metadata.name\",\"operator\":\"In\",\"values\":[\"$a100\"]}]" "allocation nodeSelector"
expect_eq "$(jq -r '.status.reservedFor[0].name' <<<"$c")" mig-pod "reservedFor"
expect_eq "$(jp pod mig-pod "$ns" '{.spec.nodeName}')" "$a100" "mig-pod bound to the A100 node"
gs_wait_pod_phase "$ns" mig-pod Running 60 || fail "mig-pod not Running"
# gpushare explain and status read the same allocation.
run "$GPUSHARE" explain pod "$ns/mig-pod"
expect_rc 0 "explain pod mig-pod"
expect_has "$out" "    allocated on $a100:
      $(jq -r '.status.allocation.devices.results[0].device' <<<"$c") (request mig, driver gpu.nvidia.com, pool $a100): NVIDIA A100-SXM4-80GB MIG 1g.10gb, 9728Mi
    reserved for: $ns/mig-pod" "explain: the claim's allocation"
run "$GPUSHARE" status -o json --node "$a100"
expect_rc 0 "status --node $a100"
expect_eq "$(jq -c '.nodes[0] | [.devices[] | select(.claim) | {name, claim, request, pods}]' <<<"$out")" \
	"[{\"name\":\"$(jq -r '.status.allocation.devices.results[0].device' <<<"$c")\",\"claim\":\"$ns/$claim\",\"request\":\"mig\",\"pods\":[\"$ns/mig-pod\"]}]" \
	"status: the MIG device's claim and pod"
expect_eq "$(jq '.nodes[0].free | length' <<<"$out")" 6 "status: six MIG devices free"

# --- 3. more GPUs than exist ----------------------------------------------
run k -n "$ns" create -f - <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: three-t4}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        count: 3
        selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].productName == 'Tesla T4'"}}]
---
apiVersion: v1
kind: Pod
metadata: {name: three-pod}
spec:
  containers: [{name: ctr, image: registry.invalid/e2e:1, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimName: three-t4}]
YAML
expect_rc 0 "create the three-T4 claim and pod"
unschedulable() { [ "$(jp pod three-pod "$ns" '{.status.conditions[?(@.type=="PodScheduled")].reason}')" = Unschedulable ]; }
wait_for 60 "three-pod Unschedulable" unschedulable
msg=$(jp pod three-pod "$ns" '{.status.conditions[?(@.type=="PodScheduled")].message}')
# The DynamicResources PostFilter of 1.34-1.36 answers "still not
# schedulable" and the scheduler adds it to the message; 1.37's does not
# (pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go).
still='still not schedulable, '
minor=${K8S_VERSION#v1.}
[ "${minor%%.*}" -ge 37 ] && still=''
expect_match "$msg" "^0/([0-9]+) nodes are available: \\1 cannot allocate all claims\\. ${still}preemption: 0/\\1 nodes are available: \\1 Preemption is not helpful for scheduling\\.\$" \
	"the scheduler's words"
expect_eq "$(k -n "$ns" get events --field-selector involvedObject.name=three-pod,reason=FailedScheduling -o jsonpath='{.items[0].type}')" \
	Warning "FailedScheduling event"
expect_eq "$(jp resourceclaim three-t4 "$ns" '{.status.allocation}')" "" "claim not allocated"
expect_eq "$(jp pod three-pod "$ns" '{.spec.nodeName}')" "" "pod not bound"
run "$GPUSHARE" explain pod "$ns/three-pod"
expect_rc 1 "explain pod three-pod"
expect_has "$out" "  gpu: ResourceClaim $ns/three-t4
    request gpu: 3 devices of class gpu.nvidia.com where device.attributes['gpu.nvidia.com'].productName == 'Tesla T4'
    not allocated: " "explain: the claim's request, not allocated"
expect_has "$out" "scheduler: PodScheduled=False Unschedulable: $msg" "explain: the scheduler's words"
# Not left pending: with DRAConsumableCapacity on (GS_DRA_ALPHA=1) kube-scheduler
# 1.34.4 panics on this claim once a node holds a third T4 in a second slice
# (part 8's stale slice): allocator_experimental.go:1295 indexes the slice's
# devices by the request's device counter (docs/guide/cluster.md).
k -n "$ns" delete pod three-pod --wait=true --timeout=60s >/dev/null || fail "delete three-pod"
k -n "$ns" delete resourceclaim three-t4 --wait=true --timeout=60s >/dev/null || fail "delete three-t4"

# --- 3b. nvidia.com/gpu served through the DeviceClass ------------------------
# With DRAExtendedResource (beta 1.36, GA 1.37) a pod that asks for
# nvidia.com/gpu runs on a DRA-only node: the scheduler makes it a claim of
# gpu.nvidia.com (extendedResourceName) and allocates one of the node's GPUs.
if [ "$GS_DRA_GATES" = 1 ]; then
	for p in ext-one:1 ext-two:2; do
		e2e_pod "$ns" "${p%%:*}" nvidia.com/gpu="${p#*:}" -s e2e.gpushare/node="$t4" | run k create -f -
		expect_rc 0 "create ${p%%:*}"
		gs_wait_pod_scheduled "$ns" ext-one 60 || fail "ext-one not scheduled"
	done
	expect_eq "$(jp pod ext-one "$ns" '{.spec.nodeName}')" "$t4" "ext-one bound to the DRA-only T4 node"
	ec=$(jp pod ext-one "$ns" '{.status.extendedResourceClaimStatus.resourceClaimName}')
	expect_match "$ec" "^ext-one-extended-resources-" "the scheduler's claim for ext-one"
	dev=$(jp resourceclaim "$ec" "$ns" '{.status.allocation.devices.results[0].device}')
	expect_match "$dev" '^gpu-[01]$' "a whole T4 allocated to it"
	gs_wait_pod_phase "$ns" ext-one Running 60 || fail "ext-one not Running"
	run "$GPUSHARE" status -o json --node "$t4"
	expect_rc 0 "status --node $t4"
	expect_eq "$(jq -c '.nodes[0] | [.devices[] | select(.claim) | {name, claim, pods}]' <<<"$out")" \
		"[{\"name\":\"$dev\",\"claim\":\"$ns/$ec\",\"pods\":[\"$ns/ext-one\"]}]" \
		"status: the GPU ext-one holds through DRA"
	run "$GPUSHARE" explain pod "$ns/ext-one"
	expect_rc 0 "explain pod ext-one"
	expect_has "$out" "node $t4: fits (the pod is bound here)" "explain: ext-one's node fits"
	expect_has "$out" "nvidia.com/gpu: requested 1, allocatable 0: through DeviceClass gpu.nvidia.com (DRAExtendedResource), the node's devices take it" \
		"explain: served through the DeviceClass"
	# Two GPUs where one is left: DynamicResources refuses, and explain says why per device.
	has_ext_cond() { [ -n "$(jp pod ext-two "$ns" '{.status.conditions[?(@.type=="PodScheduled")].message}')" ]; }
	wait_for 60 "ext-two gets a PodScheduled condition" has_ext_cond
	msg=$(jp pod ext-two "$ns" '{.status.conditions[?(@.type=="PodScheduled")].message}')
	expect_has "$msg" "1 cannot allocate all claims" "the scheduler refuses ext-two on the T4 node"
	run "$GPUSHARE" explain pod "$ns/ext-two"
	expect_rc 1 "explain pod ext-two"
	expect_has "$out" "node $t4: does not fit
  - cannot allocate all claims
  nvidia.com/gpu: requested 2, allocatable 0: through DeviceClass gpu.nvidia.com (DRAExtendedResource), the node's devices do not take it (insufficient)" \
		"explain: DynamicResources' refusal on the T4 node"
	expect_has "$out" "    $dev: " "explain: why the held GPU does not take it"
	expect_has "$out" "scheduler: PodScheduled=False Unschedulable: $msg" "explain quotes the scheduler"
	k -n "$ns" delete pod ext-one ext-two --wait=true --timeout=60s >/dev/null || fail "delete ext pods"
	gone() { ! k -n "$ns" get resourceclaim "$ec" >/dev/null 2>&1; }
	wait_for 60 "ext-one's claim deleted with it" gone
fi

# --- 4. quota on devices of a class -----------------------------------------
run k -n "$qns" create -f - <<'YAML'
apiVersion: v1
kind: ResourceQuota
metadata: {name: gpus}
spec:
  hard: {gpu.nvidia.com.deviceclass.resource.k8s.io/devices: "2"}
YAML
expect_rc 0 "create the quota"
gs_wait_quota_hard "$qns" gpus gpu.nvidia.com.deviceclass.resource.k8s.io/devices 60 || fail "quota status.hard"
claim_yaml() {
	printf '%s\n' "apiVersion: resource.k8s.io/v1" "kind: ResourceClaim" "metadata: {name: $1}" \
		"spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}"
}
for c in q-1 q-2; do
	claim_yaml "$c" | run k -n "$qns" create -f -
	expect_rc 0 "claim $c within quota"
done
gs_wait_quota_used "$qns" gpus gpu.nvidia.com.deviceclass.resource.k8s.io/devices 2 30 || fail "status.used not 2"
claim_yaml q-3 | run k -n "$qns" create -f -
expect_rc 1 "third claim refused"
expect_has "$err" 'resourceclaims.resource.k8s.io "q-3" is forbidden: exceeded quota: gpus, requested: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=1, used: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=2, limited: gpu.nvidia.com.deviceclass.resource.k8s.io/devices=2' \
	"the apiserver's quota text"
refusal=${err#*error when creating \"STDIN\": }
q3=$(mktemp)
claim_yaml q-3 >"$q3"
run "$GPUSHARE" explain quota "$qns" --claim "$q3"
rm -f "$q3"
expect_rc 1 "explain quota --claim q-3"
expect_eq "$(grep '^  refuses the request: ' <<<"$out")" "  refuses the request: $refusal" "explain quota: the apiserver's words"

# --- 5. device plugin -> DRA -> device plugin -------------------------------
sync_node "$sw"
expect_rc 0 "sync $sw on the device-plugin path"
expect_eq "$(jp node "$sw" '{.status.capacity.nvidia\.com/gpu}')" 8 "time-sliced capacity"
expect_eq "$(jp node "$sw" '{.metadata.labels.nvidia\.com/gpu\.product}')" Tesla-T4-SHARED "GFD label"
expect_eq "$(slices_of "$sw" | jq '.items | length')" 0 "no slice on the device-plugin path"
k label node "$sw" gpushare.io/path=dra >/dev/null || fail "label $sw dra"
settle "$sw"
node=$(k get node "$sw" -o json)
expect_eq "$(jq -c '[.status.capacity, .status.allocatable | keys[] | select(startswith("nvidia.com/"))]' <<<"$node")" \
	"[]" "no nvidia.com resource in capacity or allocatable"
expect_eq "$(jq -c '[.metadata.labels | keys[] | select(startswith("nvidia.com/"))]' <<<"$node")" \
	'["nvidia.com/device-plugin.config"]' "GFD's labels gone, the person's config label kept"
expect_eq "$(slices_of "$sw" | jq -c '[.items[].spec.devices[].name]')" '["gpu-0","gpu-1"]' "the driver's slice"
k label node "$sw" gpushare.io/path- >/dev/null || fail "unlabel $sw"
settle "$sw"
expect_eq "$(jp node "$sw" '{.status.allocatable.nvidia\.com/gpu}')" 8 "capacity back"
expect_eq "$(jp node "$sw" '{.metadata.labels.nvidia\.com/gpu\.product}')" Tesla-T4-SHARED "GFD label back"
expect_eq "$(slices_of "$sw" | jq '.items | length')" 0 "no slice left"

# --- 7. the driver's prepare refuses, the kubelet's words ------------------
# gpushare's controller plays the kubelet on these nodes (docs/guide/dra.md).
prep_pod() { # NAME NODE CLAIM-YAML-SPEC-CONFIG CLASS REQUEST
	cat <<-YAML
		apiVersion: resource.k8s.io/v1
		kind: ResourceClaim
		metadata: {name: $1}
		spec:
		  devices:
		    requests:
		    - name: $5
		      exactly: {deviceClassName: $4}
		    config:
		    - requests: [$5]
		      opaque:
		        driver: gpu.nvidia.com
		        parameters: $3
		---
		apiVersion: v1
		kind: Pod
		metadata: {name: $1}
		spec:
		  nodeSelector: {e2e.gpushare/node: $2}
		  containers: [{name: ctr, image: registry.invalid/e2e:1, resources: {claims: [{name: c}]}}]
		  resourceClaims: [{name: c, resourceClaimName: $1}]
	YAML
}
prep_pod ts-claim "$t4" '{apiVersion: resource.nvidia.com/v1beta1, kind: GpuConfig, sharing: {strategy: TimeSlicing, timeSlicingConfig: {interval: Long}}}' gpu.nvidia.com gpu |
	run k -n "$ns" create -f -
expect_rc 0 "create the time-sliced claim and pod"
prep_pod replicas-claim "$t4" '{apiVersion: resource.nvidia.com/v1beta1, kind: GpuConfig, sharing: {strategy: TimeSlicing, replicas: 4}}' gpu.nvidia.com gpu |
	run k -n "$ns" create -f -
expect_rc 0 "create the replicas claim and pod"
prep_pod mig-ts-claim "$a100" '{apiVersion: resource.nvidia.com/v1beta1, kind: MigDeviceConfig, sharing: {strategy: TimeSlicing, timeSlicingConfig: {interval: Long}}}' mig.nvidia.com mig |
	run k -n "$ns" create -f -
expect_rc 0 "create the MIG time-slicing claim and pod"
event_of() { k -n "$ns" get events --field-selector "involvedObject.name=$1,reason=FailedPrepareDynamicResources" -o jsonpath='{.items[0].message}'; }
has_event() { [ -n "$(event_of "$1")" ]; }
for p in ts-claim replicas-claim mig-ts-claim; do
	wait_for 60 "FailedPrepareDynamicResources on $p" has_event "$p"
	expect_eq "$(k -n "$ns" get events --field-selector "involvedObject.name=$p,reason=FailedPrepareDynamicResources" -o jsonpath='{.items[0].type}')" \
		Warning "$p: a Warning"
done
wrap() { # CLAIM STEP-ERROR: the kubelet's event text around the driver's error
	printf 'Failed to prepare dynamic resources: prepare dynamic resources: NodePrepareResources failed for ResourceClaim %s: error preparing devices for claim %s/%s:%s: prepare devices failed: %s' \
		"$1" "$ns" "$1" "$(jp resourceclaim "$1" "$ns" '{.metadata.uid}')" "$2"
}
expect_eq "$(event_of ts-claim)" "$(wrap ts-claim 'error validating GPU config: unknown GPU sharing strategy: TimeSlicing')" \
	"TimeSlicing with the driver's default gates"
expect_has "$(event_of replicas-claim)" 'strict decoding error: unknown field "sharing.replicas"' "no replicas in the driver's API"
expect_has "$(event_of mig-ts-claim)" 'strict decoding error: unknown field "sharing.timeSlicingConfig"' "no timeSlicingConfig on a MIG device"
# As a real kubelet leaves the pod: bound, Pending, ContainerCreating.
pod=$(k -n "$ns" get pod ts-claim -o json)
expect_eq "$(jq -r '.spec.nodeName' <<<"$pod")" "$t4" "still bound"
expect_eq "$(jq -r '.status.phase' <<<"$pod")" Pending "phase"
expect_eq "$(jq -r '.status.containerStatuses[0].state.waiting.reason' <<<"$pod")" ContainerCreating "container waiting"
expect_eq "$(jq -r '.status.conditions[] | select(.type == "PodReadyToStartContainers") | .status' <<<"$pod")" False "PodReadyToStartContainers"
expect_eq "$(jq -r '.status.conditions[] | select(.type == "PodScheduled") | .status' <<<"$pod")" True "PodScheduled kept"
expect_eq "$(jq -r '.metadata.annotations["gpushare.io/admitted"] // ""' <<<"$pod")" "" "not admitted"
expect_match "$(jp resourceclaim ts-claim "$ns" '{.status.allocation.devices.results[0].device}')" '^gpu-[01]$' "the claim stays allocated"
# gpushare status: the refused claims, the cluster's event text, their devices.
run "$GPUSHARE" status -o json --configmap "$ns/device-plugin-configs"
expect_rc 0 "status with refused claims"
for p in ts-claim replicas-claim mig-ts-claim; do
	expect_eq "$(jq -r --arg c "$ns/$p" '.nodes[] | .claims[]? | select(.claim == $c) | .prepare' <<<"$out")" failed "status: $p failed prepare"
	expect_eq "$(jq -r --arg c "$ns/$p" '.nodes[] | .claims[]? | select(.claim == $c) | .message' <<<"$out")" "$(event_of "$p")" \
		"status: $p's refusal is the event's text"
	expect_eq "$(jq -r --arg c "$ns/$p" '.nodes[] | select(.claims[]? | .claim == $c) | .node + " " + ([.devices[] | select(.claim == $c) | .name] | join(","))' <<<"$out")" \
		"$(jp resourceclaim "$p" "$ns" '{.status.allocation.devices.results[0].pool} {.status.allocation.devices.results[0].device}')" \
		"status: $p's device"
done
run "$GPUSHARE" explain pod "$ns/replicas-claim"
expect_rc 1 "explain pod replicas-claim (refused at prepare)"
expect_match "$out" "^    prepare: refused on $t4, the pod stays ContainerCreating: Warning FailedPrepareDynamicResources \([0-9]+ times?\): " "explain: the refusal"
expect_has "$out" "): $(event_of replicas-claim)" "explain: the kubelet's event text"
# The driver's TimeSlicingSettings gate on: the time-sliced pod runs, the bad config never.
k annotate node "$t4" gpushare.io/dra-feature-gates=TimeSlicingSettings=true >/dev/null || fail "annotate gates"
gs_wait_pod_phase "$ns" ts-claim Running 60 || fail "ts-claim not Running with TimeSlicingSettings"
prepared() { [ "$("$GPUSHARE" status -o json --node "$t4" 2>/dev/null | jq -r --arg c "$ns/ts-claim" '.nodes[0].claims[]? | select(.claim == $c) | .prepare')" = prepared ]; }
wait_for 30 "status: ts-claim prepared" prepared
run "$GPUSHARE" status -o json --node "$t4"
expect_eq "$(jq -r --arg c "$ns/ts-claim" '.nodes[0].claims[]? | select(.claim == $c) | .lastRefusal' <<<"$out")" "$(event_of ts-claim)" \
	"status: ts-claim prepared after the default gates refused it"
expect_eq "$(jq -r '.nodes[0].gates' <<<"$out")" TimeSlicingSettings=true "status: the node's driver gates"
expect_eq "$(jp pod replicas-claim "$ns" '{.status.phase}')" Pending "replicas-claim still refused"
k -n "$ns" delete pod ts-claim replicas-claim mig-ts-claim --wait=false >/dev/null

# --- 6. layout change, obsolete generation ---------------------------------
k -n "$ns" delete pod mig-pod --wait=true --timeout=60s >/dev/null || fail "delete mig-pod"
name=$(slices_of "$a100" | jq -r '.items[0].metadata.name')
k label node "$a100" nvidia.com/mig.config=all-balanced --overwrite >/dev/null || fail "relabel $a100"
settle "$a100"
s=$(slices_of "$a100")
expect_eq "$(jq -r '.items | length' <<<"$s")" 1 "still one slice"
expect_eq "$(jq -r '.items[0].metadata.name' <<<"$s")" "$name" "updated in place"
expect_eq "$(jq -r '.items[0].spec.pool.generation' <<<"$s")" 1 "one update call keeps the generation"
expect_eq "$(jq -c '[.items[0].spec.devices[].name]' <<<"$s")" \
	'["gpu-0-mig-1g10gb-19-2","gpu-0-mig-1g10gb-19-3","gpu-0-mig-2g20gb-14-0","gpu-0-mig-3g40gb-9-4"]' \
	"all-balanced devices"
# A second slice at a higher generation wins; the older one goes (sync or
# the controller, whichever sees it first).
jq --arg n "$a100" '.items[0] | del(.metadata.name, .metadata.resourceVersion, .metadata.uid,
	.metadata.creationTimestamp, .metadata.managedFields) | .spec.pool.generation = 2' <<<"$s" |
	run k create -f -
expect_rc 0 "create a generation-2 slice"
sync_node "$a100"
expect_rc 0 "sync with two generations"
only_gen2() { [ "$(slices_of "$a100" | jq -c '[.items[].spec.pool.generation]')" = "[2]" ]; }
wait_for 30 "only generation 2 left" only_gen2
gone() { ! k get resourceslice "$name" >/dev/null 2>&1; }
wait_for 30 "the obsolete slice $name deleted" gone

# --- 8. slices kept in step by the controller --------------------------------
# Someone else edits, deletes or adds a gpu.nvidia.com slice of a managed
# node: the controller (watching the slices) puts the pool back as the
# driver's resourceslice controller would. It needs its ConfigMap.
k get namespace gpu-share >/dev/null 2>&1 || k create namespace gpu-share >/dev/null
k -n gpu-share get configmap device-plugin-configs >/dev/null 2>&1 ||
	k create -f "$TOP/k8s/device-plugin-configs.yaml" >/dev/null 2>&1 || true
s=$(slices_of "$t4")
name=$(jq -r '.items[0].metadata.name' <<<"$s")
gen=$(jq -r '.items[0].spec.pool.generation' <<<"$s")
want=$(jq -c '.items[0].spec.devices' <<<"$s")
# Edited: one device dropped and another's memory changed.
jq '.items[0] | del(.spec.devices[1]) | .spec.devices[0].capacity.memory.value = "1Gi"' <<<"$s" | run k replace -f -
expect_rc 0 "edit $t4's slice by hand"
edited_back() {
	[ "$(k get resourceslice "$name" -o json | jq -c '.spec.devices')" = "$want" ]
}
wait_for 30 "the controller restores the edited slice" edited_back
expect_eq "$(jp resourceslice "$name" '{.spec.pool.generation}')" "$gen" "restored in place, generation kept (one update call)"
# Deleted: a new slice, generation 1 again (no slice of the pool is left to count from).
k delete resourceslice "$name" >/dev/null || fail "delete $t4's slice"
recreated() {
	local now
	now=$(slices_of "$t4")
	[ "$(jq '.items | length' <<<"$now")" = 1 ] && [ "$(jq -r '.items[0].metadata.name' <<<"$now")" != "$name" ] &&
		[ "$(jq -c '.items[0].spec.devices' <<<"$now")" = "$want" ]
}
wait_for 30 "the controller publishes the deleted slice again" recreated
s=$(slices_of "$t4")
expect_eq "$(jq -c '.items[0].spec.pool' <<<"$s")" "{\"generation\":1,\"name\":\"$t4\",\"resourceSliceCount\":1}" "pool of the new slice"
expect_eq "$(jq -r '.items[0].metadata.generateName' <<<"$s")" "$t4-gpu.nvidia.com-" "made as the driver makes it"
# A stale slice of the driver on the node (another pool) goes; the node's own stays.
rv=$(jq -r '.items[0].metadata.resourceVersion' <<<"$s")
jq --arg n "$t4-stale" '.items[0] | del(.metadata.name, .metadata.resourceVersion, .metadata.uid,
	.metadata.creationTimestamp, .metadata.managedFields) | .spec.pool.name = $n' <<<"$s" | run k create -f -
expect_rc 0 "create a stale slice on $t4"
one_left() { [ "$(slices_of "$t4" | jq '.items | length')" = 1 ]; }
wait_for 30 "the stale slice removed" one_left
expect_eq "$(slices_of "$t4" | jq -r '.items[0].metadata.resourceVersion')" "$rv" "the node's own slice untouched"
echo OK
