"""DescribeProducers (key 61), v0: the active producers of partitions, from their leader.

As Kafka's ReplicaManager.activeProducerState answers kafka-transactions.sh
describe-producers: per partition UNKNOWN_TOPIC_OR_PARTITION for an unknown one,
NOT_LEADER_OR_FOLLOWER off the leader, else every producer id the partition's producer
state holds with its epoch, last sequence, the max timestamp of its last batch and the
first offset of its open transaction (-1 when none). Differs from Kafka: the
coordinator epoch of the last transaction marker is not kept (-1).
"""

from __future__ import annotations

from emulator.cluster.partition import KafkaError
from emulator.handlers.authz import RT, Each, Op
from emulator.handlers.base import RequestContext
from wire.errors import MESSAGES
from wire.errors import ErrorCode as E

API_KEY = 61
VERSIONS = (0, 0)
AUTHORIZE = (Each(RT.TOPIC, Op.READ, "topics"),)


def _partition(ctx: RequestContext, topic: str, index: int) -> dict:
    out = {"partition_index": index, "error_code": E.NONE, "active_producers": []}
    t = ctx.cluster.topics.get(topic)
    if t is None or not 0 <= index < len(t.partitions):
        code = E.UNKNOWN_TOPIC_OR_PARTITION
    else:
        p = t.partitions[index]
        try:
            p.check_leader(ctx.broker_id)
        except KafkaError as e:
            code = e.code
        else:
            out["active_producers"] = [
                {"producer_id": pid, "producer_epoch": entry.epoch,
                 "last_sequence": entry.last_seq, "last_timestamp": entry.last_timestamp,
                 "coordinator_epoch": -1, "current_txn_start_offset": entry.txn_first_offset}
                for pid, entry in sorted(p.producers.items())]
            return out
    out.update(error_code=code, error_message=MESSAGES.get(E(code)))
    return out


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    return {"throttle_time_ms": 0, "topics": [
        {"name": t["name"], "partitions": [_partition(ctx, t["name"], i)
                                           for i in t["partition_indexes"]]}
        for t in req["topics"]]}
