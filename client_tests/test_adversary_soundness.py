"""The adversary's soundness check over the wire: the read_committed invariant judges
what a real cluster answers (emulator/faults/soundness.py, invariant 6).

The schedule is the one that hid a lie from the check before it had this invariant: a
transaction's data replicated, the followers paused (``follower_lag``), the producer
aborts, the ABORT marker lands on the leader alone, and the leader moves
(``leader_move``). Kafka cannot lose the marker (WriteTxnMarkers appends with acks=-1 and
is sent again to the new leader), so a read_committed reader of the new leader must be
told to skip the aborted records. The check runs on every answer of an adversarial
cluster; here it sees the transaction through raw requests (InitProducerId, Produce,
EndTxn) and judges the read_committed Fetch from the new leader. An emulator that loses
the marker on the leader change (emulator/cluster/leadership.py without
``rewrite_marker``) gives the reader the aborted records and turns this red, with
the violation named.

emulator_only: the adversary is the emulator's own mode.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from rawkafka import Conn, fetch_body, find_coordinator

from emulator import Cluster
from emulator.testing import wait_for
from wire.records import build_batch, split_batches

pytestmark = pytest.mark.emulator_only

TXN = "soundness-txn"


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with Cluster(fidelity="adversarial", seed=0) as c:
        assert c.adversary is not None
        c.adversary.script = frozenset()  # nothing fires unless the test plays it
        c.create_topic("k", 1, 3)
        yield c


def _conn(c: Cluster, broker: int) -> Conn:
    return Conn(c, sorted(c.broker_ids).index(broker))


def _init_producer_id(coordinator: Conn) -> tuple[int, int]:
    def ready() -> dict | None:
        r = coordinator.call(
            22,
            4,
            {
                "transactional_id": TXN,
                "transaction_timeout_ms": 60000,
                "producer_id": -1,
                "producer_epoch": -1,
            },
        )
        return r if r["error_code"] == 0 else None

    r = wait_for(ready, "a producer id", 30, interval=0.1)
    return r["producer_id"], r["producer_epoch"]


def test_an_aborted_transaction_stays_hidden_from_read_committed_after_a_leader_move(
    cluster: Cluster,
) -> None:
    c = cluster
    assert c.adversary is not None
    check = c.adversary.soundness
    p = c.state.topics["k"].partitions[0]
    old = p.leader
    with _conn(c, find_coordinator(c, TXN, key_type=1)) as tc, _conn(c, old) as lc:
        pid, epoch = _init_producer_id(tc)
        r = tc.call(
            24,
            3,
            {
                "v3_and_below_transactional_id": TXN,
                "v3_and_below_producer_id": pid,
                "v3_and_below_producer_epoch": epoch,
                "v3_and_below_topics": [{"name": "k", "partitions": [0]}],
            },
        )
        assert [
            x["partition_error_code"]
            for t in r["results_by_topic_v3_and_below"]
            for x in t["results_by_partition"]
        ] == [0], r
        data = build_batch(
            [(b"k", b"aborted-1"), (b"k", b"aborted-2")],
            producer_id=pid,
            producer_epoch=epoch,
            base_sequence=0,
            transactional=True,
        )
        r = lc.call(
            0,
            9,
            {
                "transactional_id": TXN,
                "acks": -1,
                "timeout_ms": 10000,
                "topic_data": [{"name": "k", "partition_data": [{"index": 0, "records": data}]}],
            },
        )
        part = r["responses"][0]["partition_responses"][0]
        assert part["error_code"] == 0 and part["base_offset"] == 0, part
        # replicated: every replica has the data, the transaction is open
        wait_for(lambda: p.high_watermark == 2, "the data replicated", 10)
        for follower in p.replicas:
            if follower != old:  # the followers stop fetching (a GC pause)
                c.fault({"op": "pause_follower", "broker": follower})
        r = tc.call(
            26,
            3,
            {
                "transactional_id": TXN,
                "producer_id": pid,
                "producer_epoch": epoch,
                "committed": False,
            },
        )
        assert r["error_code"] == 0, r
        # the ABORT marker is on the leader alone
        wait_for(lambda: p.logs[old].log_end_offset == 3, "the ABORT marker", 10)
        assert all(p.logs[b].log_end_offset == 2 for b in p.replicas if b != old)
    c.fault({"op": "move_leader", "topic": "k", "partition": 0})
    new = p.leader
    assert new != old
    for follower in p.replicas:
        c.fault({"op": "resume_follower", "broker": follower})
    wait_for(
        lambda: (
            p.high_watermark == p.log_end_offset >= 2 and p.last_stable_offset() == p.high_watermark
        ),
        "the new leader stable",
        10,
    )
    before = check.checked
    with _conn(c, new) as nc:
        r = nc.call(1, 12, fetch_body("k", 0, isolation=1))
    got = r["responses"][0]["partitions"][0]
    assert got["error_code"] == 0, got
    assert split_batches(got["records"]), "the new leader returned nothing to judge"
    assert check.checked > before  # the check judged this answer
    assert check.violations == [], check.violations
    assert [a["producer_id"] for a in got["aborted_transactions"]] == [pid]
