#!/usr/bin/env python3
"""The seed's seven pods (k8s/mig-job.yaml, k8s/team-a-pods.yaml,
k8s/placement.yaml) bound where `gpushare lab` puts them, as one YAML
stream on stdout, for `gpushare report --pods`. plain-gpu fits lab-node-0
and lab-node-1 alike; the lab's run put it on lab-node-0
(tests/unit/data/explain/pods.json). With --hostile NAME, one more pod of
that name in namespace `x"ns<b>`."""
import sys

import yaml

where = {
    "mig-job": "lab-node-2",
    "plain-gpu": "lab-node-0",
    "team-a-0": "lab-node-1",
    "team-a-1": "lab-node-1",
    "prod-inference": "lab-node-2",
    "notebook": "lab-node-1",
    "batch-train": "lab-node-0",
}
top = sys.argv[1]
docs = []
for f in ("k8s/mig-job.yaml", "k8s/team-a-pods.yaml", "k8s/placement.yaml"):
    with open(f"{top}/{f}") as fh:
        for d in yaml.safe_load_all(fh):
            if d and d.get("kind") == "Pod":
                d["spec"]["nodeName"] = where[d["metadata"]["name"]]
                docs.append(d)
if len(sys.argv) > 3 and sys.argv[2] == "--hostile":
    docs.append({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": sys.argv[3], "namespace": 'x"ns<b>'},
        "spec": {"nodeName": "lab-node-1", "containers": [{
            "name": "c", "image": "pause",
            "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
    })
yaml.safe_dump_all(docs, sys.stdout)
