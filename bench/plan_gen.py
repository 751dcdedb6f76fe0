#!/usr/bin/env python3
"""bench/plan_gen.py [--dra K] DIR NODES PODS [BOUND]: a deterministic fleet for `gpushare plan`.

DIR/nodes.yaml: NODES nodes in pools (A100 80GB whole, T4 time-sliced x4,
A100 80GB MIG mixed all-1g.10gb / all-balanced, H100 MPS), some tainted,
some with a zone label; DIR/pods.yaml: PODS pods asking for those resources
in rotation, with node selectors, tolerations and preferred zones;
DIR/configmap.yaml the device-plugin ConfigMap; DIR/quota.yaml a quota per
team; with BOUND, DIR/bound.yaml: BOUND pods already bound (spec.nodeName,
round robin over the nodes, Running), each asking for cpu and memory and
one slice of what its node's pool advertises. Same arguments, same bytes.

With --dra K, every K-th node (node-00000, node-0000K, ...; 1: all) is on
the DRA path (gpushare.io/path: dra, no device-plugin config): it
advertises no nvidia.com/ resource, and DIR/dra.yaml holds the driver's
DeviceClasses with the cluster's DRA alpha gates (`gpushare advertise --dra
--device-classes --alpha-gates`: gpu.nvidia.com names extendedResourceName
nvidia.com/gpu), each DRA node's ResourceSlice of whole GPUs as `gpushare
advertise --dra` publishes it (named as the apiserver names it from
generateName), and, with BOUND, for each bound pod on a DRA node while its
GPUs last, the allocated ResourceClaim the scheduler made for its
nvidia.com/gpu (`<pod>-extended-resources-<suffix>`). A pod asking
nvidia.com/gpu may then be placed on a DRA node (DRAExtendedResource, on
by default from Kubernetes v1.36).
"""
import hashlib
import os
import sys

args = sys.argv[1:]
dra_every = 0
if len(args) > 1 and args[0] == "--dra":
    dra_every = int(args[1])
    args = args[2:]
    if dra_every < 1:
        sys.exit("plan_gen.py: --dra K: K is 1 or more")
out, n_nodes, n_pods = args[0], int(args[1]), int(args[2])
n_bound = int(args[3]) if len(args) > 3 else 0
os.makedirs(out, exist_ok=True)


def is_dra(i):
    return dra_every and i % dra_every == 0


def uid(text):
    """A UUID-shaped name made from text (the apiserver draws a random one)."""
    h = hashlib.sha256(text.encode()).hexdigest()
    return "%s-%s-4%s-8%s-%s" % (h[:8], h[8:12], h[13:16], h[17:20], h[20:32])

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
        if is_dra(i):
            f.write("  uid: %s\n" % uid("node-%05d" % i))
        f.write("  labels:\n    kubernetes.io/hostname: node-%05d\n" % i)
        f.write("    pool: %s\n    zone: z%d\n" % (pool, i % 3))
        if is_dra(i):
            f.write("    gpushare.io/path: dra\n")
        else:
            f.write("    nvidia.com/device-plugin.config: %s\n" % config)
        if layout and not is_dra(i):
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
            limits = "\n      limits: {%s: 1}" % res
            if is_dra(node):
                # whole GPUs by DRA, one each while they last (the claims below)
                limits = "" if i // n_nodes >= POOLS[node % len(POOLS)][2] else \
                    "\n      limits: {nvidia.com/gpu: 1}"
            f.write("---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: b-%06d\n"
                    "  namespace: team-%d\n  uid: b-%06d\n" % (i, i % 10, i))
            f.write("spec:\n  nodeName: node-%05d\n  containers:\n  - name: main\n"
                    "    resources:\n      requests: {cpu: 100m, memory: 1Gi}%s\n"
                    "status: {phase: Running}\n" % (node, limits))

# The DRA path: what `gpushare advertise --dra` publishes for each GPU model.
DRA_GPU = {
    "NVIDIA A100-SXM4-80GB": ("Ampere", "8.0.0", "80Gi"),
    "Tesla T4": ("Turing", "7.5.0", "15Gi"),
    "NVIDIA H100 80GB HBM3": ("Hopper", "9.0.0", "81559Mi"),
}
if dra_every:
    with open(os.path.join(out, "dra.yaml"), "w") as f:
        f.write("""---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.nvidia.com
spec:
  selectors:
  - cel:
      expression: device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'
  extendedResourceName: nvidia.com/gpu
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: mig.nvidia.com
spec:
  selectors:
  - cel:
      expression: device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'
""")
        for i in range(0, n_nodes, dra_every):
            name = "node-%05d" % i
            _, product, count, _, _ = POOLS[i % len(POOLS)]
            arch, cc, mem = DRA_GPU[product]
            f.write("---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata:\n")
            f.write("  name: %s-gpu.nvidia.com-%s\n" % (name, uid(name + "/slice")[:5]))
            f.write("  generateName: %s-gpu.nvidia.com-\n" % name)
            f.write("  ownerReferences:\n  - apiVersion: v1\n    kind: Node\n")
            f.write("    name: %s\n    uid: %s\n    controller: true\n" % (name, uid(name)))
            f.write("spec:\n  driver: gpu.nvidia.com\n  nodeName: %s\n" % name)
            f.write("  pool:\n    name: %s\n    generation: 1\n    resourceSliceCount: 1\n" % name)
            f.write("  devices:\n")
            for g in range(count):
                f.write("  - name: gpu-%d\n    attributes:\n" % g)
                f.write("      type: {string: gpu}\n")
                f.write("      uuid: {string: GPU-%s}\n" % uid("%s/gpu-%d" % (name, g)))
                f.write("      productName: {string: %s}\n" % product)
                f.write("      brand: {string: Nvidia}\n")
                f.write("      architecture: {string: %s}\n" % arch)
                f.write("      cudaComputeCapability: {version: %s}\n" % cc)
                f.write("      driverVersion: {version: 580.65.6}\n")
                f.write("      cudaDriverVersion: {version: 13.0.0}\n")
                f.write("      resource.kubernetes.io/pciBusID: {string: \"0000:%02x:00.0\"}\n"
                        % (g + 1))
                f.write("    capacity:\n      memory: {value: %s}\n" % mem)
        for i in range(n_bound):
            node = i % n_nodes
            g = i // n_nodes
            if not is_dra(node) or g >= POOLS[node % len(POOLS)][2]:
                continue
            pod = "b-%06d" % i
            f.write("---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n")
            f.write("  name: %s-extended-resources-%s\n" % (pod, uid(pod + "/claim")[:5]))
            f.write("  namespace: team-%d\n" % (i % 10))
            f.write("  ownerReferences:\n  - apiVersion: v1\n    kind: Pod\n")
            f.write("    name: %s\n    uid: %s\n    controller: true\n" % (pod, pod))
            f.write("spec:\n  devices:\n    requests:\n    - name: container-0-request-0\n")
            f.write("      exactly:\n        deviceClassName: gpu.nvidia.com\n")
            f.write("        allocationMode: ExactCount\n        count: 1\n")
            f.write("status:\n  allocation:\n    devices:\n      results:\n")
            f.write("      - {request: container-0-request-0, driver: gpu.nvidia.com, "
                    "pool: node-%05d, device: gpu-%d}\n" % (node, g))
            f.write("    nodeSelector:\n      nodeSelectorTerms:\n      - matchFields:\n")
            f.write("        - {key: metadata.name, operator: In, values: [node-%05d]}\n" % node)
            f.write("  reservedFor:\n  - {resource: pods, name: %s, uid: %s}\n" % (pod, pod))
