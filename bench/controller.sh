#!/usr/bin/env bash
# bench/controller.sh GPUSHARE: `gpushare controller` at scale on the local
# control plane (make bench-controller), in one run:
#
#  1. BENCH_NODES (5000) kwok nodes of 8 Tesla T4 (bench/controller_nodes.py,
#     ConfigMap key `bench`: time-slicing, failRequestsGreaterThanOne, replicas
#     4) are created; the cluster's own controller (scripts/cluster/up.sh starts
#     it) advertises them; the bench waits until all show nvidia.com/gpu=32.
#  2. `replicas` of that key goes 4 -> 6 in the device-plugin ConfigMap; the
#     clock runs from the edit until every node shows 48 in capacity and
#     allocatable, seen through one list + one watch (controller_watch.py).
#  3. Baseline: a sequential `kubectl patch --subresource=status` loop writing
#     the same change (the labels, capacity and allocatable the controller
#     wrote) to BENCH_LOOP_SAMPLE (100) identical nodes that the controller
#     does not manage (label gpushare.io/controller=off), created with the
#     old advertisement; its time is extrapolated linearly to BENCH_NODES.
#  4. Printed: both times and their ratio; the controller's peak RSS (VmHWM)
#     and RSS at the end; the CPU time (utime+stime, /proc/PID/stat) of the
#     controller, kube-apiserver, etcd, kwok, the scheduler and KCM during the
#     timed windows, with a quiet window of the same fleet for comparison; the
#     apiserver's own request counts and latencies (its /metrics); a CPU
#     profile per interval of the edit.
#  5. Admission: BENCH_PODS (1000) pods pinned to the bench nodes, every 10th
#     asking for 2 nvidia.com/gpu (refused: maximum request size for shared
#     resources is 1), created at once by 4 parallel `kubectl create`; the
#     clock runs until every pod is admitted and Running or Failed.
#
# The cluster must run this checkout's controller: a stopped cluster is
# started (and stopped at the end), a running one with another controller
# binary is restarted. BENCH_KEEP=1 leaves the cluster and the bench objects;
# BENCH_REUSE=1 then reuses the nodes of such a run (replicas go back and forth
# between 4 and 6) instead of creating them: for trying changes, not for results.
# Never part of make test, make e2e or make ci.
set -euo pipefail
bin=$(cd "$(dirname "${1:?usage: bench/controller.sh path/to/gpushare}")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/.." && pwd)
state=${GS_CLUSTER_DIR:-$root/.cluster}
out=$root/build/bench/controller
mkdir -p "$out"
nodes=${BENCH_NODES:-5000}
npods=${BENCH_PODS:-1000}
sample=${BENCH_LOOP_SAMPLE:-100}
[ "$sample" -le "$nodes" ] || sample=$nodes
par=4 # parallel kubectl creates
r0=4 r1=6
prefix=bench
ns=gpushare-bench
now() { date +%s.%N; }
say() { echo "bench: $*"; }
calc() { awk "BEGIN { printf $1 }"; }

# --- the cluster, with this checkout's controller --------------------------------------------
started=
if ! "$root/scripts/cluster/status.sh" >/dev/null 2>&1; then
	say "starting the local control plane"
	"$root/scripts/cluster/up.sh"
	started=1
elif ! cmp -s "$bin" "$state/bin/gpushare"; then
	say "the running cluster's controller is not $bin: restarting the cluster"
	"$root/scripts/cluster/down.sh"
	"$root/scripts/cluster/up.sh"
	started=1
fi
# shellcheck disable=SC1091
. "$state/env"
export GS_APISERVER GS_CA GS_ADMIN_CERT GS_ADMIN_KEY
k() { "$state/bin/kubectl" --kubeconfig="$state/kubeconfig" "$@"; }
api() { # METHOD PATH: one request with the admin certificate
	curl -fsS --max-time 120 --cacert "$GS_CA" --cert "$GS_ADMIN_CERT" --key "$GS_ADMIN_KEY" \
		-X "$1" "$GS_APISERVER$2"
}
pid_of() { cat "$state/pids/$1.pid"; }
comps="controller kube-apiserver etcd kwok kube-scheduler kube-controller-manager"
declare -A pid
for c in $comps; do pid[$c]=$(pid_of "$c"); done
hz=$(getconf CLK_TCK)
cpu_of() { # PID: utime+stime in ticks
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}
sched_of() { # PID: nanoseconds its threads ran and waited runnable (schedstat)
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ r += $1; w += $2 } END { printf "%.0f %.0f", r, w }'
}
snap() { # FILE: every component's CPU ticks, run and runqueue-wait ns, one per line
	for c in $comps; do echo "$c $(cpu_of "${pid[$c]}") $(sched_of "${pid[$c]}")"; done >"$1"
}
wait_delta() { # BEFORE AFTER COMPONENT: seconds its threads waited for a CPU
	awk -v c="$3" 'FNR == NR { if ($1 == c) a = $4; next } $1 == c { printf "%.2f", ($4 - a) / 1e9 }' "$1" "$2"
}
cpu_delta() { # BEFORE AFTER COMPONENT: seconds
	awk -v c="$3" -v hz="$hz" 'FNR == NR { if ($1 == c) a = $2; next } $1 == c { printf "%.2f", ($2 - a) / hz }' "$1" "$2"
}
vm() { awk -v k="$2:" '$1 == k { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }

cleanup() {
	st=$?
	[ -n "${sampler:-}" ] && kill "$sampler" 2>/dev/null
	if [ "${BENCH_KEEP:-0}" = 1 ]; then
		say "BENCH_KEEP=1: the cluster and the bench's objects stay"
	elif [ -n "$started" ]; then
		"$root/scripts/cluster/down.sh" >/dev/null
	else
		k delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
		api DELETE "/api/v1/nodes?labelSelector=gpushare.io%2Fbench" >/dev/null 2>&1 || true
	fi
	exit $st
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A per-second CPU profile of every component, read afterwards for the timed windows.
(
	while :; do
		line=$(date +%s.%N)
		for c in $comps; do line+=" $(cpu_of "${pid[$c]}")"; done
		echo "$line"
		sleep 1
	done
) >"$out/cpu.txt" 2>/dev/null &
sampler=$!

# --- objects of an earlier run go, the ConfigMap key is set ------------------------------------
reuse=
if [ "${BENCH_REUSE:-0}" = 1 ] && [ -z "$started" ] &&
	[ "$(k get nodes -l gpushare.io/bench=$prefix -o name | wc -l)" = "$nodes" ]; then
	reuse=1
	cur=$(k -n gpu-share get configmap device-plugin-configs -o json | jq -r '.data.bench // ""' |
		sed -n 's/.*replicas: *//p')
	[ "$cur" != "$r1" ] || { r1=$r0 r0=$cur; }
	k delete nodes -l gpushare.io/bench=${prefix}loop --wait=true >/dev/null
elif [ "$(k get nodes -l gpushare.io/bench -o name | wc -l)" != 0 ]; then
	say "deleting the bench nodes of an earlier run"
	api DELETE "/api/v1/nodes?labelSelector=gpushare.io%2Fbench" >/dev/null
	until [ "$(k get nodes -l gpushare.io/bench -o name | wc -l)" = 0 ]; do sleep 1; done
fi
if k get namespace "$ns" >/dev/null 2>&1; then
	k delete namespace "$ns" --timeout=300s >/dev/null
fi
k get namespace gpu-share >/dev/null 2>&1 || k create namespace gpu-share >/dev/null
k -n gpu-share get configmap device-plugin-configs >/dev/null 2>&1 ||
	k create -f "$root/k8s/device-plugin-configs.yaml" >/dev/null
set_key() { # REPLICAS
	local text
	text=$(printf 'version: v1\nflags:\n  migStrategy: none\nsharing:\n  timeSlicing:\n    failRequestsGreaterThanOne: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: %s' "$1")
	k -n gpu-share patch configmap device-plugin-configs --type=merge \
		-p "$(jq -n --arg t "$text" '{data: {bench: $t}}')" >/dev/null
}
set_key $r0

# --- 1. the fleet --------------------------------------------------------------------------------
load0=$(cut -d' ' -f1-3 /proc/loadavg)
t=$(now)
cpids=()
[ -n "$reuse" ] && say "reusing the $nodes nodes of an earlier run (BENCH_REUSE=1)" || say "creating $nodes nodes ($par parallel kubectl create; load average $load0)"
per=$(((nodes + par - 1) / par))
for i in $(seq 0 $((par - 1))); do
	[ -z "$reuse" ] || break
	first=$((i * per))
	n=$((nodes - first < per ? nodes - first : per))
	[ "$n" -gt 0 ] || continue
	python3 "$root/bench/controller_nodes.py" "$n" "$prefix" bench "$first" >"$out/nodes.$i.json"
	k create -f "$out/nodes.$i.json" >/dev/null &
	cpids+=($!)
done
[ ${#cpids[@]} = 0 ] || wait "${cpids[@]}"
say "created in $(calc "\"%.1f\", $(now) - $t")s; waiting until all advertise nvidia.com/gpu=$((8 * r0))"
python3 "$root/bench/controller_watch.py" nodes "gpushare.io/bench=$prefix" "$nodes" $((8 * r0)) >"$out/initial.json"
say "all advertised $(calc "\"%.1f\", $(jq .done "$out/initial.json") - $t")s after the creates began; controller RSS $(vm "${pid[controller]}" VmRSS) MB"

# The loop's nodes: the same advertisement, created as they are, not managed.
k get node "$prefix-node-00000" -o json >"$out/node-r0.json"
python3 "$root/bench/controller_nodes.py" "$sample" "${prefix}loop" bench |
	jq --slurpfile ref "$out/node-r0.json" '.items |= map(
		.metadata.labels = ($ref[0].metadata.labels + .metadata.labels + {"gpushare.io/controller": "off"})
		| .status = {capacity: $ref[0].status.capacity, allocatable: $ref[0].status.allocatable})' \
		>"$out/loop-nodes.json"
k create -f "$out/loop-nodes.json" >/dev/null

# Everything settles: kwok made every node Ready, the node-lifecycle controller saw it.
sleep 10

# --- a quiet window: the same fleet, no edit -------------------------------------------------------
quiet=${BENCH_QUIET_S:-15}
snap "$out/quiet.0"
tq=$(now)
sleep "$quiet"
snap "$out/quiet.1"
tq=$(calc "\"%.2f\", $(now) - $tq")

# --- 2. the edit -------------------------------------------------------------------------------------
api GET /metrics >"$out/metrics.0"
rm -f "$out/ready"
python3 "$root/bench/controller_watch.py" nodes "gpushare.io/bench=$prefix" "$nodes" $((8 * r1)) "$out/ready" >"$out/edit.json" &
watcher=$!
until [ -f "$out/ready" ]; do sleep 0.05; done
ctl_rss0=$(vm "${pid[controller]}" VmRSS)
snap "$out/edit.0"
load1=$(cut -d' ' -f1-3 /proc/loadavg)
t0=$(now)
set_key $r1
wait "$watcher"
snap "$out/edit.1"
t1=$(jq .done "$out/edit.json")
api GET /metrics >"$out/metrics.1"
wall=$(calc "\"%.2f\", $t1 - $t0")
say "edit: replicas $r0 -> $r1; all $nodes nodes advertise nvidia.com/gpu=$((8 * r1)) in capacity and allocatable $wall s after it (load average $load1 before)"

# The controller's own account, from its log: PATCH answers after the edit.
iso0=$(date -u -d "@$t0" +%Y-%m-%dT%H:%M:%S.%3NZ)
awk -v t="$iso0" '$1 >= t && / advertised /' "$state/logs/controller.log" >"$out/advertised.log"
writes=$(wc -l <"$out/advertised.log")
again=$(awk '{ print $3 }' "$out/advertised.log" | sort | uniq -d | wc -l)
say "controller log: $writes advertisements written ($again nodes more than once), first answer $(head -1 "$out/advertised.log" | cut -c12-23), last $(tail -1 "$out/advertised.log" | cut -c12-23) (edit at $(echo "$iso0" | cut -c12-23))"

# --- 3. the baseline loop ---------------------------------------------------------------------------
# The change the controller wrote: labels (GFD's), capacity and allocatable of a node now.
k get node "$prefix-node-00000" -o json >"$out/node-r1.json"
body=$(jq -c --slurpfile r0 "$out/node-r0.json" '{
	metadata: {labels: (.metadata.labels | with_entries(select(.value != $r0[0].metadata.labels[.key])))},
	status: {capacity: .status.capacity, allocatable: .status.allocatable}}' "$out/node-r1.json")
snap "$out/loop.0"
tl=$(now)
for i in $(seq 0 $((sample - 1))); do
	k patch node "$(printf '%sloop-node-%05d' "$prefix" "$i")" --subresource=status --type=merge -p "$body" >/dev/null
done
loop=$(calc "\"%.2f\", $(now) - $tl")
snap "$out/loop.1"
# kwok's node-initialize stage fires again on a node that went NotReady (its
# leases lag on a loaded machine) and writes the status from its cache: a
# node it saw before the PATCH goes back to the old numbers. The controller
# writes its nodes again; the loop does not. Counted, after a second.
sleep 1
reverted=$(k get nodes -l gpushare.io/bench=${prefix}loop -o json |
	jq --arg v $((8 * r1)) '[.items[] | select(.status.capacity["nvidia.com/gpu"] != $v or .status.allocatable["nvidia.com/gpu"] != $v)] | length')
per_node=$(calc "\"%.4f\", $loop / $sample")
loop_n=$(calc "\"%.1f\", $per_node * $nodes")
ratio=$(calc "\"%.1f\", $loop_n / $wall")
ctl_hwm=$(vm "${pid[controller]}" VmHWM)

# --- 5. admission ---------------------------------------------------------------------------------
k create namespace "$ns" >/dev/null
until k -n "$ns" get serviceaccount default >/dev/null 2>&1; do sleep 0.2; done
python3 - "$npods" "$par" "$out" "$ns" "$prefix" <<'EOF'
import json, sys
n, par, out, ns, prefix = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
files = [open("%s/pods.%d.json" % (out, i), "w") for i in range(par)]
lists = [[] for _ in range(par)]
for i in range(n):
    gpus = "2" if i % 10 == 9 else "1"
    lists[i % par].append({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p-%05d" % i, "namespace": ns},
        "spec": {"nodeSelector": {"gpushare.io/bench": prefix},
                 "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"limits": {"nvidia.com/gpu": gpus}}}]}})
for f, items in zip(files, lists):
    json.dump({"apiVersion": "v1", "kind": "List", "items": items}, f)
    f.close()
EOF
rm -f "$out/ready"
python3 "$root/bench/controller_watch.py" pods "$ns" "$npods" "$out/ready" >"$out/pods.json" &
watcher=$!
until [ -f "$out/ready" ]; do sleep 0.05; done
snap "$out/pods.0"
tp=$(now)
cpids=()
for i in $(seq 0 $((par - 1))); do
	k create -f "$out/pods.$i.json" >/dev/null &
	cpids+=($!)
done
wait "${cpids[@]}"
tc=$(now)
wait "$watcher"
snap "$out/pods.1"
pw=$(calc "\"%.2f\", $(jq .done "$out/pods.json") - $tp")
refused=$(jq '.["failed:UnexpectedAdmissionError"] // 0' "$out/pods.json")
running=$(jq '.running // 0' "$out/pods.json")
[ "$refused" = $((npods / 10)) ] && [ "$running" = $((npods - npods / 10)) ] || {
	echo "bench: admission: expected $((npods - npods / 10)) running and $((npods / 10)) refused, got $(cat "$out/pods.json")" >&2
	exit 1
}
ctl_hwm=$(vm "${pid[controller]}" VmHWM)
ctl_rss=$(vm "${pid[controller]}" VmRSS)

# --- 4. the report -----------------------------------------------------------------------------------
echo
echo "gpushare controller, $nodes nodes of 8 T4 ($(nproc) CPUs; load average $load0 at the start)"
printf '%-52s %s\n' "controller: edit to all nodes advertising" "$wall s"
printf '%-52s %s\n' "  PATCHes in that time (nodes written twice or more)" "$writes ($again)"
printf '%-52s %s\n' "  nodes not Ready: first advertised / end of the edit" "$(jq .not_ready "$out/initial.json") / $(jq .not_ready "$out/edit.json")"
printf '%-52s %s\n' "kubectl patch --subresource=status loop" "$loop s for $sample nodes = $per_node s/node"
printf '%-52s %s\n' "  of its nodes set back by kwok afterwards" "$reverted of $sample"
printf '%-52s %s\n' "  extrapolated to $nodes nodes ($per_node s x $nodes)" "$loop_n s"
printf '%-52s %s\n' "ratio (goal >= 50x)" "${ratio}x $(awk -v r="$ratio" 'BEGIN { print (r >= 50 ? "PASS" : "MISSED") }')"
printf '%-52s %s\n' "controller RSS: peak (VmHWM) / at the end (goal <= 25 MB)" "$ctl_hwm MB / $ctl_rss MB $(awk -v r="$ctl_hwm" 'BEGIN { print (r <= 25 ? "PASS" : "MISSED") }')"
printf '%-52s %s\n' "controller RSS before the edit, $nodes nodes, no pods" "$ctl_rss0 MB"
echo
echo "CPU seconds (utime+stime) per window; in brackets the share of one core"
printf '%-26s %20s %20s %20s %20s\n' component "quiet ${tq}s" "edit ${wall}s" "loop ${loop}s" "pods ${pw}s"
for c in $comps; do
	row=$(printf '%-26s' "$c")
	for w in "quiet:$tq" "edit:$wall" "loop:$loop" "pods:$pw"; do
		d=$(cpu_delta "$out/${w%%:*}.0" "$out/${w%%:*}.1" "$c")
		row+=$(printf ' %20s' "$d ($(calc "\"%.0f%%\", 100 * $d / ${w#*:}"))")
	done
	echo "$row"
done
api_edit=$(cpu_delta "$out/edit.0" "$out/edit.1" kube-apiserver)
ctl_edit=$(cpu_delta "$out/edit.0" "$out/edit.1" controller)
echo "apiserver CPU during the edit: $api_edit s, $(calc "\"%.1f\", $api_edit / $ctl_edit")x the controller's $ctl_edit s; $(calc "\"%.2f\", $api_edit / $wall") of the $(nproc) cores"
echo "runnable but waiting for a CPU during the edit (/proc/PID/task/*/schedstat, summed over threads):"
row=
for c in $comps; do row+=" $c $(wait_delta "$out/edit.0" "$out/edit.1" "$c") s,"; done
echo " ${row%,}"
echo
echo "apiserver requests during the edit (its /metrics: count, mean latency):"
python3 - "$out/metrics.0" "$out/metrics.1" <<'EOF'
import re, sys
def load(p):
    d = {}
    for line in open(p):
        m = re.match(r'apiserver_request_duration_seconds_(sum|count)\{(.*)\} (\S+)$', line)
        if not m:
            continue
        lab = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
        if lab.get("verb") == "WATCH":
            continue
        key = "%s %s%s" % (lab["verb"], lab["resource"], "/" + lab["subresource"] if lab.get("subresource") else "")
        d.setdefault(key, [0.0, 0.0])[m.group(1) == "count"] += float(m.group(3))
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
rows = []
for k, (s, c) in b.items():
    s0, c0 = a.get(k, [0.0, 0.0])
    if c - c0 > 0:
        rows.append((c - c0, (s - s0) / (c - c0), k))
for c, m, k in sorted(rows, reverse=True)[:8]:
    print("  %-34s %7d  %7.1f ms" % (k, c, m * 1000))
EOF
echo
echo "CPU profile of the edit (share of one core per interval):"
awk -v t0="$t0" -v t1="$t1" -v hz="$hz" -v names="$comps" 'BEGIN { n = split(names, nm, " ") }
	$1 >= t0 - 1 && $1 <= t1 + 1 { rows[++r] = $0 }
	END {
		step = int((r - 1) / 12) + 1
		printf "%8s", "t (s)"; for (i = 1; i <= n; i++) printf " %12s", substr(nm[i], 1, 12); print ""
		for (j = 1; j + step <= r; j += step) {
			split(rows[j], a, " "); split(rows[j + step], b, " ")
			printf "%8.1f", a[1] - t0
			for (i = 1; i <= n; i++) printf " %11.0f%%", 100 * (b[i + 1] - a[i + 1]) / hz / (b[1] - a[1])
			print ""
		}
	}' "$out/cpu.txt"
echo
echo "admission: $npods pods ($refused asking for 2: Failed/UnexpectedAdmissionError), created by $par parallel kubectl create in $(calc "\"%.2f\", $tc - $tp") s"
echo "  all bound $(calc "\"%.2f\", $(jq .last_bound "$out/pods.json") - $tp") s, all admitted and Running or Failed $pw s after the creates began: $(calc "\"%.0f\", $npods / $pw") pods/s"
echo "  CPU: controller $(cpu_delta "$out/pods.0" "$out/pods.1" controller) s, kube-apiserver $(cpu_delta "$out/pods.0" "$out/pods.1" kube-apiserver) s, scheduler $(cpu_delta "$out/pods.0" "$out/pods.1" kube-scheduler) s, kwok $(cpu_delta "$out/pods.0" "$out/pods.1" kwok) s"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); files in $out"
