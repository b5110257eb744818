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
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import h11

from emulator.cluster.console import ConsoleCache, console_snapshot
from emulator.cluster.election import PREFERRED, elect_leaders
from emulator.cluster.metrics import cluster_view, prometheus
from emulator.cluster.reassignment import alter_partition_reassignments
from emulator.faults import FaultError, FaultSchedule, ScheduleError, ScheduleRunner
from emulator.server.schedule import start_schedule

if TYPE_CHECKING:
    from emulator.runtime import Cluster

log = logging.getLogger("kafka_emulator.control")
MAX_BODY = 1 << 20
ROUTES = [
    ("GET", "/"), ("GET", "/cluster"), ("GET", "/topics/{name}"), ("GET", "/metrics"),
    ("POST", "/brokers/{id}/stop"), ("POST", "/brokers/{id}/start"),
    ("POST", "/brokers/{id}/controlled-shutdown"), ("GET", "/faults"), ("POST", "/faults"),
    ("DELETE", "/faults"), ("POST", "/faults/schedule"), ("GET", "/faults/schedule"),
    ("POST", "/reassignments"), ("DELETE", "/reassignments"), ("POST", "/elections/preferred"),
    ("GET", "/ui"), ("GET", "/ui/snapshot"), ("GET", "/events"),
]
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


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


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

    def __init__(self, cluster: Cluster, host: str, port: int, token: str | None = None,
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
        # and the event streams send only those (emulator.cluster.console).
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
        conn = h11.Connection(h11.SERVER)
        self.writers.add(writer)
        request: h11.Request | None = None
        body = bytearray()
        try:
            while True:
                try:
                    event = conn.next_event()
                except h11.RemoteProtocolError as e:
                    await self._send(conn, writer, 400, {"error": f"bad HTTP request: {e}"})
                    return
                if event is h11.NEED_DATA:
                    data = await reader.read(65536)
                    conn.receive_data(data)
                    continue
                if isinstance(event, h11.Request):
                    request, body = event, bytearray()
                elif isinstance(event, h11.Data):
                    body += event.data
                    if len(body) > MAX_BODY:
                        await self._send(conn, writer, 413,
                                         {"error": f"body over {MAX_BODY} bytes"})
                        return
                elif isinstance(event, h11.EndOfMessage) and request is not None:
                    status, payload = await self._handle(request, bytes(body))
                    if isinstance(payload, EventStream):
                        await self._stream(conn, writer, payload)
                        return
                    await self._send(conn, writer, status, payload)
                    if conn.our_state is h11.MUST_CLOSE or conn.their_state is h11.MUST_CLOSE:
                        return
                    conn.start_next_cycle()
                    request = None
                elif isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, h11.LocalProtocolError):
            return
        finally:
            self.writers.discard(writer)
            writer.transport.abort()

    async def _send(self, conn: h11.Connection, writer: asyncio.StreamWriter, status: int,
                    payload: Any) -> None:
        if isinstance(payload, Raw):
            data, ctype = payload.data, payload.content_type
        elif isinstance(payload, str):
            data, ctype = payload.encode(), "text/plain; version=0.0.4; charset=utf-8"
        else:
            data, ctype = (json.dumps(payload, indent=1) + "\n").encode(), "application/json"
        if conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        headers = [("Content-Type", ctype), ("Content-Length", str(len(data)))]
        if status == 401:
            headers.append(("WWW-Authenticate", 'Bearer realm="kafka-emulator"'))
        out = conn.send(h11.Response(status_code=status, headers=headers))
        out += conn.send(h11.Data(data=data))
        out += conn.send(h11.EndOfMessage())
        writer.write(out)
        await writer.drain()

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
        """The console's view of the cluster now (emulator.cluster.console, plus the
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
        query = parse_qs(target.split("?", 1)[1]) if "?" in target else {}
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

    # ---- routes ----------------------------------------------------------------------
    async def route(self, method: str, path: str, body: bytes,
                    query: dict[str, list[str]] | None = None) -> tuple[int, Any]:
        c = self.cluster
        parts = path.strip("/").split("/") if path != "/" else []
        if path == "/":
            self._method(method, "GET", path)
            return 200, {"routes": [f"{m} {p}" for m, p in ROUTES]}
        if path == "/cluster":
            self._method(method, "GET", path)
            return 200, {**cluster_view(c.state), **c.security_view()}
        if path == "/metrics":
            self._method(method, "GET", path)
            return 200, prometheus(c.state)
        if len(parts) == 2 and parts[0] == "topics":
            self._method(method, "GET", path)
            view = cluster_view(c.state)["topics"].get(parts[1])
            if view is None:
                raise HttpError(404, f"unknown topic {parts[1]!r}")
            return 200, {"name": parts[1], **view}
        if len(parts) == 3 and parts[0] == "brokers":
            self._method(method, "POST", path)
            bid = self._broker_id(parts[1])
            action = parts[2]
            if action == "stop":
                data = self._json(body, default={})
                data = data if isinstance(data, dict) else {}
                controlled = data.get("controlled", False)
                if not isinstance(controlled, bool):
                    raise HttpError(400, "controlled must be true or false")
                fence = data.get("fence_after_ms")
                if fence is not None and (isinstance(fence, bool) or not isinstance(fence, int)
                                          or fence < 0):
                    raise HttpError(400, "fence_after_ms must be a non-negative integer")
                await c.stop_broker_async(bid, controlled=controlled, fence_after_ms=fence)
            elif action == "start":
                await c.start_broker_async(bid)
            elif action == "controlled-shutdown":
                await c.stop_broker_async(bid, controlled=True)
            else:
                raise HttpError(404, f"unknown broker action {action!r}; "
                                     "use stop, start or controlled-shutdown")
            b = c.state.brokers[bid]
            return 200, {"broker": bid, "alive": b.alive, "crashed": b.crashed,
                         "controller": c.state.controller_id}
        if path == "/faults":
            if method == "GET":
                return 200, c.faults.model.describe()
            if method == "DELETE":
                await c.fault_async({"op": "clear"})
                return 200, c.faults.model.describe()
            self._method(method, "POST", path)
            data = self._json(body)
            ops = data if isinstance(data, list) else [data]
            valid = [c.faults.validate(op) for op in ops]  # all or nothing
            applied = [await c.fault_async(op) for op in valid]
            return 200, {"applied": applied, "faults": c.faults.model.describe()}
        if path == "/faults/schedule":
            if method == "GET":
                if self.schedule is None:
                    raise HttpError(404, "no fault schedule has been run")
                return 200, self.schedule.status()
            self._method(method, "POST", path)
            if self.schedule is not None and not self.schedule.done:
                raise HttpError(409, "a fault schedule is still running")
            schedule = FaultSchedule.parse(body, c.state.brokers)
            self.schedule, self.schedule_task = start_schedule(c, schedule)
            return 202, {"seed": schedule.seed, "steps": len(schedule.steps)}
        if path in UI_FILES:
            self._method(method, "GET", path)
            name, ctype = UI_FILES[path]
            return 200, Raw(resources.files("emulator.server.ui").joinpath(name).read_bytes(),
                            ctype)
        if path == "/ui/snapshot":
            self._method(method, "GET", path)
            return 200, self.snapshot()
        if path == "/events":
            self._method(method, "GET", path)
            raw = (query or {}).get("interval_ms", ["1000"])[-1]
            if not raw.isdigit():
                raise HttpError(400, "interval_ms must be a whole number of milliseconds")
            return 200, EventStream(max(int(raw), MIN_EVENT_INTERVAL_MS) / 1000)
        if path == "/reassignments":
            if method not in ("POST", "DELETE"):
                raise HttpError(405, f"{method} is not allowed on {path}; use POST or DELETE")
            data = self._json(body)
            if not isinstance(data, dict):
                raise HttpError(400, "a JSON object is required")
            topic, index = data.get("topic"), data.get("partition")
            if not isinstance(topic, str) or isinstance(index, bool) or not isinstance(index, int):
                raise HttpError(400, "topic (a string) and partition (an integer) are required")
            target = None if method == "DELETE" else data.get("replicas")
            if target is not None and (not isinstance(target, list) or not all(
                    isinstance(b, int) and not isinstance(b, bool) for b in target)):
                raise HttpError(400, "replicas must be a list of broker ids (null cancels)")
            result = alter_partition_reassignments(c.state, [(topic, [(index, target)])])
            r = result[0].partitions[0]
            c.state.changed()
            if r.error_code:
                raise HttpError(400, f"error {r.error_code}: {r.error_message}")
            return 200, {"topic": topic, "partition": index,
                         **cluster_view_partition(c, topic, index)}
        if path == "/elections/preferred":
            self._method(method, "POST", path)
            data = self._json(body, default={})
            if not isinstance(data, dict):
                raise HttpError(400, "a JSON object is required")
            wanted = None
            if data.get("topic") is not None:
                topic = data["topic"]
                t = c.state.topics.get(topic) if isinstance(topic, str) else None
                if t is None:
                    raise HttpError(404, f"unknown topic {topic!r}")
                parts = data.get("partitions", list(range(len(t.partitions))))
                if not isinstance(parts, list) or not all(
                        isinstance(i, int) and not isinstance(i, bool) for i in parts):
                    raise HttpError(400, "partitions must be a list of integers")
                wanted = [(topic, parts)]
            out = elect_leaders(c.state, PREFERRED, wanted)
            c.state.changed()
            return 200, {"results": [{"topic": t, "partition": i, "error_code": code,
                                      "error_message": msg}
                                     for t, rs in out for i, code, msg in rs]}
        known = sorted({p for _, p in ROUTES})
        raise HttpError(404, f"no route {method} {path}; routes are {', '.join(known)}")

    @staticmethod
    def _method(method: str, allowed: str, path: str) -> None:
        if method != allowed:
            raise HttpError(405, f"{method} is not allowed on {path}; use {allowed}")

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


def cluster_view_partition(c: Cluster, topic: str, index: int) -> dict:
    p = c.state.topics[topic].partitions[index]
    return {"replicas": list(p.replicas), "adding": list(p.adding_replicas),
            "removing": list(p.removing_replicas), "isr": list(p.isr), "leader": p.leader}


__all__ = ["ControlPlane"]
