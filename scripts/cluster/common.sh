# Shared settings of up.sh / down.sh (sourced, not run).
#
# Every port is overridable from the environment. The defaults sit below the
# kernel's ephemeral range (32768+) and away from the usual 2379/6443/10257/
# 10259, so a system etcd or another cluster on the machine does not clash.
GS_ETCD_PORT=${GS_ETCD_PORT:-12379}
GS_ETCD_PEER_PORT=${GS_ETCD_PEER_PORT:-12380}
GS_APISERVER_PORT=${GS_APISERVER_PORT:-16443}
GS_KCM_PORT=${GS_KCM_PORT:-11257}
GS_SCHEDULER_PORT=${GS_SCHEDULER_PORT:-11259}
GS_KWOK_PORT=${GS_KWOK_PORT:-11270}
# gpushare controller's /healthz, /readyz, /metrics (HTTP): next to kwok's.
GS_CONTROLLER_PORT=${GS_CONTROLLER_PORT:-$((GS_KWOK_PORT + 1))}

cluster_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cluster_top=$(cd "$cluster_here/../.." && pwd)
state=${GS_CLUSTER_DIR:-$cluster_top/.cluster}

# Stop order; start order is the reverse. `controller` is build/gpushare
# controller (docs/controller.md): it admits the pods kwok then runs.
components=(controller kwok kube-scheduler kube-controller-manager kube-apiserver etcd)

# comp_exe NAME: the basename of the binary that component runs.
comp_exe() {
	case $1 in
	controller) echo gpushare ;;
	*) echo "$1" ;;
	esac
}

say() { printf 'cluster: %s\n' "$*" >&2; }
die() {
	say "$*"
	exit 1
}

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
elapsed() { since "$1" "$(now)"; }

# port_open PORT: something accepts connections on 127.0.0.1:PORT.
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# The ports recorded by the running cluster win over the environment, so
# down.sh and the tests talk to what up.sh really started.
load_env() {
	# shellcheck disable=SC1091
	[ -f "$state/env" ] && . "$state/env"
	return 0
}

# our_pid NAME: prints the PID from pids/NAME.pid if that process is still
# the NAME binary started for this state dir (exe basename and a command
# line naming $state), so a recycled PID is never touched.
our_pid() {
	local name=$1 f=$state/pids/$1.pid pid exe
	[ -f "$f" ] || return 1
	read -r pid <"$f" || return 1
	case $pid in '' | *[!0-9]*) return 1 ;; esac
	exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
	exe=${exe% (deleted)}
	[ "${exe##*/}" = "$(comp_exe "$name")" ] || return 1
	tr '\0' '\n' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$state/" || return 1
	echo "$pid"
}

# rss_kb PID: resident set size in kB from /proc/PID/status.
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# stop_all: TERM every component this state dir started, wait for each to
# exit (KILL after 20 s), drop its pid file. Prints what it did.
stop_all() {
	local name pid i
	for name in "${components[@]}"; do
		if pid=$(our_pid "$name"); then
			kill -TERM "$pid" 2>/dev/null || true
			for ((i = 0; i < 200; i++)); do
				[ -d "/proc/$pid" ] || break
				# A zombie is gone for our purposes.
				grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null && break
				sleep 0.1
			done
			if [ -d "/proc/$pid" ] && our_pid "$name" >/dev/null; then
				say "$name (pid $pid) ignored TERM for 20s; sending KILL"
				kill -KILL "$pid" 2>/dev/null || true
				for ((i = 0; i < 50; i++)); do
					[ -d "/proc/$pid" ] || break
					sleep 0.1
				done
			fi
			say "stopped $name (pid $pid)"
		elif [ -f "$state/pids/$name.pid" ]; then
			say "stale pid file for $name (process gone or not ours); removed"
		fi
		rm -f "$state/pids/$name.pid"
	done
}
