"""A small Kubernetes API client for the differential test (stdlib only).

Talks HTTPS to GS_APISERVER with the CA GS_CA and the bearer token
GS_ADMIN_TOKEN (tests/e2e/run.sh exports them). One keep-alive connection,
reopened after an error. The token is never printed.
"""

import http.client
import json
import os
import ssl
import time
import urllib.parse


class ApiError(Exception):
    def __init__(self, status, body):
        self.status = status
        self.body = body
        try:
            self.message = json.loads(body).get("message", body)
        except ValueError:
            self.message = body
        super().__init__("HTTP %d: %s" % (status, self.message))


class Kube:
    def __init__(self):
        url = urllib.parse.urlsplit(os.environ["GS_APISERVER"])
        self.host, self.port = url.hostname, url.port or 443
        self.ctx = ssl.create_default_context(cafile=os.environ["GS_CA"])
        self.token = os.environ["GS_ADMIN_TOKEN"]
        self.conn = None

    def _connect(self):
        self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                                timeout=30)

    def call(self, method, path, body=None, ctype="application/json"):
        """Returns (status, parsed JSON or text). Retries a dropped connection."""
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = ctype
        for attempt in range(5):
            if self.conn is None:
                self._connect()
            try:
                self.conn.request(method, path, body=data, headers=headers)
                resp = self.conn.getresponse()
                raw = resp.read().decode("utf-8", "replace")
                status = resp.status
            except (OSError, http.client.HTTPException):
                self.conn.close()
                self.conn = None
                time.sleep(0.2 * (attempt + 1))
                continue
            if status == 429 or status >= 500:
                time.sleep(0.2 * (attempt + 1))
                continue
            try:
                return status, json.loads(raw)
            except ValueError:
                return status, raw
        raise ApiError(0, "no answer from the apiserver after 5 attempts: %s %s" % (method, path))

    def must(self, method, path, body=None, ctype="application/json", ok=(200, 201)):
        status, out = self.call(method, path, body, ctype)
        if status not in ok:
            raise ApiError(status, json.dumps(out) if not isinstance(out, str) else out)
        return out

    def list(self, path, selector=None):
        if selector:
            path += ("&" if "?" in path else "?") + "labelSelector=" + urllib.parse.quote(selector)
        return self.must("GET", path).get("items", [])
