#!/usr/bin/env python3
"""tests/outage/watch.py ENV KIND OUT: list and watch the outage's nodes or
their Leases for tests/outage/run.sh, one JSON line per object seen, with the
time it arrived, until killed:

  {"t": 1796418409.33, "ev": "LISTED|ADDED|MODIFIED|DELETED", "o": [...]}

KIND nodes: o = [name, Ready status, its reason, its lastTransitionTime,
taints' keys without node.kubernetes.io/, comma-separated], for nodes
labelled gpushare.io/bench=outage. KIND leases: o = [name, holder,
renewTime, leaseDurationSeconds], for the Leases of those nodes.

ENV is the cluster's env file (scripts/cluster/up.sh: GS_APISERVER, GS_CA,
GS_ADMIN_CERT, GS_ADMIN_KEY). A watch that fails (the apiserver stopped) is
listed and watched again every second until it answers: what changed while
it was down shows as LISTED. A watch event says when a change reached the
apiserver's watchers, to a fraction of a second, where a LIST every few
seconds would not.
"""
import http.client
import json
import ssl
import sys
import time
import urllib.parse

PREFIX = "outage-node-"


def env(path):
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if "=" in line and not line.startswith("#"):
                k, v = line.split("=", 1)
                out[k] = v
    return out


def node_row(o):
    md = o.get("metadata", {})
    ready = next((c for c in o.get("status", {}).get("conditions", []) if c.get("type") == "Ready"), {})
    taints = ",".join(t.get("key", "").replace("node.kubernetes.io/", "")
                      for t in o.get("spec", {}).get("taints", []) or [])
    return [md.get("name", ""), ready.get("status", "None"), ready.get("reason", ""),
            ready.get("lastTransitionTime", ""), taints]


def lease_row(o):
    md, spec = o.get("metadata", {}), o.get("spec", {})
    return [md.get("name", ""), spec.get("holderIdentity", ""), spec.get("renewTime", ""),
            spec.get("leaseDurationSeconds", 0)]


def main():
    e, kind, out = env(sys.argv[1]), sys.argv[2], sys.argv[3]
    u = urllib.parse.urlparse(e["GS_APISERVER"])
    ctx = ssl.create_default_context(cafile=e["GS_CA"])
    ctx.load_cert_chain(e["GS_ADMIN_CERT"], e["GS_ADMIN_KEY"])
    if kind == "nodes":
        path, query, row = "/api/v1/nodes", {"labelSelector": "gpushare.io/bench=outage"}, node_row
    else:
        path, query, row = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases", {}, lease_row
    keep = (lambda r: True) if kind == "nodes" else (lambda r: r[0].startswith(PREFIX))
    sink = open(out, "a", buffering=1)

    def emit(ev, o):
        r = row(o)
        if keep(r):
            sink.write(json.dumps({"t": time.time(), "ev": ev, "o": r}) + "\n")

    while True:
        try:
            conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=30)
            conn.request("GET", path + "?" + urllib.parse.urlencode(query))
            resp = conn.getresponse()
            if resp.status != 200:
                raise OSError("list: HTTP %d" % resp.status)
            lst = json.loads(resp.read())
            for o in lst.get("items", []):
                emit("LISTED", o)
            q = dict(query, watch="1", resourceVersion=lst["metadata"]["resourceVersion"],
                     allowWatchBookmarks="true", timeoutSeconds="600")
            conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=90)
            conn.request("GET", path + "?" + urllib.parse.urlencode(q))
            resp = conn.getresponse()
            if resp.status != 200:
                raise OSError("watch: HTTP %d" % resp.status)
            while True:
                line = resp.readline()
                if not line:
                    break
                ev = json.loads(line)
                if ev.get("type") in ("ADDED", "MODIFIED", "DELETED"):
                    emit(ev["type"], ev["object"])
                elif ev.get("type") == "ERROR":
                    break
        except (OSError, ValueError, http.client.HTTPException):
            pass
        time.sleep(1)


if __name__ == "__main__":
    main()
