#!/usr/bin/env bash
# The eight steps of the lab, run by `gpushare lab` against the real control
# plane and judged only through kubectl (never through gpushare's client).
. "$TOP/tests/e2e/lib.sh"

cd "$TOP" || fail "no repository root"
run "$GPUSHARE" lab --timeout 90
expect_rc 0 "gpushare lab"

# gpu count of a node, capacity or allocatable (dots in the key escaped).
res() { jp node "$1" "{.status.$2.${3//./\\.}}"; }
replicas_of() {
	k -n gpu-share get configmap device-plugin-configs -o "jsonpath={.data.$1}" |
		awk '/replicas:/ {print $2; exit}'
}

# Step 1: the ConfigMap as the seed names it.
expect_eq "$(jp namespace gpu-share '{.metadata.name}')" gpu-share "namespace gpu-share"
expect_eq "$(jp namespace team-a '{.metadata.name}')" team-a "namespace team-a"
keys=$(k -n gpu-share get configmap device-plugin-configs -o json | jq -r '.data | keys | join(",")')
expect_eq "$keys" "default,mps,shared" "ConfigMap keys after step 7"
expect_has "$(k -n gpu-share get cm device-plugin-configs -o 'jsonpath={.data.shared}')" \
	"failRequestsGreaterThanOne: true" "shared config"
r=$(replicas_of shared)
expect_eq "$r" 4 "replicas of shared"

# Step 2: both capacity and allocatable, node-1 = 2 x replicas.
for field in capacity allocatable; do
	expect_eq "$(res lab-node-0 $field nvidia.com/gpu)" 2 "lab-node-0 $field"
	expect_eq "$(res lab-node-1 $field nvidia.com/gpu)" "$((2 * r))" "lab-node-1 $field"
	# Step 3: the MIG node advertises the profile only.
	expect_eq "$(res lab-node-2 $field nvidia.com/mig-1g.10gb)" 7 "lab-node-2 $field"
	expect_eq "$(res lab-node-2 $field nvidia.com/gpu)" "" "lab-node-2 has no nvidia.com/gpu in $field"
done
expect_eq "$(jp node lab-node-0 '{.metadata.labels.nvidia\.com/device-plugin\.config}')" default "node-0 label"
expect_eq "$(jp node lab-node-1 '{.metadata.labels.nvidia\.com/device-plugin\.config}')" shared "node-1 label"
expect_eq "$(jp node lab-node-2 '{.metadata.labels.nvidia\.com/mig\.strategy}')" mixed "node-2 strategy label"
expect_match "$(jp node lab-node-2 '{.metadata.labels.nvidia\.com/gpu\.product}')" '^NVIDIA-A100-SXM4-80GB' "node-2 product label"

# Step 4: the resource name alone splits the two pods.
expect_eq "$(jp pod mig-job gpu-share '{.spec.nodeName}')" lab-node-2 "mig-job on the MIG node"
plain=$(jp pod plain-gpu gpu-share '{.spec.nodeName}')
[ -n "$plain" ] || fail "plain-gpu not scheduled"
[ "$plain" != lab-node-2 ] || fail "plain-gpu landed on the MIG node"

# Step 5: the quota refusal is the apiserver's, and no pod was created.
expect_has "$(cat out/quota-denied.txt)" "exceeded quota: gpu-quota" "out/quota-denied.txt"
expect_has "$(cat out/quota-denied.txt)" 'pods "team-over" is forbidden' "out/quota-denied.txt"
run k -n team-a get pod team-over
expect_rc 1 "no team-over pod"
expect_eq "$(jp resourcequota gpu-quota team-a '{.status.used.requests\.nvidia\.com/gpu}')" 2 "quota used"

# Step 6: the wrapper exists and honours the contract on the lab's manifests.
run bin/check-request.sh k8s/placement.yaml
expect_rc 0 "placement pods ask for one GPU each"
expect_eq "$out" OK "check-request output"

# Step 7: five lines, as the seed names them.
expect_eq "$(cat out/isolation.txt)" "TIMESLICING_MEMORY_ISOLATION=no
MPS_MEMORY_ISOLATION=partial
MIG_MEMORY_ISOLATION=yes
TIMESLICING_FAULT_ISOLATION=no
MIG_FAULT_ISOLATION=yes" "out/isolation.txt"

# Step 8: out/placement.txt is where the scheduler put them.
want=$(for p in prod-inference notebook batch-train; do
	k -n gpu-share get pod "$p" -o wide --no-headers | awk -v p="$p" '{print p "=" $7}'
done)
expect_eq "$(cat out/placement.txt)" "$want" "out/placement.txt vs kubectl get pod -o wide"
expect_eq "$(jp pod prod-inference gpu-share '{.spec.nodeName}')" lab-node-2 "prod-inference on MIG"
expect_eq "$(jp pod notebook gpu-share '{.spec.nodeName}')" lab-node-1 "notebook on time-sliced"
expect_eq "$(jp pod batch-train gpu-share '{.spec.nodeName}')" lab-node-0 "batch-train on unshared"

# The grader re-multiplies: change replicas, sync, both fields follow.
new=$(k -n gpu-share get cm device-plugin-configs -o json |
	jq '.data.shared |= sub("replicas: 4"; "replicas: 3")')
printf '%s' "$new" | run k replace -f -
expect_rc 0 "set replicas 3"
run "$GPUSHARE" sync
expect_rc 0 "sync after replicas 3"
for field in capacity allocatable; do
	expect_eq "$(res lab-node-1 $field nvidia.com/gpu)" 6 "lab-node-1 $field with replicas 3"
	expect_eq "$(res lab-node-0 $field nvidia.com/gpu)" 2 "lab-node-0 $field unchanged"
done

# An invalid config leaves the node's capacity as it was, and says why.
bad=$(k -n gpu-share get cm device-plugin-configs -o json |
	jq '.data.shared |= sub("replicas: 3"; "replicas: 1")')
printf '%s' "$bad" | run k replace -f -
expect_rc 0 "set replicas 1"
run "$GPUSHARE" sync
expect_rc 1 "sync with an invalid config"
expect_has "$err" "number of replicas must be >= 2" "upstream's message"
expect_eq "$(res lab-node-1 capacity nvidia.com/gpu)" 6 "invalid config keeps capacity"
expect_eq "$(res lab-node-1 allocatable nvidia.com/gpu)" 6 "invalid config keeps allocatable"
expect_eq "$(res lab-node-0 capacity nvidia.com/gpu)" 2 "other nodes still synced"

# A label naming a missing key: that node untouched, upstream's message.
run k label node lab-node-0 --overwrite nvidia.com/device-plugin.config=nope
expect_rc 0 "label a missing key"
run "$GPUSHARE" sync
expect_rc 1 "sync with a missing key"
expect_has "$err" "specified config nope does not exist" "config-manager's message"
expect_eq "$(res lab-node-0 capacity nvidia.com/gpu)" 2 "missing key keeps capacity"
run k label node lab-node-0 --overwrite nvidia.com/device-plugin.config=default
expect_rc 0 "restore label"

# Re-running the lab restores replicas 4 and is otherwise idempotent.
run "$GPUSHARE" lab --timeout 90
expect_rc 0 "second gpushare lab"
expect_eq "$(res lab-node-1 capacity nvidia.com/gpu)" 8 "replicas 4 again"
expect_eq "$(res lab-node-1 allocatable nvidia.com/gpu)" 8 "replicas 4 again"
expect_eq "$(k -n team-a get pods -o name | wc -l)" 2 "still exactly two team-a pods"
expect_eq "$(cat out/placement.txt)" "$want" "same placement after re-run"

# Only what changed is written: a sync with nothing new leaves every node's
# resourceVersion alone.
before=$(for n in lab-node-0 lab-node-1 lab-node-2; do jp node $n '{.metadata.resourceVersion} '; done)
run "$GPUSHARE" sync
expect_rc 0 "sync with nothing to do"
expect_eq "$(printf '%s\n' "$out" | grep -c ': unchanged')" 3 "all three lab nodes unchanged"
after=$(for n in lab-node-0 lab-node-1 lab-node-2; do jp node $n '{.metadata.resourceVersion} '; done)
expect_eq "$after" "$before" "no write when nothing changed"

# A user without rights gets the apiserver's own refusal, and nothing is written.
run "$GPUSHARE" sync --kubeconfig "$USER_KUBECONFIG"
expect_rc 2 "sync as e2e-user"
expect_has "$err" 'configmaps "device-plugin-configs" is forbidden: User "e2e-user" cannot get resource "configmaps" in API group "" in the namespace "gpu-share"' "apiserver's 403 message"
