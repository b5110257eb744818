"""DescribeProducers (key 61), v0: the active producers of partitions, from any replica.

As Kafka's ReplicaManager.activeProducerState answers kafka-transactions.sh
describe-producers: per partition UNKNOWN_TOPIC_OR_PARTITION for an unknown one,
NOT_LEADER_OR_FOLLOWER from a broker that hosts no replica of it, else every producer id
the partition's producer state holds with its epoch, last sequence, the max timestamp of
its last batch and the first offset of its open transaction (-1 when none). A follower
answers too, as Kafka's Partition.activeProducerState reads the local log of leader and
follower alike (measured on Kafka 4.4: a follower answers NONE); under --fidelity kafka
a follower behind the leader answers from its own batches, in fast from the leader's
state (docs/fidelity.md, describe-producers-follower).
"""

from __future__ import annotations

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
        if ctx.broker_id not in p.replicas:
            code = E.NOT_LEADER_OR_FOLLOWER
        else:
            # Under Kafka's timing a follower answers from its own log (behind the
            # leader: an older state); fast answers every replica from the shared one.
            producers = p.replica_producers(ctx.broker_id) \
                if ctx.cluster.fidelity.kafka_timing else p.producers
            out["active_producers"] = [
                {"producer_id": pid, "producer_epoch": entry.epoch,
                 "last_sequence": entry.last_seq, "last_timestamp": entry.last_timestamp,
                 "coordinator_epoch": entry.coordinator_epoch,
                 "current_txn_start_offset": entry.txn_first_offset}
                for pid, entry in sorted(producers.items())]
            return out
    # an unknown partition is answered without a message (measured on Kafka 4.4)
    out.update(error_code=code, error_message=None if code == E.UNKNOWN_TOPIC_OR_PARTITION
               else MESSAGES.get(E(code)))
    return out


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    return {"throttle_time_ms": 0, "topics": [
        {"name": t["name"], "partitions": [_partition(ctx, t["name"], i)
                                           for i in t["partition_indexes"]]}
        for t in req["topics"]]}
