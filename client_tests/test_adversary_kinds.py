"""Every kind of adversarial fault acts, seen over the wire (a kind made a
no-op must turn a test red, not only change the record).

Each test fires exactly one fault through ``Adversary.script`` (the replay hook the
shrinker uses: no draw, only the named request meets it) and checks with raw requests
what a client sees: the answer the cluster's new state gives, a closed connection, a
record kept or truncated, a lagging high watermark, a member expired, a session gone.
The unit tests (tests/test_adversary.py) check the same kinds on the domain; these
check the dispatcher's half too (holding, dropping, answering from the state).

emulator_only: the adversary is the emulator's own mode.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Producer

from emulator import Cluster
from emulator.blocking_client import BlockingConnection, ConnectionClosed
from emulator.faults.adversary import (
    COORDINATOR_MOVE_OFFSET_FETCH,
    FOLLOWER_LAG,
    FOLLOWER_LAG_MS,
    KICK,
    LEADER_MOVE,
    LEADER_MOVE_AFTER_APPEND,
    LOST_RESPONSE,
    REBALANCE,
    SESSION_EVICTED,
    SLOW_MARKERS,
    SLOW_MARKERS_MS,
    STALE_LAG_MS,
    STALE_METADATA,
    UNREPLICATED_LEADER_MOVE,
    draw,
)
from emulator.testing import wait_for
from wire.errors import ErrorCode as E
from wire.records import build_batch

pytestmark = pytest.mark.emulator_only

# Kafka's timing stays (adversarial keeps it); groups join at once and accept short
# sessions, so a kick's hold is about a second.
CONFIG = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "500"}


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with Cluster(fidelity="adversarial", seed=0, config=CONFIG) as c:
        c.adversary.script = frozenset()  # nothing fires unless a test names it
        c.create_topic("k", 1, 3)
        yield c


def _conn(c: Cluster, broker: int, client_id: str) -> BlockingConnection:
    b = c.state.brokers[broker]
    return BlockingConnection.connect(b.host, b.port, client_id=client_id, timeout=15)


def _partition(c: Cluster, topic: str = "k", index: int = 0):  # noqa: ANN202 - Partition
    return c.state.topics[topic].partitions[index]


def _produce(conn: BlockingConnection, acks: int, value: bytes = b"v") -> dict:
    body = {"acks": acks, "timeout_ms": 10000, "topic_data": [
        {"name": "k", "partition_data": [{"index": 0, "records": build_batch([(b"k", value)])}]}]}
    return conn.call(0, 10, body)["responses"][0]["partition_responses"][0]


def _latest(c: Cluster, broker: int, isolation: int = 0) -> int:
    """ListOffsets LATEST from ``broker``: the high watermark (read_uncommitted) or the
    last stable offset (read_committed)."""
    with _conn(c, broker, "checker") as conn:
        r = conn.call(2, 7, {"replica_id": -1, "isolation_level": isolation, "topics": [
            {"name": "k", "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                          "timestamp": -1}]}]})
    p = r["topics"][0]["partitions"][0]
    # -1 while the broker's own metadata has not yet caught up with a move (callers wait)
    return int(p["offset"]) if p["error_code"] == 0 else -1


def _fire(c: Cluster, *keys: tuple[str, int, str, int, str]) -> None:
    c.adversary.script = frozenset(keys)


def _seed_with(what: str, low: int, high: int, want: int, *parts: object) -> int:
    """A seed whose drawn duration (``low`` + draw * (``high`` - ``low``)) is at least
    ``want`` ms: the tests that look inside a window want a wide one."""
    return next(s for s in range(1000)
                if low + int(draw(s, what, *parts) * (high - low)) >= want)


def test_lost_response_closes_the_connection_after_the_write(cluster: Cluster) -> None:
    c = cluster
    leader = _partition(c).leader
    _fire(c, ("lost", leader, "Produce", 1, LOST_RESPONSE))
    with _conn(c, leader, "lost") as conn, pytest.raises(ConnectionClosed):
        _produce(conn, -1)
    wait_for(lambda: _latest(c, leader) == 1, "the record the lost answer was for")


def test_leader_move_before_a_produce_is_answered_from_the_new_state(cluster: Cluster
                                                                     ) -> None:
    c = cluster
    p = _partition(c)
    leader, epoch = p.leader, p.leader_epoch
    _fire(c, ("lm", leader, "Produce", 1, LEADER_MOVE))
    with _conn(c, leader, "lm") as conn:
        answer = _produce(conn, -1)
    assert answer["error_code"] == E.NOT_LEADER_OR_FOLLOWER, answer
    assert p.leader != leader and p.leader_epoch > epoch
    # the hint names another broker (the new leader, or -1 while this broker's own
    # metadata has not caught up): never the refusing broker itself
    assert answer["current_leader"]["leader_id"] != leader, answer
    assert p.log_end_offset == 0  # refused: nothing written


def test_leader_move_after_append_refuses_a_write_that_stays(cluster: Cluster) -> None:
    c = cluster
    p = _partition(c)
    leader = p.leader
    _fire(c, ("la", leader, "Produce", 1, LEADER_MOVE_AFTER_APPEND))
    with _conn(c, leader, "la") as conn:
        answer = _produce(conn, -1)
    assert answer["error_code"] == E.NOT_LEADER_OR_FOLLOWER, answer
    assert p.leader != leader
    wait_for(lambda: _latest(c, p.leader) == 1, "the landed write at the new leader")


def test_unreplicated_leader_move_loses_an_acknowledged_acks_1_write(cluster: Cluster
                                                                     ) -> None:
    c = cluster
    p = _partition(c)
    leader = p.leader
    _fire(c, ("one", leader, "Produce", 1, UNREPLICATED_LEADER_MOVE))
    with _conn(c, leader, "one") as conn:
        answer = _produce(conn, 1)
    assert answer["error_code"] == 0 and answer["base_offset"] == 0, answer
    new = p.leader
    assert new != leader
    # the old leader truncates to the new leader's log: the acknowledged record is gone
    wait_for(lambda: c.call(lambda: p.logs[leader].log_end_offset) == 0,
             "the old leader truncated")
    wait_for(lambda: _latest(c, new) == 0, "the new leader's high watermark")


def test_follower_lag_holds_the_high_watermark_back(cluster: Cluster) -> None:
    c = cluster
    p = _partition(c)
    leader = p.leader
    c.adversary.seed = _seed_with("lag-ms", *FOLLOWER_LAG_MS, 1300, "lag", leader, 1)
    _fire(c, ("lag", leader, "Produce", 1, FOLLOWER_LAG))
    with _conn(c, leader, "lag") as conn:
        assert _produce(conn, 1)["error_code"] == 0
    assert _latest(c, leader) == 0  # the followers are not fetching: no high watermark
    assert sorted(p.isr) == sorted(p.replicas)  # still in sync (replica.lag.time.max.ms)
    wait_for(lambda: _latest(c, leader) == 1, "the followers fetching again")


def test_coordinator_move_before_a_request_answers_not_coordinator(cluster: Cluster
                                                                   ) -> None:
    c = cluster
    with _conn(c, 1, "find") as conn:
        def coordinator() -> int:
            r = conn.call(10, 4, {"key_type": 0, "coordinator_keys": ["g"]})
            return int(r["coordinators"][0]["node_id"])
        wait_for(lambda: coordinator() > 0, "a coordinator for g")
        before = coordinator()
    with _conn(c, before, "co-setup") as conn:  # the coordinator has loaded the group
        wait_for(lambda: conn.call(9, 8, {"groups": [{"group_id": "g", "topics": None}],
                                          "require_stable": False})["groups"][0][
            "error_code"] == 0, "the coordinator serving g")
    _fire(c, ("co", before, "OffsetFetch", 1, COORDINATOR_MOVE_OFFSET_FETCH))
    with _conn(c, before, "co") as conn:
        r = conn.call(9, 8, {"groups": [{"group_id": "g", "topics": None}],
                             "require_stable": False})
    assert r["groups"][0]["error_code"] == E.NOT_COORDINATOR, r
    assert c.adversary.services.groups.topic.coordinator_for("g", False) != before


def _member(c: Cluster, group: str, client: str, session_ms: int) -> tuple[
        BlockingConnection, str, int]:
    """A classic group of one member, joined and synced on the coordinator."""
    with _conn(c, 1, client) as conn:
        wait_for(lambda: conn.call(10, 4, {"key_type": 0, "coordinator_keys": [group]})[
            "coordinators"][0]["error_code"] == 0, "a coordinator")
        node = conn.call(10, 4, {"key_type": 0, "coordinator_keys": [group]})[
            "coordinators"][0]["node_id"]
    conn = _conn(c, node, client)
    join = {"group_id": group, "session_timeout_ms": session_ms,
            "rebalance_timeout_ms": 5000, "member_id": "", "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}]}

    def joined() -> dict | None:
        r = conn.call(11, 7, join)
        if r["error_code"] == E.MEMBER_ID_REQUIRED:
            join["member_id"] = r["member_id"]
            r = conn.call(11, 7, join)
        return r if r["error_code"] == 0 else None
    r = wait_for(joined, "JoinGroup answered")
    member, generation = r["member_id"], r["generation_id"]
    sync = conn.call(14, 5, {"group_id": group, "generation_id": generation,
                             "member_id": member, "protocol_type": "consumer",
                             "protocol_name": "range",
                             "assignments": [{"member_id": member, "assignment": b""}]})
    assert sync["error_code"] == 0, sync
    return conn, member, generation


def test_rebalance_and_kick_reach_a_member_on_its_heartbeats(cluster: Cluster) -> None:
    c = cluster
    conn, member, generation = _member(c, "rg", "rg-member", 1000)
    node = c.adversary.services.groups.topic.coordinator_for("rg", False)
    hb = {"group_id": "rg", "generation_id": generation, "member_id": member}
    _fire(c, ("rg-member", node, "Heartbeat", 1, REBALANCE),
          ("rg-member", node, "Heartbeat", 2, KICK))
    with conn:
        assert conn.call(12, 4, hb)["error_code"] == E.REBALANCE_IN_PROGRESS
        started = time.monotonic()
        assert conn.call(12, 4, hb)["error_code"] == E.UNKNOWN_MEMBER_ID
        # held until the coordinator's own session timer expired the member (1 s)
        assert time.monotonic() - started >= 0.5
    assert [f.kind for f in c.adversary.record if f.kind != STALE_METADATA] == [
        REBALANCE, KICK]


def test_session_evicted_answers_fetch_session_id_not_found(cluster: Cluster) -> None:
    c = cluster
    leader = _partition(c).leader
    fetch = {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
             "isolation_level": 0, "session_id": 0, "session_epoch": 0, "rack_id": "",
             "topics": [{"topic": "k", "partitions": [
                 {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}],
             "forgotten_topics_data": []}
    _fire(c, ("sess", leader, "Fetch", 2, SESSION_EVICTED))
    with _conn(c, leader, "sess") as conn:
        first = conn.call(1, 12, fetch)
        assert first["error_code"] == 0 and first["session_id"] > 0, first
        again = conn.call(1, 12, dict(fetch, session_id=first["session_id"],
                                      session_epoch=1, topics=[]))
    assert again["error_code"] == E.FETCH_SESSION_ID_NOT_FOUND, again


def test_slow_markers_hold_the_last_stable_offset_back(cluster: Cluster) -> None:
    c = cluster
    tid = "slow-tx"
    c.adversary.seed = _seed_with("marker-ms", *SLOW_MARKERS_MS, 800, tid, 1)
    _fire(c, (tid, -1, "EndTxn", 1, SLOW_MARKERS))
    p = Producer({"bootstrap.servers": c.bootstrap_servers, "transactional.id": tid,
                  "linger.ms": 0})
    p.init_transactions(30)
    p.begin_transaction()
    p.produce("k", b"x", partition=0)
    p.commit_transaction(30)
    leader = _partition(c).leader
    # the markers come at least 800 ms after EndTxn (Kafka's own delay is ~15 ms): a
    # read_committed reader still waits well after the commit returned
    time.sleep(0.3)
    assert _latest(c, leader, isolation=1) < _latest(c, leader)  # markers not yet written
    wait_for(lambda: _latest(c, leader, isolation=1) == _latest(c, leader),
             "the markers written")
    assert any(f.kind == SLOW_MARKERS for f in c.adversary.record)


def test_stale_metadata_makes_one_broker_learn_late() -> None:
    seed = _seed_with("stale-lag", *STALE_LAG_MS, 900)
    with Cluster(fidelity="adversarial", seed=seed, config=CONFIG) as c:
        stale = next(f.broker for f in c.adversary.record if f.kind == STALE_METADATA)
        c.adversary.script = frozenset()
        other = next(b for b in sorted(c.state.brokers) if b != stale)
        with _conn(c, other, "admin") as admin, _conn(c, stale, "reader") as reader:
            r = admin.call(19, 7, {"topics": [{"name": "fresh", "num_partitions": 1,
                                               "replication_factor": 3, "assignments": [],
                                               "configs": []}], "timeout_ms": 10000,
                                   "validate_only": False})
            assert r["topics"][0]["error_code"] == 0, r
            ask = {"topics": [{"name": "fresh", "topic_id": bytes(16)}],
                   "allow_auto_topic_creation": False,
                   "include_topic_authorized_operations": False}
            assert reader.call(3, 12, ask)["topics"][0]["error_code"] == \
                E.UNKNOWN_TOPIC_OR_PARTITION
            wait_for(lambda: reader.call(3, 12, ask)["topics"][0]["error_code"] == 0,
                     "the stale broker learning of the topic")


def test_share_lock_expiry_holds_an_acknowledgement_past_the_locks() -> None:
    """A share consumer's ShareAcknowledge held until its records' acquisition locks ran
    out: the coordinator's own timer released them, the acknowledgement finds them no
    longer acquired (INVALID_RECORD_STATE), and they are delivered again."""
    from client_tests.test_share_groups_raw import (
        assigned,
        coordinator,
        fetch,
        heartbeat,
        setup,
    )
    config = {**CONFIG, "group.share.min.record.lock.duration.ms": "1000",
              "group.share.record.lock.duration.ms": "1000"}
    with Cluster(fidelity="adversarial", seed=0, config=config) as c:
        c.adversary.script = frozenset()
        tid, leader = setup(c, "sk", "sg", 2)
        node = coordinator(c, "sg")
        with _conn(c, node, "share-member") as gconn, \
                _conn(c, leader, "share-member") as lconn:
            r = heartbeat(gconn, "sg", "m1", 0, ["sk"])
            epoch = assigned(gconn, "sg", "m1", r, tid, [0])
            assert epoch > 0
            got = fetch(lconn, "sg", "m1", 0, tid, wait=5000)
            (p,) = got["responses"][0]["partitions"]
            assert p["acquired_records"][0]["first_offset"] == 0, p
            _fire(c, ("share-member", leader, "ShareAcknowledge", 1, "share_lock_expiry"))
            ack = lconn.call(79, 1, {"group_id": "sg", "member_id": "m1",
                                     "share_session_epoch": 1, "topics": [{
                                         "topic_id": tid, "partitions": [{
                                             "partition_index": 0,
                                             "acknowledgement_batches": [{
                                                 "first_offset": 0, "last_offset": 1,
                                                 "acknowledge_types": [1]}]}]}]})
            assert ack["responses"][0]["partitions"][0]["error_code"] == \
                E.INVALID_RECORD_STATE, ack
            again = fetch(lconn, "sg", "m1", 2, tid, wait=5000)
            (p,) = again["responses"][0]["partitions"]
            assert p["acquired_records"][0]["delivery_count"] == 2, p
        assert any(f.kind == "share_lock_expiry" for f in c.adversary.record)
