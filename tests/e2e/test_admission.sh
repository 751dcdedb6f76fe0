#!/usr/bin/env bash
# The kubelet's admission, played by the cluster's controller (docs/guide/status.md):
# a pod asking for 2 slices of time-sliced lab-node-1 ends Failed with
# UnexpectedAdmissionError and the plugin's message, never Running, with
# the kubelet's Warning Event; a pod bound to lab-node-0 for more GPUs than
# are free fails with the device manager's words; `gpushare status` shows
# the lab's pods on their physical GPUs; after the controller is killed and
# started again the ledger is the same and nothing is handed out twice.
# e2e-timeout: 240
. "$TOP/tests/e2e/lib.sh"

cd "$TOP" || fail "no repository root"
state=${GS_CLUSTER_DIR:-$TOP/.cluster}
# shellcheck disable=SC1091
. "$state/env"
port=${GS_CONTROLLER_PORT:?the cluster runs no controller (env has no GPUSHARE controller port)}
ns=e2e-admission
k delete namespace "$ns" --wait=true --ignore-not-found >/dev/null 2>&1
k create namespace "$ns" >/dev/null || fail "create namespace $ns"
trap 'status_=$?; k delete namespace "$ns" --wait=false >/dev/null 2>&1; (exit "$status_"); _e2e_cleanup' EXIT

run "$GPUSHARE" lab --timeout 90
expect_rc 0 "gpushare lab (nodes, ConfigMap, the lab's pods)"

st() { "$GPUSHARE" status -o json 2>/dev/null; }
held_on() { # node -> "pod@gpu" lines, sorted
	st | jq -r --arg n "$1" '.nodes[] | select(.node == $n) | .gpus[] as $g
		| $g.devices[] | select(.holder != null) | "\(.holder)@\($g.index)"' | sort
}

# --- the lab's pods hold their slices on their physical GPUs -----------------
# Which pods land on lab-node-1 is the scheduler's choice (plain-gpu may go to
# either node): the ledger is judged against where they are.
for p in gpu-share/notebook gpu-share/plain-gpu gpu-share/mig-job team-a/team-a-0 team-a/team-a-1; do
	gs_wait_pod_phase "${p%/*}" "${p#*/}" Running 30 || fail "$p not Running"
done
on1=$(k get pods -A -o json | jq -r '.items[] | select(.spec.nodeName == "lab-node-1")
	| "\(.metadata.namespace)/\(.metadata.name)"' | sort)
n1=$(printf '%s\n' "$on1" | grep -c .)
lab1=$(held_on lab-node-1)
expect_eq "$(printf '%s\n' "$lab1" | grep -c .)" "$n1" "one slice per pod on lab-node-1: $lab1"
for p in $on1; do
	expect_eq "$(printf '%s\n' "$lab1" | grep -c "^$p@")" 1 "$p holds one slice"
done
# The distributed policy: the two T4s differ by at most one slice.
g0=$(printf '%s\n' "$lab1" | grep -c '@0$')
g1=$(printf '%s\n' "$lab1" | grep -c '@1$')
[ $((g0 - g1)) -le 1 ] && [ $((g1 - g0)) -le 1 ] || fail "not distributed: $lab1"
ann=$(jp pod notebook gpu-share '{.metadata.annotations.gpushare\.io/devices}')
expect_match "$ann" '^\{"nvidia.com/gpu":\["GPU-[0-9a-f-]+::[0-3]"\]\}$' "notebook's record"
expect_eq "$(held_on lab-node-2 | wc -l | tr -d ' ')" 2 "mig-job and prod-inference on MIG instances"
run "$GPUSHARE" status
expect_rc 0 "gpushare status"
# Every T4 held by two namespaces or more is named, with its isolation.
shared=$(st | jq -r '.nodes[] | select(.node == "lab-node-1") | .gpus[]
	| select((.namespaces | length) > 1) | "lab-node-1 GPU \(.index): namespaces \(.namespaces | join(", ")) share it (time-slicing"')
[ -n "$shared" ] || fail "no T4 of lab-node-1 is shared by two namespaces: $lab1"
while IFS= read -r line; do
	expect_has "$out" "$line" "the namespaces sharing a T4"
done <<<"$shared"
expect_has "$out" "memory isolation no" "their memory is not isolated"

# --- 2 slices on lab-node-1: Failed at admission, never Running --------------
msg='Allocate failed due to rpc error: code = Unknown desc = invalid allocation request for "nvidia.com/gpu": invalid request: maximum request size for shared resources is 1; found 2, which is unexpected'
phases=$(mktemp)
k get pods -n "$ns" --watch -o 'jsonpath={.metadata.name} {.status.phase}{"\n"}' >"$phases" 2>/dev/null &
watcher=$!
sleep 1
k apply -n "$ns" -f - >/dev/null <<'EOF' || fail "create two-slices"
apiVersion: v1
kind: Pod
metadata:
  name: two-slices
spec:
  nodeSelector: {nvidia.com/device-plugin.config: shared}
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      limits: {nvidia.com/gpu: 2}
EOF
gs_wait_pod_phase "$ns" two-slices Failed 30 || fail "two-slices not Failed after 30s"
expect_eq "$(jp pod two-slices "$ns" '{.spec.nodeName}')" lab-node-1 "the scheduler bound it to lab-node-1"
expect_eq "$(jp pod two-slices "$ns" '{.status.reason}')" UnexpectedAdmissionError "reason"
expect_eq "$(jp pod two-slices "$ns" '{.status.message}')" "Pod was rejected: $msg" "the kubelet's message"
expect_eq "$(jp pod two-slices "$ns" '{.metadata.annotations.gpushare\.io/admitted}')" "" "never admitted"
sleep 2
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
if grep -q '^two-slices Running' "$phases"; then
	fail "two-slices was Running at some point: $(tr '\n' ',' <"$phases")"
fi
expect_has "$(cat "$phases")" "two-slices Failed" "the watch saw it fail"
echo "note: two-slices phases seen: $(grep '^two-slices' "$phases" | awk '{print $2}' | uniq | tr '\n' ' ')"
rm -f "$phases"
ev() {
	k get events -n "$ns" --field-selector "involvedObject.name=$1,type=Warning" -o json
}
has_event() { ev "$1" | jq -e '.items | length > 0' >/dev/null; }
wait_for 10 "the Warning Event on two-slices" has_event two-slices
run ev two-slices
expect_eq "$(jq -r '.items[0].reason' <<<"$out")" UnexpectedAdmissionError "Event reason"
expect_eq "$(jq -r '.items[0].message' <<<"$out")" "$msg" "Event message (no prefix)"
expect_eq "$(jq -r '.items[0].source.component' <<<"$out")" kubelet "Event source"
expect_eq "$(jq -r '.items[0].source.host' <<<"$out")" lab-node-1 "Event host"
expect_eq "$(held_on lab-node-1 | grep -c .)" "$n1" "the refused pod holds nothing"

# --- more whole GPUs than lab-node-0 has free (batch-train holds one) ---------
k apply -n "$ns" -f - >/dev/null <<'EOF' || fail "create too-many"
apiVersion: v1
kind: Pod
metadata:
  name: too-many
spec:
  nodeName: lab-node-0
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      limits: {nvidia.com/gpu: 2}
EOF
gs_wait_pod_phase "$ns" too-many Failed 30 || fail "too-many not Failed after 30s"
free0=$((2 - $(held_on lab-node-0 | grep -c .)))
expect_eq "$(jp pod too-many "$ns" '{.status.reason}')" UnexpectedAdmissionError "reason"
expect_eq "$(jp pod too-many "$ns" '{.status.message}')" \
	"Pod was rejected: Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 2, Available: $free0, which is unexpected" \
	"the device manager's message"

# --- a one-slice pod is admitted and runs --------------------------------------
one_slice() {
	k apply -n "$ns" -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: $1
spec:
  nodeSelector: {nvidia.com/device-plugin.config: shared}
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      limits: {nvidia.com/gpu: 1}
EOF
}
one_slice one-a || fail "create one-a"
gs_wait_pod_phase "$ns" one-a Running 30 || fail "one-a not Running after 30s"
before=$(st)
expect_eq "$(held_on lab-node-1 | grep -c .)" $((n1 + 1)) "one-a holds a slice"

# --- the controller killed and started again: the same ledger ------------------
# SIGKILL, then the command line up.sh gave it (scripts/cluster/component.sh).
run "$TOP/scripts/cluster/component.sh" restart -s KILL controller
expect_rc 0 "SIGKILL the controller and start it again"
after=$(st)
expect_eq "$(jq -S . <<<"$after")" "$(jq -S . <<<"$before")" "the ledger after a restart"
one_slice one-b || fail "create one-b"
gs_wait_pod_phase "$ns" one-b Running 30 || fail "one-b not Running after 30s (restarted controller)"
ids=$(k get pods -A -o json | jq -r '.items[] | select(.spec.nodeName == "lab-node-1")
	| .metadata.annotations["gpushare.io/devices"] // empty | fromjson | .[] | .[]')
expect_eq "$(printf '%s\n' "$ids" | grep -c .)" $((n1 + 2)) "slices handed out on lab-node-1"
expect_eq "$(printf '%s\n' "$ids" | sort -u | grep -c .)" $((n1 + 2)) "none twice: $ids"
# Distributed after the restart too.
lab1=$(held_on lab-node-1)
g0=$(printf '%s\n' "$lab1" | grep -c '@0$')
g1=$(printf '%s\n' "$lab1" | grep -c '@1$')
[ $((g0 - g1)) -le 1 ] && [ $((g1 - g0)) -le 1 ] || fail "not distributed after the restart: $lab1"

# --- a pod that ends frees its slice --------------------------------------------
k delete pod -n "$ns" one-a --wait=true >/dev/null || fail "delete one-a"
expect_eq "$(held_on lab-node-1 | grep -c .)" $((n1 + 1)) "one-a's slice is free again"
