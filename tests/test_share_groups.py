"""KIP-932 share groups as pure state on a manual clock.

Share-partitions (acquisition locks and their timeout, delivery counts and the delivery
count limit, ACCEPT/RELEASE/REJECT/RENEW/GAP, archived records, the SPSO moving), share
sessions, membership and the simple assignor, the admin offsets and the share
coordinator's state APIs, and state surviving a leader move.
"""

from __future__ import annotations

import pytest
from cluster_sim import new_cluster

from emulator.cluster import controller
from emulator.cluster.clock import ManualClock
from emulator.cluster.group_configs import parse_duration_ms
from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.share import group_offsets
from emulator.coordinators.share.coordinator import SharePartitionManager
from emulator.coordinators.share.groups import simple_assign
from emulator.coordinators.share.partition import (
    ACQUIRE,
    LEADER_MOVED,
    LOCK_TIMEOUT,
    MEMBER_GONE,
    TRANSITIONS,
    InFlightRecord,
    SharePartition,
)
from emulator.coordinators.share.partition import (
    AcknowledgeType as A,
)
from emulator.coordinators.share.partition import (
    RecordState as S,
)
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import build_batch

G = "sg"
LOCK = 30_000


class Harness:
    def __init__(self, partitions: int = 1, rf: int = 1) -> None:
        self.clock = ManualClock()
        self.state = new_cluster(3, self.clock, **{"offsets.topic.num.partitions": "3"}).state
        self.gc = GroupCoordinator(self.state)
        self.sc = SharePartitionManager(self.state, self.gc)
        self.topic = self.state.create_topic("t", partitions, rf)
        self.tid = self.topic.id
        self.sc.set_group_config(G, "share.auto.offset.reset", "earliest")
        for p in range(partitions):  # what a member's ShareGroupHeartbeat initializes
            self.sc.initialize_state(G, self.tid, p, 1, -1)

    def produce(self, n: int, index: int = 0, per_batch: int = 1) -> None:
        p = self.topic.partitions[index]
        for _ in range(0, n, per_batch):
            batch = build_batch([(None, b"v")] * per_batch)
            r = self.state.append(p.leader, "t", index, batch, -1)
            assert r.error == E.NONE
        self.state.tick()

    def leader(self, index: int = 0) -> int:
        return self.topic.partitions[index].leader

    def acquire(self, member: str, max_records: int = 500, index: int = 0):
        return self.sc.acquire(self.leader(index), G, member, self.tid, index, max_records,
                               1 << 20)[1]

    def ack(self, member: str, first: int, last: int, *types: int, index: int = 0,
            renew: bool = False) -> None:
        self.sc.acknowledge(self.leader(index), G, member, self.tid, index,
                            [(first, last, list(types))], renew)

    def sp(self, index: int = 0) -> SharePartition:
        return self.sc.partitions[(G, self.tid, index)]


# ---- share-partitions ------------------------------------------------------------------
def test_no_record_goes_to_two_consumers_at_once() -> None:
    h = Harness()
    h.produce(10)
    a = h.acquire("a", max_records=4)
    b = h.acquire("b", max_records=100)
    assert a.ranges == [(0, 3, 1)]
    assert b.ranges == [(4, 9, 1)]
    assert h.acquire("c").ranges == []  # everything is locked


def test_accept_moves_the_start_offset() -> None:
    h = Harness()
    h.produce(5)
    h.acquire("a")
    h.ack("a", 0, 2, A.ACCEPT)
    assert h.sp().start_offset == 3
    h.ack("a", 3, 4, A.ACCEPT)
    assert h.sp().start_offset == 5 and not h.sp().records


def test_released_records_are_redelivered_with_a_higher_delivery_count() -> None:
    h = Harness()
    h.produce(3)
    h.acquire("a")
    h.ack("a", 1, 1, A.RELEASE)
    got = h.acquire("b")
    assert got.ranges == [(1, 1, 2)]
    assert h.sp().start_offset == 0  # 0 and 2 still held by a


def test_rejected_records_are_archived_never_redelivered() -> None:
    h = Harness()
    h.produce(3)
    h.acquire("a")
    h.ack("a", 0, 2, A.REJECT, A.ACCEPT, A.REJECT)
    assert h.sp().start_offset == 3
    assert h.acquire("b").ranges == []


def test_lock_timeout_releases_records_of_a_crashed_consumer() -> None:
    h = Harness()
    h.produce(4)
    h.acquire("crashed")
    h.clock.advance(LOCK - 1)
    h.sc.tick()
    assert h.acquire("b").ranges == []
    h.clock.advance(1)
    assert h.sc.tick()
    assert h.acquire("b").ranges == [(0, 3, 2)]
    with pytest.raises(KafkaError) as e:  # the stale lock's owner can no longer ack
        h.ack("crashed", 0, 0, A.ACCEPT)
    assert e.value.code == E.INVALID_RECORD_STATE


def test_group_lock_duration_applies() -> None:
    h = Harness()
    h.sc.set_group_config(G, "share.record.lock.duration.ms", "15000")
    h.produce(1)
    h.acquire("a")
    h.clock.advance(15_000)
    h.sc.tick()
    assert h.acquire("b").ranges == [(0, 0, 2)]
    with pytest.raises(KafkaError) as e:
        h.sc.set_group_config(G, "share.record.lock.duration.ms", "1000")  # below the minimum
    assert e.value.code == E.INVALID_CONFIG


def test_delivery_count_limit_archives() -> None:
    h = Harness()
    h.sc.set_group_config(G, "share.delivery.count.limit", "3")
    h.produce(1)
    for attempt in (1, 2, 3):
        assert h.acquire("a").ranges == [(0, 0, attempt)]
        h.ack("a", 0, 0, A.RELEASE)
    assert h.sp().start_offset == 1  # archived after the 3rd delivery
    assert h.acquire("a").ranges == []


def test_delivery_count_limit_by_lock_timeouts() -> None:
    h = Harness()  # Kafka's default limit: 5
    h.produce(1)
    for attempt in range(1, 6):
        assert h.acquire("a").ranges == [(0, 0, attempt)]
        h.clock.advance(LOCK)
        h.sc.tick()
    assert h.sp().start_offset == 1 and h.acquire("a").ranges == []


def test_renew_extends_the_lock() -> None:
    h = Harness()
    h.produce(1)
    h.acquire("a")
    h.clock.advance(LOCK - 1000)
    h.ack("a", 0, 0, A.RENEW, renew=True)
    h.clock.advance(LOCK - 1000)
    h.sc.tick()
    assert h.sp().records[0].state == S.ACQUIRED
    h.ack("a", 0, 0, A.ACCEPT)
    assert h.sp().start_offset == 1
    h.produce(1)
    h.acquire("a")
    with pytest.raises(KafkaError) as e:  # RENEW needs IsRenewAck (ShareFetch v2)
        h.ack("a", 1, 1, A.RENEW)
    assert e.value.code == E.INVALID_REQUEST
    h.sc.set_group_config(G, "share.renew.acknowledge.enable", "false")
    with pytest.raises(KafkaError) as e:  # the group turned RENEW off (KAFKA-20161)
        h.ack("a", 1, 1, A.RENEW, renew=True)
    assert e.value.code == E.INVALID_RECORD_STATE


@pytest.mark.parametrize("first,last,types,code", [
    (5, 4, [1], E.INVALID_REQUEST),  # first > last
    (0, 2, [1, 1], E.INVALID_REQUEST),  # neither one type nor one per offset
    (0, 0, [9], E.INVALID_REQUEST),  # unknown type
    (0, 7, [1], E.INVALID_REQUEST),  # past the acquired records (Kafka 4.4)
    (3, 4, [1], E.INVALID_REQUEST),  # never acquired
])
def test_bad_acknowledgements(first: int, last: int, types: list[int], code: int) -> None:
    h = Harness()
    h.produce(3)
    h.acquire("a")
    with pytest.raises(KafkaError) as e:
        h.sc.acknowledge(h.leader(), G, "a", h.tid, 0, [(first, last, types)], False)
    assert e.value.code == code
    assert all(r.state == S.ACQUIRED for r in h.sp().records.values())  # all or nothing


def test_acknowledging_another_members_or_finished_records() -> None:
    h = Harness()
    h.produce(2)
    h.acquire("a")
    with pytest.raises(KafkaError) as e:
        h.ack("b", 0, 0, A.ACCEPT)
    assert e.value.code == E.INVALID_RECORD_STATE
    h.ack("a", 1, 1, A.ACCEPT)
    with pytest.raises(KafkaError) as e:
        h.ack("a", 1, 1, A.ACCEPT)  # twice
    assert e.value.code == E.INVALID_RECORD_STATE


def test_whole_batches_are_acquired_and_gaps_archived() -> None:
    h = Harness()
    h.produce(6, per_batch=3)
    got = h.acquire("a", max_records=1)
    assert got.ranges == [(0, 2, 1)]  # MaxRecords bends to the batch boundary
    h.ack("a", 0, 2, A.GAP)
    assert h.sp().start_offset == 3


def test_record_limit_mode_splits_batches() -> None:
    h = Harness()
    h.produce(6, per_batch=3)
    got = h.sc.acquire(h.leader(), G, "a", h.tid, 0, 4, 1 << 20, record_limit=True)[1]
    assert got.ranges == [(0, 3, 1)]  # the second batch is cut after its first record
    got = h.sc.acquire(h.leader(), G, "b", h.tid, 0, 10, 1 << 20, record_limit=True)[1]
    assert got.ranges == [(4, 5, 1)]


def test_max_record_locks_bounds_in_flight() -> None:
    h = Harness()
    h.sc.set_group_config(G, "share.partition.max.record.locks", "100")
    h.produce(150, per_batch=50)
    assert h.acquire("a", max_records=1000).ranges == [(0, 99, 1)]
    assert h.acquire("b").ranges == []
    h.ack("a", 0, 49, A.ACCEPT)
    assert h.acquire("b").ranges == [(100, 149, 1)]


def test_latest_is_the_default_reset() -> None:
    h = Harness()
    h.sc.set_group_config(G, "share.auto.offset.reset", None)
    h.produce(3)
    assert h.acquire("a").ranges == []
    h.produce(2)
    assert h.acquire("a").ranges == [(3, 4, 1)]


def test_by_duration_reset() -> None:
    assert parse_duration_ms("PT1M") == 60_000 and parse_duration_ms("P1DT1.5S") == 86_401_500
    with pytest.raises(ValueError):
        parse_duration_ms("1 hour")


def test_leader_move_keeps_acknowledged_state_and_frees_acquired_records() -> None:
    h = Harness(rf=3)
    h.produce(4)
    old = h.leader()
    h.acquire("a")
    h.ack("a", 0, 1, A.ACCEPT)
    controller.broker_crashed(h.state, old)
    h.state.tick()
    assert h.leader() != old
    with pytest.raises(KafkaError) as e:
        h.sc.acquire(old, G, "b", h.tid, 0, 10, 1 << 20)
    assert e.value.code == E.NOT_LEADER_OR_FOLLOWER
    got = h.acquire("b")
    # acknowledged records stay done; the lost acquisition is not counted (Kafka 4.4
    # persists a delivery count with an acknowledgement or release only)
    assert got.ranges == [(2, 3, 1)]
    assert h.sp().start_offset == 2


# ---- sessions ------------------------------------------------------------------------
def test_share_session_epochs() -> None:
    h = Harness()
    b = h.leader()
    tp = [(h.tid, 0)]
    s = h.sc.session_for_fetch(b, G, "m", 0, tp, [], False)
    assert s.epoch == 1 and s.partitions == {(h.tid, 0)}
    with pytest.raises(KafkaError) as e:
        h.sc.session_for_fetch(b, G, "m", 5, [], [], False)
    assert e.value.code == E.INVALID_SHARE_SESSION_EPOCH
    assert h.sc.session_for_fetch(b, G, "m", 1, [], tp, False).partitions == set()
    with pytest.raises(KafkaError) as e:
        h.sc.session_for_fetch(b, G, "other", 1, [], [], False)
    assert e.value.code == E.SHARE_SESSION_NOT_FOUND
    with pytest.raises(KafkaError) as e:
        h.sc.session_for_fetch(b, G, "m", 0, tp, [], True)  # acks on the initial request
    assert e.value.code == E.INVALID_REQUEST
    with pytest.raises(KafkaError) as e:
        h.sc.session_for_acknowledge(b, G, "m", 0)
    assert e.value.code == E.INVALID_SHARE_SESSION_EPOCH


def test_closing_a_session_releases_the_members_records() -> None:
    h = Harness()
    h.produce(2)
    b = h.leader()
    h.sc.session_for_fetch(b, G, "m", 0, [(h.tid, 0)], [], False)
    h.acquire("m")
    assert h.sc.session_for_fetch(b, G, "m", -1, [], [], False) is None
    h.sc.close_session(b, G, "m")
    assert h.acquire("n").ranges == [(0, 1, 2)]


# ---- membership ------------------------------------------------------------------------
def hb(h: Harness, member: str, epoch: int, topics=("t",)) -> dict:
    return h.sc.share_group_heartbeat(G, member, epoch, rack_id=None,
                                      subscribed_topic_names=list(topics) if topics else None)


def test_members_share_partitions() -> None:
    h = Harness(partitions=2)
    r1 = hb(h, "m1", 0)
    # a new group's first member: epoch 2 (Kafka 4.4); the share-partitions are
    # initialized already (Harness), so assigned at once
    assert r1["error_code"] == 0 and r1["member_epoch"] == 2
    assert r1["assignment"]["topic_partitions"] == [{"topic_id": h.tid, "partitions": [0, 1]}]
    h.clock.advance(1_000)  # group.share.assignment.interval.ms: one assignment a second
    r2 = hb(h, "m2", 0)
    h.clock.advance(1_000)
    r3 = hb(h, "m3", 0)
    r1 = hb(h, "m1", r1["member_epoch"], topics=None)
    assert r1["member_epoch"] == r3["member_epoch"] == 4
    parts = {m: r["assignment"]["topic_partitions"][0]["partitions"]
             for m, r in (("m1", r1), ("m3", r3))}
    assert parts == {"m1": [0], "m3": [0]}  # three members, two partitions: 0 is shared
    assert r2["member_epoch"] == 3
    r2 = hb(h, "m2", 3, topics=None)
    assert r2["member_epoch"] == 4 and r2["assignment"]["topic_partitions"][0]["partitions"] == [1]
    assert hb(h, "m2", 4, topics=None)["assignment"] is None  # nothing new


def test_one_target_assignment_per_interval() -> None:
    """Kafka 4.4 (measured): members joining within group.share.assignment.interval.ms of
    the last assignment get the last one's epoch and nothing new; the next heartbeat after
    the interval computes one for the group epoch reached meanwhile."""
    h = Harness(partitions=2)
    assert hb(h, "m1", 0)["member_epoch"] == 2
    r2 = hb(h, "m2", 0)
    assert (r2["member_epoch"], r2["assignment"]) == (2, {"topic_partitions": []})
    r3 = hb(h, "m3", 0)
    assert r3["member_epoch"] == 2
    (d,) = h.sc.describe_share_groups([G])
    assert (d["group_epoch"], d["assignment_epoch"]) == (4, 2)
    h.clock.advance(999)
    assert hb(h, "m2", 2, topics=None)["member_epoch"] == 2
    h.clock.advance(1)
    r2 = hb(h, "m2", 2, topics=None)
    assert r2["member_epoch"] == 4 and r2["assignment"]["topic_partitions"]
    # a member leaving within the interval: the group epoch moves, the assignment waits
    assert hb(h, "m3", -1, topics=None)["member_epoch"] == -1
    (d,) = h.sc.describe_share_groups([G])
    assert (d["group_epoch"], d["assignment_epoch"]) == (5, 4)
    h.sc.set_group_config(G, "share.assignment.interval.ms", "0")
    assert hb(h, "m1", 2, topics=None)["member_epoch"] == 5


def test_simple_assignor() -> None:
    t = b"t" * 16
    assert simple_assign(["a", "b"], [(t, 0), (t, 1), (t, 2)]) == {"a": {t: {0, 2}},
                                                                  "b": {t: {1}}}
    assert simple_assign(["a", "b", "c"], [(t, 0)]) == {m: {t: {0}} for m in "abc"}


@pytest.mark.parametrize("member,epoch,topics,code", [
    ("", 0, ("t",), E.INVALID_REQUEST),
    ("m", 0, None, E.INVALID_REQUEST),
    ("m", -2, ("t",), E.INVALID_REQUEST),
    ("ghost", 3, None, E.UNKNOWN_MEMBER_ID),
    ("ghost", -1, None, E.UNKNOWN_MEMBER_ID),
    ("m1", 7, None, E.FENCED_MEMBER_EPOCH),
])
def test_heartbeat_errors(member: str, epoch: int, topics, code: int) -> None:
    h = Harness()
    hb(h, "m1", 0)
    assert hb(h, member, epoch, topics)["error_code"] == code


def test_group_of_another_type_and_max_size() -> None:
    h = Harness()
    h.gc.consumer_group_heartbeat("cg", "x", 0, instance_id=None, rebalance_timeout_ms=1000,
                                  subscribed_topic_names=["t"], server_assignor=None,
                                  topic_partitions=[])
    r = h.sc.share_group_heartbeat("cg", "m", 0, rack_id=None, subscribed_topic_names=["t"])
    assert r["error_code"] == E.GROUP_ID_NOT_FOUND
    assert r["error_message"] == "Group cg is not a share group."
    h.state.config["group.share.max.size"] = "1"
    hb(h, "m1", 0)
    assert hb(h, "m2", 0)["error_code"] == E.GROUP_MAX_SIZE_REACHED


def test_session_timeout_fences_the_member_and_releases_its_records() -> None:
    h = Harness()
    h.sc.set_group_config(G, "share.record.lock.duration.ms", "60000")
    h.produce(2)
    r = hb(h, "m1", 0)
    r2 = hb(h, "m2", 0)
    h.acquire("m1")
    h.clock.advance(44_000)
    assert hb(h, "m2", r2["member_epoch"], topics=None)["error_code"] == E.NONE
    h.clock.advance(1_000)
    h.sc.tick()
    assert set(h.sc.groups[G].members) == {"m2"}
    assert hb(h, "m1", r["member_epoch"], topics=None)["error_code"] == E.UNKNOWN_MEMBER_ID
    assert h.acquire("m2").ranges == [(0, 1, 2)]


def test_leave_and_list_describe_delete() -> None:
    h = Harness()
    hb(h, "m1", 0)
    rows = h.sc.list_share_groups(types=["share"])
    assert rows == [{"group_id": G, "protocol_type": "share", "group_state": "Stable",
                     "group_type": "share"}]
    assert h.sc.list_share_groups(types=["consumer"]) == []
    assert h.sc.delete_group(G) == E.NON_EMPTY_GROUP
    assert hb(h, "m1", 2, topics=None)["member_epoch"] == 2
    assert hb(h, "m1", -1, topics=None)["member_epoch"] == -1
    (d,) = h.sc.describe_share_groups([G])
    assert d["group_state"] == "Empty" and d["group_epoch"] == 3 and d["members"] == []
    assert h.sc.delete_group(G) == E.NONE
    (d,) = h.sc.describe_share_groups([G])
    assert d["error_code"] == E.GROUP_ID_NOT_FOUND


# ---- admin offsets and the share coordinator -------------------------------------------
def test_alter_describe_delete_offsets() -> None:
    h = Harness()
    h.produce(10)
    assert group_offsets.alter_offsets(h.sc, G, [("t", [(0, 4)]), ("nope", [(0, 1)])])[1]["partitions"][0][
        "error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
    (t,) = group_offsets.describe_offsets(h.sc, G, None, with_lag=True)
    assert t["topic_name"] == "t"
    assert t["partitions"][0]["start_offset"] == 4 and t["partitions"][0]["lag"] == 6
    assert h.acquire("a").ranges == [(4, 9, 1)]
    h.ack("a", 5, 6, A.ACCEPT)
    (t,) = group_offsets.describe_offsets(h.sc, G, [("t", [0])], with_lag=True)
    assert t["partitions"][0]["start_offset"] == 4 and t["partitions"][0]["lag"] == 4
    hb(h, "m", 0)
    with pytest.raises(KafkaError) as e:
        group_offsets.alter_offsets(h.sc, G, [("t", [(0, 0)])])
    assert e.value.code == E.NON_EMPTY_GROUP
    hb(h, "m", -1, topics=None)
    assert group_offsets.delete_offsets(h.sc, G, ["t"])[0]["error_code"] == E.NONE
    (t,) = group_offsets.describe_offsets(h.sc, G, [("t", [0])], with_lag=True)
    assert t["partitions"][0]["start_offset"] == -1
    # Kafka 4.4 answers a group id not in use as a share group without state
    assert group_offsets.describe_offsets(h.sc, "missing", None, with_lag=False) == []
    (t,) = group_offsets.describe_offsets(h.sc, "missing", [("t", [0])], with_lag=False)
    assert (t["partitions"][0]["start_offset"], t["partitions"][0]["leader_epoch"]) == (-1, 0)


def test_state_apis_fence_old_epochs() -> None:
    h = Harness()
    h.sc.initialize_state(G, h.tid, 0, 2, 5)
    h.sc.initialize_state(G, h.tid, 0, 2, 5)  # the same state epoch again: accepted
    with pytest.raises(KafkaError) as e:
        h.sc.initialize_state(G, h.tid, 0, 1, 7)
    assert e.value.code == E.FENCED_STATE_EPOCH
    sp = h.sc.read_state(G, h.tid, 0, leader_epoch=3)
    assert sp.start_offset == 5 and sp.state_batches() == []
    with pytest.raises(KafkaError) as e:
        h.sc.read_state(G, h.tid, 0, leader_epoch=2)
    assert e.value.code == E.FENCED_LEADER_EPOCH
    batches = [
        {"first_offset": 5, "last_offset": 6, "delivery_state": 2, "delivery_count": 1},
        {"first_offset": 7, "last_offset": 7, "delivery_state": 0, "delivery_count": 2}]
    h.sc.write_state(G, h.tid, 0, 3, 3, 5, batches)
    sp = h.sc.read_state(G, h.tid, 0, leader_epoch=3)
    # as written (Kafka 4.4): the start offset stays, acknowledged records stay listed,
    # and the state epoch is Initialize's
    assert (sp.start_offset, sp.state_epoch) == (5, 2)
    assert sp.state_batches() == batches
    with pytest.raises(KafkaError) as e:
        h.sc.write_state(G, h.tid, 0, 1, 3, 5, [])
    assert e.value.code == E.FENCED_STATE_EPOCH
    assert h.sc.state_summary(G, h.tid, 0)["start_offset"] == 5
    h.sc.delete_state(G, h.tid, 0)
    with pytest.raises(KafkaError) as e:
        h.sc.read_state(G, h.tid, 0, leader_epoch=3)
    assert e.value.code == E.INVALID_REQUEST
    assert h.sc.state_summary(G, h.tid, 0)["start_offset"] == -1


def test_share_coordinator_placement() -> None:
    h = Harness()
    key = f"{G}:AAAAAAAAAAAAAAAAAAAAAA:0"
    leader = h.sc.coordinator_for(key)
    assert "__share_group_state" in h.state.topics
    assert h.state.topics["__share_group_state"].is_internal
    h.sc.check_state_coordinator(leader, G, b"\x00" * 16, 0)
    other = next(b for b in (1, 2, 3) if b != leader)
    with pytest.raises(KafkaError) as e:
        h.sc.check_state_coordinator(other, G, b"\x00" * 16, 0)
    assert e.value.code == E.NOT_COORDINATOR
    with pytest.raises(KafkaError) as e:
        h.sc.coordinator_for("no-colons")
    assert e.value.code == E.INVALID_REQUEST


def test_every_record_transition_outside_the_table_is_invalid_record_state() -> None:
    """Walk every (state, event) pair: the table's pairs move, all others are refused."""
    events = [ACQUIRE, LOCK_TIMEOUT, MEMBER_GONE, LEADER_MOVED, *A]
    for state in S:
        for event in events:
            sp = SharePartition(G, b"t" * 16, 0, start_offset=0, next_offset=1)
            rec = sp.records[0] = InFlightRecord(state, delivery_count=1)
            if (state, event) in TRANSITIONS:
                sp._apply(0, rec, event, delivery_limit=5)
                want = TRANSITIONS[(state, event)]
                assert rec.state == (S.AVAILABLE if want == "released" else want)
            else:
                with pytest.raises(KafkaError) as e:
                    sp._apply(0, rec, event, delivery_limit=5)
                assert e.value.code == E.INVALID_RECORD_STATE and rec.state == state


def test_state_writes_are_bounded() -> None:
    h = Harness()
    h.sc.initialize_state(G, h.tid, 0, 1, 0)
    for first, last in ((5, 4), (0, 1 << 40)):
        with pytest.raises(KafkaError) as e:
            h.sc.write_state(G, h.tid, 0, 1, 0, 0, [
                {"first_offset": first, "last_offset": last, "delivery_state": 2,
                 "delivery_count": 1}])
        assert e.value.code == E.INVALID_REQUEST
    assert h.sp().records == {}


# ---- the share group's states, cell by cell ------------------------------------------------
#
# Kafka 4.4's ShareGroup has no table of moves: maybeUpdateGroupState makes it Empty
# without members and Stable with any; validateDeleteGroup and validateOffsetsAlterable
# (validateEmptyGroup) refuse a group that is not Empty with NON_EMPTY_GROUP; a group id
# not in use is described as Dead (GROUP_ID_NOT_FOUND), a ShareGroupHeartbeat joining it
# creates it (getOrMaybeCreateShareGroup), a leave or a heartbeat at a member epoch
# names a group that must exist (shareGroup: GROUP_ID_NOT_FOUND) and a member that must
# too (UNKNOWN_MEMBER_ID), and AlterShareGroupOffsets creates the group it names. Below,
# every event from every state, written out as (state after, error): the cells Kafka
# reaches are KAFKA_SHARE_NEXT. client_tests/test_share_groups_raw.py::test_group_errors
# asks a real broker the Stable refusals, the leave to Empty and the delete to Dead.

KAFKA_SHARE_EVENTS = {
    ("Dead", "join"): ("Stable", E.NONE),
    ("Dead", "heartbeat"): ("Dead", E.GROUP_ID_NOT_FOUND),
    ("Dead", "leave"): ("Dead", E.GROUP_ID_NOT_FOUND),
    ("Dead", "delete"): ("Dead", E.GROUP_ID_NOT_FOUND),
    ("Dead", "alter_offsets"): ("Empty", E.NONE),
    ("Empty", "join"): ("Stable", E.NONE),
    ("Empty", "heartbeat"): ("Empty", E.UNKNOWN_MEMBER_ID),
    ("Empty", "leave"): ("Empty", E.UNKNOWN_MEMBER_ID),
    ("Empty", "delete"): ("Dead", E.NONE),
    ("Empty", "alter_offsets"): ("Empty", E.NONE),
    ("Stable", "join"): ("Stable", E.NONE),  # a second member
    ("Stable", "heartbeat"): ("Stable", E.NONE),
    ("Stable", "leave"): ("Empty", E.NONE),  # its only member
    ("Stable", "leave_one_of_two"): ("Stable", E.NONE),
    ("Stable", "session_expires"): ("Empty", E.NONE),
    ("Stable", "delete"): ("Stable", E.NON_EMPTY_GROUP),
    ("Stable", "alter_offsets"): ("Stable", E.NON_EMPTY_GROUP),
}
KAFKA_SHARE_NEXT = {
    "Dead": {"Dead", "Stable", "Empty"},
    "Empty": {"Empty", "Stable", "Dead"},
    "Stable": {"Stable", "Empty"},  # never Dead: it must be emptied first
}


def _share_state(h: Harness) -> str:
    (d,) = h.sc.describe_share_groups([G])
    assert (d["error_code"] == E.GROUP_ID_NOT_FOUND) == (d["group_state"] == "Dead")
    return d["group_state"]


def _share_event(h: Harness, event: str) -> int:
    """One event on group G (member m1 is its member when Stable); its error code."""
    if event == "join":
        return hb(h, "m2", 0)["error_code"]
    if event == "heartbeat":
        return hb(h, "m1", 2, topics=None)["error_code"]
    if event == "leave":
        return hb(h, "m1", -1, topics=None)["error_code"]
    if event == "leave_one_of_two":
        hb(h, "m2", 0)
        return hb(h, "m1", -1, topics=None)["error_code"]
    if event == "session_expires":
        h.clock.advance(45_000)  # group.share.session.timeout.ms
        h.sc.tick()
        return E.NONE
    if event == "delete":  # DeleteGroups' answer for a share group (api_042)
        code = h.sc.delete_group(G)
        return E.GROUP_ID_NOT_FOUND if code is None else code
    try:
        group_offsets.alter_offsets(h.sc, G, [("t", [(0, 0)])])
    except KafkaError as e:
        return e.code
    return E.NONE


def _share_group_in(state: str) -> Harness:
    h = Harness()
    if state != "Dead":
        assert hb(h, "m1", 0)["member_epoch"] == 2
    if state == "Empty":
        assert hb(h, "m1", -1, topics=None)["error_code"] == E.NONE
    assert _share_state(h) == state
    return h


def test_share_group_states_are_kafkas_in_every_cell() -> None:
    reached: set[tuple[str, str]] = set()
    for (state, event), want in KAFKA_SHARE_EVENTS.items():
        h = _share_group_in(state)
        code = _share_event(h, event)
        assert (_share_state(h), code) == want, (state, event)
        reached.add((state, want[0]))
    assert reached == {(a, b) for a, nexts in KAFKA_SHARE_NEXT.items() for b in nexts}
