"""What every handler gets and may return.

A handler is a plain function ``handle(ctx, request, version)`` that returns a
response dict, or a ``Delayed`` when the answer must wait for the cluster (a
long-polling fetch, an acks=all produce). The domain builds the ``Delayed``
(emulator/cluster/delayed.py: its condition and deadline are the domain's rules); the
handler maps its answer to a response (``Delayed.map``), and the server parks it
(emulator/server/purgatory.py); handlers themselves never wait, nor build a wait. A
request with a lot of legal work (CreateTopics with 10,000 partitions) returns
``Sliced``: a generator the server advances a time slice per event loop turn, serving
other clients between slices (emulator/cluster/steps.py).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Literal

from emulator.cluster.delayed import Delayed
from emulator.cluster.state import ClusterState
from emulator.security.acl import ANONYMOUS
from emulator.security.session import Session
from emulator.services import Services

__all__ = ["NO_RESPONSE", "Coordinator", "Delayed", "MalformedRequest", "RequestContext",
           "Sliced", "advance_clocks", "sliced_if", "then"]


@dataclass
class RequestContext:
    cluster: ClusterState
    broker_id: int
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    connection_id: int = 0
    client_host: str = ""
    services: Services = field(default_factory=Services)  # the coordinators and others
    # The connection's authentication state (emulator.security.session.Session); None
    # for in-process callers. Its ``principal`` is what the authorizer checks.
    session: Session | None = None
    # The listener the request came in on when it is not the primary one: metadata
    # answers with that listener's ports, as Kafka answers per listener.
    listener: str | None = None
    # Produce: what the server already found out about batches, by (topic, partition)
    # (emulator.log.validator.Checked: inflated records, or the validation's outcome
    # computed off the event loop).
    checked: dict[tuple[str, int], Any] | None = None
    # Set by the server when the handler's answer came from a Sliced: a large response,
    # encoded off the event loop.
    large: bool = False

    @property
    def principal(self) -> str:
        return self.session.principal if self.session is not None else ANONYMOUS


class MalformedRequest(Exception):
    """A request Kafka refuses while parsing it (its request class's own checks throw,
    e.g. an ACL code 0, UNKNOWN): the broker closes the connection without an answer,
    and so does the server when a handler raises this."""


# The coordinators a handler module names in ``COORDINATORS``: those whose state its
# requests read or change, so whose timers are brought up to the request's time first.
Coordinator = Literal["groups", "share", "transactions"]


def advance_clocks(services: Services, coordinators: tuple[Coordinator, ...]) -> None:
    """Fire the due timers of ``coordinators`` (a session expired, a rebalance timeout,
    a lock run out, a transaction timed out) before a request asks them anything, so it
    meets them as of its own time, as Kafka's coordinators, whose timers fire on time,
    would answer; the periodic tick (emulator/server/purgatory.py) may be up to its
    interval late. The registry calls this before each such handler (one place:
    emulator/handlers/__init__.py ``_install``); handlers tick nothing themselves."""
    for name in coordinators:
        if name == "groups":
            if services.groups is not None:
                services.groups.tick()
        elif name == "share":
            if services.share is not None:
                services.share.tick()
        elif services.transactions is not None:
            services.transactions.tick()


NO_RESPONSE = object()  # acks=0 produce: the broker sends nothing back


@dataclass
class Sliced:
    """A response that takes a lot of work: ``steps`` yields between bounded pieces of
    it and returns the response (a dict, or a ``Delayed``). The server runs it a time
    slice per loop turn, so other clients are served meanwhile."""

    steps: Generator[None, None, Any]


def sliced_if(steps: Generator[None, None, Any], large: bool) -> Any:
    """``Sliced(steps)`` for a large operation; a small one runs at once (no extra
    loop turn)."""
    if large:
        return Sliced(steps)
    try:
        while True:
            next(steps)
    except StopIteration as done:
        return done.value


def then(result: Any, fn: Callable[[dict], dict]) -> Any:
    """``fn`` applied to the response ``result`` will be, whatever its kind: a dict now,
    a ``Delayed`` answer, the end of a ``Sliced`` (the authorizer merges its refusals
    in this way)."""
    if isinstance(result, Delayed):
        return result.map(lambda r: then(r, fn))
    if isinstance(result, Sliced):
        return Sliced(_then_steps(result.steps, fn))
    return fn(result)


def _then_steps(steps: Generator[None, None, Any], fn: Callable[[dict], dict]
                ) -> Generator[None, None, Any]:
    return then((yield from steps), fn)
