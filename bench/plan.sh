#!/bin/sh
# bench/plan.sh GPUSHARE: `gpushare plan` on 5,000 pods and 2,000 nodes
# (bench/plan_gen.py, deterministic: five GPU pools, taints, zones, MIG
# layouts, quotas), against the named baseline: the per-pod offline
# `gpushare explain pod -f POD.yaml -f ...`, which judges one pod against
# every node with no index. Both also load and advertise the fleet; that
# fixed part is measured with one pod and taken out of the per-pod figures:
#   per pod = (time for N pods - time for 1 pod) / (N - 1)
# Prints the absolute time of the whole 5,000-pod plan (target < 1 s CPU)
# and the per-pod ratio explain / plan (target >= 20x). Medians of
# BENCH_REPS (default 5) runs, CPU time (user+sys).
set -eu
bin=${1:?usage: bench/plan.sh path/to/gpushare}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/bench/plan
reps=${BENCH_REPS:-5}
mkdir -p "$out"
cc -O2 -o "$root/build/bench/timeit" "$root/bench/timeit.c"
timeit=$root/build/bench/timeit
gen() { # dir pods
	if [ ! -f "$1/pods.yaml" ] || [ "$root/bench/plan_gen.py" -nt "$1/pods.yaml" ]; then
		python3 "$root/bench/plan_gen.py" "$1" 2000 "$2"
	fi
}
gen "$out/5000" 5000
gen "$out/50" 50
gen "$out/1" 1
nodes=$out/5000/nodes.yaml cm=$out/5000/configmap.yaml quota=$out/5000/quota.yaml
times=$out/times.txt
: >"$times"
run() { # label cmd...
	label=$1
	shift
	printf '%s %s\n' "$label" "$("$timeit" "$@")" >>"$times"
}
i=0
while [ "$i" -lt "$reps" ]; do
	run plan5000 "$bin" plan -f "$out/5000/pods.yaml" -f "$nodes" -f "$cm" -f "$quota"
	run plan1 "$bin" plan -f "$out/1/pods.yaml" -f "$nodes" -f "$cm" -f "$quota"
	run explain50 "$bin" explain pod -f "$out/50/pods.yaml" -f "$nodes" -f "$cm"
	run explain1 "$bin" explain pod -f "$out/1/pods.yaml" -f "$nodes" -f "$cm"
	i=$((i + 1))
done
median() { # label field(2=wall, 3=cpu)
	awk -v l="$1" -v f="$2" '$1 == l { print $f }' "$times" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
p5000=$(median plan5000 3) p1=$(median plan1 3) e50=$(median explain50 3) e1=$(median explain1 3)
w5000=$(median plan5000 2)
awk -v p5000="$p5000" -v p1="$p1" -v e50="$e50" -v e1="$e1" -v w="$w5000" 'BEGIN {
	pp = (p5000 - p1) / 4999; ep = (e50 - e1) / 49
	if (pp <= 0) pp = 1e-9
	r = ep / pp
	printf "gpushare plan: 5000 pods on 2000 nodes, medians of runs, CPU seconds\n"
	printf "%-58s %9.3f s (wall %.3f s) %s\n", "plan, whole run (load, advertise, place, print)", p5000, w, (p5000 < 1 ? "PASS" : "FAIL")
	printf "%-58s %9.3f s\n", "  of which loading and advertising the fleet (1 pod)", p1
	printf "%-58s %9.3f ms\n", "plan, per pod", pp * 1000
	printf "%-58s %9.3f ms\n", "baseline: explain pod offline, per pod (50 pods)", ep * 1000
	printf "%-58s %8.1fx %s\n", "ratio baseline / plan per pod (target >= 20x)", r, (r >= 20 ? "PASS" : "FAIL")
	exit (p5000 < 1 && r >= 20) ? 0 : 1
}'
