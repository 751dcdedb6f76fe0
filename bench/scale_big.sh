#!/bin/sh
# bench/scale_big.sh GPUSHARE (make bench-scale): the two commands a large
# fleet strains, at 10,000 nodes (bench/plan_gen.py's pools) and 25,000 pods:
#   plan -o json   25,000 pods to place over the 10,000 nodes
#   explain pod    one pod against the 10,000 nodes with 25,000 pods bound
# Each must stay under 200 MB peak RSS and 10 s CPU. BENCH_HUGE=1 adds plan
# (table) with 100,000 pods over 20,000 nodes, printed without a limit.
# One run each (they take seconds); CPU is user+sys of the gpushare process.
set -eu
bin=${1:?usage: bench/scale_big.sh path/to/gpushare}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/bench/big
mkdir -p "$out"
cc -O2 -o "$root/build/bench/timeit" "$root/bench/timeit.c"
timeit=$root/build/bench/timeit
gen() { # dir nodes pods bound
	if [ ! -f "$1/bound.yaml" ] || [ "$root/bench/plan_gen.py" -nt "$1/bound.yaml" ]; then
		python3 "$root/bench/plan_gen.py" "$1" "$2" "$3" "$4"
		# the first pod of the batch alone, for explain pod
		awk 'NR > 1 && /^---$/ { exit } { print }' "$1/pods.yaml" >"$1/one.yaml"
	fi
}
status=0
row() { # label limit(1 = 200 MB and 10 s, 0 = none) cmd...
	label=$1 limit=$2
	shift 2
	set -- $("$timeit" "$@")
	awk -v l="$label" -v w="$1" -v c="$2" -v x="$3" -v r="$4" -v lim="$limit" 'BEGIN {
		mb = r / 1024
		ok = x < 2 && (!lim || (mb < 200 && c < 10))
		printf "%-44s %8.2f s cpu %8.2f s wall %8.1f MB  %s\n", l, c, w, mb,
			lim ? (ok ? "PASS" : "FAIL") : (x < 2 ? "" : "FAIL (exit " x ")")
		exit !ok
	}' || status=1
}
gen "$out/10k" 10000 25000 25000
d=$out/10k
echo "gpushare on 10,000 nodes and 25,000 pods (bench/plan_gen.py), one run each; limits 200 MB, 10 s"
row "plan -o json: 25,000 pods on 10,000 nodes" 1 \
	"$bin" plan -f "$d/pods.yaml" -f "$d/nodes.yaml" -f "$d/configmap.yaml" -f "$d/quota.yaml" -o json
row "explain pod: 10,000 nodes, 25,000 pods bound" 1 \
	"$bin" explain pod -f "$d/one.yaml" -f "$d/nodes.yaml" -f "$d/configmap.yaml" -f "$d/bound.yaml"
if [ "${BENCH_HUGE:-0}" = 1 ]; then
	gen "$out/20k" 20000 100000 1
	d=$out/20k
	row "plan (table): 100,000 pods on 20,000 nodes" 0 \
		"$bin" plan -f "$d/pods.yaml" -f "$d/nodes.yaml" -f "$d/configmap.yaml" -f "$d/quota.yaml"
fi
exit $status
