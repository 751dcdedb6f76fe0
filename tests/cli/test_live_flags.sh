#!/usr/bin/env bash
# The live commands (sync, lab, explain) parse their flags in any order:
# before or after positionals, --flag=value and --flag value, `--`. They run
# against tests/cli/fake_apiserver.py, which logs every request, so a test
# sees which server and context a command talked to and whether it wrote.
. "$TOP/tests/cli/lib.sh"

tmp=$(mktemp -d)
log=$tmp/requests.log
python3 "$TOP/tests/cli/fake_apiserver.py" "$log" >"$tmp/port" 2>"$tmp/server.err" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
gs_wait_for 10 test -s "$tmp/port"
port=$(head -1 "$tmp/port")
[ -n "$port" ] || fail "fake apiserver did not start: $(cat "$tmp/server.err")"
url=http://127.0.0.1:$port

K=$tmp/kubeconfig
cat >"$K" <<YAML
apiVersion: v1
kind: Config
current-context: prod
clusters:
- name: prod
  cluster: {server: "$url/prod"}
- name: test
  cluster: {server: "$url/test"}
contexts:
- name: prod
  context: {cluster: prod}
- name: test
  context: {cluster: test}
YAML
unset KUBECONFIG


# The reproducer: the value of a connection flag followed by --dry-run.
runlog sync --kubeconfig "$K" --dry-run
expect_rc 0 "sync --kubeconfig K --dry-run"
no_writes "sync --kubeconfig K --dry-run"
expect_out_has "lab-node-1: updated (dry run)" "dry-run report"
expect_err_has "dry run: nothing will be written" "dry run announced"

# --dry-run in every position and form writes nothing.
for args in "--dry-run --kubeconfig $K" "--kubeconfig=$K --dry-run" \
	"--kubeconfig $K --node lab-node-1 --dry-run" "--dry-run=true --kubeconfig $K" \
	"--kubeconfig $K --request-timeout 5s --dry-run --" "--kubeconfig $K --dry-run --interval=1 -- --dry-run"; do
	if [ "${args##*-- --dry-run}" != "$args" ]; then
		# A positional after `--` is refused even when it looks like a flag.
		runlog sync $args
		expect_rc 2 "sync $args"
		expect_err_has "unexpected argument '--dry-run'" "after --"
		[ -z "$reqs" ] || fail "sync $args sent requests: $reqs"
		continue
	fi
	runlog sync $args
	expect_rc 0 "sync $args"
	no_writes "sync $args"
	expect_out_has "(dry run)" "sync $args"
done

# Without --dry-run the same command writes: the check above would see it.
runlog sync --kubeconfig "$K"
expect_rc 0 "sync writes"
case "$reqs" in *"PATCH /prod/api/v1/nodes/lab-node-1"*) ;; *) fail "no PATCH: $reqs" ;; esac
runlog sync --kubeconfig "$K" --dry-run=false
case "$reqs" in *PATCH*) ;; *) fail "--dry-run=false did not write: $reqs" ;; esac

# --context in both forms, before and after other flags.
for args in "--kubeconfig=$K --context=test --dry-run" "--context test --dry-run --kubeconfig $K"; do
	runlog sync $args
	expect_rc 0 "sync $args"
	expect_err_has "cluster $url/test, context test" "names the context it used"
	[ "$(printf '%s\n' "$reqs" | grep -vc ' /test/')" = 0 ] || fail "requests outside /test: $reqs"
done

# --cluster instead of the context's.
runlog sync --kubeconfig "$K" --cluster test --dry-run
expect_rc 0 "sync --cluster"
case "$reqs" in "GET /test/"*) ;; *) fail "--cluster test ignored: $reqs" ;; esac

# --server and --token override the kubeconfig's (the token never shows).
runlog sync --dry-run --kubeconfig "$K" --server "$url/flag" --token cli-test-token
expect_rc 0 "sync --server --token"
want=$(printf '%s' cli-test-token | sha256sum | cut -c1-12)
expect_err_has "cluster $url/flag, context prod" "--server shown"
case "$reqs" in "GET /flag/"*"auth=bearer:$want"*) ;; *) fail "--server/--token not used: $reqs" ;; esac
case "$out$err" in *cli-test-token*) fail "the token was printed" ;; esac
# --server alone, with no kubeconfig anywhere.
HOME=$tmp runlog sync --server="$url/bare" --dry-run
expect_rc 0 "sync --server without a kubeconfig"
expect_err_has "cluster $url/bare (command-line flags)" "flags-only config"

# explain: connection flags before the positionals, after them, and `--`.
for args in "--kubeconfig $K pod a/b" "pod a/b --kubeconfig $K" "pod --kubeconfig=$K a/b" \
	"--kubeconfig $K -- pod a/b"; do
	runlog explain $args
	expect_rc 2 "explain $args"
	expect_err_has 'pods "b" not found' "explain $args reached the apiserver"
	case "$reqs" in "GET /prod/api/v1/namespaces/a/pods/b"*) ;; *) fail "explain $args: $reqs" ;; esac
done
runlog explain quota team-a --context test --kubeconfig "$K" --request nvidia.com/gpu=1
case "$reqs" in "GET /test/api/v1/namespaces/team-a/resourcequotas"*) ;; *) fail "explain quota: $reqs" ;; esac

# lab: its own --timeout after a connection flag.
runlog lab --kubeconfig "$K" --timeout 5 --dir "$tmp/nowhere"
expect_rc 1 "lab --kubeconfig K --timeout 5"
expect_err_has "cluster $url/prod, context prod" "lab names the cluster"
expect_err_has "nowhere/k8s/namespaces.yaml" "lab used --dir"
runlog lab --kubeconfig "$K" --timeout 0
expect_rc 2 "lab --timeout 0"
expect_err_has "option '--timeout' expects a whole number from 1 to 86400, got '0'" "names --timeout"

# Usage errors name the option, exit 2, send nothing.
for cmd in sync lab explain; do
	runlog $cmd --kubeconfig "$K" --bogus
	expect_rc 2 "$cmd --bogus"
	expect_err_has "gpushare $cmd: unknown option '--bogus'" "$cmd names the option"
	expect_err_has "see 'gpushare $cmd --help'" "$cmd usage hint"
	[ -z "$reqs" ] || fail "$cmd --bogus sent requests"
	runlog $cmd --request-timeout soon
	expect_rc 2 "$cmd bad duration"
	expect_err_has "option '--request-timeout' expects seconds or a duration" "$cmd bad duration"
	runlog $cmd --kubeconfig
	expect_rc 2 "$cmd missing value"
	expect_err_has "option '--kubeconfig' needs a value" "$cmd missing value"
	run $cmd --help
	expect_rc 0 "$cmd --help"
	for flag in --kubeconfig --context --cluster --user --server --token \
		--insecure-skip-tls-verify --request-timeout; do
		expect_out_has "  $flag" "$cmd --help lists $flag"
	done
done
# A forgotten value never swallows the next flag.
runlog sync --kubeconfig --dry-run
expect_rc 2 "value-less --kubeconfig"
expect_err_has "option '--kubeconfig' needs a value, got option '--dry-run'" "not swallowed"
runlog sync --kubeconfig "$K" --interval x
expect_rc 2 "bad interval"
expect_err_has "option '--interval' expects a whole number from 1 to 86400, got 'x'" "bad interval"
runlog sync --kubeconfig "$K" --dry-run=maybe
expect_rc 2 "bad bool"
expect_err_has "option '--dry-run' expects true or false, got 'maybe'" "bad bool"
[ -z "$reqs" ] || fail "bad flags sent requests"
exit 0
