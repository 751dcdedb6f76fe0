#!/usr/bin/env bash
# End-to-end tests against the local control plane. Usage: run.sh GPUSHARE
#
# Starts the cluster if it is not running (and stops it at the end only
# then), runs every tests/e2e/test_*.sh in name order with the environment
# documented in tests/e2e/lib.sh, and exits 1 if any fails.
#   E2E_ONLY=REGEX   run only the tests whose file name matches
#   E2E_TIMEOUT=SEC  per-test limit (default 300, or the test's own
#                    "# e2e-timeout: SEC" line)
# A passing test's output is not shown, except its lines that start with
# "note: " (a measurement, or why it skipped).
set -u
[ $# = 1 ] || {
	echo "usage: $0 GPUSHARE-BINARY" >&2
	exit 2
}
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$root/../.." && pwd)
state=${GS_CLUSTER_DIR:-$top/.cluster}
[ -x "$bin" ] || {
	echo "e2e: $bin is not an executable" >&2
	exit 2
}

started=
if ! "$top/scripts/cluster/status.sh" >/dev/null 2>&1; then
	echo "e2e: starting the local control plane"
	"$top/scripts/cluster/up.sh" || {
		echo "e2e: the control plane did not start; logs in $state/logs/" >&2
		exit 1
	}
	started=1
fi
stop_cluster() {
	if [ -n "$started" ]; then
		echo "e2e: stopping the control plane this run started"
		"$top/scripts/cluster/down.sh"
	fi
}
trap stop_cluster EXIT
trap 'exit 130' INT TERM

# shellcheck disable=SC1091
. "$state/env"
# shellcheck disable=SC1091
. "$top/scripts/cluster/versions.sh"
export KUBECONFIG=$state/kubeconfig USER_KUBECONFIG=$state/user.kubeconfig
export KUBECTL=$state/bin/kubectl GPUSHARE=$bin TOP=$top
GS_DRA_ALPHA=${GS_DRA_ALPHA:-0}
# The DRA gates the richer forms need (DRAPartitionableDevices,
# DRAConsumableCapacity, DRAExtendedResource) are beta and on by default
# from 1.36 (pkg/features/kube_features.go), alpha and off before unless
# GS_DRA_ALPHA=1 turned them on.
minor=${K8S_VERSION#v1.}
minor=${minor%%.*}
if [ "$GS_DRA_ALPHA" = 1 ] || [ "$minor" -ge 36 ]; then GS_DRA_GATES=1; else GS_DRA_GATES=0; fi
export GS_APISERVER GS_CA GS_ADMIN_TOKEN GS_USER_TOKEN K8S_VERSION GS_DRA_ALPHA GS_DRA_GATES

pass=0 fail=0 failed=
for t in "$root"/test_*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	if [ -n "${E2E_ONLY:-}" ] && ! [[ $name =~ $E2E_ONLY ]]; then
		continue
	fi
	t0=$SECONDS
	limit=$(sed -n 's/^# e2e-timeout: \([0-9][0-9]*\)$/\1/p' "$t" | head -1)
	limit=${E2E_TIMEOUT:-${limit:-300}}
	if out=$(cd "$top" && timeout -k 10 "$limit" bash "$t" 2>&1); then
		pass=$((pass + 1))
		echo "ok   $name ($((SECONDS - t0))s)"
		printf '%s\n' "$out" | sed -n 's/^note: /     /p'
	else
		rc=$?
		fail=$((fail + 1))
		failed+=" $name"
		[ $rc = 124 ] && out+=$'\n'"timed out after ${limit}s"
		echo "FAIL $name ($((SECONDS - t0))s)"
		echo "$out" | tail -40 | sed 's/^/     /'
	fi
done
echo "e2e: $pass passed, $fail failed${failed:+ (${failed# })}"
[ $fail = 0 ]
