"""A producer that retries without idempotence: a lost response becomes a duplicate.

The wrong program is librdkafka's default producer (``enable.idempotence`` is false
there; retries are on). When the broker writes a batch but the answer never reaches the
client (the connection drops after the write landed), the client cannot tell "not
written" from "written, answer lost", sends the batch again, and the broker, which has no
producer id and sequence numbers to recognise it by, appends it a second time.

The fix is one line: ``enable.idempotence=True``. The broker then recognises the retried
batch by its producer id and sequence and answers with the first write's offset.
"""

from __future__ import annotations

from confluent_kafka import KafkaError, Producer


def send_all(bootstrap: str, topic: str, values: list[bytes], *, fixed: bool) -> list[str]:
    """Write ``values`` to ``topic``; returns the delivery errors the application saw."""
    conf = {
        "bootstrap.servers": bootstrap,
        "acks": "all",
        "linger.ms": 5,
        "retries": 10,
        "retry.backoff.ms": 50,
        # WRONG: retries without idempotence (librdkafka's default). FIX: True.
        "enable.idempotence": fixed,
    }
    producer = Producer(conf)
    errors: list[str] = []

    def delivered(err: KafkaError | None, _msg: object) -> None:
        if err is not None:
            errors.append(str(err))

    # as a service writes what comes in: a burst, then its delivery, twenty times (so the
    # run sends about as many Produce requests on a loaded machine as on an idle one,
    # where one tight loop could go out as a single batch per partition). Each record is
    # keyed (by its value), so each burst reaches every partition whatever the timing:
    # with no key, librdkafka's sticky partitioner sends a burst to one partition it
    # draws, and a replayed fault on "the second Produce to broker 1" finds none.
    burst = max(1, len(values) // 20)
    for i, v in enumerate(values):
        producer.produce(topic, key=v, value=v, on_delivery=delivered)
        producer.poll(0)
        if i % burst == burst - 1:
            producer.flush(60)
    left = producer.flush(60)
    if left:
        errors.append(f"{left} message(s) still undelivered after 60 s")
    return errors


def wrong(bootstrap: str, topic: str, values: list[bytes]) -> list[str]:
    return send_all(bootstrap, topic, values, fixed=False)


def fixed(bootstrap: str, topic: str, values: list[bytes]) -> list[str]:
    return send_all(bootstrap, topic, values, fixed=True)
