#!/usr/bin/python3
"""The seed's way (the lab's step 6, README.md: every document of a file, as yaml.safe_load_all reads them): the same
check in Python with PyYAML, as a baseline for `gpushare check`.
usage: pycheck.py pure|c FILE   (pure: PyYAML's Python SafeLoader; c: CSafeLoader)
"""
import sys

import yaml

TEMPLATE = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job"}
GPU = "nvidia.com/gpu"


def qty(v):
    if v is None:
        return 0
    s = str(v).strip()
    if s.endswith("m"):
        return float(s[:-1]) / 1000
    return float(s)


def fmt(q):
    return str(int(q)) if q == int(q) else str(q)


def pod_spec(obj):
    kind = obj.get("kind")
    spec = obj.get("spec") or {}
    if kind == "Pod":
        return spec
    if kind in TEMPLATE:
        return (spec.get("template") or {}).get("spec")
    if kind == "CronJob":
        jt = (spec.get("jobTemplate") or {}).get("spec") or {}
        return (jt.get("template") or {}).get("spec")
    if kind == "PodTemplate":
        return (obj.get("template") or {}).get("spec")
    return None


def check(obj, out):
    if not isinstance(obj, dict):
        return
    if str(obj.get("kind", "")).endswith("List"):
        for item in obj.get("items") or []:
            check(item, out)
        return
    spec = pod_spec(obj)
    if not spec:
        return
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            res = c.get("resources") or {}
            vals = [qty(v[GPU]) for v in (res.get("limits") or {}, res.get("requests") or {}) if GPU in v]
            over = [v for v in vals if v > 1]
            if over:
                out.append("OVER=%s=%s" % (c.get("name", ""), fmt(max(over))))


def main():
    loader = yaml.CSafeLoader if sys.argv[1] == "c" else yaml.SafeLoader
    out = []
    with open(sys.argv[2]) as f:
        for doc in yaml.load_all(f, Loader=loader):
            check(doc, out)
    print("\n".join(out) if out else "OK")
    sys.exit(1 if out else 0)


main()
