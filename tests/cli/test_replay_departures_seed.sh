# replay --departures --seed N: the seed of the scheduler's draws among tied
# nodes (docs/guide/replay.md "In trace time"). The same seed gives the same
# run byte for byte; on replay-small, where tasks often tie between nodes,
# seeds 1 and 2 place some on other nodes; the seed is named in the table,
# the JSON and the chart's title; --inflate is still a usage error.
. "$(dirname "$0")/lib.sh"
use_tmp
g=$TOP/tests/golden/replay-small

run replay "$g/nodes.csv" "$g/pods.csv" --departures --seed 1 -o csv --placements -
expect_rc 0 "--departures --seed 1"
one=$out
run replay "$g/nodes.csv" "$g/pods.csv" --departures --seed 1 -o csv --placements -
[ "$out" = "$one" ] || fail "--seed 1 twice: two runs"
run replay "$g/nodes.csv" "$g/pods.csv" --departures --seed 2 -o csv --placements -
expect_rc 0 "--departures --seed 2"
# The nodes column of the placements (before the measures' header).
nodes() { printf '%s\n' "$1" | sed -n '2,/^time_pct,/p' | grep -v '^time_pct,' | cut -d, -f1,4; }
[ "$(nodes "$one")" != "$(nodes "$out")" ] || fail "seeds 1 and 2 placed every task alike: the seed draws no tie"

run replay "$g/nodes.csv" "$g/pods.csv" --departures --seed 7
expect_rc 0 "the table"
expect_out_has "in trace time with departures, seed 7" "the table names the seed"
run replay "$g/nodes.csv" "$g/pods.csv" --departures -o json
expect_rc 0 "the JSON"
printf '%s\n' "$out" | python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["seed"] == 42 and d["departures"], d.get("seed")' ||
	fail "the JSON's seed (42 by default)"
run replay "$g/nodes.csv" "$g/pods.csv" --departures --seed 3 --svg -
expect_rc 0 "the chart"
expect_out_has "<title>Replay of nodes.csv and pods.csv in trace time, with departures, seed 3</title>" "the chart's title"

run replay "$g/nodes.csv" "$g/pods.csv" --departures --inflate 2
expect_rc 2 "--inflate with --departures"
expect_err_has "--inflate (of the paper's inflated workload) does not apply"
