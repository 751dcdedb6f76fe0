#!/usr/bin/env bash
# tests/outage/run.sh GPUSHARE: a 60 s kube-apiserver outage under 500 fake
# nodes on a control plane of its own (make outage; docs/guide/cluster.md
# "An apiserver outage at scale"). Never part of make test, e2e or ci.
#
#  1. The cluster starts (scripts/cluster/up.sh) with the healing asked for:
#     OUTAGE_HEAL=both (the default setup: kwok-guard and the controller's
#     --heal-leases), guard (kwok-guard only), controller (the controller
#     only: a cluster of yours, where nothing restarts kwok) or none.
#  2. OUTAGE_NODES (500) nodes of 8 T4 (bench/controller_nodes.py) become
#     Ready, each with its Lease; OUTAGE_PODS (40) pods of one GPU each, bound
#     to nodes spread over the fleet, run (admitted by the controller, run by
#     kwok). The pods keep the default tolerations (300 s for not-ready and
#     unreachable, the DefaultTolerationSeconds admission plugin).
#  3. kube-apiserver is stopped (component.sh stop) for OUTAGE_DOWN (60) s
#     and started again; with OUTAGE_FREEZE=1 kwok is frozen (SIGSTOP) with it
#     and stays frozen: a kwok that renews nothing, for certain, as kwok
#     v0.8.0's stall (docs/design/kwok-lease-stall.md) leaves it.
#  4. The nodes and their Leases are watched throughout (tests/outage/watch.py:
#     every change with when it arrived), for OUTAGE_AFTER (150) s after
#     /readyz.
#  5. Printed (tests/outage/analyze.py): per node the longest time not Ready
#     (from kube-controller-manager's lastTransitionTime to the change that
#     made it Ready again), nodes tainted unreachable or not-ready, the pods evicted
#     (gone, replaced or terminating, and TaintManagerEviction Events), when
#     every Lease moved again and who renewed it, the guard's restarts and
#     the controller's gpushare_lease_* metrics.
#
# With healing (both, guard, controller) it passes when no node was not
# Ready for longer than kube-controller-manager's --node-monitor-grace-period
# (50 s unless its command line says otherwise) and no pod was evicted; with
# none it passes when it shows the stall: some node not Ready for longer than
# that. OUTAGE_KEEP=1 leaves the cluster running. The state dir and ports are
# the cluster scripts' (GS_CLUSTER_DIR, GS_*_PORT); a cluster already
# running there is refused, not touched.
set -uo pipefail
[ $# = 1 ] || {
	echo "usage: $0 GPUSHARE-BINARY" >&2
	exit 2
}
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
top=$(cd "$(dirname "$0")/../.." && pwd)
state=${GS_CLUSTER_DIR:-$top/.cluster}
heal=${OUTAGE_HEAL:-both}
nodes=${OUTAGE_NODES:-500}
npods=${OUTAGE_PODS:-40}
down=${OUTAGE_DOWN:-60}
after=${OUTAGE_AFTER:-150}
freeze=${OUTAGE_FREEZE:-0}
out=$top/build/outage/$heal
say() { echo "outage: $*"; }
die() {
	say "$*" >&2
	exit 2
}
case $heal in
both) guard=1 ctl=1 ;;
guard) guard=1 ctl=0 ;;
controller) guard=0 ctl=1 ;;
none) guard=0 ctl=0 ;;
*) die "OUTAGE_HEAL must be both, guard, controller or none, got '$heal'" ;;
esac
case $freeze in 0 | 1) ;; *) die "OUTAGE_FREEZE must be 0 or 1, got '$freeze'" ;; esac
for v in nodes npods down after; do
	case ${!v} in '' | *[!0-9]*) die "OUTAGE_${v^^} must be whole number, got '${!v}'" ;; esac
done
[ "$npods" -le "$nodes" ] || die "OUTAGE_PODS ($npods) must not exceed OUTAGE_NODES ($nodes)"
[ -x "$bin" ] || die "$bin is not an executable"
if "$top/scripts/cluster/status.sh" >/dev/null 2>&1; then
	die "a cluster runs in $state already: stop it (make cluster-down) or point GS_CLUSTER_DIR and the GS_*_PORT variables elsewhere"
fi
rm -rf "$out"
mkdir -p "$out"
t_all=$(date +%s)

say "starting the control plane (kwok-guard $guard, controller --heal-leases $ctl)"
GS_KWOK_GUARD=$guard GS_CONTROLLER_HEAL_LEASES=$ctl GS_GPUSHARE=$bin \
	"$top/scripts/cluster/up.sh" >"$out/up.log" 2>&1 || {
	tail -20 "$out/up.log" >&2
	die "the control plane did not start (logs in $state/logs/)"
}
# shellcheck disable=SC1091
. "$state/env"
k() { "$state/bin/kubectl" --kubeconfig="$state/kubeconfig" --request-timeout=20s "$@"; }
comp() { "$top/scripts/cluster/component.sh" "$@" >>"$out/components.log" 2>&1; }
kwok_pid=
cleanup() {
	local st=$?
	# shellcheck disable=SC2086
	[ -n "${watchers:-}" ] && kill $watchers 2>/dev/null
	[ -n "$kwok_pid" ] && kill -CONT "$kwok_pid" 2>/dev/null
	if [ "${OUTAGE_KEEP:-0}" = 1 ]; then
		say "OUTAGE_KEEP=1: the cluster stays ($state)"
	else
		"$top/scripts/cluster/down.sh" >>"$out/up.log" 2>&1
	fi
	exit $st
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# kube-controller-manager's grace, from its own command line when it sets one.
grace=$(tr '\0' '\n' <"$state/argv/kube-controller-manager" |
	sed -n 's/^--node-monitor-grace-period=\([0-9]*\)s$/\1/p')
grace=${grace:-50}

# --- the fleet --------------------------------------------------------------------------------
k apply -f "$top/k8s/namespaces.yaml" -f "$top/k8s/device-plugin-configs.yaml" >/dev/null ||
	die "the device-plugin ConfigMap"
t0=$(date +%s)
list=$(python3 "$top/bench/controller_nodes.py" "$nodes" outage shared)
pids=()
for b in 0 1 2 3; do
	jq -c --argjson b "$b" '.items |= [to_entries[] | select(.key % 4 == $b) | .value]' <<<"$list" |
		k create -f - >/dev/null &
	pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || die "creating the nodes"; done
fleet_ready() {
	local r l
	r=$(k get nodes -l gpushare.io/bench=outage -o json | jq '[.items[] | select(any(.status.conditions[]?;
		.type == "Ready" and .status == "True"))] | length') || return 1
	l=$(k -n kube-node-lease get leases -o json | jq '[.items[] | select(.metadata.name | startswith("outage-node-"))] | length') || return 1
	[ "$r" = "$nodes" ] && [ "$l" = "$nodes" ]
}
until fleet_ready; do
	[ $(($(date +%s) - t0)) -lt 300 ] || die "the $nodes nodes not Ready with their Leases after 300 s"
	sleep 3
done
say "$nodes nodes Ready with their Leases in $(($(date +%s) - t0))s"

ns=outage
k create namespace "$ns" >/dev/null || die "namespace $ns"
step=$((nodes / npods))
for i in $(seq 0 $((npods - 1))); do
	jq -cn --arg ns "$ns" --arg name "p$i" --arg node "$(printf 'outage-node-%05d' $((i * step)))" '
		{apiVersion: "v1", kind: "Pod", metadata: {name: $name, namespace: $ns},
		 spec: {nodeName: $node, terminationGracePeriodSeconds: 0,
		  containers: [{name: "main", image: "registry.invalid/outage:1",
		   resources: {limits: {"nvidia.com/gpu": "1"}}}]}}'
done | jq -cs '{apiVersion: "v1", kind: "List", items: .}' | k create -f - >/dev/null ||
	die "creating the pods"
running() {
	[ "$(k -n "$ns" get pods -o json | jq '[.items[] | select(.status.phase == "Running")] | length')" = "$npods" ]
}
t0=$(date +%s)
until running; do
	[ $(($(date +%s) - t0)) -lt 120 ] || die "the $npods pods not Running after 120 s"
	sleep 2
done
k -n "$ns" get pods -o json | jq -c '[.items[] | {name: .metadata.name, uid: .metadata.uid, node: .spec.nodeName}]' \
	>"$out/pods-before.json"
say "$npods pods Running"

# --- the watches ------------------------------------------------------------------------------
# Every change of a node and of a Lease, with when it arrived (tests/outage/watch.py).
python3 "$top/tests/outage/watch.py" "$state/env" nodes "$out/nodes.jsonl" &
watchers=$!
python3 "$top/tests/outage/watch.py" "$state/env" leases "$out/leases.jsonl" &
watchers="$watchers $!"
sleep 6

# --- the outage --------------------------------------------------------------------------------
t_stop=$(date +%s.%N)
comp stop kube-apiserver || die "stopping kube-apiserver"
if [ "$freeze" = 1 ]; then
	kwok_pid=$(cat "$state/pids/kwok.pid")
	kill -STOP "$kwok_pid" || die "freezing kwok"
	say "kube-apiserver stopped and kwok frozen (SIGSTOP, for good); down for ${down}s"
else
	say "kube-apiserver stopped; down for ${down}s"
fi
sleep "$down"
t_start=$(date +%s.%N)
comp start kube-apiserver || die "starting kube-apiserver again"
t_back=$(date +%s.%N)
say "kube-apiserver started again after ${down}s, /readyz $(awk -v a="$t_stop" -v b="$t_back" 'BEGIN { printf "%.1f", b - a }')s after the stop; watching for ${after}s"
sleep "$after"
t_end=$(date +%s.%N)
# shellcheck disable=SC2086
kill $watchers 2>/dev/null
# shellcheck disable=SC2086
wait $watchers 2>/dev/null
watchers=

# --- what happened -----------------------------------------------------------------------------
k -n "$ns" get pods -o json | jq -c '[.items[] | {name: .metadata.name, uid: .metadata.uid,
	node: .spec.nodeName, deleting: (.metadata.deletionTimestamp != null), phase: .status.phase}]' \
	>"$out/pods-after.json" || die "reading the pods"
k get events -A --field-selector reason=TaintManagerEviction -o json |
	jq -c '[.items[] | {ns: .involvedObject.namespace, name: .involvedObject.name, message}]' \
		>"$out/evictions.json" || die "reading the Events"
restarts=0
[ -f "$state/kwok-guard.restarts" ] && restarts=$(wc -l <"$state/kwok-guard.restarts")
curl -fs --max-time 5 "http://127.0.0.1:$GS_CONTROLLER_PORT/metrics" | grep '^gpushare_lease' >"$out/metrics.txt"
cp "$state/logs/kwok-guard.log" "$out/" 2>/dev/null
cp "$state/logs/controller.log" "$state/logs/kwok.log" "$state/logs/kube-controller-manager.log" "$out/" 2>/dev/null
echo "t_stop=$t_stop t_start=$t_start t_back=$t_back t_end=$t_end grace=$grace" >"$out/times"
OUTAGE_T_END=$t_end python3 "$top/tests/outage/analyze.py" "$out" "$t_stop" "$t_start" "$t_back" "$grace" "$heal" \
	"$restarts" "$(($(date +%s) - t_all))"
