#!/usr/bin/env bash
# gpushare fault against tests/cli/fake_apiserver.py (lab-node-1: 2 x Tesla T4,
# no fault declared): --dry-run prints the merge patch of the node's
# gpushare.io/gpu-health (or device-plugin-restarted-at) and writes nothing;
# without it one PATCH of the Node; bad entries are refused before any request.
. "$TOP/tests/cli/lib.sh"

use_tmp
serve_fake_apiserver

runlog fault gpu lab-node-1 0=xid:79 --dry-run --kubeconfig "$K"
expect_rc 0 "gpu --dry-run"
no_writes "gpu --dry-run"
expect_out_has 'lab-node-1: gpushare.io/gpu-health "" -> "0=xid:79" (dry run)' "dry-run line"
expect_out_has '"gpushare.io/gpu-health": "0=xid:79"' "the patch"
expect_err_has "dry run: nothing will be written" "dry run announced"
case "$reqs" in "GET /api/v1/nodes/lab-node-1 "*) ;; *) fail "read the node: $reqs" ;; esac

# Several entries, in any order: one canonical value.
runlog fault gpu --kubeconfig "$K" lab-node-1 1=lost 0=xid:79 --dry-run -o json
expect_rc 0 "gpu -o json"
no_writes "gpu -o json"
expect_out_has '"after": "0=xid:79,1=lost"' "canonical value"
expect_out_has '"dryRun": true' "dryRun"
expect_out_has '"changed": true' "changed"

# Written: one PATCH of the Node (not its status).
runlog fault gpu lab-node-1 0=xid:79 --kubeconfig "$K"
expect_rc 0 "gpu"
case "$reqs" in *"PATCH /api/v1/nodes/lab-node-1 "*) ;; *) fail "no PATCH of the node: $reqs" ;; esac

# The plugin's restart, at a fixed time.
GPUSHARE_NOW=1796335660 runlog fault restart-plugin lab-node-1 --dry-run --kubeconfig "$K"
expect_rc 0 "restart-plugin"
no_writes "restart-plugin --dry-run"
expect_out_has '"gpushare.io/device-plugin-restarted-at": "2026-12-03T22:07:40Z"' "restart stamp"

# Nothing declared: clearing changes nothing and sends no PATCH.
runlog fault clear lab-node-1 --kubeconfig "$K"
expect_rc 0 "clear"
no_writes "clear with nothing declared"
expect_out_has "(unchanged)" "clear unchanged"

# Refused before any request: a malformed entry, a GPU the node lacks after reading it.
runlog fault gpu lab-node-1 0=xd:79 --dry-run --kubeconfig "$K"
expect_rc 2 "bad entry"
expect_err_has "argument '0=xd:79': character 3: expected 'xid:N', 'xid:N/GI/CI' or 'lost' after '='" "bad entry"
[ -z "$reqs" ] || fail "a bad entry sent requests: $reqs"
runlog fault gpu lab-node-1 0=xid:79,1=lost --dry-run --kubeconfig "$K"
expect_rc 2 "two in one"
expect_err_has "one entry per argument" "two in one"
runlog fault gpu lab-node-1 5=lost --dry-run --kubeconfig "$K"
expect_rc 2 "no GPU 5"
expect_err_has "node 'lab-node-1' has no GPU 5 (it declares 2: 0-1)" "no GPU 5"
no_writes "no GPU 5"
runlog fault clear lab-node-1 x --kubeconfig "$K"
expect_rc 2 "bad index"
expect_err_has "argument 'x': expected a GPU index (0-255)" "bad index"
runlog fault gpu ../etc 0=lost --kubeconfig "$K"
expect_rc 2 "bad node name"
[ -z "$reqs" ] || fail "a bad node name sent requests: $reqs"
runlog fault reboot lab-node-1
expect_rc 2 "unknown subcommand"
expect_err_has "'reboot' is not a fault subcommand" "unknown subcommand"

# fault mig: the label and the declarations in one PATCH of the Node, only what changes.
runlog fault mig lab-node-1 --config all-1g.10gb --stall --seconds 30 --dry-run --kubeconfig "$K"
expect_rc 0 "mig --dry-run"
no_writes "mig --dry-run"
expect_out_has 'lab-node-1: nvidia.com/mig.config "" -> "all-1g.10gb" (dry run)' "mig label line"
expect_out_has 'lab-node-1: gpushare.io/mig-fault "" -> "stall" (dry run)' "mig fault line"
expect_out_has '"nvidia.com/mig.config": "all-1g.10gb"' "mig patch label"
expect_out_has '"gpushare.io/mig-reconfigure-seconds": "30"' "mig patch seconds"
runlog fault mig lab-node-1 --fail -o json --dry-run --kubeconfig "$K"
expect_rc 0 "mig -o json"
expect_out_has '"key": "gpushare.io/mig-fault"' "json change"
expect_out_has '"after": "fail"' "json after"
expect_out_has '"kind": "FaultResult"' "json kind"
runlog fault mig lab-node-1 --config all-1g.10gb --kubeconfig "$K"
expect_rc 0 "mig"
case "$reqs" in *"PATCH /api/v1/nodes/lab-node-1 "*) ;; *) fail "no PATCH of the node: $reqs" ;; esac
# Nothing declared: removing the fault changes nothing and sends no PATCH.
runlog fault mig lab-node-1 --no-fault --kubeconfig "$K"
expect_rc 0 "mig --no-fault"
no_writes "mig --no-fault with nothing declared"
expect_out_has "(unchanged)" "mig unchanged"
runlog fault mig lab-node-1 --stall --fail --kubeconfig "$K"
expect_rc 2 "mig --stall --fail"
expect_err_has "--stall, --fail and --no-fault exclude each other" "exclusive"
runlog fault mig lab-node-1 --kubeconfig "$K"
expect_rc 2 "mig with nothing"
expect_err_has "say what changes" "mig with nothing"
runlog fault mig lab-node-1 --config 'all 1g' --kubeconfig "$K"
expect_rc 2 "mig bad layout"
expect_err_has "is not a label value" "mig bad layout"
[ -z "$reqs" ] || fail "a bad layout sent requests: $reqs"
# fault kubelet: gpushare.io/kubelet-restart, "<kind>@<now>,<seconds>", one PATCH of the Node.
GPUSHARE_NOW=1796335660 runlog fault kubelet lab-node-1 --reboot --dry-run --kubeconfig "$K"
expect_rc 0 "kubelet --reboot --dry-run"
no_writes "kubelet --dry-run"
expect_out_has 'lab-node-1: gpushare.io/kubelet-restart "" -> "reboot@2026-12-03T22:07:40Z,60" (dry run)' "reboot line, default 60 s"
expect_out_has '"gpushare.io/kubelet-restart": "reboot@2026-12-03T22:07:40Z,60"' "reboot patch"
GPUSHARE_NOW=1796335660 runlog fault kubelet lab-node-1 --restart --seconds 25 -o json --dry-run --kubeconfig "$K"
expect_rc 0 "kubelet -o json"
expect_out_has '"after": "restart@2026-12-03T22:07:40Z,25"' "restart json after"
expect_out_has '"kind": "FaultResult"' "kubelet json kind"
expect_out_has '"dryRun": true' "kubelet json dryRun"
runlog fault kubelet lab-node-1 --restart --kubeconfig "$K"
expect_rc 0 "kubelet --restart"
case "$reqs" in *"PATCH /api/v1/nodes/lab-node-1 "*) ;; *) fail "no PATCH of the node: $reqs" ;; esac
# Nothing declared: --clear changes nothing and sends no PATCH.
runlog fault kubelet lab-node-1 --clear --kubeconfig "$K"
expect_rc 0 "kubelet --clear"
no_writes "kubelet --clear with nothing declared"
expect_out_has "(unchanged)" "kubelet --clear unchanged"
# Refused before any request.
runlog fault kubelet lab-node-1 --restart --reboot --kubeconfig "$K"
expect_rc 2 "kubelet --restart --reboot"
expect_err_has "say one of --restart, --reboot or --clear" "kubelet exclusive"
[ -z "$reqs" ] || fail "exclusive flags sent requests: $reqs"
runlog fault kubelet lab-node-1 --kubeconfig "$K"
expect_rc 2 "kubelet with nothing"
expect_err_has "say one of --restart, --reboot or --clear" "kubelet with nothing"
runlog fault kubelet lab-node-1 --clear --seconds 5 --kubeconfig "$K"
expect_rc 2 "kubelet --clear --seconds"
expect_err_has "--seconds goes with --restart or --reboot" "clear with seconds"
runlog fault kubelet lab-node-1 --reboot --seconds 86401 --kubeconfig "$K"
expect_rc 2 "kubelet --seconds too many"
[ -z "$reqs" ] || fail "a bad --seconds sent requests: $reqs"
runlog fault kubelet lab-node-2 --restart --kubeconfig "$K"
expect_rc 2 "kubelet on a node the fake apiserver lacks"
exit 0
