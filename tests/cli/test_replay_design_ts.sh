# A timeSlicing N design places as `gpushare replay --replicas N` does
# (docs/guide/replay.md "Scheduling"): per percent the same allocation, held,
# fragmentation, bound and pending, at seeds 2 and 42 with N 2, 4 and 8, on
# replay-small (7 nodes: ties drawn from the seed) and on a fleet of 161
# nodes (from 100 nodes on, the scheduler's sample of numFeasibleNodesToFind
# from a rotating start, as plan walks it).
. "$(dirname "$0")/lib.sh"
use_tmp
g=$TOP/tests/golden/replay-small
# 161 nodes: replay-small's seven kinds in turn, 23 of each.
awk -F, 'NR == 1 { print; next } { kind[NR - 2] = $0 }
	END { for (i = 0; i < 161; i++) { split(kind[i % 7], f, ","); printf "big-%03d,%s,%s,%s,%s\n", i, f[2], f[3], f[4], f[5] } }' \
	"$g/nodes.csv" >"$tmp/nodes.csv"

same() { # NODES SEED N
	printf 'name: ts%s\npools:\n  "*":\n    timeSlicing: {replicas: %s}\n' "$3" "$3" >"$tmp/ts.yaml"
	run replay "$1" "$g/pods.csv" --seed "$2" --replicas "$3" -o json
	expect_rc 0 "replay $1 --seed $2 --replicas $3"
	printf '%s\n' "$out" >"$tmp/r.json"
	run replay "$1" "$g/pods.csv" --seed "$2" --design "$tmp/ts.yaml" -o json
	expect_rc 0 "the ts$3 design of $1 at seed $2"
	printf '%s\n' "$out" >"$tmp/d.json"
	python3 - "$tmp/r.json" "$tmp/d.json" <<'EOF' || fail "$1, seed $2, N $3: the design and the replay differ"
import json, sys
r = json.load(open(sys.argv[1]))
d = json.load(open(sys.argv[2]))["designs"][0]
assert len(r["points"]) == len(d["points"]) > 50, (len(r["points"]), len(d["points"]))
for p, q in zip(r["points"], d["points"]):
    assert p["arrived_pct"] == q["arrived_pct"], (p, q)
    for a, b in (("asked_pct", "alloc_pct"), ("alloc_pct", "held_pct"), ("frag_pct", "frag_pct"),
                 ("bound", "bound"), ("pending", "pending")):
        assert abs(p[a] - q[b]) < 1e-3, (p["arrived_pct"], a, p[a], b, q[b])
EOF
}

for seed in 2 42; do
	for n in 2 4 8; do
		same "$g/nodes.csv" $seed $n
		same "$tmp/nodes.csv" $seed $n
	done
done
