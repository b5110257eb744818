"""The control plane is safe from the web pages a developer opens (docs/hostile-input.md):
loopback by default, an optional bearer token, JSON-only writes, foreign Origin and
Host refused. Raw HTTP over TCP, as a browser or an attacker's script would send it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from emulator import Cluster

# Not run with --target kafka: the emulator's control plane (HTTP).
pytestmark = pytest.mark.emulator_only


def raw_http(port: int, method: str, path: str, headers: dict[str, str],
             body: bytes = b"") -> tuple[int, dict]:
    headers = {"Host": f"127.0.0.1:{port}", **headers}  # HTTP/1.1 requires one
    lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in headers.items()),
             f"Content-Length: {len(body)}", "Connection: close", "", ""]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall("\r\n".join(lines).encode() + body)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    head, _, payload = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(payload) if payload.startswith(b"{") else {}


@pytest.fixture
def plain() -> Iterator[Cluster]:
    with Cluster(brokers=1, port=0, control_port=0) as c:
        yield c


@pytest.fixture
def tokened() -> Iterator[Cluster]:
    with Cluster(brokers=1, port=0, control_port=0, control_token="s3cret") as c:
        yield c


def test_binds_loopback_whatever_the_broker_host(plain: Cluster) -> None:
    assert plain.control.server.sockets[0].getsockname()[0] == "127.0.0.1"
    with Cluster(brokers=1, host="0.0.0.0", port=0, control_port=0) as c:
        assert c.control.server.sockets[0].getsockname()[0] == "127.0.0.1"


def test_cross_site_simple_requests_are_refused(plain: Cluster) -> None:
    port = plain.control.port
    host = f"127.0.0.1:{port}"
    # What a web page can send without a CORS preflight: text/plain or a form.
    for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
        status, body = raw_http(port, "POST", "/brokers/1/stop", {
            "Host": host, "Content-Type": ctype}, b'{"controlled": true}')
        assert status == 415, (ctype, body)
    status, _ = raw_http(port, "POST", "/brokers/1/stop", {"Host": host})
    assert status == 415
    # A foreign Origin is refused even with the right content type.
    status, body = raw_http(port, "POST", "/brokers/1/stop", {
        "Host": host, "Origin": "https://evil.example", "Content-Type": "application/json"})
    assert status == 403 and "cross-origin" in body["error"]
    # DNS rebinding: a page's own name, resolved to 127.0.0.1.
    status, body = raw_http(port, "GET", "/cluster", {"Host": f"rebind.evil.example:{port}"})
    assert status == 403 and "DNS rebinding" in body["error"]
    assert plain.state.brokers[1].alive
    # What tools send is served.
    assert raw_http(port, "GET", "/cluster", {"Host": f"localhost:{port}"})[0] == 200
    assert raw_http(port, "POST", "/brokers/1/stop", {
        "Host": host, "Content-Type": "application/json", "Origin": f"http://{host}"},
        b"{}")[0] == 200
    assert not plain.state.brokers[1].alive


def test_bearer_token(tokened: Cluster) -> None:
    port = tokened.control.port
    json_ct = {"Content-Type": "application/json"}
    status, body = raw_http(port, "GET", "/cluster", {"Host": f"127.0.0.1:{port}"})
    assert status == 401 and "bearer token" in body["error"]
    assert raw_http(port, "GET", "/cluster", {"Authorization": "Bearer wrong"})[0] == 401
    assert raw_http(port, "POST", "/brokers/1/stop", {**json_ct, "Authorization": "Basic s3cret"},
                    b"{}")[0] == 401
    # With the token any Host is fine (a published port, a Compose service name).
    assert raw_http(port, "GET", "/cluster", {"Host": f"kafka:{port}",
                                              "Authorization": "Bearer s3cret"})[0] == 200
    assert raw_http(port, "POST", "/brokers/1/stop", {**json_ct,
                                                      "Authorization": "Bearer s3cret"},
                    b"{}")[0] == 200


def test_the_fault_command_and_cli_take_a_token(tokened: Cluster) -> None:
    base = f"http://127.0.0.1:{tokened.control.port}"
    cmd = [sys.executable, "-m", "emulator", "fault", "--control", base]
    denied = subprocess.run([*cmd, "cluster"], capture_output=True, text=True, timeout=60)
    assert denied.returncode != 0 and "bearer token" in denied.stdout + denied.stderr
    ok = subprocess.run([*cmd, "--token", "s3cret", "stop-broker", "1"], capture_output=True,
                        text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert not tokened.state.brokers[1].alive


def test_cli_control_host_and_token_options() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0", "--brokers", "1",
                             "--host", "0.0.0.0", "--control-port", "0",
                             "--control-token", "t0k"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready = proc.stdout.readline()
        assert "kafka-emulator ready" in ready, proc.stderr.read() if proc.poll() else ready
        url = ready.split(" control ")[1].strip()
        assert url.startswith("http://127.0.0.1:")
        port = int(url.rsplit(":", 1)[1])
        assert raw_http(port, "GET", "/cluster", {})[0] == 401
        assert raw_http(port, "GET", "/cluster", {"Authorization": "Bearer t0k"})[0] == 200
    finally:
        proc.terminate()
        proc.wait(30)
