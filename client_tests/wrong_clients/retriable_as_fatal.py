"""A producer that treats a retriable error as fatal: records logged as failed and lost.

A web service publishes one event per request it serves and waits for the delivery
before answering (``produce`` then ``flush``). Burnt by duplicates (see
producer_retries.py), the developer turned retries off (``retries=0``) and logs the
events whose delivery failed, "Kafka refused them", and answers the request anyway. But
most of what a broker refuses is retriable: NOT_LEADER_OR_FOLLOWER when a leader moved
between the client's last metadata refresh and its produce, a connection closed, a
request timed out, NOT_ENOUGH_REPLICAS while a follower catches up. Each is a record the
next attempt would have written; here it is logged and gone.

The fix: leave retries on and turn idempotence on (no duplicates, no loss); an error
the client still reports after its retries is one to stop on, not to log and skip.
"""

from __future__ import annotations

from confluent_kafka import KafkaError, Message, Producer


def send_all(bootstrap: str, topic: str, values: list[bytes], *,
             fixed: bool) -> list[str]:
    """Write ``values``; returns what the application logged as failed."""
    if fixed:
        conf = {"enable.idempotence": True}  # FIX: retries on (the default), no duplicates
    else:
        conf = {"retries": 0, "enable.idempotence": False}  # WRONG: every error is final
    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", **conf})
    failed: list[str] = []

    def delivered(err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            failed.append(f"{msg.value()!r}: {err}")  # logged, and the record dropped

    for v in values:  # one request served per value
        producer.produce(topic, value=v, on_delivery=delivered)
        if producer.flush(30):
            failed.append(f"{v!r}: still undelivered after 30 s")
    return failed


def wrong(bootstrap: str, topic: str, values: list[bytes]) -> list[str]:
    return send_all(bootstrap, topic, values, fixed=False)


def fixed(bootstrap: str, topic: str, values: list[bytes]) -> list[str]:
    return send_all(bootstrap, topic, values, fixed=True)
