"""FindCoordinator (key 10), v0-6.

Group keys (key type 0) hash onto a partition of __consumer_offsets and transactional
ids (key type 1) onto __transaction_state, as Kafka does; the partition's leader is the
coordinator. The internal topic is created on first use; while it cannot be (fewer live
brokers than its replication factor) or the partition has no leader, the answer is
COORDINATOR_NOT_AVAILABLE. v4+ batches keys (``coordinator_keys``). Share keys (type 2,
"group:topicId:partition") hash onto __share_group_state (KIP-932's share coordinator).
"""

from __future__ import annotations

from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.share.coordinator import SharePartitionManager
from emulator.coordinators.transactions.coordinator import TransactionCoordinator
from emulator.handlers.authz import RT, Op, allowed
from emulator.handlers.base import RequestContext
from emulator.handlers.util import node_endpoint
from wire.errors import MESSAGES, KafkaError
from wire.errors import ErrorCode as E

API_KEY = 10
VERSIONS = (0, 6)
AUTHORIZE = ()  # DESCRIBE on the group / transactional id is checked per key in the handler


def _lookup(ctx: RequestContext, key: str, key_type: int, version: int) -> dict:
    # v4+ answers an empty message where all went well (measured on Kafka 4.4)
    out = {"key": key, "node_id": -1, "host": "", "port": -1, "error_code": E.NONE,
           "error_message": "" if version >= 4 else None}
    if key_type == 2 and version < 6:  # share keys came with v6 (KIP-932)
        out.update(error_code=E.INVALID_REQUEST, error_message="")
        return out
    coordinator: GroupCoordinator | SharePartitionManager | TransactionCoordinator
    try:
        if key_type == 0:
            coordinator = ctx.services.groups
        elif key_type == 2:  # the share coordinator of a "group:topicId:partition" key
            coordinator = ctx.services.share
        elif key_type == 1:
            # An empty transactional id hashes like any other: Kafka 4.4 answers NONE.
            coordinator = ctx.services.transactions
        else:
            raise KafkaError(E.INVALID_REQUEST, f"Unsupported key type {key_type}")
        # Kafka: DESCRIBE on the group or transactional id the caller looks up.
        if key_type == 0 and not allowed(ctx, Op.DESCRIBE, RT.GROUP, key):
            raise KafkaError(E.GROUP_AUTHORIZATION_FAILED)
        if key_type == 1 and not allowed(ctx, Op.DESCRIBE, RT.TRANSACTIONAL_ID, key):
            raise KafkaError(E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        node = node_endpoint(ctx.cluster, coordinator.coordinator_for(key), ctx.listener)
        if node is None:
            raise KafkaError(E.COORDINATOR_NOT_AVAILABLE)
        out.update(node_id=node["node_id"], host=node["host"], port=node["port"])
    except KafkaError as e:
        out["error_code"] = e.code
        out["error_message"] = e.message or MESSAGES.get(E(e.code), E(e.code).name)
    return out


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    key_type = req["key_type"] if version >= 1 else 0
    if version >= 4:
        return {"throttle_time_ms": 0,
                "coordinators": [_lookup(ctx, k, key_type, version)
                                 for k in req["coordinator_keys"]]}
    r = _lookup(ctx, req["key"], key_type, version)
    del r["key"]
    r["throttle_time_ms"] = 0
    if r["error_code"] == E.NONE:
        r["error_message"] = "NONE"  # v1-3: the code's name (measured on Kafka 4.4)
    return r
