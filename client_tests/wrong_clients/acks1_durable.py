"""A producer with ``acks=1`` that treats a delivery report as "durable".

An outbox relay: it reads rows from the service's outbox table, produces each as a
record, and deletes the row once the delivery report says the record was written.
``acks=1`` was chosen for latency ("the leader has it"). But the leader answers an
acks=1 Produce as soon as it has appended the batch to its own log, before any
follower has fetched it. When leadership moves before the followers caught up (a
preferred-leader election, a controlled shutdown for a rolling restart, the leader's
session expiring) the new leader never had the batch, and the old leader, on becoming
its follower, truncates its log to the new leader's end (KIP-101's leader epochs): the
acknowledged records are gone, and the outbox rows that would have re-sent them are
deleted. A follower may stay in the ISR while up to ``replica.lag.time.max.ms`` (30 s)
behind, so no ISR shrink warns anyone. On a test broker leadership never moves.

The fix: ``acks=all`` with ``enable.idempotence=true`` on a topic with
``min.insync.replicas=2``: a record is acknowledged only once every in-sync replica
has it (at least two), so a leader chosen from the ISR has it too.
"""

from __future__ import annotations

from confluent_kafka import KafkaError, Message, Producer

BURSTS = 10  # the relay drains the outbox in rounds, flushing each


def relay(bootstrap: str, topic: str, outbox: list[bytes], *, fixed: bool) -> list[bytes]:
    """Produce every outbox row; returns the rows deleted (delivered, "durable")."""
    if fixed:  # FIX: acknowledged only when every in-sync replica (>= 2) has it
        conf = {"acks": "all", "enable.idempotence": True}
    else:  # WRONG: the leader's own append is taken for durability
        conf = {"acks": "1", "enable.idempotence": False}
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5,
                         "retry.backoff.ms": 50, **conf})
    deleted: list[bytes] = []

    def delivered(err: KafkaError | None, msg: Message) -> None:
        if err is None:
            deleted.append(msg.value())  # the row is deleted from the outbox

    step = max(1, len(outbox) // BURSTS)
    for start in range(0, len(outbox), step):
        for row in outbox[start:start + step]:
            producer.produce(topic, value=row, on_delivery=delivered)
        producer.flush(30)
    producer.flush(60)
    return deleted


def wrong(bootstrap: str, topic: str, outbox: list[bytes]) -> list[bytes]:
    return relay(bootstrap, topic, outbox, fixed=False)


def fixed(bootstrap: str, topic: str, outbox: list[bytes]) -> list[bytes]:
    return relay(bootstrap, topic, outbox, fixed=True)
