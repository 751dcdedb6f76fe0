#!/usr/bin/env bash
# Exit 0 if the control plane of this checkout runs and answers /readyz,
# 1 otherwise; prints one line per component either way.
set -uo pipefail
. "$(dirname "$0")/common.sh"
load_env

ok=0
for c in etcd kube-apiserver kube-controller-manager kube-scheduler kwok controller kwok-guard; do
	if [ "$c" = kwok-guard ] && [ "${GS_KWOK_GUARD:-1}" = 0 ]; then
		echo "kwok-guard: off (GS_KWOK_GUARD=0)"
		continue
	fi
	if pid=$(our_pid "$c"); then
		echo "$c: running (pid $pid, RSS $(($(rss_kb "$pid") / 1024)) MB)"
	else
		echo "$c: not running"
		ok=1
	fi
done
if [ -f "$state/pki/ca.crt" ] && curl -fsS --max-time 5 --cacert "$state/pki/ca.crt" \
	--cert "$state/pki/admin.crt" --key "$state/pki/admin.key" \
	"https://127.0.0.1:$GS_APISERVER_PORT/readyz" >/dev/null 2>&1; then
	echo "apiserver: https://127.0.0.1:$GS_APISERVER_PORT/readyz ok"
else
	echo "apiserver: https://127.0.0.1:$GS_APISERVER_PORT/readyz not ok"
	ok=1
fi
exit $ok
