"""Kafka's Java 4.4 consumer with group.protocol=consumer and a broker-side regex
(SubscriptionPattern): the group coordinator evaluates it with RE2/J's syntax.

The pattern uses ``\\p{Ll}`` (a Unicode class RE2/J has and Python's ``re`` rejects), so
the subscription works only if the emulator reads it as Kafka does. Driver:
client_tests/java/src/RegexConsumer.java (scripts/setup.d/30-java.sh builds it).
"""

from __future__ import annotations

import subprocess
import uuid

from confluent_kafka import Producer
from test_reassign_java import JVM, require_java

from emulator import Cluster


def test_java_consumer_regex_subscription_with_re2j_syntax(cluster: Cluster) -> None:
    require_java()
    run = uuid.uuid4().hex[:8]
    topics = [f"rx{run}-a1", f"rx{run}-b2", f"rx{run}-C3", f"other{run}-a1"]
    for t in topics:
        cluster.create_topic(t, 2, 3)
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers})
    for t in topics:
        for i in range(3):
            producer.produce(t, f"{t}:{i}".encode(), partition=i % 2)
    producer.flush(10)
    pattern = rf"rx{run}-\p{{Ll}}\d"  # lower-case letter, digit: a1 and b2 only
    out = subprocess.run(JVM + ["RegexConsumer", cluster.bootstrap_servers, f"g-{run}",
                                pattern, "6"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert lines[-1] == "done", out.stdout
    got = sorted(line.split(" ", 3)[3] for line in lines if line.startswith("R "))
    assert got == sorted(f"{t}:{i}" for t in topics[:2] for i in range(3)), out.stdout
    assignment = next(line for line in lines if line.startswith("A")).split()[1:]
    assert sorted(assignment) == sorted(f"{t}-{p}" for t in topics[:2] for p in (0, 1))
