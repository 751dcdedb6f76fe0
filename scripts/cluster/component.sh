#!/usr/bin/env bash
# Stop, start or restart one component of the control plane that up.sh
# started from this checkout, with the very command line up.sh gave it
# (recorded in .cluster/argv/NAME), for fault tests and by hand:
#
#   component.sh stop [-s SIGNAL] NAME      SIGNAL (TERM) and wait until it is gone
#   component.sh start [-t SECONDS] NAME    start it again, wait until healthy
#   component.sh restart [-s SIGNAL] [-t SECONDS] NAME
#
# NAME: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok,
# controller. "Healthy" is what up.sh waits for (comp_ready in common.sh):
# kube-apiserver's /readyz, the controller's /readyz (its lists are read).
# The log is appended to, so logs/NAME.log keeps the whole story. Exits 0
# once done, 1 when the component did not come back (the others are left
# running), 2 for bad usage.
set -euo pipefail
. "$(dirname "$0")/common.sh"
load_env

usage() {
	echo "usage: $0 stop|start|restart [-s SIGNAL] [-t SECONDS] NAME" >&2
	exit 2
}
[ $# -ge 2 ] || usage
verb=$1
shift
sig=TERM limit=180
while [ $# -gt 1 ]; do
	case $1 in
	-s)
		sig=${2#SIG}
		shift 2
		;;
	-t)
		limit=$2
		shift 2
		;;
	*) usage ;;
	esac
done
[ $# = 1 ] || usage
name=$1
case " ${components[*]} " in
*" $name "*) ;;
*) die "unknown component '$name' (one of: ${components[*]})" ;;
esac
case $verb in stop | start | restart) ;; *) usage ;; esac
case $sig in [A-Z]*) kill -l "$sig" >/dev/null 2>&1 || die "unknown signal '$sig'" ;; *) die "unknown signal '$sig'" ;; esac
case $limit in '' | *[!0-9]*) die "-t takes whole seconds, got '$limit'" ;; esac
[ -d "$state" ] || die "no cluster state in $state: start it with up.sh"

exec 9>"$state/lock"
flock -n 9 || {
	say "waiting for another up.sh, down.sh or component.sh of $state to finish"
	flock 9
}

if [ "$verb" != start ]; then
	our_pid "$name" >/dev/null || [ "$verb" = restart ] || die "$name is not running"
	stop_one "$name" "$sig"
fi
[ "$verb" = stop ] && exit 0

our_pid "$name" >/dev/null && die "$name is already running"
t0=$(now)
comp_start_again "$name" || exit 1
end=$(($(date +%s) + limit))
until comp_ready "$name"; do
	if ! our_pid "$name" >/dev/null; then
		say "$name exited before it was healthy; last lines of $state/logs/$name.log:"
		tail -n 20 "$state/logs/$name.log" >&2 || true
		exit 1
	fi
	if [ "$(date +%s)" -ge "$end" ]; then
		say "$name not healthy after ${limit}s; log in $state/logs/$name.log"
		exit 1
	fi
	sleep 0.1
done
say "started $name (pid $(our_pid "$name")), healthy in $(elapsed "$t0")s"
