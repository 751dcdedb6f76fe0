#!/usr/bin/env python3
"""A recording HTTP proxy for the proxy tests (tests/unit/test_kubeclient.c,
tests/unit/test_kubeloop.c, tests/cli/test_live_errors.sh). Not a real proxy.

Listens on 127.0.0.1 (ephemeral port, printed as the first stdout line) and
appends one line per request it receives to the log file given as its
argument:

    CONNECT <host:port>                      a tunnel (https through the proxy)
    <METHOD> <absolute URL> auth=<what>      a request in absolute form (plain
                                             http through the proxy); <what> is
                                             none, or the Authorization scheme
                                             it saw in clear ("Bearer", "Basic")

Whatever host a client names, the proxy connects to 127.0.0.1 on the port it
names, so test servers need no DNS name: a CONNECT to kubernetes:6443 reaches
127.0.0.1:6443. A tunnel pipes bytes both ways; a request in absolute form is
sent on in origin form on a new connection, the answer piped back, and the
client's connection closed after it.
"""
import socket
import sys
import threading
import urllib.parse

log_path = sys.argv[1]
lock = threading.Lock()


def record(line):
    with lock:
        with open(log_path, "a") as f:
            f.write(line + "\n")


def read_head(sock):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None, b""
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    return head.decode("latin-1").split("\r\n"), rest


def pipe(src, dst):
    try:
        while True:
            chunk = src.recv(65536)
            if not chunk:
                break
            dst.sendall(chunk)
    except OSError:
        pass
    for s in (dst, src):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def port_of(hostport, default):
    if hostport.startswith("["):
        tail = hostport[hostport.find("]") + 1:]
        return int(tail[1:]) if tail.startswith(":") else default
    return int(hostport.rsplit(":", 1)[1]) if ":" in hostport else default


def serve(conn):
    lines, rest = read_head(conn)
    if not lines:
        conn.close()
        return
    method, target, _ = (lines[0].split(" ") + ["", ""])[:3]
    headers = lines[1:]
    if method == "CONNECT":
        record("CONNECT %s" % target)
        up = socket.create_connection(("127.0.0.1", port_of(target, 443)))
        conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if rest:
            up.sendall(rest)
        threading.Thread(target=pipe, args=(up, conn), daemon=True).start()
        pipe(conn, up)
        return
    auth = "none"
    length = 0
    kept = []
    for h in headers:
        name, _, value = h.partition(":")
        if name.strip().lower() == "authorization":
            auth = value.strip().split(" ")[0]
        if name.strip().lower() == "content-length":
            length = int(value.strip())
        if name.strip().lower() not in ("connection", "proxy-connection", "keep-alive"):
            kept.append(h)
    record("%s %s auth=%s" % (method, target, auth))
    body = rest
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    u = urllib.parse.urlsplit(target)
    path = (u.path or "/") + ("?" + u.query if u.query else "")
    up = socket.create_connection(("127.0.0.1", u.port or 80))
    up.sendall(("%s %s HTTP/1.1\r\n%s\r\nConnection: close\r\n\r\n"
                % (method, path, "\r\n".join(kept))).encode("latin-1") + body)
    pipe(up, conn)


def main():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    print(srv.getsockname()[1], flush=True)
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
