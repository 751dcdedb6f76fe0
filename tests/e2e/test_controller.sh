#!/usr/bin/env bash
# `gpushare controller`: with nothing run by hand, a ConfigMap edit reaches
# lab-node-1's capacity and allocatable within seconds; a label change
# re-selects and a removed label falls back; a malformed ConfigMap or a
# missing key keeps the numbers and posts a Warning Event on the node,
# and fixing it heals without a restart; /healthz, /readyz and /metrics
# answer; SIGTERM exits 0.
. "$TOP/tests/e2e/lib.sh"

cd "$TOP" || fail "no repository root"
run "$GPUSHARE" lab --timeout 90
expect_rc 0 "gpushare lab (sets up the lab nodes)"

res() { jp node "$1" "{.status.$2.${3//./\\.}}"; }
both() { echo "$(res "$1" capacity nvidia.com/gpu)/$(res "$1" allocatable nvidia.com/gpu)"; }
cm_json() { k -n gpu-share get cm device-plugin-configs -o json; }
now() { date +%s.%N; }

# The cluster's controller (scripts/cluster/up.sh starts it): nothing is run by hand.
state=${GS_CLUSTER_DIR:-$TOP/.cluster}
# shellcheck disable=SC1091
. "$state/env"
port=${GS_CONTROLLER_PORT:?the cluster runs no controller (env has no GS_CONTROLLER_PORT)}
log=$state/logs/controller.log
restore() {
	k label node lab-node-1 nvidia.com/device-plugin.config=shared --overwrite >/dev/null 2>&1
	gs_set_replicas 4 >/dev/null 2>&1
}
trap 'status_=$?; restore; (exit "$status_"); _e2e_cleanup' EXIT
wait_for 30 "controller /readyz" gs_http_ready "http://127.0.0.1:$port/readyz"
run curl -sS "http://127.0.0.1:$port/healthz"
expect_eq "$out" ok "/healthz"

# --- a ConfigMap edit, no command run ---------------------------------------
is() { test "$(both "$1")" = "$2"; }
expect_eq "$(both lab-node-1)" 8/8 "the lab's 2 T4 x 4 replicas"
t0=$(now)
gs_set_replicas 5 || fail "set replicas 5"
wait_for 10 "lab-node-1 capacity and allocatable 10" is lab-node-1 10/10
echo "note: a ConfigMap edit reached lab-node-1's capacity and allocatable in $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')s (kubectl polling included)"
expect_eq "$(both lab-node-0)" 2/2 "the default node is untouched"
expect_eq "$(jp node lab-node-1 '{.metadata.labels.nvidia\.com/gpu\.replicas}')" 5 "GFD's replicas label follows"
expect_has "$(cat "$log")" "node lab-node-1: advertised nvidia.com/gpu=10 [config shared]" "one log line per write"

# --- malformed: numbers kept, Event, fixed without a restart ----------------
cm_json | jq '.data.shared |= sub("replicas: [^\n]+"; "replicas: [oops")' | k replace -f - >/dev/null ||
	fail "apply the malformed ConfigMap"
warned() {
	k get events -n default --field-selector "involvedObject.name=lab-node-1,reason=FailedDevicePluginConfig,type=Warning" \
		-o json | jq -e --arg w "$1" '[.items[] | select(.message | contains($w))] | length > 0' >/dev/null
}
wait_for 10 "a Warning Event on lab-node-1 about the config" warned "unable to parse config file"
run k get events -n default --field-selector "involvedObject.name=lab-node-1,reason=FailedDevicePluginConfig" -o json
expect_has "$out" "crash-loop" "the Event says what a real node would do"
expect_has "$out" "gpushare-controller" "the Event's source"
expect_eq "$(both lab-node-1)" 10/10 "the last good advertisement is kept"
expect_has "$(cat "$log")" "node lab-node-1: warning: " "the failure is logged"
gs_set_replicas 3 || fail "fix the ConfigMap"
wait_for 10 "lab-node-1 healed to 6" is lab-node-1 6/6

# --- labels: re-select, a missing key, a removed label ------------------------
k label node lab-node-1 nvidia.com/device-plugin.config=default --overwrite >/dev/null
wait_for 10 "lab-node-1 re-selected to config default (2 whole T4s)" is lab-node-1 2/2
k label node lab-node-1 nvidia.com/device-plugin.config=no-such-key --overwrite >/dev/null
wait_for 10 "a Warning Event about the missing key" warned "no-such-key"
expect_eq "$(both lab-node-1)" 2/2 "a missing key keeps what the node advertises"
k label node lab-node-1 nvidia.com/device-plugin.config=shared --overwrite >/dev/null
wait_for 10 "lab-node-1 back on config shared" is lab-node-1 6/6
k label node lab-node-1 nvidia.com/device-plugin.config- >/dev/null
# Without the label config-manager falls back (named,single): what sync plans is what is there.
plan_done() {
	run "$GPUSHARE" sync --dry-run --node lab-node-1
	case $out in *"lab-node-1: unchanged"*) return 0 ;; esac
	return 1
}
wait_for 10 "the controller applied the fallback (sync --dry-run sees nothing to do)" plan_done
expect_has "$out" "[config default]" "a removed label falls back to the default config"

# --- the gate: kwok runs a pod only once the controller admitted it -----------
ns=$(e2e_name ctl)
e2e_namespace "$ns"
cpid=$(cat "$state/pids/controller.pid")
kill -STOP "$cpid" || fail "pause the cluster's controller"
trap 'status_=$?; kill -CONT "$cpid" 2>/dev/null; restore; (exit "$status_"); _e2e_cleanup' EXIT
k -n "$ns" create -f - >/dev/null <<EOF || fail "create the pod"
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"gated","namespace":"$ns"},
 "spec":{"nodeName":"lab-node-0","containers":[{"name":"main","image":"registry.invalid/e2e:1"}]}}
EOF
sleep 3
expect_eq "$(jp pod gated "$ns" '{.status.phase}')" Pending "not admitted: kwok does not run it"
expect_eq "$(jp pod gated "$ns" '{.metadata.annotations.gpushare\.io/admitted}')" "" "no annotation while paused"
kill -CONT "$cpid"
gs_wait_pod_phase "$ns" gated Running 30 || fail "admitted pod not Running after 30s"
expect_eq "$(jp pod gated "$ns" '{.metadata.annotations.gpushare\.io/admitted}')" true "admitted by the controller"
expect_has "$(cat "$log")" "pod $ns/gated: admitted" "the admission is logged"

# --- metrics, a second controller stopped by SIGTERM ---------------------------
run curl -sS "http://127.0.0.1:$port/metrics"
expect_match "$out" '^gpushare_reconciles_total [1-9]' "reconciles counted"
expect_match "$out" '^gpushare_node_patches_total [1-9]' "writes counted"
expect_match "$out" '^gpushare_nodes\{strategy="none"\} 3$' "all three lab nodes now without sharing"
expect_match "$out" '^gpushare_slots\{resource="nvidia.com/gpu",state="free"\} [0-9]+$' "slots per resource"
expect_match "$out" '^gpushare_ready 1$' "ready"
pid=$(cat "$state/pids/controller.pid")
echo "note: controller RSS with the lab's nodes: $(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status") kB"

# A second controller, to stop: SIGTERM finishes and exits 0.
log2=$(mktemp)
"$GPUSHARE" controller --listen "127.0.0.1:0" >"$log2" 2>&1 &
pid2=$!
has_listed() { grep -q "pods listed" "$log2"; }
wait_for 30 "the second controller lists" has_listed
kill -TERM "$pid2"
wait "$pid2"
rc=$?
expect_rc 0 "SIGTERM: exit 0"
expect_has "$(tail -n 1 "$log2")" "stopped" "the last line says it stopped"
rm -f "$log2"
