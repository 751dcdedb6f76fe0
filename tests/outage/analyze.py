#!/usr/bin/env python3
"""tests/outage/analyze.py OUT T_STOP T_START T_BACK GRACE HEAL RESTARTS SECONDS: what
tests/outage/run.sh saw, and its verdict (exit 0 pass, 1 fail).

OUT holds nodes.jsonl and leases.jsonl (tests/outage/watch.py: every
change of a node, its Ready status, reason, lastTransitionTime and taints,
and of a Lease, its holder, renewTime and duration, with when it arrived),
pods-before.json, pods-after.json,
evictions.json (TaintManagerEviction Events) and metrics.txt (the
controller's gpushare_lease_* lines). T_STOP, T_START and T_BACK are when
kube-apiserver was stopped, started again and answered /readyz again (Unix
seconds); GRACE is kube-controller-manager's --node-monitor-grace-period in
seconds.

A node's time not Ready runs from the lastTransitionTime kube-controller-manager
wrote when it marked it Unknown (or when that change arrived) to the arrival
of the change that made it Ready again, or to the end of the watch when none
did.
"""
import json
import os
import sys
from datetime import datetime, timezone


def ts(s):
    """RFC 3339 (with or without a fraction) to Unix seconds; None if empty."""
    if not s:
        return None
    s = s.rstrip("Z")
    frac = 0.0
    if "." in s:
        s, f = s.split(".", 1)
        frac = float("0." + f)
    return datetime.strptime(s, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp() + frac


def lines(path):
    if not os.path.exists(path):
        return []
    out = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass  # a sample cut by the end of the run
    return sorted(out, key=lambda x: x["t"])


def main():
    out, t_stop, t_start, t_back, grace, heal, restarts, seconds = sys.argv[1:9]
    t_stop, t_start, t_back, grace = float(t_stop), float(t_start), float(t_back), float(grace)
    samples = lines(os.path.join(out, "nodes.jsonl"))
    lease_samples = lines(os.path.join(out, "leases.jsonl"))
    if not samples:
        print("outage: nothing watched")
        return 1
    t_end = float(os.environ.get("OUTAGE_T_END", "0")) or samples[-1]["t"]

    # --- nodes not Ready -------------------------------------------------------------------
    open_at = {}       # node -> when its current time not Ready began
    longest = {}       # node -> longest time not Ready, seconds
    still = set()      # not Ready at the last sample
    tainted = {}       # taint -> nodes that showed it at some point since the stop
    last_taints = {}   # node -> its taints at the last sample
    names = set()
    for smp in samples:
        t = smp["t"]
        if smp["ev"] == "DELETED":
            continue
        for name, status, reason, ltt, taints in [smp["o"]]:
            names.add(name)
            last_taints[name] = taints
            if t >= t_stop:
                for taint in filter(None, taints.split(",")):
                    tainted.setdefault(taint, set()).add(name)
            if status != "True":
                if name not in open_at:
                    began = ts(ltt)
                    open_at[name] = began if began and t_stop <= began <= t else t
            elif name in open_at:
                d = t - open_at.pop(name)
                longest[name] = max(longest.get(name, 0.0), d)
    t_last = t_end
    for name, began in open_at.items():
        still.add(name)
        longest[name] = max(longest.get(name, 0.0), t_last - began)
    worst = sorted(longest.items(), key=lambda x: -x[1])
    over = [n for n, d in worst if d > grace]

    # --- Leases ---------------------------------------------------------------------------
    first = {}    # lease -> (renewTime, holder, duration) of its first renewal after T_BACK
    last = {}     # lease -> last renewTime seen
    gap = {}      # lease -> longest time without a renewal after T_BACK, seconds
    for smp in lease_samples:
        for name, holder, renew, duration in [smp["o"]]:
            r = ts(renew)
            if r is None:
                continue
            if r > t_back and name not in first:
                first[name] = (r, holder, duration)
                gap[name] = max(gap.get(name, 0.0), r - t_back)
            prev = last.get(name)
            if prev is not None and r > prev and prev > t_back:
                gap[name] = max(gap.get(name, 0.0), r - prev)
            last[name] = r
    t_lease_end = t_end
    for name, r in last.items():
        since = max(r, t_back)
        gap[name] = max(gap.get(name, 0.0), t_lease_end - since)
    leases = len(last)
    never = leases - len(first)
    by_gpushare = sum(1 for r, h, d in first.values() if d == 1)

    # --- pods -----------------------------------------------------------------------------
    with open(os.path.join(out, "pods-before.json")) as f:
        before = {p["name"]: p for p in json.load(f)}
    after = {}
    if os.path.exists(os.path.join(out, "pods-after.json")):
        with open(os.path.join(out, "pods-after.json")) as f:
            after = {p["name"]: p for p in json.load(f)}
    evicted = sorted(n for n, p in before.items()
                     if n not in after or after[n]["uid"] != p["uid"] or after[n]["deleting"])
    events = []
    if os.path.exists(os.path.join(out, "evictions.json")):
        with open(os.path.join(out, "evictions.json")) as f:
            events = [e for e in json.load(f) if e["ns"] == "outage"]
    metrics = ""
    if os.path.exists(os.path.join(out, "metrics.txt")):
        with open(os.path.join(out, "metrics.txt")) as f:
            metrics = " ".join(l.strip().replace("gpushare_", "") for l in f if l.strip())

    # --- the report -----------------------------------------------------------------------
    n = len(names)
    print("outage: healing %s; %d nodes, %d pods; kube-apiserver stopped %.1fs, /readyz %.1fs after "
          "the stop; watched %.0fs after that; grace %.0fs; whole run %ss"
          % (heal, n, len(before), t_start - t_stop, t_back - t_stop, t_last - t_back, grace,
             seconds))
    print("outage: nodes not Ready at some point: %d of %d; longest per node: max %.1fs, "
          "median of those %.1fs; over the grace: %d; still not Ready at the end: %d"
          % (len(longest), n, worst[0][1] if worst else 0.0,
             sorted(longest.values())[len(longest) // 2] if longest else 0.0, len(over), len(still)))
    if worst:
        print("outage: the longest: %s" % ", ".join("%s %.1fs" % x for x in worst[:3]))
    at_end = {}
    for name, taints in last_taints.items():
        for taint in filter(None, taints.split(",")):
            at_end[taint] = at_end.get(taint, 0) + 1
    print("outage: tainted at some point since the stop: %s; at the end: %s" % (", ".join(
        "%s %d" % (k, len(v)) for k, v in sorted(tainted.items())) or "none", ", ".join(
        "%s %d" % kv for kv in sorted(at_end.items())) or "none"))
    if lease_samples:
        firsts = sorted(r - t_back for r, h, d in first.values())
        print("outage: Leases renewed again after the return: %d of %d (%d first by gpushare's "
              "controller, 1 s duration), the first %.1fs, the last %.1fs after it; never: %d; "
              "longest time without a renewal %.1fs"
              % (len(first), leases, by_gpushare, firsts[0] if firsts else 0.0,
                 firsts[-1] if firsts else 0.0, never, max(gap.values()) if gap else 0.0))
    print("outage: pods evicted: %d of %d%s; TaintManagerEviction Events: %d"
          % (len(evicted), len(before), (" (%s)" % ", ".join(evicted[:5])) if evicted else "",
             len(events)))
    print("outage: kwok-guard restarts: %s; controller: %s" % (restarts, metrics or "(no metrics)"))

    if heal == "none":
        if over:
            print("outage: PASS: without healing the stall shows: %d nodes not Ready for longer "
                  "than the %.0fs grace (up to %.1fs)" % (len(over), grace, worst[0][1]))
            return 0
        print("outage: FAIL: without healing no node stayed not Ready past the grace: no stall "
              "this time (OUTAGE_FREEZE=1 makes it certain)")
        return 1
    bad = []
    if over:
        bad.append("%d nodes not Ready for longer than the %.0fs grace (up to %.1fs)"
                   % (len(over), grace, worst[0][1]))
    if evicted or events:
        bad.append("%d pods evicted, %d TaintManagerEviction Events" % (len(evicted), len(events)))
    if bad:
        print("outage: FAIL: " + "; ".join(bad))
        return 1
    print("outage: PASS: no node not Ready past the %.0fs grace, no pod evicted" % grace)
    return 0


if __name__ == "__main__":
    sys.exit(main())
