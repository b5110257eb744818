"""Reading a topic back with a real client until what a test waits for is there.

Each helper polls through ``emulator.testing.wait_for`` (a test never sleeps to decide
an outcome) and returns what it read, for the test's own assertion.
"""

from __future__ import annotations

import time
import uuid

from confluent_kafka import Consumer, KafkaException
from confluent_kafka import TopicPartition as Partition
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


def end_offsets(bootstrap: str, topic: str, partitions: int, timeout: float = 30.0,
                read_committed: bool = False) -> dict[int, int]:
    """The end offset of ``topic``'s partitions 0..``partitions``-1 (with
    ``read_committed`` the last stable offset), each asked until the cluster answers or
    ``timeout`` has passed: an answer can fail transiently (under adversarial fidelity,
    while a failed log dir's leaders move), and a checker retries as any careful client
    would."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"checker-{uuid.uuid4()}",
                  "isolation.level": "read_committed" if read_committed
                  else "read_uncommitted"})
    try:
        ends: dict[int, int] = {}
        deadline = time.monotonic() + timeout
        for p in range(partitions):
            while True:
                try:
                    ends[p] = c.get_watermark_offsets(Partition(topic, p), timeout=5)[1]
                    break
                except KafkaException:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
        return ends
    finally:
        c.close()
