#!/bin/sh
# bench/scale_big.sh GPUSHARE (make bench-scale): the two commands a large
# fleet strains, at 10,000 nodes (bench/plan_gen.py's pools) and 25,000 pods:
#   plan -o json   25,000 pods to place over the 10,000 nodes
#   explain pod    one pod against the 10,000 nodes with 25,000 pods bound
# Each must stay under 200 MB peak RSS and 10 s CPU. BENCH_HUGE=1 adds plan
# (table) with 100,000 pods over 20,000 nodes, printed without a limit.
# Then DRA's extended resources (plan_gen.py --dra 6: one node in six on
# the DRA path, its GPUs in a ResourceSlice, the gpu.nvidia.com DeviceClass
# serving nvidia.com/gpu, one pod bound per node, its claim allocated on a
# DRA node), on Kubernetes v1.37.2 where DRAExtendedResource is on:
#   plan -o json   200 pods on 1,000 and on 5,000 nodes; a pod asking
#                  nvidia.com/gpu may go to any node, each DRA node's
#                  devices are tried for it
# under the same limits.
# One run each (they take seconds); CPU is user+sys of the gpushare process.
# BENCH_BASE=REV (make bench-scale BENCH_BASE=main) names a baseline: the
# gpushare of that git revision, built once into build/bench/base/SHA, runs
# each command just before GPUSHARE; its line is printed, then the ratios
# GPUSHARE / baseline of CPU and peak RSS, and both outputs must be the same
# byte for byte (else the run fails: a faster wrong answer is no gain).
set -eu
bin=${1:?usage: bench/scale_big.sh path/to/gpushare}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/bench/big
mkdir -p "$out"
cc -O2 -o "$root/build/bench/timeit" "$root/bench/timeit.c"
timeit=$root/build/bench/timeit
gen() { # dir nodes pods bound [plan_gen.py options]
	gen_dir=$1 gen_args="$2 $3 $4"
	shift 4
	if [ ! -f "$gen_dir/bound.yaml" ] || [ "$root/bench/plan_gen.py" -nt "$gen_dir/bound.yaml" ]; then
		# shellcheck disable=SC2086 # the three numbers
		python3 "$root/bench/plan_gen.py" "$@" "$gen_dir" $gen_args
		# the first pod of the batch alone, for explain pod
		awk 'NR > 1 && /^---$/ { exit } { print }' "$gen_dir/pods.yaml" >"$gen_dir/one.yaml"
	fi
}
base=
if [ -n "${BENCH_BASE:-}" ]; then
	sha=$(git -C "$root" rev-parse --verify "$BENCH_BASE^{commit}")
	dir=$root/build/bench/base/$sha
	if [ ! -x "$dir/build/gpushare" ]; then
		echo "building the baseline $BENCH_BASE ($sha) in $dir"
		rm -rf "$dir"
		mkdir -p "$dir"
		git -C "$root" archive "$sha" | tar -x -C "$dir"
		make -C "$dir" -j2 build/gpushare >"$dir.log" 2>&1 ||
			{ echo "bench: building $BENCH_BASE failed, see $dir.log" >&2; exit 1; }
	fi
	base=$dir/build/gpushare
fi
status=0
line() { # label limit wall cpu exit rss_kib
	awk -v l="$1" -v lim="$2" -v w="$3" -v c="$4" -v x="$5" -v r="$6" 'BEGIN {
		mb = r / 1024
		ok = x < 2 && (!lim || (mb < 200 && c < 10))
		printf "%-44s %8.2f s cpu %8.2f s wall %8.1f MB  %s\n", l, c, w, mb,
			lim ? (ok ? "PASS" : "FAIL") : (x < 2 ? "" : "FAIL (exit " x ")")
		exit !ok
	}'
}
row() { # label limit(1 = 200 MB and 10 s, 0 = none) gpushare-args...
	label=$1 limit=$2
	shift 2
	if [ -n "$base" ]; then
		b=$("$timeit" -o "$out/base.out" "$base" "$@")
		# shellcheck disable=SC2086 # the four fields
		line "  baseline $BENCH_BASE" 0 $b || status=1
	fi
	r=$("$timeit" -o "$out/run.out" "$bin" "$@")
	# shellcheck disable=SC2086 # the four fields
	line "$label" "$limit" $r || status=1
	[ -n "$base" ] || return 0
	# shellcheck disable=SC2086 # the four fields of each
	set -- $b $r
	awk -v bc="$2" -v br="$4" -v c="$6" -v r="$8" 'BEGIN {
		printf "%-44s %8.2fx cpu %24.2fx rss\n", "  ratio to the baseline (lower is better)",
			c / bc, r / br
	}'
	if ! cmp -s "$out/base.out" "$out/run.out"; then
		echo "  FAIL: the output differs from the baseline's ($out/base.out, $out/run.out)"
		status=1
	fi
}
gen "$out/10k" 10000 25000 25000
d=$out/10k
echo "gpushare on 10,000 nodes and 25,000 pods (bench/plan_gen.py), one run each; limits 200 MB, 10 s${base:+; baseline $BENCH_BASE}"
row "plan -o json: 25,000 pods on 10,000 nodes" 1 \
	plan -f "$d/pods.yaml" -f "$d/nodes.yaml" -f "$d/configmap.yaml" -f "$d/quota.yaml" -o json
row "explain pod: 10,000 nodes, 25,000 pods bound" 1 \
	explain pod -f "$d/one.yaml" -f "$d/nodes.yaml" -f "$d/configmap.yaml" -f "$d/bound.yaml"
if [ "${BENCH_HUGE:-0}" = 1 ]; then
	gen "$out/20k" 20000 100000 1
	d=$out/20k
	row "plan (table): 100,000 pods on 20,000 nodes" 0 \
		plan -f "$d/pods.yaml" -f "$d/nodes.yaml" -f "$d/configmap.yaml" -f "$d/quota.yaml"
fi
echo "DRA: one node in six on the DRA path (plan_gen.py --dra 6), a pod bound on each node, v1.37.2"
for n in 1,000 5,000; do
	m=$(echo "$n" | tr -d ,)
	gen "$out/dra-$m" "$m" 200 "$m" --dra 6
	d=$out/dra-$m
	row "plan -o json: 200 pods on $n nodes" 1 \
		plan -f "$d/pods.yaml" -f "$d/nodes.yaml" -f "$d/configmap.yaml" -f "$d/bound.yaml" \
		-f "$d/dra.yaml" --kubernetes-version v1.37.2 -o json
done
exit $status
