"""What every handler gets and may return.

A handler is a plain function ``handle(ctx, request, version)`` that returns a
response dict, or a ``Delayed`` when the answer must wait for the cluster (a
long-polling fetch, an acks=all produce). The server turns ``Delayed`` into an
awaitable by re-running ``check`` whenever the cluster changes (only the partitions
in ``keys`` when given), until it answers or ``deadline_ms`` passes; handlers
themselves never await.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from emulator.cluster.metadata import ChangeKey
from emulator.cluster.state import ClusterState
from emulator.security.acl import ANONYMOUS
from emulator.security.session import Session


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
    services: dict[str, Any] = field(default_factory=dict)  # group/txn coordinators
    # The connection's authentication state (emulator.security.session.Session); None
    # for in-process callers. Its ``principal`` is what the authorizer checks.
    session: Session | None = None
    # The listener the request came in on when it is not the primary one: metadata
    # answers with that listener's ports, as Kafka answers per listener.
    listener: str | None = None

    @property
    def principal(self) -> str:
        return self.session.principal if self.session is not None else ANONYMOUS


@dataclass
class Delayed:
    """A response that waits on the cluster: Kafka's purgatory, sans I/O."""

    check: Callable[[], dict | None]
    deadline_ms: int
    expire: Callable[[], dict]
    # The partitions (topic, index) or groups (emulator.cluster.groups.group_key) whose
    # changes can complete it: the server re-runs ``check`` only when one of them
    # changes (or the whole cluster does). None: on every change.
    keys: frozenset[ChangeKey] | None = None


NO_RESPONSE = object()  # acks=0 produce: the broker sends nothing back
