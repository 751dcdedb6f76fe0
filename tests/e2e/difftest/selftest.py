#!/usr/bin/env python3
"""Checks of the differential test's own pieces, without a cluster: the
generator is a function of the seed, and the comparison accepts what it
should and nothing else. Run by tests/e2e/test_plan_differential.sh first."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402
import gen  # noqa: E402

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("selftest FAIL: " + what)


# The generator: same seed and index, same case; another seed, another case.
a, b = gen.case("7", 3, "x"), gen.case("7", 3, "x")
check(a == b, "a case is a function of (seed, index)")
check(gen.case("8", 3, "x") != a, "another seed gives another case")
check(gen.case("7", 3, "y")["nodes"][0]["metadata"]["name"] == "dty3-n0", "the tag is in names")
for i in range(50):
    c = gen.case("1", i)
    case_label = str(i)
    for n in c["nodes"]:
        check(n["metadata"]["labels"][gen.CASE_KEY] == case_label, "node carries the case label")
        check({"key": gen.CASE_KEY, "value": case_label, "effect": "NoSchedule"}
              in n["spec"]["taints"], "node carries the case taint")
    for p in c["pods"]:
        check(p["spec"]["nodeSelector"][gen.CASE_KEY] == case_label, "pod selects its case")
        check(any(t.get("key") == gen.CASE_KEY and t.get("value") == case_label
                  for t in p["spec"]["tolerations"]), "pod tolerates its case")
        check(all(t.get("key") for t in p["spec"]["tolerations"]),
              "no pod tolerates every taint (it would reach other cases' nodes)")
        check(p["metadata"]["namespace"] in c["namespaces"], "pod in a case namespace")
    check(1 <= len(c["nodes"]) <= 6 and 1 <= len(c["pods"]) <= 6, "small cases")

# The scheduler's text (v1.34, seen on the local control plane) with 29 nodes
# of other cases, 0 nodes outside every case, and this case's 3 nodes.
real = ("0/32 nodes are available: 1 Insufficient memory, 2 Insufficient nvidia.com/gpu, "
        "29 node(s) had untolerated taint(s). no new claims to deallocate, preemption: 0/32 "
        "nodes are available: 32 Preemption is not helpful for scheduling.")
want = ("0/3 nodes are available: 1 Insufficient memory, 2 Insufficient nvidia.com/gpu. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 3 Preemption "
        "is not helpful for scheduling.")
got = compare.normalize_fit_error(real, 3, {})
check(got == want, "normalize: got %r" % got)
# The case's own tainted node stays counted; 3 lab nodes outside every case
# fail on the case's nodeSelector and come out of the affinity count.
real = ("0/35 nodes are available: 1 node(s) had untolerated taint(s), 4 node(s) didn't "
        "match Pod's node affinity/selector, 30 node(s) had untolerated taint(s).")
got = compare.normalize_fit_error(real, 3, {compare.AFFINITY: 3})
check(got == "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
      "2 node(s) had untolerated taint(s).", "normalize own taints and foreign nodes: %r" % got)
# Another case's cordoned node fails on NodeUnschedulable before any taint.
real = ("0/10 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable, "
        "7 node(s) had untolerated taint(s).")
got = compare.normalize_fit_error(real, 2, {compare.UNSCHEDULABLE: 1})
check(got == "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable.",
      "normalize another case's unschedulable node: %r" % got)
check(compare.normalize_fit_error("0/3 nodes are available: 3 Insufficient cpu.", 5, {}) is None,
      "a count that cannot be taken apart is not guessed")
check(compare.normalize_fit_error("pods \"p\" is forbidden", 1, {}) is None, "not a FitError")
check(not compare.reasons_agree(want, want.split(" preemption: ")[0]),
      "a cut in the middle of the PostFilter part is no agreement")
check(compare.reasons_agree(want, "0/3 nodes are available: 1 Insufficient memory, 2 "
                            "Insufficient nvidia.com/gpu."),
      "plan may leave the PostFilter part out")
check(compare.reasons_agree(want, want), "verbatim")
check(compare.reasons_agree("Pod was rejected: Allocate failed due to x", "Allocate failed due to x"),
      "a failed pod's status message is the kubelet's with its rejectPod prefix")
check(not compare.reasons_agree(want, "0/3 nodes are available: 3 Insufficient cpu."),
      "another histogram disagrees")

# Verdicts and nodes.
bound = {"verdict": "bound", "node": "n1", "reason": ""}
check(compare.compare_pod(bound, {"verdict": "bound", "node": "n1", "feasible": ["n1"]})[0]
      == "same", "same node")
check(compare.compare_pod(bound, {"verdict": "bound", "node": "n2", "feasible": ["n1", "n2"]})[0]
      == "tie", "another feasible node is a tie")
check(compare.compare_pod(bound, {"verdict": "bound", "node": "n2", "feasible": ["n2"]})[0]
      == "node", "a node plan found infeasible is a disagreement")
check(compare.compare_pod(bound, {"verdict": "bound", "node": "n2", "feasible": ["n1", "n2"],
                                  "tied": ["n2", "n1"]})[0] == "tie", "a tied node is a tie")
check(compare.compare_pod(bound, {"verdict": "bound", "node": "n2", "feasible": ["n1", "n2"],
                                  "tied": ["n2"]})[0] == "score",
      "a feasible node plan scored lower is a scoring disagreement")
check(compare.compare_pod(bound, {"verdict": "failed", "node": "n2", "feasible": ["n1", "n2"],
                                  "tied": ["n2", "n1"]})[0] == "tie",
      "a tie on nodes whose configs admit differently is a tie")
check(compare.compare_pod({"verdict": "bound", "node": "n7"},
                          {"verdict": "bound", "node": "n1", "feasible": ["n1"], "tied": ["n1"],
                           "sample": {"start": 3, "evaluated": 420, "nodes": 1000}})[0]
      == "sample", "on a sampled pod another node is the scheduler's sample")
check(compare.compare_pod({"verdict": "bound", "node": "n7"},
                          {"verdict": "bound", "node": "n1", "feasible": ["n1", "n7"],
                           "tied": ["n1"]})[0] == "score",
      "without a sample a lower-scored node is still a score disagreement")

check(compare.lists_cut({"tied": ["n%d" % k for k in range(16)], "tiedCount": 20,
                         "feasible": ["n%d" % k for k in range(16)], "feasibleCount": 86}),
      "16 of 20 tied nodes listed: cut")
check(not compare.lists_cut({"tied": ["n1"], "tiedCount": 1, "feasible": ["n1", "n2"],
                             "feasibleCount": 2}), "every node listed: not cut")
check(compare.pair_kind(bound, {"verdict": "bound", "node": "n2"},
                        {"verdict": "bound", "node": "n2", "tied": ["n2", "n1"],
                         "feasible": ["n2", "n1"]})[0] == "tie",
      "the scheduler's node tied with plan's on the two alone: a tie")
check(compare.pair_kind(bound, {"verdict": "bound", "node": "n2"},
                        {"verdict": "bound", "node": "n2", "tied": ["n2"],
                         "feasible": ["n2", "n1"]})[0] == "score",
      "feasible but lower on the two alone: a score disagreement")
check(compare.pair_kind(bound, {"verdict": "bound", "node": "n2"},
                        {"verdict": "bound", "node": "n2", "tied": ["n2"],
                         "feasible": ["n2"]})[0] == "node",
      "not feasible on the two alone: a node disagreement")
check(compare.compare_pod(bound, {"verdict": "failed", "node": "n1", "feasible": ["n1"],
                                  "tied": ["n1"]})[0] == "verdict",
      "the same node, another admission verdict, is a disagreement")
check(compare.compare_pod(bound, {"verdict": "pending", "node": None, "feasible": []})[0]
      == "verdict", "bound vs pending")
check(compare.compare_pod({"verdict": "refused", "node": None, "reason": "x"},
                          {"verdict": "refused", "node": None, "reason": "x"})[0] == "same",
      "refused vs refused")
check(compare.compare_pod(bound, {})[0] == "verdict", "a pod missing from plan's output")

if failures:
    print("selftest: %d failed" % failures)
    sys.exit(1)
print("selftest: ok")
