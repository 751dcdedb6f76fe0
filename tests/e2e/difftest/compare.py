"""Comparing what the cluster did with what `gpushare plan -o json` said.

Pure functions, no cluster: tests/e2e/difftest/selftest.py checks them.

Outcome of one pod, on either side: a dict
    {"verdict": "bound"|"pending"|"refused"|"failed", "node": str|None,
     "reason": str, "feasible": [str] (plan only)}

The scheduler's message counts every node of the cluster; plan sees one
case's nodes. normalize_fit_error() takes the other cases' nodes (and the
cluster's other nodes) back out of it, so the two can be compared verbatim.
"""

import re

TAINTS = "node(s) had untolerated taint(s)"
UNSCHEDULABLE = "node(s) were unschedulable"
AFFINITY = "node(s) didn't match Pod's node affinity/selector"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
# FitError.Error() (pkg/scheduler/framework/types.go): the filters' histogram,
# then the PostFilter message: DynamicResources' "no new claims to
# deallocate, " and DefaultPreemption's own histogram.
FIT = re.compile(r"^0/(\d+) nodes are available: (.*?)\.(?: (.*?)preemption: 0/(\d+) nodes are "
                 r"available: (.*)\.)?$", re.S)


def _histogram(text):
    out = {}
    for item in text.split(", "):
        m = re.match(r"^(\d+) (.*)$", item)
        if not m:
            return None
        out[m.group(2)] = out.get(m.group(2), 0) + int(m.group(1))
    return out


def _render(hist):
    # The scheduler sorts the "<count> <reason>" strings (sortReasonsHistogram).
    return ", ".join(sorted("%d %s" % (n, r) for r, n in hist.items() if n > 0))


def normalize_fit_error(msg, own, foreign):
    """The scheduler's FitError text as if the cluster held only the case's
    `own` nodes. Every other case's node fails the pod on that case's taint
    (v1.34 says "node(s) had untolerated taint(s)" without naming it);
    `foreign` maps a reason to how many nodes outside every case fail with
    it. None when the text is not a FitError this can take apart."""
    m = FIT.match(msg)
    if not m:
        return None
    total, hist = int(m.group(1)), _histogram(m.group(2))
    if hist is None:
        return None
    removed = total - own
    others = removed - sum(foreign.values())
    for reason, n in list(foreign.items()) + [(TAINTS, others)]:
        if n < 0 or hist.get(reason, 0) < n:
            return None
        if n:
            hist[reason] -= n
    out = "0/%d nodes are available: %s." % (own, _render(hist))
    if m.group(4):
        ptotal, phist = int(m.group(4)), _histogram(m.group(5))
        if phist is None or phist.get(NOT_HELPFUL, 0) < removed or ptotal != total:
            return None
        phist[NOT_HELPFUL] -= removed
        out += " %spreemption: 0/%d nodes are available: %s." % (
            m.group(3), own, _render(phist))
    return out


# The kubelet's rejectPod (pkg/kubelet/kubelet.go) writes the status message
# as "Pod was rejected: " + the admit result's message (the Event has it bare).
REJECTED = "Pod was rejected: "


def reasons_agree(real, plan):
    """plan's reason against the normalised real one: verbatim, or verbatim up
    to the end of the filters' part when plan leaves the PostFilter part out
    (DRA's "no new claims to deallocate" and preemption's own count)."""
    if real is None or plan is None:
        return False
    if real == plan or real == REJECTED + plan:
        return True
    m = FIT.match(real)
    return bool(m) and plan == "0/%s nodes are available: %s." % (m.group(1), m.group(2))


def lists_cut(plan):
    """Whether plan's JSON names only some of its tied or feasible nodes (it
    lists at most 16 of each, with tiedCount and feasibleCount): a node
    missing from the lists may still be among them."""
    return (plan.get("tiedCount", 0) > len(plan.get("tied") or [])
            or plan.get("feasibleCount", 0) > len(plan.get("feasible") or []))


def pair_kind(real, plan, pair):
    """The kind of a pod whose lists were cut (lists_cut), from `pair`: plan's
    outcome for it in the same state with only two nodes open to it, plan's
    node and the scheduler's. Both tied there: tie; the scheduler's feasible
    but lower: score; not feasible: node."""
    tied = pair.get("tied") or []
    if real["node"] in tied and plan.get("node") in tied:
        return "tie", "cluster %s on %s, plan %s on %s (equal top scores; plan lists %d of " \
            "its %d tied nodes, the two alone tie)" % (
                real["verdict"], real["node"], plan.get("verdict"), plan.get("node"),
                len(plan.get("tied") or []), plan.get("tiedCount", 0))
    if real["node"] in (pair.get("feasible") or []):
        return "score", "cluster %s, plan %s; the two alone: %s" % (
            real["node"], plan.get("node"), pair.get("reason"))
    return "node", "cluster %s, plan %s; the two alone: %s" % (
        real["node"], plan.get("node"), pair.get("reason"))


def compare_pod(real, plan):
    """One pod: (kind, note). kind is one of
    same      same verdict (and node, for bound/failed)
    tie       both placed (bound or failed), on different nodes, and the
              scheduler's node is one plan scored as high as its own (its
              "tied" list) or, when plan gives no scores, one it found
              feasible: the scheduler picks at random among equal top scores
              (the caller then asks plan again with the pod pinned there)
    sample    both placed, on different nodes, and plan decided the pod on
              a sample (its "sample": from 100 nodes on the scheduler scores
              only numFeasibleNodesToFind nodes from a rotating start, with
              parallel filter workers plan does not follow node for node):
              the scheduler's node is one its random sample could give, so
              it counts as agreement (pinned there as for a tie)
    score     the scheduler's node is feasible for plan but scored lower
              than plan's choice: plan's scoring differs
    verdict   different verdicts
    node      both bound (or failed), the scheduler's node not among plan's
              feasible nodes
    """
    rv, pv = real["verdict"], plan.get("verdict")
    placed = ("bound", "failed")
    if rv in placed and pv in placed and real["node"] != plan.get("node"):
        # The node decides the kubelet's admission too: on a tie the two
        # may place the pod on nodes of different configs, one admitting it.
        feasible = plan.get("feasible") or []
        tied = plan.get("tied")
        if real["node"] in (feasible if tied is None else tied):
            return "tie", "cluster %s on %s, plan %s on %s (equal top scores)" % (
                rv, real["node"], pv, plan["node"])
        if plan.get("sample"):
            s = plan["sample"]
            return "sample", "cluster %s on %s, plan %s on %s (plan's sample: %s of %s nodes " \
                "from #%s)" % (rv, real["node"], pv, plan["node"], s.get("evaluated"),
                               s.get("nodes"), s.get("start"))
        if real["node"] in feasible:
            return "score", "cluster %s, plan %s; plan's top-score nodes: %s" % (
                real["node"], plan.get("node"), ",".join(tied))
        return "node", "cluster %s, plan %s; plan's feasible: %s" % (
            real["node"], plan.get("node"), ",".join(feasible) or "none")
    if rv != pv:
        return "verdict", "cluster %s%s, plan %s%s" % (
            rv, " on " + real["node"] if real.get("node") else "",
            pv, " on " + plan["node"] if plan.get("node") else "")
    return "same", ""
