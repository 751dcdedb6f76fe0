#!/usr/bin/env bash
# The fleet picture of a live cluster: `gpushare lab` ends by writing
# out/fleet.html; it shows the three lab nodes and the seven lab pods, and
# every pod that carries the controller's ledger annotation is drawn on the
# very device IDs the annotation names. `gpushare report` reads the same
# cluster through the shared connection flags.
. "$TOP/tests/e2e/lib.sh"

cd "$TOP" || fail "no repository root"
rm -f out/fleet.html
run "$GPUSHARE" lab --timeout 90
expect_rc 0 "gpushare lab"
[ -s out/fleet.html ] || fail "gpushare lab wrote no out/fleet.html"
page=$(cat out/fleet.html)
for n in lab-node-0 lab-node-1 lab-node-2; do
	expect_has "$page" "<section class=\"node\" data-node=\"$n\">" "node $n drawn"
done
for p in gpu-share/mig-job gpu-share/plain-gpu gpu-share/prod-inference gpu-share/notebook \
	gpu-share/batch-train team-a/team-a-0 team-a/team-a-1; do
	expect_has "$page" "<tr class=\"pod\" data-pod=\"$p\">" "pod $p listed"
done
quota=$(grep -o '<div class="quota" data-namespace="team-a">.*</div>' out/fleet.html | head -1)
expect_has "$quota" "team-<wbr>a/<wbr>gpu-<wbr>quota" "quota bar: its name"
expect_has "$quota" 'title="requests.nvidia.com/gpu"' "quota bar: its resource"

# Where the controller recorded devices, the page shows exactly those.
ledgered=0
while IFS=$'\t' read -r ns name ann; do
	[ -n "$ann" ] || continue
	ledgered=$((ledgered + 1))
	row=$(grep -o "<tr class=\"pod\" data-pod=\"$ns/$name\">.*</tr>" out/fleet.html)
	expect_has "$row" "from the ledger" "$ns/$name drawn from its annotation"
	for id in $(echo "$ann" | jq -r '.[][]'); do
		# The card's slot names the device and its pod in its title.
		expect_has "$page" "data-pod=\"$ns/$name\"" "$ns/$name has a slot"
		expect_has "$page" " $id: $ns/$name\">" "$ns/$name holds $id in the picture"
	done
done < <(k get pods -A -o json | jq -r '.items[] | select(.metadata.namespace == "gpu-share" or .metadata.namespace == "team-a") | [.metadata.namespace, .metadata.name, (.metadata.annotations["gpushare.io/devices"] // "")] | @tsv')
echo "note: $ledgered of the lab's pods carry the ledger annotation"

# The live page in headless Chromium: it loads with no console message.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHROMIUM=$(command -v chromium || command -v chromium-browser) || fail "chromium is not installed (scripts/deps.sh)"
timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/profile" \
	--enable-logging=stderr --v=0 --dump-dom "file://$TOP/out/fleet.html" >"$T/dom.html" 2>"$T/log"
if grep -E ':CONSOLE|Uncaught|Refused to' "$T/log"; then fail "console messages on the live page"; fi
expect_eq "$(grep -c '<tr class="pod" data-pod="\(gpu-share\|team-a\)/' "$T/dom.html")" 7 "the lab's pods in Chromium's DOM"

# The command itself, live, SVG on standard output.
run "$GPUSHARE" report --svg - --kubeconfig "$KUBECONFIG"
expect_rc 0 "gpushare report live"
expect_has "$out" '<g class="node" data-node="lab-node-1">' "live SVG"
echo "$out" | python3 -c 'import sys, xml.dom.minidom as d; d.parseString(sys.stdin.read())' || fail "live SVG is not well-formed XML"
expect_has "$err" "gpushare report: wrote -:" "summary on stderr"
echo "note: $(echo "$err" | grep 'wrote -:')"
