#!/usr/bin/env python3
"""A recording stand-in for the apiserver, for the CLI tests of the live commands.

Listens on 127.0.0.1 (ephemeral port, printed as the first stdout line) and
appends one line per request to the log file given as its argument:

    METHOD PATH auth=none|bearer:<first 12 hex of the token's sha256>

Any path prefix before /api/ is kept in the log (a kubeconfig's contexts can
point at /prod and /test of the same server) and ignored for the answer:

  GET   .../api/v1/namespaces/gpu-share/configmaps/device-plugin-configs
                                  a ConfigMap with configs default and shared
  GET   .../api/v1/nodes          one GPU node, lab-node-1 (2 x Tesla T4,
                                  config shared), advertising nothing yet
  GET   .../api/v1/nodes/lab-node-1   that node
  PATCH anything                  200 with the node (a write: the tests look for it)
  anything else                   404 with a Status, as the apiserver says it
"""
import hashlib
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONFIGMAP = {
    "apiVersion": "v1", "kind": "ConfigMap",
    "metadata": {"name": "device-plugin-configs", "namespace": "gpu-share",
                 "resourceVersion": "1"},
    "data": {
        "default": "version: v1\nflags:\n  migStrategy: none\n",
        "shared": "version: v1\nflags:\n  migStrategy: none\nsharing:\n  timeSlicing:\n"
                  "    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n",
    },
}
NODE = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {
        "name": "lab-node-1", "resourceVersion": "7",
        "labels": {"kubernetes.io/hostname": "lab-node-1",
                   "nvidia.com/device-plugin.config": "shared"},
        "annotations": {"gpushare.io/gpu-product": "Tesla T4", "gpushare.io/gpu-count": "2"},
    },
    "status": {"capacity": {"cpu": "32", "pods": "110"},
               "allocatable": {"cpu": "32", "pods": "110"}},
}

log_path = sys.argv[1]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            who = "bearer:" + hashlib.sha256(auth[7:].encode()).hexdigest()[:12]
        else:
            who = "none"
        with open(log_path, "a") as f:
            f.write("%s %s auth=%s\n" % (self.command, self.path.split("?")[0], who))

    def send(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def answer(self):
        self.record()
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            self.rfile.read(n)
        path = self.path.split("?")[0]
        api = path[path.find("/api/"):] if "/api/" in path else path
        if self.command == "PATCH":
            return self.send(200, NODE)
        if api == "/api/v1/namespaces/gpu-share/configmaps/device-plugin-configs":
            return self.send(200, CONFIGMAP)
        if api == "/api/v1/nodes":
            return self.send(200, {"apiVersion": "v1", "kind": "NodeList",
                                   "metadata": {"resourceVersion": "9"}, "items": [NODE]})
        if api == "/api/v1/nodes/lab-node-1":
            return self.send(200, NODE)
        if api == "/version":
            return self.send(200, {"major": "1", "minor": "34", "gitVersion": "v1.34.4"})
        name = api.rstrip("/").split("/")[-1]
        kind = api.rstrip("/").split("/")[-2] if api.count("/") > 1 else "things"
        return self.send(404, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                               "status": "Failure", "reason": "NotFound", "code": 404,
                               "message": '%s "%s" not found' % (kind, name)})

    do_GET = do_PATCH = do_POST = do_PUT = do_DELETE = answer


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
