#!/usr/bin/env python3
"""bench/controller_nodes.py N [PREFIX [KEY [FIRST]]]: a NodeList of N fake GPU
nodes on stdout, numbered from FIRST (default 0).

Each node declares 8 Tesla T4 (annotations gpushare.io/gpu-product and
gpushare.io/gpu-count) and selects the ConfigMap key KEY (default `shared`,
label nvidia.com/device-plugin.config), as the lab's lab-node-1 does; all carry
the label gpushare.io/bench=PREFIX so they can be listed and deleted together:

  bench/controller_nodes.py 1000 | kubectl create -f -
  kubectl delete nodes -l gpushare.io/bench=bench

Each is created with the capacity and allocatable a kubelet reports (cpu,
memory, pods). kwok (--manage-all-nodes) makes them Ready; gpushare's
controller advertises their GPUs. Deterministic: the same N gives the same nodes.
"""
import json
import sys


def main():
    n = int(sys.argv[1])
    prefix = sys.argv[2] if len(sys.argv) > 2 else "bench"
    key = sys.argv[3] if len(sys.argv) > 3 else "shared"
    first = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    base = {"cpu": "32", "memory": "256Gi", "pods": "110"}
    items = []
    for i in range(first, first + n):
        name = "%s-node-%05d" % (prefix, i)
        items.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/hostname": name,
                           "nvidia.com/device-plugin.config": key,
                           "gpushare.io/bench": prefix},
                "annotations": {"gpushare.io/gpu-product": "Tesla T4",
                                "gpushare.io/gpu-count": "8"},
            },
            # What a kubelet reports before any device plugin: kwok's
            # node-initialize keeps a capacity that is there, so a node whose
            # GPUs the controller wrote first would otherwise get no pods.
            "status": {"capacity": dict(base), "allocatable": dict(base)},
        })
    json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout)


if __name__ == "__main__":
    main()
