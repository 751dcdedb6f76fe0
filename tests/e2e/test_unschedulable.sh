#!/usr/bin/env bash
# A pod asking for a resource no node advertises stays Pending, and the
# scheduler says why in the pod's PodScheduled condition.
. "$TOP/tests/e2e/lib.sh"

ns=$(e2e_name unsched)
node=$(e2e_name plain)
res=e2e.gpushare.example/nowhere
# One Ready node without the resource, so the message is about resources
# and not "no nodes available".
e2e_node "$node"
e2e_namespace "$ns"

e2e_pod "$ns" lost "$res=1" | run k create -f -
expect_rc 0 "create pod"
cond() { jp pod lost "$ns" "{.status.conditions[?(@.type==\"PodScheduled\")].$1}"; }
has_cond() { [ "$(cond status)" = False ]; }
wait_for 60 "PodScheduled=False" has_cond
expect_eq "$(cond reason)" "Unschedulable" "condition reason"
# FitError text: "0/N nodes are available: <counts and reasons>. preemption: ..."
expect_match "$(cond message)" "^0/[0-9]+ nodes are available: " "message head"
expect_match "$(cond message)" "[0-9]+ Insufficient $res" "NodeResourcesFit reason"
expect_has "$(cond message)" "preemption: " "PostFilter part"

# It stays Pending: nothing will ever advertise the resource.
expect_eq "$(jp pod lost "$ns" '{.status.phase}')" "Pending" "phase"
expect_eq "$(jp pod lost "$ns" '{.spec.nodeName}')" "" "not bound"

# The same text reaches the FailedScheduling event.
ev() { k -n "$ns" get events --field-selector involvedObject.name=lost,reason=FailedScheduling -o jsonpath='{.items[*].message}'; }
has_ev() { [ -n "$(ev)" ]; }
wait_for 30 "FailedScheduling event" has_ev
expect_has "$(ev)" "Insufficient $res" "event message"
