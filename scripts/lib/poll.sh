# Polling helpers with no cluster in them, for scripts and every test suite
# (source it): scripts/cluster/wait.sh, tests/e2e/lib.sh, tests/cli/lib.sh.
#
#   gs_wait_for SECONDS CMD...          until CMD succeeds (polled every 0.2 s);
#                                       1 and a message on stderr after SECONDS
#   gs_http_ready URL [CURL-OPTION...]  whether URL answers 2xx (a /readyz probe)

gs_wait_for() {
	local limit=$1 end
	shift
	end=$(($(date +%s) + limit))
	until "$@"; do
		if [ "$(date +%s)" -ge "$end" ]; then
			echo "wait: gave up after ${limit}s: $*" >&2
			return 1
		fi
		sleep 0.2
	done
}

gs_http_ready() {
	local url=$1
	shift
	curl -fsS "$@" "$url" >/dev/null 2>&1
}
