#!/usr/bin/env bash
# A second cluster on other ports, whose kwok takes 3 s to exec (a wrapper
# that sleeps, as a loaded machine can): up.sh must wait for the exec, not
# call the component dead. Then a kwok that dies at once: up.sh fails and
# shows that component's own stderr.
. "$TOP/tests/e2e/lib.sh"
. "$TOP/scripts/cluster/versions.sh"

real=${GPUSHARE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gpushare}
work=$(mktemp -d)
cleanup() {
	GS_CLUSTER_DIR=$work/state "$TOP/scripts/cluster/down.sh" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT

cache=$work/cache
mkdir -p "$cache/kwok-$KWOK_VERSION"
ln -s "$real/k8s-$K8S_VERSION" "$cache/k8s-$K8S_VERSION"
ln -s "$real/etcd-$ETCD_VERSION" "$cache/etcd-$ETCD_VERSION"
ln -s "$real/kwok-$KWOK_VERSION/stage" "$cache/kwok-$KWOK_VERSION/stage"
wrapper() {
	printf '#!/bin/sh\n%s\n' "$1" >"$cache/kwok-$KWOK_VERSION/kwok"
	chmod +x "$cache/kwok-$KWOK_VERSION/kwok"
}
up() {
	GPUSHARE_CACHE=$cache GS_CLUSTER_DIR=$work/state \
		GS_ETCD_PORT=22379 GS_ETCD_PEER_PORT=22380 GS_APISERVER_PORT=26443 \
		GS_KCM_PORT=21257 GS_SCHEDULER_PORT=21259 GS_KWOK_PORT=21270 GS_CONTROLLER_PORT=21271 \
		"$TOP/scripts/cluster/up.sh"
}

wrapper "sleep 3; exec '$real/kwok-$KWOK_VERSION/kwok' \"\$@\""
run up
expect_rc 0 "up.sh with a kwok slow to exec"
GS_CLUSTER_DIR=$work/state "$TOP/scripts/cluster/down.sh" >/dev/null 2>&1

wrapper "echo 'kwok: cannot load stages: boom' >&2; exit 1"
run up
expect_rc 1 "up.sh with a kwok that dies"
expect_has "$err" "kwok did not start" "which component"
expect_has "$err" "kwok: cannot load stages: boom" "its own stderr"
# Nothing of the failed start is left running.
for p in 22379 26443 21257 21259 21270; do
	(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && fail "port $p still listens after the failed start"
done
exit 0
