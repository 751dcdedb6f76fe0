#!/usr/bin/env python3
"""bench/scale_gen.py DIR SCALE: the inputs of every engine entry point, at SCALE x.

bench/scale.sh runs each entry point on DIR/1 and DIR/4 and compares their
costs (docs/design/complexity.md). Every size below is multiplied by SCALE,
except where a case holds one dimension still on purpose (plan's pods at a
fixed fleet, plan's nodes at a fixed batch, a webhook review's names at a
fixed fleet). Deterministic: the same arguments write the same bytes.

Files (all in DIR):
  check.yaml        bench/gen.py's pod stream, CHECK pods
  lint.yaml         a device-plugin ConfigMap of LINT named configs
  nodes.yaml        NODES nodes in five GPU pools (as bench/plan_gen.py)
  fleet.yaml        FLEET nodes the same way (advertise, explain node)
  configmap.yaml    the pools' device-plugin ConfigMap
  bound.yaml        BOUND pods bound round robin to nodes.yaml's nodes, in
                    NAMESPACES namespaces
  fleet-bound.yaml  nodes.yaml and bound.yaml in one file (plan's --nodes)
  pod.yaml          one pending pod (explain pod)
  nodes.json, pods.json, pod.json   the same, as the apiserver lists them
                    (a NodeList and a PodList, as `kubectl get -o json` records)
  quotas.json       a ResourceQuotaList of QUOTAS quotas in team-0
  quota.yaml        one quota per namespace of bound.yaml (report, plan)
  list.json         ConfigMap, nodes and bound pods as one List (status --from)
  plan-pods.yaml    PLAN_PODS pods to place; plan-nodes.yaml PLAN_NODES nodes
  plan-fixed-nodes.yaml / plan-fixed-pods.yaml  the other dimension, fixed
  whatif.yaml       the ConfigMap with the MIG nodes re-cut (plan --what-if)
  review-names.json an AdmissionReview of one Pod naming NAMES resources
  review.json       an AdmissionReview of one plain GPU pod
  webhook-nodes.yaml  WEBHOOK_NODES nodes for review.json; small-nodes.yaml 20
  translate.yaml    TRANSLATE pods and deployments for dra translate
  slices.yaml, claims.yaml  SLICES ResourceSlices, CLAIMS allocated claims
"""
import json
import os
import subprocess
import sys

out, scale = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
here = os.path.dirname(os.path.abspath(__file__))

CHECK = 4000 * scale
LINT = 500 * scale
FLEET = 1000 * scale
NODES = 250 * scale
BOUND = 2500 * scale
NAMESPACES = 10 * scale
QUOTAS = 1000 * scale  # at 4x, within explain's 5,000
PLAN_PODS, PLAN_FIXED_NODES = 625 * scale, 1000
PLAN_NODES, PLAN_FIXED_PODS = 250 * scale, 500
NAMES, SMALL_NODES = 1250 * scale, 20
WEBHOOK_NODES = 500 * scale
TRANSLATE = 1000 * scale
SLICES, CLAIMS = 125 * scale, 500 * scale


def path(name):
    return os.path.join(out, name)


def write_docs(name, docs):
    with open(path(name), "w") as f:
        for d in docs:
            f.write("---\n")
            f.write(json.dumps(d, separators=(",", ":")))
            f.write("\n")


def write_json(name, obj):
    with open(path(name), "w") as f:
        json.dump(obj, f, separators=(",", ":"))


POOLS = [
    ("whole", "NVIDIA A100-SXM4-80GB", 8, "default", None, {"nvidia.com/gpu": "8"}),
    ("tsliced", "Tesla T4", 4, "shared", None, {"nvidia.com/gpu": "16"}),
    ("mig1g", "NVIDIA A100-SXM4-80GB", 8, "mig", "all-1g.10gb",
     {"nvidia.com/mig-1g.10gb": "56"}),
    ("migbal", "NVIDIA A100-SXM4-80GB", 8, "mig", "all-balanced",
     {"nvidia.com/mig-1g.10gb": "16", "nvidia.com/mig-2g.20gb": "8",
      "nvidia.com/mig-3g.40gb": "8"}),
    ("mps", "NVIDIA H100 80GB HBM3", 8, "mps", None, {"nvidia.com/gpu": "32"}),
]
POOL_RES = ["nvidia.com/gpu", "nvidia.com/gpu", "nvidia.com/mig-1g.10gb",
            "nvidia.com/mig-1g.10gb", "nvidia.com/gpu"]


def node(i, advertised=False):
    pool, product, count, config, layout, alloc = POOLS[i % len(POOLS)]
    name = "node-%05d" % i
    labels = {"kubernetes.io/hostname": name, "pool": pool, "zone": "z%d" % (i % 3),
              "nvidia.com/device-plugin.config": config}
    if layout:
        labels["nvidia.com/mig.config"] = layout
    n = {"apiVersion": "v1", "kind": "Node",
         "metadata": {"name": name, "uid": "uid-" + name, "labels": labels,
                      "annotations": {"gpushare.io/gpu-product": product,
                                      "gpushare.io/gpu-count": str(count)}},
         "status": {"allocatable": {"cpu": "96", "memory": "1024Gi", "pods": "110"}}}
    if i % 7 == 0:
        n["spec"] = {"taints": [{"key": "dedicated", "value": "research",
                                 "effect": "NoSchedule"}]}
    elif i % 11 == 0:
        n["spec"] = {"taints": [{"key": "spot", "effect": "PreferNoSchedule"}]}
    if advertised:
        n["status"]["allocatable"].update(alloc)
        n["status"]["capacity"] = dict(n["status"]["allocatable"])
    return n


def container(name, limits, requests=None):
    res = {"limits": limits}
    if requests:
        res["requests"] = requests
    return {"name": name, "image": "registry.k8s.io/pause:3.10", "resources": res}


def bound_pod(i, n_nodes):
    nd = i % n_nodes
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "b-%06d" % i, "namespace": "team-%d" % (i % NAMESPACES),
                         "uid": "uid-b-%06d" % i},
            "spec": {"nodeName": "node-%05d" % nd,
                     "containers": [container("main", {POOL_RES[nd % len(POOLS)]: "1"},
                                              {"cpu": "100m", "memory": "1Gi"})]},
            "status": {"phase": "Running"}}


KINDS = [("nvidia.com/gpu", 1, None), ("nvidia.com/gpu", 2, "tsliced"),
         ("nvidia.com/mig-1g.10gb", 1, None), ("nvidia.com/mig-3g.40gb", 1, None),
         ("nvidia.com/gpu", 1, "mps"), ("nvidia.com/mig-2g.20gb", 1, None),
         ("nvidia.com/gpu", 4, "whole")]


def pending_pod(i):
    res, n, pool = KINDS[i % len(KINDS)]
    spec = {"containers": [container("main", {res: str(n)},
                                     {"cpu": "500m", "memory": "2Gi"})]}
    if pool:
        spec["nodeSelector"] = {"pool": pool}
    if i % 5 == 0:
        spec["tolerations"] = [{"key": "dedicated", "operator": "Equal",
                                "value": "research", "effect": "NoSchedule"}]
    if i % 3 == 0:
        spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": {"matchExpressions": [
                {"key": "zone", "operator": "In", "values": ["z%d" % (i % 3)]}]}}]}}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p-%06d" % i, "namespace": "team-%d" % (i % 10)},
            "spec": spec}


CONFIGS = {
    "default": "version: v1\nflags:\n  migStrategy: none\n",
    "shared": "version: v1\nflags:\n  migStrategy: none\nsharing:\n  timeSlicing:\n"
              "    failRequestsGreaterThanOne: true\n    resources:\n"
              "    - name: nvidia.com/gpu\n      replicas: 4\n",
    "mig": "version: v1\nflags:\n  migStrategy: mixed\n",
    "mps": "version: v1\nflags:\n  migStrategy: none\nsharing:\n  mps:\n    resources:\n"
           "    - name: nvidia.com/gpu\n      replicas: 4\n",
}


def configmap(configs):
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "device-plugin-configs", "namespace": "gpu-share"},
            "data": configs}


# check: bench/gen.py's realistic pods.
subprocess.run([sys.executable, os.path.join(here, "gen.py"), path("check.yaml"), str(CHECK)],
               check=True)

# lint: many named configs, each sharing some resources.
lint = {}
for k in range(LINT):
    lint["cfg-%05d" % k] = (
        "version: v1\nflags:\n  migStrategy: %s\nsharing:\n  timeSlicing:\n"
        "    renameByDefault: %s\n    resources:\n    - name: nvidia.com/gpu\n"
        "      replicas: %d\n    - name: nvidia.com/mig-1g.10gb\n      replicas: %d\n"
        % (["none", "mixed", "single"][k % 3], "true" if k % 2 else "false", 2 + k % 7,
           2 + k % 3))
write_docs("lint.yaml", [configmap(lint)])

# The fleet, as manifests and as the apiserver lists it.
write_docs("nodes.yaml", [node(i) for i in range(NODES)])
write_docs("fleet.yaml", [node(i) for i in range(FLEET)])
write_docs("configmap.yaml", [configmap(CONFIGS)])
bound = [bound_pod(i, NODES) for i in range(BOUND)]
write_docs("bound.yaml", bound)
write_docs("fleet-bound.yaml", [node(i) for i in range(NODES)] + bound)
one = pending_pod(0)
one["metadata"]["name"] = "explained"
write_docs("pod.yaml", [one])
write_json("pod.json", one)
write_json("nodes.json", {"apiVersion": "v1", "kind": "NodeList",
                          "items": [node(i, True) for i in range(NODES)]})
write_json("pods.json", {"apiVersion": "v1", "kind": "PodList", "items": bound})
write_json("list.json", {"apiVersion": "v1", "kind": "List",
                         "items": [configmap(CONFIGS)] + [node(i) for i in range(NODES)] +
                         bound})

# Quotas: many in one namespace (explain quota), one per team (report).
write_json("quotas.json", {
    "apiVersion": "v1", "kind": "ResourceQuotaList", "metadata": {"namespace": "team-0"},
    "items": [{"apiVersion": "v1", "kind": "ResourceQuota",
               "metadata": {"name": "q-%05d" % q, "namespace": "team-0"},
               "spec": {"hard": {"requests.nvidia.com/gpu": "100", "pods": "1000"}},
               "status": {"hard": {"requests.nvidia.com/gpu": "100", "pods": "1000"},
                          "used": {"requests.nvidia.com/gpu": str(q % 100),
                                   "pods": str(q % 1000)}}}
              for q in range(QUOTAS)]})
write_docs("quota.yaml", [
    {"apiVersion": "v1", "kind": "ResourceQuota",
     "metadata": {"name": "gpus", "namespace": "team-%d" % t},
     "spec": {"hard": {"requests.nvidia.com/gpu": str(BOUND), "pods": str(BOUND)}}}
    for t in range(NAMESPACES)])

# plan: the batch grows on a fixed fleet, the fleet grows under a fixed batch.
write_docs("plan-pods.yaml", [pending_pod(i) for i in range(PLAN_PODS)])
write_docs("plan-fixed-nodes.yaml", [node(i) for i in range(PLAN_FIXED_NODES)])
write_docs("plan-nodes.yaml", [node(i) for i in range(PLAN_NODES)])
write_docs("plan-fixed-pods.yaml", [pending_pod(i) for i in range(PLAN_FIXED_PODS)])
whatif = dict(CONFIGS)
whatif["mig"] = "version: v1\nflags:\n  migStrategy: single\n"
write_docs("whatif.yaml", [configmap(whatif)])


# webhook: one pod naming many resources against a small fleet; a plain pod
# against a growing fleet.
def review(pod):
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u-1", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                        "operation": "CREATE", "object": pod}}


names = {"nvidia.com/%s-%d" % ("mig-x" if k % 2 else "r", k): "1" for k in range(NAMES)}
write_json("review-names.json", review({
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "many", "namespace": "default"},
    "spec": {"containers": [container("c", names)]}}))
write_docs("small-nodes.yaml", [node(i) for i in range(SMALL_NODES)])
plain = pending_pod(0)
write_json("review.json", review(plain))
write_docs("webhook-nodes.yaml", [node(i) for i in range(WEBHOOK_NODES)])

# dra translate: pods and deployments asking for the pools' resources.
docs = [configmap(CONFIGS)]
for i in range(TRANSLATE):
    p = pending_pod(i)
    if i % 4 == 3:
        docs.append({"apiVersion": "apps/v1", "kind": "Deployment",
                     "metadata": {"name": "d-%06d" % i, "namespace": p["metadata"]["namespace"]},
                     "spec": {"replicas": 2, "template": {"metadata": {},
                                                          "spec": p["spec"]}}})
    else:
        docs.append(p)
write_docs("translate.yaml", docs)


# dra prepare: one slice of two T4s per node, claims allocated on them.
# Device names are unique over the fleet (a real driver names them gpu-0,
# gpu-1 on every node): a claim's device is then only in its own slice, so a
# search through the slices would show.
def device(s, g):
    return {"name": "gpu-%d-%d" % (s, g),
            "attributes": {"type": {"string": "gpu"}, "productName": {"string": "Tesla T4"},
                           "uuid": {"string": "GPU-%08d-0000-4000-8000-000000000000" % g},
                           "architecture": {"string": "Turing"},
                           "brand": {"string": "Nvidia"},
                           "cudaComputeCapability": {"version": "7.5.0"},
                           "driverVersion": {"version": "580.65.6"},
                           "resource.kubernetes.io/pciBusID": {"string": "0000:0%d:00.0" % (g + 1)}},
            "capacity": {"memory": {"value": "15Gi"}}}


slices = []
for s in range(SLICES):
    pool = "dra-%05d" % s
    slices.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                   "metadata": {"name": pool + "-gpu.nvidia.com"},
                   "spec": {"driver": "gpu.nvidia.com", "nodeName": pool,
                            "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
                            "devices": [device(s, 0), device(s, 1)]}})
write_docs("slices.yaml", slices)
claims = []
for c in range(CLAIMS):
    s = c % SLICES
    pool = "dra-%05d" % s
    claims.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                   "metadata": {"namespace": "dra", "name": "c-%06d" % c,
                                "uid": "uid-c-%06d" % c},
                   "spec": {"devices": {"requests": [
                       {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}},
                   "status": {"allocation": {"devices": {"results": [
                       {"request": "gpu", "driver": "gpu.nvidia.com", "pool": pool,
                        "device": "gpu-%d-%d" % (s, c // SLICES % 2)}]}}}})
write_docs("claims.yaml", claims)
