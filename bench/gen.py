#!/usr/bin/env python3
"""Write the benchmark stream: 8,000 realistic Pod documents (~5 MB).

Deterministic: a fixed linear congruential generator, no `random`, so every
machine and Python version writes the same bytes.
usage: gen.py OUT [PODS]
"""
import sys

state = 2463534242


def rnd(n):
    global state
    state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
    return (state >> 33) % n


def pick(xs):
    return xs[rnd(len(xs))]


TEAMS = ["vision", "speech", "ranking", "search", "ads", "platform", "research", "nlp"]
TIERS = ["frontend", "backend", "batch", "inference", "training"]
IMAGES = ["nvcr.io/nvidia/pytorch:24.05-py3", "nvcr.io/nvidia/tritonserver:24.05-py3",
          "registry.k8s.io/pause:3.10", "docker.io/library/python:3.12-slim",
          "ghcr.io/example/feature-store:1.8.2", "quay.io/prometheus/node-exporter:v1.8.1"]
ENV = ["LOG_LEVEL", "OMP_NUM_THREADS", "NCCL_DEBUG", "CUDA_VISIBLE_DEVICES", "MODEL_PATH",
       "BATCH_SIZE", "WORKERS", "REGION", "FEATURE_FLAGS", "HTTP_PORT"]
GPU_FORMS = ["{}", "\"{}\"", "{}000m"]


def pod(i, out):
    team, tier = pick(TEAMS), pick(TIERS)
    name = "%s-%s-%05d" % (team, tier, i)
    w = out.append
    w("---\napiVersion: v1\nkind: Pod\nmetadata:\n")
    w("  name: %s\n  namespace: team-%s\n" % (name, team))
    w("  labels:\n    app: %s\n    tier: %s\n    version: \"v%d.%d\"\n" % (team, tier, rnd(4), rnd(20)))
    w("spec:\n")
    if rnd(3) == 0:
        w("  nodeSelector:\n    nvidia.com/device-plugin.config: %s\n" % pick(["default", "shared"]))
        w("  tolerations:\n  - key: nvidia.com/gpu\n    operator: Exists\n    effect: NoSchedule\n")
    w("  restartPolicy: %s\n" % pick(["Always", "OnFailure", "Never"]))
    if rnd(5) == 0:
        w("  initContainers:\n  - name: init-%d\n    image: %s\n    command: [\"sh\", \"-c\", \"echo ready\"]\n"
          % (i, pick(IMAGES)))
        if rnd(4) == 0:
            w("    resources:\n      limits:\n        nvidia.com/gpu: %d\n" % (1 + rnd(3)))
    w("  containers:\n")
    for c in range(1 + rnd(2)):
        w("  - name: %s-c%d\n    image: %s\n" % (tier, c, pick(IMAGES)))
        w("    env:\n    - name: %s\n      value: \"%d\"\n" % (pick(ENV), rnd(1000)))
        cpu, mem = 100 * (1 + rnd(40)), 128 * (1 + rnd(64))
        w("    resources:\n      requests:\n        cpu: %dm\n        memory: %dMi\n" % (cpu, mem))
        gpu = rnd(4) == 0
        n = 1 + rnd(4)
        if gpu and rnd(2) == 0:
            w("        nvidia.com/gpu: %s\n" % pick(GPU_FORMS).format(n))
        # limits at least the requests: pods the apiserver takes
        w("      limits:\n        cpu: \"%d\"\n        memory: %dGi\n"
          % ((cpu + 999) // 1000 + rnd(16), (mem + 1023) // 1024 + rnd(64)))
        if gpu:
            w("        nvidia.com/gpu: %s\n" % pick(GPU_FORMS).format(n))
    if rnd(2) == 0:
        w("  volumes:\n  - name: data\n    emptyDir: {}\n")


def main():
    out = []
    pods = int(sys.argv[2]) if len(sys.argv) > 2 else 8000
    for i in range(pods):
        pod(i, out)
    with open(sys.argv[1], "w") as f:
        f.write("".join(out))


main()
