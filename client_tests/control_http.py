"""One HTTP call to a cluster's control plane, for the tests that drive it by hand
(the way a non-Python client does): JSON in, (status, JSON or text) out, an error status
answered rather than raised."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


def http(base: str, method: str, path: str, body: Any = None,
         raw: bytes | None = None) -> tuple[int, Any]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, payload, ctype = r.status, r.read(), r.headers["Content-Type"]
    except urllib.error.HTTPError as e:
        status, payload, ctype = e.code, e.read(), e.headers["Content-Type"]
    return status, json.loads(payload) if ctype == "application/json" else payload.decode()
