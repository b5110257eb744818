"""The web console's server side: /ui files, the snapshot (what the page shows, built
from the domain), the /events stream, and the routes its buttons use (reassignments,
preferred election) acting on a running cluster with real clients' data in it."""

from __future__ import annotations

import io
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer

from emulator import Cluster
from emulator.control.console import decode_consumer_assignment
from emulator.testing import wait_for
from emulator.tools import reassign, top
from emulator.tools.top import progress_bar

pytestmark = pytest.mark.emulator_only


@pytest.fixture
def cp() -> Iterator[tuple[Cluster, str]]:
    with Cluster(brokers=3, port=0, control_port=0) as c:
        yield c, f"http://127.0.0.1:{c.control.port}"


def http(base: str, method: str, path: str, body: Any = None,
         headers: dict[str, str] | None = None) -> tuple[int, Any, str]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, payload, ctype = r.status, r.read(), r.headers["Content-Type"]
    except urllib.error.HTTPError as e:
        status, payload, ctype = e.code, e.read(), e.headers["Content-Type"]
    return status, json.loads(payload) if ctype == "application/json" else payload, ctype


def test_ui_files_are_served(cp: tuple[Cluster, str]) -> None:
    _, base = cp
    status, page, ctype = http(base, "GET", "/ui")
    assert status == 200 and ctype.startswith("text/html")
    assert b'src="/ui/app.js"' in page and b"/ui/style.css" in page
    for path, kind in (("/ui/app.js", "text/javascript"), ("/ui/style.css", "text/css")):
        status, body, ctype = http(base, "GET", path)
        assert status == 200 and ctype.startswith(kind) and len(body) > 500


def test_snapshot_shows_brokers_partitions_groups_and_lag(cp: tuple[Cluster, str]) -> None:
    c, base = cp
    c.create_topic("console-lag", partitions=2, replication_factor=3)
    producer = KafkaProducer(bootstrap_servers=c.bootstrap_servers)
    for i in range(20):
        producer.send("console-lag", value=b"v%d" % i, partition=i % 2)
    producer.flush()
    producer.close()
    consumer = KafkaConsumer("console-lag", bootstrap_servers=c.bootstrap_servers,
                             group_id="console-group", auto_offset_reset="earliest",
                             enable_auto_commit=False)
    got = 0
    while got < 20:
        got += sum(len(v) for v in consumer.poll(timeout_ms=1000).values())
    consumer.commit()

    def snap() -> dict:
        return http(base, "GET", "/ui/snapshot")[1]

    s = wait_for(lambda: (lambda s: s if any(g["members"] for g in s["groups"]) else None)(
        snap()), "the consumer in the snapshot's groups")
    assert [b["id"] for b in s["brokers"]] == [1, 2, 3]
    assert sum(b["controller"] for b in s["brokers"]) == 1
    topic = next(t for t in s["topics"] if t["name"] == "console-lag")
    for _index, leader, replicas, isr, hw, leo in topic["partitions"]:
        assert leader in replicas and sorted(isr) == sorted(replicas) and hw == 10
        assert set(leo.values()) == {10}
    assert sum(b["produced"] for b in s["brokers"]) >= 20
    group = next(g for g in s["groups"] if g["group_id"] == "console-group")
    assert group["total_lag"] == 0 and len(group["lag"]) == 2
    assert sorted(group["members"][0]["assignment"]) == ["console-lag-0", "console-lag-1"]
    consumer.close()


def test_events_stream_pushes_snapshots(cp: tuple[Cluster, str]) -> None:
    c, base = cp
    with urllib.request.urlopen(base + "/events?interval_ms=100", timeout=30) as r:
        assert r.headers["Content-Type"] == "text/event-stream"
        events = []
        while len(events) < 2:
            line = r.readline()
            if line.startswith(b"data: "):
                events.append(json.loads(line[6:]))
    assert events[0]["brokers"] and events[1]["time_ms"] >= events[0]["time_ms"]
    status, body, _ = http(base, "GET", "/events?interval_ms=soon")
    assert status == 400 and "interval_ms" in body["error"]


def test_events_after_the_first_carry_only_changed_topics(cp: tuple[Cluster, str]) -> None:
    """One whole ``snapshot`` event, then ``delta`` events: only the topics whose
    partitions changed since the stream sent them, and the names of deleted ones."""
    c, base = cp
    for i in range(4):
        c.create_topic(f"delta-{i}", partitions=3, replication_factor=3)
    with urllib.request.urlopen(base + "/events?interval_ms=100", timeout=30) as r:
        def next_event() -> tuple[str, dict]:
            kind = ""
            while True:
                line = r.readline()
                if line.startswith(b"event: "):
                    kind = line[7:].strip().decode()
                elif line.startswith(b"data: "):
                    return kind, json.loads(line[6:])

        kind, first = next_event()
        assert kind == "snapshot" and {f"delta-{i}" for i in range(4)} <= {
            t["name"] for t in first["topics"]}
        kind, idle = next_event()
        assert kind == "delta" and idle["topics"] == [] and idle["removed_topics"] == []
        assert idle["brokers"] and idle["partition_count"] == first["partition_count"]

        producer = KafkaProducer(bootstrap_servers=c.bootstrap_servers)
        producer.send("delta-2", value=b"x", partition=1).get(timeout=30)
        producer.close()
        admin = KafkaAdminClient(bootstrap_servers=c.bootstrap_servers)
        admin.delete_topics(["delta-0"])
        admin.close()

        def changes() -> tuple[set[str], set[str]] | None:
            _, ev = next_event()
            return ({t["name"] for t in ev["topics"]}, set(ev["removed_topics"])) \
                if ev["topics"] or ev["removed_topics"] else None

        seen_topics: set[str] = set()
        seen_removed: set[str] = set()
        while not ({"delta-2"} <= seen_topics and "delta-0" in seen_removed):
            got = wait_for(changes, "a delta with delta-2 and without delta-0", 30)
            seen_topics |= got[0]
            seen_removed |= got[1]
        assert seen_topics <= {"delta-2"}, seen_topics


def test_reassignment_and_preferred_election_routes(cp: tuple[Cluster, str]) -> None:
    c, base = cp
    c.create_topic("console-move", partitions=1, replication_factor=2)
    before = c.cluster_info()["topics"]["console-move"]["partitions"][0]["replicas"]
    target = sorted(set([1, 2, 3]) - {before[0]}) + [before[0]]
    status, body, _ = http(base, "POST", "/reassignments",
                           {"topic": "console-move", "partition": 0, "replicas": target})
    assert status == 200, body
    wait_for(lambda: c.cluster_info()["topics"]["console-move"]["partitions"][0]["replicas"]
             == target, "the reassignment to complete")
    # The leader stayed where it was (still a replica); the preferred one is target[0].
    status, body, _ = http(base, "POST", "/elections/preferred",
                           {"topic": "console-move", "partitions": [0]})
    assert status == 200
    wait_for(lambda: c.cluster_info()["topics"]["console-move"]["partitions"][0]["leader"]
             == target[0], "the preferred replica to lead")
    for bad in ({"topic": "console-move"}, {"topic": "console-move", "partition": 0,
                                            "replicas": ["x"]},
                {"topic": "nope", "partition": 0, "replicas": [1, 2]}):
        status, body, _ = http(base, "POST", "/reassignments", bad)
        assert status in (400, 404) and body["error"]
    status, body, _ = http(base, "POST", "/elections/preferred", {"topic": "nope"})
    assert status == 404


def test_console_files_without_token_but_data_needs_it() -> None:
    with Cluster(brokers=1, port=0, control_port=0, control_token="s3cret") as c:
        base = f"http://127.0.0.1:{c.control.port}"
        assert http(base, "GET", "/ui")[0] == 200  # the page asks for the token itself
        assert http(base, "GET", "/ui/snapshot")[0] == 401
        assert http(base, "GET", "/events")[0] == 401
        ok = http(base, "GET", "/ui/snapshot", headers={"Authorization": "Bearer s3cret"})
        assert ok[0] == 200
        assert http(base, "GET", "/ui", headers={"Origin": "http://evil.example"})[0] == 403


def test_decode_consumer_assignment() -> None:
    data = (b"\x00\x01" + b"\x00\x00\x00\x01" + b"\x00\x01t" + b"\x00\x00\x00\x02"
            + b"\x00\x00\x00\x00\x00\x00\x00\x03" + b"\xff\xff\xff\xff")
    assert decode_consumer_assignment(data) == [("t", [0, 3])]
    assert decode_consumer_assignment(b"\x00") == []


def test_top_once_and_reassign_progress(cp: tuple[Cluster, str], tmp_path) -> None:
    """``kafka-emulator top --once`` shows a moving replica's bar while a paused follower
    holds the reassignment; ``reassign --verify --progress`` waits it out and verifies."""
    c, base = cp
    c.create_topic("console-top", partitions=1, replication_factor=2)
    producer = KafkaProducer(bootstrap_servers=c.bootstrap_servers)
    for _ in range(50):
        producer.send("console-top", value=b"x" * 100)
    producer.flush()
    producer.close()
    current = c.cluster_info()["topics"]["console-top"]["partitions"][0]["replicas"]
    new = next(b for b in (1, 2, 3) if b not in current)
    target = [new, current[0]]
    c.pause_follower(new)
    f = tmp_path / "move.json"
    f.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "console-top", "partition": 0, "replicas": target}]}))
    out = io.StringIO()
    assert reassign.main(["--bootstrap-server", c.bootstrap_servers, "--execute",
                          "--reassignment-json-file", str(f)], out=out) == 0
    out = io.StringIO()
    assert top.main(["--control", base, "--once"], out=out) == 0
    frame = out.getvalue()
    assert "REASSIGNMENTS (1 in flight)" in frame and "console-top-0" in frame
    assert f"replica {new}: [" in frame and "%" in frame, frame
    assert "console-top" in frame.split("TOPICS")[1]

    out = io.StringIO()
    waiting = threading.Thread(target=lambda: reassign.main(
        ["--bootstrap-server", c.bootstrap_servers, "--verify", "--progress",
         "--reassignment-json-file", str(f)], out=out))
    waiting.start()
    wait_for(lambda: f"console-top-0: replica {new}:" in out.getvalue(),
             "--progress to draw the moving replica")
    c.resume_follower(new)
    waiting.join(timeout=60)
    assert not waiting.is_alive()
    text = out.getvalue()
    assert "All partition reassignments are complete." in text
    assert "Reassignment of partition console-top-0 is completed." in text
    assert c.cluster_info()["topics"]["console-top"]["partitions"][0]["replicas"] == target


def test_progress_bar_and_render() -> None:
    assert progress_bar(0.5, 10) == "[#####-----]  50.0%"
    assert progress_bar(2.0, 4) == "[####] 100.0%"
