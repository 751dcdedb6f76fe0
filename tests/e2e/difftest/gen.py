"""Random small GPU fleets and pod sets for the differential test.

A case is a pure function of (seed, index): the same pair gives the same
nodes, device-plugin ConfigMap, namespaces, quotas and pods on every machine
(random.Random seeded with a string is stable across Python 3 versions).

Every case is isolated from the others in one cluster: its nodes carry the
label gpushare.io/case=<index> and the taint gpushare.io/case=<index>:NoSchedule,
and each of its pods selects that label and tolerates that taint. The same
objects are what `gpushare plan` reads, so both sides judge one fleet.

Run as a script it writes one case's files:
    gen.py SEED INDEX DIR [TAG [NODES]]  -> DIR/{nodes,configmap,quotas,pods}.yaml

Large fleets (`nodes` = LARGE_MIN..LARGE_MAX, the harness's DIFF_NODES): the
case has that many nodes and LARGE_PODS pods, so that kube-scheduler
samples (from 100 nodes on it scores only numFeasibleNodesToFind of them,
from a rotating start: docs/guide/plan.md, "Large fleets").
"""

import os
import random
import sys

import yaml

CASE_KEY = "gpushare.io/case"
# The device-plugin ConfigMap gpushare sync and gpushare controller read by default.
CONFIGMAP = ("gpu-share", "device-plugin-configs")
BATCH_KEY = "gpushare.io/difftest-batch"

# GPU models from data/gpus.tab (NVML names) and their MIG geometry.
MODELS = [
    ("Tesla T4", None),
    ("NVIDIA L4", None),
    ("NVIDIA A10G", None),
    ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
    ("NVIDIA A100-SXM4-80GB", "a100-80gb"),
    ("NVIDIA H100 80GB HBM3", "h100-80gb"),
    ("NVIDIA A30", "a30"),
]


def _load_catalog():
    """From gpus.tab: migset -> [profile, ...] (plain profiles, no +me
    variants), and (layout, model) -> profiles the layout makes on that model."""
    here = os.path.dirname(os.path.abspath(__file__))
    tab = os.path.join(here, "..", "..", "..", "data", "gpus.tab")
    profiles, pci, ids, layouts = {}, {}, {}, {}
    with open(tab, encoding="utf-8") as f:
        for line in f:
            w = line.split()
            if len(w) > 3 and w[0] == "mig" and "+" not in w[2]:
                profiles.setdefault(w[1], []).append(w[2])
            elif w and w[0] == "pci":
                for i in w[2:]:
                    pci.setdefault(i, set()).add(w[1])
            elif w and w[0] == "gpu" and '"' in line:
                ids[line.split('"')[1]] = w[1]
            elif len(w) > 3 and w[0] == "layout" and w[3] == "on":
                layouts.setdefault(w[1], []).append((w[2], [p.split("=")[0] for p in w[4:]]))
    made = {}
    for model, _ in MODELS:
        groups = pci.get(ids.get(model, ""), set())
        for name, entries in layouts.items():
            for filt, profs in entries:
                if filt == "-" or filt[1:] in groups:
                    made[(name, model)] = profs
    return profiles, made


PROFILES, LAYOUT_PROFILES = _load_catalog()
ALL_PROFILES = sorted({p for ps in PROFILES.values() for p in ps})

ZONES = ["a", "b", "c"]
LARGE_MIN, LARGE_MAX = 100, 5000
LARGE_PODS = (20, 60)
TIERS = ["gold", "silver"]
CCS = ["70", "75", "80", "86", "90"]
NODE_TAINTS = [
    {"key": "dedicated", "value": "ml", "effect": "NoSchedule"},
    {"key": "spot", "value": "true", "effect": "PreferNoSchedule"},
    {"key": "gpu", "effect": "NoSchedule"},
    {"key": "slow", "value": "yes", "effect": "PreferNoSchedule"},
    {"key": "maint", "effect": "NoExecute"},
]
TOLERATIONS = [
    {"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"},
    {"key": "dedicated", "operator": "Exists"},
    {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "spot", "operator": "Equal", "value": "true", "effect": "PreferNoSchedule"},
    {"key": "dedicated", "operator": "Equal", "value": "other", "effect": "NoSchedule"},
    {"key": "maint", "operator": "Exists", "effect": "NoExecute"},
]


def _config_text(doc):
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False).rstrip("\n")


def _configs(r):
    """A device-plugin ConfigMap's data: a few keys of the kinds NVIDIA documents."""
    data = {}
    data["default"] = _config_text(
        {"version": "v1", "flags": {"migStrategy": r.choice(["none", "none", "mixed", "single"])}}
    )
    if r.random() < 0.7:
        ts = {"renameByDefault": r.random() < 0.3, "resources": [
            {"name": "nvidia.com/gpu", "replicas": r.choice([2, 3, 4, 8])}]}
        if r.random() < 0.5:
            ts["failRequestsGreaterThanOne"] = r.random() < 0.5
        data["ts"] = _config_text(
            {"version": "v1", "flags": {"migStrategy": "none"}, "sharing": {"timeSlicing": ts}})
    if r.random() < 0.4:
        mps = {"resources": [{"name": "nvidia.com/gpu", "replicas": r.choice([2, 3, 4])}]}
        data["mps"] = _config_text(
            {"version": "v1", "flags": {"migStrategy": "none"}, "sharing": {"mps": mps}})
    if r.random() < 0.6:
        cfg = {"version": "v1", "flags": {"migStrategy": "mixed"}}
        if r.random() < 0.4:
            cfg["sharing"] = {"timeSlicing": {"resources": [
                {"name": "nvidia.com/mig-" + r.choice(["1g.10gb", "1g.5gb", "1g.6gb"]),
                 "replicas": 2}]}}
        data["mixed"] = _config_text(cfg)
    if r.random() < 0.4:
        data["single"] = _config_text({"version": "v1", "flags": {"migStrategy": "single"}})
    return data


def _node(r, case, j, keys, prefix):
    name = "%s-n%d" % (prefix, j)
    labels = {"kubernetes.io/hostname": name, CASE_KEY: str(case)}
    ann = {}
    if r.random() < 0.85:
        model, migset = r.choice(MODELS)
        count = r.choice([1, 1, 2, 2, 4, 8])
        if r.random() < 0.05:
            other, _ = r.choice(MODELS)
            ann["gpushare.io/gpu-product"] = "%s,%s" % (model, other)
            ann["gpushare.io/gpu-count"] = "%d,1" % count
        else:
            ann["gpushare.io/gpu-product"] = model
            ann["gpushare.io/gpu-count"] = str(count)
        if r.random() < 0.75:
            labels["nvidia.com/device-plugin.config"] = r.choice(keys)
        if migset and r.random() < 0.7:
            profs = PROFILES.get(migset, [])
            layouts = ["all-balanced", "all-balanced", "all-disabled", "all-enabled"]
            layouts += ["all-" + p for p in profs]
            if r.random() < 0.1:
                layouts.append("all-" + r.choice(ALL_PROFILES))
            labels["nvidia.com/mig.config"] = r.choice(layouts)
            if r.random() < 0.15:
                labels["nvidia.com/mig.strategy"] = r.choice(["mixed", "single"])
    if r.random() < 0.6:
        labels["zone"] = r.choice(ZONES)
    if r.random() < 0.4:
        labels["tier"] = r.choice(TIERS)
    if r.random() < 0.5:
        labels["cc"] = r.choice(CCS)
    taints = [{"key": CASE_KEY, "value": str(case), "effect": "NoSchedule"}]
    for t in NODE_TAINTS:
        if r.random() < 0.08:
            taints.append(dict(t))
    cpu = r.choice(["2", "4", "8", "16"])
    mem = r.choice(["4Gi", "8Gi", "16Gi", "64Gi"])
    pods = r.choice(["110"] * 8 + ["2", "3"])
    res = {"cpu": cpu, "memory": mem, "pods": pods}
    spec = {"taints": taints}
    if r.random() < 0.03:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": labels, "annotations": ann},
        "spec": spec,
        "status": {"capacity": dict(res), "allocatable": dict(res)},
    }


def _expr(r, gpu_products):
    kind = r.random()
    if kind < 0.25:
        return {"key": "zone", "operator": r.choice(["In", "NotIn"]),
                "values": r.sample(ZONES, r.choice([1, 2]))}
    if kind < 0.4:
        return {"key": r.choice(["tier", "zone", "nvidia.com/mig.capable", "cc"]),
                "operator": r.choice(["Exists", "DoesNotExist"])}
    if kind < 0.6:
        key = r.choice(["cc", "nvidia.com/gpu.count", "nvidia.com/gpu.memory"])
        val = {"cc": r.choice(CCS), "nvidia.com/gpu.count": str(r.choice([0, 1, 2, 3])),
               "nvidia.com/gpu.memory": str(r.choice([16000, 23000, 40000, 80000]))}[key]
        return {"key": key, "operator": r.choice(["Gt", "Lt"]), "values": [val]}
    if kind < 0.8 and gpu_products:
        return {"key": "nvidia.com/gpu.product", "operator": r.choice(["In", "In", "NotIn"]),
                "values": [r.choice(gpu_products)]}
    return {"key": "tier", "operator": r.choice(["In", "NotIn"]), "values": [r.choice(TIERS)]}


def _product_label(model):
    return model.replace(" ", "-")


def _pod(r, case, k, namespaces, node_docs, renamed):
    name = "p%d" % k
    ns = r.choice(namespaces)
    models = sorted({n["metadata"]["annotations"]["gpushare.io/gpu-product"].split(",")[0]
                     for n in node_docs if n["metadata"]["annotations"]})
    products = [_product_label(m) + s for m in models for s in ("", "", "-SHARED")]
    mig_profiles = sorted({p for n in node_docs
                           for p in LAYOUT_PROFILES.get((
                               n["metadata"]["labels"].get("nvidia.com/mig.config"),
                               n["metadata"]["annotations"].get("gpushare.io/gpu-product", "")
                               .split(",")[0]), [])})
    shared = 0.15 if renamed else 0.03
    containers = []
    for c in range(2 if r.random() < 0.1 else 1):
        lim, req = {}, {}
        pick = r.random()
        count = r.choice([1, 1, 1, 2, 3])
        if pick < 0.45:
            lim["nvidia.com/gpu"] = str(count)
        elif pick < 0.45 + shared:
            lim["nvidia.com/gpu.shared"] = str(count)
        elif pick < 0.75 and mig_profiles:
            lim["nvidia.com/mig-" + r.choice(mig_profiles)] = str(count)
        elif pick < 0.78:
            lim["nvidia.com/mig-" + r.choice(ALL_PROFILES)] = "1"
        if r.random() < 0.6:
            req["cpu"] = r.choice(["100m", "500m", "1", "2", "3"])
            if r.random() < 0.2:
                lim["cpu"] = req["cpu"]
        if r.random() < 0.5:
            req["memory"] = r.choice(["256Mi", "1Gi", "2Gi", "6Gi"])
            if r.random() < 0.2:
                lim["memory"] = r.choice([req["memory"], "8Gi"])
        if lim and r.random() < 0.3:
            for key, v in lim.items():
                req[key] = v
        resources = {}
        if req:
            resources["requests"] = req
        if lim:
            resources["limits"] = lim
        containers.append({"name": "c%d" % c, "image": "registry.invalid/difftest:1",
                           "resources": resources})
    spec = {
        "nodeSelector": {CASE_KEY: str(case)},
        "tolerations": [{"key": CASE_KEY, "operator": "Equal", "value": str(case),
                         "effect": "NoSchedule"}],
        "containers": containers,
    }
    if r.random() < 0.1:
        # An init container: the scheduler takes the larger of it and the
        # sum of the containers, quota the same.
        init = {"name": "init", "image": "registry.invalid/difftest:1", "resources": {}}
        if r.random() < 0.7:
            init["resources"]["requests"] = {"cpu": r.choice(["500m", "2", "4"])}
        if r.random() < 0.4:
            init["resources"]["limits"] = {"nvidia.com/gpu": str(r.choice([1, 2]))}
        spec["initContainers"] = [init]
    if r.random() < 0.1:
        spec["nodeSelector"]["zone"] = r.choice(ZONES)
    if products and r.random() < 0.1:
        spec["nodeSelector"]["nvidia.com/gpu.product"] = r.choice(products)
    for t in TOLERATIONS:
        if r.random() < 0.2:
            spec["tolerations"].append(dict(t))
    aff = {}
    if r.random() < 0.2:
        terms = []
        for _ in range(r.choice([1, 1, 2])):
            terms.append({"matchExpressions": [_expr(r, products)
                                               for _ in range(r.choice([1, 1, 2]))]})
        aff["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if r.random() < 0.25:
        aff["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": r.choice([1, 10, 50, 100]),
             "preference": {"matchExpressions": [_expr(r, products)]}}
            for _ in range(r.choice([1, 2]))]
    if aff:
        spec["affinity"] = {"nodeAffinity": aff}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


def _quota(r, ns):
    hard = {}
    if r.random() < 0.7:
        hard["requests.nvidia.com/gpu"] = str(r.choice([0, 1, 2, 3]))
    if r.random() < 0.2:
        hard["requests.nvidia.com/mig-" + r.choice(["1g.10gb", "1g.5gb", "3g.40gb"])] = "1"
    if r.random() < 0.25:
        hard["pods"] = str(r.choice([1, 2, 3]))
    if r.random() < 0.15:
        hard["requests.cpu"] = r.choice(["1", "2"])
    if r.random() < 0.1:
        hard["requests.nvidia.com/gpu.shared"] = "1"
    if r.random() < 0.08:
        hard["requests.memory"] = r.choice(["2Gi", "8Gi"])
    if r.random() < 0.05:
        hard["limits.cpu"] = "4"
    if not hard:
        hard["requests.nvidia.com/gpu"] = "1"
    return {"apiVersion": "v1", "kind": "ResourceQuota",
            "metadata": {"name": "q", "namespace": ns}, "spec": {"hard": hard}}


def case(seed, index, tag="", nodes=None):
    """One case: dict with nodes, configmap, namespaces, quotas, pods (in
    order). `tag` goes into every name only, so that runs never meet
    (a namespace takes a while to go); the rest depends on seed and index
    (and `nodes`: a large case of that many nodes, None a small one)."""
    if nodes is not None and not LARGE_MIN <= nodes <= LARGE_MAX:
        raise ValueError("a large case has %d..%d nodes, not %d" % (LARGE_MIN, LARGE_MAX, nodes))
    r = random.Random("%s:%d" % (seed, index))
    prefix = "dt%s%d" % (tag, index)
    namespaces = [prefix]
    if r.random() < 0.4:
        namespaces.append(prefix + "-b")
    # The case's keys carry its prefix: every case's keys go into the one
    # device-plugin ConfigMap the cluster's sync and controller read. A node
    # without the label gets that ConfigMap's own `default` (the harness adds
    # it to the case's copy).
    data = {"%s-%s" % (prefix, k): v for k, v in _configs(r).items()}
    keys = sorted(data)
    if r.random() < 0.1:
        keys.append(prefix + "-missing")  # a label naming no key: config-manager fails
    n_nodes = nodes if nodes is not None else r.choice([1, 2, 2, 3, 3, 4, 5, 6])
    nodes_arg = nodes
    nodes = [_node(r, index, j, keys, prefix) for j in range(n_nodes)]
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": CONFIGMAP[1], "namespace": CONFIGMAP[0]},
          "data": data}
    quotas = [_quota(r, ns) for ns in namespaces if r.random() < 0.4]
    renamed = "renameByDefault: true" in data.get(prefix + "-ts", "")
    n_pods = (r.randint(*LARGE_PODS) if nodes_arg is not None
              else r.choice([1, 2, 3, 4, 5, 6]))
    pods = [_pod(r, index, k, namespaces, nodes, renamed) for k in range(n_pods)]
    return {"seed": seed, "index": index, "large": nodes_arg is not None,
            "nodes": nodes, "configmap": cm,
            "namespaces": namespaces, "quotas": quotas, "pods": pods}


def write_case(c, d):
    """The files `gpushare plan` reads; returns their paths by role."""
    os.makedirs(d, exist_ok=True)
    paths = {}
    for role, docs in (("nodes", c["nodes"]), ("configmap", [c["configmap"]]),
                       ("quotas", c["quotas"]), ("pods", c["pods"])):
        p = os.path.join(d, role + ".yaml")
        with open(p, "w", encoding="utf-8") as f:
            yaml.safe_dump_all(docs, f, sort_keys=False)
        paths[role] = p
    return paths


if __name__ == "__main__":
    if len(sys.argv) not in (4, 5, 6):
        sys.stderr.write("usage: gen.py SEED INDEX DIR [TAG [NODES]]\n")
        sys.exit(2)
    tag = sys.argv[4] if len(sys.argv) >= 5 else ""
    large = int(sys.argv[5]) if len(sys.argv) == 6 else None
    for role, p in sorted(write_case(case(sys.argv[1], int(sys.argv[2]), tag, large),
                                     sys.argv[3]).items()):
        print(p)
