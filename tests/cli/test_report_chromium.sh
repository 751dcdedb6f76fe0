# The seed's fleet page in a real headless Chromium (Debian's `chromium`,
# scripts/deps.sh): a screenshot of the expected size painted in the
# namespaces' colours, no console message, and a DOM with the three lab
# nodes and the seven pods. A page with a console error and one with markup
# in a pod name check that the checks themselves can fail.
. "$(dirname "$0")/lib.sh"
K=$TOP/k8s
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
CHROMIUM=$(command -v chromium || command -v chromium-browser) || fail "chromium is not installed (scripts/deps.sh installs it)"
# --no-sandbox: CI runs as root, where Chromium refuses its sandbox.
# A profile of our own: tests may run side by side.
chrome() {
	timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--no-first-run --user-data-dir="$T/profile" --enable-logging=stderr --v=0 "$@"
}
# Console messages (console.*, uncaught errors, CSP refusals) are logged as
# "...:INFO:CONSOLE..." lines with --enable-logging=stderr.
console() { grep -E ':CONSOLE|Uncaught|Refused to' "$1"; }

python3 "$TOP/tests/cli/report/seed_pods.py" "$TOP" >"$T/pods.yaml" || fail "seed pods"
t0=$(date +%s%N)
run report --nodes "$K/lab-nodes.yaml" -f "$K/device-plugin-configs.yaml" --pods "$T/pods.yaml" --quota "$K/gpu-quota.yaml" --html "$T/fleet.html"
expect_rc 0 "report"

chrome --screenshot="$T/shot.png" --window-size=1040,1400 "file://$T/fleet.html" >/dev/null 2>"$T/shot.log"
t1=$(date +%s%N)
[ -s "$T/shot.png" ] || { cat "$T/shot.log" >&2; fail "no screenshot"; }
png=$(python3 "$TOP/tests/cli/report/png.py" "$T/shot.png" '#4e79a7' '#f28e2b') || fail "screenshot is not a PNG"
[ "$(echo "$png" | sed -n 1p)" = "1040 1400" ] || fail "screenshot size: $png"
# gpu-share (#4e79a7) holds 5 devices, team-a (#f28e2b) 2: both painted
blue=$(echo "$png" | sed -n 's/^#4e79a7 //p') orange=$(echo "$png" | sed -n 's/^#f28e2b //p')
[ "$blue" -gt 2000 ] && [ "$orange" -gt 1000 ] || fail "namespace colours not painted: $png"
if console "$T/shot.log"; then fail "console messages while rendering the page"; fi

chrome --dump-dom "file://$T/fleet.html" >"$T/dom.html" 2>"$T/dom.log"
if console "$T/dom.log"; then fail "console messages while loading the page"; fi
nodes=$(grep -o '<section class="node" data-node="[^"]*"' "$T/dom.html" | sed 's/.*data-node=//' | tr '\n' ' ')
[ "$nodes" = '"lab-node-0" "lab-node-1" "lab-node-2" ' ] || fail "DOM nodes: $nodes"
pods=$(grep -o '<tr class="pod" data-pod="[^"]*"' "$T/dom.html" | sed 's/.*data-pod=//' | sort | tr '\n' ' ')
[ "$pods" = '"gpu-share/batch-train" "gpu-share/mig-job" "gpu-share/notebook" "gpu-share/plain-gpu" "gpu-share/prod-inference" "team-a/team-a-0" "team-a/team-a-1" ' ] || fail "DOM pods: $pods"

# markup in a pod name stays text: no script element in the DOM, nothing run
python3 "$TOP/tests/cli/report/seed_pods.py" "$TOP" --hostile "<script>console.error('injected')</script>" >"$T/evil.yaml"
run report --nodes "$K/lab-nodes.yaml" -f "$K/device-plugin-configs.yaml" --pods "$T/evil.yaml" --html "$T/evil.html"
expect_rc 0 "hostile report"
chrome --dump-dom "file://$T/evil.html" >"$T/evil-dom.html" 2>"$T/evil.log"
if console "$T/evil.log"; then fail "the injected name ran"; fi
if grep -q '<script' "$T/evil-dom.html"; then fail "a script element reached the DOM"; fi
grep -q "&lt;script&gt;console.error('injected')&lt;/script&gt;" "$T/evil-dom.html" || fail "the name is not shown as text"

# the console check can fail: a page that logs an error is caught
printf '<!DOCTYPE html><title>x</title><script>console.error("seen")</script>\n' >"$T/control.html"
chrome --dump-dom "file://$T/control.html" >/dev/null 2>"$T/control.log"
console "$T/control.log" | grep -q seen || fail "a console error went unseen: the check is blind"
echo "report: $(( (t1 - t0) / 1000000 )) ms from manifests to screenshot"
exit 0
