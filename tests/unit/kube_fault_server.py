#!/usr/bin/env python3
"""A network-fault peer for tests/unit/test_kubeclient.c (not an apiserver).

Listens on 127.0.0.1 (ephemeral port, printed as the first stdout line) and
answers by path, for any method:

  /echo...                     200, JSON describing the request it received
  /flaky/<key>/<n>/<code>[/<retry-after>]
                               the first n hits of <key> get <code> (a Status
                               body; Retry-After header when given), then echo
  /drop/<key>/<n>              the first n hits close the connection after
                               reading the request, without answering; then echo
  /count/<key>                 {"count": hits of <key>} (does not count itself)
  /connections                 {"count": TCP connections accepted so far, this
                               one's included, whether or not TLS was agreed}
  /fixture/<name>/<code>       tests/unit/data/kube/<name>.json with <code>
  /text/<code>                 a text/plain body "oops: backend down\\n"
  /quote/<code>                <code> with a text/plain body quoting the
                               request's Authorization header, as a
                               debugging proxy might
  /slow/<ms>                   sleeps, then echo
  /big/<bytes>                 a JSON string of that many bytes
  /api/v1/pods                 a 7-pod list, paged by limit/continue; each item
                               records the selectors it was listed with
  /api/v1/expiring             like pods, but every continue token is expired
                               (410 Expired); unpaged lists succeed
  /api/v1/cut                  an empty list; its watch (watch=1) opens (200,
                               chunked), sends one BOOKMARK, and 300 ms later
                               the connection is cut without the last chunk

Options: --tls CERT KEY [--client-ca CA] serves HTTPS (client certificate
required when --client-ca is given; echo then reports the client's CN);
--tls12 caps it at TLS 1.2, where a refused client certificate fails the
handshake itself. The TLS handshake runs in the connection's thread, after
it was counted; a plain HTTP request on the TLS port gets the answer Go's
net/http (the apiserver) gives: 400 "Client sent an HTTP request to an
HTTPS server."
"""
import json
import os
import socket
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "data", "kube")
hits = {}
connections = 0
lock = threading.Lock()


def hit(key):
    with lock:
        hits[key] = hits.get(key, 0) + 1
        return hits[key]


def status(code, reason, message):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": reason, "code": code}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the apiserver

    def log_message(self, *args):
        pass

    def send(self, code, body, ctype="application/json", headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n).decode("utf-8", "replace") if n else ""

    def echo(self, body, extra=None):
        peer = None
        if isinstance(self.connection, ssl.SSLSocket):
            cert = self.connection.getpeercert()
            if cert:
                peer = dict(x[0] for x in cert["subject"]).get("commonName")
        out = {
            "method": self.command,
            "path": self.path,
            "body": body,
            "clientPort": self.client_address[1],
            "clientCN": peer,
            "headers": {k.lower(): v for k, v in self.headers.items()},
        }
        out.update(extra or {})
        self.send(200, out)

    def pods(self, expiring):
        u = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(u.query)
        limit = int(q.get("limit", ["0"])[0])
        cont = q.get("continue", [None])[0]
        if cont and expiring:
            self.send(410, status(410, "Expired",
                                  "The provided continue parameter is too old to display a "
                                  "consistent list result. You can start a new list without "
                                  "the continue parameter."))
            return
        start = int(cont[4:]) if cont else 0
        end = 7 if not limit else min(7, start + limit)
        items = [{"metadata": {"name": "pod-%d" % i, "annotations": {
            "labelSelector": q.get("labelSelector", [""])[0],
            "fieldSelector": q.get("fieldSelector", [""])[0]}}} for i in range(start, end)]
        md = {"resourceVersion": "4242"}
        if end < 7:
            md["continue"] = "tok-%d" % end
            md["remainingItemCount"] = 7 - end
        self.send(200, {"kind": "PodList", "apiVersion": "v1", "metadata": md, "items": items})

    def cut(self):
        q = urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)
        if q.get("watch") != ["1"]:
            self.send(200, {"kind": "List", "apiVersion": "v1",
                            "metadata": {"resourceVersion": "7"}, "items": []})
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        line = (json.dumps({"type": "BOOKMARK", "object": {
            "kind": "List", "metadata": {"resourceVersion": "8"}}}) + "\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
        self.wfile.flush()
        time.sleep(0.3)
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def handle_any(self):
        body = self.read_body()
        parts = urllib.parse.urlparse(self.path).path.strip("/").split("/")
        head = parts[0] if parts else ""
        if head == "echo":
            self.echo(body)
        elif head == "flaky":
            key, n, code = parts[1], int(parts[2]), int(parts[3])
            c = hit(key)
            if c <= n:
                hdrs = {"Retry-After": parts[4]} if len(parts) > 4 else {}
                self.send(code, status(code, "TooManyRequests" if code == 429 else
                                       "InternalError", "flaky %s attempt %d" % (key, c)),
                          headers=hdrs)
            else:
                self.echo(body, {"attempts": c})
        elif head == "drop":
            key, n = parts[1], int(parts[2])
            c = hit(key)
            if c <= n:
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            self.echo(body, {"attempts": c})
        elif head == "connections":
            with lock:
                self.send(200, {"count": connections})
        elif head == "count":
            with lock:
                self.send(200, {"count": hits.get(parts[1], 0)})
        elif head == "fixture":
            with open(os.path.join(FIXTURES, parts[1] + ".json"), "rb") as f:
                self.send(int(parts[2]), f.read())
        elif head == "quote":
            auth = self.headers.get("Authorization", "")
            self.send(int(parts[1]), ("denied; you sent Authorization: %s\n" % auth).encode(),
                      "text/plain; charset=utf-8")
        elif head == "text":
            self.send(int(parts[1]), b"oops: backend down\n", "text/plain; charset=utf-8")
        elif head == "slow":
            time.sleep(int(parts[1]) / 1000.0)
            self.echo(body)
        elif head == "big":
            self.send(200, json.dumps("x" * int(parts[1])).encode())
        elif parts[:3] == ["api", "v1", "pods"]:
            self.pods(False)
        elif parts[:3] == ["api", "v1", "expiring"]:
            self.pods(True)
        elif parts[:3] == ["api", "v1", "cut"]:
            self.cut()
        else:
            self.send(404, b"404 page not found\n", "text/plain; charset=utf-8")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True
    tls = None  # an ssl.SSLContext, or plain HTTP
    # socketserver's backlog of 5 drops the SYNs of a loop opening 64
    # connections at once, each then waiting a second for its retransmission.
    request_queue_size = 128

    def get_request(self):
        global connections
        sock, addr = self.socket.accept()
        with lock:
            connections += 1
        return sock, addr

    def finish_request(self, request, client_address):
        if not self.tls:
            super().finish_request(request, client_address)
            return
        # Go's net/http (the apiserver) answers a plain HTTP request on its TLS port so.
        if request.recv(5, socket.MSG_PEEK) in (b"GET /", b"HEAD ", b"POST ", b"PUT /", b"OPTIO"):
            request.sendall(b"HTTP/1.0 400 Bad Request\r\n\r\n"
                            b"Client sent an HTTP request to an HTTPS server.\n")
            return
        conn = self.tls.wrap_socket(request, server_side=True, do_handshake_on_connect=False)
        try:
            conn.do_handshake()
        except OSError:
            conn.close()
            return  # refused client certificate, not TLS, ...: counted, dropped
        try:
            super().finish_request(conn, client_address)
        finally:
            conn.close()

    def handle_error(self, request, client_address):
        pass  # dropped connections and refused handshakes are the point


def main():
    srv = Server(("127.0.0.1", 0), Handler)
    args = sys.argv[1:]
    tls12 = "--tls12" in args
    args = [a for a in args if a != "--tls12"]
    if args[:1] == ["--tls"]:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args[1], args[2])
        if args[3:4] == ["--client-ca"]:
            ctx.load_verify_locations(args[4])
            ctx.verify_mode = ssl.CERT_REQUIRED
        if tls12:
            ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        srv.tls = ctx
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
