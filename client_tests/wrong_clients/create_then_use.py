"""Code that uses a topic right after CreateTopics returns, without waiting for it.

The application creates its topic, then at once asks the cluster for the topic's
partitions and assigns a reader to each one (manual assignment, no consumer group: a
replay tool, or an integration test). CreateTopics returning means the controller has
the topic; the broker that answers the next Metadata request learns of it through its
own metadata cache a moment later. Asked too soon, that broker answers
UNKNOWN_TOPIC_OR_PARTITION with no partitions (or partitions without a leader yet), the
application assigns nothing, and the records it then writes are never read.

The fix: after CreateTopics, wait until Metadata shows the topic without an error, with
every partition and a leader for each, before deriving anything from it.
"""

from __future__ import annotations

import time

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

PARTITIONS = 3


def create_write_read(bootstrap: str, topic: str, values: list[bytes], *,
                      fixed: bool, idle_s: float = 10.0) -> list[bytes]:
    """Create ``topic``, write ``values`` to it, read back what a reader per partition
    gets; returns the values read."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 3)])[topic].result(30)

    reader = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused",
                       "enable.auto.commit": False, "auto.offset.reset": "earliest"})
    if fixed:
        partitions = wait_for_partitions(reader, topic, PARTITIONS)  # FIX
    else:
        # WRONG: whatever the answering broker knows right now
        md = reader.list_topics(topic, timeout=10)
        partitions = sorted(md.topics[topic].partitions)
    reader.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for v in values:
        producer.produce(topic, value=v)
    producer.flush(30)

    read: list[bytes] = []
    idle_since = time.monotonic()
    try:
        while len(read) < len(values) and time.monotonic() - idle_since < idle_s:
            m = reader.poll(0.1)
            if m is not None and not m.error():
                read.append(m.value())
                idle_since = time.monotonic()
    finally:
        reader.close()
    return read


def wait_for_partitions(client: Consumer, topic: str, count: int,
                        timeout: float = 30.0) -> list[int]:
    """The topic's partitions once Metadata knows the topic, all ``count`` partitions
    and a leader for each."""
    deadline = time.monotonic() + timeout
    while True:
        t = client.list_topics(topic, timeout=10).topics.get(topic)
        if t is not None and t.error is None and len(t.partitions) == count \
                and all(p.leader >= 0 for p in t.partitions.values()):
            return sorted(t.partitions)
        if time.monotonic() > deadline:
            raise TimeoutError(f"topic {topic} not known with {count} partitions")
        time.sleep(0.05)


def wrong(bootstrap: str, topic: str, values: list[bytes]) -> list[bytes]:
    return create_write_read(bootstrap, topic, values, fixed=False)


def fixed(bootstrap: str, topic: str, values: list[bytes]) -> list[bytes]:
    return create_write_read(bootstrap, topic, values, fixed=True)
