"""StreamsGroupTopologyDescriptionUpdate (key 93), v0 (KIP-1331, new in Kafka 4.4).

A member pushes its topology description when the heartbeat says
TopologyDescriptionRequired, which only a broker with a topology description plugin
(group.streams.topology.description.plugin.class) does. The emulator has no plugin,
and answers as a Kafka 4.4 broker without one: READ on the group, then
UNSUPPORTED_VERSION "The broker has no streams group topology description plugin
configured.".
"""

from __future__ import annotations

from emulator.handlers.authz import RT, One, Op
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 93
VERSIONS = (0, 0)
AUTHORIZE = (One(RT.GROUP, Op.READ, "group_id"),)


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    return {"throttle_time_ms": 0, "error_code": E.UNSUPPORTED_VERSION,
            "error_message": "The broker has no streams group topology description plugin "
                             "configured."}
