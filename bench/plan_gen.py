#!/usr/bin/env python3
"""bench/plan_gen.py DIR NODES PODS [BOUND]: a deterministic fleet for `gpushare plan`.

DIR/nodes.yaml: NODES nodes in pools (A100 80GB whole, T4 time-sliced x4,
A100 80GB MIG mixed all-1g.10gb / all-balanced, H100 MPS), some tainted,
some with a zone label; DIR/pods.yaml: PODS pods asking for those resources
in rotation, with node selectors, tolerations and preferred zones;
DIR/configmap.yaml the device-plugin ConfigMap; DIR/quota.yaml a quota per
team; with BOUND, DIR/bound.yaml: BOUND pods already bound (spec.nodeName,
round robin over the nodes, Running), each asking for cpu and memory and
one slice of what its node's pool advertises. Same arguments, same bytes.
"""
import os
import sys

out, n_nodes, n_pods = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
n_bound = int(sys.argv[4]) if len(sys.argv) > 4 else 0
os.makedirs(out, exist_ok=True)

POOLS = [
    ("whole", "NVIDIA A100-SXM4-80GB", 8, "default", None),
    ("tsliced", "Tesla T4", 4, "shared", None),
    ("mig1g", "NVIDIA A100-SXM4-80GB", 8, "mig", "all-1g.10gb"),
    ("migbal", "NVIDIA A100-SXM4-80GB", 8, "mig", "all-balanced"),
    ("mps", "NVIDIA H100 80GB HBM3", 8, "mps", None),
]

with open(os.path.join(out, "nodes.yaml"), "w") as f:
    for i in range(n_nodes):
        pool, product, count, config, layout = POOLS[i % len(POOLS)]
        f.write("---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-%05d\n" % i)
        f.write("  labels:\n    kubernetes.io/hostname: node-%05d\n" % i)
        f.write("    pool: %s\n    zone: z%d\n" % (pool, i % 3))
        f.write("    nvidia.com/device-plugin.config: %s\n" % config)
        if layout:
            f.write("    nvidia.com/mig.config: %s\n" % layout)
        f.write("  annotations:\n    gpushare.io/gpu-product: %s\n" % product)
        f.write("    gpushare.io/gpu-count: \"%d\"\n" % count)
        if i % 7 == 0:
            f.write("spec:\n  taints:\n  - {key: dedicated, value: research, effect: NoSchedule}\n")
        elif i % 11 == 0:
            f.write("spec:\n  taints:\n  - {key: spot, effect: PreferNoSchedule}\n")
        f.write("status:\n  allocatable: {cpu: \"96\", memory: 1024Gi, pods: \"110\"}\n")

with open(os.path.join(out, "configmap.yaml"), "w") as f:
    f.write("""apiVersion: v1
kind: ConfigMap
metadata: {name: device-plugin-configs, namespace: gpu-share}
data:
  default: |-
    version: v1
    flags:
      migStrategy: none
  shared: |-
    version: v1
    flags:
      migStrategy: none
    sharing:
      timeSlicing:
        failRequestsGreaterThanOne: true
        resources:
        - name: nvidia.com/gpu
          replicas: 4
  mig: |-
    version: v1
    flags:
      migStrategy: mixed
  mps: |-
    version: v1
    flags:
      migStrategy: none
    sharing:
      mps:
        resources:
        - name: nvidia.com/gpu
          replicas: 4
""")

KINDS = [
    ("nvidia.com/gpu", 1, None),
    ("nvidia.com/gpu", 2, "tsliced"),
    ("nvidia.com/mig-1g.10gb", 1, None),
    ("nvidia.com/mig-3g.40gb", 1, None),
    ("nvidia.com/gpu", 1, "mps"),
    ("nvidia.com/mig-2g.20gb", 1, None),
    ("nvidia.com/gpu", 4, "whole"),
]
with open(os.path.join(out, "pods.yaml"), "w") as f:
    for i in range(n_pods):
        res, n, pool = KINDS[i % len(KINDS)]
        team = "team-%d" % (i % 10)
        f.write("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p-%05d\n  namespace: %s\n" % (i, team))
        f.write("spec:\n")
        if pool:
            f.write("  nodeSelector: {pool: %s}\n" % pool)
        if i % 5 == 0:
            f.write("  tolerations:\n  - {key: dedicated, operator: Equal, value: research, effect: NoSchedule}\n")
        if i % 3 == 0:
            f.write("  affinity:\n    nodeAffinity:\n      preferredDuringSchedulingIgnoredDuringExecution:\n")
            f.write("      - weight: 10\n        preference:\n          matchExpressions:\n")
            f.write("          - {key: zone, operator: In, values: [z%d]}\n" % (i % 3))
        f.write("  containers:\n  - name: main\n    resources:\n")
        f.write("      requests: {cpu: 500m, memory: 2Gi}\n")
        f.write("      limits: {%s: %d}\n" % (res, n))

with open(os.path.join(out, "quota.yaml"), "w") as f:
    for t in range(10):
        f.write("---\napiVersion: v1\nkind: ResourceQuota\nmetadata: {name: gpus, namespace: team-%d}\n" % t)
        f.write("spec:\n  hard: {requests.nvidia.com/gpu: \"%d\"}\n" % (n_pods // 8))

if n_bound:
    POOL_RES = {"whole": "nvidia.com/gpu", "tsliced": "nvidia.com/gpu",
                "mig1g": "nvidia.com/mig-1g.10gb", "migbal": "nvidia.com/mig-1g.10gb",
                "mps": "nvidia.com/gpu"}
    with open(os.path.join(out, "bound.yaml"), "w") as f:
        for i in range(n_bound):
            node = i % n_nodes
            res = POOL_RES[POOLS[node % len(POOLS)][0]]
            f.write("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: b-%06d\n"
                    "  namespace: team-%d\n  uid: b-%06d\n" % (i, i % 10, i))
            f.write("spec:\n  nodeName: node-%05d\n  containers:\n  - name: main\n"
                    "    resources:\n      requests: {cpu: 100m, memory: 1Gi}\n"
                    "      limits: {%s: 1}\nstatus: {phase: Running}\n" % (node, res))
