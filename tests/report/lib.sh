# Sourced by tests/report/layout.sh and chart.sh: Chromium found (or the
# run fails), a scratch directory $T removed at exit, fail() that marks the
# run failed ($status), chrome() one headless Chromium run logging to $T.
CHROMIUM=$(command -v chromium || command -v chromium-browser) || { echo "FAIL: chromium is not installed (scripts/deps.sh installs it)"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
# --no-sandbox: CI runs as root, where Chromium refuses its sandbox.
chrome() {
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--no-first-run --user-data-dir="$T/profile" "$@" 2>>"$T/chrome.log"
}
