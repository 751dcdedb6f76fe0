# gpushare replay --html/--svg: the charts written next to the usual output
# (which they leave unchanged), the page and the picture as documents (one
# chart per measure in order, one curve per design, the legend's names
# escaped), '-' as the only thing on standard output, the usage errors of
# two things on standard output, the charts of --departures in trace time,
# and a file that cannot be written.
# How the charts lay out in Chromium: make report-check (tests/report/chart.sh).
. "$(dirname "$0")/lib.sh"
use_tmp
g=$TOP/tests/golden/replay-small
d=$TOP/docs/guide/designs
five=(--design "$d/ts4.yaml" --design "$d/ts2.yaml" --design "$d/mig-balanced.yaml" --design "$d/dra-shares.yaml" --design "$d/whole.yaml")

run replay "$g/nodes.csv" "$g/pods.csv" --seed 2 "${five[@]}"
expect_rc 0 "the comparison"
table=$out
run replay "$g/nodes.csv" "$g/pods.csv" --seed 2 "${five[@]}" --html "$tmp/c.html" --svg "$tmp/c.svg"
expect_rc 0 "the comparison and its charts"
[ "$out" = "$table" ] || fail "the charts changed the table"
expect_err_has "gpushare replay: wrote $tmp/c.html and $tmp/c.svg: 4 charts, 5 curves" "what was written"
python3 - "$tmp/c.svg" "$tmp/c.html" <<'EOF' || fail "the documents"
import re, sys, xml.dom.minidom as md
svg, page = sys.argv[1], open(sys.argv[2], encoding="utf-8").read()
doc = md.parse(svg)
def cls(e):
    return e.getAttribute("class").split()
charts = [g for g in doc.getElementsByTagName("g") if "chart" in cls(g)]
assert [c.getAttribute("data-metric") for c in charts] == ["alloc", "frag", "stranded", "pending"], charts
for c in charts:
    curves = [p for p in c.getElementsByTagName("polyline") if "curve" in cls(p)]
    assert [p.getAttribute("data-series") for p in curves] == ["0", "1", "2", "3", "4"], c.getAttribute("data-metric")
    assert all(len(p.getAttribute("points").split()) > 50 for p in curves)
    assert len([t for t in c.getElementsByTagName("text") if "xt" in cls(t)]) >= 3
keys = [g for g in doc.getElementsByTagName("g") if "key" in cls(g)]
names = [k.getElementsByTagName("text")[0].firstChild.data for k in keys]
assert names == ["ts4", "ts2", "mig-balanced", "dra-shares", "whole"], names
title = doc.getElementsByTagName("title")[0].firstChild.data
assert title == "Replay of nodes.csv and pods.csv, seed 2, inflation 1.3", title
assert page.startswith("<!DOCTYPE html>")
assert "Content-Security-Policy\" content=\"default-src 'none'" in page
assert "<script" not in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
assert re.findall(r'<svg class="chart" data-metric="(\w+)"', page) == ["alloc", "frag", "stranded", "pending"]
assert page.count('<polyline class="curve"') == 20
assert re.findall(r'<span class="clip">([^<]*)</span>', page) == ["ts4", "ts2", "mig-balanced", "dra-shares", "whole"]
EOF

# standard output: the chart alone
run replay "$g/nodes.csv" "$g/pods.csv" --seed 2 "${five[@]}" --svg -
expect_rc 0 "the picture on standard output"
case "$out" in '<?xml version="1.0" encoding="UTF-8"?>'*'</svg>') ;; *) fail "standard output is not the picture alone" ;; esac
case "$out" in *DESIGN*) fail "the table is on standard output too" ;; esac
run replay "$g/nodes.csv" "$g/pods.csv" --html - --svg "$tmp/p.svg"
expect_rc 0 "the page on standard output, the picture in a file"
case "$out" in '<!DOCTYPE html>'*'</html>') ;; *) fail "standard output is not the page alone" ;; esac
[ -s "$tmp/p.svg" ] || fail "the picture next to it"

# two things on standard output: usage errors
for args in "--svg - -o csv" "--html - --svg -" "--svg - --placements -" "--html - -o table"; do
	read -ra a <<<"$args"
	run replay "$g/nodes.csv" "$g/pods.csv" "${a[@]}"
	expect_rc 2 "$args"
	expect_err_has "writes the chart to standard output: not with" "$args"
done
run replay "$g/nodes.csv" "$g/pods.csv" --svg - -o csv
expect_err_has "gpushare replay: --svg - writes the chart to standard output: not with -o" "the wording"

# without --design: one curve, time-slicing xN, and no stranded chart (not measured)
run replay "$g/nodes.csv" "$g/pods.csv" --replicas 2 -o csv --html "$tmp/ts2.html"
expect_rc 0 "the replay's chart"
expect_out_has "arrived_pct,samples,alloc_pct" "-o csv still printed"
expect_err_has "3 charts, 1 curve" "what was written"
grep -o '<svg class="chart" data-metric="[a-z]*"' "$tmp/ts2.html" | tr '\n' ' ' | grep -qx '<svg class="chart" data-metric="alloc" <svg class="chart" data-metric="frag" <svg class="chart" data-metric="pending" ' || fail "the replay's charts"
grep -q '<span class="clip">time-slicing x2</span>' "$tmp/ts2.html" || fail "the curve's name"

# --departures: the same run in trace time, charted against time; the CSV unchanged
dep=$TOP/tests/golden/replay-departures
run replay "$dep/nodes.csv" "$dep/pods.csv" --departures -o csv
expect_rc 0 "the replay in trace time"
csv=$out
run replay "$dep/nodes.csv" "$dep/pods.csv" --departures -o csv --html "$tmp/dep.html" --svg "$tmp/dep.svg"
expect_rc 0 "the replay in trace time and its charts"
[ "$out" = "$csv" ] || fail "the charts changed --departures' CSV"
expect_err_has "gpushare replay: wrote $tmp/dep.html and $tmp/dep.svg: 4 charts, 1 curve" "what was written"
grep -o '<svg class="chart" data-metric="[a-z]*"' "$tmp/dep.html" | tr '\n' ' ' | grep -qx '<svg class="chart" data-metric="alloc" <svg class="chart" data-metric="frag" <svg class="chart" data-metric="running" <svg class="chart" data-metric="pending" ' || fail "the charts in trace time"
grep -q '<h1>Replay of nodes.csv and pods.csv in trace time, with departures, seed 42</h1>' "$tmp/dep.html" || fail "the page's title"
grep -q '>trace time (minutes since the first arrival)</text>' "$tmp/dep.svg" || fail "the time axis"
python3 -c 'import sys, xml.dom.minidom as d; d.parse(sys.argv[1])' "$tmp/dep.svg" || fail "the picture in trace time is not well-formed XML"
run replay "$dep/nodes.csv" "$dep/pods.csv" --departures --svg - --placements -
expect_rc 2 "--departures, --svg - and --placements -"
expect_err_has "gpushare replay: --svg - writes the chart to standard output: not with --placements -" "the wording"

# a design named with markup: text, in the table, the page and the picture
printf '%s\n' "name: '<b>x</b> & \"q\" ''s'" 'pools:' '  "*":' '    whole: {}' >"$tmp/evil.yaml"
run replay "$g/nodes.csv" "$g/pods.csv" --design "$tmp/evil.yaml" --html "$tmp/e.html" --svg "$tmp/e.svg"
expect_rc 0 "a design named with markup"
python3 -c 'import sys, xml.dom.minidom as d; d.parse(sys.argv[1])' "$tmp/e.svg" || fail "the picture is not well-formed XML"
for f in e.html e.svg; do
	grep -q '<b>' "$tmp/$f" && fail "$f: the name's markup is markup"
	grep -q '&lt;b&gt;x&lt;/b&gt; &amp; &quot;q&quot; &#39;s' "$tmp/$f" || fail "$f: the name is not shown as text"
done

# a file that cannot be written
run replay "$g/nodes.csv" "$g/pods.csv" --svg "$tmp/no/such/dir/c.svg"
expect_rc 2 "an unwritable chart"
expect_err_has "gpushare replay: cannot write '$tmp/no/such/dir/c.svg': No such file or directory" "the path and why"
exit 0
