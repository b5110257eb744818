"""The HTTP control plane (``--control-port``): JSON over HTTP/1.1, parsed by h11.

Routes (every body is JSON; errors are ``{"error": "..."}`` with a 4xx status):

    GET    /                              the routes
    GET    /cluster                       controller, brokers, topics and partitions
    GET    /topics/{name}                 one topic's partitions
    GET    /metrics                       Prometheus text, Kafka's metric names
    POST   /brokers/{id}/stop             crash a broker ({"fence_after_ms": N}: fenced
                                          after N ms; {"controlled": true} to shut
                                          it down cleanly)
    POST   /brokers/{id}/start            start it again
    POST   /brokers/{id}/controlled-shutdown
    GET    /faults                        the faults in force
    POST   /faults                        apply one operation, or a list (all validated
                                          first), in emulator.faults' vocabulary
    DELETE /faults                        clear every fault
    POST   /faults/schedule               run a fault schedule (validated whole first)
    GET    /faults/schedule               progress of the last schedule
    POST   /reassignments                 {"topic", "partition", "replicas"}: start a
                                          reassignment ("replicas": null cancels it)
    DELETE /reassignments                 {"topic", "partition"}: cancel one
    POST   /elections/preferred           {"topic": T, "partitions": [..]} or {} for all
    GET    /ui                            the web console (docs/console.md)
    GET    /ui/snapshot                   what the console shows, as JSON
    GET    /events                        the same, pushed as server-sent events
                                          (?interval_ms=N, default 1000): one
                                          ``snapshot`` event, then ``delta`` events
                                          carrying only the topics that changed
    GET    /openapi.json                  all of this, described (OpenAPI 3.1)
    ...    /rules, /groups/{group}, /journal, /barriers: request rules and their
           hits, group states, the request journal, barriers, and the waits on
           them (emulator/server/watch.py; docs/journal.md)

The control plane runs on the cluster's own event loop, so what it does is ordered
with the brokers' work like any request. h11 does the HTTP; this module only routes.

It can stop brokers, so it is guarded like a local admin API (``RequestGuard``): it
listens on 127.0.0.1 unless told otherwise (``--control-host``), takes an optional
bearer token (``--control-token``), refuses writes that are not application/json (a web
page can send a cross-site "simple" request, text/plain or a form, without asking; JSON
needs a CORS preflight, which is never granted), refuses a foreign ``Origin`` (CSRF) and,
without a token, a ``Host`` that is not an address, localhost or a name of this
emulator (DNS rebinding: a page whose name resolves to 127.0.0.1).
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import logging
import re
import socket
import time
from collections.abc import Iterable
from importlib import metadata, resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

import h11

from emulator.control import operations
from emulator.control.console import ConsoleCache, console_snapshot
from emulator.control.metrics import cluster_view, prometheus
from emulator.control.openapi import document
from emulator.control.operations import ControlError, ControlTarget
from emulator.faults import FaultError, FaultSchedule, ScheduleError, ScheduleRunner
from emulator.server.http import send_response, serve_connection
from emulator.server.schedule import start_schedule
from emulator.server.watch import WATCH_OPS

log = logging.getLogger("kafka_emulator.control")
MAX_BODY = 1 << 20
# The console's files (package data in emulator/server/ui): no build step, no internet.
UI_FILES = {"/ui": ("index.html", "text/html; charset=utf-8"),
            "/ui/app.js": ("app.js", "text/javascript; charset=utf-8"),
            "/ui/style.css": ("style.css", "text/css; charset=utf-8")}
MIN_EVENT_INTERVAL_MS = 100
SNAPSHOT_REUSE_S = 0.05  # /events streams and /ui/snapshot share a snapshot this young


class Raw:
    """A response body that is not JSON (the console's files)."""

    def __init__(self, data: bytes, content_type: str) -> None:
        self.data = data
        self.content_type = content_type


class EventStream:
    """GET /events: the connection turns into a server-sent event stream."""

    def __init__(self, interval_s: float) -> None:
        self.interval_s = interval_s


# The control surface's refusals are HTTP answers (status and message) as they are.
HttpError = ControlError


def _host_name(value: str) -> str:
    """The host of a Host header value or an Origin's authority, without port or brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class RequestGuard:
    """Who may drive the control plane: the checks of every request, before routing."""

    def __init__(self, token: str | None = None, names: Iterable[str] = ()) -> None:
        self.token = token or None
        # Names this emulator answers to besides addresses and localhost.
        self.names = {n.lower() for n in names if n} | {socket.gethostname().lower()}

    def local_name(self, name: str) -> bool:
        return (_is_address(name) or name == "localhost" or name.endswith(".localhost")
                or name in self.names)

    def check(self, method: str, headers: dict[str, str], public: bool = False) -> None:
        """Raise HttpError when a request must be refused.

        ``public``: the console's static files (no cluster data in them) are served
        without the token, so a browser can open /ui and then send the token itself;
        the Host and Origin checks still apply."""
        host = headers.get("host")
        if self.token is None and host is not None and not self.local_name(_host_name(host)):
            raise HttpError(403, f"Host {host!r} is not this emulator's (DNS rebinding?); use "
                            "an address or localhost, or set --control-token")
        origin = headers.get("origin")
        if origin is not None:
            oh = _host_name(urlsplit(origin).netloc) if "://" in origin else origin.lower()
            if not (self.local_name(oh) and (oh != "null")):
                raise HttpError(403, f"cross-origin request from {origin!r} refused")
        if self.token is not None and not public:
            auth = headers.get("authorization", "")
            scheme, _, given = auth.partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                    given.strip().encode(), self.token.encode()):
                raise HttpError(401, "a bearer token is required (Authorization: Bearer "
                                "TOKEN, the --control-token of this emulator)")
        if method not in ("GET", "HEAD"):
            ctype = headers.get("content-type", "").split(";", 1)[0].strip().lower()
            if ctype != "application/json":
                raise HttpError(415, f"{method} needs Content-Type: application/json "
                                f"(got {ctype or 'none'})")


class ControlPlane:
    """One HTTP listener driving a running ``emulator.Cluster``."""

    def __init__(self, cluster: ControlTarget, host: str, port: int, token: str | None = None,
                 names: Iterable[str] = ()) -> None:
        self.cluster = cluster
        self.host = host
        self.port = port
        self.guard = RequestGuard(token, [host, *names])
        self.server: asyncio.base_events.Server | None = None
        self.writers: set[asyncio.StreamWriter] = set()
        self.streams: set[asyncio.Task] = set()  # /events connections, cancelled at stop
        self._snapshot: tuple[float, dict] | None = None
        # Topic views between snapshots: a refresh rebuilds only the topics that changed
        # and the event streams send only those (emulator.control.console).
        self.console_cache = ConsoleCache()
        self.schedule: ScheduleRunner | None = None
        self.schedule_task: asyncio.Task | None = None

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._serve, self.host, self.port,
                                                 reuse_address=True)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self.schedule_task is not None:
            self.schedule_task.cancel()
        if self.server is not None:
            self.server.close()
            for w in list(self.writers):
                w.transport.abort()
            for task in list(self.streams):
                task.cancel()
            await self.server.wait_closed()
            self.server = None

    # ---- HTTP ------------------------------------------------------------------------
    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async def respond(conn: h11.Connection, request: h11.Request, body: bytes) -> bool:
            status, payload = await self._handle(request, body)
            if isinstance(payload, EventStream):
                await self._stream(conn, writer, payload)
                return False
            await self._send(conn, writer, status, payload)
            return True

        async def refuse(conn: h11.Connection, status: int, message: str) -> None:
            await self._send(conn, writer, status, {"error": message})

        await serve_connection(reader, writer, respond, refuse, MAX_BODY, self.writers)

    async def _send(self, conn: h11.Connection, writer: asyncio.StreamWriter, status: int,
                    payload: Any) -> None:
        if isinstance(payload, Raw):
            data, ctype = payload.data, payload.content_type
        elif isinstance(payload, str):
            data, ctype = payload.encode(), "text/plain; version=0.0.4; charset=utf-8"
        else:
            data, ctype = (json.dumps(payload, indent=1) + "\n").encode(), "application/json"
        auth = [("WWW-Authenticate", 'Bearer realm="kafka-emulator"')] if status == 401 else []
        await send_response(conn, writer, status, data, ctype, auth)

    async def _stream(self, conn: h11.Connection, writer: asyncio.StreamWriter,
                      stream: EventStream) -> None:
        """Push the console's view every interval until the client goes away (h11 frames
        it chunked; EventSource and fetch read that): first a ``snapshot`` event with
        every topic, then ``delta`` events with everything but the topics, and of those
        only the ones rebuilt since this stream last sent them (``topics``) and the names
        of the ones gone (``removed_topics``). With 10,000 idle partitions a delta is a
        few hundred bytes instead of the whole cluster."""
        writer.write(conn.send(h11.Response(status_code=200, headers=[
            ("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
            ("X-Accel-Buffering", "no")])))
        task = asyncio.current_task()
        if task is not None:
            self.streams.add(task)
        sent: dict[str, int] | None = None  # topic -> rev this stream has sent
        try:
            while not writer.transport.is_closing():
                event, sent = self.snapshot_event(sent)
                writer.write(conn.send(h11.Data(data=event)))
                await writer.drain()
                await asyncio.sleep(stream.interval_s)
        except asyncio.CancelledError:
            pass
        finally:
            self.streams.discard(task)

    def snapshot_event(self, sent: dict[str, int] | None) -> tuple[bytes, dict[str, int]]:
        """The next server-sent event of a stream that has sent the topic revs ``sent``
        (None: nothing yet, so a whole ``snapshot``), and the revs sent after it. The
        topics' JSON is encoded once per rebuild (the cache), not once per event."""
        snap = self.snapshot()
        views = self.console_cache.topics  # exactly this snapshot's topics
        revs = {name: tv.rev for name, tv in views.items()}
        head = {k: v for k, v in snap.items() if k != "topics"}
        if sent is None:
            kind, names = "snapshot", list(views)
        else:
            kind, names = "delta", [n for n, r in revs.items() if sent.get(n) != r]
            head["removed_topics"] = [n for n in sent if n not in revs]
        encoded = json.dumps(head, separators=(",", ":"))
        body = (encoded[:-1] + ',"topics":[' + ",".join(views[n].json for n in names) + "]}")
        return f"event: {kind}\ndata: {body}\n\n".encode(), revs

    def snapshot(self) -> dict:
        """The console's view of the cluster now (emulator.control.console, plus the
        build time in ms and how many topic views it rebuilt, so the page can show what
        a refresh costs)."""
        c = self.cluster
        now = time.monotonic()
        if self._snapshot is not None and now - self._snapshot[0] < SNAPSHOT_REUSE_S:
            return self._snapshot[1]  # several pages open: build once per refresh
        groups = c.server.services.groups if c.server is not None else None
        t0 = time.perf_counter()
        snap = console_snapshot(
            c.state, groups=groups, faults=c.faults.model.describe(),
            fault_log=list(c.faults.log), schedule=self.schedule.status() if self.schedule
            else None, cache=self.console_cache)
        snap["build_ms"] = round((time.perf_counter() - t0) * 1000, 2)
        snap["topics_rebuilt"] = self.console_cache.rebuilt
        self._snapshot = (now, snap)
        return snap

    async def _handle(self, req: h11.Request, body: bytes) -> tuple[int, Any]:
        method = req.method.decode()
        target = req.target.decode("latin-1")
        path = target.split("?", 1)[0].rstrip("/") or "/"
        query = (parse_qs(target.split("?", 1)[1], keep_blank_values=True) if "?" in target
                 else {})
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in req.headers}
        try:
            self.guard.check(method, headers, public=method == "GET" and path in UI_FILES)
        except HttpError as e:
            log.warning("control plane: refused %s %s: %s", method, path, e.message)
            return e.status, {"error": e.message}
        try:
            return await self.route(method, path, body, query)
        except HttpError as e:
            return e.status, {"error": e.message}
        except FaultError as e:
            return e.status, {"error": str(e)}
        except ScheduleError as e:
            return 400, {"error": "fault schedule rejected; nothing was run",
                         "problems": e.problems}
        except KeyError as e:
            return 404, {"error": str(e.args[0]) if e.args else "not found"}
        except Exception as e:  # noqa: BLE001 - our bug: answer, keep serving
            log.exception("control plane: %s %s failed", method, path)
            return 500, {"error": f"internal error: {e}"}

    # ---- routes: the operations of emulator.control.operations ---------------------------
    async def route(self, method: str, path: str, body: bytes,
                    query: dict[str, list[str]] | None = None) -> tuple[int, Any]:
        if path in UI_FILES and method == "GET":
            name, ctype = UI_FILES[path]  # the console's files, /ui among them
            return 200, Raw(resources.files("emulator.server.ui").joinpath(name).read_bytes(),
                            ctype)
        op, params = operations.match(method, path)
        if method != "GET" and body.strip() and (op.method, op.path) != operations.FAULT_ROUTE \
                and op.name != "run_schedule":
            # a body the route does not read is refused too: a client that thinks it
            # says something must learn that it does not
            data = self._json(body)
            if not isinstance(data, dict):
                raise HttpError(400, f"{op.name}: the body must be a JSON object")
            unknown = sorted(set(data) - set(op.body))
            if unknown:
                raise HttpError(400, f"{op.name}: unknown field(s) {', '.join(unknown)} "
                                f"(allowed: {', '.join(op.body) or 'none'})")
        if op.name in WATCH_OPS:
            data = self._json(body, default={}) if method != "GET" else None
            fields = operations.read_fields(op, params, data, query or {},
                                            self.cluster.state.brokers)
            return op.status, await self.cluster.operation_async(op.name, fields)
        if (op.method, op.path) == operations.FAULT_ROUTE:
            return await self._fault(body)
        if "id" in params:  # a broker's own route: /brokers/{id}/stop, start...
            return await self._broker(op, self._broker_id(params["id"]), body)
        return await getattr(self, f"_{op.name}")(params, body, query or {})

    async def _routes(self, params: dict, body: bytes, query: dict) -> tuple[int, Any]:
        return 200, {"routes": operations.routes()}

    async def _cluster(self, params: dict, body: bytes, query: dict) -> tuple[int, Any]:
        return 200, {**cluster_view(self.cluster.state), **self.cluster.security_view()}

    async def _openapi(self, params: dict, body: bytes, query: dict) -> tuple[int, Any]:
        try:
            version = metadata.version("kafka-emulator")
        except metadata.PackageNotFoundError:  # run from a checkout not installed
            version = "0"
        return 200, document(version)

    async def _metrics(self, params: dict, body: bytes, query: dict) -> tuple[int, Any]:
        return 200, prometheus(self.cluster.state)

    async def _topic(self, params: dict, body: bytes, query: dict) -> tuple[int, Any]:
        name = params["name"]
        view = cluster_view(self.cluster.state)["topics"].get(name)
        if view is None:
            raise HttpError(404, f"unknown topic {name!r}")
        return 200, {"name": name, **view}

    async def _broker(self, op: operations.Operation, bid: int,
                      body: bytes) -> tuple[int, Any]:
        data = self._json(body, default={})
        data = data if isinstance(data, dict) else {}
        c = self.cluster
        await c.fault_async({"op": op.name, "broker": bid,
                             **{k: data[k] for k in op.body if data.get(k) is not None}})
        b = c.state.brokers[bid]
        return 200, {"broker": bid, "alive": b.alive, "crashed": b.crashed,
                     "controller": c.state.controller_id}

    async def _fault(self, body: bytes) -> tuple[int, Any]:
        """POST /faults: one operation or a list, all validated before any is applied."""
        c = self.cluster
        data = self._json(body)
        ops = data if isinstance(data, list) else [data]
        valid = [c.faults.validate(op) for op in ops]  # all or nothing
        applied = [await c.fault_async(op) for op in valid]
        return 200, {"applied": applied, "faults": c.faults.model.describe()}

    async def _faults(self, params: dict, body: bytes, query: dict) -> tuple[int, Any]:
        return 200, self.cluster.faults.model.describe()

    async def _adversary(self, params: dict, body: bytes, query: dict) -> tuple[int, Any]:
        adversary = self.cluster.adversary
        if adversary is None:
            raise HttpError(404, f"the cluster runs --fidelity {self.cluster.state.fidelity.mode}"
                            "; only --fidelity adversarial injects faults of its own")
        return 200, adversary.describe()

    async def _tune_adversary(self, params: dict, body: bytes, query: dict) -> tuple[int, Any]:
        """POST /adversary ``{"off": true}``, ``{"on": true}``, ``{"scale": "all=0.5"}`` or
        ``{"scale": {"kick": 2}}``."""
        adversary = self.cluster.adversary
        if adversary is None:
            raise HttpError(404, f"the cluster runs --fidelity {self.cluster.state.fidelity.mode}"
                            "; only --fidelity adversarial injects faults of its own")
        data = self._json(body, default={})
        if not isinstance(data, dict) or set(data) - {"off", "on", "scale"}:
            raise HttpError(400, 'expected {"off": true}, {"on": true} and/or {"scale": '
                            '"KIND=FACTOR,..."}')
        if data.get("off") and data.get("on"):
            raise HttpError(400, "off and on at once")
        enabled = False if data.get("off") else True if data.get("on") else None
        try:
            return 200, adversary.tune(enabled, data.get("scale"))
        except ValueError as e:
            raise HttpError(400, str(e)) from None

    async def _clear(self, params: dict, body: bytes, query: dict) -> tuple[int, Any]:
        await self.cluster.fault_async({"op": "clear"})
        return 200, self.cluster.faults.model.describe()

    async def _schedule_status(self, params: dict, body: bytes,
                               query: dict) -> tuple[int, Any]:
        if self.schedule is None:
            raise HttpError(404, "no fault schedule has been run")
        return 200, self.schedule.status()

    async def _run_schedule(self, params: dict, body: bytes, query: dict) -> tuple[int, Any]:
        if self.schedule is not None and not self.schedule.done:
            raise HttpError(409, "a fault schedule is still running")
        schedule = FaultSchedule.parse(body, self.cluster.state.brokers)
        self.schedule, self.schedule_task = start_schedule(self.cluster, schedule)
        return 202, {"seed": schedule.seed, "steps": len(schedule.steps)}

    async def _reassign(self, params: dict, body: bytes, query: dict) -> tuple[int, Any]:
        return 200, operations.reassign(self.cluster.state, self._json(body), cancel=False)

    async def _cancel_reassignment(self, params: dict, body: bytes,
                                   query: dict) -> tuple[int, Any]:
        return 200, operations.reassign(self.cluster.state, self._json(body), cancel=True)

    async def _elect_preferred(self, params: dict, body: bytes,
                               query: dict) -> tuple[int, Any]:
        return 200, operations.elect_preferred(self.cluster.state,
                                               self._json(body, default={}))

    async def _console(self, params: dict, body: bytes, query: dict) -> tuple[int, Any]:
        return 200, self.snapshot()

    async def _events(self, params: dict, body: bytes, query: dict) -> tuple[int, Any]:
        raw = query.get("interval_ms", ["1000"])[-1]
        if not raw.isdigit():
            raise HttpError(400, "interval_ms must be a whole number of milliseconds")
        return 200, EventStream(max(int(raw), MIN_EVENT_INTERVAL_MS) / 1000)

    def _broker_id(self, text: str) -> int:
        ids = sorted(self.cluster.state.brokers)
        if not re.fullmatch(r"-?\d+", text) or int(text) not in ids:
            raise HttpError(404, f"unknown broker {text!r}; brokers are {ids}")
        return int(text)

    @staticmethod
    def _json(body: bytes, default: Any = None) -> Any:
        if not body.strip():
            if default is not None:
                return default
            raise HttpError(400, "a JSON body is required")
        try:
            return json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise HttpError(400, f"body is not JSON: {e}") from None


__all__ = ["ControlPlane"]
