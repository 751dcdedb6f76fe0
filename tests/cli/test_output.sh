#!/usr/bin/env bash
# One output contract (docs/guide/cli.md, Output): every reporting command takes
# -o json (one JSON document, apiVersion and kind first), -o yaml (the same
# document as YAML) and refuses any other format in one wording, exit 2.
. "$TOP/tests/cli/lib.sh"

tmp=$(mktemp -d)
log=$tmp/requests.log
python3 "$TOP/tests/cli/fake_apiserver.py" "$log" >"$tmp/port" 2>"$tmp/server.err" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
gs_wait_for 10 test -s "$tmp/port"
port=$(head -1 "$tmp/port")
[ -n "$port" ] || fail "fake apiserver did not start: $(cat "$tmp/server.err")"
unset KUBECONFIG
cat >"$tmp/kubeconfig" <<YAML
apiVersion: v1
kind: Config
current-context: c
clusters:
- name: c
  cluster: {server: "http://127.0.0.1:$port/prod"}
contexts:
- name: c
  context: {cluster: c}
YAML

g=tests/golden
have_yaml=0
python3 -c 'import yaml' 2>/dev/null && have_yaml=1

# json_doc WHAT KIND: $out is one JSON document of that kind (List: its items).
json_doc() {
	local kind
	kind=$(printf '%s\n' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert isinstance(d, dict), "not an object"
assert d.get("apiVersion") in ("gpushare.io/v1alpha1", "v1"), "apiVersion %r" % d.get("apiVersion")
print(d["kind"])') || fail "$1: -o json is not one JSON document with apiVersion and kind"
	[ "$kind" = "$2" ] || fail "$1: kind $kind, want $2"
}
# yaml_doc WHAT KIND: $out is a YAML stream whose first document has that kind.
yaml_doc() {
	[ -n "$out" ] || fail "$1: -o yaml printed nothing"
	if [ $have_yaml = 1 ]; then
		kind=$(printf '%s\n' "$out" | python3 -c '
import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin)]
assert docs and all("apiVersion" in d and "kind" in d for d in docs)
print(docs[0]["kind"])') || fail "$1: -o yaml does not parse as documents with apiVersion and kind"
		[ "$kind" = "$2" ] || fail "$1: yaml kind $kind, want $2"
	else
		case "$out" in apiVersion:*) ;; *) fail "$1: -o yaml does not start with apiVersion" ;; esac
	fi
}

# contract KIND YAMLKIND RCS ARGS...: -o json, -o yaml, -o xml of one command.
# RCS: the exit statuses the command may answer with (a finding is not an error).
contract() {
	local kind=$1 ykind=$2 rcs=$3 cmd=$4
	shift 3
	run "$@" -o json
	case " $rcs " in *" $rc "*) ;; *) fail "$*: -o json exit $rc, want one of $rcs" ;; esac
	json_doc "$* -o json" "$kind"
	run "$@" -o yaml
	case " $rcs " in *" $rc "*) ;; *) fail "$*: -o yaml exit $rc, want one of $rcs" ;; esac
	yaml_doc "$* -o yaml" "$ykind"
	run "$@" -o xml
	expect_rc 2 "$* -o xml"
	expect_err_match "^gpushare $cmd: unknown output format 'xml' \(one of: [a-z, ]*json, yaml[a-z, ]*\)$" "$* -o xml"
	[ -z "$out" ] || fail "$*: -o xml printed on standard output"
}

contract CheckResult CheckResult "0 1" check $g/check-seed-over/pod.yaml
contract LintResult LintResult "0 1" lint $g/lint-bare-null/cm.yaml
contract Node Node "0 1" advertise -f k8s/device-plugin-configs.yaml --node lab-node-1 k8s/lab-nodes.yaml
contract Advertisement Advertisement "0 1" advertise --full -f k8s/device-plugin-configs.yaml --node lab-node-1 k8s/lab-nodes.yaml
contract List ResourceSlice 0 advertise --dra --node lab-node-0 k8s/lab-nodes.yaml
contract List DeviceClass 0 advertise --dra --device-classes
contract IsolationReport IsolationReport 0 isolation
contract GPUCatalog GPUCatalog 0 catalog
contract Plan Plan "0 1" plan -f k8s/
contract PlanWhatIf PlanWhatIf "0 1" plan -f k8s/ --relabel lab-node-0=nosuch
contract Status Status "0 1" status -f $g/status-lab/list.json
contract ImportCheck ImportCheck "0 1" import --check -f $g/import-check-real/nodes.yaml
contract List Node 0 import -f $g/import-check-real/nodes.yaml
contract Replay Replay 0 replay $g/replay-small/nodes.csv $g/replay-small/pods.csv
contract Replay Replay 0 replay $g/replay-departures/nodes.csv $g/replay-departures/pods.csv --departures
contract SyncReport SyncReport "0 1" sync --kubeconfig "$tmp/kubeconfig" --dry-run
contract FaultResult FaultResult 0 fault gpu --kubeconfig "$tmp/kubeconfig" lab-node-1 0=xid:79 --dry-run

# Several documents are never JSON objects in a row: --device-classes has two.
run advertise --dra --device-classes -o json
[ "$(printf '%s\n' "$out" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["items"]))')" -ge 2 ] ||
	fail "the device classes are not the items of one List"
case "$out" in *"---"*) fail "a JSON List holds no document separator" ;; esac
exit 0
