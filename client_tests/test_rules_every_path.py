"""Rules of the data path held on every path a client reaches them, on the emulator and
on Apache Kafka 4.4 (each was pinned by one test on one path, or by none).

- ListOffsets LATEST under read_committed answers the last stable offset while a
  transaction is open (the high watermark under read_uncommitted), on the wire and
  through an Admin client, until the commit or abort marker lets it reach the end.
- A batch of exactly max.message.bytes is accepted and one byte more is refused
  MESSAGE_TOO_LARGE (Kafka's check is ``batch size > max``), with the topic's override
  and with the broker's default.
- A stale current_leader_epoch is FENCED_LEADER_EPOCH (a newer one UNKNOWN_LEADER_EPOCH)
  on each request that carries it: Fetch, ListOffsets and OffsetsForLeaderEpoch.
- DeleteRecords must go to the leader: a follower, or a broker with no replica of the
  partition, answers NOT_LEADER_OR_FOLLOWER and deletes nothing.
- acks=all is answered once the high watermark covers the batch: a reader sees the
  high watermark past it the moment the answer comes, and while a follower in the ISR
  lags (emulator: a paused follower) an acks=all produce is not answered at all (its
  timeout: REQUEST_TIMED_OUT) though acks=1 is.
- Disk full on a follower's log dir (emulator: storage faults cannot be injected into
  Kafka here) takes that dir offline when the follower next writes, and shrinks the ISR;
  the leader path is client_tests/test_storage_faults.py's.
"""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import IsolationLevel, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec
from rawkafka import (
    Conn,
    alter_reassignments,
    create_assigned,
    leader_conn,
    partition_leader,
    produce_body,
    produce_error,
    reassignment_results,
    replicas_of,
)

from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.server.purgatory import RETENTION_INTERVAL_S
from emulator.testing import wait_for
from wire.records import Record, build_batch, read_header

Target = Cluster | KafkaTarget
NONE, MESSAGE_TOO_LARGE, NOT_LEADER_OR_FOLLOWER, REQUEST_TIMED_OUT = 0, 10, 6, 7
FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, KAFKA_STORAGE_ERROR = 74, 75, 56


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def _conn_to(cluster: Target, broker: int) -> Conn:
    return Conn(cluster, sorted(cluster.broker_ids).index(broker))


def _list_offset(conn: Conn, topic: str, partition: int = 0, *, timestamp: int = -1,
                 isolation: int = 0, epoch: int = -1) -> tuple[int, int]:
    """ListOffsets v7 of one partition: (error code, offset)."""
    r = conn.call(2, 7, {"replica_id": -1, "isolation_level": isolation, "topics": [
        {"name": topic, "partitions": [{"partition_index": partition,
                                        "current_leader_epoch": epoch,
                                        "timestamp": timestamp}]}]})
    p = r["topics"][0]["partitions"][0]
    return p["error_code"], p["offset"]


# ---- ListOffsets LATEST under read_committed --------------------------------------------
def _admin_latest(admin: AdminClient, topic: str, level: IsolationLevel) -> int:
    tp = TopicPartition(topic, 0)
    got = admin.list_offsets({tp: OffsetSpec.latest()}, isolation_level=level,
                             request_timeout=15)
    return got[tp].result().offset


def test_list_offsets_latest_read_committed_is_the_last_stable_offset(cluster: Target) -> None:
    topic = _name("lso")
    cluster.create_topic(topic, 1, 3)
    boot = cluster.bootstrap_servers
    plain = Producer({"bootstrap.servers": boot, "acks": "all"})
    for i in range(3):
        plain.produce(topic, value=b"plain-%d" % i, partition=0)
    assert plain.flush(30) == 0
    txn = Producer({"bootstrap.servers": boot, "transactional.id": _name("lso-txn")})
    txn.init_transactions(30)
    admin = AdminClient({"bootstrap.servers": boot})
    conn = leader_conn(cluster, topic)
    try:
        txn.begin_transaction()
        for i in range(2):
            txn.produce(topic, value=b"txn-%d" % i, partition=0)
        assert txn.flush(30) == 0  # acks=all: the high watermark is past them
        wait_for(lambda: _list_offset(conn, topic) == (NONE, 5), "the high watermark at 5")
        # the open transaction's first offset (3) is the last stable offset
        assert _list_offset(conn, topic, isolation=1) == (NONE, 3)
        assert _admin_latest(admin, topic, IsolationLevel.READ_COMMITTED) == 3
        assert _admin_latest(admin, topic, IsolationLevel.READ_UNCOMMITTED) == 5
        txn.commit_transaction(30)  # the commit marker at 5
        wait_for(lambda: _list_offset(conn, topic, isolation=1) == (NONE, 6),
                 "the last stable offset past the commit marker")
        assert _list_offset(conn, topic) == (NONE, 6)

        txn.begin_transaction()
        txn.produce(topic, value=b"aborted", partition=0)
        assert txn.flush(30) == 0
        wait_for(lambda: _list_offset(conn, topic) == (NONE, 7), "the high watermark at 7")
        assert _list_offset(conn, topic, isolation=1) == (NONE, 6)
        assert _admin_latest(admin, topic, IsolationLevel.READ_COMMITTED) == 6
        txn.abort_transaction(30)  # the abort marker at 7
        wait_for(lambda: _list_offset(conn, topic, isolation=1) == (NONE, 8),
                 "the last stable offset past the abort marker")
        assert _admin_latest(admin, topic, IsolationLevel.READ_COMMITTED) == 8
    finally:
        conn.close()


# ---- ListOffsets by timestamp and MAX_TIMESTAMP ----------------------------------------
# The by-time tests write records dated a few seconds after 1 January 1970, older than
# Kafka's default retention.ms (7 days): their topics keep records forever, or a retention
# check (Kafka's every 5 minutes, the emulator's every second) deletes them mid-test.
KEEP_FOREVER = {"retention.ms": "-1"}


def _batch_at(timestamps: list[int]) -> bytes:
    """One batch whose records carry these CreateTime timestamps."""
    return build_batch([Record(i, ts, None, b"v") for i, ts in enumerate(timestamps)],
                       timestamp=min(timestamps))


def _by_time(conn: Conn, topic: str, ts: int) -> tuple[int, int, int, int]:
    """ListOffsets v7 of partition 0 by timestamp: (error, offset, timestamp, epoch)."""
    r = conn.call(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                        "timestamp": ts}]}]})
    p = r["topics"][0]["partitions"][0]
    return p["error_code"], p["offset"], p["timestamp"], p["leader_epoch"]


def test_list_offsets_by_timestamp_finds_the_first_record_at_or_after_it(
        cluster: Target) -> None:
    """Kafka's fetchOffsetByTimestamp: the first batch whose max timestamp reaches the
    target, then its first record that does (out-of-order timestamps inside a batch
    count in offset order); nothing at or after it: offset -1, timestamp -1.
    MAX_TIMESTAMP (-3): the first record carrying the largest timestamp. After
    DeleteRecords, only records from the log start offset on are found."""
    topic = _name("by-time")
    cluster.create_topic(topic, 1, 3, config=KEEP_FOREVER)
    conn = leader_conn(cluster, topic)
    try:
        for stamps in ([1000, 3000, 2000], [5000, 5000], [4000]):  # offsets 0-2, 3-4, 5
            assert produce_error(conn.call(0, 9, produce_body(
                topic, 0, _batch_at(stamps), acks=-1))) == NONE
        epoch = partition_leader(cluster, topic)[1]
        want = {0: (0, 1000), 1000: (0, 1000), 1500: (1, 3000), 2500: (1, 3000),
                3000: (1, 3000), 3500: (3, 5000), 4500: (3, 5000), 5000: (3, 5000)}
        for ts, (offset, found) in want.items():
            assert _by_time(conn, topic, ts) == (NONE, offset, found, epoch), ts
        assert _by_time(conn, topic, 5001) == (NONE, -1, -1, -1)
        assert _by_time(conn, topic, -3) == (NONE, 3, 5000, epoch)  # MAX_TIMESTAMP
        # the log starts at 4 now: offset 3 (the first 5000) is gone
        assert _delete_records(conn, topic, 0, 4) == (NONE, 4)
        assert _by_time(conn, topic, 0) == (NONE, 4, 5000, epoch)
        assert _by_time(conn, topic, 4500) == (NONE, 4, 5000, epoch)
        assert _by_time(conn, topic, 5001) == (NONE, -1, -1, -1)
    finally:
        conn.close()


def test_list_offsets_by_timestamp_skips_a_batchs_records_below_the_log_start(
        cluster: Target) -> None:
    """The first batch whose max timestamp reaches the target may hold the matching
    record only below the log start offset: the search goes on in the next batch."""
    topic = _name("by-time-start")
    cluster.create_topic(topic, 1, 3, config=KEEP_FOREVER)
    conn = leader_conn(cluster, topic)
    try:
        for stamps in ([6000, 1000], [7000]):  # offsets 0-1, 2
            assert produce_error(conn.call(0, 9, produce_body(
                topic, 0, _batch_at(stamps), acks=-1))) == NONE
        epoch = partition_leader(cluster, topic)[1]
        assert _by_time(conn, topic, 5000) == (NONE, 0, 6000, epoch)
        assert _delete_records(conn, topic, 0, 1) == (NONE, 1)
        assert _by_time(conn, topic, 5000) == (NONE, 2, 7000, epoch)
        assert _by_time(conn, topic, 500) == (NONE, 1, 1000, epoch)
    finally:
        conn.close()


def test_list_offsets_max_timestamp_counts_records_below_the_log_start(
        cluster: Target) -> None:
    """MAX_TIMESTAMP looks at every segment the log keeps (Kafka's UnifiedLog: the
    segment with the largest maxTimestampSoFar), so a record DeleteRecords put below the
    log start offset is still its answer, with its batch's leader epoch, until retention
    deletes the segment: here one segment, never rolled. A lookup by a timestamp does
    skip it (the search starts from the log start)."""
    topic = _name("max-ts-start")
    cluster.create_topic(topic, 1, 3, config=KEEP_FOREVER)
    conn = leader_conn(cluster, topic)
    try:
        for stamps in ([5000, 1000], [1500], [3000], [2000]):  # offsets 0-1, 2, 3, 4
            assert produce_error(conn.call(0, 9, produce_body(
                topic, 0, _batch_at(stamps), acks=-1))) == NONE
        epoch = partition_leader(cluster, topic)[1]
        assert _by_time(conn, topic, -3) == (NONE, 0, 5000, epoch)
        assert _delete_records(conn, topic, 0, 3) == (NONE, 3)
        assert _by_time(conn, topic, -3) == (NONE, 0, 5000, epoch)
        assert _by_time(conn, topic, 2500) == (NONE, 3, 3000, epoch)
        assert _by_time(conn, topic, 4000) == (NONE, -1, -1, -1)
        assert _delete_records(conn, topic, 0, -1) == (NONE, 5)  # to the high watermark
        assert _by_time(conn, topic, -3) == (NONE, 0, 5000, epoch)
        assert _by_time(conn, topic, 0) == (NONE, -1, -1, -1)
        assert _special(conn, topic, -2) == (NONE, 5, -1, epoch)
    finally:
        conn.close()


@pytest.mark.emulator_only
def test_list_offsets_by_timestamp_finds_nothing_above_the_high_watermark(
        cluster: Cluster) -> None:
    """Kafka filters what the time lookup finds by the high watermark (a client's
    lookup): a record only a paused follower lacks is not found yet, by a timestamp or
    as MAX_TIMESTAMP's (ReplicaManager answers an offset at or above the last fetchable
    one as nothing; emulator: the follower paused by a fault)."""
    b1, b2, b3 = sorted(cluster.broker_ids)
    topic = _name("by-time-hw")
    create_assigned(cluster, topic, {0: [b1, b2, b3]}, KEEP_FOREVER)
    c = _conn_to(cluster, b1)
    try:
        assert produce_error(c.call(0, 9, produce_body(topic, 0, _batch_at([1000]),
                                                       acks=-1))) == NONE
        cluster.pause_follower(b3, topic=topic)
        assert produce_error(c.call(0, 9, produce_body(topic, 0, _batch_at([2000]),
                                                       acks=1))) == NONE
        assert _list_offset(c, topic) == (NONE, 1)  # the high watermark stays at 1
        epoch = partition_leader(cluster, topic)[1]
        assert _by_time(c, topic, 1500) == (NONE, -1, -1, -1)
        assert _by_time(c, topic, 500) == (NONE, 0, 1000, epoch)
        assert _by_time(c, topic, -3) == (NONE, -1, -1, -1)  # MAX_TIMESTAMP's too
        cluster.resume_follower(b3, topic=topic)
        wait_for(lambda: _by_time(c, topic, 1500) == (NONE, 1, 2000, epoch),
                 "the record found once the high watermark passes it")
        assert _by_time(c, topic, -3) == (NONE, 1, 2000, epoch)
    finally:
        c.close()


def test_list_offsets_max_timestamp_of_records_without_timestamps(cluster: Target) -> None:
    """Records that carry no timestamp (-1, which CreateTime accepts): MAX_TIMESTAMP
    answers the first of them with timestamp -1 and its leader epoch (Kafka 4.4 measured),
    a lookup by time finds nothing."""
    topic = _name("no-timestamps")
    cluster.create_topic(topic, 1, 3)
    conn = leader_conn(cluster, topic)
    try:
        batch = build_batch([Record(0, -1, None, b"v"), Record(1, -1, None, b"w")],
                            timestamp=-1)
        assert produce_error(conn.call(0, 9, produce_body(topic, 0, batch, acks=-1))) == NONE
        epoch = partition_leader(cluster, topic)[1]
        assert _by_time(conn, topic, -3) == (NONE, 0, -1, epoch)
        assert _by_time(conn, topic, 0) == (NONE, -1, -1, -1)
    finally:
        conn.close()


def _special(conn: Conn, topic: str, ts: int, version: int = 11) -> tuple[int, int, int, int]:
    r = conn.call(2, version, {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                        "timestamp": ts}]}]})
    p = r["topics"][0]["partitions"][0]
    return p["error_code"], p["offset"], p["timestamp"], p["leader_epoch"]


def test_list_offsets_special_timestamps(cluster: Target) -> None:
    """EARLIEST (-2) and EARLIEST_LOCAL (-4): the log start offset; LATEST (-1): the high
    watermark; all with no timestamp (-1) and the leader epoch. MAX_TIMESTAMP (-3) of an
    empty log, and without tiered storage LATEST_TIERED (-5) and EARLIEST_PENDING_UPLOAD
    (-6): nothing (-1, -1, -1)."""
    topic = _name("special")
    cluster.create_topic(topic, 1, 3, config=KEEP_FOREVER)
    conn = leader_conn(cluster, topic)
    try:
        epoch = partition_leader(cluster, topic)[1]
        assert _special(conn, topic, -3) == (NONE, -1, -1, -1)  # empty
        for stamps in ([1000, 3000], [2000]):
            assert produce_error(conn.call(0, 9, produce_body(
                topic, 0, _batch_at(stamps), acks=-1))) == NONE
        assert _delete_records(conn, topic, 0, 1) == (NONE, 1)
        assert _special(conn, topic, -2) == (NONE, 1, -1, epoch)
        assert _special(conn, topic, -4) == (NONE, 1, -1, epoch)
        assert _special(conn, topic, -1) == (NONE, 3, -1, epoch)
        assert _special(conn, topic, -3) == (NONE, 1, 3000, epoch)
        assert _special(conn, topic, -5) == (NONE, -1, -1, -1)
        assert _special(conn, topic, -6) == (NONE, -1, -1, -1)
    finally:
        conn.close()


# ---- max.message.bytes -----------------------------------------------------------------
def _batch_of(size: int) -> bytes:
    """An uncompressed batch of exactly ``size`` bytes (log overhead included)."""
    n = size - len(build_batch([(b"k", b"")]))
    for guess in range(max(0, n - 8), n + 1):  # the value's length varint grows with it
        batch = build_batch([(b"k", b"x" * guess)])
        if len(batch) == size:
            return batch
    raise AssertionError(f"no batch of exactly {size} bytes")


@pytest.mark.parametrize("limit", [None, 2000], ids=["broker-default", "topic-override"])
def test_a_batch_of_exactly_max_message_bytes_is_accepted(cluster: Target,
                                                          limit: int | None) -> None:
    topic = _name("mmb")
    config = {} if limit is None else {"max.message.bytes": str(limit)}
    cluster.create_topic(topic, 1, 3, config=config)
    size = limit or 1048588  # Kafka's message.max.bytes default
    conn = leader_conn(cluster, topic)
    try:
        for acks in (1, -1):
            exact, over = _batch_of(size), _batch_of(size + 1)
            assert len(exact) == size and len(over) == size + 1
            assert produce_error(conn.call(0, 9, produce_body(topic, 0, exact, acks))) == NONE
            assert produce_error(conn.call(0, 9, produce_body(topic, 0, over, acks))) == \
                MESSAGE_TOO_LARGE
        assert _list_offset(conn, topic) == (NONE, 2)  # the two exact ones, nothing else
    finally:
        conn.close()


# ---- stale and future leader epochs on every request that carries one ------------------
def _fetch_error(conn: Conn, topic: str, epoch: int, version: int = 12) -> int:
    """Fetch v12 (a consumer's, which a follower may serve: KIP-392) or v10 (before
    KIP-392: the leader's only) of partition 0 from offset 0."""
    r = conn.call(1, version, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0,
                          "max_bytes": 1 << 20, "isolation_level": 0, "session_id": 0,
                          "session_epoch": -1, "topics": [{"topic": topic, "partitions": [
                              {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20,
                               "current_leader_epoch": epoch, "log_start_offset": -1}]}],
                          "forgotten_topics_data": [], "rack_id": ""})
    return r["responses"][0]["partitions"][0]["error_code"]


def _epoch_end_error(conn: Conn, topic: str, epoch: int, asked_epoch: int) -> int:
    r = conn.call(23, 4, {"replica_id": -1, "topics": [{"topic": topic, "partitions": [
        {"partition": 0, "current_leader_epoch": epoch, "leader_epoch": asked_epoch}]}]})
    return r["topics"][0]["partitions"][0]["error_code"]


def _codes(conn: Conn, topic: str, epoch: int) -> dict[str, int]:
    return {"Fetch": _fetch_error(conn, topic, epoch),
            "Fetch v10": _fetch_error(conn, topic, epoch, 10),
            "ListOffsets": _list_offset(conn, topic, epoch=epoch)[0],
            "ListOffsets EARLIEST": _list_offset(conn, topic, timestamp=-2, epoch=epoch)[0],
            "OffsetsForLeaderEpoch": _epoch_end_error(conn, topic, epoch, 0)}


def test_a_stale_leader_epoch_is_fenced_on_every_request_that_carries_one(
        cluster: Target) -> None:
    b1, b2, b3 = sorted(cluster.broker_ids)
    topic = _name("epochs")
    create_assigned(cluster, topic, {0: [b1, b2, b3]})
    leader, epoch = partition_leader(cluster, topic)
    assert leader == b1
    c = _conn_to(cluster, b1)
    every = {"Fetch", "Fetch v10", "ListOffsets", "ListOffsets EARLIEST",
             "OffsetsForLeaderEpoch"}
    assert _codes(c, topic, epoch) == dict.fromkeys(every, NONE)
    assert _codes(c, topic, epoch + 1) == dict.fromkeys(every, UNKNOWN_LEADER_EPOCH)
    # move the leadership (a reordering reassignment, a preferred election): a new epoch
    assert reassignment_results(alter_reassignments(c, [(topic, [(0, [b2, b1, b3])])])) == {
        (topic, 0): (0, None)}
    wait_for(lambda: replicas_of(cluster, topic)[0] == [b2, b1, b3], "the replicas reordered")

    def elected() -> bool:
        r = c.call(43, 2, {"election_type": 0, "topic_partitions": [
            {"topic": topic, "partitions": [0]}], "timeout_ms": 30000})
        code = r["replica_election_results"][0]["partition_result"][0]["error_code"]
        assert code in (0, 84), r  # ELECTION_NOT_NEEDED: done already
        return partition_leader(cluster, topic)[0] == b2

    wait_for(elected, f"{b2} elected")
    new_epoch = partition_leader(cluster, topic)[1]
    assert new_epoch > epoch
    c.close()
    c = _conn_to(cluster, b2)
    try:
        wait_for(lambda: _codes(c, topic, epoch) == dict.fromkeys(every, FENCED_LEADER_EPOCH),
                 "the old epoch fenced on every request")  # b2 learns it a moment later
        assert _codes(c, topic, new_epoch) == dict.fromkeys(every, NONE)
        assert _codes(c, topic, new_epoch + 1) == dict.fromkeys(every, UNKNOWN_LEADER_EPOCH)
    finally:
        c.close()
    # a consumer's Fetch to a follower (KIP-392) is held to the same epoch
    f = _conn_to(cluster, b3)
    try:
        wait_for(lambda: _fetch_error(f, topic, epoch) == FENCED_LEADER_EPOCH,
                 "the old epoch fenced on a follower")
        assert _fetch_error(f, topic, new_epoch) == NONE
        assert _fetch_error(f, topic, new_epoch + 1) == UNKNOWN_LEADER_EPOCH
    finally:
        f.close()


# ---- DeleteRecords goes to the leader --------------------------------------------------
def _delete_records(conn: Conn, topic: str, partition: int, offset: int) -> tuple[int, int]:
    """DeleteRecords v2 of one partition: (error code, low watermark), the answer's names
    checked on the way (the topic and the partition it answers for)."""
    r = conn.call(21, 2, {"topics": [{"name": topic, "partitions": [
        {"partition_index": partition, "offset": offset}]}], "timeout_ms": 10000})
    assert r["throttle_time_ms"] == 0, r
    [t] = r["topics"]
    [p] = t["partitions"]
    assert (t["name"], p["partition_index"]) == (topic, partition), r
    return p["error_code"], p["low_watermark"]


def _delete_records_rule(cluster: Target) -> None:
    b1, b2, b3 = sorted(cluster.broker_ids)
    replicated, lone = _name("dr"), _name("dr-lone")
    # partition 1 of each is the one deleted from (an answer for partition 0 would pass
    # for one that names no partition at all)
    create_assigned(cluster, replicated, {0: [b2, b1, b3], 1: [b1, b2, b3]})
    create_assigned(cluster, lone, {0: [b2], 1: [b1]})
    leader = _conn_to(cluster, b1)
    try:
        for topic in (replicated, lone):
            for i in range(4):
                assert produce_error(leader.call(0, 9, produce_body(
                    topic, 1, build_batch([(None, b"%d" % i)]), acks=-1))) == NONE
        for other in (b2, b3):  # followers of one, no replica of the other
            c = _conn_to(cluster, other)
            try:
                for topic in (replicated, lone):
                    for offset in (2, -1):
                        # refused, and no low watermark (-1) given
                        assert _delete_records(c, topic, 1, offset) == (
                            NOT_LEADER_OR_FOLLOWER, -1)
            finally:
                c.close()
        for topic in (replicated, lone):  # nothing was deleted meanwhile
            assert _list_offset(leader, topic, 1, timestamp=-2) == (NONE, 0)
            assert _delete_records(leader, topic, 1, 2) == (NONE, 2)
            assert _list_offset(leader, topic, 1, timestamp=-2) == (NONE, 2)
            assert _delete_records(leader, topic, 1, -1) == (NONE, 4)  # -1: the HW
    finally:
        leader.close()


def test_delete_records_anywhere_but_the_leader_is_not_leader(cluster: Target) -> None:
    _delete_records_rule(cluster)


def test_delete_records_anywhere_but_the_leader_under_kafkas_timing(
        kafka_timing_cluster: Target) -> None:
    """The same under --fidelity kafka, where each broker first checks its own (lagging)
    view of the metadata."""
    _delete_records_rule(kafka_timing_cluster)


# The emulator alone: its retention pass runs every second, which a test can wait out;
# Kafka's runs 30 s after start, then every 5 minutes (log.retention.check.interval.ms).
@pytest.mark.emulator_only
def test_a_batch_built_without_a_timestamp_outlives_a_retention_pass(
        cluster: Cluster) -> None:
    """``build_batch`` stamps a batch now when its caller names no time, as a producer
    does: under the default retention.ms (7 days) the server's retention pass keeps
    every record. Dated 1970, as it once stamped them, the pass deleted all but the last
    batch and moved the log start offset under the DeleteRecords test above."""
    before_ms = time.time() * 1000
    batches = [build_batch([(None, b"%d" % i)]) for i in range(4)]
    after_ms = time.time() * 1000
    assert all(before_ms - 1 <= read_header(b).max_timestamp <= after_ms + 1 for b in batches)
    topic = _name("stamped-now")
    cluster.create_topic(topic, 1, 3)
    state = cluster.state
    p = cluster.call(lambda: state.get_partition(topic, 0))
    conn = leader_conn(cluster, topic)
    try:
        for batch in batches:
            assert produce_error(conn.call(0, 9, produce_body(
                topic, 0, batch, acks=-1))) == NONE
        # The appends and the high watermark's moves marked the partition before the
        # last answer; the next pass (every second) looks at it and takes the mark.
        wait_for(lambda: cluster.call(lambda: p not in state.retention_marks),
                 "a retention pass over the partition", timeout=10 * RETENTION_INTERVAL_S)
        assert _list_offset(conn, topic, timestamp=-2) == (NONE, 0)
        assert _list_offset(conn, topic) == (NONE, 4)
    finally:
        conn.close()


@pytest.mark.emulator_only
def test_records_without_a_timestamp_live_retention_ms_after_their_segment_was_written(
        cluster: Cluster) -> None:
    """A batch whose records carry no timestamp (-1) is dated, for time retention, by its
    segment's last write (Kafka's LogSegment.largestTimestamp falls back to the segment
    file's last-modified time): it outlives retention passes until retention.ms after
    that write, and then goes (all but the last batch, the emulator's rule). Before, the
    emulator counted -1 as the time and deleted them at the first pass."""
    topic = _name("no-timestamp")
    cluster.create_topic(topic, 1, 3, config={"retention.ms": "3000"})
    state = cluster.state
    p = cluster.call(lambda: state.get_partition(topic, 0))
    conn = leader_conn(cluster, topic)
    try:
        for i in range(4):
            assert produce_error(conn.call(0, 9, produce_body(
                topic, 0, build_batch([(None, b"%d" % i)], timestamp=-1), acks=-1))) == NONE
        written = time.monotonic()
        wait_for(lambda: cluster.call(lambda: p not in state.retention_marks),
                 "a retention pass over the partition", timeout=10 * RETENTION_INTERVAL_S)
        if time.monotonic() - written < 2.5:  # (a pass within retention.ms of the write)
            assert _list_offset(conn, topic, timestamp=-2) == (NONE, 0)
        wait_for(lambda: _list_offset(conn, topic, timestamp=-2) == (NONE, 3),
                 "the three older batches deleted", timeout=15)
    finally:
        conn.close()


# ---- acks=all at the high watermark ----------------------------------------------------
@pytest.mark.parametrize("rf", [1, 3])
def test_an_acks_all_answer_comes_with_the_high_watermark_past_the_batch(
        cluster: Target, rf: int) -> None:
    topic = _name(f"hw{rf}")
    cluster.create_topic(topic, 1, rf)
    writer, reader = leader_conn(cluster, topic), leader_conn(cluster, topic)
    try:
        for i in range(1, 6):
            r = writer.call(0, 9, produce_body(topic, 0, build_batch(
                [(None, b"v")] * i), acks=-1))
            part = r["responses"][0]["partition_responses"][0]
            assert part["error_code"] == NONE, part
            last = part["base_offset"] + i - 1
            # asked right after the answer: the high watermark already covers the batch
            code, hw = _list_offset(reader, topic)
            assert code == NONE and hw > last, (hw, last)
    finally:
        writer.close()
        reader.close()


@pytest.mark.emulator_only
def test_acks_all_is_not_answered_while_an_isr_follower_lags(cluster: Cluster) -> None:
    """A paused follower stays in the ISR (for replica.lag.time.max.ms): the high
    watermark stays put, so acks=all waits out its timeout (REQUEST_TIMED_OUT) while
    acks=1 is answered at once; once the follower catches up, acks=all completes."""
    b1, b2, b3 = sorted(cluster.broker_ids)
    topic = _name("hw-lag")
    create_assigned(cluster, topic, {0: [b1, b2, b3]})
    c = _conn_to(cluster, b1)
    try:
        body = produce_body(topic, 0, build_batch([(None, b"first")]), acks=-1)
        assert produce_error(c.call(0, 9, body)) == NONE
        cluster.pause_follower(b3, topic=topic)
        assert produce_error(c.call(0, 9, produce_body(
            topic, 0, build_batch([(None, b"one")]), acks=1))) == NONE
        body = produce_body(topic, 0, build_batch([(None, b"all")]), acks=-1)
        body["timeout_ms"] = 1500
        assert produce_error(c.call(0, 9, body)) == REQUEST_TIMED_OUT
        assert b3 in replicas_of(cluster, topic)[1]  # still in the ISR: the HW waits for it
        assert _list_offset(c, topic) == (NONE, 1)
        body["timeout_ms"] = 20000
        answered: list[int] = []
        t = threading.Thread(target=lambda: answered.append(produce_error(c.call(0, 9, body))))
        t.start()
        time.sleep(0.5)
        assert not answered  # waiting for the follower
        cluster.resume_follower(b3, topic=topic)
        t.join(20)
        assert answered == [NONE]
        assert _list_offset(c, topic) == (NONE, 4)
    finally:
        c.close()


# ---- disk full on a follower's log dir -------------------------------------------------
META_DIR, DATA_DIR = "/var/kafka/meta-and-data", "/var/kafka/data-2"


@pytest.mark.emulator_only
def test_disk_full_on_a_followers_dir_takes_it_offline_and_shrinks_the_isr(
        tmp_path: Path) -> None:
    """Brokers with two log dirs (client_tests/test_storage_faults.py's layout: partition i
    in dir i mod 2); the follower's data dir fills up. The leader's append succeeds, the
    follower's write of it fails: that dir goes offline (DescribeLogDirs), the follower
    leaves the ISR, acks=all completes on the replicas left, and the follower's other
    dir (its metadata dir) keeps serving."""
    # the high watermark checkpoint (which a full disk fails too) an hour away: only the
    # follower's write of the batch can find the disk full within the test
    with Cluster(brokers=3, port=0, config={
            "log.dirs": f"{META_DIR},{DATA_DIR}",
            "replica.high.watermark.checkpoint.interval.ms": "3600000"},
                 data_dir=str(tmp_path / "data")) as cluster:
        b1, b2, b3 = sorted(cluster.broker_ids)
        topic = _name("full-follower")
        create_assigned(cluster, topic, {0: [b1, b2, b3], 1: [b1, b2, b3]})
        c = _conn_to(cluster, b1)
        try:
            for part in (0, 1):
                assert produce_error(c.call(0, 9, produce_body(
                    topic, part, build_batch([(None, b"before")]), acks=-1))) == NONE
            cluster.disk_full(b2, log_dir=DATA_DIR)
            # partition 1 (in DATA_DIR): the follower's next write fails
            assert produce_error(c.call(0, 9, produce_body(
                topic, 1, build_batch([(None, b"during")]), acks=-1))) == NONE
            wait_for(lambda: replicas_of(cluster, topic, 1)[1] == sorted([b1, b3]),
                     "the ISR without the follower whose disk is full")
            d = _conn_to(cluster, b2)
            try:
                dirs = {r["log_dir"]: r["error_code"]
                        for r in d.call(35, 4, {"topics": None})["results"]}
            finally:
                d.close()
            assert dirs == {META_DIR: NONE, DATA_DIR: KAFKA_STORAGE_ERROR}
            # partition 0 (in META_DIR) keeps its whole ISR
            assert produce_error(c.call(0, 9, produce_body(
                topic, 0, build_batch([(None, b"during")]), acks=-1))) == NONE
            assert replicas_of(cluster, topic, 0)[1] == sorted([b1, b2, b3])
        finally:
            c.close()
