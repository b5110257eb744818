"""DeleteTopics (key 20), v1-6: by name, and from v6 by name or topic ID.

Deleting removes every replica's log at once; clients see
UNKNOWN_TOPIC_OR_PARTITION afterwards. Internal topics cannot be deleted
(TOPIC_DELETION_DISABLED would be delete.topic.enable=false). A large topic
disappears at once and its partitions leave the controller in steps between other
clients' requests (emulator/cluster/steps.py); its name is free when the answer comes.
"""

from __future__ import annotations

from typing import Any, cast

from emulator.cluster.steps import SLICE_FROM_PARTITIONS, Steps
from emulator.handlers.authz import RT, Each, Op
from emulator.handlers.base import Delayed, RequestContext, Sliced, sliced_if
from emulator.handlers.util import MutationQuota, after_pending, error_of
from wire.errors import MESSAGES, KafkaError
from wire.errors import ErrorCode as E

API_KEY = 20
VERSIONS = (1, 6)
AUTHORIZE = (Each(RT.TOPIC, Op.DELETE, "topics"), Each(RT.TOPIC, Op.DELETE, "topic_names"),)
ZERO_ID = bytes(16)


def handle(ctx: RequestContext, req: dict, version: int) -> dict | Sliced | Delayed:
    cluster = ctx.cluster
    if version >= 6:
        items = [(t["name"], t["topic_id"]) for t in req["topics"]]
    else:
        items = [(n, ZERO_ID) for n in req["topic_names"]]

    def names() -> list[str | None]:
        out = []
        for name, tid in items:
            t = cluster.topics_by_id.get(tid) if name is None and tid != ZERO_ID else None
            out.append(t.name if t is not None else name)
        return out

    def run() -> dict | Sliced:
        size = 0
        for n in names():
            t = cluster.topics.get(n) if n else None
            size += len(t.partitions) if t is not None else 0
        return sliced_if(_delete(ctx, items), size >= SLICE_FROM_PARTITIONS)

    return after_pending(ctx, names(), run, req["timeout_ms"])


def _delete(ctx: RequestContext, items: list[tuple[str | None, bytes]]) -> Steps[dict]:
    """Each topic unpublished at once, then forgotten by the controller in steps. Its
    partitions count against the client's controller_mutation_rate (strict from v5)
    under --fidelity kafka; a refused topic answers THROTTLING_QUOTA_EXCEEDED with no
    message, as Kafka 4.4 does."""
    cluster = ctx.cluster
    quota = MutationQuota(ctx, strict=ctx.api_version >= 5)
    out = []
    for name, tid in items:
        r: dict[str, Any] = {"name": name, "topic_id": tid, "error_code": E.NONE,
                             "error_message": None}
        try:
            if cluster.config.get("delete.topic.enable", "true") != "true":
                r["error_code"] = E.TOPIC_DELETION_DISABLED
            elif name is None and tid != ZERO_ID:
                t = cluster.topics_by_id.get(tid)
                if t is None:
                    r["error_code"] = E.UNKNOWN_TOPIC_ID
                else:
                    r["name"] = t.name
                    quota.take(len(t.partitions))
                    yield from cluster.delete_topic_steps(t.name)
            else:
                # No name and no id: get_topic answers UNKNOWN_TOPIC_OR_PARTITION.
                t = cluster.get_topic(cast(str, name))
                r["topic_id"] = t.id
                quota.take(len(t.partitions))
                yield from cluster.delete_topic_steps(t.name)
        except KafkaError as e:  # a business failure; anything else is our bug
            # Kafka's ApiError falls back on the code's own message (not for a throttle)
            code, message = error_of(e)
            r["error_code"], r["error_message"] = code, message or (
                None if code == E.THROTTLING_QUOTA_EXCEEDED else MESSAGES.get(E(code)))
        out.append(r)
    return {"throttle_time_ms": quota.throttle_ms, "responses": out}
