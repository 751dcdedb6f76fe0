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
# controller (docs/guide/controller.md): it admits the pods kwok then runs.
components=(kwok-guard controller kwok kube-scheduler kube-controller-manager kube-apiserver etcd)

# comp_exe NAME: the basename of the binary that component runs.
comp_exe() {
	case $1 in
	controller) echo gpushare ;;
	kwok-guard) echo bash ;; # scripts/cluster/kwok-guard.sh
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

# stop_one NAME [SIGNAL]: send SIGNAL (TERM) to the component this state dir
# started, wait for it to exit (KILL after 20 s), drop its pid file.
# Prints what it did.
stop_one() {
	local name=$1 sig=${2:-TERM} pid i
	if pid=$(our_pid "$name"); then
		kill -"$sig" "$pid" 2>/dev/null || true
		for ((i = 0; i < 200; i++)); do
			[ -d "/proc/$pid" ] || break
			# A zombie is gone for our purposes.
			grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null && break
			sleep 0.1
		done
		if [ -d "/proc/$pid" ] && our_pid "$name" >/dev/null; then
			say "$name (pid $pid) ignored $sig for 20s; sending KILL"
			kill -KILL "$pid" 2>/dev/null || true
			for ((i = 0; i < 50; i++)); do
				[ -d "/proc/$pid" ] || break
				sleep 0.1
			done
		fi
		if [ "$sig" = TERM ]; then
			say "stopped $name (pid $pid)"
		else
			say "stopped $name (pid $pid) with SIG$sig"
		fi
	elif [ -f "$state/pids/$name.pid" ]; then
		say "stale pid file for $name (process gone or not ours); removed"
	fi
	rm -f "$state/pids/$name.pid"
}

# stop_all: stop_one every component this state dir started, in stop order.
stop_all() {
	local name
	for name in "${components[@]}"; do
		stop_one "$name"
	done
}

# comp_start NAME BINARY ARGS...: runs it in a session of its own (Ctrl-C on
# the shell that ran `make cluster-up` must not stop the cluster), logs to
# logs/NAME.log (appended when comp_log_append=1, else truncated), records
# the PID in pids/NAME.pid and the command line in argv/NAME (one argument
# per NUL-terminated field, for comp_start_again). The PID is written by the
# process that then execs the binary (setsid may fork, so $! can name a
# parent that has already exited), and comp_start returns only once the exec
# happened: until then /proc/PID/exe is still the shell, and a slow exec
# under load must not look like a dead component. Returns 1, with the log's
# tail on stderr, when it did not start.
comp_log_append=
comp_start() {
	local name=$1 pidf=$state/pids/$1.pid i pid= log=$state/logs/$1.log
	shift
	mkdir -p "$state/pids" "$state/logs" "$state/argv"
	printf '%s\0' "$@" >"$state/argv/$name"
	rm -f "$pidf" "$pidf.tmp"
	[ -n "$comp_log_append" ] || : >"$log"
	# 9>&-: the daemons must not inherit (and so hold) the state lock.
	setsid sh -c 'echo $$ >"$1.tmp" && mv "$1.tmp" "$1" && shift && exec "$@"' \
		sh "$pidf" "$@" </dev/null >>"$log" 2>&1 9>&- &
	for ((i = 0; i < 600; i++)); do
		if [ -z "$pid" ] && [ -f "$pidf" ]; then read -r pid <"$pidf" || pid=; fi
		if [ -n "$pid" ]; then
			our_pid "$name" >/dev/null && return 0
			if ! [ -d "/proc/$pid" ] || grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
				break
			fi
		fi
		sleep 0.1
	done
	say "$name did not start; last lines of $log:"
	tail -n 20 "$log" >&2 || true
	return 1
}

# comp_ports NAME: the ports NAME listens on.
comp_ports() {
	case $1 in
	etcd) echo "$GS_ETCD_PORT $GS_ETCD_PEER_PORT" ;;
	kube-apiserver) echo "$GS_APISERVER_PORT" ;;
	kube-controller-manager) echo "$GS_KCM_PORT" ;;
	kube-scheduler) echo "$GS_SCHEDULER_PORT" ;;
	kwok) echo "$GS_KWOK_PORT" ;;
	controller) echo "$GS_CONTROLLER_PORT" ;;
	esac
}

# comp_start_again NAME: start NAME with the very command line up.sh gave
# it (argv/NAME), its log appended, once its ports are free (a process
# SIGKILLed a moment ago may still hold them: its main thread shows as a
# zombie before the other threads are gone and its sockets closed).
# Returns 1 when it did not start.
comp_start_again() {
	local name=$1 f=$state/argv/$1 args=() a p i
	[ -f "$f" ] || {
		say "no recorded command line for $name ($f): start the cluster with up.sh"
		return 1
	}
	for p in $(comp_ports "$name"); do
		for ((i = 0; i < 100; i++)); do
			port_open "$p" || break
			sleep 0.1
		done
		if port_open "$p"; then
			say "127.0.0.1:$p is still in use after 10 s; $name not started"
			return 1
		fi
	done
	while IFS= read -r -d '' a; do args+=("$a"); done <"$f"
	comp_log_append=1 comp_start "$name" "${args[@]}"
}

# comp_ready NAME: the component answers its health endpoint (kube-apiserver:
# /readyz with the admin certificate; the controller: /readyz, so its lists
# are read).
comp_ready() {
	local u
	case $1 in
	etcd) u=http://127.0.0.1:$GS_ETCD_PORT/health ;;
	kube-apiserver)
		curl -fsS --max-time 5 --cacert "$state/pki/ca.crt" --cert "$state/pki/admin.crt" \
			--key "$state/pki/admin.key" "https://127.0.0.1:$GS_APISERVER_PORT/readyz" \
			>/dev/null 2>&1
		return
		;;
	kube-controller-manager | kube-scheduler)
		[ "$1" = kube-scheduler ] && u=$GS_SCHEDULER_PORT || u=$GS_KCM_PORT
		curl -fsk --max-time 5 "https://127.0.0.1:$u/healthz" >/dev/null 2>&1
		return
		;;
	kwok) u=http://127.0.0.1:$GS_KWOK_PORT/healthz ;;
	controller) u=http://127.0.0.1:$GS_CONTROLLER_PORT/readyz ;;
	kwok-guard)
		our_pid kwok-guard >/dev/null
		return
		;;
	*) return 1 ;;
	esac
	curl -fs --max-time 2 -o /dev/null "$u"
}
