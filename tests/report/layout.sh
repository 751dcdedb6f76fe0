#!/usr/bin/env bash
# make report-check: the report page laid out by headless Chromium at 1400
# and 800 px wide, for the seed's fleet (k8s/*.yaml) and a generated one
# (bench/plan_gen.py, with a node and a pod of long names): screenshots
# (1400x2000, 800x2000) into the output dir, their paths printed; and a
# check run in the page (layout.py) that no box overflows, nothing sticks
# out of the window, no name in the pod table breaks mid-word, and the
# summary starts within the first screen (a 900 px high window). A control
# page with a box too wide and the summary pushed down must fail the check.
# Separate from make test: each Chromium start takes seconds.
#   tests/report/layout.sh GPUSHARE [OUTDIR]   (OUTDIR default build/report-layout)
set -u
bin=$1
top=$(cd "$(dirname "$0")/../.." && pwd)
out=${2:-$top/build/report-layout}
here=$top/tests/report
. "$here/lib.sh"
rm -rf "$out" && mkdir -p "$out" || exit 1
# check NAME PAGE: screenshots and the layout check at both widths.
check() {
	local name=$1 page=$2 w
	python3 "$here/layout.py" inject "$page" "$T/$name-check.html" || { fail "$name: inject"; return; }
	for w in 1400 800; do
		chrome --screenshot="$out/$name-$w.png" --window-size=$w,2000 "file://$page" >/dev/null
		[ -s "$out/$name-$w.png" ] && echo "screenshot: $out/$name-$w.png" || fail "$name: no screenshot at $w px"
		chrome --window-size=$w,900 --dump-dom "file://$T/$name-check.html" >"$out/$name-$w.dom.html"
		if v=$(python3 "$here/layout.py" verdict "$out/$name-$w.dom.html"); then
			echo "$name at $w px: $v"
		else
			fail "$name at $w px:"; echo "$v" | sed 's/^/  /'
		fi
	done
}

"$bin" report -f "$top/k8s" --html "$out/seed.html" 2>"$T/err" || { cat "$T/err"; fail "report of k8s/"; }
grep -q 'id="summary"' "$out/seed.html" || fail "seed: no summary"
check seed "$out/seed.html"

# A bigger fleet: 120 nodes, of which many alike and empty; one node and one pod with long names.
python3 "$top/bench/plan_gen.py" "$T/big" 120 100 60 >/dev/null || fail "plan_gen"
long=averyveryverylongsegmentwithouthyphens-and-then-a-cloud-region-us-east-1b-highmem-pool
sed -i "s/node-00003\b/node-00003-$long/g" "$T/big/nodes.yaml" "$T/big/bound.yaml"
sed -i "0,/^  name: \(.*\)$/s//  name: \1-$long/" "$T/big/pods.yaml"
"$bin" report -f "$T/big" --html "$out/big.html" 2>"$T/err" || { cat "$T/err"; fail "report of the generated fleet"; }
grep -q '<details class="group"' "$out/big.html" || fail "big: no group of identical nodes"
grep -q "$long" "$out/big.html" || fail "big: the long names are missing"
check big "$out/big.html"

# The check can fail: a box wider than the window and a summary a screen down.
printf '<!DOCTYPE html><html><body><div style="height:1200px"></div><div id="summary"><div style="width:1000px;white-space:nowrap">too wide</div></div><table id="pods"><tr><td class="nm" style="width:60px">averyveryverylongsegment</td></tr></table></body></html>\n' >"$T/control.html"
python3 "$here/layout.py" inject "$T/control.html" "$T/control-check.html"
chrome --window-size=800,900 --dump-dom "file://$T/control-check.html" >"$T/control.dom.html"
v=$(python3 "$here/layout.py" verdict "$T/control.dom.html") && fail "the control page passed: the check is blind"
for want in "page 10" "below the first" "outside: div"; do
	case "$v" in *"$want"*) ;; *) fail "the control page's finding '$want' went unseen: $v" ;; esac
done
[ $status = 0 ] && echo "report-check: passed (outputs in $out)"
exit $status
