"""Reading a topic back with a real client until what a test waits for is there.

Each helper polls through ``emulator.testing.wait_for`` (a test never sleeps to decide
an outcome) and returns what it read, for the test's own assertion.
"""

from __future__ import annotations

import uuid

from confluent_kafka import Consumer
from kafka import KafkaConsumer, TopicPartition

from emulator.testing import wait_for


def kafka_python_values(bootstrap: str, topic: str, partitions: int, expected: int,
                        timeout: float = 30) -> list[bytes]:
    """The values of partitions 0..``partitions``-1 from the start, read with kafka-python
    until ``expected`` have come."""
    c = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                      consumer_timeout_ms=500)
    c.assign([TopicPartition(topic, i) for i in range(partitions)])
    out: list[bytes] = []

    def enough() -> bool:
        out.extend(m.value for m in c)
        return len(out) >= expected

    wait_for(enough, f"{expected} records", timeout=timeout, interval=0)
    c.close()
    return out


def latest_counts(bootstrap: str, topic: str, want: dict[str, int],
                  timeout: float = 90) -> dict[str, int]:
    """A word count's output topic read committed (confluent-kafka, a group of its own)
    until the latest count per word is ``want``."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"reader-{uuid.uuid4()}",
                  "enable.auto.commit": False, "auto.offset.reset": "earliest",
                  "isolation.level": "read_committed"})
    c.subscribe([topic])
    got: dict[str, int] = {}

    def latest() -> bool:
        m = c.poll(0.2)
        if m is not None and m.error() is None:
            got[m.key().decode()] = int.from_bytes(m.value(), "big", signed=True)
        return got == want

    wait_for(latest, f"the counts {want}", timeout=timeout, interval=0)
    c.close()
    return got
