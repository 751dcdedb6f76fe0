#!/bin/sh
# bench/scale.sh GPUSHARE: every engine entry point at 1x and 4x its input
# (bench/scale_gen.py), CPU time (user+sys) and peak RSS of the gpushare
# process, and the ratios 4x / 1x. A linear cost gives about 4 (less where
# the fixed start-up cost still shows); a quadratic one 16. Fails when a
# CPU or RSS ratio is above BENCH_MAX_RATIO (4.5), or a run exits 2 (bad
# input). CPU time is the least of BENCH_SCALE_REPS (default 3) runs, the
# 1x and 4x runs interleaved: on a shared machine contention only adds to
# it. docs/design/complexity.md says what each case measures.
set -eu
bin=${1:?usage: bench/scale.sh path/to/gpushare}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/bench/scale
reps=${BENCH_SCALE_REPS:-3}
limit=${BENCH_MAX_RATIO:-4.5}
mkdir -p "$out"
cc -O2 -o "$root/build/bench/timeit" "$root/bench/timeit.c"
timeit=$root/build/bench/timeit
for s in 1 4; do
	if [ ! -f "$out/$s/claims.yaml" ] || [ "$root/bench/scale_gen.py" -nt "$out/$s/claims.yaml" ] ||
		[ "$root/bench/gen.py" -nt "$out/$s/claims.yaml" ]; then
		python3 "$root/bench/scale_gen.py" "$out/$s" "$s"
	fi
done

# name|arguments, D the data directory of the scale. One line per entry point
# (and per dimension where a case holds the other still).
cases='check|check D/check.yaml
lint|lint D/lint.yaml
advertise|advertise -f D/configmap.yaml --node node-00001 -f D/fleet.yaml
explain-node|explain node node-00001 -f D/fleet.yaml -f D/configmap.yaml
explain-pod|explain pod -f D/pod.yaml -f D/nodes.yaml -f D/configmap.yaml -f D/bound.yaml
explain-pod-lists|explain pod -f D/pod.json -f D/nodes.json -f D/pods.json
explain-quota|explain quota team-0 -f D/quotas.json --request nvidia.com/gpu=1
plan-pods|plan -f D/plan-pods.yaml -f D/plan-fixed-nodes.yaml -f D/configmap.yaml -f D/quota.yaml
plan-pods-json|plan -f D/plan-pods.yaml -f D/plan-fixed-nodes.yaml -f D/configmap.yaml -f D/quota.yaml -o json
plan-existing|plan -f D/pod.yaml -f D/fleet-bound.yaml -f D/configmap.yaml -f D/quota.yaml
plan-nodes|plan -f D/plan-fixed-pods.yaml -f D/plan-nodes.yaml -f D/configmap.yaml -o json
plan-whatif|plan -f D/plan-fixed-pods.yaml -f D/plan-nodes.yaml -f D/configmap.yaml --what-if D/whatif.yaml -o json
status|status -f D/list.json
report|report --html /dev/null -f D/nodes.yaml -f D/configmap.yaml -f D/bound.yaml -f D/quota.yaml
webhook-names|webhook --review D/review-names.json -f D/small-nodes.yaml -f D/configmap.yaml
webhook-nodes|webhook --review D/review.json -f D/webhook-nodes.yaml -f D/configmap.yaml
dra-translate|dra translate -f D/configmap.yaml -f D/translate.yaml
dra-prepare|dra prepare --slices D/slices.yaml D/claims.yaml'

times=$out/times.txt
: >"$times"
i=0
while [ "$i" -lt "$reps" ]; do
	echo "$cases" | while IFS='|' read -r name args; do
		for s in 1 4; do
			a=$(echo "$args" | sed "s#D/#$out/$s/#g")
			# shellcheck disable=SC2086 # the arguments are words
			printf '%s %s %s\n' "$name" "$s" "$("$timeit" "$bin" $a 2>/dev/null)" >>"$times"
		done
	done
	i=$((i + 1))
done

echo "gpushare entry points at 1x and 4x their input (bench/scale_gen.py), least CPU of $reps runs"
printf '%-18s %9s %9s %7s %9s %9s %7s %6s\n' case "cpu 1x s" "cpu 4x s" ratio "rss 1x MB" "rss 4x MB" ratio result
echo "$cases" | awk -F'|' '{ print $1 }' >"$out/names.txt"
awk -v limit="$limit" '
function least(a, n,   i, m) {
	m = a[1]
	for (i = 2; i <= n; i++) if (a[i] < m) m = a[i]
	return m
}
FNR == NR { order[++n] = $1; next }
{ k = $1 SUBSEP $2; c = ++cnt[k]; cpu[k, c] = $4; rss[k, c] = $6; if ($5 > 1) bad[$1] = $5 }
END {
	status = 0
	for (o = 1; o <= n; o++) {
		name = order[o]
		for (s = 1; s <= 4; s += 3) {
			k = name SUBSEP s
			for (c = 1; c <= cnt[k]; c++) { x[c] = cpu[k, c]; y[c] = rss[k, c] }
			mc[s] = least(x, cnt[k]); mr[s] = least(y, cnt[k]) / 1024
		}
		rc = mc[1] > 0 ? mc[4] / mc[1] : 0
		rr = mr[1] > 0 ? mr[4] / mr[1] : 0
		ok = rc <= limit && rr <= limit && !(name in bad)
		if (!ok) status = 1
		printf "%-18s %9.3f %9.3f %6.2fx %9.1f %9.1f %6.2fx %6s%s\n", name, mc[1], mc[4], rc,
			mr[1], mr[4], rr, ok ? "PASS" : "FAIL", (name in bad) ? " (exit " bad[name] ")" : ""
	}
	printf "(a ratio above %s fails: the cost grows faster than the input)\n", limit
	exit status
}' "$out/names.txt" "$times"
