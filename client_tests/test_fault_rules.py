"""Fault rules, the request journal and barriers with real clients over TCP: an error on
the third OffsetCommit of one group only, observe-only counts, waiting for hits and for
a Stable group, journal assertions, and a barrier forcing one interleaving of two
consumers (docs/faults.md "Fault rules", docs/journal.md)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

from client_tests.control_http import http
from emulator import Cluster
from emulator.control.operations import ControlError

# Not run with --target kafka: the emulator's own control surface.
pytestmark = pytest.mark.emulator_only


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with Cluster(brokers=3, port=0, control_port=0) as c:
        c.create_topic("orders", 2, 3)
        yield c


def consumer(c: Cluster, group: str, client_id: str) -> Consumer:
    return Consumer({"bootstrap.servers": c.bootstrap_servers, "group.id": group,
                     "client.id": client_id, "enable.auto.commit": False,
                     "auto.offset.reset": "earliest", "session.timeout.ms": 6000,
                     "heartbeat.interval.ms": 500})


def commit(cons: Consumer, offset: int) -> str | None:
    """One synchronous commit of orders-0; the error the client saw, if any."""
    try:
        out = cons.commit(offsets=[TopicPartition("orders", 0, offset)], asynchronous=False)
    except KafkaException as e:
        return str(e.args[0].name())
    errs = [tp.error.name() for tp in out or [] if tp.error is not None]
    return errs[0] if errs else None


def test_error_on_the_third_offset_commit_of_one_group(cluster: Cluster) -> None:
    cluster.journal_on()
    rule = cluster.inject_error("OffsetCommit", "OFFSET_METADATA_TOO_LARGE",
                                group="billing", after=2, rule_id="third")
    assert rule["id"] == "third"  # the operation as applied
    billing = consumer(cluster, "billing", "billing-1")
    other = consumer(cluster, "audit", "audit-1")
    try:
        seen = [commit(billing, n) for n in range(1, 5)]
        other_seen = [commit(other, n) for n in range(1, 4)]
    finally:
        billing.close()
        other.close()
    assert seen == [None, None, "OFFSET_METADATA_TOO_LARGE", None]
    assert other_seen == [None, None, None]  # another group's commits are not the rule's
    r = cluster.rule("third")
    assert (r["matched"], r["hits"], r["remaining"], r["active"]) == (3, 1, 0, False)
    commits = cluster.journal(api="OffsetCommit", group="billing")
    assert [e["errors"] for e in commits] == [[], [], ["OFFSET_METADATA_TOO_LARGE"], []]
    assert [e["injected"] for e in commits] == [None, None, "third", None]
    # the rule fired on the group's coordinator, where the client sent its commits
    assert {e["broker"] for e in commits} == {cluster.group("billing")["coordinator"]}
    assert cluster.journal(group="audit", error="OFFSET_METADATA_TOO_LARGE") == []


def test_observe_counts_without_failing_and_wait_for_hits(cluster: Cluster) -> None:
    cluster.observe("Produce", topic="orders", match="partition == 1", rule_id="p1")
    producer = Producer({"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 0,
                         "client.id": "writer"})
    for n in range(5):
        producer.produce("orders", b"v%d" % n, partition=1)
        producer.flush(10)
    producer.produce("orders", b"p0", partition=0)
    assert producer.flush(10) == 0  # everything delivered: observing fails nothing
    r = cluster.wait_for_rule("p1", hits=5, timeout_ms=10_000)
    assert r["hits"] == 5 and r["op"] == "observe"  # the partition-0 write not counted
    with pytest.raises(TimeoutError, match="fired 5 of 6"):
        cluster.wait_for_rule("p1", hits=6, timeout_ms=200)
    with pytest.raises(ControlError) as e:
        cluster.rule("nope")
    assert e.value.status == 404


def test_a_barrier_holds_b_join_until_a_has_committed(cluster: Cluster) -> None:
    cluster.journal_on()
    a = consumer(cluster, "g", "consumer-a")
    a.subscribe(["orders"])
    stop, stop_a = threading.Event(), threading.Event()

    def poll(c: Consumer, until: threading.Event) -> None:
        while not until.is_set():
            c.poll(0.05)

    ta = threading.Thread(target=poll, args=(a, stop_a), daemon=True)
    ta.start()
    b: Consumer | None = None
    tb: threading.Thread | None = None
    try:
        cluster.wait_for_group("g", members=1, timeout_ms=20_000)
        cluster.add_barrier(api="JoinGroup", client_id="consumer-b", barrier_id="join-b")
        b = consumer(cluster, "g", "consumer-b")
        b.subscribe(["orders"])
        tb = threading.Thread(target=poll, args=(b, stop), daemon=True)
        tb.start()
        held = cluster.wait_for_barrier("join-b", held=1, timeout_ms=20_000)
        assert held["holding"][0]["client_id"] == "consumer-b"
        # B is held: the group still has A alone, and A commits meanwhile
        assert len(cluster.group("g")["members"]) == 1
        # a Consumer's calls wait for one another: A's poll loop stops while it commits
        # (its heartbeats go on in librdkafka's own thread)
        stop_a.set()
        ta.join(5)
        assert commit(a, 1) is None
        stop_a.clear()  # A polls again: it must rejoin once B's JoinGroup goes on
        ta = threading.Thread(target=poll, args=(a, stop_a), daemon=True)
        ta.start()
        cluster.remove_barrier("join-b")
        cluster.wait_for_group("g", members=2, timeout_ms=30_000)
    finally:
        stop.set()
        stop_a.set()
        ta.join(5)
        if tb is not None:
            tb.join(5)
        a.close()
        if b is not None:
            b.close()
    entries = cluster.journal(group="g", match='api in ["OffsetCommit", "JoinGroup"]')
    first_b_join = next(e for e in entries if e["api"] == "JoinGroup"
                        and e["client_id"] == "consumer-b")
    a_commit = next(e for e in entries if e["api"] == "OffsetCommit")
    assert a_commit["seq"] < first_b_join["seq"]  # the interleaving the barrier forced
    assert first_b_join["held_ms"] > 0


def test_journal_and_rules_over_http(cluster: Cluster) -> None:
    base = f"http://127.0.0.1:{cluster.control.port}"

    assert http(base, "POST", "/journal", {"capacity": 3})[1]["capacity"] == 3
    status, out = http(base, "POST", "/faults", {"op": "inject_error", "api": "Metadata",
                                           "error": "NOT_CONTROLLER", "match": "bad =="})
    assert status == 400 and "match" in out["error"]
    p = Producer({"bootstrap.servers": cluster.bootstrap_servers, "client.id": "w2"})
    for _ in range(3):
        p.produce("orders", b"x", partition=0)
        p.flush(10)
    status, j = http(base, "GET", "/journal?client_id=w2")
    assert status == 200 and j["size"] == 3 and j["dropped"] > 0  # a ring of 3
    assert all(e["client_id"] == "w2" for e in j["entries"])
    assert http(base, "GET", "/journal?since=" + str(j["next_seq"]))[1]["entries"] == []
    assert http(base, "DELETE", "/journal")[1]["enabled"] is False
    assert http(base, "POST", "/rules/r9/wait", {"hits": 1, "timeout_ms": 10})[0] == 404


def cli(base: str, *args: str) -> tuple[int, object, str]:
    done = subprocess.run([sys.executable, "-m", "emulator", "fault", "--control", base,
                           *args], capture_output=True, text=True, timeout=60)
    out = json.loads(done.stdout) if done.stdout.strip() else None
    return done.returncode, out, done.stderr


def test_the_command_line_drives_rules_the_journal_and_barriers(cluster: Cluster) -> None:
    base = f"http://127.0.0.1:{cluster.control.port}"
    assert cli(base, "journal-on", "--capacity", "100")[1]["enabled"] is True
    rc, out, _ = cli(base, "inject-error", "OffsetCommit", "OFFSET_METADATA_TOO_LARGE",
                     "--group", "billing", "--after", "1", "--id", "second")
    assert rc == 0 and out["applied"][0]["id"] == "second"
    billing = consumer(cluster, "billing", "billing-cli")
    try:
        assert [commit(billing, n) for n in (1, 2)] == [None, "OFFSET_METADATA_TOO_LARGE"]
    finally:
        billing.close()
    rc, out, _ = cli(base, "wait-rule", "second", "--hits", "1", "--timeout-ms", "5000")
    assert rc == 0 and out["reached"] and out["rule"]["hits"] == 1
    rc, out, _ = cli(base, "journal", "--group", "billing", "--match",
                     'error == "OFFSET_METADATA_TOO_LARGE"')
    assert [e["client_id"] for e in out["entries"]] == ["billing-cli"]
    assert cli(base, "add-barrier", "--api", "Metadata", "--client-id", "nobody",
               "--id", "b")[1]["id"] == "b"
    assert [b["id"] for b in cli(base, "barriers")[1]["barriers"]] == ["b"]
    assert cli(base, "remove-barrier", "b")[1]["removed"]["held"] == 0
    rc, out, _ = cli(base, "wait-group", "nobody-here", "--members", "1", "--timeout-ms", "50")
    assert rc == 0 and out == {"reached": False, "group": None}
    rc, _, err = cli(base, "observe", "--match", "api ==")
    assert rc == 1 and "match: expected a value" in err
