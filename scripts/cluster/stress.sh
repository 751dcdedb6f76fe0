#!/usr/bin/env bash
# Start and stop a cluster N times (default 10) while every core is kept
# busy, on ports and a state directory of its own, and count failed starts.
# usage: stress.sh [N]     (make cluster-stress)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-10}
work=$(mktemp -d)
export GS_CLUSTER_DIR=$work/state GS_ETCD_PORT=23379 GS_ETCD_PEER_PORT=23380 \
	GS_APISERVER_PORT=27443 GS_KCM_PORT=23257 GS_SCHEDULER_PORT=23259 GS_KWOK_PORT=23270 GS_CONTROLLER_PORT=23271
hogs=()
for ((c = 0; c < $(nproc) * 2; c++)); do
	(while :; do :; done) &
	hogs+=($!)
done
cleanup() {
	kill "${hogs[@]}" 2>/dev/null
	"$here/down.sh" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT
failed=0 total=0
for ((i = 1; i <= n; i++)); do
	t0=$SECONDS
	if "$here/up.sh" >"$work/up.log" 2>&1; then
		echo "start $i: ok in $((SECONDS - t0))s"
	else
		failed=$((failed + 1))
		echo "start $i: FAILED after $((SECONDS - t0))s"
		sed 's/^/    /' "$work/up.log"
	fi
	total=$((total + SECONDS - t0))
	"$here/down.sh" >/dev/null 2>&1
done
echo "cluster-stress: $((n - failed))/$n starts succeeded with $((${#hogs[@]})) busy loops on $(nproc) cores; mean $((total / n))s"
[ "$failed" = 0 ]
