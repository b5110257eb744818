"""Fetch over TCP: long polls, byte limits, isolation, offset range, topic IDs."""

from __future__ import annotations

import threading
import uuid

from rawkafka import (
    Conn,
    alter_reassignments,
    create_assigned,
    fetch_body,
    leader_conn,
    partition_leader,
    produce_body,
    reassignment_results,
    replicas_of,
    topic_metadata,
)

from emulator import Cluster
from emulator.testing import wait_for
from wire.records import build_batch, read_header


def whole_batches(records: bytes) -> list[bytes]:
    """The complete batches of a fetched records blob. Kafka cuts the blob at the byte
    limit, so a partial batch may trail (clients drop it), as the emulator does under
    --fidelity kafka; fast sends whole ones."""
    out, pos = [], 0
    while pos + 12 <= len(records):
        end = pos + 12 + int.from_bytes(records[pos + 8:pos + 12], "big")
        if end > len(records):
            break
        out.append(records[pos:end])
        pos = end
    return out


def create(cluster: Cluster, topic: str, partitions: int, rf: int) -> None:
    """create_topic: on Kafka it returns once each leader serves its partition
    (client_tests/targets.py KafkaTarget.wait_for_topic)."""
    cluster.create_topic(topic, partitions, rf)


def part(resp: dict) -> dict:
    return resp["responses"][0]["partitions"][0]


def fill(c: Conn, topic: str, n: int, size: int = 1000) -> None:
    for i in range(n):
        r = c.call(0, 9, produce_body(topic, 0, build_batch([(b"k%d" % i, b"x" * size)]),
                                      acks=-1))
        assert r["responses"][0]["partition_responses"][0]["error_code"] == 0


def test_long_poll_returns_when_data_arrives(cluster: Cluster) -> None:
    create(cluster, "lp", 1, 3)
    reader = leader_conn(cluster, "lp")
    writer = leader_conn(cluster, "lp")
    timer = threading.Timer(0.3, lambda: fill(writer, "lp", 1))
    timer.start()
    resp = reader.call(1, 12, fetch_body("lp", 0, min_bytes=1, max_wait=20_000))
    timer.join()
    p = part(resp)
    assert p["error_code"] == 0 and p["high_watermark"] == 1
    assert read_header(p["records"]).base_offset == 0


def test_long_poll_expires_empty(cluster: Cluster) -> None:
    create(cluster, "idle", 1, 1)
    c = leader_conn(cluster, "idle")
    p = part(c.call(1, 12, fetch_body("idle", 0, min_bytes=1, max_wait=200)))
    assert p["error_code"] == 0 and p["records"] == b""


def test_partition_and_response_byte_limits(cluster: Cluster) -> None:
    create(cluster, "bytes", 1, 3)
    c = leader_conn(cluster, "bytes")
    fill(c, "bytes", 5)
    one = whole_batches(part(c.call(1, 12, fetch_body("bytes", 0, part_max=1500)))["records"])
    assert len(one) == 1
    # The first batch comes whole even when larger than the limit (KIP-74).
    tiny = whole_batches(part(c.call(1, 12, fetch_body("bytes", 2, part_max=10)))["records"])
    assert [read_header(b).base_offset for b in tiny] == [2]
    three = whole_batches(part(c.call(1, 12, fetch_body("bytes", 1, max_bytes=3300)))["records"])
    assert [read_header(b).base_offset for b in three] == [1, 2, 3]


def test_the_byte_limit_cuts_the_next_batch_mid_way(kafka_timing_cluster: Cluster) -> None:
    """As Kafka's log hands out its bytes up to the limit, the answer is exactly the limit
    long: whole batches, then the start of the next one (clients drop it). On the emulator
    under --fidelity kafka (docs/fidelity.md, fetch-partial-batches); fast sends whole
    batches only (test_partition_and_response_byte_limits)."""
    cluster = kafka_timing_cluster
    topic = f"cut-{uuid.uuid4().hex[:8]}"
    create(cluster, topic, 1, 3)
    c = leader_conn(cluster, topic)
    try:
        fill(c, topic, 5)
        size = len(whole_batches(part(c.call(1, 12, fetch_body(topic, 0, part_max=1 << 20)))
                                 ["records"])[0])
        records = part(c.call(1, 12, fetch_body(topic, 0, part_max=size + 100)))["records"]
        assert len(records) == size + 100
        assert [read_header(b).base_offset for b in whole_batches(records)] == [0]
        assert records[size:size + 8] == (1).to_bytes(8, "big")  # the next batch's start
        records = part(c.call(1, 12, fetch_body(topic, 1, max_bytes=3 * size + 7)))["records"]
        assert len(records) == 3 * size + 7
        assert [read_header(b).base_offset for b in whole_batches(records)] == [1, 2, 3]
        # At the end of the log nothing trails: the last batch is whole.
        records = part(c.call(1, 12, fetch_body(topic, 3, part_max=1 << 20)))["records"]
        assert [read_header(b).base_offset for b in whole_batches(records)] == [3, 4]
        assert len(records) == 2 * size
    finally:
        c.close()


def test_offset_out_of_range_and_at_end(cluster: Cluster) -> None:
    create(cluster, "oor", 1, 1)
    c = leader_conn(cluster, "oor")
    fill(c, "oor", 2)
    assert part(c.call(1, 12, fetch_body("oor", 5)))["error_code"] == 1
    at_end = part(c.call(1, 12, fetch_body("oor", 2)))
    assert at_end["error_code"] == 0 and at_end["records"] == b""


def test_fetch_by_topic_id_v13(cluster: Cluster) -> None:
    create(cluster, "ids", 1, 1)
    c = leader_conn(cluster, "ids")
    fill(c, "ids", 1)
    tid = topic_metadata(cluster, "ids")["topic_id"]
    body = fetch_body("ids", 0)
    body["topics"][0]["topic_id"] = tid
    resp = c.call(1, 13, body)
    assert resp["responses"][0]["topic_id"] == tid
    assert part(resp)["error_code"] == 0 and part(resp)["records"]
    body["topics"][0]["topic_id"] = b"\x01" * 16
    assert part(c.call(1, 13, body))["error_code"] == 100  # UNKNOWN_TOPIC_ID


def test_stale_and_future_leader_epochs(cluster: Cluster) -> None:
    """A Fetch naming a leader epoch newer than the leader's is UNKNOWN_LEADER_EPOCH, an
    older one FENCED_LEADER_EPOCH. The epoch moves as on any cluster: the replicas are
    reordered (a reassignment within the same brokers, done at once) and a preferred
    election hands the leadership to the new first replica."""
    b1, b2, b3 = cluster.broker_ids
    topic = f"ep-{uuid.uuid4().hex[:8]}"
    create_assigned(cluster, topic, {0: [b1, b2, b3]})
    leader, epoch = partition_leader(cluster, topic)
    assert leader == b1
    c = Conn(cluster, cluster.broker_ids.index(b1))
    body = fetch_body(topic, 0)
    body["topics"][0]["partitions"][0]["current_leader_epoch"] = epoch + 5
    assert part(c.call(1, 12, body))["error_code"] == 75  # UNKNOWN_LEADER_EPOCH
    body["topics"][0]["partitions"][0]["current_leader_epoch"] = epoch
    assert part(c.call(1, 12, body))["error_code"] == 0
    resp = alter_reassignments(c, [(topic, [(0, [b2, b1, b3])])])
    assert reassignment_results(resp) == {(topic, 0): (0, None)}
    wait_for(lambda: replicas_of(cluster, topic)[0] == [b2, b1, b3], "the replicas reordered")

    def elected() -> bool:
        r = c.call(43, 2, {"election_type": 0, "topic_partitions": [
            {"topic": topic, "partitions": [0]}], "timeout_ms": 30000})
        code = r["replica_election_results"][0]["partition_result"][0]["error_code"]
        assert code in (0, 84), r  # ELECTION_NOT_NEEDED: it happened already
        return partition_leader(cluster, topic)[0] == b2

    wait_for(elected, f"{b2} elected")
    new_epoch = partition_leader(cluster, topic)[1]
    assert new_epoch > epoch
    c.close()
    c = Conn(cluster, cluster.broker_ids.index(b2))
    body["topics"][0]["partitions"][0]["current_leader_epoch"] = epoch
    # b2 learns of its leadership from the metadata log (on Kafka, a moment later)
    wait_for(lambda: part(c.call(1, 12, body))["error_code"] == 74,  # FENCED_LEADER_EPOCH
             "the old epoch fenced")
    body["topics"][0]["partitions"][0]["current_leader_epoch"] = new_epoch
    assert part(c.call(1, 12, body))["error_code"] == 0
    body["topics"][0]["partitions"][0]["current_leader_epoch"] = new_epoch + 1
    assert part(c.call(1, 12, body))["error_code"] == 75
    c.close()


def test_a_consumer_may_fetch_from_a_follower(cluster: Cluster) -> None:
    """KIP-392: a consumer's Fetch v11+ (client metadata) to a follower is served from
    that follower's log, up to the high watermark the follower knows; the same fetch as
    v10 gets NOT_LEADER_OR_FOLLOWER, as every fetch did before 2.4. On both targets."""
    topic = f"fff-{uuid.uuid4().hex[:8]}"
    cluster.create_topic(topic, 1, 3)
    fill(leader_conn(cluster, topic), topic, 3, size=10)
    leader, _epoch = partition_leader(cluster, topic)
    follower = next(b for b in replicas_of(cluster, topic)[0] if b != leader)
    c = Conn(cluster, cluster.broker_ids.index(follower))

    def caught_up() -> dict | None:
        p = part(c.call(1, 12, fetch_body(topic, 0)))
        return p if p["error_code"] == 0 and p["high_watermark"] == 3 else None

    p = wait_for(caught_up, "the follower to serve three records")
    assert [read_header(b).base_offset for b in whole_batches(p["records"])] == [0, 1, 2]
    assert p["log_start_offset"] == 0
    old = {k: v for k, v in fetch_body(topic, 0).items() if k != "rack_id"}
    assert part(c.call(1, 10, old))["error_code"] == 6  # NOT_LEADER_OR_FOLLOWER
