"""Container healthcheck: the HTTP control plane when it is on, else the first broker.

Standard library only; exits 0 when healthy, 1 otherwise (Docker's HEALTHCHECK rule).
"""

from __future__ import annotations

import os
import socket
import sys
import urllib.request


def main() -> int:
    control = os.environ.get("KAFKA_EMULATOR_CONTROL_PORT")
    try:
        if control:
            token = os.environ.get("KAFKA_EMULATOR_CONTROL_TOKEN")
            req = urllib.request.Request(f"http://127.0.0.1:{control}/cluster", headers={
                "Authorization": f"Bearer {token}"} if token else {})
            with urllib.request.urlopen(req, timeout=2) as r:
                return 0 if r.status == 200 else 1
        port = int(os.environ.get("KAFKA_EMULATOR_PORT", "9092"))
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            return 0
    except OSError as e:
        print(f"unhealthy: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
