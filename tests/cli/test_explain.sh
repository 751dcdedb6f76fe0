# gpushare explain on objects recorded from the e2e apiserver (tests/unit/data/explain):
# exit codes, the scheduler's and the apiserver's words verbatim, usage errors.
. "$(dirname "$0")/lib.sh"
D=$TOP/tests/unit/data/explain
pod() { run explain pod --pod-file "$D/$1.json" --nodes-file "$D/nodes.json" --pods-file "$D/pods.json" --configmap-file "$D/configmap.json"; }

pod pod-scheduled
expect_rc 0 "scheduled pod"
expect_out_has "pod gpu-share/notebook: scheduled on lab-node-1" "where it landed"
expect_out_has "node lab-node-1: fits (the pod is bound here)" "the node it is on"
expect_out_has "scheduler: PodScheduled=True" "condition"

pod pod-pending-insufficient
expect_rc 1 "pending pod is a finding (control-plane §5.2)"
expect_out_has "not scheduled (phase Pending)" "pending"
expect_out_has "scheduler: PodScheduled=False Unschedulable: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu." "scheduler verbatim"

pod pod-gpu-on-mig
expect_rc 1 "nvidia.com/gpu on the MIG node"
expect_out_has "hint: this node advertises profiles, not whole GPUs (MIG mixed strategy): nvidia.com/mig-1g.10gb=7" "§6.5 hint"

pod pod-two
expect_rc 0 "admitted by the scheduler"
expect_out_has 'found 2, which is unexpected' "§3.4 Allocate message"

run explain quota --quota-file "$D/quota-list-used.json" --request nvidia.com/gpu=2 --request cpu=4 --name two-more
expect_rc 1 "refused"
real=$(sed -n 's/^Error from server (Forbidden): error when creating "STDIN": //p' "$D/quota-refusal.txt")
expect_out_has "refuses the request: $real" "the apiserver's own message (§5.1)"

run explain quota --quota-file "$D/quota-list-used.json" --request nvidia.com/gpu=1 --request cpu=1
expect_rc 0 "admitted"
expect_out_has "admits the request" "admitted"
expect_out_has "requests.nvidia.com/gpu: hard 3, used 2, headroom 1" "headroom"

run explain quota --quota-file "$D/quota-list.json"
expect_rc 0 "no request"

# From manifests (the seed's fleet, before a cluster exists): the same verdicts.
K=$TOP/k8s
G=$TOP/tests/golden
run explain pod "$K/mig-job.yaml" --nodes "$K/lab-nodes.yaml" --configmap "$K/device-plugin-configs.yaml"
expect_rc 0 "both seed pods fit somewhere"
expect_out_has "verdict: fits lab-node-2" "mig-job only on the MIG node"
expect_out_has "ask for one of those instead of nvidia.com/gpu" "plain-gpu: the name lab-node-2 advertises"
run explain pod "$K/team-over.yaml" --nodes "$G/explain-offline-constraints/nodes.yaml" --configmap "$K/device-plugin-configs.yaml" --pods "$K/team-a-pods.yaml" --quota "$K/gpu-quota.yaml"
expect_rc 1 "quota refusal"
expect_out_has 'verdict: refused at creation: pods "team-over" is forbidden: exceeded quota: gpu-quota' "apiserver's words"
run explain pod "$G/explain-offline-admission/pod.yaml" --nodes "$K/lab-nodes.yaml" --configmap "$K/device-plugin-configs.yaml"
expect_rc 1 "fails kubelet admission"
run explain pod "$G/explain-offline-bad-quantity/pod.yaml" --nodes "$K/lab-nodes.yaml" --configmap "$K/device-plugin-configs.yaml"
expect_rc 2 "bad quantity"
expect_err_has "pod.yaml:11:25: limits nvidia.com/gpu" "file:line:col"
run explain pod "$K/mig-job.yaml" --nodes "$K/mig-job.yaml" --configmap "$K/device-plugin-configs.yaml"
expect_rc 2 "no Node"
expect_err_has "no Node in the file" "no Node"

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
run explain pod --pod-file /nonexistent --nodes-file /nonexistent
expect_rc 2 "unreadable file"
run explain --help
expect_rc 0 "help"
expect_out_has "usage: gpushare explain pod NS/NAME" "help"
