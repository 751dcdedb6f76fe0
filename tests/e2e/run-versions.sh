#!/usr/bin/env bash
# make e2e-versions: the version-sensitive e2e tests (the cluster itself,
# the plan-vs-scheduler difftest, the seed's lab and its offline-vs-live
# comparison, DRA) on a control plane of each pinned Kubernetes version in
# turn, then one table: version, tests passed, failed, minutes.
# Usage: run-versions.sh GPUSHARE [VERSION...]
#
# Each version gets its own state dir (.cluster-<version>) and is started
# and stopped by run.sh; the first run of a version builds it (cold, many
# minutes) into the cache. E2E_ONLY overrides the test selection.
set -u
[ $# -ge 1 ] || {
	echo "usage: $0 GPUSHARE-BINARY [VERSION...]" >&2
	exit 2
}
bin=$1
shift
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck disable=SC1091
. "$top/scripts/cluster/versions.sh"
versions=${*:-$GS_K8S_VERSIONS}
only=${E2E_ONLY:-'^test_(cluster|plan_differential|seed_offline_live|lab|dra|dra_lab|dra_translate|dra_shares|explain|migrate_live)$'}

rows=() status=0
for v in $versions; do
	log=$top/.cluster-$v.log
	t0=$SECONDS
	echo "=== Kubernetes $v (log: $log)"
	K8S_VERSION=$v GS_CLUSTER_DIR=$top/.cluster-$v E2E_ONLY=$only \
		"$top/tests/e2e/run.sh" "$bin" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	secs=$((SECONDS - t0))
	passed=$(sed -n 's/^e2e: \([0-9]*\) passed, \([0-9]*\) failed.*/\1/p' "$log" | tail -1)
	failed=$(sed -n 's/^e2e: \([0-9]*\) passed, \([0-9]*\) failed.*/\2/p' "$log" | tail -1)
	[ "$rc" = 0 ] || status=1
	rows+=("$(printf '%-9s %-6s %6s %6s %7s' "$v" "$([ "$rc" = 0 ] && echo ok || echo FAIL)" \
		"${passed:-?}" "${failed:-?}" "$((secs / 60))m$((secs % 60))s")")
done
echo
printf '%-9s %-6s %6s %6s %7s\n' VERSION RESULT PASSED FAILED TIME
printf '%s\n' "${rows[@]}"
exit $status
