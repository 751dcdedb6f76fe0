#!/bin/sh
# bench/run.sh GPUSHARE: `gpushare check` over a 5 MB stream of 8,000 pods
# (bench/gen.py, deterministic) against three baselines, in one run:
#   - the seed's way: /usr/bin/python3 + PyYAML safe_load_all, pure-Python
#     loader, same check logic (bench/pycheck.py)      target >= 100x
#   - the same with PyYAML's CSafeLoader (libyaml)      target >= 10x
#   - libyaml's bare event parser over the file
#     (bench/yaml_events.c: events pulled, nothing else) target >= 0.8x
# Each command runs several times, interleaved; medians are compared.
# Ratios use CPU time (user+sys: steady on a shared machine); wall-clock
# medians are shown too. BENCH_REPS (default 7) and BENCH_PY_REPS (default 3,
# the pure-Python loader takes seconds per run) set the repetitions.
set -eu
bin=${1:?usage: bench/run.sh path/to/gpushare}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/bench
mkdir -p "$out"
reps=${BENCH_REPS:-7}
pyreps=${BENCH_PY_REPS:-3}
py=/usr/bin/python3
cflags=$(pkg-config --cflags yaml-0.1)
libs=$(pkg-config --libs yaml-0.1)

cc -O2 -o "$out/yaml_events" "$root/bench/yaml_events.c" $cflags $libs
cc -O2 -o "$out/timeit" "$root/bench/timeit.c"
data=$out/pods.yaml
if [ ! -f "$data" ] || [ "$root/bench/gen.py" -nt "$data" ]; then
	python3 "$root/bench/gen.py" "$data" 8000
fi
size=$(wc -c <"$data")
pods=$(grep -c '^kind: Pod' "$data")

have_py=1
"$py" -c 'import yaml; yaml.CSafeLoader' 2>/dev/null || have_py=0

# The baselines must say the same thing as gpushare, or the race is void.
"$bin" check "$data" >"$out/gpushare.out" || true
if [ $have_py = 1 ]; then
	"$py" "$root/bench/pycheck.py" c "$data" >"$out/pycheck.out" || true
	if ! cmp -s "$out/gpushare.out" "$out/pycheck.out"; then
		echo "bench: gpushare and the PyYAML check disagree on $data" >&2
		diff "$out/gpushare.out" "$out/pycheck.out" | head -5 >&2
		exit 1
	fi
fi

times=$out/times.txt
: >"$times"
run() { # label cmd...
	label=$1
	shift
	printf '%s %s\n' "$label" "$("$out/timeit" "$@")" >>"$times"
}
i=0
while [ $i -lt "$reps" ]; do
	run gpushare "$bin" check "$data"
	run events "$out/yaml_events" "$data"
	[ $have_py = 1 ] && run pyc "$py" "$root/bench/pycheck.py" c "$data"
	[ $have_py = 1 ] && [ $i -lt "$pyreps" ] && run pypure "$py" "$root/bench/pycheck.py" pure "$data"
	i=$((i + 1))
done

median() { # label field(2=wall, 3=cpu)
	awk -v l="$1" -v f="$2" '$1 == l { print $f }' "$times" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
us_cpu=$(median gpushare 3)
us_wall=$(median gpushare 2)

echo "gpushare check: $pods pods, $size bytes ($data), medians of $reps runs ($pyreps for pure Python)"
printf '%-40s %12s %12s %10s %10s %8s %6s\n' baseline "baseline s" "gpushare s" "ratio" "wall ratio" target result
status=0
row() { # label name target
	b_cpu=$(median "$1" 3)
	b_wall=$(median "$1" 2)
	line=$(awk -v b="$b_cpu" -v u="$us_cpu" -v bw="$b_wall" -v uw="$us_wall" -v t="$3" -v n="$2" 'BEGIN {
		r = b / u; rw = bw / uw
		printf "%-40s %12.4f %12.4f %9.2fx %9.2fx %7sx %6s", n, b, u, r, rw, t, (r >= t ? "PASS" : "FAIL")
	}')
	echo "$line"
	case "$line" in *FAIL) status=1 ;; esac
}
if [ $have_py = 1 ]; then
	row pypure "python3 + PyYAML SafeLoader (pure)" 100
	row pyc "python3 + PyYAML CSafeLoader" 10
else
	echo "python3 + PyYAML: not available at $py, skipped"
fi
row events "libyaml event parser, bare" 0.8
echo "(seconds: median CPU time, user+sys; ratio = baseline / gpushare, higher is faster)"
echo
"$root/bench/plan.sh" "$bin" || status=1
exit $status
