#!/usr/bin/env bash
# A ResourceQuota requests.nvidia.com/gpu: 2 admits two one-GPU pods and
# refuses the third at admission: 403 from the apiserver, no pod object.
. "$TOP/tests/e2e/lib.sh"

ns=$(e2e_name quota)
node=$(e2e_name gpu)
e2e_node "$node" nvidia.com/gpu=8
e2e_namespace "$ns"

run k -n "$ns" create -f - <<JSON
{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"gpu-quota"},
 "spec":{"hard":{"requests.nvidia.com/gpu":"2"}}}
JSON
expect_rc 0 "create quota"
# Admission reads status.hard: until the controller fills it in, the quota
# limits nothing.
gs_wait_quota_hard "$ns" gpu-quota requests.nvidia.com/gpu 60 || fail "quota status.hard not set after 60s"
expect_eq "$(jp resourcequota gpu-quota "$ns" '{.status.hard.requests\.nvidia\.com/gpu}')" "2" "status.hard"

for p in team-1 team-2; do
	e2e_pod "$ns" "$p" nvidia.com/gpu=1 | run k create -f -
	expect_rc 0 "create $p within quota"
done
# Admission adds each admitted pod to status.used at once; waiting for it
# also covers an admission cache that had not yet seen status.hard.
gs_wait_quota_used "$ns" gpu-quota requests.nvidia.com/gpu 2 30 || fail "status.used not 2"
e2e_pod "$ns" team-over nvidia.com/gpu=1 | run k create -f -
expect_rc 1 "third pod refused"
expect_has "$err" "Error from server (Forbidden)" "kubectl's prefix for a 403"
expect_has "$err" 'pods "team-over" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=2, limited: requests.nvidia.com/gpu=2' "quota message"

run k -n "$ns" get pod team-over -o name
expect_rc 1 "no object for the refused pod"
expect_has "$err" "NotFound" "refused pod absent"
expect_eq "$(k -n "$ns" get pods -o name | wc -l)" "2" "exactly the two admitted pods"

# The same over raw HTTP: 403 with a Status body.
body=$(e2e_pod "$ns" team-raw nvidia.com/gpu=1)
api POST "/api/v1/namespaces/$ns/pods" "$GS_ADMIN_TOKEN" "$body"
expect_eq "$status" "403" "HTTP status"
expect_eq "$(printf '%s' "$out" | jq -r .reason)" "Forbidden" "Status.reason"
expect_eq "$(printf '%s' "$out" | jq -r .code)" "403" "Status.code"
expect_has "$(printf '%s' "$out" | jq -r .message)" "exceeded quota: gpu-quota" "Status.message"

# Usage is freed by the quota controller once a pod is gone.
run k -n "$ns" delete pod team-1 --wait=false
expect_rc 0 "delete team-1"
gs_wait_quota_used "$ns" gpu-quota requests.nvidia.com/gpu 1 60 || fail "status.used not back to 1 after 60s"
e2e_pod "$ns" team-3 nvidia.com/gpu=1 | run k create -f -
expect_rc 0 "a pod fits again after usage was freed"
