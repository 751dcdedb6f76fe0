#!/usr/bin/env python3
"""bench/controller_watch.py: wait on the apiserver, through one list and one
watch (never a request per object), until a set of objects reaches a state;
print the wall-clock time (epoch seconds) at which the last one did.

  controller_watch.py nodes SELECTOR COUNT VALUE [READY_FILE]
      every one of the COUNT nodes matching SELECTOR advertises
      nvidia.com/gpu = VALUE in both status.capacity and status.allocatable
  controller_watch.py pods NAMESPACE COUNT [READY_FILE]
      every one of the COUNT pods of NAMESPACE is decided: admitted by the
      controller (annotation gpushare.io/admitted=true) and Running, or Failed

The list is paged (limit 500) and the watch resumes from its
resourceVersion, as an informer does; READY_FILE is created once the list is
read, so the caller starts its clock after that. The last line on stdout is
one JSON object: {"done": EPOCH, ...counts}. Connection: GS_APISERVER, GS_CA,
GS_ADMIN_CERT, GS_ADMIN_KEY (scripts/cluster/up.sh's .cluster/env).
Gives up after BENCH_WATCH_TIMEOUT seconds (default 1800) with exit 1.
"""
import http.client
import json
import os
import ssl
import sys
import time
import urllib.parse


def connect():
    url = urllib.parse.urlparse(os.environ["GS_APISERVER"])
    ctx = ssl.create_default_context(cafile=os.environ["GS_CA"])
    ctx.load_cert_chain(os.environ["GS_ADMIN_CERT"], os.environ["GS_ADMIN_KEY"])
    return http.client.HTTPSConnection(url.hostname, url.port, context=ctx, timeout=120)


def get(conn, path):
    conn.request("GET", path, headers={"Accept": "application/json"})
    r = conn.getresponse()
    body = r.read()
    if r.status != 200:
        raise SystemExit("bench: GET %s: %d %s" % (path, r.status, body[:300]))
    return json.loads(body)


def gpu(obj, where):
    return obj.get("status", {}).get(where, {}).get("nvidia.com/gpu")


class Nodes:
    def __init__(self, count, value):
        self.count, self.value, self.ok, self.ready = count, value, {}, {}

    def update(self, ev, o):
        name = o["metadata"]["name"]
        if ev == "DELETED":
            self.ok.pop(name, None)
            self.ready.pop(name, None)
        else:
            self.ok[name] = gpu(o, "capacity") == self.value and gpu(o, "allocatable") == self.value
            self.ready[name] = any(c.get("type") == "Ready" and c.get("status") == "True"
                                   for c in o.get("status", {}).get("conditions") or [])

    def done(self):
        return len(self.ok) >= self.count and all(self.ok.values())

    def summary(self):
        return {"nodes": len(self.ok), "advertising": sum(self.ok.values()),
                "not_ready": len(self.ready) - sum(self.ready.values())}


class Pods:
    def __init__(self, count):
        self.count, self.state, self.bound_at = count, {}, {}

    def update(self, ev, o):
        name = o["metadata"]["name"]
        if ev == "DELETED":
            self.state.pop(name, None)
            return
        if o.get("spec", {}).get("nodeName") and name not in self.bound_at:
            self.bound_at[name] = time.time()
        ann = o["metadata"].get("annotations") or {}
        phase = o.get("status", {}).get("phase")
        if phase == "Failed":
            self.state[name] = "failed:" + o["status"].get("reason", "")
        elif ann.get("gpushare.io/admitted") == "true" and phase == "Running":
            self.state[name] = "running"
        else:
            self.state[name] = "waiting"

    def done(self):
        return len(self.state) >= self.count and "waiting" not in self.state.values()

    def summary(self):
        out = {"pods": len(self.state), "last_bound": max(self.bound_at.values(), default=0)}
        for s in self.state.values():
            out[s] = out.get(s, 0) + 1
        return out


def main():
    mode = sys.argv[1]
    if mode == "nodes":
        base = "/api/v1/nodes?labelSelector=" + urllib.parse.quote(sys.argv[2])
        want = Nodes(int(sys.argv[3]), sys.argv[4])
        ready = sys.argv[5] if len(sys.argv) > 5 else None
    elif mode == "pods":
        base = "/api/v1/namespaces/%s/pods?" % sys.argv[2]
        want = Pods(int(sys.argv[3]))
        ready = sys.argv[4] if len(sys.argv) > 4 else None
    else:
        raise SystemExit(__doc__)
    deadline = time.time() + float(os.environ.get("BENCH_WATCH_TIMEOUT", "1800"))
    conn = connect()
    cont, rv = "", ""
    while True:
        lst = get(conn, base + "&limit=500" + ("&continue=" + urllib.parse.quote(cont) if cont else ""))
        for o in lst["items"]:
            want.update("ADDED", o)
        cont = lst["metadata"].get("continue", "")
        rv = lst["metadata"]["resourceVersion"]
        if not cont:
            break
    if ready:
        open(ready, "w").close()
    done_at = time.time() if want.done() else None
    events = 0
    while done_at is None:
        if time.time() > deadline:
            print(json.dumps(dict(want.summary(), timeout=True)))
            sys.exit(1)
        conn.request("GET", base + "&watch=1&allowWatchBookmarks=true&timeoutSeconds=120&resourceVersion=" + rv,
                     headers={"Accept": "application/json"})
        r = conn.getresponse()
        if r.status != 200:
            raise SystemExit("bench: watch: %d %s" % (r.status, r.read()[:300]))
        while True:
            line = r.readline()
            if not line:
                break
            ev = json.loads(line)
            o = ev["object"]
            if ev["type"] == "ERROR":
                raise SystemExit("bench: watch ended: %s" % o.get("message"))
            rv = o["metadata"].get("resourceVersion", rv)
            if ev["type"] == "BOOKMARK":
                continue
            events += 1
            want.update(ev["type"], o)
            if want.done():
                done_at = time.time()
                break
        r.close()
    print(json.dumps(dict(want.summary(), done=done_at, events=events)))


if __name__ == "__main__":
    main()
