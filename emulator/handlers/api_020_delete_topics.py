"""DeleteTopics (key 20), v1-6: by name, and from v6 by name or topic ID.

Deleting removes every replica's log at once; clients see
UNKNOWN_TOPIC_OR_PARTITION afterwards. Internal topics cannot be deleted
(TOPIC_DELETION_DISABLED would be delete.topic.enable=false).
"""

from __future__ import annotations

from emulator.cluster.partition import KafkaError
from emulator.handlers.authz import RT, Each, Op
from emulator.handlers.base import RequestContext
from emulator.handlers.util import error_of
from wire.errors import ErrorCode as E

API_KEY = 20
VERSIONS = (1, 6)
AUTHORIZE = (Each(RT.TOPIC, Op.DELETE, "topics"), Each(RT.TOPIC, Op.DELETE, "topic_names"),)
ZERO_ID = bytes(16)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    cluster = ctx.cluster
    if version >= 6:
        items = [(t["name"], t["topic_id"]) for t in req["topics"]]
    else:
        items = [(n, ZERO_ID) for n in req["topic_names"]]
    out = []
    for name, tid in items:
        r = {"name": name, "topic_id": tid, "error_code": E.NONE, "error_message": None}
        try:
            if cluster.config.get("delete.topic.enable", "true") != "true":
                r["error_code"] = E.TOPIC_DELETION_DISABLED
            elif name is None and tid != ZERO_ID:
                t = cluster.topics_by_id.get(tid)
                if t is None:
                    r["error_code"] = E.UNKNOWN_TOPIC_ID
                else:
                    r["name"] = t.name
                    cluster.delete_topic(t.name)
            else:
                t = cluster.get_topic(name)
                r["topic_id"] = t.id
                cluster.delete_topic(name)
        except KafkaError as e:  # a business failure; anything else is our bug
            r["error_code"], r["error_message"] = error_of(e)
        out.append(r)
    return {"throttle_time_ms": 0, "responses": out}
