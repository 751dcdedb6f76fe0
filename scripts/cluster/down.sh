#!/usr/bin/env bash
# Stop the control plane that up.sh started from this checkout: exactly the
# PIDs in .cluster/pids/, each checked to still be that binary. Keeps the
# PKI and the logs; etcd data is dropped on the next start anyway.
set -euo pipefail
. "$(dirname "$0")/common.sh"
load_env
[ -d "$state" ] || {
	say "not running (no $state)"
	exit 0
}
exec 9>"$state/lock"
flock -n 9 || {
	say "waiting for another up.sh or down.sh of $state to finish"
	flock 9
}

if ! compgen -G "$state/pids/*.pid" >/dev/null; then
	say "not running (no pid files in $state/pids)"
	exit 0
fi
stop_all

busy=
for p in "$GS_ETCD_PORT" "$GS_ETCD_PEER_PORT" "$GS_APISERVER_PORT" "$GS_KCM_PORT" \
	"$GS_SCHEDULER_PORT" "$GS_KWOK_PORT" "${GS_CONTROLLER_PORT:-$((GS_KWOK_PORT + 1))}"; do
	port_open "$p" && busy+=" $p"
done
if [ -n "$busy" ]; then
	die "stopped, but something still listens on 127.0.0.1:${busy# } (not started from $state)"
fi
say "stopped; nothing listens on the cluster's ports"
