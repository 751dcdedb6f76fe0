#!/usr/bin/env bash
# make soak: the soak (docs/design/soak.md) against the local control plane.
# Usage: run.sh GPUSHARE SOAK
#   SOAK_STEPS (10000), SOAK_SEED (from the clock), SOAK_SHRINK_SECONDS (600)
# Starts the cluster if it is not running (and stops it at the end only
# then), like tests/e2e/run.sh. The failing objects and sequence go to
# build/soak-failure.{json,steps}.
set -u
[ $# = 2 ] || {
	echo "usage: $0 GPUSHARE SOAK" >&2
	exit 2
}
abs() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
bin=$(abs "$1")
soak=$(abs "$2")
top=$(cd "$(dirname "$0")/../.." && pwd)
state=${GS_CLUSTER_DIR:-$top/.cluster}

started=
if ! "$top/scripts/cluster/status.sh" >/dev/null 2>&1; then
	echo "soak: starting the local control plane"
	GS_GPUSHARE=$bin "$top/scripts/cluster/up.sh" || {
		echo "soak: the control plane did not start; logs in $state/logs/" >&2
		exit 1
	}
	started=1
fi
stop_cluster() {
	if [ -n "$started" ]; then
		echo "soak: stopping the control plane this run started"
		"$top/scripts/cluster/down.sh"
	fi
}
trap stop_cluster EXIT
trap 'exit 130' INT TERM

seed=()
[ -n "${SOAK_SEED:-}" ] && seed=(--seed "$SOAK_SEED")
mkdir -p "$top/build"
"$soak" --cluster-dir "$state" --gpushare "$bin" --scripts "$top/scripts/cluster" \
	--steps "${SOAK_STEPS:-10000}" "${seed[@]}" \
	--shrink-seconds "${SOAK_SHRINK_SECONDS:-600}" --failure-dir "$top/build"
