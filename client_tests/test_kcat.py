"""Debian's kcat (librdkafka 2.0.x): produce, consume and metadata listing.

This old librdkafka only enables compression when the broker's Produce range
includes v0, so the snappy case also proves
we advertise Produce from v0 as Kafka 4.0 does.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from client_tests.rawkafka import Conn, fetch_body, topic_metadata
from client_tests.targets import KafkaTarget
from emulator import Cluster
from wire.records import read_header

KCAT = shutil.which("kcat")
PAD = "compressible " * 20
CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3}


def kcat(*args: str, stdin: str | None = None) -> str:
    assert KCAT, "kcat is not installed: scripts/setup.d/20-kcat.sh installs it from Debian"
    r = subprocess.run([KCAT, *args], input=stdin, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"kcat {' '.join(args)} failed: {r.stderr}"
    return r.stdout


@pytest.mark.parametrize("codec", ["none", "snappy", "gzip", "lz4"])
def test_kcat_produce_consume(cluster: Cluster, topic_name: str, codec: str) -> None:
    cluster.create_topic(topic_name, 2, 3)
    b = cluster.bootstrap_servers
    lines = "\n".join(f"key{i}:value {i} {PAD}" for i in range(20)) + "\n"
    for part in (0, 1):
        kcat("-b", b, "-P", "-t", topic_name, "-p", str(part), "-K", ":", "-z", codec,
             "-H", f"part={part}", stdin=lines)
    for part in (0, 1):
        out = kcat("-b", b, "-C", "-t", topic_name, "-p", str(part), "-o", "beginning", "-e",
                   "-f", "%k|%s|%p|%o|%h\n")
        rows = [line.split("|") for line in out.splitlines() if line]
        assert len(rows) == 20
        stored = first_batch(cluster, topic_name, part)
        assert read_header(stored).compression == CODECS[codec], "kcat did not compress"
        for i, (k, v, p, o, h) in enumerate(rows):
            assert (k, v, p, o, h) == (f"key{i}", f"value {i} {PAD}", str(part), str(i), f"part={part}")


def first_batch(cluster: Cluster | KafkaTarget, topic: str, partition: int) -> bytes:
    """The partition's first stored batch as its leader serves it (a raw Fetch v12), so
    the codec the producer chose is seen on either target."""
    leader = next(p["leader_id"] for p in topic_metadata(cluster, topic)["partitions"]
                  if p["partition_index"] == partition)
    c = Conn(cluster, cluster.broker_ids.index(leader))
    try:
        resp = c.call(1, 12, fetch_body(topic, partition=partition, min_bytes=1,
                                        max_bytes=1 << 20))
    finally:
        c.close()
    part = resp["responses"][0]["partitions"][0]
    assert part["error_code"] == 0 and part["records"], part
    return part["records"]


def test_kcat_metadata_listing(cluster: Cluster, topic_name: str) -> None:
    cluster.create_topic(topic_name, 3, 2)
    md = json.loads(kcat("-b", cluster.bootstrap_servers, "-L", "-J"))
    assert sorted(b["id"] for b in md["brokers"]) == [1, 2, 3]
    topic = next(t for t in md["topics"] if t["topic"] == topic_name)
    assert len(topic["partitions"]) == 3
    for p in topic["partitions"]:
        assert len(p["replicas"]) == 2 and p["leader"] == p["replicas"][0]["id"]
