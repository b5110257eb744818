"""The compose example's client: create a replicated topic, produce, consume, report.

Reads BOOTSTRAP_SERVERS (default kafka:9092), TOPIC and MESSAGES. Prints one line
per step and exits non-zero when anything is missing, so `docker compose up
--exit-code-from client` is a smoke test of the whole setup.
"""

from __future__ import annotations

import os
import sys
import time

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic
from kafka.errors import TopicAlreadyExistsError


def main() -> int:
    bootstrap = os.environ.get("BOOTSTRAP_SERVERS", "kafka:9092")
    topic = os.environ.get("TOPIC", "compose-example")
    count = int(os.environ.get("MESSAGES", "100"))
    t0 = time.monotonic()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    brokers = sorted(f"{b['host']}:{b['port']}" for b in admin.describe_cluster()["brokers"])
    print(f"client: brokers {', '.join(brokers)}")
    try:
        admin.create_topics([NewTopic(topic, num_partitions=3, replication_factor=len(brokers))])
    except TopicAlreadyExistsError:
        pass
    admin.close()

    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in range(count):
        producer.send(topic, key=str(i % 3).encode(), value=f"message {i}".encode())
    producer.flush(30)
    producer.close()

    # Partitions assigned by hand: no consumer group needed.
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=5000)
    consumer.assign([TopicPartition(topic, p) for p in range(3)])
    seen = {m.value for m in consumer}
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
