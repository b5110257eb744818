"""Committed offsets and transaction state as records of __consumer_offsets and
__transaction_state: Kafka's layouts, the coordinators rebuilt from them, offsets
expired per offsets.retention.minutes (manual clock)."""

from __future__ import annotations

import struct

from cluster_sim import new_cluster

from emulator.cluster.clock import ManualClock
from emulator.cluster.state import ClusterState
from emulator.coordinators.coordinator_log import (
    CoordinatorLog,
    offset_key,
    parse_offset_key,
    parse_offset_value,
    replay,
)
from emulator.coordinators.groups.base import OFFSETS_TOPIC, OffsetAndMetadata
from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.transactions.coordinator import TXN_TOPIC, TransactionCoordinator
from wire.errors import ErrorCode as E
from wire.records import decode_records


def harness(**config: str):
    clock = ManualClock()
    st = new_cluster(3, clock, **{"offsets.topic.num.partitions": "3",
                                  "transaction.state.log.num.partitions": "3", **config}).state
    st.create_topic("t", 2, 3)
    gc = GroupCoordinator(st)
    tc = TransactionCoordinator(st, gc)
    CoordinatorLog(st, gc, tc)
    gc.ensure_offsets_topic()
    tc.ensure_txn_topic()
    return st, clock, gc, tc


def records(st: ClusterState, topic: str) -> list:
    out = []
    for p in st.topics[topic].partitions:
        for b in p.leader_log.read(-1, 1 << 40, 1 << 40):
            out.extend(decode_records(b))
    return out


def test_offset_records_have_kafkas_layout() -> None:
    key = offset_key("grp", "topic", 7)
    assert key == b"\x00\x01\x00\x03grp\x00\x05topic\x00\x00\x00\x07"
    assert parse_offset_key(key) == ("grp", "topic", 7)
    assert parse_offset_key(b"\x00\x02\x00\x03grp") is None  # group metadata: not ours


def test_commits_and_deletes_are_records_and_replay_rebuilds_them() -> None:
    st, clock, gc, tc = harness()
    res = gc.commit_offsets("g", "", -1, [("t", [(0, 5, 1, "meta"), (1, 9, -1, None)])])
    assert res == [("t", [(0, E.NONE), (1, E.NONE)])]
    recs = records(st, OFFSETS_TOPIC)
    assert {parse_offset_key(r.key) for r in recs} == {("g", "t", 0), ("g", "t", 1)}
    v = parse_offset_value(next(r.value for r in recs if parse_offset_key(r.key)[2] == 0))
    assert (v.offset, v.leader_epoch, v.metadata) == (5, 1, "meta")
    gc.delete_offsets("g", [("t", [1])])
    assert records(st, OFFSETS_TOPIC)[-1].value is None  # a tombstone
    fresh_g, fresh_t = GroupCoordinator(st), TransactionCoordinator(st, None)
    assert replay(st, fresh_g, fresh_t)[0] == 1
    assert set(fresh_g.offsets["g"]) == {("t", 0)}
    assert fresh_g.groups["g"].is_empty


def test_transaction_state_is_written_and_replayed() -> None:
    st, clock, gc, tc = harness()
    err, pid, epoch = tc.init_producer_id("tid", 60_000, broker_id=None)
    assert err == E.NONE
    assert tc.add_partitions("tid", pid, epoch, [("t", 0)]) == {("t", 0): E.NONE}
    assert records(st, TXN_TOPIC)[-1].value is not None
    g2, t2 = GroupCoordinator(st), TransactionCoordinator(st, None)
    _, n = replay(st, g2, t2)
    assert n == 1
    txn = t2.txns["tid"]
    # it was Ongoing: the rebuilt coordinator fences the producer and aborts it
    assert txn.producer_id == pid and txn.producer_epoch == epoch + 1
    assert txn.state == "CompleteAbort"
    assert t2.next_producer_id > pid


def test_offsets_expire_after_retention_for_groups_without_members() -> None:
    st, clock, gc, tc = harness(**{"offsets.retention.minutes": "1",
                                   "offsets.retention.check.interval.ms": "1000"})
    gc.commit_offsets("g", "", -1, [("t", [(0, 5, -1, None)])])
    st.tick()
    assert ("t", 0) in gc.offsets["g"]
    clock.advance(59_000)
    st.tick()
    assert ("t", 0) in gc.offsets["g"]
    clock.advance(2_000)
    st.tick()
    assert "g" not in gc.offsets
    assert records(st, OFFSETS_TOPIC)[-1].value is None
    assert isinstance(OffsetAndMetadata(1, 1, None, 1), OffsetAndMetadata)


def _commit_a_lot(fidelity: str, **config: str) -> tuple[ClusterState, int, int]:
    """A cluster as the runtime builds it (``fidelity``'s defaults, then ``config``), one
    group committing the same two partitions 700 times with 2 KB of metadata (1.5 MB of
    commits in one __consumer_offsets partition), then the cleaner run until it has
    nothing to do: (state, records before, records after)."""
    from emulator.runtime import Cluster
    from emulator.services import build_services

    st = Cluster(port=0, fidelity=fidelity, clock=ManualClock(),
                 config={"offsets.topic.num.partitions": "1", **config}).state
    st.create_topic("t", 2, 3)
    gc = build_services(st).groups
    gc.ensure_offsets_topic()
    for i in range(700):
        gc.commit_offsets("g", "", -1, [("t", [(0, i, -1, "m" * 2000), (1, i, -1, None)])])
    st.tick()  # the followers catch up: the high watermark reaches the log end
    before = len(records(st, OFFSETS_TOPIC))
    while st.cleaner.run() is not None:
        pass
    return st, before, len(records(st, OFFSETS_TOPIC))


def test_offset_commits_are_compacted_under_fast_segments() -> None:
    """fast: __consumer_offsets rolls 100 KiB segments (offsets.topic.segment.bytes), so
    the cleaner compacts the commits of the rolled segment, keeping the latest per key;
    only the active segment's commits stay whole. The same for the other internal
    topics' segment sizes."""
    st, before, after = _commit_a_lot("fast")
    # under segment.bytes' 1 MiB minimum: internal.segment.bytes, as Kafka's tests do
    t = st.topics[OFFSETS_TOPIC]
    assert (st.topic_config(t, "segment.bytes"), t.configs["internal.segment.bytes"]) == \
        ("1048576", "102400")
    assert before == 1400
    assert after < 100  # at most the active segment's 100 KiB of commits
    gc_offsets = [parse_offset_value(r.value).offset for r in records(st, OFFSETS_TOPIC)
                  if parse_offset_key(r.key) == ("g", "t", 0)]
    assert gc_offsets[-1] == 699
    for key in ("transaction.state.log.segment.bytes",
                "share.coordinator.state.topic.segment.bytes"):
        assert st.config[key] == "102400"


def test_kafka_fidelity_keeps_kafkas_internal_segments() -> None:
    """kafka: Kafka's 100 MiB segments, so the same commits stay in the active segment,
    uncleaned; an explicit offsets.topic.segment.bytes wins over either mode's."""
    st, before, after = _commit_a_lot("kafka")
    t = st.topics[OFFSETS_TOPIC]
    assert st.topic_config(t, "segment.bytes") == "104857600"
    assert "internal.segment.bytes" not in t.configs
    assert before == after == 1400
    for key in ("transaction.state.log.segment.bytes",
                "share.coordinator.state.topic.segment.bytes"):
        assert st.config[key] == "104857600"
    st, before, after = _commit_a_lot("kafka", **{"offsets.topic.segment.bytes": "1048576"})
    assert after < before / 2
    st, before, after = _commit_a_lot("fast", **{"offsets.topic.segment.bytes": "104857600"})
    assert before == after == 1400


def _subscription(*topics: str) -> bytes:
    """ConsumerProtocolSubscription v0: the consumer protocol's member metadata."""
    out = struct.pack(">hi", 0, len(topics))
    for t in topics:
        out += struct.pack(">h", len(t)) + t.encode()
    return out + struct.pack(">i", -1)


def _classic_member(gc: GroupCoordinator, group: str, *topics: str,
                    protocol_type: str = "consumer") -> str:
    """One classic member (of the consumer protocol, subscribed to ``topics``), alone in
    ``group``'s Stable generation 1; sessions of two minutes (the tests tick past a
    one-minute retention)."""
    protocols = [("range", _subscription(*topics))]
    first = gc.join_group(group, "", None, protocol_type, protocols, 120_000, 120_000,
                          client_id="c", client_host="/h", version=7)
    gc.tick()
    mid = first.result["member_id"]
    joined = gc.join_group(group, mid, None, protocol_type, protocols, 120_000, 120_000,
                           client_id="c", client_host="/h", version=7)
    gc.tick()
    assert joined.result["error_code"] == E.NONE and joined.result["generation_id"] == 1
    gc.sync_group(group, mid, 1, assignments=[(mid, b"")])
    assert gc.groups[group].state == "Stable"
    return mid


def test_an_empty_classic_groups_offsets_expire_retention_after_it_became_empty() -> None:
    """Kafka 4.4's ClassicGroup.offsetExpirationCondition: an Empty group with a
    protocol type counts offsets.retention from when it became Empty (its
    currentStateTimestamp), whatever the commit times, even of a commit made after;
    while it is a Stable consumer group with known subscriptions, only the offsets of
    topics it does not subscribe to expire, from their commit."""
    st, clock, gc, tc = harness(**{"offsets.retention.minutes": "1",
                                   "offsets.retention.check.interval.ms": "1000"})
    st.create_topic("u", 1, 3)
    mid = _classic_member(gc, "g", "t")
    committed = gc.commit_offsets("g", mid, 1, [("t", [(0, 5, -1, None)]),
                                                ("u", [(0, 7, -1, None)])], version=8)
    assert committed == [("t", [(0, E.NONE)]), ("u", [(0, E.NONE)])]
    for _ in range(9):  # 90 s, the member heartbeating
        clock.advance(10_000)
        assert gc.heartbeat("g", mid, 1) == E.NONE
        st.tick()
    assert set(gc.offsets["g"]) == {("t", 0)}  # "u": not subscribed, its minute is up
    assert gc.leave_group("g", [(mid, None)]) == (E.NONE, [E.NONE])
    assert gc.groups["g"].state == "Empty"
    clock.advance(1_000)
    st.tick()
    assert ("t", 0) in gc.offsets["g"]  # 91 s after its commit, 1 s after the group emptied
    clock.advance(29_000)
    gc.commit_offsets("g", "", -1, [("t", [(1, 9, -1, None)])])  # an admin's, 30 s in
    clock.advance(29_000)
    st.tick()
    assert set(gc.offsets["g"]) == {("t", 0), ("t", 1)}  # 59 s after it became Empty
    clock.advance(1_000)
    st.tick()
    assert "g" not in gc.offsets  # both: a minute after it became Empty


def test_a_consumer_groups_offsets_of_topics_it_does_not_subscribe_to_expire() -> None:
    """Kafka 4.4's ConsumerGroup: offsets expire from their commit in any state, but
    cleanupExpiredOffsets keeps those of the topics the group subscribes to."""
    st, clock, gc, tc = harness(**{"offsets.retention.minutes": "1",
                                   "offsets.retention.check.interval.ms": "1000"})
    st.create_topic("u", 1, 3)
    r = gc.consumer_group_heartbeat("cg", "m", 0, rebalance_timeout_ms=60_000,
                                    subscribed_topic_names=["t"], topic_partitions=[],
                                    client_id="c")
    epoch = r["member_epoch"]
    owned = [{"topic_id": st.topics["t"].id, "partitions": [0, 1]}]
    committed = gc.commit_offsets("cg", "m", epoch, [("t", [(0, 5, -1, None)]),
                                                     ("u", [(0, 7, -1, None)])])
    assert committed == [("t", [(0, E.NONE)]), ("u", [(0, E.NONE)])]
    for _ in range(7):  # 70 s, the member heartbeating
        clock.advance(10_000)
        r = gc.consumer_group_heartbeat("cg", "m", epoch, topic_partitions=owned)
        assert r["error_code"] == E.NONE
        st.tick()
    assert set(gc.offsets["cg"]) == {("t", 0)}


def test_expiry_passes_over_groups_that_keep_their_offsets_and_counts_what_it_drops() -> None:
    """A Stable classic group of another protocol than the consumer's (Connect's) keeps
    every offset (Kafka: no expiration condition); the groups after it in the table are
    still looked at; expire_offsets answers how many it dropped."""
    clock = ManualClock()
    st = new_cluster(3, clock, **{"offsets.topic.num.partitions": "3",
                                  "transaction.state.log.num.partitions": "3",
                                  "offsets.retention.minutes": "1"}).state
    st.create_topic("t", 2, 3)
    gc = GroupCoordinator(st)
    log = CoordinatorLog(st, gc, TransactionCoordinator(st, gc))
    gc.ensure_offsets_topic()
    mid = _classic_member(gc, "connect", "t", protocol_type="connect")
    assert gc.commit_offsets("connect", mid, 1, [("t", [(0, 1, -1, None)])],
                             version=8) == [("t", [(0, E.NONE)])]
    gc.commit_offsets("simple", "", -1, [("t", [(0, 2, -1, None), (1, 3, -1, None)])])
    gc.commit_offsets("simple2", "", -1, [("t", [(0, 4, -1, None)])])
    assert list(gc.offsets) == ["connect", "simple", "simple2"]
    clock.advance(61_000)
    assert log.expire_offsets(st.now()) == 3
    assert set(gc.offsets) == {"connect"}
    assert log.expire_offsets(st.now()) == 0


def test_an_empty_group_left_without_offsets_is_deleted() -> None:
    """Kafka 4.4's cleanupGroupMetadata: a classic or consumer group that is empty and
    holds no offsets (none committed, or all expired) is deleted at the next check; a
    group with members, or with an offset not yet expired, is kept. (Kafka 4.4 was seen
    doing so: test_offset_expiry_kafka.py.)"""
    st, clock, gc, tc = harness(**{"offsets.retention.minutes": "1",
                                   "offsets.retention.check.interval.ms": "1000"})
    left = _classic_member(gc, "left", "t")
    _classic_member(gc, "stable", "t")
    committed = _classic_member(gc, "committed", "t")
    assert gc.commit_offsets("committed", committed, 1, [("t", [(0, 5, -1, None)])],
                             version=8) == [("t", [(0, E.NONE)])]
    r = gc.consumer_group_heartbeat("cg", "m", 0, rebalance_timeout_ms=60_000,
                                    subscribed_topic_names=["t"], topic_partitions=[],
                                    client_id="c")
    assert r["error_code"] == E.NONE
    assert gc.consumer_group_heartbeat("cg", "m", -1)["error_code"] == E.NONE
    for g, mid in (("left", left), ("committed", committed)):
        assert gc.leave_group(g, [(mid, None)]) == (E.NONE, [E.NONE])
    assert {g: gc.groups[g].state for g in gc.groups} == {
        "left": "Empty", "stable": "Stable", "committed": "Empty", "cg": "Empty"}
    clock.advance(1_000)
    st.tick()
    assert sorted(gc.groups) == ["committed", "stable"]
    assert [g["group_id"] for g in gc.list_groups()] == ["stable", "committed"]
    clock.advance(60_000)  # the committed offset expires a minute after its group emptied
    st.tick()
    assert sorted(gc.groups) == ["stable"] and "committed" not in gc.offsets


def test_a_pending_transactional_offset_keeps_its_partition_and_its_group() -> None:
    """Kafka 4.4's cleanupExpiredOffsets: a partition whose offset a TxnOffsetCommit of
    an open transaction holds keeps its committed offset past the retention, and the
    group is not deleted while the transaction is open; once it ends, both go."""
    st, clock, gc, tc = harness(**{"offsets.retention.minutes": "1",
                                   "offsets.retention.check.interval.ms": "1000"})
    gc.commit_offsets("g", "", -1, [("t", [(0, 5, -1, None), (1, 6, -1, None)])])
    assert gc.txn_offset_commit("g", 7, "", -1, [("t", [(0, 8, -1, None)])]) == [
        ("t", [(0, E.NONE)])]
    gc.txn_offset_commit("pending-only", 7, "", -1, [("t", [(1, 9, -1, None)])])
    clock.advance(61_000)
    st.tick()
    assert set(gc.offsets["g"]) == {("t", 0)}  # (t, 1) expired, (t, 0) held
    assert "g" in gc.groups and "pending-only" in gc.groups
    gc.complete_txn("g", 7, commit=False)
    gc.complete_txn("pending-only", 7, commit=False)
    clock.advance(1_000)
    st.tick()
    assert "g" not in gc.offsets and "g" not in gc.groups
    assert "pending-only" not in gc.groups
