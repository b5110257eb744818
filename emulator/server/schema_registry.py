"""The schema registry's HTTP listener (``--schema-registry-port``): Confluent's REST API
over HTTP/1.1 (h11), the registry itself in emulator.schema_registry.

Guarded like the control plane (emulator/server/control.py): loopback unless told
otherwise (``--schema-registry-host``), optional HTTP basic auth as the registry
clients send it (``basic.auth.user.info``), bodies over MAX_BODY refused (413), a foreign
``Origin`` refused, bodies that are not JSON answered 400 (writes need a JSON content
type: a web page cannot send one without a CORS preflight, which is never granted). A
bug of ours is answered ``500`` with error code 50001 and one log line, never a
traceback. It runs on the cluster's event loop: each request is served between the
brokers' work, and its records are appended before the answer.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hmac
import json
import logging
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import h11

from emulator.schema_registry import errors as E
from emulator.schema_registry.errors import RegistryError
from emulator.schema_registry.model import TYPES
from emulator.schema_registry.store import SchemaStore
from emulator.server.http import send_response, serve_connection

log = logging.getLogger("kafka_emulator.schema_registry")
WRITE_TIMEOUT_S = 10.0  # Confluent's kafkastore.timeout.ms is 500 ms; ours waits longer
MAX_BODY = 8 << 20  # schemas are text; Confluent's clients send one schema per request
CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
JSON_TYPES = ("application/json", "application/vnd.schemaregistry.v1+json",
              "application/vnd.schemaregistry+json", "application/octet-stream")


class Raw:
    """A body sent as it is (``/schema`` endpoints answer the schema itself)."""

    def __init__(self, text: str) -> None:
        self.text = text


def _bool(query: dict[str, list[str]], name: str) -> bool:
    return query.get(name, ["false"])[-1].strip().lower() == "true"


def _str(query: dict[str, list[str]], name: str) -> str | None:
    v = query.get(name)
    return v[-1] if v else None


Handler = Callable[[list[str], dict[str, list[str]], Any], Any]


class SchemaRegistryServer:
    """One HTTP listener serving the registry of one cluster."""

    def __init__(self, store: SchemaStore, host: str = "127.0.0.1", port: int = 0,
                 users: dict[str, str] | None = None) -> None:
        self.store = store
        self.registry = store.registry
        self.host = host
        self.port = port
        self.users = users or {}
        self.server: asyncio.base_events.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()
        self.lock = asyncio.Lock()
        r = self.registry
        S = r"([^/]+)"
        self.routes: list[tuple[str, re.Pattern[str], Handler]] = [
            ("GET", re.compile(r"/"), lambda m, q, b: {}),
            ("GET", re.compile(r"/schemas/types"), lambda m, q, b: list(TYPES)),
            ("GET", re.compile(r"/schemas"), lambda m, q, b: r.list_schemas(
                _str(q, "subjectPrefix") or "", _bool(q, "deleted"), _bool(q, "latestOnly"))),
            ("GET", re.compile(rf"/schemas/ids/{S}"),
             lambda m, q, b: r.schema_by_id(m[0], _str(q, "format"),
                                            _bool(q, "fetchMaxId"))),
            ("GET", re.compile(rf"/schemas/ids/{S}/schema"),
             lambda m, q, b: Raw(r.schema_by_id(m[0], _str(q, "format"))["schema"])),
            ("GET", re.compile(rf"/schemas/ids/{S}/subjects"),
             lambda m, q, b: r.subjects_of_id(m[0], _bool(q, "deleted"))),
            ("GET", re.compile(rf"/schemas/ids/{S}/versions"),
             lambda m, q, b: r.versions_of_id(m[0], _bool(q, "deleted"))),
            ("GET", re.compile(r"/subjects"), lambda m, q, b: r.list_subjects(
                _bool(q, "deleted"), _str(q, "subjectPrefix") or "")),
            ("POST", re.compile(rf"/subjects/{S}"), lambda m, q, b: r.lookup(
                m[0], b, _bool(q, "normalize"), _bool(q, "deleted"))),
            ("DELETE", re.compile(rf"/subjects/{S}"),
             lambda m, q, b: r.delete_subject(m[0], _bool(q, "permanent"))),
            ("GET", re.compile(rf"/subjects/{S}/versions"),
             lambda m, q, b: r.list_versions(m[0], _bool(q, "deleted"))),
            ("POST", re.compile(rf"/subjects/{S}/versions"),
             lambda m, q, b: r.register(m[0], b, _bool(q, "normalize"))),
            ("GET", re.compile(rf"/subjects/{S}/versions/{S}"), lambda m, q, b: r.get_version(
                m[0], m[1], _bool(q, "deleted"), _str(q, "format"))),
            ("GET", re.compile(rf"/subjects/{S}/versions/{S}/schema"), lambda m, q, b: Raw(
                r.get_version(m[0], m[1], _bool(q, "deleted"), _str(q, "format"))["schema"])),
            ("GET", re.compile(rf"/subjects/{S}/versions/{S}/referencedby"),
             lambda m, q, b: r.referenced_by(m[0], m[1])),
            ("DELETE", re.compile(rf"/subjects/{S}/versions/{S}"),
             lambda m, q, b: r.delete_version(m[0], m[1], _bool(q, "permanent"))),
            ("POST", re.compile(rf"/compatibility/subjects/{S}/versions"),
             lambda m, q, b: r.check_compatibility(m[0], None, b, _bool(q, "normalize"),
                                                   _bool(q, "verbose"))),
            ("POST", re.compile(rf"/compatibility/subjects/{S}/versions/{S}"),
             lambda m, q, b: r.check_compatibility(m[0], m[1], b, _bool(q, "normalize"),
                                                   _bool(q, "verbose"))),
            ("GET", re.compile(r"/config"), lambda m, q, b: r.get_config(None)),
            ("PUT", re.compile(r"/config"), lambda m, q, b: r.set_config(None, b)),
            ("DELETE", re.compile(r"/config"), lambda m, q, b: r.delete_config(None)),
            ("GET", re.compile(rf"/config/{S}"),
             lambda m, q, b: r.get_config(m[0], _bool(q, "defaultToGlobal"))),
            ("PUT", re.compile(rf"/config/{S}"), lambda m, q, b: r.set_config(m[0], b)),
            ("DELETE", re.compile(rf"/config/{S}"), lambda m, q, b: r.delete_config(m[0])),
            ("GET", re.compile(r"/mode"), lambda m, q, b: r.get_mode(None)),
            ("PUT", re.compile(r"/mode"),
             lambda m, q, b: r.set_mode(None, b, _bool(q, "force"))),
            ("GET", re.compile(rf"/mode/{S}"),
             lambda m, q, b: r.get_mode(m[0], _bool(q, "defaultToGlobal"))),
            ("PUT", re.compile(rf"/mode/{S}"),
             lambda m, q, b: r.set_mode(m[0], b, _bool(q, "force"))),
            ("DELETE", re.compile(rf"/mode/{S}"), lambda m, q, b: r.delete_mode(m[0])),
            ("GET", re.compile(r"/contexts"), lambda m, q, b: ["."]),
            ("GET", re.compile(r"/v1/metadata/id"), lambda m, q, b: {
                "scope": {"path": [], "clusters": {
                    "kafka-cluster": store.state.cluster_id,
                    "schema-registry-cluster": "schema-registry"}}}),
        ]

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, self.host, self.port,
                                                 reuse_address=True)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            for w in list(self.writers):
                w.transport.abort()
            await self.server.wait_closed()
            self.server = None

    # ---- HTTP ------------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async def respond(conn: h11.Connection, request: h11.Request, body: bytes) -> bool:
            status, payload = await self.serve_one(request, body)
            await self._send(conn, writer, status, payload)
            return True

        async def refuse(conn: h11.Connection, status: int, message: str) -> None:
            await self._send(conn, writer, status, E.bad_request(message).body()
                             if status == 400 else {"error_code": status,
                                                    "message": f"Request {message}"})

        await serve_connection(reader, writer, respond, refuse, MAX_BODY, self.writers)

    async def _send(self, conn: h11.Connection, writer: asyncio.StreamWriter, status: int,
                    payload: Any) -> None:
        data = (payload.text if isinstance(payload, Raw) else json.dumps(payload)).encode()
        auth = [("WWW-Authenticate", 'Basic realm="kafka-emulator"')] if status == 401 else []
        await send_response(conn, writer, status, data, CONTENT_TYPE, auth)

    async def serve_one(self, req: h11.Request, body: bytes) -> tuple[int, Any]:
        """One request, one at a time (Confluent's registry serializes writes too): a
        write is answered once the ISR has its records (the high watermark passed
        them) and the view has read them back, so the next request sees it."""
        async with self.lock:
            status, payload = self.handle(req, body)
            deadline = asyncio.get_running_loop().time() + WRITE_TIMEOUT_S
            while True:
                done, lost = self.store.pending()
                if done and not lost:
                    break
                if lost or asyncio.get_running_loop().time() > deadline:
                    self.store.last_write = None
                    log.warning("schema registry: a write to %s was not committed%s",
                                self.store.topic, " (leader changed)" if lost else "")
                    return 500, {"error_code": 50002,
                                 "message": "Write to the Kafka store timed out while "
                                            "waiting for it to be committed"}
                await asyncio.sleep(0.002)
            self.store.catch_up()
            return status, payload

    def handle(self, req: h11.Request, body: bytes) -> tuple[int, Any]:
        """One request's status and body (synchronous: the registry never waits)."""
        method = req.method.decode("latin-1").upper()
        target = req.target.decode("latin-1")
        split = urlsplit(target)
        path = split.path.rstrip("/") or "/"
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in req.headers}
        try:
            query = parse_qs(split.query, keep_blank_values=True)
            self._guard(method, headers, body)
            return 200, self.route(method, path, query, body)
        except RegistryError as e:
            if e.status >= 500:
                log.warning("schema registry: %s %s: %s", method, path, e.message)
            return e.status, e.body()
        except Exception as e:  # noqa: BLE001 - our bug: one line, no traceback to the client
            log.exception("schema registry: %s %s failed", method, path)
            return 500, {"error_code": E.STORE_ERROR,
                         "message": f"Internal error: {type(e).__name__}"}

    def _guard(self, method: str, headers: dict[str, str], body: bytes) -> None:
        origin = headers.get("origin")
        if origin is not None:
            host = urlsplit(origin).hostname if "://" in origin else origin
            if host not in ("localhost", "127.0.0.1", "::1", self.host):
                raise RegistryError(403, 403, f"cross-origin request from {origin!r} refused")
        if self.users:
            scheme, _, given = headers.get("authorization", "").partition(" ")
            user = password = ""
            if scheme.lower() == "basic":
                try:
                    user, _, password = base64.b64decode(given.strip()).decode().partition(":")
                except (binascii.Error, UnicodeDecodeError):
                    pass
            expected = self.users.get(user)
            if expected is None or not hmac.compare_digest(password.encode(),
                                                           expected.encode()):
                raise RegistryError(401, 401, "Unauthorized")
        if body and method in ("POST", "PUT"):
            ctype = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if ctype and ctype not in JSON_TYPES:
                raise RegistryError(415, 415, f"HTTP 415 Unsupported Media Type: {ctype}")

    def route(self, method: str, path: str, query: dict[str, list[str]], body: bytes) -> Any:
        self.store.catch_up()
        allowed = []
        for m, pattern, handler in self.routes:
            match = pattern.fullmatch(path)
            if match is None:
                continue
            if m != method:
                allowed.append(m)
                continue
            args = [unquote(g) for g in match.groups()]
            data = None
            if method in ("POST", "PUT"):
                data = self._json(body)
            return handler(args, query, data)
        if allowed:
            raise RegistryError(405, 405, f"HTTP 405 Method Not Allowed ({method} {path}; "
                                f"allowed: {', '.join(sorted(set(allowed)))})")
        raise RegistryError(404, 404, f"HTTP 404 Not Found ({method} {path})")

    @staticmethod
    def _json(body: bytes) -> Any:
        if not body.strip():
            return {}
        try:
            return json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise E.bad_request(f"Unrecognized JSON in the request body: {e}") from None


__all__ = ["SchemaRegistryServer"]


REQUIRED = {"fastavro": "Avro", "jsonschema": "JSON Schema", "grpc_tools": "Protobuf",
            "google.protobuf": "Protobuf"}


def check_dependencies() -> None:
    """The registry parses every format; refuse to start without a parser, at once,
    rather than answer a client's first Protobuf schema with an error."""
    import importlib.util

    missing = [name for name in REQUIRED if importlib.util.find_spec(name) is None]
    if missing:
        raise RuntimeError(f"the schema registry needs {', '.join(missing)}: pip install "
                           "'kafka-emulator[schema-registry]'")


async def start_registry(state: Any, host: str, port: int,
                         users: dict[str, str] | None = None) -> SchemaRegistryServer:
    """The registry of ``state``: ``_schemas`` created or replayed, then listening."""
    check_dependencies()
    store = SchemaStore(state)
    store.ensure_topic()
    # The replay is whole before the first request (Confluent's reader reaches the end
    # of the topic before the registry serves): the restored log is committed once the
    # replicas are back in the ISR.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WRITE_TIMEOUT_S
    while not store.caught_up() and loop.time() < deadline:
        await asyncio.sleep(0.005)
    server = SchemaRegistryServer(store, host, port, users)
    await server.start()
    return server
