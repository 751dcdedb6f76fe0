#!/bin/sh
# bench/replay.sh GPUSHARE: `gpushare replay` of the whole openb trace of
# alibaba/clusterdata (cluster-trace-gpu-v2023/csv: 1,523 nodes, 6,212 GPUs,
# 8,152 tasks) at seed 42, inflation 1.3, 4 replicas per GPU: CPU time
# (user+sys) and peak RSS of one run, against the goals (10 s CPU, 150 MB).
# The CSV files are taken from TRACE_DIR (default build/openb), downloaded
# there from GitHub when absent.
set -eu
bin=${1:?usage: bench/replay.sh path/to/gpushare}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${TRACE_DIR:-$root/build/openb}
url=https://raw.githubusercontent.com/alibaba/clusterdata/master/cluster-trace-gpu-v2023/csv
nodes=$dir/openb_node_list_all_node.csv
pods=$dir/openb_pod_list_default.csv
for f in "$nodes" "$pods"; do
	if [ ! -f "$f" ]; then
		mkdir -p "$dir"
		curl -fsSL -o "$f.tmp" "$url/$(basename "$f")" && mv "$f.tmp" "$f"
	fi
done
python3 - "$bin" "$nodes" "$pods" <<'PY'
import resource, subprocess, sys
bin, nodes, pods = sys.argv[1:4]
out = subprocess.run([bin, "replay", nodes, pods, "--seed", "42", "--inflate", "1.3"],
                     check=True, capture_output=True, text=True).stdout
r = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu, rss = r.ru_utime + r.ru_stime, r.ru_maxrss / 1024.0
print(out.rstrip().splitlines()[-2])
print(out.rstrip().splitlines()[-1])
print("replay of the openb trace: CPU %.2f s (goal 10 s: %.2fx of it), peak RSS %.1f MB "
      "(goal 150 MB: %.2fx of it)" % (cpu, cpu / 10, rss, rss / 150))
sys.exit(0 if cpu <= 10 and rss <= 150 else 1)
PY
