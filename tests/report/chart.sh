#!/usr/bin/env bash
# make report-check, second part: `gpushare replay --html/--svg` laid out by
# headless Chromium. The charts of tests/golden/replay-small at seed 2 under
# the five designs of docs/guide/designs/ (ts4, ts2, mig-balanced,
# dra-shares, whole) and two of its own (a name of markup and quotes, a
# name of 63 characters without a space): the page at 1400 and 800 px and
# the SVG picture at 1000 px, each checked in the page (chart.py: a curve
# per design in every chart, each in its legend key's colour and inside the
# plot, ticks rising, no text out of its chart or on another, the legend's
# names as written; layout.py for the page: no box overflows, nothing
# sticks out of the window, the summary in the first screen) and
# screenshotted, the picture's designs' colours counted in its screenshot;
# the replay without --design (three charts, one curve); the replay with
# --departures, its page at 800 px and its picture (four charts against
# trace time, one curve). A control picture with a curve removed, one moved
# out of its plot, its ticks made to overlap and the long name unsqueezed
# must fail the check.
#   tests/report/chart.sh GPUSHARE [OUTDIR]   (OUTDIR default build/report-layout)
set -u
bin=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-$top/build/report-layout}
here=$top/tests/report
g=$top/tests/golden/replay-small
d=$top/docs/guide/designs
. "$here/lib.sh"
mkdir -p "$out" || exit 1
# check NAME PAGE WIDTH METRICS NAMES: one Chromium run, a screenshot and the DOM
# measured by chart.py (and layout.py for a page).
check() {
	local name=$1 page=$2 w=$3 metrics=$4 names=$5 v
	case "$page" in
	*.html)
		python3 "$here/layout.py" inject "$page" "$T/$name-layout.html" &&
			python3 "$here/chart.py" inject "$T/$name-layout.html" "$T/$name-check.html" || { fail "$name: inject"; return; }
		;;
	*) python3 "$here/chart.py" inject "$page" "$T/$name-check.svg" || { fail "$name: inject"; return; } ;;
	esac
	chrome --screenshot="$out/$name.png" --dump-dom --window-size="$w,900" "file://$T/$name-check.${page##*.}" >"$out/$name.dom.html"
	[ -s "$out/$name.png" ] && echo "screenshot: $out/$name.png" || fail "$name: no screenshot at $w px"
	if v=$(python3 "$here/chart.py" verdict "$out/$name.dom.html" "$metrics" "$names"); then
		echo "$name at $w px: $v"
	else
		fail "$name at $w px:"; echo "$v" | sed 's/^/  /'
	fi
	case "$page" in *.html)
		if v=$(python3 "$here/layout.py" verdict "$out/$name.dom.html"); then
			echo "$name at $w px: $v"
		else
			fail "$name at $w px (layout):"; echo "$v" | sed 's/^/  /'
		fi
	esac
}

hostile='<b>x</b> & "q" '"'"'s <script>alert(1)</script>'
# no name: the file's name is the design's, 150 characters, wider than the picture
long=$(printf 'averyveryverylongdesignfilename%.0s' 1 2 3 4)-without-any-space-in-it-to-be-wider-than-the-picture
printf 'name: %s\npools:\n  "*":\n    timeSlicing: {replicas: 8}\n' "'$(printf '%s' "$hostile" | sed "s/'/''/g")'" >"$T/hostile.yaml"
printf 'pools:\n  "*":\n    draShares: {shares: 10}\n' >"$T/$long.yaml"
printf '%s\n' ts4 ts2 mig-balanced dra-shares whole "$hostile" "$long" >"$T/names"
"$bin" replay "$g/nodes.csv" "$g/pods.csv" --seed 2 --design "$d/ts4.yaml" --design "$d/ts2.yaml" \
	--design "$d/mig-balanced.yaml" --design "$d/dra-shares.yaml" --design "$d/whole.yaml" \
	--design "$T/hostile.yaml" --design "$T/$long.yaml" \
	--html "$out/replay-designs.html" --svg "$out/replay-designs.svg" >/dev/null 2>"$T/err" || { cat "$T/err"; fail "replay --design"; }
grep -q '<script' "$out/replay-designs.svg" && fail "a <script> element reached the picture"
grep -q '<script' "$out/replay-designs.html" && fail "a <script> element reached the page"
all=alloc,frag,stranded,pending
check replay-designs-1400 "$out/replay-designs.html" 1400 $all "$T/names"
check replay-designs-800 "$out/replay-designs.html" 800 $all "$T/names"
check replay-designs-svg "$out/replay-designs.svg" 1000 $all "$T/names"
# every design's colour is painted in the picture (Tableau 10's first seven)
png=$(python3 "$top/tests/cli/report/png.py" "$out/replay-designs-svg.png" '#4e79a7' '#f28e2b' '#e15759' '#76b7b2' '#59a14f' '#edc948' '#b07aa1') || fail "the picture's screenshot is not a PNG"
echo "$png" | sed 1d | while read -r c px; do
	[ "$px" -gt 300 ] || echo "FAIL: colour $c: $px pixels in the picture"
done | grep FAIL && status=1

"$bin" replay "$g/nodes.csv" "$g/pods.csv" --seed 2 --html "$out/replay-plain.html" >/dev/null 2>"$T/err" || { cat "$T/err"; fail "replay"; }
printf 'time-slicing x4\n' >"$T/plain-names"
check replay-plain-800 "$out/replay-plain.html" 800 alloc,frag,pending "$T/plain-names"

# --departures: the run in trace time, four charts against time, one curve
dep=$top/tests/golden/replay-departures
"$bin" replay "$dep/nodes.csv" "$dep/pods.csv" --departures --html "$out/replay-departures.html" \
	--svg "$out/replay-departures.svg" >/dev/null 2>"$T/err" || { cat "$T/err"; fail "replay --departures"; }
check replay-departures-800 "$out/replay-departures.html" 800 alloc,frag,running,pending "$T/plain-names"
check replay-departures-svg "$out/replay-departures.svg" 1000 alloc,frag,running,pending "$T/plain-names"

# The check can fail: in the picture, the allocation chart loses ts2's curve,
# the fragmentation chart's ts4 curve moves 200 units up out of its plot, the
# pending chart's x ticks grow to 40 units, the long name loses its squeeze.
python3 - "$out/replay-designs.svg" "$T/control.svg" "$long" <<'EOF'
import re, sys
svg, out, long = open(sys.argv[1], encoding="utf-8").read(), sys.argv[2], sys.argv[3]
charts = re.split(r'(?=<g class="chart")', svg)
def chart(m):
    return next(i for i, c in enumerate(charts) if 'data-metric="%s"' % m in c)
i = chart("alloc"); charts[i] = re.sub(r'<polyline class="curve" data-series="1".*?</polyline>\n', "", charts[i], count=1, flags=re.S)
i = chart("frag"); charts[i] = charts[i].replace('<polyline class="curve" data-series="0"', '<polyline class="curve" data-series="0" transform="translate(0 -200)"', 1)
i = chart("pending"); charts[i] = re.sub(r'font-size="11" class="xt"', 'font-size="40" class="xt"', charts[i])
svg = "".join(charts)
svg = re.sub(r'(<text [^>]*) textLength="\d+" lengthAdjust="spacingAndGlyphs"(>%s)' % long, r'\1\2', svg)
open(out, "w", encoding="utf-8").write(svg)
EOF
python3 "$here/chart.py" inject "$T/control.svg" "$T/control-check.svg"
chrome --dump-dom --window-size=1000,900 "file://$T/control-check.svg" >"$T/control.dom.html"
v=$(python3 "$here/chart.py" verdict "$T/control.dom.html" $all "$T/names") && fail "the control picture passed: the check is blind"
for want in "alloc: 6 curves for 7 legend keys" "frag: curve 0 leaves the plot" "pending: texts" "legend: key 6 (${long:0:40}) sticks out"; do
	case "$v" in *"$want"*) ;; *) fail "the control picture's finding '$want' went unseen: $v" ;; esac
done
[ $status = 0 ] && echo "chart check: passed (outputs in $out)"
exit $status
