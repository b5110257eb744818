"""Dispatch: one request frame in, its response frame out.

The header and body are read with wire.connection.ServerConnection; the API key's
handler (emulator/handlers) answers, possibly after waiting (a ``Delayed``, parked in
emulator/server/purgatory.py) or in slices (a ``Sliced``); the server-side fault
points (injected errors, latency, dropped responses) and the request_percentage quota
apply here. Anything the connection must not survive raises CloseConnection.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from emulator.cluster.delayed import Delayed
from emulator.cluster.quotas import REQUEST_QUOTA_EXEMPT
from emulator.cluster.state import ClusterState
from emulator.handlers import HANDLERS
from emulator.handlers.api_018_api_versions import unsupported as api_versions_unsupported
from emulator.handlers.base import NO_RESPONSE, MalformedRequest, RequestContext, Sliced
from emulator.handlers.errors import build_error_response, merge, safe_error_response
from emulator.security.session import Session
from emulator.server.listeners import BrokerListener
from emulator.server.offload import BatchChecker
from emulator.server.purgatory import Purgatory
from emulator.services import Services
from wire.codec import DecodeError
from wire.connection import Frame, ServerConnection, encode_response_frame
from wire.errors import ErrorCode as E
from wire.frames import RequestHeader
from wire.messages import REQUESTS

if TYPE_CHECKING:  # imported only under --fidelity adversarial (emulator.runtime)
    from emulator.faults.adversary import Adversary
    from emulator.faults.model import Injection  # with the fault model, on its first use
    from emulator.server.watch import Visit, Watch

log = logging.getLogger("kafka_emulator")
read_header = ServerConnection.read_header
read_body = ServerConnection.read_body
encode_response = ServerConnection.encode_response


class CloseConnection(Exception):
    """Raised to drop a client connection after logging why."""


class ResponseDropped(CloseConnection):
    """The request was served and its answer is dropped (a fault): the connection closes."""


@dataclass
class FaultHooks:
    """Server-side fault points, filled by the fault injector (emulator.faults)."""

    # (broker_id, api_key, request, client_id, version) -> the error to answer (for the
    # whole request or for the items naming a topic/partition), or None
    inject_error: Callable[[int, int, dict, str | None, int], Injection | None] | None = None
    # (broker_id, api_key) -> extra seconds before answering
    latency: Callable[[int, int], float] | None = None
    # (broker_id, api_key, client_id, request, version) -> True to apply the request but
    # drop its response
    drop_response: Callable[[int, int, str | None, dict, int], bool] | None = None
    # (broker_id, client host) -> False to refuse/cut client connections
    client_allowed: Callable[[int, str], bool] | None = None
    # --fidelity adversarial's seeded faults (emulator/faults/adversary.py); None in the
    # other modes, where it costs one attribute test per request
    adversary: Adversary | None = None
    # The request journal and barriers (emulator/server/watch.py); None until the
    # runtime wires them, then asked ``active`` per request
    watch: Watch | None = None


@dataclass(eq=False)
class Dispatcher:
    """Serves request frames for an EmulatorServer (its ``dispatcher``)."""

    state: ClusterState
    advertised: dict[int, tuple[int, int]]
    services: Services
    faults: FaultHooks
    batches: BatchChecker
    purgatory: Purgatory

    async def process(self, bl: BrokerListener, conn_id: int, host: str,
                       frame: bytes, session: Session | None = None) -> Frame | None:
        """The response frame (a large one as a list of parts: encode_response_frame),
        or None when the request has no answer."""
        try:
            hdr = read_header(frame)
        except DecodeError as e:
            raise CloseConnection(f"malformed request header ({e})") from e
        key, version = hdr.api_key, hdr.api_version
        if session is not None:
            why = session.gate(key, self.state.now())
            if why is not None:
                raise CloseConnection(why)
        info = HANDLERS.get(key)
        adv = self.advertised.get(key)
        if info is None or adv is None:
            raise CloseConnection(f"unknown or unadvertised API key {key} (v{version})")
        lo, hi = info.accepted
        if not (max(lo, adv[0]) <= version <= min(hi, adv[1])):
            if key == 18:  # ApiVersions: answer with error 35 and a v0 body
                body = api_versions_unsupported(self.context(bl, hdr, conn_id, host, session))
                return encode_response(key, 0, hdr.correlation_id, body)
            raise CloseConnection(
                f"unsupported version {version} of API key {key} "
                f"(serving {max(lo, adv[0])}-{min(hi, adv[1])})")
        try:
            req = read_body(hdr, frame)
        except DecodeError as e:
            raise CloseConnection(f"malformed {REQUESTS[key].msg.name} v{version}: {e}") from e
        ctx = self.context(bl, hdr, conn_id, host, session)
        watch = self.faults.watch
        if watch is None or not watch.active:
            return await self.serve(bl, hdr, req, ctx, info.module, session, None, None)
        visit = await watch.arrive(bl.broker.id, key, version, hdr.client_id, req)
        try:
            return await self.serve(bl, hdr, req, ctx, info.module, session, watch, visit)
        except CloseConnection as e:
            watch.answered(visit, hdr.correlation_id, None,
                           "dropped" if isinstance(e, ResponseDropped) else "closed")
            raise

    async def serve(self, bl: BrokerListener, hdr: RequestHeader, req: dict, ctx: RequestContext,
                    module: Any, session: Session | None, watch: Watch | None,
                    visit: Visit | None) -> Frame | None:
        """Serve a decoded request: the fault points, the handler, the encoding; a
        watched request (``visit``) is told to the journal once answered."""
        key, version = hdr.api_key, hdr.api_version
        f = self.faults
        if f.latency is not None:
            delay = f.latency(bl.broker.id, key)
            if delay > 0:
                await asyncio.sleep(delay)
        name = REQUESTS[key].msg.name
        injected = (f.inject_error(bl.broker.id, key, req, hdr.client_id, version)
                    if f.inject_error else None)
        plan = None
        snap = None
        adversary = f.adversary if injected is None else None
        if adversary is not None:
            plan = adversary.before(bl.broker.id, key, version, hdr.client_id, req)
            if plan is not None and plan.hold_ms > 0:
                await asyncio.sleep(plan.hold_ms / 1000)  # the request held in the network
            snap = adversary.snapshot(key, req, bl.broker.id)  # the state it arrives in
        if injected is None:
            result = await self.handle(module, ctx, req, version)
        else:
            result = await self.inject(module, ctx, req, version, injected)
            if key == 0 and req.get("acks") == 0:
                # Kafka answers an acks=0 produce that failed by closing the connection.
                raise CloseConnection(f"fault: {name} with acks=0 answered error "
                                      f"{injected.error}: closing, as Kafka does")
        if result is NO_RESPONSE:
            if watch is not None and visit is not None:
                watch.answered(visit, hdr.correlation_id, None, "no_response", injected)
            return None
        if plan is not None and plan.post is not None:
            result = plan.post(result)
        if adversary is not None:
            adversary.check(bl.broker.id, key, version, req, result, snap)
        if plan is not None:
            if plan.drop:
                raise ResponseDropped(f"adversary: dropped the response to {name} "
                                      f"(seed {f.adversary.seed if f.adversary else 0})")
        if f.drop_response is not None and f.drop_response(bl.broker.id, key, hdr.client_id,
                                                           req, version):
            raise ResponseDropped(f"fault: dropped the response to {name}")
        if watch is not None and visit is not None:
            watch.answered(visit, hdr.correlation_id, result, "answered", injected)
        if session is not None and self.state.fidelity.kafka_timing \
                and isinstance(result, dict):
            # a throttled client's connection is muted for its throttle time, as
            # Kafka's is (KIP-219; docs/fidelity.md, controller-mutation-quota)
            session.mute_ms = int(result.get("throttle_time_ms") or 0)
        try:
            if ctx.large:
                # The answer to a large operation (DescribeConfigs of thousands of
                # resources: ~1 s to encode) is encoded in a thread: the codec is Python,
                # so the loop gets the GIL back every switch interval (5 ms) meanwhile.
                return await asyncio.get_running_loop().run_in_executor(
                    None, encode_response, key, version, hdr.correlation_id, result)
            return encode_response_frame(key, version, hdr.correlation_id, result)
        except Exception:  # noqa: BLE001 - our bug: the handler built a bad response
            log.exception("broker %d: encoding the %s v%d response failed", bl.broker.id,
                          name, version)
            try:
                return encode_response(
                    key, version, hdr.correlation_id,
                    safe_error_response(key, version, req, E.UNKNOWN_SERVER_ERROR))
            except Exception as e:  # noqa: BLE001 - never let the error path fail
                raise CloseConnection(f"could not encode even an error response to {name} "
                                      f"v{version}: {e}") from e

    async def handle(self, module: Any, ctx: RequestContext, req: dict, version: int) -> Any:
        """The handler's answer; our bug (any exception) answers UNKNOWN_SERVER_ERROR
        where the API carries errors, and is logged (tests fail on it: emulator.testing)."""
        try:
            if ctx.api_key == 0 and self.batches.wanted(req):
                # large compressed batches are checked off the loop first
                await self.batches.precheck(ctx, req, version)
            t0 = time.perf_counter_ns()
            result = module.handle(ctx, req, version)
            spent = time.perf_counter_ns() - t0
            while True:  # a Delayed may answer with a Sliced, and a Sliced with a Delayed
                if isinstance(result, Sliced):
                    result, dt = await self.purgatory.run_sliced(result)
                    spent += dt
                    ctx.large = True
                elif isinstance(result, Delayed):
                    result = await self.purgatory.wait_delayed(result)
                else:
                    break
            return self.request_quota(ctx, result, spent)
        except MalformedRequest as e:  # Kafka's parsing refuses it: no answer
            raise CloseConnection(f"malformed {REQUESTS[ctx.api_key].msg.name} v{version}: "
                                  f"{e}") from e
        except Exception as e:  # noqa: BLE001 - our bug: answer an error, keep serving
            log.exception("broker %d: %s v%d failed", ctx.broker_id,
                          REQUESTS[ctx.api_key].msg.name, version)
            return safe_error_response(ctx.api_key, version, req, E.UNKNOWN_SERVER_ERROR,
                                       f"{type(e).__name__}: {e}")

    def request_quota(self, ctx: RequestContext, result: Any, spent_ns: int) -> Any:
        """request_percentage (KIP-124): the handler's time counts against the client's
        quota; the response carries the larger of its own and the request throttle."""
        quotas = self.services.quotas
        if (quotas is None or not isinstance(result, dict) or ctx.api_key in REQUEST_QUOTA_EXEMPT
                or not quotas.enforces("request_percentage")):
            return result
        user = ctx.principal.split(":", 1)[-1]
        throttle = quotas.record_request_time(user, ctx.client_id or "", spent_ns,
                                              self.state.now())
        if throttle > (result.get("throttle_time_ms") or 0):
            result = dict(result, throttle_time_ms=throttle)
        return result

    async def inject(self, module: Any, ctx: RequestContext, req: dict, version: int,
                      injected: Any) -> Any:
        """Answer an injected error: for the whole request, or (a topic/partition fault)
        for the items it names while the handler serves the others."""
        key, code = ctx.api_key, injected.error
        if injected.topic is None:
            return safe_error_response(key, version, req, code)
        from emulator.faults.model import split_request  # loaded: ``injected`` came from it

        hit, rest, more = split_request(self.state, req, injected.topic, injected.partition)
        errors, per_item = build_error_response(key, version, hit or req, code)
        if not per_item:  # the API has no per-item place: the request as a whole fails
            return safe_error_response(key, version, req, code)
        if not more:
            return errors
        result = await self.handle(module, ctx, rest, version)
        return result if result is NO_RESPONSE else merge(result, errors)

    def context(self, bl: BrokerListener, hdr: Any, conn_id: int, host: str,
             session: Session | None = None) -> RequestContext:
        return RequestContext(self.state, bl.broker.id, hdr.api_key, hdr.api_version,
                              hdr.correlation_id, hdr.client_id, conn_id, host, self.services,
                              session=session, listener=bl.name if not bl.primary else None)
