"""The compose example's client: produce to a replicated topic, consume, report.

Reads BOOTSTRAP_SERVERS (default kafka:9092), TOPIC and MESSAGES. Prints one line
per step and exits non-zero when anything is missing, so `docker compose up
--exit-code-from client` is a smoke test of the whole setup.
"""

from __future__ import annotations

import os
import sys
import time

from kafka import KafkaConsumer, KafkaProducer, TopicPartition


def main() -> int:
    bootstrap = os.environ.get("BOOTSTRAP_SERVERS", "kafka:9092")
    topic = os.environ.get("TOPIC", "compose-example")
    count = int(os.environ.get("MESSAGES", "100"))
    t0 = time.monotonic()
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    # The first metadata request auto-creates the topic (num.partitions and
    # default.replication.factor of the emulator's config).
    partitions = sorted(producer.partitions_for(topic))
    print(f"client: topic {topic} has partitions {partitions}")
    sends = [producer.send(topic, key=str(i % 3).encode(), value=f"message {i}".encode())
             for i in range(count)]
    producer.flush(30)
    for future in sends:
        future.get(timeout=30)  # raises the broker's error, if any
    producer.close()

    # Partitions assigned by hand: no consumer group needed.
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    consumer.assign([TopicPartition(topic, p) for p in partitions])
    seen: set[bytes] = set()
    deadline = time.monotonic() + 30
    while len(seen) < count and time.monotonic() < deadline:
        for records in consumer.poll(timeout_ms=500).values():
            seen.update(r.value for r in records)
    consumer.close()
    missing = count - len(seen)
    print(f"client: produced {count}, consumed {len(seen)} in {time.monotonic() - t0:.2f}s")
    if missing:
        print(f"client: FAILED, {missing} messages missing", file=sys.stderr)
        return 1
    print("client: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
