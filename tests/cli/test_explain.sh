# gpushare explain on objects recorded from the e2e apiserver (tests/unit/data/explain):
# exit codes, the scheduler's and the apiserver's words verbatim, usage errors.
. "$(dirname "$0")/lib.sh"
D=$TOP/tests/unit/data/explain
# The recorded objects with -f, the pod named: one already there is explained as a live one.
pod() { run explain pod "$2" -f "$D/nodes.json" -f "$D/pods.json" -f "$D/configmap.json" -f "$D/$1.json"; }

pod pod-scheduled gpu-share/notebook
expect_rc 0 "scheduled pod"
expect_out_has "pod gpu-share/notebook: scheduled on lab-node-1" "where it landed"
expect_out_has "node lab-node-1: fits (the pod is bound here)" "the node it is on"
expect_out_has "scheduler: PodScheduled=True" "condition"

pod pod-pending-insufficient e2e-explain-rec/too-many
expect_rc 1 "pending pod is a finding (k8s.io/kubernetes v1.34.4 pkg/scheduler/framework/types.go FitError.Error)"
expect_out_has "not scheduled (phase Pending)" "pending"
expect_out_has "scheduler: PodScheduled=False Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu." "scheduler verbatim"

pod pod-gpu-on-mig e2e-explain-rec/gpu-on-mig
expect_rc 1 "nvidia.com/gpu on the MIG node"
expect_out_has "hint: this node advertises profiles, not whole GPUs (MIG mixed strategy): nvidia.com/mig-1g.10gb=7" "MIG mixed hint (docs/guide/explain.md)"

pod pod-two e2e-explain-rec/two
expect_rc 0 "admitted by the scheduler"
expect_out_has 'found 2, which is unexpected' "Allocate message (k8s-device-plugin v0.20.0 internal/rm/rm.go ValidateRequest)"

run explain quota e2e-explain-rec -f "$D/quota-list-used.json" --request nvidia.com/gpu=2 --request cpu=4 --name two-more
expect_rc 1 "refused"
real=$(sed -n 's/^Error from server (Forbidden): error when creating "STDIN": //p' "$D/quota-refusal.txt")
expect_out_has "refuses the request: $real" "the apiserver's own message (k8s.io/apiserver v0.34.4 pkg/admission/plugin/resourcequota/controller.go)"

run explain quota e2e-explain-rec -f "$D/quota-list-used.json" --request nvidia.com/gpu=1 --request cpu=1
expect_rc 0 "admitted"
expect_out_has "admits the request" "admitted"
expect_out_has "requests.nvidia.com/gpu: hard 3, used 2, headroom 1" "headroom"

run explain quota e2e-explain-rec -f "$D/quota-list.json"
expect_rc 0 "no request"

# From manifests (the seed's fleet, before a cluster exists): the same verdicts.
K=$TOP/k8s
G=$TOP/tests/golden
run explain pod -f "$K/mig-job.yaml" -f "$K/lab-nodes.yaml" -f "$K/device-plugin-configs.yaml"
expect_rc 0 "both seed pods fit somewhere"
expect_out_has "verdict: fits lab-node-2" "mig-job only on the MIG node"
expect_out_has "ask for one of those instead of nvidia.com/gpu" "plain-gpu: the name lab-node-2 advertises"
run explain pod team-a/team-over -f "$G/explain-offline-constraints/nodes.yaml" -f "$K/device-plugin-configs.yaml" -f "$K/team-a-pods.yaml" -f "$K/team-over.yaml" -f "$K/gpu-quota.yaml"
expect_rc 1 "quota refusal"
expect_out_has 'verdict: refused at creation: pods "team-over" is forbidden: exceeded quota: gpu-quota' "apiserver's words"
run explain pod -f "$G/explain-offline-admission/pod.yaml" -f "$K/lab-nodes.yaml" -f "$K/device-plugin-configs.yaml"
expect_rc 1 "fails kubelet admission"
run explain pod -f "$G/explain-offline-bad-quantity/pod.yaml" -f "$K/lab-nodes.yaml" -f "$K/device-plugin-configs.yaml"
expect_rc 2 "bad quantity"
expect_err_has "pod.yaml:11:25: limits nvidia.com/gpu" "file:line:col"
# The whole seed directory: nodes, ConfigMap, quota and pods found by kind.
run explain pod team-a/team-over -f "$K"
expect_rc 1 "quota refusal from the directory's quota"
expect_out_has 'verdict: refused at creation: pods "team-over" is forbidden: exceeded quota: gpu-quota' "quota found in k8s/"
run explain pod team-a/nope -f "$K"
expect_rc 2 "no such pod"
expect_err_has "no pod team-a/nope among the files" "names it"
run explain node lab-node-1 -f "$K" --configmap gpu-share/nope
expect_rc 0 "no such ConfigMap: the plugin's defaults"
expect_out_has "config: the empty config (the plugin's defaults): no device-plugin ConfigMap" "as live with no ConfigMap"
expect_err_has "no ConfigMap gpu-share/nope among the files: every node gets the device plugin's defaults (read: gpu-share/device-plugin-configs" "says which ConfigMaps it read"
run explain pod -f "$K/mig-job.yaml" --configmap "$K/device-plugin-configs.yaml"
expect_rc 2 "--configmap FILE"
expect_err_has "option '--configmap' takes NAMESPACE/NAME (the ConfigMap), not a file: give '$K/device-plugin-configs.yaml' with -f" "names the fix"

# usage errors
run explain
expect_rc 2 "nothing to explain"
run explain pod
expect_rc 2 "no pod"
run explain pod noslash
expect_rc 2 "pod without namespace"
expect_err_has "pod takes NAMESPACE/NAME" "message"
run explain quota ns --request nvidia.com/gpu
expect_rc 2 "request without a quantity"
expect_err_has "--request takes RESOURCE=QUANTITY" "message"
run explain quota ns --bogus
expect_rc 2 "unknown option"
run explain pod -f /nonexistent
expect_rc 2 "unreadable file"
expect_err_has "the path '/nonexistent' does not exist" "kubectl's words"
run explain --help
expect_rc 0 "help"
expect_out_has "usage: gpushare explain pod NS/NAME" "help"
