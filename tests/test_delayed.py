"""The domain's waits (emulator/cluster/delayed.py, delayed_produce.py), through the
handlers that map them: a Fetch waits for min.bytes, not for any change; acks=all waits
for the ISR and answers REQUEST_TIMED_OUT when its deadline comes first.

The server (emulator/server/purgatory.py) re-runs ``check`` on each change of the
wait's keys and ``expire`` at its deadline; these tests call them as it would, on a
manual clock, so each step is exact.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from emulator.cluster import leadership
from emulator.cluster.delayed import Delayed
from emulator.cluster.partition import LEADER_HISTORY
from emulator.cluster.state import ClusterState
from emulator.faults.injector import move_leader
from emulator.handlers import api_000_produce, api_001_fetch
from emulator.handlers.base import RequestContext
from emulator.services import build_services
from wire.errors import ErrorCode as E
from wire.records import build_batch

if TYPE_CHECKING:
    from conftest import MakeCluster

# Built at import, before conftest.py dates the batches for the manual clock.
BATCH = build_batch([(None, b"v" * 100)], timestamp=0)


def _fetch(min_bytes: int, max_wait_ms: int) -> dict:
    """Fetch v12 of t-0 from offset 0, with no session."""
    return {"replica_id": -1, "max_wait_ms": max_wait_ms, "min_bytes": min_bytes,
            "max_bytes": 1 << 20, "isolation_level": 0, "session_id": 0,
            "session_epoch": -1,
            "topics": [{"topic": "t", "partitions": [
                {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0,
                 "last_fetched_epoch": -1, "log_start_offset": -1,
                 "partition_max_bytes": 1 << 20}]}],
            "forgotten_topics_data": [], "rack_id": ""}


def _records(resp: dict) -> bytes:
    [topic] = resp["responses"]
    [part] = topic["partitions"]
    assert part["error_code"] == E.NONE, part
    return bytes(part["records"] or b"")


def test_a_waiting_fetch_answers_at_min_bytes_not_at_the_first_change(
        make_cluster: MakeCluster) -> None:
    s, clock, _ = make_cluster()
    s.create_topic("t", 1, 1)
    leader = s.get_partition("t", 0).leader
    ctx = RequestContext(s, leader, 1, 12, 1, "c", services=build_services(s))
    waiting = api_001_fetch.handle(ctx, _fetch(2 * len(BATCH), 500), 12)
    assert isinstance(waiting, Delayed) and waiting.keys == frozenset({("t", 0)})
    assert waiting.check() is None  # nothing changed
    s.append(leader, "t", 0, BATCH, 1)
    s.tick()
    assert waiting.check() is None  # one batch: below min.bytes, still waiting
    s.append(leader, "t", 0, BATCH, 1)
    s.tick()
    answer = waiting.check()
    assert answer is not None and len(_records(answer)) == 2 * len(BATCH)
    # at max.wait a fetch answers what there is, below min.bytes or not
    more = api_001_fetch.handle(ctx, _fetch(10 * len(BATCH), 500), 12)
    assert isinstance(more, Delayed) and more.deadline_ms == s.now() + 500
    clock.advance(500)
    assert len(_records(more.expire())) == 2 * len(BATCH)


def _produce(acks: int, timeout_ms: int, index: int = 0) -> dict:
    return {"transactional_id": None, "acks": acks, "timeout_ms": timeout_ms,
            "topic_data": [{"name": "t", "partition_data": [{"index": index,
                                                             "records": BATCH}]}]}


def _code(resp: dict) -> int:
    [topic] = resp["responses"]
    [part] = topic["partition_responses"]
    return int(part[1] if isinstance(part, tuple) else part["error_code"])


def _parked(s: ClusterState, broker: int, timeout_ms: int = 5000) -> Delayed:
    """An acks=all Produce to t-0 on ``broker``, parked: the followers have not fetched."""
    ctx = RequestContext(s, broker, 0, 9, 1, "c", services=build_services(s))
    waiting = api_000_produce.handle(ctx, _produce(-1, timeout_ms), 9)
    assert isinstance(waiting, Delayed) and waiting.check() is None
    return waiting


def _replicated(s: ClusterState, waiting: Delayed) -> dict:
    """The parked answer once the followers have fetched (five ticks)."""
    for _ in range(5):
        s.tick()
    answer = waiting.check()
    assert answer is not None
    return answer


def test_acks_all_waits_for_the_isr_and_times_out_at_its_deadline(
        make_cluster: MakeCluster) -> None:
    s, clock, _ = make_cluster()
    s.create_topic("t", 1, 3)
    leader = s.get_partition("t", 0).leader
    ctx = RequestContext(s, leader, 0, 9, 1, "c", services=build_services(s))
    waiting = api_000_produce.handle(ctx, _produce(-1, 1000), 9)
    assert isinstance(waiting, Delayed) and waiting.checked
    assert waiting.keys == frozenset({("t", 0)})
    assert waiting.check() is None  # the followers have not fetched it
    assert _code(_replicated(s, waiting)) == E.NONE
    # no follower fetches before the deadline: REQUEST_TIMED_OUT
    late = api_000_produce.handle(ctx, _produce(-1, 1000), 9)
    assert isinstance(late, Delayed) and late.deadline_ms == s.now() + 1000
    clock.advance(1000)
    assert _code(late.expire()) == E.REQUEST_TIMED_OUT
    # acks=1 is answered at once
    assert _code(api_000_produce.handle(ctx, _produce(1, 1000), 9)) == E.NONE


def _leader_hint(resp: dict) -> dict:
    [topic] = resp["responses"]
    [part] = topic["partition_responses"]
    assert part["error_code"] == E.NOT_LEADER_OR_FOLLOWER, part
    return part["current_leader"]


def test_acks_all_answers_as_its_broker_stopped_leading_even_if_it_leads_again(
        make_cluster: MakeCluster) -> None:
    """Kafka's DelayedProduce completes with NOT_LEADER_OR_FOLLOWER the moment its broker
    becomes a follower, naming the leader of that metadata. The emulator looks at a
    parked answer a few loop turns later, when leadership may have come back: the
    answer is still the one of the moment it went away, never the broker naming itself
    the current leader (the soundness check's rule on Produce)."""
    s, clock, f = make_cluster()
    s.create_topic("t", 1, 3)
    p = s.get_partition("t", 0)
    leader, epoch = p.leader, p.leader_epoch
    waiting = _parked(s, leader)
    other = next(b for b in p.isr if b != leader)
    # away and back before the parked answer is looked at again
    move_leader(s, "t", 0, other)
    move_leader(s, "t", 0, leader)
    assert (p.leader, p.leader_epoch) == (leader, epoch + 2)
    answer = waiting.check()
    assert answer is not None
    assert _leader_hint(answer) == {"leader_id": other, "leader_epoch": epoch + 1}


def test_acks_all_goes_on_waiting_through_an_epoch_bump_that_keeps_the_leader(
        make_cluster: MakeCluster) -> None:
    """A new leader epoch with the same leader (a reassignment's bump) deposes nobody:
    Kafka's check asks only whether the broker leads, so the append is acknowledged
    once the ISR has it, not refused."""
    s, clock, f = make_cluster()
    s.create_topic("t", 1, 3)
    p = s.get_partition("t", 0)
    leader, epoch = p.leader, p.leader_epoch
    waiting = _parked(s, leader)
    leadership.apply_change(s, p, leader, list(p.isr), force_epoch_bump=True)
    assert (p.leader, p.leader_epoch) == (leader, epoch + 1)
    assert waiting.check() is None  # still the ISR's to acknowledge
    assert _code(_replicated(s, waiting)) == E.NONE


def test_deposed_names_who_first_took_over_from_an_epochs_leader(
        make_cluster: MakeCluster) -> None:
    """Partition.deposed, which the answer above names: the leader of the current
    epoch is not deposed; a bump that keeps the leader deposes nobody; the first other
    leader after an epoch is the one that took over; and once the epoch is older than
    the LEADER_HISTORY changes the partition remembers, the current leader is named."""
    s, clock, f = make_cluster()
    s.create_topic("t", 1, 3)
    p = s.get_partition("t", 0)
    a, b = p.leader, next(x for x in p.isr if x != p.leader)
    assert p.leader_epoch == 0 and p.deposed(0) is None
    leadership.apply_change(s, p, a, list(p.isr), force_epoch_bump=True)  # epoch 1, a
    assert p.deposed(0) is None and p.deposed(1) is None
    # then b at every even epoch, a at every odd one
    while p.leader_epoch < 21:
        move_leader(s, "t", 0, b if p.leader == a else a)
    assert (p.leader, p.leader_epoch) == (a, 21)
    assert p.deposed(0) == p.deposed(1) == (b, 2)
    assert p.deposed(2) == (a, 3)
    assert p.deposed(20) == (a, 21)
    assert p.deposed(21) is None
    while p.leader_epoch < 40:
        move_leader(s, "t", 0, b if p.leader == a else a)
    assert LEADER_HISTORY == 32  # the changes of epochs 9..40 are remembered
    assert p.deposed(9) == (b, 10)
    assert p.deposed(8) == p.deposed(0) == (b, 40)  # too old: the current leader
    assert p.deposed(39) == (b, 40)
    assert p.deposed(40) is None


def test_acks_all_of_a_deleted_topic_answers_unknown_topic_or_partition(
        make_cluster: MakeCluster) -> None:
    """Kafka completes a partition's delayed produces as the partition is deleted
    (ReplicaManager.stopPartitions), and the partition it no longer hosts answers
    UNKNOWN_TOPIC_OR_PARTITION: so does a parked acks=all append whose topic is gone,
    and one whose partition a topic recreated under the same name does not have."""
    s, clock, f = make_cluster()
    s.create_topic("t", 2, 3)
    leader = s.get_partition("t", 1).leader
    ctx = RequestContext(s, s.get_partition("t", 0).leader, 0, 9, 1, "c",
                         services=build_services(s))
    gone = api_000_produce.handle(ctx, _produce(-1, 5000), 9)
    ctx1 = RequestContext(s, leader, 0, 9, 1, "c", services=build_services(s))
    shrunk = api_000_produce.handle(ctx1, _produce(-1, 5000, index=1), 9)
    assert isinstance(gone, Delayed) and gone.check() is None
    assert isinstance(shrunk, Delayed) and shrunk.check() is None
    s.delete_topic("t")
    answer = gone.check()
    assert answer is not None and _code(answer) == E.UNKNOWN_TOPIC_OR_PARTITION
    s.create_topic("t", 1, 3)  # the same name, partition 0 only
    answer = shrunk.check()
    assert answer is not None and _code(answer) == E.UNKNOWN_TOPIC_OR_PARTITION


def test_acks_all_on_a_partition_led_by_broker_0(make_cluster: MakeCluster) -> None:
    """Broker ids start at 0 (the official images): a partition broker 0 leads is
    acknowledged like any other, not refused as leaderless."""
    s, clock, f = make_cluster([0, 1, 2])
    s.create_topic("t", 1, 3)
    p = s.get_partition("t", 0)
    if p.leader != 0:
        move_leader(s, "t", 0, 0)
    assert p.leader == 0
    waiting = _parked(s, 0)
    assert _code(_replicated(s, waiting)) == E.NONE


def test_acks_all_deposed_answers_not_leader_even_when_first_looked_at_as_it_expires(
        make_cluster: MakeCluster) -> None:
    """Kafka completes the delayed produce the moment its broker becomes a follower, so
    the answer is NOT_LEADER_OR_FOLLOWER naming the new leader; the emulator, looking
    at it only when its timeout fires, must not answer REQUEST_TIMED_OUT instead (the
    new leader has the record, its high watermark not yet)."""
    s, clock, f = make_cluster()
    s.create_topic("t", 1, 3)
    p = s.get_partition("t", 0)
    leader, epoch = p.leader, p.leader_epoch
    first, second = [b for b in p.replicas if b != leader]
    f.apply({"op": "pause_follower", "broker": second, "topic": "t", "partition": 0})
    waiting = _parked(s, leader, 1000)
    for _ in range(5):
        s.tick()
    assert p.logs[first].log_end_offset == 1 and p.high_watermark == 0
    move_leader(s, "t", 0, first)
    clock.advance(1000)
    assert _leader_hint(waiting.expire()) == {"leader_id": first, "leader_epoch": epoch + 1}


def test_acks_all_keeps_an_acknowledged_partitions_answer_while_another_waits(
        make_cluster: MakeCluster) -> None:
    """DelayedProduce looks at a partition until its acks are satisfied, then never
    again: a partition acknowledged while another of the request still waits answers
    NONE even if its leader moves before the request completes."""
    s, clock, f = make_cluster()
    s.create_topic("t", 2, 3)
    p0, p1 = s.get_partition("t", 0), s.get_partition("t", 1)
    leader = p0.leader
    if p1.leader != leader:
        move_leader(s, "t", 1, leader)
    slow = next(b for b in p1.replicas if b != leader)
    f.apply({"op": "pause_follower", "broker": slow, "topic": "t", "partition": 1})
    ctx = RequestContext(s, leader, 0, 9, 1, "c", services=build_services(s))
    req = {"transactional_id": None, "acks": -1, "timeout_ms": 5000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": BATCH},
                                         {"index": 1, "records": BATCH}]}]}
    waiting = api_000_produce.handle(ctx, req, 9)
    assert isinstance(waiting, Delayed)
    for _ in range(5):
        s.tick()
    assert p0.high_watermark == 1 and p1.high_watermark == 0
    assert waiting.check() is None  # partition 0 acknowledged, 1 not
    move_leader(s, "t", 0, next(b for b in p0.isr if b != leader))
    f.apply({"op": "resume_follower", "broker": slow})
    for _ in range(5):
        s.tick()
    answer = waiting.check()
    assert answer is not None
    [topic] = answer["responses"]
    codes = {(part[0] if isinstance(part, tuple) else part["index"]):
             int(part[1] if isinstance(part, tuple) else part["error_code"])
             for part in topic["partition_responses"]}
    assert codes == {0: E.NONE, 1: E.NONE}


def test_acks_all_refused_after_the_append_keeps_its_offsets_and_append_time(
        make_cluster: MakeCluster) -> None:
    """DelayedProduce sets only the error of the append's PartitionResponse: a
    REQUEST_TIMED_OUT (or NOT_ENOUGH_REPLICAS_AFTER_APPEND) answer still carries the
    append's base offset, its log append time (LogAppendTime topics) and the log
    start offset."""
    s, clock, f = make_cluster()
    s.create_topic("t", 1, 3, configs={"message.timestamp.type": "LogAppendTime",
                                       "retention.ms": "-1"})
    p = s.get_partition("t", 0)
    ctx = RequestContext(s, p.leader, 0, 9, 1, "c", services=build_services(s))
    assert _code(api_000_produce.handle(ctx, _produce(1, 1000), 9)) == E.NONE
    f.apply({"op": "pause_follower", "broker": p.replicas[1], "topic": "t", "partition": 0})
    clock.advance(7)
    appended_at = s.now()
    waiting = api_000_produce.handle(ctx, _produce(-1, 1000), 9)
    assert isinstance(waiting, Delayed) and waiting.check() is None
    clock.advance(1000)
    [topic] = waiting.expire()["responses"]
    [part] = topic["partition_responses"]
    assert part["error_code"] == E.REQUEST_TIMED_OUT
    assert (part["base_offset"], part["log_append_time_ms"], part["log_start_offset"]) \
        == (1, appended_at, 0)


def test_acks_all_on_a_topic_deleted_and_created_again_is_unknown_topic(
        make_cluster: MakeCluster) -> None:
    """Kafka completes a delayed produce as it stops a deleted partition:
    UNKNOWN_TOPIC_OR_PARTITION. A topic of the same name created while the answer
    waits is another topic (another id): its high watermark passing the offset must not
    acknowledge a write to the deleted one, nor its leader epoch refuse it as NOT_LEADER."""
    s, clock, f = make_cluster()
    s.create_topic("t", 1, 3)
    leader = s.get_partition("t", 0).leader
    waiting = _parked(s, leader)
    s.delete_topic("t")
    s.create_topic("t", assignments={0: [leader, *(b for b in (1, 2, 3) if b != leader)]})
    s.append(leader, "t", 0, BATCH, 1)
    for _ in range(5):
        s.tick()
    assert s.get_partition("t", 0).high_watermark == 1  # past the waiting append's offset
    answer = waiting.check()
    assert answer is not None and _code(answer) == E.UNKNOWN_TOPIC_OR_PARTITION


def test_acks_all_behind_a_slow_write_answers_once_the_write_is_done(
        make_cluster: MakeCluster) -> None:
    """A slow log dir (the storage fault slow_writes) holds an acks=all answer until its
    write is done, as Kafka's handler thread is busy in the write: the ISR's
    acknowledgement in hand before then is no answer; at the write's end, to the
    millisecond, it answers at once rather than at its timeout."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2]})
    f.apply({"op": "slow_writes", "broker": 1, "delay_ms": 100})
    ctx = RequestContext(s, 1, 0, 9, 1, "c", services=build_services(s))
    written = s.now() + 100
    waiting = api_000_produce.handle(ctx, _produce(-1, 5000), 9)
    assert isinstance(waiting, Delayed) and waiting.not_before_ms == written
    for _ in range(5):
        s.tick()
    assert s.acks_all_done("t", 0, 0, 0) == (True, E.NONE)  # the ISR has it
    assert s.now() < written and waiting.check() is None  # the write is not done
    clock.advance(written - s.now())
    answer = waiting.check()
    assert answer is not None and _code(answer) == E.NONE


def _under_min_isr(make_cluster: MakeCluster) -> tuple[ClusterState, RequestContext]:
    """t-0 on [1, 2, 3] with min.insync.replicas 2, its ISR shrunk to the leader 1 (the
    followers stopped fetching), and a storage fault in force elsewhere (broker 3's
    writes slow): the Produce handler then builds its acknowledgements for any acks."""
    s, clock, f = make_cluster(**{"replica.lag.time.max.ms": "1000"})
    s.create_topic("t", assignments={0: [1, 2, 3]}, configs={"min.insync.replicas": "2"})
    s.tick()
    f.apply({"op": "pause_follower", "broker": 2})
    f.apply({"op": "pause_follower", "broker": 3})
    clock.advance(1001)
    s.append(1, "t", 0, BATCH, 1)
    s.tick()
    assert s.get_partition("t", 0).isr == [1]
    f.apply({"op": "slow_writes", "broker": 3, "delay_ms": 100})
    return s, RequestContext(s, 1, 0, 9, 1, "c", services=build_services(s))


def test_an_acks_1_append_under_min_isr_is_acknowledged_at_once(
        make_cluster: MakeCluster) -> None:
    """min.insync.replicas binds acks=all alone: an acks=1 append to a partition whose ISR
    is below it succeeds, answered at once (no slow write of its own to wait for)."""
    s, ctx = _under_min_isr(make_cluster)
    answer = api_000_produce.handle(ctx, _produce(1, 1000), 9)
    assert isinstance(answer, dict) and _code(answer) == E.NONE


def test_an_acks_all_append_refused_under_min_isr_answers_not_enough_replicas(
        make_cluster: MakeCluster) -> None:
    """An acks=all append the leader refuses because its ISR is below
    min.insync.replicas answers NOT_ENOUGH_REPLICAS (Partition.appendRecordsToLeader),
    never NOT_ENOUGH_REPLICAS_AFTER_APPEND: nothing was appended to wait for."""
    s, ctx = _under_min_isr(make_cluster)
    answer = api_000_produce.handle(ctx, _produce(-1, 1000), 9)
    assert isinstance(answer, dict) and _code(answer) == E.NOT_ENOUGH_REPLICAS


def test_an_empty_produce_under_a_storage_fault_answers_at_once(
        make_cluster: MakeCluster) -> None:
    """A Produce naming no partition has nothing to wait for, slow writes or not: an
    empty answer at once (KafkaApis answers an empty request map)."""
    s, ctx = _under_min_isr(make_cluster)
    for acks in (1, -1):
        req = {"transactional_id": None, "acks": acks, "timeout_ms": 1000,
               "topic_data": []}
        assert api_000_produce.handle(ctx, req, 9)["responses"] == []


def test_an_acks_1_answer_behind_a_slow_write_keeps_its_own_outcome(
        make_cluster: MakeCluster) -> None:
    """An acks=1 append behind a slow log dir is answered when the write is done, with
    the append's own outcome: leadership moving meanwhile makes no NOT_LEADER_OR_FOLLOWER
    of it (only acks=all waits on the leader; Kafka answers acks=1 once appendRecords
    returns)."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2]})
    f.apply({"op": "slow_writes", "broker": 1, "delay_ms": 100})
    ctx = RequestContext(s, 1, 0, 9, 1, "c", services=build_services(s))
    written = s.now() + 100
    waiting = api_000_produce.handle(ctx, _produce(1, 5000), 9)
    # its time alone ends it: no partition's change wakes it, and it was just looked at
    assert isinstance(waiting, Delayed) and waiting.deadline_ms == written
    assert (waiting.keys, waiting.checked) == (frozenset(), True)
    move_leader(s, "t", 0, 2)
    assert waiting.check() is None
    clock.advance(100)
    answer = waiting.check()
    assert answer is not None and _code(answer) == E.NONE
    # the server answers it by its expiry when it first looks at its deadline
    assert _code(waiting.expire()) == E.NONE


def test_acks_all_behind_a_slow_write_still_waits_for_the_isr_after_the_write(
        make_cluster: MakeCluster) -> None:
    """The end of a slow write is no acknowledgement: an acks=all append whose follower
    has not fetched it goes on waiting past the write's end."""
    s, clock, f = make_cluster()
    s.create_topic("t", assignments={0: [1, 2]})
    f.apply({"op": "pause_follower", "broker": 2})
    f.apply({"op": "slow_writes", "broker": 1, "delay_ms": 100})
    ctx = RequestContext(s, 1, 0, 9, 1, "c", services=build_services(s))
    waiting = api_000_produce.handle(ctx, _produce(-1, 5000), 9)
    assert isinstance(waiting, Delayed) and waiting.keys == frozenset({("t", 0)})
    clock.advance(100)
    s.tick()
    assert waiting.check() is None
