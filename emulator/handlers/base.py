"""What every handler gets and may return.

A handler is a plain function ``handle(ctx, request, version)`` that returns a
response dict, or a ``Delayed`` when the answer must wait for the cluster (a
long-polling fetch, an acks=all produce). The server turns ``Delayed`` into an
awaitable by re-running ``check`` whenever the cluster changes, until it answers
or ``deadline_ms`` passes; handlers themselves never await.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from emulator.cluster.state import ClusterState


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


@dataclass
class Delayed:
    """A response that waits on the cluster: Kafka's purgatory, sans I/O."""

    check: Callable[[], dict | None]
    deadline_ms: int
    expire: Callable[[], dict]


NO_RESPONSE = object()  # acks=0 produce: the broker sends nothing back
