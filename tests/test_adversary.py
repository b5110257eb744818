"""The adversary's decisions (emulator/faults/adversary.py), sans I/O: a pure function of
(seed, client, broker, API, n), so one client's faults do not depend on the others';
every kind of fault is an event that changes the cluster (each test below fails when its
kind is made a no-op); and the soundness check (emulator/faults/soundness.py) names an
answer Kafka could not give."""

from __future__ import annotations

from typing import NamedTuple

import pytest
from cluster_sim import settle

from emulator.cluster.delayed import Delayed
from emulator.cluster.partition import Partition
from emulator.cluster.state import ClusterState
from emulator.coordinators.transactions.metadata import TxnMetadata
from emulator.faults import FaultError, soundness
from emulator.faults.adversary import (
    COORDINATOR_MOVE,
    COORDINATOR_MOVE_OFFSET_FETCH,
    FOLLOWER_LAG,
    KICK,
    KINDS,
    LEADER_MOVE,
    LEADER_MOVE_AFTER_APPEND,
    LOST_RESPONSE,
    REBALANCE,
    SESSION_EVICTED,
    SLOW_MARKERS,
    STALE_METADATA,
    UNREPLICATED_LEADER_MOVE,
    ZOMBIE,
    Adversary,
    draw,
    parse_scale,
)
from emulator.faults.adversary_coordinators import HOLD_SLACK_MS, classic_group_of
from emulator.faults.adversary_rules import (
    GROUP_QUIET_MS,
    KICK_MAX_HOLD_MS,
    KICK_QUIET_MS,
    SHARE_LOCK_EXPIRY,
    Injected,
    appended,
    fail_partition,
    fail_produce,
    group_key,
    metadata_partitions,
)
from emulator.faults.injector import move_leader
from emulator.faults.soundness import Soundness, _replica_id
from emulator.handlers import api_000_produce
from emulator.handlers.base import RequestContext
from emulator.services import build_services
from wire.codec import Row
from wire.errors import ErrorCode as E
from wire.records import build_batch, control_batch


def _produce(acks: int = -1, records: bytes = b"", partitions: tuple[int, ...] = (0, 1)
             ) -> dict:
    return {"acks": acks, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": i, "records": records}
                                         for i in partitions]}]}


PRODUCE = _produce()


def _faults(adv: Adversary, client: str) -> list[tuple]:
    return [f.key() for f in adv.record if f.client_id == client]


def _script(*keys: tuple[str, int, str, int, str]) -> frozenset:
    return frozenset(keys)


def test_draw_is_a_pure_uniform_function_of_its_inputs() -> None:
    assert draw(1, "c", 1, 0, 5) == draw(1, "c", 1, 0, 5)
    assert draw(1, "c", 1, 0, 5) != draw(2, "c", 1, 0, 5)
    values = [draw(3, "c", 1, 0, n) for n in range(4000)]
    assert all(0 <= v < 1 for v in values)
    assert 0.45 < sum(values) / len(values) < 0.55
    assert 0.08 < sum(v < 0.1 for v in values) / len(values) < 0.12


def test_draw_replays_a_seed_named_in_a_report() -> None:
    """A seed is the whole schedule: a failing seed a report or a page names (the
    surveys' seeds in docs/adversary.md) must draw the same on a later emulator, so the
    hash behind it is pinned, value for value."""
    assert draw(1, "c", 1, 0, 5) == 0.6947356920050249
    assert draw(0) == 0.7817924376196929
    assert draw(7, "stale-broker") == 0.7464342980295728


def test_the_record_of_a_fault_is_what_replays_it() -> None:
    """``describe()`` (GET /adversary) shows each fault whole; ``key`` is what replays
    for the same request sequence (not ``seq`` or the seed), ``fault_key`` what a script
    names."""
    f = Injected(3, 9, 2, "c", "Produce", 4, LEADER_MOVE, "moved")
    assert f.as_dict() == {"seq": 3, "seed": 9, "broker": 2, "client_id": "c",
                           "api": "Produce", "n": 4, "kind": LEADER_MOVE, "detail": "moved"}
    assert f.key() == ("c", 2, "Produce", 4, LEADER_MOVE, "moved")
    assert f.fault_key() == ("c", 2, "Produce", 4, LEADER_MOVE)


def test_the_group_a_request_names_is_its_group_id_or_an_offset_fetchs_first() -> None:
    """OffsetFetch v8+ names its groups in a list (the coordinator move takes the
    first's); every other group-keyed API has a group_id, even an empty one."""
    assert group_key(11, {"group_id": "g"}) == "g"
    assert group_key(9, {"group_id": "", "groups": [{"group_id": "a"}, {"group_id": "b"}]}
                     ) == "a"
    assert group_key(9, {"group_id": "g", "groups": [{"group_id": "a"}]}) == "g"
    assert group_key(9, {"group_id": "", "groups": []}) is None
    assert group_key(9, {"group_id": None, "groups": None}) is None
    assert group_key(12, {"group_id": "", "groups": [{"group_id": "a"}]}) is None
    assert group_key(8, {"group_id": None}) is None


def test_the_appended_partitions_of_a_produce_answer(make_cluster) -> None:
    """What the answer-side moves pick from: the partitions answered NONE, in the
    answer's order, as ``Row`` (an appended batch) or dict; a v13 answer's topics by id
    (one the cluster does not know passed over), a partition without an index too."""
    state = make_cluster(3).state
    state.create_topic("t", 3, 3)
    tid = state.topics["t"].id
    answer = {"responses": [
        {"name": "t", "partition_responses": [
            Row((2, 0, 5, -1, 0)), {"index": 0, "error_code": E.NOT_LEADER_OR_FOLLOWER},
            {"index": 1, "error_code": 0, "base_offset": 3}, {"error_code": 0}]},
        {"name": "", "topic_id": b"\x01" * 16, "partition_responses": [Row((0, 0, 1, -1, 0))]},
        {"name": "", "topic_id": tid, "partition_responses": [Row((0, 0, 7, -1, 0)),
                                                              Row((1, 6, -1, -1, 0))]}]}
    assert appended(answer, state) == [("t", 2), ("t", 1), ("t", 0)]
    assert appended(answer) == [("t", 2), ("t", 1)]  # without the state, no id is known
    assert appended({"responses": None}) == appended({}) == []


def test_the_partitions_a_metadata_answer_names_leaders_of() -> None:
    """The after-Metadata move picks among the user topics' partitions answered without
    error (an internal topic's leader is a coordinator's: its own kind moves it)."""
    answer = {"topics": [
        {"name": "gone", "error_code": E.UNKNOWN_TOPIC_OR_PARTITION, "partitions": [
            {"partition_index": 0}]},
        {"name": "t", "error_code": 0, "is_internal": False, "partitions": [
            {"partition_index": 1}, {"partition_index": None}, {"partition_index": 0}]},
        {"name": "__consumer_offsets", "error_code": 0, "is_internal": True,
         "partitions": [{"partition_index": 0}]},
        {"name": None, "error_code": 0, "partitions": [{"partition_index": 0}]},
        {"name": "u", "error_code": 0, "partitions": None},
        {"name": "v", "error_code": 0, "partitions": [{"partition_index": 0}]}]}
    assert metadata_partitions(answer) == [("t", 1), ("t", 0), ("v", 0)]
    assert metadata_partitions({"topics": None}) == metadata_partitions({}) == []


def test_a_failed_produce_partition_is_answered_as_kafkas_purgatory_does(make_cluster
                                                                         ) -> None:
    """Only the partition moved is failed, with -1 offsets and the new leader's hint
    (Kafka's DelayedProduce); the others, the other topics' and the answer's other
    fields stay as they were, and the handler's answer itself is not changed."""
    state = make_cluster(3).state
    state.create_topic("t", 2, 3)
    tid = state.topics["t"].id
    kept = {"index": 0, "error_code": 0, "base_offset": 4}
    other = {"name": "u", "partition_responses": [Row((1, 0, 2, -1, 0))]}
    answer = {"throttle_time_ms": 7, "responses": [
        {"name": "", "topic_id": tid, "partition_responses": [Row((1, 0, 5, -1, 0)), kept]},
        other]}
    failed = fail_produce(answer, "t", 1, E.NOT_LEADER_OR_FOLLOWER, (2, 9), state)
    assert failed["throttle_time_ms"] == 7
    assert failed["responses"][0]["topic_id"] == tid
    assert failed["responses"][0]["partition_responses"] == [
        {"index": 1, "error_code": E.NOT_LEADER_OR_FOLLOWER, "base_offset": -1,
         "current_leader": {"leader_id": 2, "leader_epoch": 9}}, kept]
    assert failed["responses"][1] == other
    assert answer["responses"][0]["partition_responses"][0] == Row((1, 0, 5, -1, 0))
    # a dict partition, by name
    by_name = {"responses": [{"name": "t", "partition_responses": [kept]}]}
    assert fail_produce(by_name, "t", 0, E.NOT_LEADER_OR_FOLLOWER, (0, 1))["responses"][0][
        "partition_responses"] == [fail_partition(kept, E.NOT_LEADER_OR_FOLLOWER, (0, 1))]
    assert fail_partition(kept, 6, (1, 3)) == {
        "index": 0, "error_code": 6, "base_offset": -1,
        "current_leader": {"leader_id": 1, "leader_epoch": 3}}
    assert fail_produce({"responses": None}, "t", 0, 6, (0, 1)) == {"responses": []}


def test_a_clients_faults_replay_whatever_the_other_clients_do(make_cluster) -> None:
    """Which requests meet a fault is a function of the client's own sequence (the
    leader moves the faults make are the same in both runs: same sequence, same moves)."""
    def run(interleave: bool, seed: int = 5) -> list[tuple]:
        sim = make_cluster(3)
        sim.state.create_topic("t", 2, 3)
        adv = Adversary(seed, sim.state, scale={"follower_lag": 0})
        for i in range(200):
            if interleave:
                for _ in range(i % 3):
                    adv.before(2, 9, 7, "b", {"group_id": "g"})  # another client
            adv.before(1, 2, 7, "a", {"topics": []})
            adv.before(1, 0, 9, "a", PRODUCE)
        return [k[:5] for k in _faults(adv, "a")]
    alone, mixed = run(False), run(True)
    assert len(alone) > 5
    assert alone == mixed
    assert run(False, seed=6) != alone


def test_rates_scale_per_kind_and_acks_decide_what_applies(make_cluster) -> None:
    sim = make_cluster(3)
    sim.state.create_topic("t", 2, 3)
    off = Adversary(1, sim.state, scale={"all": 0.0})
    for _ in range(300):
        assert off.before(1, 0, 9, "a", PRODUCE) is None
    only_lost = Adversary(1, sim.state, scale={
        LEADER_MOVE: 0, FOLLOWER_LAG: 0, LEADER_MOVE_AFTER_APPEND: 0,
        UNREPLICATED_LEADER_MOVE: 0})
    for _ in range(300):
        only_lost.before(1, 0, 9, "a", PRODUCE)
        only_lost.before(1, 0, 9, "b", _produce(acks=1))
        assert only_lost.before(1, 0, 9, "c", _produce(acks=0)) is None
    kinds = {(f.client_id, f.kind) for f in only_lost.record}
    assert kinds == {("a", LOST_RESPONSE), ("b", LOST_RESPONSE)}
    # the answer-side leader moves: after an acks=all append only when acks=all, the
    # unreplicated one only after acks=1
    landed = Adversary(1, sim.state, scale={LEADER_MOVE: 0, FOLLOWER_LAG: 0,
                                            LOST_RESPONSE: 0, LEADER_MOVE_AFTER_APPEND: 8,
                                            UNREPLICATED_LEADER_MOVE: 8})
    plans = [(ack, landed.before(1, 0, 9, "a", _produce(acks=ack))) for ack in (1, -1) * 50]
    kinds_by_acks = {(ack, p.rule.kind) for ack, p in plans if p is not None}
    assert kinds_by_acks == {(1, UNREPLICATED_LEADER_MOVE), (-1, LEADER_MOVE_AFTER_APPEND)}


def test_the_offset_fetch_move_is_off_unless_asked_for() -> None:
    """librdkafka 2.16's group consumer hangs on it (docs/adversary.md): named only."""
    from emulator.faults.adversary import RULES
    rule = RULES[9][0]
    assert rule.kind == COORDINATOR_MOVE_OFFSET_FETCH
    assert Adversary(0, None).rate(rule) == 0  # type: ignore[arg-type]
    assert Adversary(0, None, scale={"coordinator_move": 2}).rate(rule) == 0  # type: ignore[arg-type]
    assert Adversary(0, None, scale={COORDINATOR_MOVE_OFFSET_FETCH: 1}).rate(  # type: ignore[arg-type]
        rule) == rule.rate


def test_zombies_are_off_unless_asked_for() -> None:
    assert Adversary(0, None).rate(next(r for r in __import__(  # type: ignore[arg-type]
        "emulator.faults.adversary", fromlist=["RULES"]).RULES[26] if r.kind == ZOMBIE)) == 0


# ---- each kind acts on the cluster (a no-op kind fails here) -------------------------

def test_leader_move_before_a_produce_moves_a_partition_this_broker_leads(make_cluster
                                                                         ) -> None:
    sim = make_cluster(3)
    sim.state.create_topic("t", 2, 3)
    p0 = sim.state.topics["t"].partitions[0]
    leader, epoch = p0.leader, p0.leader_epoch
    adv = Adversary(1, sim.state, script=_script(("a", leader, "Produce", 1, LEADER_MOVE)))
    plan = adv.before(leader, 0, 9, "a", _produce(partitions=(0,)))
    assert plan is not None and plan.post is None and not plan.drop
    assert p0.leader != leader and p0.leader_epoch == epoch + 1 and p0.leader in p0.isr
    # the handler now answers from the state: the broker is no longer the leader
    assert "just before the request" in adv.record[-1].detail
    # Produce v13 names the topic by id alone
    t = sim.state.topics["t"]
    p1 = t.partitions[1]
    leader = p1.leader
    adv = Adversary(1, sim.state, script=_script(("b", leader, "Produce", 1, LEADER_MOVE)))
    assert adv.before(leader, 0, 13, "b", {"acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "", "topic_id": t.id, "partition_data": [{"index": 1, "records": b""}]}]}
                      ) is not None
    assert p1.leader != leader


def test_a_user_topic_named_like_an_internal_one_meets_the_leader_faults(make_cluster
                                                                         ) -> None:
    """Kafka's internal topics are a list of names (Topic.isInternal); a user topic may
    start with ``__`` and its leaders move and its followers lag as any other's. The
    internal ones' partitions are the coordinators', moved by their own kind."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("__orders", 2, 3)
    p0, p1 = state.topics["__orders"].partitions
    leader = p0.leader
    adv = Adversary(1, state, script=_script(("a", leader, "Produce", 1, LEADER_MOVE),
                                             ("b", p1.leader, "Produce", 1, FOLLOWER_LAG)))
    req = {"acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "__orders", "partition_data": [{"index": 0, "records": b""}]}]}
    assert adv.before(leader, 0, 9, "a", req) is not None and p0.leader != leader
    req["topic_data"][0]["partition_data"][0]["index"] = 1
    assert adv.before(p1.leader, 0, 9, "b", req) is not None
    assert [f.kind for f in adv.record] == [LEADER_MOVE, FOLLOWER_LAG]
    services = build_services(state)
    services.groups.topic.ensure()
    offsets = state.topics["__consumer_offsets"].partitions[0]
    leader = offsets.leader
    adv = Adversary(1, state, script=_script(("a", leader, "Produce", 1, LEADER_MOVE),
                                             ("a", leader, "Produce", 2, FOLLOWER_LAG)))
    req = {"acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "__consumer_offsets", "partition_data": [{"index": 0, "records": b""}]}]}
    assert adv.before(leader, 0, 9, "a", req) is None
    assert adv.before(leader, 0, 9, "a", req) is None
    assert offsets.leader == leader and not adv.record


def test_a_clients_requests_move_a_partition_once_per_quiet_window(make_cluster) -> None:
    """Drawn, one client's requests move a partition at most once per
    MOVE_QUIET_REQUESTS of its requests (of any API the adversary looks at); another
    client's requests may move it at once; a script replays its moves regardless."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 1, 3)
    p = state.topics["t"].partitions[0]
    adv = Adversary(1, state, scale={LEADER_MOVE: 100})
    moves = []
    for n in range(1, 60):
        leader = p.leader
        if n % 2:
            adv.before(leader, 0, 9, "a", _produce(partitions=(0,)))
        else:
            adv.before(leader, 2, 7, "a", {"replica_id": -1, "topics": [
                {"name": "t", "partitions": [{"partition_index": 0}]}]})
        if p.leader != leader:
            moves.append(n)
        if n == 2:
            other = p.leader
            adv.before(other, 0, 9, "b", _produce(partitions=(0,)))
            assert p.leader != other
    assert moves == [1, 26, 51]
    assert adv.moved_at == {("a", "t", 0): 51, ("b", "t", 0): 1}
    replay = Adversary(1, state, script=_script(("a", p.leader, "Produce", 1, LEADER_MOVE)))
    replay.moved_at[("a", "t", 0)] = 0
    leader = p.leader
    assert replay.before(leader, 0, 9, "a", _produce(partitions=(0,))) is not None
    assert p.leader != leader


def test_broker_0_leads_and_is_moved_like_any_other(make_cluster) -> None:
    """A cluster may number its brokers from 0 (an image's KAFKA_NODE_ID=0): a
    partition broker 0 leads meets the leader moves as any other, before a request
    and after a Metadata answer."""
    sim = make_cluster([0, 1, 2])
    state = sim.state
    state.create_topic("t", assignments={0: [0, 1, 2], 1: [0, 2, 1]})
    p0, p1 = state.topics["t"].partitions
    adv = Adversary(1, state, script=_script(("a", 0, "Produce", 1, LEADER_MOVE),
                                             ("a", 0, "Metadata", 1, LEADER_MOVE)))
    assert adv.before(0, 0, 9, "a", _produce(partitions=(0,))) is not None
    assert p0.leader == 1
    plan = adv.before(0, 3, 12, "a", {"topics": None})
    assert plan is not None and plan.post is not None
    plan.post({"topics": [{"name": "t", "error_code": 0, "partitions": [
        {"partition_index": 1}]}]})
    assert p1.leader == 2
    assert [f.detail for f in adv.record] == [
        "leader of t-0 moved 0 -> 1 just before the request",
        "leader of t-1 moved 0 -> 2 after the Metadata answer"]


def test_a_leader_move_picks_by_the_seed_among_what_can_move(make_cluster) -> None:
    """Before a request: one of the partitions it names that the broker leads and that
    can move, chosen by the seed (the request's own n among the draw's inputs); a
    partition it names twice counts once. After a Metadata answer: one of the answer's
    partitions, passing over a topic the cluster does not have, a partition index past
    the last, an internal topic and a partition with no other in-sync replica."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", assignments={i: [1, 2, 3] for i in range(8)})
    state.create_topic("u", assignments={0: [2, 1, 3]})
    state.create_topic("solo", assignments={0: [1]})
    parts = state.topics["t"].partitions
    adv = Adversary(5, state, script=_script(("a", 1, "Produce", 3, LEADER_MOVE),
                                             ("a", 2, "Metadata", 1, LEADER_MOVE)))
    names = (0, 1, 2, 3, 4, 5, 6, 7, 7, 8)
    req = {"acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": i, "records": b""} for i in names]},
        {"name": "u", "partition_data": [{"index": 0, "records": b""}]},
        {"name": "nope", "partition_data": [{"index": 0, "records": b""}]}]}
    adv.before(1, 0, 9, "a", req)
    adv.before(1, 0, 9, "a", req)
    assert all(q.leader == 1 for q in parts) and not adv.record
    assert adv.before(1, 0, 9, "a", req) is not None
    moved = [q.index for q in parts if q.leader != 1]
    assert moved == [int(draw(5, "item", "a", 1, 0, 3) * 8)]
    assert adv.record[-1].detail == (f"leader of t-{moved[0]} moved 1 -> 2 just before "
                                     "the request")
    plan = adv.before(2, 3, 12, "a", {"topics": None})
    assert plan is not None and plan.post is not None
    assert plan.post(None) is None
    services = build_services(state)
    services.groups.topic.ensure()
    answer = {"topics": [
        {"name": name, "error_code": 0, "partitions": [{"partition_index": i}]}
        for name, i in (("gone", 0), ("u", 1), ("u", -1), ("__consumer_offsets", 0),
                        ("solo", 0))]}
    assert plan.post(answer) is answer and len(adv.record) == 1
    assert state.topics["u"].partitions[0].leader == 2
    # of u-0 and t-3 (solo-0 cannot move), the seed's draw takes t-3
    answer = {"topics": [{"name": name, "error_code": 0, "partitions": [
        {"partition_index": i}]} for name, i in (("u", 0), ("t", 3), ("solo", 0))]}
    assert plan.post(answer) is answer
    assert state.topics["u"].partitions[0].leader == 2 and parts[3].leader == 2
    assert adv.record[-1].detail == "leader of t-3 moved 1 -> 2 after the Metadata answer"


def test_leader_move_after_metadata_moves_a_partition_of_the_answer(make_cluster) -> None:
    sim = make_cluster(3)
    sim.state.create_topic("t", 1, 3)
    p = sim.state.topics["t"].partitions[0]
    leader = p.leader
    adv = Adversary(1, sim.state, script=_script(("a", 2, "Metadata", 1, LEADER_MOVE)))
    plan = adv.before(2, 3, 12, "a", {"topics": None})
    assert plan is not None and plan.post is not None
    answer = {"topics": [{"name": "t", "error_code": 0, "partitions": [
        {"partition_index": 0, "leader_id": leader}]}]}
    assert plan.post(answer) is answer and p.leader != leader


def test_leader_move_after_append_answers_not_leader_with_the_write_kept(make_cluster
                                                                        ) -> None:
    sim = make_cluster(3)
    sim.state.create_topic("t", 2, 3)
    p = sim.state.topics["t"].partitions[0]
    leader = p.leader
    adv = Adversary(1, sim.state, script=_script(
        ("a", leader, "Produce", 1, LEADER_MOVE_AFTER_APPEND)))
    plan = adv.before(leader, 0, 9, "a", _produce(partitions=(0,)))
    assert plan is not None and plan.post is not None
    answer = {"responses": [{"name": "t", "partition_responses": [Row((0, 0, 5, -1, 0))]}],
              "throttle_time_ms": 0}
    failed = plan.post(answer)
    part = failed["responses"][0]["partition_responses"][0]
    assert part["error_code"] == E.NOT_LEADER_OR_FOLLOWER and p.leader != leader
    assert part["current_leader"] == {"leader_id": p.leader, "leader_epoch": p.leader_epoch}


def test_leader_moves_after_append_act_on_a_produce_v13_answer_by_topic_id(make_cluster
                                                                           ) -> None:
    """Produce v13 names topics by id: its answer's name is empty. Both answer-side moves
    find the partition by the id (they matched the name only, so they never acted on a
    client that sends v13, as Kafka 4.x's Java producer does)."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 2, 3)
    t = state.topics["t"]
    p = t.partitions[0]

    def by_id(req: dict) -> dict:  # v13: the request names the topic by id too
        return {**req, "topic_data": [{**td, "name": "", "topic_id": t.id}
                                      for td in req["topic_data"]]}

    leader = p.leader
    adv = Adversary(1, state, script=_script(
        ("a", leader, "Produce", 1, LEADER_MOVE_AFTER_APPEND)))
    plan = adv.before(leader, 0, 13, "a", by_id(_produce(partitions=(0,))))
    assert plan is not None and plan.post is not None
    answer = {"responses": [{"name": "", "topic_id": t.id,
                             "partition_responses": [Row((0, 0, 5, -1, 0))]}],
              "throttle_time_ms": 0}
    failed = plan.post(answer)
    part = failed["responses"][0]["partition_responses"][0]
    assert part["error_code"] == E.NOT_LEADER_OR_FOLLOWER and p.leader != leader
    q = t.partitions[1]
    leader = q.leader
    adv = Adversary(1, state, script=_script(
        ("b", leader, "Produce", 1, UNREPLICATED_LEADER_MOVE)))
    plan = adv.before(leader, 0, 13, "b", by_id(_produce(acks=1, partitions=(1,))))
    assert plan is not None and plan.post is not None
    answer = {"responses": [{"name": "", "topic_id": t.id,
                             "partition_responses": [Row((1, 0, 0, -1, 0))]}]}
    assert plan.post(answer) is answer and q.leader != leader
    assert [f.kind for f in adv.record] == [UNREPLICATED_LEADER_MOVE]


def test_an_answer_side_move_picks_an_appended_partition_the_broker_still_leads(
        make_cluster) -> None:
    """After a Produce: one of the partitions answered NONE that the broker still leads,
    chosen by the seed, its move recorded with what the client saw; an answer that is no
    dict, or has no such partition, is left as it is."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", assignments={i: [1, 2, 3] for i in range(6)})
    parts = state.topics["t"].partitions
    keys = [(c, 1, "Produce", 1, k) for c, k in (("a", LEADER_MOVE_AFTER_APPEND),
                                                  ("b", UNREPLICATED_LEADER_MOVE),
                                                  ("c", LEADER_MOVE_AFTER_APPEND))]
    adv = Adversary(4, state, script=_script(*keys))
    plan = adv.before(1, 0, 9, "a", _produce(partitions=tuple(range(6))))
    assert plan is not None and plan.post is not None
    assert plan.post(None) is None
    move_leader(state, "t", 5)
    answer = {"responses": [{"name": "t", "partition_responses": [
        Row((i, 0 if i != 2 else E.NOT_LEADER_OR_FOLLOWER, 3, -1, 0)) for i in range(6)]}]}
    failed = plan.post(answer)
    candidates = [0, 1, 3, 4]
    chosen = candidates[int(draw(4, "appended", "a", 1, 0, 1) * len(candidates))]
    assert [q.index for q in parts if q.leader != 1] == sorted([chosen, 5])
    assert adv.record[-1].detail == (
        f"leader of t-{chosen} moved 1 -> 2 after the followers fetched the write, before "
        "its acks=all answer: NOT_LEADER_OR_FOLLOWER, the write kept")
    assert [pr["error_code"] if isinstance(pr, dict) else pr[1] for pr in
            failed["responses"][0]["partition_responses"]] == [
        E.NOT_LEADER_OR_FOLLOWER if i in (2, chosen) else 0 for i in range(6)]
    # acks=1: the answer stands, the record says what the old leader held
    p = parts[candidates[0] if chosen != candidates[0] else candidates[1]]
    state.append(1, "t", p.index, build_batch([(b"k", b"v")]), 1)
    plan = adv.before(1, 0, 9, "b", _produce(acks=1, partitions=(p.index,)))
    assert plan is not None and plan.post is not None
    one = {"responses": [{"name": "t", "partition_responses": [Row((p.index, 0, 0, -1, 0))]}]}
    assert plan.post(one) is one and p.leader == 2
    assert adv.record[-1].detail == (
        f"leader of t-{p.index} moved 1 -> 2 after the acks=1 answer, before the "
        "followers fetched it (old leader's log end 1, high watermark 0: the records "
        "above are truncated)")
    # nothing appended that broker 1 still leads
    plan = adv.before(1, 0, 9, "c", _produce(partitions=(5,)))
    assert plan is not None and plan.post is not None
    answer = {"responses": [{"name": "t", "partition_responses": [Row((5, 0, 3, -1, 0))]}]}
    assert plan.post(answer) is answer and len(adv.record) == 2


def test_an_unreplicated_leader_move_truncates_an_acks_1_write(make_cluster) -> None:
    """The acks=1 answer stands; the leader moves before its followers fetched the batch,
    so the old leader's log is cut back to the new leader's: the record is gone."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 1, 3)
    p = state.topics["t"].partitions[0]
    leader = p.leader
    state.tick()
    r = state.append(leader, "t", 0, build_batch([(b"k", b"v")]), 1)
    assert r.error == 0 and p.log_end_offset == 1
    adv = Adversary(1, state, script=_script(
        ("a", leader, "Produce", 1, UNREPLICATED_LEADER_MOVE)))
    plan = adv.before(leader, 0, 9, "a", _produce(acks=1, partitions=(0,)))
    assert plan is not None and plan.post is not None
    answer = {"responses": [{"name": "t", "partition_responses": [Row((0, 0, 0, -1, 0))]}]}
    assert plan.post(answer) is answer  # the client was told its record was written
    assert p.leader != leader
    for _ in range(5):
        state.tick()
    assert p.logs[leader].log_end_offset == 0 and p.log_end_offset == 0


def test_follower_lag_pauses_the_followers_for_a_while(make_cluster) -> None:
    sim = make_cluster(3)
    state, clock = sim.state, sim.clock
    state.create_topic("t", 1, 3)
    p = state.topics["t"].partitions[0]
    state.tick()
    adv = Adversary(1, state, script=_script(("a", p.leader, "Produce", 1, FOLLOWER_LAG)))
    assert adv.before(p.leader, 0, 9, "a", _produce(partitions=(0,))) is not None
    state.append(p.leader, "t", 0, build_batch([(b"k", b"v")]), -1)
    state.tick()
    assert p.high_watermark == 0  # the followers did not fetch: acks=all would wait
    assert sorted(p.isr) == sorted(p.replicas)  # still in sync (within the lag time)
    clock.advance(2000)
    for _ in range(3):
        state.tick()
    assert p.high_watermark == 1  # the lag ended by itself


def test_coordinator_move_before_a_request_moves_the_groups_partition(make_cluster
                                                                      ) -> None:
    sim = make_cluster(3)
    state = sim.state
    services = build_services(state)
    services.groups.topic.ensure()
    part = services.groups.topic.partition_for("g")
    p = state.topics["__consumer_offsets"].partitions[part]
    leader = p.leader
    adv = Adversary(1, state, services, script=_script(
        ("a", leader, "OffsetFetch", 1, COORDINATOR_MOVE_OFFSET_FETCH)))
    assert adv.before(leader, 9, 8, "a", {"group_id": "g"}) is not None
    assert p.leader != leader
    # asked of a broker that is not the coordinator, a move would add nothing
    other = Adversary(1, state, services, script=_script(
        ("a", leader, "OffsetFetch", 1, COORDINATOR_MOVE_OFFSET_FETCH)))
    assert other.before(leader, 9, 8, "a", {"group_id": "g"}) is None


def test_coordinator_move_before_a_group_and_a_transaction_request_moves_its_partition(
        make_cluster) -> None:
    """The default before-move (``coordinator_move``: JoinGroup, Heartbeat, SyncGroup,
    OffsetCommit, the transaction APIs), apart from the OffsetFetch kind above: the
    key's __consumer_offsets or __transaction_state partition has a new leader before
    the coordinator handles the request, so it answers NOT_COORDINATOR from the state."""
    sim = make_cluster(3)
    state = sim.state
    services = build_services(state)
    services.groups.topic.ensure()
    services.transactions.topic.ensure()
    group = state.topics["__consumer_offsets"].partitions[
        services.groups.topic.partition_for("g")]
    txn = state.topics["__transaction_state"].partitions[
        services.transactions.topic.partition_for("tx")]
    g_leader, t_leader = group.leader, txn.leader
    adv = Adversary(1, state, services, script=_script(
        ("a", g_leader, "Heartbeat", 1, COORDINATOR_MOVE),
        ("a", t_leader, "EndTxn", 1, COORDINATOR_MOVE)))
    assert adv.before(g_leader, 12, 4, "a", {"group_id": "g", "member_id": "m",
                                             "generation_id": 1}) is not None
    assert group.leader != g_leader
    assert adv.before(t_leader, 26, 3, "a", {"transactional_id": "tx", "producer_id": 1,
                                             "producer_epoch": 0, "committed": True}
                      ) is not None
    assert txn.leader != t_leader
    assert [f.kind for f in adv.record] == [COORDINATOR_MOVE, COORDINATOR_MOVE]


def test_lost_response_closes_after_applying_and_session_eviction_evicts(make_cluster
                                                                        ) -> None:
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 1, 3)
    services = build_services(state)
    adv = Adversary(1, state, services, script=_script(
        ("a", 1, "Produce", 1, LOST_RESPONSE), ("a", 1, "Fetch", 1, SESSION_EVICTED)))
    plan = adv.before(1, 0, 9, "a", PRODUCE)
    assert plan is not None and plan.drop
    cache = services.fetch_sessions.cache(1)
    sid = cache.maybe_create(0, False, False, {})
    fetch = {"session_id": sid, "session_epoch": 1, "topics": []}
    assert adv.before(1, 1, 12, "a", fetch) is not None
    assert cache.remove(sid) is None  # gone from the broker's cache


def test_zombie_fences_the_producer_and_kick_holds_the_heartbeat(make_cluster) -> None:
    sim = make_cluster(3)
    state = sim.state
    services = build_services(state)
    txns = services.transactions
    txns.topic.ensure()
    err, pid, epoch = txns.init_producer_id("tx", 60000)
    assert err == 0
    adv = Adversary(1, state, services, scale={ZOMBIE: 1}, script=_script(
        ("a", 1, "EndTxn", 1, ZOMBIE)))
    assert adv.before(1, 26, 3, "a", {"transactional_id": "tx", "producer_id": pid,
                                      "producer_epoch": epoch}) is not None
    assert txns.txns["tx"].producer_epoch > epoch  # the first instance is fenced
    assert KICK in KINDS and REBALANCE in KINDS


def _stable_member(services, group: str = "g", client_id: str = "c",
                   session_ms: int = 10_000) -> str:
    """One member (of this client id) of a Stable classic group at generation 1."""
    first = services.groups.join_group(group, "", None, "consumer", _PROTOCOLS, session_ms,
                                       30_000, client_id=client_id)
    services.groups.tick()
    member = first.result["member_id"]
    _rejoin(services, group, member, 1, client_id, session_ms)
    return member


_PROTOCOLS = [("range", b"\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff")]


def _rejoin(services, group: str, member: str, generation: int, client_id: str = "c",
            session_ms: int = 10_000) -> None:
    """The group's one member joins and syncs: the group is Stable at ``generation``."""
    gc = services.groups
    gc.join_group(group, member, None, "consumer", _PROTOCOLS, session_ms, 30_000,
                  client_id=client_id)
    gc.tick()
    gc.sync_group(group, member, generation, assignments=[(member, b"")])
    assert gc.groups.peek(group).state == "Stable"


def test_a_rebalance_is_a_member_joining_at_most_once_per_quiet_window(make_cluster
                                                                      ) -> None:
    """``rebalance`` starts the named classic group's rebalance as a member joining
    would; a Fetch's is the fetching client's group (a Stable one it is a member of).
    Drawn, a group is disrupted at most once per GROUP_QUIET_MS; a request naming no
    group, or a group that cannot rebalance, meets nothing."""
    sim = make_cluster(3)
    state, clock = sim.state, sim.clock
    services = build_services(state)
    member = _stable_member(services)
    groups = services.groups
    adv = Adversary(1, state, services, scale={REBALANCE: 100})
    hb = {"group_id": "g", "member_id": member, "generation_id": 1,
          "group_instance_id": None}
    start = state.now()
    plan = adv.before(1, 12, 4, "c", hb)
    assert plan is not None and plan.rule.kind == REBALANCE and plan.hold_ms == 0
    assert groups.groups.peek("g").state == "PreparingRebalance"
    assert adv.record[-1].detail == "group 'g' made to rebalance"
    assert adv.quiet_until == {"g": start + GROUP_QUIET_MS}
    # back to Stable; the group is left alone until its quiet time is over
    _rejoin(services, "g", member, 2)
    hb["generation_id"] = 2
    clock.advance(GROUP_QUIET_MS - 1)
    assert adv.before(1, 12, 4, "c", hb) is None
    clock.advance(1)
    # the Fetch of the member's client: its group
    assert adv.before(1, 1, 12, "c", {"session_id": 0, "session_epoch": -1,
                                      "topics": []}) is not None
    assert adv.record[-1].detail == "group 'g' made to rebalance"
    assert len(adv.record) == 2
    # a Heartbeat names its group, whatever its client's id
    _rejoin(services, "g", member, 3)
    clock.advance(GROUP_QUIET_MS)
    hb["generation_id"] = 3
    assert adv.before(1, 12, 4, "someone", hb) is not None
    assert groups.groups.peek("g").state == "PreparingRebalance" and len(adv.record) == 3
    # a client in no group, a group id empty, a group already rebalancing
    clock.advance(GROUP_QUIET_MS)
    assert adv.before(1, 1, 12, "other", {"session_id": 0, "session_epoch": -1,
                                          "topics": []}) is None
    assert adv.before(1, 12, 4, "c", {**hb, "group_id": ""}) is None
    assert adv.before(1, 12, 4, "c", hb) is None  # PreparingRebalance already
    assert len(adv.record) == 3
    assert Adversary(1, state, None, scale={REBALANCE: 100}).before(1, 12, 4, "c", hb) is None


def test_a_fetching_clients_group_is_its_first_stable_classic_group(make_cluster) -> None:
    """A Fetch names no group: its client's is the first (by id) Stable classic group
    with a member of that client id; a group rebalancing is passed over."""
    sim = make_cluster(3)
    services = build_services(sim.state)
    _stable_member(services, "b", "c")
    _stable_member(services, "a", "c")
    _stable_member(services, "0", "other")
    assert classic_group_of(services, "c") == "a"
    assert classic_group_of(services, "other") == "0"
    assert classic_group_of(services, "nobody") is None
    assert services.groups.classic.force_rebalance("a")
    assert classic_group_of(services, "c") == "b"


def test_a_kick_holds_the_heartbeat_until_the_session_ran_out(make_cluster) -> None:
    """``kick``: the Heartbeat is held until the coordinator's own session timer has
    expired the member (HOLD_SLACK_MS after its deadline), only when that is at most
    KICK_MAX_HOLD_MS away; the group is then left alone for KICK_QUIET_MS after it."""
    sim = make_cluster(3)
    state, clock = sim.state, sim.clock
    services = build_services(state)
    member = _stable_member(services, session_ms=10_000)
    deadline = services.groups.groups.peek("g").members[member].hb_deadline
    clock.advance(1000)
    adv = Adversary(1, state, services, scale={REBALANCE: 0, KICK: 1000})
    hb = {"group_id": "g", "member_id": member, "generation_id": 1,
          "group_instance_id": None}
    plan = adv.before(1, 12, 4, "c", hb)
    assert plan is not None and plan.rule.kind == KICK
    hold = deadline - state.now() + HOLD_SLACK_MS
    assert plan.hold_ms == hold
    assert adv.record[-1].detail == (f"the Heartbeat of member {member!r} of group 'g' "
                                     f"held {hold} ms, past its session: the coordinator "
                                     "expires it")
    assert adv.quiet_until == {"g": state.now() + hold + KICK_QUIET_MS}
    clock.advance(hold + KICK_QUIET_MS - 1)
    assert adv.before(1, 12, 4, "c", hb) is None
    # an unknown member, and a session longer than a kick may hold
    clock.advance(1)
    assert adv.before(1, 12, 4, "c", {**hb, "member_id": "nobody"}) is None
    assert adv.before(1, 12, 4, "c", {**hb, "group_id": "none"}) is None
    long = _stable_member(services, "h", "d", session_ms=KICK_MAX_HOLD_MS + 1000)
    hb_long = {**hb, "group_id": "h", "member_id": long}
    assert adv.before(1, 12, 4, "d", hb_long) is None
    assert len(adv.record) == 1
    # held exactly KICK_MAX_HOLD_MS is still a kick
    clock.advance(1000 + HOLD_SLACK_MS)
    plan = adv.before(1, 12, 4, "d", hb_long)
    assert plan is not None and plan.hold_ms == KICK_MAX_HOLD_MS
    # a session already run out (its timer not yet fired): the Heartbeat goes at once
    late = _stable_member(services, "k", "e")
    clock.advance(10_000 + HOLD_SLACK_MS + 1)
    plan = adv.before(1, 12, 4, "e", {**hb, "group_id": "k", "member_id": late})
    assert plan is not None and plan.hold_ms == 0


def test_slow_markers_delay_a_drawn_share_of_transactions(make_cluster) -> None:
    """``slow_markers``: ``start`` puts the seeded delay in the transaction coordinator's
    marker hook. SLOW_MARKERS_RATE of transactions (scaled), drawn by the transactional
    id and how many it ended, write their markers SLOW_MARKERS_MS after EndTxn (never
    sooner than Kafka's own delay), each recorded; turned off, the count goes on."""
    sim = make_cluster(3)
    state = sim.state
    services = build_services(state)
    txns = services.transactions
    txns.topic.ensure()
    txns.init_producer_id("tx", 60_000)
    txn = txns.txns["tx"]
    normal = txns.marker_delay(txn)
    adv = Adversary(1, state, services, scale={SLOW_MARKERS: 100})
    adv.start()
    delays = [100 + int(draw(1, "marker-ms", "tx", n) * 900) for n in (1, 2, 3)]
    assert [txns.marker_delay(txn) for _ in range(3)] == [max(normal, d) for d in delays]
    first = len(adv.record) - 3  # after start()'s settings
    assert [(f.seq, f.seed, f.broker, f.client_id, f.api, f.n, f.kind, f.detail)
            for f in adv.record[first:]] == [
        (first + n - 1, 1, -1, "tx", "EndTxn", n, SLOW_MARKERS, f"markers of 'tx''s "
         f"transaction {n} (producer {txn.producer_id}) written {d} ms after EndTxn")
        for n, d in zip((1, 2, 3), delays, strict=True)]
    adv.tune(enabled=False)
    assert txns.marker_delay(txn) == normal
    adv.tune(enabled=True)
    txns.marker_delay(txn)
    assert adv.record[-1].n == 5 and adv.txn_counts == {"tx": 5}
    # the rate: SLOW_MARKERS_RATE times the kind's factor times all's (each 1 unless
    # named), and which transactions are slow is the seed's draw of (id, n)
    for scale, rate in (({SLOW_MARKERS: 2, "all": 0.5}, 0.2), ({"all": 0.5}, 0.1),
                        ({SLOW_MARKERS: 2}, 0.4), ({}, 0.2)):
        rated = Adversary(2, state, services, scale=scale)
        slow = [i for i in range(400)
                if rated._marker_delay(TxnMetadata(f"t{i}", 1, 60_000, 0), 0) > 0]
        assert slow == [i for i in range(400) if draw(2, "markers", f"t{i}", 1) < rate]
        assert rate - 0.06 < len(slow) / 400 < rate + 0.06
    off = Adversary(2, state, services, scale={SLOW_MARKERS: 0})
    assert all(off._marker_delay(TxnMetadata(f"t{i}", 1, 60_000, 0), 7) == 7 for i in range(50))
    scripted = Adversary(2, state, services, script=_script(("tx", -1, "EndTxn", 2,
                                                              SLOW_MARKERS)))
    assert [scripted._marker_delay(txn, 0) > 0 for _ in range(3)] == [False, True, False]


def test_follower_lag_pauses_the_followers_of_a_drawn_led_partition(make_cluster) -> None:
    """``follower_lag`` picks, by the seed, one partition of the request that the broker
    leads, and pauses each of its followers for FOLLOWER_LAG_MS (drawn); a request
    naming no partition this broker leads, or a partition without followers, meets
    nothing."""
    sim = make_cluster(3)
    state = sim.state
    topic = state.create_topic("t", assignments={i: [2, 1, 3] if i == 1 else [1, 3, 2]
                                                 for i in range(9)})
    state.create_topic("one", assignments={0: [1]})
    now = state.now()
    adv = Adversary(14, state, script=_script(("a", 1, "Produce", 7, FOLLOWER_LAG)))
    for _ in range(6):
        assert adv.before(1, 0, 13, "a", PRODUCE) is None
    by_id = {"acks": -1, "timeout_ms": 1000, "topic_data": [  # Produce v13: by topic id
        {"name": "", "topic_id": topic.id, "partition_data": [
            {"index": i, "records": b""} for i in range(9)]}]}
    plan = adv.before(1, 0, 13, "a", by_id)
    assert plan is not None and plan.hold_ms == 0 and plan.post is None
    led = [0, 2, 3, 4, 5, 6, 7, 8]
    index = led[int(draw(14, "lag", "a", 1, 0, 7) * len(led))]
    ms = 100 + int(draw(14, "lag-ms", "a", 1, 7) * 1400)
    followers = [3, 2]
    assert [(f.broker, f.topic, f.partition, f.paused, f.until_ms)
            for f in state.faults.followers] == [(b, "t", index, True, now + ms)
                                                  for b in followers]
    assert adv.record[-1].detail == (f"followers {followers} of t-{index} stop fetching "
                                     f"for {ms} ms")
    nothing = Adversary(3, state, script=_script(("a", 2, "Produce", 1, FOLLOWER_LAG),
                                                 ("b", 1, "Produce", 1, FOLLOWER_LAG)))
    assert nothing.before(2, 0, 9, "a", _produce(partitions=(0, 2, 3, 4))) is None
    single = {"acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "one", "partition_data": [{"index": 0, "records": b""}]}]}
    assert nothing.before(1, 0, 9, "b", single) is None
    assert len(state.faults.followers) == len(followers) and not nothing.record


def test_session_eviction_takes_only_an_incremental_fetchs_session(make_cluster) -> None:
    """A full Fetch (epoch 0), a sessionless one (id 0, epoch -1) or a session the
    broker's cache no longer holds has no session to evict; the Fetch rule applies from
    v7 on (fetch sessions, KIP-227)."""
    sim = make_cluster(3)
    state = sim.state
    services = build_services(state)
    cache = services.fetch_sessions.cache(1)
    sid = cache.maybe_create(0, False, False, {})
    keys = [("a", 1, "Fetch", n, SESSION_EVICTED) for n in range(1, 6)]
    adv = Adversary(1, state, services, script=_script(*keys))
    assert adv.before(1, 1, 12, "a", {"session_id": sid, "session_epoch": 0}) is None
    assert adv.before(1, 1, 12, "a", {"session_id": 0, "session_epoch": 1}) is None
    assert adv.before(1, 1, 12, "a", {"session_id": sid + 1, "session_epoch": 1}) is None
    assert adv.before(1, 1, 6, "a", {"session_id": sid, "session_epoch": 1}) is None
    assert not adv.record
    assert adv.before(1, 1, 7, "a", {"session_id": sid, "session_epoch": 1}) is not None
    assert adv.record[-1].detail == f"fetch session {sid} evicted"
    assert cache.remove(sid) is None
    assert Adversary(1, state, None, script=_script(("a", 1, "Fetch", 1, SESSION_EVICTED))
                     ).before(1, 1, 12, "a", {"session_id": 5, "session_epoch": 1}) is None


def test_a_zombie_needs_a_transactional_producer_to_fence(make_cluster) -> None:
    """The second instance's InitProducerId fences a transactional id the coordinator
    knows, its record saying so; an id it does not know yet (or none) meets nothing."""
    sim = make_cluster(3)
    state = sim.state
    services = build_services(state)
    txns = services.transactions
    txns.topic.ensure()
    _, pid, epoch = txns.init_producer_id("tx", 60_000)
    keys = [("a", 1, "EndTxn", n, ZOMBIE) for n in range(1, 5)]
    adv = Adversary(1, state, services, scale={ZOMBIE: 1}, script=_script(*keys))
    end = {"transactional_id": "tx", "producer_id": pid, "producer_epoch": epoch,
           "committed": True}
    assert adv.before(1, 26, 3, "a", {**end, "transactional_id": "other"}) is None
    assert adv.before(1, 26, 3, "a", {**end, "transactional_id": None}) is None
    assert not adv.record
    assert adv.before(1, 26, 3, "a", end) is not None
    assert adv.record[-1].detail == (
        "a second instance of 'tx' initialised (InitProducerId answered NONE): producer "
        f"{pid} now at epoch {epoch + 1}, the first instance fenced")
    assert Adversary(1, state, None, script=_script(*keys)).before(1, 26, 3, "a", end) is None


def test_a_zombie_fences_nobody_while_a_transaction_completes(make_cluster) -> None:
    """Kafka's coordinator answers an InitProducerId for a transaction in PrepareCommit
    or PrepareAbort with CONCURRENT_TRANSACTIONS and fences nobody (the new instance
    backs off and retries: TransactionCoordinator.prepareInitProducerIdTransit), so no
    zombie is recorded then; an open transaction is fenced (epoch bumped, aborted)."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 1, 3)
    services = build_services(state)
    txns = services.transactions
    txns.topic.ensure()
    txns.marker_delay = lambda txn: 1000  # the markers written a second after EndTxn
    _, pid, epoch = txns.init_producer_id("tx", 60_000)
    assert txns.add_partitions("tx", pid, epoch, [("t", 0)]) == {("t", 0): 0}
    assert txns.end_txn("tx", pid, epoch, True)[0] == 0
    assert txns.txns["tx"].state == "PrepareCommit"
    keys = [("a", 1, "AddOffsetsToTxn", n, ZOMBIE) for n in (1, 2)]
    adv = Adversary(1, state, services, scale={ZOMBIE: 1}, script=_script(*keys))
    req = {"transactional_id": "tx", "producer_id": pid, "producer_epoch": epoch,
           "group_id": "g"}
    assert adv.before(1, 25, 3, "a", req) is None
    assert not adv.record and txns.txns["tx"].producer_epoch == epoch
    sim.clock.advance(1000)
    state.tick()
    assert txns.txns["tx"].state == "CompleteCommit"
    assert txns.add_partitions("tx", pid, epoch, [("t", 0)]) == {("t", 0): 0}
    assert adv.before(1, 25, 3, "a", req) is not None
    assert txns.txns["tx"].producer_epoch == epoch + 1
    assert adv.record[-1].detail == (
        "a second instance of 'tx' initialised (InitProducerId answered "
        f"CONCURRENT_TRANSACTIONS): producer {pid} now at epoch {epoch + 1}, the first "
        "instance fenced")


def test_a_share_acknowledgement_is_held_past_its_records_locks(make_cluster) -> None:
    """``share_lock_expiry``: a ShareAcknowledge is held until the acquisition locks of
    the records it acknowledges (this member's) ran out, HOLD_SLACK_MS after the last;
    only when that is at most KICK_MAX_HOLD_MS away, and only for records it holds."""
    sim = make_cluster(3)
    state, clock = sim.state, sim.clock
    services = build_services(state)
    share = services.share
    topic = state.create_topic("t", 1, 3)
    share.set_group_config("sg", "share.auto.offset.reset", "earliest")
    share.initialize_state("sg", topic.id, 0, 1, -1)
    p = topic.partitions[0]
    for _ in range(3):
        assert state.append(p.leader, "t", 0, build_batch([(None, b"v")]), -1).error == 0
    state.tick()
    share.acquire(p.leader, "sg", "m", topic.id, 0, 500, 1 << 20)
    deadline = share.partitions[("sg", topic.id, 0)].records[0].lock_deadline

    def ack(first: int, last: int, member: str = "m") -> dict:
        batches = [{"first_offset": first, "last_offset": last, "acknowledge_types": [1]}]
        return {"group_id": "sg", "member_id": member, "topics": [
            {"topic_id": b"\x07" * 16, "partitions": [  # a topic the group does not read
                {"partition_index": 0, "acknowledgement_batches": batches}]},
            {"topic_id": topic.id, "partitions": [
                {"partition_index": 3, "acknowledgement_batches": batches},
                {"partition_index": 0, "acknowledgement_batches": batches}]}]}

    keys = [("a", p.leader, "ShareAcknowledge", n, SHARE_LOCK_EXPIRY) for n in range(1, 6)]
    adv = Adversary(1, state, services, script=_script(*keys))
    assert adv.before(p.leader, 79, 1, "a", ack(0, 2)) is None  # 30 s away: too long
    clock.advance(deadline - state.now() - KICK_MAX_HOLD_MS + HOLD_SLACK_MS)
    assert adv.before(p.leader, 79, 1, "a", ack(0, 1, "other")) is None
    assert adv.before(p.leader, 79, 1, "a", ack(5, 9)) is None
    assert not adv.record
    plan = adv.before(p.leader, 79, 1, "a", ack(0, 1))
    assert plan is not None and plan.hold_ms == KICK_MAX_HOLD_MS
    assert adv.record[-1].detail == (
        f"the acknowledgement of 2 record(s) by member 'm' of share group 'sg' held "
        f"{KICK_MAX_HOLD_MS} ms, past their acquisition locks")
    # the locks ran out already (the coordinator's timer not yet fired): at once
    clock.advance(KICK_MAX_HOLD_MS + 1)
    plan = adv.before(p.leader, 79, 1, "a", ack(2, 2))
    assert plan is not None and plan.hold_ms == 0
    assert Adversary(1, state, None, script=_script(*keys)).before(
        p.leader, 79, 1, "a", ack(0, 2)) is None


def test_each_request_meets_the_rule_its_draw_falls_in(make_cluster) -> None:
    """At most one fault per request: the rules of its API share [0, 1) in order, each
    its rate wide, and the request's draw (seed, client, broker, API, n; n counting that
    client's requests of that API to that broker, from 1) picks the rule it falls in.
    Only the APIs with rules are counted; a client without an id is the client ""."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 2, 3)
    scale = {LEADER_MOVE: 3, FOLLOWER_LAG: 2, LEADER_MOVE_AFTER_APPEND: 2,
             UNREPLICATED_LEADER_MOVE: 0, LOST_RESPONSE: 2}
    adv = Adversary(7, state, scale=scale)
    widths = [(LEADER_MOVE, 0.12), (FOLLOWER_LAG, 0.08), (LEADER_MOVE_AFTER_APPEND, 0.1),
              (UNREPLICATED_LEADER_MOVE, 0.0), (LOST_RESPONSE, 0.1)]
    drawn, expected = [], []
    for n in range(1, 301):
        assert adv.before(1, 18, 3, None, {}) is None  # ApiVersions: no rules
        plan = adv.before(1, 0, 9, None, {"acks": -1, "timeout_ms": 1000, "topic_data": []})
        drawn.append(plan.rule.kind if plan is not None else None)
        u, kind = draw(7, "", 1, 0, n), None
        for k, w in widths:
            if u < w:
                kind = k
                break
            u -= w
        # a move or lag needs a partition the request names: it names none
        expected.append(kind if kind in (LEADER_MOVE_AFTER_APPEND, LOST_RESPONSE) else None)
    assert drawn == expected and drawn.count(LOST_RESPONSE) > 10
    assert adv.counts == {("", 1, 0): 300} and adv.requests == {"": 300}
    # a version below the rule's: nothing, not the next rule
    keys = [("a", 1, "Fetch", 1, SESSION_EVICTED), ("a", 1, "Fetch", 1, REBALANCE)]
    services = build_services(state)
    _stable_member(services, "g", "a")
    fetch = {"session_id": 0, "session_epoch": -1, "topics": []}
    assert Adversary(7, state, services, script=_script(*keys)).before(1, 1, 6, "a", fetch
                                                                       ) is None
    assert services.groups.groups.peek("g").state == "Stable"
    # scripted, a key not named is passed over for the next rule of the request
    plan = Adversary(7, state, services, script=_script(keys[1])).before(1, 1, 12, "a", fetch)
    assert plan is not None and plan.rule.kind == REBALANCE


def test_what_each_kind_needs_of_the_request(make_cluster) -> None:
    """An idempotent producer's InitProducerId (no transactional id) and an acks=0
    Produce meet nothing; an acks=1 Produce never meets the acks=all move nor an acks=all
    one the acks=1 move; a lost response is the request applied and the connection
    closed, recorded with the request it answers."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 1, 3)
    services = build_services(state)
    services.transactions.topic.ensure()
    leader = state.topics["t"].partitions[0].leader
    keys = [("a", leader, "InitProducerId", 1, LOST_RESPONSE),
            ("a", leader, "Produce", 1, LOST_RESPONSE),
            ("a", leader, "Produce", 2, LEADER_MOVE_AFTER_APPEND),
            ("a", leader, "Produce", 3, UNREPLICATED_LEADER_MOVE),
            ("a", leader, "Produce", 4, LOST_RESPONSE),
            ("a", leader, "InitProducerId", 2, LOST_RESPONSE)]
    adv = Adversary(3, state, services, script=_script(*keys))
    init = {"transactional_id": None, "transaction_timeout_ms": 60_000,
            "producer_id": -1, "producer_epoch": -1}
    assert adv.before(leader, 22, 4, "a", init) is None
    assert adv.before(leader, 0, 9, "a", _produce(acks=0, partitions=(0,))) is None
    assert adv.before(leader, 0, 9, "a", _produce(acks=1, partitions=(0,))) is None
    assert adv.before(leader, 0, 9, "a", _produce(acks=-1, partitions=(0,))) is None
    assert not adv.record
    plan = adv.before(leader, 0, 9, "a", _produce(acks=1, partitions=(0,)))
    assert plan is not None and plan.drop and plan.post is None and plan.hold_ms == 0
    plan = adv.before(leader, 22, 4, "a", {**init, "transactional_id": "tx"})
    assert plan is not None and plan.drop
    assert [f.as_dict() for f in adv.record] == [
        {"seq": 0, "seed": 3, "broker": leader, "client_id": "a", "api": "Produce", "n": 4,
         "kind": LOST_RESPONSE, "detail": "the request applied, its response lost "
                                          "(connection closed)"},
        {"seq": 1, "seed": 3, "broker": leader, "client_id": "a", "api": "InitProducerId",
         "n": 2, "kind": LOST_RESPONSE, "detail": "the request applied, its response lost "
                                                  "(connection closed)"}]


def test_rates_are_the_rules_times_the_kinds_factor_times_alls() -> None:
    """A kind's factor is its own when named, else its family's (the move after an
    answer goes with ``coordinator_move``), else its default (1; 0 for the kinds off by
    default); ``all`` multiplies every kind."""
    from emulator.faults.adversary_rules import Rule
    after = Rule("coordinator_move_after_answer", 0.02)
    zombie = Rule(ZOMBIE, 0.02)
    lag = Rule(FOLLOWER_LAG, 0.04)
    none = Adversary(0, None)  # type: ignore[arg-type]
    assert (none.rate(after), none.rate(zombie), none.rate(lag)) == (0.02, 0.0, 0.04)
    family = Adversary(0, None, scale={COORDINATOR_MOVE: 3, "all": 0.5})  # type: ignore[arg-type]
    assert family.rate(after) == 0.02 * 3 * 0.5 and family.rate(lag) == 0.04 * 1 * 0.5
    own = Adversary(0, None, scale={COORDINATOR_MOVE: 3,  # type: ignore[arg-type]
                                    "coordinator_move_after_answer": 5, ZOMBIE: 2})
    assert own.rate(after) == 0.02 * 5 and own.rate(zombie) == 0.02 * 2


def test_start_makes_one_broker_stale_and_coordinators_load_longer(make_cluster) -> None:
    """``start``: one broker (the seed's) learns metadata changes STALE_LAG_MS late (and
    jitter more), recorded as a setting; the coordinators load LOAD_MS at least after a
    move; a one-broker cluster has no other broker to be staler than, and a factor of 0
    (the kind's, or all's) leaves the views alone."""
    from emulator.faults.adversary_rules import LOAD_MS, STALE_JITTER_MS
    sim = make_cluster(3)
    state = sim.state
    services = build_services(state)
    adv = Adversary(12, state, services)
    adv.start()
    broker = [1, 2, 3][int(draw(12, "stale-broker") * 3)]
    lag = 200 + int(draw(12, "stale-lag") * 800)
    assert state.metadata_views.lag_of(broker) == (lag, lag + STALE_JITTER_MS)
    assert [f.as_dict() for f in adv.record] == [
        {"seq": 0, "seed": 12, "broker": broker, "client_id": "", "api": "-", "n": 0,
         "kind": STALE_METADATA, "detail": f"broker {broker} learns metadata changes "
                                           f"{lag}-{lag + STALE_JITTER_MS} ms late"}]
    assert services.groups.topic.load_ms == services.transactions.topic.load_ms == LOAD_MS
    services.groups.topic.load_ms = LOAD_MS + 1
    Adversary(12, state, services).start()
    assert services.groups.topic.load_ms == LOAD_MS + 1
    for scale in ({STALE_METADATA: 0}, {"all": 0}):
        quiet = make_cluster(3).state
        off = Adversary(12, quiet, scale=scale)
        off.start()
        assert not off.record and not quiet.metadata_views.active
    one = make_cluster(1).state
    alone = Adversary(12, one)
    alone.start()
    assert not alone.record and not one.metadata_views.active
    two = make_cluster(2).state
    pair = Adversary(12, two)
    pair.start()
    assert [f.kind for f in pair.record] == [STALE_METADATA]
    # replayed: exactly when the script names the setting (its key as recorded)
    for script, fires in ((frozenset({("", broker, "-", 0, STALE_METADATA)}), True),
                          (frozenset({("", broker, "-", 1, STALE_METADATA),
                                      ("x", broker, "-", 0, STALE_METADATA),
                                      ("", broker, "XX-XX", 0, STALE_METADATA)}), False)):
        replayed = make_cluster(3).state
        scripted = Adversary(12, replayed, script=script)
        scripted.start()
        assert bool(scripted.record) is fires
        assert [f.fault_key() for f in scripted.record] == sorted(script) * fires


@pytest.mark.kafka_emulator_allow_exceptions  # the violation is logged at ERROR
def test_the_adversary_answers_for_its_record_and_its_check(make_cluster) -> None:
    """``describe`` (GET /adversary) is the seed, whether it is on, the factors, every
    fault and every violation, as copies; ``tune`` changes only what it is given and
    refuses a bad factor before changing anything; ``snapshot`` and ``check`` are the
    soundness check's, whose violations the adversary reports."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 1, 3)
    p = state.topics["t"].partitions[0]
    adv = Adversary(4, state, scale={"kick": 2.0})
    assert adv.describe() == {"seed": 4, "enabled": True, "scale": {"kick": 2.0},
                              "injected": [], "violations": []}
    adv.describe()["scale"]["kick"] = 9
    assert adv.scale == {"kick": 2.0}
    with pytest.raises(ValueError):
        adv.tune(enabled=False, scale="kik=1")
    assert adv.enabled and adv.scale == {"kick": 2.0}
    assert adv.tune(scale={"all": 0.5})["scale"] == {"kick": 2.0, "all": 0.5}
    assert adv.enabled
    assert adv.tune(enabled=False)["enabled"] is False and adv.tune()["enabled"] is False
    req = _produce(partitions=(0,))
    snap = adv.snapshot(0, req, p.leader)
    adv.check(p.leader, 0, 9, req, _answer(0, E.NOT_LEADER_OR_FOLLOWER), snap)
    # the snapshot is of the broker's own metadata view
    new, other = p.replicas[1], p.replicas[2]
    state.metadata_views.set_lag(new, 5_000)
    state.metadata_views.set_lag(other, 0)
    move_leader(state, "t", 0, new)
    state.metadata_views.flush()
    assert adv.snapshot(0, req, new)[("t", 0)][2] != new  # it has not learnt it leads
    assert adv.snapshot(0, req, other)[("t", 0)][2] == new
    assert len(adv.violations) == 1 and "while it led it" in adv.violations[0]
    assert adv.describe()["violations"] == adv.violations
    adv.describe()["violations"].clear()
    assert len(adv.violations) == 1


def test_settings_replay_by_script(make_cluster) -> None:
    sim = make_cluster(3)
    state = sim.state
    adv = Adversary(4, state, script=frozenset())
    adv.start()
    assert not [f for f in adv.record if f.kind == STALE_METADATA]
    drawn = Adversary(4, state)
    drawn.start()
    stale = [f for f in drawn.record if f.kind == STALE_METADATA]
    assert stale and state.metadata_views.lag_of(stale[0].broker)[0] > 0
    assert SLOW_MARKERS in KINDS


def test_move_leader_goes_to_the_preferred_replica_then_the_next_in_sync(make_cluster) -> None:
    sim = make_cluster(3)
    sim.state.create_topic("m", 1, 3)
    p = sim.state.topics["m"].partitions[0]
    first, epoch = p.leader, p.leader_epoch
    assert first == p.replicas[0]
    sim.faults.apply({"op": "move_leader", "topic": "m", "partition": 0})
    assert p.leader == p.replicas[1] and p.leader_epoch == epoch + 1
    sim.faults.apply({"op": "move_leader", "topic": "m", "partition": 0})
    assert p.leader == first  # back to the preferred replica, as an election would
    sim.faults.apply({"op": "move_leader", "topic": "m", "partition": 0,
                      "broker": p.replicas[2]})
    assert p.leader == p.replicas[2]
    sim.faults.apply({"op": "pause_follower", "broker": p.replicas[1]})
    p.isr = [b for b in p.isr if b != p.replicas[1]]
    with pytest.raises(FaultError, match="not a live in-sync replica"):
        sim.faults.apply({"op": "move_leader", "topic": "m", "partition": 0,
                          "broker": p.replicas[1]})


def test_scales_are_parsed_with_the_kinds_named_on_a_typo() -> None:
    assert parse_scale("all=0.5, leader_move=2") == {"all": 0.5, "leader_move": 2.0}
    assert parse_scale({"kick": 0}) == {"kick": 0.0}
    assert parse_scale(None) == parse_scale("") == {}
    assert parse_scale(" kick = 0 ,, all=1,") == {"kick": 0.0, "all": 1.0}
    assert parse_scale({" zombie ": "2"}) == {"zombie": 2.0}
    for bad, why in (
            ("kik=2", "unknown adversary fault kind 'kik'; kinds are all, "
             + ", ".join(KINDS)),
            ("kick=-1", "kick: the factor must be >= 0, got '-1'"),
            ("kick", "kick: the factor must be a number, got ''"),
            ("kick=1=2", "kick: the factor must be a number, got '1=2'"),
            ("kick=nan", "kick: the factor must be >= 0, got 'nan'"),
            ({"kick": None}, "kick: the factor must be a number, got None")):
        with pytest.raises(ValueError) as raised:
            parse_scale(bad)
        assert str(raised.value) == why


def test_turned_off_it_injects_nothing_but_keeps_counting(make_cluster) -> None:
    """A test's setup can run with the faults off; the requests still count, so the
    faults after it replay for the same whole sequence."""
    sim = make_cluster(3)
    sim.state.create_topic("t", 2, 3)
    ref_sim = make_cluster(3)
    ref_sim.state.create_topic("t", 2, 3)
    only_lost = {"leader_move": 0.0, "follower_lag": 0.0}
    adv = Adversary(9, sim.state, scale=dict(only_lost))
    ref = Adversary(9, ref_sim.state, scale=dict(only_lost))
    adv.tune(enabled=False)
    for _ in range(100):
        assert adv.before(1, 0, 9, "a", PRODUCE) is None
        ref.before(1, 0, 9, "a", PRODUCE)
    assert not adv.record
    adv.tune(enabled=True)
    for _ in range(300):
        adv.before(1, 0, 9, "a", PRODUCE)
        ref.before(1, 0, 9, "a", PRODUCE)
    assert _faults(adv, "a") == _faults(ref, "a")[-len(_faults(adv, "a")):]
    assert adv.record and all(f.n > 100 for f in adv.record)
    assert {f.kind for f in adv.record} == {LOST_RESPONSE}


# ---- the soundness check ------------------------------------------------------------

class OnePartition(NamedTuple):
    """Topic ``t`` of one partition on three replicas, and a soundness check of that
    cluster: what most of the check's tests start from."""

    state: ClusterState
    p: Partition
    check: Soundness
    follower: int  # a replica that is not the leader


@pytest.fixture
def one_partition(make_cluster) -> OnePartition:
    state = make_cluster(3).state
    state.create_topic("t", 1, 3)
    p = state.topics["t"].partitions[0]
    return OnePartition(state, p, Soundness(state),
                        next(b for b in p.replicas if b != p.leader))


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_names_a_not_leader_answer_from_the_leader(one_partition) -> None:
    state, p, check, follower = one_partition
    req = _produce(partitions=(0,))
    snap = check.snapshot(0, req)
    bad = {"responses": [{"name": "t", "partition_responses": [
        {"index": 0, "error_code": E.NOT_LEADER_OR_FOLLOWER, "base_offset": -1}]}]}
    check.check(p.leader, 0, 9, req, bad, snap)
    assert len(check.violations) == 1 and "while it led it" in check.violations[0]
    # from a follower it is Kafka's answer
    check.check(follower, 0, 9, req, bad, check.snapshot(0, req))
    assert len(check.violations) == 1
    # a deposed leader's purgatory: leadership changed while the request waited
    snap = check.snapshot(0, req)
    assert move_leader(state, "t", 0) is not None
    check.check(p.replicas[0], 0, 9, req, bad, snap)
    assert len(check.violations) == 1


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_judges_a_refusal_by_the_metadata_the_broker_had_when_it_refused(
        make_cluster) -> None:
    """A broker whose metadata lags refuses a batch for a partition it now leads, and
    learns that it leads while the answer waits (on another partition's acks=all): Kafka
    answers so. Judged by the view at the answer alone, it looked like a leader refusing
    its own partition, and the append after it at the same epoch like a second lie.
    Broker 0 (an image's first node id) has a view like any other."""
    sim = make_cluster([0, 1, 2])
    state = sim.state
    state.create_topic("t", assignments={0: [1, 0, 2]})
    p = state.topics["t"].partitions[0]
    new = 0
    state.metadata_views.set_lag(new, 5_000)
    state.metadata_views.set_lag(2, 0)
    sim.faults.apply({"op": "move_leader", "topic": "t", "partition": 0, "broker": new})
    assert p.leader == new
    state.metadata_views.flush()
    check = Soundness(state)
    req = _produce(partitions=(0,))
    snap = check.snapshot(0, req, new)  # it arrives while the broker's view lags
    assert snap[("t", 0)][2] != new
    assert check.snapshot(0, req)[("t", 0)][2:4] == (new, p.leader_epoch)  # no broker named
    assert check.snapshot(0, req, 2)[("t", 0)][2:4] == (new, p.leader_epoch)  # 2's is current
    sim.clock.advance(5_000)
    state.metadata_views.flush()
    assert state.metadata_views.leader_hint(new, "t", 0) is None  # it knows it leads
    refused = {"responses": [{"name": "t", "partition_responses": [
        {"index": 0, "error_code": E.NOT_LEADER_OR_FOLLOWER, "base_offset": -1}]}]}
    check.check(new, 0, 9, req, refused, snap)
    ok = {"responses": [{"name": "t", "partition_responses": [Row((0, 0, 5, -1, 0))]}]}
    check.check(new, 0, 9, req, ok, check.snapshot(0, req, new))
    assert check.violations == []
    # knowing it led when the request came, the same refusal is the lie
    check.check(new, 0, 9, req, refused, check.snapshot(0, req, new))
    assert len(check.violations) == 1 and "while it led it" in check.violations[0]


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_names_a_retried_batch_written_twice(one_partition) -> None:
    state, p, check, _ = one_partition
    batch = build_batch([(b"k", b"v")], producer_id=7, producer_epoch=0, base_sequence=10)
    req = _produce(records=batch, partitions=(0,))
    ok = {"responses": [{"name": "t", "partition_responses": [Row((0, 0, 5, -1, 0))]}]}
    check.check(p.leader, 0, 9, req, ok, check.snapshot(0, req))
    check.check(p.leader, 0, 9, req, ok, check.snapshot(0, req))  # the retry, same offset
    assert not check.violations
    twice = {"responses": [{"name": "t", "partition_responses": [Row((0, 0, 9, -1, 0))]}]}
    check.check(p.leader, 0, 9, req, twice, check.snapshot(0, req))
    assert len(check.violations) == 1 and "written twice" in check.violations[0]


def _appended(offset: int) -> dict:
    """A Produce answer of ``t``-0 appended at ``offset``, as the handler builds it."""
    return {"responses": [{"name": "t", "partition_responses": [Row((0, 0, offset, -1, 0))]}]}


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_names_a_retry_written_again_past_a_leader_change_that_kept_the_first(
        make_cluster) -> None:
    """A leader change between an idempotent batch's append and its retry explains a
    second append only if the first was truncated away. Replicated before the change,
    the first append is in the new leader's log and in the producer state that log
    built (Kafka's followers build it as they append), and the new leader answers the
    retry with the first offset, as the emulator's does: another offset is the
    duplicate a correct idempotent producer must never cause. Producer id 0 is one the
    coordinator gives like any other."""
    sim = make_cluster(3)
    state, clock, faults = sim
    state.create_topic("t", 1, 3)
    p = state.topics["t"].partitions[0]
    a = p.leader
    b = next(r for r in p.isr if r != a)
    check = Soundness(state)
    batch = build_batch([(b"k", b"v")], producer_id=0, producer_epoch=1, base_sequence=0)
    req = _produce(acks=1, records=batch, partitions=(0,))

    def produce(broker: int, answered: int | None = None) -> None:
        snap = check.snapshot(0, req, broker)
        r = state.append(broker, "t", 0, batch, 1)
        assert r.error == 0
        check.check(broker, 0, 9, req, _appended(r.base_offset if answered is None
                                                 else answered), snap)

    assert state.append(a, "t", 0, build_batch([(None, b"x")]), 1).base_offset == 0
    produce(a)  # at offset 1
    settle(state, clock)
    assert p.logs[b].log_end_offset == 2
    move_leader(state, "t", 0, b)
    produce(b)  # the new leader's answer: the first offset
    assert check.violations == []
    produce(b, answered=3)  # written again at 3: b's log still holds the first at 1
    epoch = p.leader_epoch
    assert check.violations == [
        "Produce: producer 0 epoch 1 sequence 0 to t-0 answered offset 3, first appended "
        f"at 1 at leader epoch {epoch - 1}, which broker {b}'s log still holds at leader "
        f"epoch {epoch}: a retried batch written twice"]


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_takes_a_retry_appended_anew_after_a_leader_change_lost_the_first(
        make_cluster) -> None:
    """Two acks=1 appends that no follower fetched are truncated away when the leader
    moves; the producers' retries are new batches to the new leader, which Kafka appends
    anew, each at another offset than its first (the new leader's log ends before one,
    and holds the other producer's batch at the other). Those offsets are the ones the
    retries are held to from then on."""
    sim = make_cluster(3)
    state, clock, faults = sim
    state.create_topic("t", 1, 3)
    p = state.topics["t"].partitions[0]
    a = p.leader
    b = next(r for r in p.isr if r != a)
    for f in p.replicas:
        if f != a:
            faults.apply({"op": "pause_follower", "broker": f})
    check = Soundness(state)
    ours = build_batch([(b"k", b"v")], producer_id=7, producer_epoch=0, base_sequence=0)
    theirs = build_batch([(b"k", b"w")], producer_id=9, producer_epoch=0, base_sequence=0)

    def produce(broker: int, batch: bytes, at: int) -> None:
        req = _produce(acks=1, records=batch, partitions=(0,))
        snap = check.snapshot(0, req, broker)
        assert state.append(broker, "t", 0, batch, 1).base_offset == at
        check.check(broker, 0, 9, req, _appended(at), snap)

    produce(a, theirs, 0)
    produce(a, ours, 1)
    move_leader(state, "t", 0, b)
    assert p.logs[b].log_end_offset == 0
    produce(b, ours, 0)  # the new leader's log ends before 1
    produce(b, theirs, 1)  # it holds producer 7's batch at 0
    assert check.violations == []
    # from now on the retries are held to those offsets
    req = _produce(acks=1, records=ours, partitions=(0,))
    check.check(b, 0, 9, req, _appended(2), check.snapshot(0, req, b))
    assert len(check.violations) == 1 and "first appended at 0 in the same leader epoch" \
        in check.violations[0]


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_names_an_append_after_a_refusal_and_a_false_not_enough(make_cluster
                                                                         ) -> None:
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 1, 3, configs={"min.insync.replicas": "2"})
    p = state.topics["t"].partitions[0]
    check = Soundness(state)
    req = _produce(partitions=(0,))
    refused = {"responses": [{"name": "t", "partition_responses": [
        {"index": 0, "error_code": E.NOT_LEADER_OR_FOLLOWER, "base_offset": -1}]}]}
    check.check(p.leader, 0, 9, req, refused, check.snapshot(0, req))
    ok = {"responses": [{"name": "t", "partition_responses": [Row((0, 0, 5, -1, 0))]}]}
    check.check(p.leader, 0, 9, req, ok, check.snapshot(0, req))
    assert any("after answering NOT_LEADER_OR_FOLLOWER" in v for v in check.violations)
    before = len(check.violations)
    not_enough = {"responses": [{"name": "t", "partition_responses": [
        {"index": 0, "error_code": E.NOT_ENOUGH_REPLICAS, "base_offset": -1}]}]}
    check.check(p.leader, 0, 9, req, not_enough, check.snapshot(0, req))
    assert len(check.violations) == before + 1 and "NOT_ENOUGH_REPLICAS" in \
        check.violations[-1]


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_takes_a_refusal_from_a_view_that_caught_up_to_another_leader(
        make_cluster) -> None:
    """Leadership went A -> B -> A before a request reached A, whose metadata lags: A
    still saw itself leading (the first epoch) when the request came, and had learnt
    of B's epoch, not yet of its own return, when it answered. Its ReplicaManager was
    a follower then, so the refusal is Kafka's: the check must read A's view of that
    very partition at the answer, not the controller's state."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 2, 3)
    p = state.topics["t"].partitions[1]
    a, first = p.leader, p.leader_epoch
    b = next(r for r in p.isr if r != a)
    state.metadata_views.set_lag(a, 5_000)
    sim.faults.apply({"op": "move_leader", "topic": "t", "partition": 1, "broker": b})
    sim.clock.advance(1_000)
    sim.faults.apply({"op": "move_leader", "topic": "t", "partition": 1, "broker": a})
    assert (p.leader, p.leader_epoch) == (a, first + 2)
    check = Soundness(state)
    req = _produce(partitions=(1,))
    sim.clock.advance(1_000)
    snap = check.snapshot(0, req, a)  # A's view: its own first epoch
    sim.clock.advance(3_500)
    assert state.metadata_views.leader_hint(a, "t", 1) == (b, first + 1)
    check.check(a, 0, 9, req, _answer(1, E.NOT_LEADER_OR_FOLLOWER), snap)
    assert check.violations == []


def test_soundness_counts_only_the_answers_of_the_apis_it_judges(one_partition) -> None:
    """``checked`` is how a test sees that the check judged an answer (the client test
    of the read_committed invariant asserts that it moved over its Fetch), so it counts
    the answers of Produce, Fetch, ListOffsets and EndTxn, and not the Metadata and
    ApiVersions answers a client's connection gets in between."""
    state, p, check, _ = one_partition
    metadata = {"topics": [{"name": "t", "topic_id": None}], "allow_auto_topic_creation": False}
    assert check.snapshot(3, metadata, p.leader) is None
    check.check(p.leader, 3, 12, metadata, {"brokers": [], "topics": []},
                check.snapshot(3, metadata, p.leader))
    check.check(p.leader, 18, 3, {}, {"error_code": 0, "api_keys": []},
                check.snapshot(18, {}, p.leader))
    assert check.checked == 0
    req = _produce(partitions=(0,))
    ok = {"responses": [{"name": "t", "partition_responses": [Row((0, 0, 5, -1, 0))]}]}
    check.check(p.leader, 0, 9, req, ok, check.snapshot(0, req, p.leader))
    end = {"transactional_id": "x", "producer_id": 7, "producer_epoch": 2, "committed": False}
    check.check(p.leader, 26, 3, end, {"error_code": 0}, check.snapshot(26, end, p.leader))
    assert check.checked == 2 and check.violations == []


def _fetch(partition: int, **fields: object) -> dict:
    """A consumer's Fetch of ``t``'s ``partition`` as decoded (every field present)."""
    return {"replica_id": -1, "replica_state": None, "isolation_level": 0,
            "topics": [{"topic": "t", "topic_id": bytes(16), "partitions": [
                {"partition": partition, "fetch_offset": 0}]}], **fields}


def _refused(api: int, partition: int, topic: dict | None = None) -> dict:
    """A Fetch (1) or ListOffsets (2) answer refusing ``partition`` with
    NOT_LEADER_OR_FOLLOWER."""
    part = {"partition_index": partition, "error_code": E.NOT_LEADER_OR_FOLLOWER}
    if api == 1:
        return {"responses": [{**(topic or {"topic": "t"}), "partitions": [part]}]}
    return {"topics": [{**(topic or {"name": "t"}), "partitions": [part]}]}


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_judges_a_clients_fetch_and_list_offsets_refused_by_the_leader(
        make_cluster) -> None:
    """Invariant 1 on Fetch and ListOffsets: the leader refusing a consumer's read is a
    lie, a follower's refusal is Kafka's, and a replica's fetch (a follower's, broker 0
    like any other, by replica_id or by v15's replica_state) is not a client's read and
    is not judged. A Fetch v13+ names its topic by id alone."""
    sim = make_cluster([0, 1, 2])
    state = sim.state
    state.create_topic("t", 3, 3)
    check = Soundness(state)
    led = {p.leader: p for p in state.topics["t"].partitions}
    p = next(q for q in state.topics["t"].partitions if q.leader != 0 and q.index != 0)
    follower = next(b for b in p.replicas if b != p.leader)

    def judged(broker: int, api: int, req: dict, answer: dict) -> int:
        before = len(check.violations), check.checked
        check.check(broker, api, 12, req, answer, check.snapshot(api, req, broker))
        assert check.checked == before[1] + 1
        return len(check.violations) - before[0]

    fetch = _fetch(p.index)
    assert judged(follower, 1, fetch, _refused(1, p.index)) == 0
    assert judged(p.leader, 1, fetch, _refused(1, p.index)) == 1
    assert "Fetch: broker" in check.violations[-1] and f"t-{p.index}" in check.violations[-1]
    by_id = {"topic": "", "topic_id": state.topics["t"].id}
    assert judged(p.leader, 1, _fetch(p.index, topics=[{**by_id, "partitions": [
        {"partition": p.index}]}]), _refused(1, p.index, by_id)) == 1
    # a topic id the cluster does not know (deleted meanwhile) is passed over, not the
    # topics after it
    unknown = {"topic": "", "topic_id": b"\x01" * 16}
    answer = _refused(1, p.index, unknown)
    answer["responses"] += _refused(1, p.index)["responses"]
    assert judged(p.leader, 1, fetch, answer) == 1
    # a replica's fetch: by replica_id (v14 and older) and by replica_state (v15+)
    assert judged(p.leader, 1, _fetch(p.index, replica_id=0), _refused(1, p.index)) == 0
    assert judged(p.leader, 1, _fetch(p.index, replica_id=follower),
                  _refused(1, p.index)) == 0
    assert judged(p.leader, 1, _fetch(p.index, replica_state={"replica_id": 0}),
                  _refused(1, p.index)) == 0
    assert judged(p.leader, 1, _fetch(p.index, replica_state={"replica_id": follower}),
                  _refused(1, p.index)) == 0
    # ListOffsets names partitions by partition_index
    lo = {"replica_id": -1, "topics": [{"name": "t", "partitions": [
        {"partition_index": p.index, "timestamp": -1}]}]}
    assert judged(follower, 2, lo, _refused(2, p.index)) == 0
    assert judged(p.leader, 2, lo, _refused(2, p.index)) == 1
    assert "ListOffsets: broker" in check.violations[-1]
    assert len(check.violations) == 4 and set(led) == {0, 1, 2}


def test_soundness_takes_an_append_answered_after_a_deposed_leaders_refusal(
        make_cluster) -> None:
    """Two Produces reach the leader at one epoch: an acks=1 append, and an acks=all one
    that waits for the ISR. The leader moves; the waiting one is refused
    (DelayedProduce: NOT_LEADER_OR_FOLLOWER), and the acks=1 answer, appended before the
    move, leaves after it on its own connection. Kafka answers both so: the refusal
    says nothing of the epoch the append was made at."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 1, 3)
    p = state.topics["t"].partitions[0]
    leader = p.leader
    check = Soundness(state)
    req = _produce(partitions=(0,))
    appended, parked = check.snapshot(0, req, leader), check.snapshot(0, req, leader)
    sim.faults.apply({"op": "move_leader", "topic": "t", "partition": 0})
    assert p.leader != leader
    check.check(leader, 0, 9, req, _answer(0, E.NOT_LEADER_OR_FOLLOWER), parked)
    ok = {"responses": [{"name": "t", "partition_responses": [Row((0, 0, 5, -1, 0))]}]}
    check.check(leader, 0, 9, req, ok, appended)
    assert check.violations == []


def _answer(index: int, code: int, **fields: object) -> dict:
    """A Produce answer of topic ``t`` for one partition, as a handler builds it."""
    return {"responses": [{"name": "t", "partition_responses": [
        {"index": index, "error_code": code, "base_offset": -1, **fields}]}]}


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_not_enough_replicas_is_kafkas_only_below_min_isr(make_cluster) -> None:
    """Kafka's Partition.appendRecordsToLeader refuses acks=all with NOT_ENOUGH_REPLICAS
    while the ISR's size is below min.insync.replicas: an ISR exactly at it is enough,
    and the answer there is a lie. A partition the check cannot find (an index past the
    last, a topic deleted) is not judged."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 1, 2, configs={"min.insync.replicas": "2"})
    p = state.topics["t"].partitions[0]
    assert len(p.isr) == 2
    check = Soundness(state)
    req = _produce(partitions=(0,))
    check.check(p.leader, 0, 9, req, _answer(0, E.NOT_ENOUGH_REPLICAS), check.snapshot(0, req))
    assert len(check.violations) == 1 and "ISR" in check.violations[0]
    follower = next(b for b in p.isr if b != p.leader)
    sim.faults.apply({"op": "stop_broker", "broker": follower})
    assert len(p.isr) == 1
    check.check(p.leader, 0, 9, req, _answer(0, E.NOT_ENOUGH_REPLICAS), check.snapshot(0, req))
    req = _produce(partitions=(1,))
    check.check(p.leader, 0, 9, req, _answer(1, E.NOT_ENOUGH_REPLICAS), check.snapshot(0, req))
    assert len(check.violations) == 1


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_takes_not_enough_replicas_answered_after_the_isr_grew_back(
        make_cluster) -> None:
    """Kafka decides NOT_ENOUGH_REPLICAS as it appends (Partition.appendRecordsToLeader),
    and an acks=all Produce whose other partition waits for its followers is answered
    when that one is replicated (DelayedProduce keeps the failed partition's error): by
    then the refused partition's ISR may have grown back. The Produce handler's own
    answer here; the check judges the ISR the request came to (the partition epoch
    moves with every ISR change): unchanged since, it must be too small."""
    sim = make_cluster(3)
    state, clock, faults = sim
    state.create_topic("t", assignments={0: [1, 2], 1: [1, 3]},
                       configs={"min.insync.replicas": "2"})
    p0, p1 = state.topics["t"].partitions
    faults.apply({"op": "stop_broker", "broker": 2})
    faults.apply({"op": "pause_follower", "broker": 3})
    assert (p0.leader, p0.isr, p1.leader, p1.isr) == (1, [1], 1, [1, 3])
    check = Soundness(state)
    req = {"transactional_id": None, "acks": -1, "timeout_ms": 30_000, "topic_data": [
        {"name": "t", "partition_data": [{"index": i, "records": build_batch([(None, b"v")])}
                                         for i in (0, 1)]}]}
    snap = check.snapshot(0, req, 1)
    ctx = RequestContext(state, 1, 0, 9, 1, "c", services=build_services(state))
    waiting = api_000_produce.handle(ctx, req, 9)
    assert isinstance(waiting, Delayed)
    faults.apply({"op": "start_broker", "broker": 2})
    for _ in range(20):
        clock.advance(100)
        state.tick()
    assert p0.isr == [1, 2] and waiting.check() is None  # t-1 still waits for broker 3
    faults.apply({"op": "resume_follower", "broker": 3})
    for _ in range(5):
        clock.advance(100)
        state.tick()
    answer = waiting.check()
    assert answer is not None
    assert [int(pr[1] if isinstance(pr, tuple) else pr["error_code"])
            for pr in answer["responses"][0]["partition_responses"]] == [
        E.NOT_ENOUGH_REPLICAS, E.NONE]
    check.check(1, 0, 9, req, answer, snap)
    assert check.violations == []
    # the same answer to a request that came to the ISR of two is the lie
    check.check(1, 0, 9, req, answer, check.snapshot(0, req, 1))
    assert check.violations == [
        "Produce: NOT_ENOUGH_REPLICAS for t-0 with ISR [1, 2], min.insync.replicas 2"]


def test_soundness_passes_over_not_enough_replicas_for_a_partition_gone_since(
        make_cluster) -> None:
    """A partition refused NOT_ENOUGH_REPLICAS while another waited for its followers,
    and its topic deleted (or deleted and made again with fewer partitions) before the
    answer left: no partition is left to judge the ISR of."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 2, 3, configs={"min.insync.replicas": "2"})
    leader = state.topics["t"].partitions[1].leader
    check = Soundness(state)
    req = _produce(partitions=(0, 1))
    answer = {"responses": [{"name": "t", "partition_responses": [
        Row((0, 0, 0, -1, 0)),
        {"index": 1, "error_code": E.NOT_ENOUGH_REPLICAS, "base_offset": -1}]}]}
    snap = check.snapshot(0, req, leader)
    state.delete_topic("t")
    check.check(leader, 0, 9, req, answer, snap)
    state.create_topic("t", 1, 3, configs={"min.insync.replicas": "2"})
    check.check(leader, 0, 9, req, answer, snap)
    assert check.violations == []


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_names_not_enough_replicas_answered_to_acks_1(make_cluster) -> None:
    """Partition.appendRecordsToLeader asks whether the ISR is too small only of an
    acks=all append: acks=1 is never answered NOT_ENOUGH_REPLICAS, however small."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 1, 3, configs={"min.insync.replicas": "3"})
    p = state.topics["t"].partitions[0]
    sim.faults.apply({"op": "stop_broker", "broker": next(b for b in p.isr
                                                           if b != p.leader)})
    assert len(p.isr) == 2
    check = Soundness(state)
    for acks in (-1, 1):
        req = _produce(acks=acks, partitions=(0,))
        check.check(p.leader, 0, 9, req, _answer(0, E.NOT_ENOUGH_REPLICAS),
                    check.snapshot(0, req, p.leader))
    assert check.violations == ["Produce: NOT_ENOUGH_REPLICAS for t-0 answered to acks=1"]


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_names_a_refusal_whose_hint_names_the_refusing_broker(one_partition
                                                                        ) -> None:
    """Invariant 5: a NOT_LEADER_OR_FOLLOWER answer to a Produce names the leader the
    broker's metadata has, never the broker itself (a client would retry there for
    ever). A follower naming the leader, or naming no one, is Kafka's answer."""
    state, p, check, follower = one_partition
    req = _produce(partitions=(0,))

    def refuse(hint: dict | None) -> None:
        fields = {} if hint is None else {"current_leader": hint}
        check.check(follower, 0, 9, req, _answer(0, E.NOT_LEADER_OR_FOLLOWER, **fields),
                    check.snapshot(0, req, follower))

    refuse({"leader_id": p.leader, "leader_epoch": p.leader_epoch})
    refuse({"leader_id": -1, "leader_epoch": -1})
    refuse(None)
    assert check.violations == []
    refuse({"leader_id": follower, "leader_epoch": p.leader_epoch})
    assert check.violations == [
        f"Produce: broker {follower} answered NOT_LEADER_OR_FOLLOWER for t-0 naming "
        "itself the current leader"]
    # an answer that is no refusal carries no hint to judge
    check.check(p.leader, 0, 9, req, _answer(0, E.NONE, current_leader={
        "leader_id": p.leader, "leader_epoch": 0}), check.snapshot(0, req, p.leader))
    assert len(check.violations) == 1


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_reads_a_produce_answer_in_each_shape_it_is_encoded_from(one_partition
                                                                           ) -> None:
    """A partition's answer is a dict or a ``Row`` (index, error code, base offset...;
    what the handler builds for an appended batch, and an encoding of any answer whose
    other fields are defaults, a refusal's hint among them); a dict may leave the base
    offset, the error code or the index out, which the client then reads as 0. Produce
    v13 names its topics by id alone, and one the cluster no longer knows (deleted while
    the request was in) does not hide the topics after it."""
    state, p, check, follower = one_partition
    req = _produce(partitions=(0,))
    refusal = Row((0, E.NOT_LEADER_OR_FOLLOWER, -1, -1, -1))
    check.check(follower, 0, 9, req, {"responses": [
        {"name": "t", "partition_responses": [refusal]}]}, check.snapshot(0, req, follower))
    assert check.violations == []
    check.check(p.leader, 0, 9, req, {"responses": [
        {"name": "t", "partition_responses": [refusal]}]}, check.snapshot(0, req, p.leader))
    assert len(check.violations) == 1 and "while it led it" in check.violations[0]
    # a dict leaving the index out is partition 0's answer
    check.check(p.leader, 0, 9, req, {"responses": [{"name": "t", "partition_responses": [
        {"error_code": E.NOT_LEADER_OR_FOLLOWER}]}]}, check.snapshot(0, req, p.leader))
    assert len(check.violations) == 2 and "for t-0 while it led it" in check.violations[1]
    # a retried batch answered as dicts, and by topic id (v13) after an unknown id
    check = Soundness(state)
    batch = build_batch([(b"k", b"v")], producer_id=7, producer_epoch=0, base_sequence=3)
    gone = {"name": "", "topic_id": b"\x01" * 16}
    known = {"name": "", "topic_id": state.topics["t"].id}
    req = {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {**gone, "partition_data": [{"index": 0, "records": batch}]},
        {**known, "partition_data": [{"index": 0, "records": batch}]}]}
    for offset in (5, 5, 9):
        answer = {"responses": [
            {**gone, "partition_responses": [
                {"index": 0, "error_code": E.UNKNOWN_TOPIC_ID, "base_offset": -1}]},
            {**known, "partition_responses": [
                {"index": 0, "error_code": 0, "base_offset": offset}]}]}
        check.check(p.leader, 0, 13, req, answer, check.snapshot(0, req, p.leader))
    assert check.violations == [
        "Produce: producer 7 epoch 0 sequence 3 to t-0 answered offset 9, first appended "
        f"at 5 in the same leader epoch {p.leader_epoch}: a retried batch written twice"]
    # a transactional batch answered by a dict without its base offset went to offset 0
    check = Soundness(state)
    data = build_batch([(b"k", b"a")], producer_id=8, producer_epoch=1, base_sequence=0,
                       transactional=True)
    req = _produce(records=data, partitions=(0,))
    check.check(p.leader, 0, 9, req, {"responses": [{"name": "t", "partition_responses": [
        {"index": 0}]}]}, check.snapshot(0, req, p.leader))
    end = {"transactional_id": "x", "producer_id": 8, "producer_epoch": 1, "committed": False}
    check.check(p.leader, 26, 3, end, {"error_code": 0}, check.snapshot(26, end))
    check.check(p.leader, 1, 12, {"isolation_level": 1}, _fetch_answer(data, []), {})
    assert len(check.violations) == 1 and "offsets 0-0 of t-0" in check.violations[0]


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_names_each_violation_with_what_a_reader_needs(make_cluster) -> None:
    """The violation is the check's whole output (the test fails on it): each names
    the broker, the partition, the epochs or offsets and the rule, word for word."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 1, 3, configs={"min.insync.replicas": "3"})
    p = state.topics["t"].partitions[0]
    leader, epoch = p.leader, p.leader_epoch
    check = Soundness(state)
    batch = build_batch([(b"k", b"v")], producer_id=7, producer_epoch=1, base_sequence=4)
    req = _produce(records=batch, partitions=(0,))
    check.check(leader, 0, 9, req, _answer(0, E.NOT_LEADER_OR_FOLLOWER),
                check.snapshot(0, req, leader))
    for offset in (5, 9):
        ok = {"responses": [{"name": "t", "partition_responses": [Row((0, 0, offset, -1,
                                                                        0))]}]}
        check.check(leader, 0, 9, req, ok, check.snapshot(0, req, leader))
    check.check(leader, 0, 9, req, _answer(0, E.NOT_ENOUGH_REPLICAS),
                check.snapshot(0, req, leader))
    isr = list(p.isr)
    assert check.violations == [
        f"Produce: broker {leader} answered NOT_LEADER_OR_FOLLOWER for t-0 while it led "
        f"it at leader epoch {epoch} in the controller's state and in its own metadata, "
        "the whole time the request was in it",
        f"Produce: broker {leader} appended to t-0 at leader epoch {epoch} after "
        "answering NOT_LEADER_OR_FOLLOWER for it at that same epoch",
        "Produce: producer 7 epoch 1 sequence 4 to t-0 answered offset 9, first appended "
        f"at 5 in the same leader epoch {epoch}: a retried batch written twice",
        f"Produce: NOT_ENOUGH_REPLICAS for t-0 with ISR {isr}, min.insync.replicas 3",
    ]


def _fetch_answer(records: bytes, aborted: list[tuple[int, int]] | None) -> dict:
    return {"responses": [{"topic": "t", "partitions": [
        {"partition_index": 0, "error_code": 0, "high_watermark": 9, "last_stable_offset": 9,
         "records": records, "aborted_transactions": None if aborted is None else [
             {"producer_id": pid, "first_offset": first} for pid, first in aborted]}]}]}


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_names_an_aborted_record_given_to_a_read_committed_reader(one_partition
                                                                            ) -> None:
    """The client's history decides: a transactional batch appended (Produce answered
    0) whose producer then aborted (EndTxn committed=false answered 0) must not reach a
    read_committed reader; an aborted-transaction entry (with the ABORT marker after it)
    makes the reader skip it, and a read_uncommitted reader may have it."""
    state, p, check, _ = one_partition
    data = build_batch([(b"k", b"a"), (b"k", b"b")], producer_id=7, producer_epoch=2,
                       base_sequence=0, transactional=True)
    req = _produce(records=data, partitions=(0,))
    appended = {"responses": [{"name": "t", "partition_responses": [Row((0, 0, 4, -1, 0))]}]}
    check.check(p.leader, 0, 9, req, appended, check.snapshot(0, req))
    end = {"transactional_id": "x", "producer_id": 7, "producer_epoch": 2, "committed": False}
    check.check(p.leader, 26, 3, end, {"error_code": 0}, check.snapshot(26, end))
    at4 = build_batch([(b"k", b"a"), (b"k", b"b")], base_offset=4, producer_id=7,
                      producer_epoch=2, base_sequence=0, transactional=True)
    marker = bytearray(control_batch(False, 7, 2, 0))
    marker[0:8] = (6).to_bytes(8, "big")
    committed, uncommitted = {"isolation_level": 1}, {"isolation_level": 0}
    # skipped by the reader: an entry from offset 4, the marker after the data
    check.check(p.leader, 1, 12, committed, _fetch_answer(at4 + bytes(marker), [(7, 4)]), {})
    # read_uncommitted readers are given aborted records: Kafka's answer too
    check.check(p.leader, 1, 12, uncommitted, _fetch_answer(at4, None), {})
    assert check.violations == []
    # no entry: the reader gives the aborted records to its application
    check.check(p.leader, 1, 12, committed, _fetch_answer(at4, []), {})
    assert len(check.violations) == 1 and "offsets 4-5 of t-0" in check.violations[0] \
        and "aborted" in check.violations[0]
    # an entry of another producer, or one that starts after the batch, skips nothing
    check.check(p.leader, 1, 12, committed, _fetch_answer(at4, [(8, 4), (7, 6)]), {})
    assert len(check.violations) == 2
    # a committed transaction's batch is the reader's, entry or not
    nxt = build_batch([(b"k", b"c")], base_offset=7, producer_id=7, producer_epoch=2,
                      base_sequence=2, transactional=True)
    req = _produce(records=nxt, partitions=(0,))
    appended = {"responses": [{"name": "t", "partition_responses": [Row((0, 0, 7, -1, 0))]}]}
    check.check(p.leader, 0, 9, req, appended, check.snapshot(0, req))
    end = dict(end, committed=True)
    check.check(p.leader, 26, 3, end, {"error_code": 0}, check.snapshot(26, end))
    check.check(p.leader, 1, 12, committed, _fetch_answer(nxt, []), {})
    assert len(check.violations) == 2
    # the ABORT marker ends the entry's hold on its producer: a later aborted batch of
    # it with no entry of its own is given to the reader
    last = build_batch([(b"k", b"d")], base_offset=8, producer_id=7, producer_epoch=2,
                       base_sequence=3, transactional=True)
    req = _produce(records=last, partitions=(0,))
    appended = {"responses": [{"name": "t", "partition_responses": [Row((0, 0, 8, -1, 0))]}]}
    check.check(p.leader, 0, 9, req, appended, check.snapshot(0, req))
    end = dict(end, committed=False)
    check.check(p.leader, 26, 3, end, {"error_code": 0}, check.snapshot(26, end))
    answer = _fetch_answer(at4 + bytes(marker) + nxt + last, [(7, 4)])
    check.check(p.leader, 1, 12, committed, answer, {})
    assert len(check.violations) == 3 and "offsets 8-8 of t-0" in check.violations[2]


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_counts_only_an_end_txn_answered_without_error(one_partition) -> None:
    """An EndTxn refused (CONCURRENT_TRANSACTIONS: the coordinator still completing the
    last one) decided nothing: the transaction's batches stay open, and a reader given
    them is not judged; the retry answered 0 aborts them."""
    state, p, check, _ = one_partition
    data = build_batch([(b"k", b"a")], producer_id=7, producer_epoch=2, base_sequence=0,
                       transactional=True)
    req = _produce(records=data, partitions=(0,))
    appended = {"responses": [{"name": "t", "partition_responses": [Row((0, 0, 0, -1, 0))]}]}
    check.check(p.leader, 0, 9, req, appended, check.snapshot(0, req))
    # a transaction that appended nothing here (offsets only) ends with nothing to decide
    empty = {"transactional_id": "y", "producer_id": 8, "producer_epoch": 0,
             "committed": False}
    check.check(p.leader, 26, 3, empty, {"error_code": 0}, check.snapshot(26, empty))
    end = {"transactional_id": "x", "producer_id": 7, "producer_epoch": 2, "committed": False}
    committed = {"isolation_level": 1}
    check.check(p.leader, 26, 3, end, {"error_code": E.CONCURRENT_TRANSACTIONS},
                check.snapshot(26, end))
    check.check(p.leader, 1, 12, committed, _fetch_answer(data, []), {})
    assert check.violations == []
    check.check(p.leader, 26, 3, end, {"error_code": 0}, check.snapshot(26, end))
    check.check(p.leader, 1, 12, committed, _fetch_answer(data, []), {})
    assert len(check.violations) == 1 and "offsets 0-0 of t-0" in check.violations[0]


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_remembers_every_batch_of_an_aborted_transaction(make_cluster) -> None:
    """A transaction writes to several partitions before it ends: its abort decides
    every batch it appended, not its last alone."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 2, 3)
    p = state.topics["t"].partitions[0]
    check = Soundness(state)
    data = build_batch([(b"k", b"a")], producer_id=7, producer_epoch=2, base_sequence=0,
                       transactional=True)
    req = _produce(records=data, partitions=(0, 1))
    appended = {"responses": [{"name": "t", "partition_responses": [
        Row((0, 0, 0, -1, 0)), Row((1, 0, 0, -1, 0))]}]}
    check.check(p.leader, 0, 9, req, appended, check.snapshot(0, req, p.leader))
    end = {"transactional_id": "x", "producer_id": 7, "producer_epoch": 2, "committed": False}
    check.check(p.leader, 26, 3, end, {"error_code": 0}, check.snapshot(26, end))
    answer = {"responses": [{"topic": "t", "partitions": [
        {"partition_index": i, "error_code": 0, "records": data, "aborted_transactions": []}
        for i in (0, 1)]}]}
    check.check(p.leader, 1, 12, {"isolation_level": 1}, answer, {})
    assert [v.split(" of ")[1].split(",")[0] for v in check.violations] == ["t-0", "t-1"]


def test_soundness_forgets_the_oldest_beyond_its_bound(monkeypatch) -> None:
    """Memory is bounded: past MAX_TRACKED entries a table forgets the one remembered
    longest ago, and remembering a key again makes it the newest."""
    monkeypatch.setattr(soundness, "MAX_TRACKED", 2)
    table: dict = {}
    for key in ("a", "b", "a", "c"):
        Soundness._remember(table, key, key.upper())
    assert table == {"a": "A", "c": "C"}
    Soundness._remember(table, "d", "D")
    assert list(table) == ["c", "d"]


def test_soundness_reads_the_fetch_of_a_consumer_as_kafka_names_it() -> None:
    """FetchRequest.replicaId: replica_id up to v14, replica_state's from v15, -1 for a
    consumer (its replica_state absent before v15, and -1 in it after)."""
    assert _replica_id({"replica_id": -1, "replica_state": None}) == -1
    assert _replica_id({"replica_id": -1, "replica_state": {"replica_id": -1}}) == -1
    assert _replica_id({"replica_id": 0, "replica_state": None}) == 0
    assert _replica_id({"replica_id": -1, "replica_state": {"replica_id": 2}}) == 2


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_replays_the_reader_batch_by_batch_as_kafkas_consumer(one_partition
                                                                       ) -> None:
    """The replay is Kafka's CompletedFetch: a batch with no producer id is passed over,
    an aborted-transaction entry counts from the batch that reaches its first offset
    (one starting at a single-record batch's own offset counts for it), each entry of
    the answer counts, only an ABORT marker takes a producer out (a COMMIT marker
    closing a transaction the answer calls aborted leaves it in), a partial batch at the
    end of the answer is not yet given to the application, and producer id 0 is one like
    any other."""
    state, p, check, _ = one_partition

    def aborted(pid: int, offset: int, n: int = 1) -> bytes:
        """A transactional batch of ``n`` records of producer ``pid`` appended at
        ``offset`` (the Produce answered so), its transaction then aborted."""
        data = build_batch([(b"k", b"v")] * n, producer_id=pid, producer_epoch=0,
                           base_sequence=0, transactional=True)
        req = _produce(records=data, partitions=(0,))
        check.check(p.leader, 0, 9, req, {"responses": [{"name": "t", "partition_responses": [
            Row((0, 0, offset, -1, 0))]}]}, check.snapshot(0, req, p.leader))
        end = {"transactional_id": f"x{pid}", "producer_id": pid, "producer_epoch": 0,
               "committed": False}
        check.check(p.leader, 26, 3, end, {"error_code": 0}, check.snapshot(26, end))
        return build_batch([(b"k", b"v")] * n, base_offset=offset, producer_id=pid,
                           producer_epoch=0, base_sequence=0, transactional=True)

    def marker(pid: int, offset: int, commit: bool) -> bytes:
        m = bytearray(control_batch(commit, pid, 0, 0))
        m[0:8] = offset.to_bytes(8, "big")
        return bytes(m)

    def judged(records: bytes, entries: list[tuple[int, int]]) -> list[str]:
        before = len(check.violations)
        check.check(p.leader, 1, 12, {"isolation_level": 1}, {"responses": [
            {"topic": "t", "partitions": [{"partition_index": 0, "error_code": 0,
                                           "records": records, "aborted_transactions": [
                {"producer_id": pid, "first_offset": first} for pid, first in entries]}]}]},
            {})
        return [v.split(" gave a read_committed reader offsets ")[1].split(" of ")[0]
                for v in check.violations[before:]]

    plain = build_batch([(b"k", b"p")], base_offset=0)
    zero = aborted(0, 1)  # producer id 0, at offset 1
    assert judged(plain + zero, []) == ["1-1"]
    assert judged(plain + zero, [(0, 1)]) == []  # the entry at the batch's own offset
    seven, eight = aborted(7, 2), aborted(8, 3)
    assert judged(seven + eight, [(7, 2), (8, 3)]) == []  # each entry counts
    # a COMMIT marker does not take producer 7 out; an ABORT marker does
    nine = aborted(7, 5)
    assert judged(seven + marker(7, 4, True) + nine, [(7, 2)]) == []
    assert judged(seven + marker(7, 4, False) + nine, [(7, 2)]) == ["5-5"]
    # a batch cut short at the end of the answer is not delivered yet
    assert judged(plain + zero[:-3], []) == []


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_judges_each_partition_of_a_produce_past_one_without_a_batch(make_cluster
                                                                              ) -> None:
    """A Produce may carry a partition with no records, or bytes that hold no batch
    (refused: INVALID_RECORD, CORRUPT_MESSAGE): the partitions after it are judged."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 3, 3)
    p = state.topics["t"].partitions[2]
    check = Soundness(state)
    batch = build_batch([(b"k", b"v")], producer_id=7, producer_epoch=0, base_sequence=0)
    req = {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": None},
                                         {"index": 1, "records": b"\x00" * 10},
                                         {"index": 2, "records": batch}]}]}
    for offset in (5, 9):
        check.check(p.leader, 0, 9, req, {"responses": [{"name": "t", "partition_responses": [
            {"index": 0, "error_code": E.INVALID_RECORD, "base_offset": -1},
            {"index": 1, "error_code": E.CORRUPT_MESSAGE, "base_offset": -1},
            Row((2, 0, offset, -1, 0))]}]}, check.snapshot(0, req, p.leader))
    assert len(check.violations) == 1 and "answered offset 9, first appended at 5" in \
        check.violations[0]


@pytest.mark.kafka_emulator_allow_exceptions  # the violations are logged at ERROR
def test_soundness_replays_the_reader_on_every_partition_it_would_read(make_cluster
                                                                       ) -> None:
    """The read_committed replay reads what a consumer reads: every topic of the answer
    (by name, or by id alone from Fetch v13), every partition after an empty one, and
    not a partition answered with an error (the consumer hands none of its records to
    the application, whatever bytes came with it)."""
    sim = make_cluster(3)
    state = sim.state
    state.create_topic("t", 2, 3)
    p = state.topics["t"].partitions[1]
    check = Soundness(state)
    data = build_batch([(b"k", b"a")], producer_id=7, producer_epoch=2, base_sequence=0,
                       transactional=True)
    req = _produce(records=data, partitions=(1,))
    appended = {"responses": [{"name": "t", "partition_responses": [Row((1, 0, 0, -1, 0))]}]}
    check.check(p.leader, 0, 9, req, appended, check.snapshot(0, req))
    end = {"transactional_id": "x", "producer_id": 7, "producer_epoch": 2, "committed": False}
    check.check(p.leader, 26, 3, end, {"error_code": 0}, check.snapshot(26, end))
    committed = {"isolation_level": 1}

    def part(index: int, records: bytes, error: int = 0) -> dict:
        return {"partition_index": index, "error_code": error, "records": records,
                "aborted_transactions": []}

    def judged(*topics: dict) -> int:
        before = len(check.violations)
        check.check(p.leader, 1, 13, committed, {"responses": list(topics)}, {})
        return len(check.violations) - before

    assert judged({"topic": "t", "partitions": [
        part(1, data, E.NOT_LEADER_OR_FOLLOWER)]}) == 0
    assert judged({"topic": "t", "partitions": [part(0, b""), part(1, data)]}) == 1
    assert check.violations[-1] == (
        f"Fetch: broker {p.leader} gave a read_committed reader offsets 0-0 of t-1, "
        "records of producer 7 epoch 2 whose transaction it aborted (EndTxn "
        "committed=false answered 0), with no aborted-transaction entry to skip them")
    assert judged({"topic": "t", "partitions": [part(0, b"", E.NOT_LEADER_OR_FOLLOWER),
                                                part(1, data)]}) == 1
    by_id = {"topic": "", "topic_id": state.topics["t"].id}
    unknown = {"topic": "", "topic_id": b"\x01" * 16}
    assert judged({**unknown, "partitions": [part(1, data)]},
                  {**by_id, "partitions": [part(1, data)]}) == 1


def test_a_coordinator_moves_once_per_quiet_window_and_says_when(make_cluster) -> None:
    """Drawn, one client's requests move a coordinator's partition at most once per
    COORDINATOR_QUIET_REQUESTS of them, before the request or after its answer (the
    record says which); nothing moves before the internal topic exists, or without
    the services."""
    from emulator.faults.adversary import COORDINATOR_MOVE_AFTER
    sim = make_cluster(3)
    state = sim.state
    services = build_services(state)
    hb = {"group_id": "g", "member_id": "m", "generation_id": 1}
    scale = {REBALANCE: 0, KICK: 0, COORDINATOR_MOVE: 100, COORDINATOR_MOVE_AFTER: 0}
    adv = Adversary(1, state, services, scale=dict(scale))
    assert adv.before(0, 12, 4, "a", hb) is None  # no __consumer_offsets yet
    services.groups.topic.ensure()
    index = services.groups.topic.partition_for("g")
    p = state.topics["__consumer_offsets"].partitions[index]
    moves = []
    for n in range(2, 110):
        leader = p.leader
        adv.before(leader, 12, 4, "a", hb)
        if p.leader != leader:
            moves.append(n)
            assert adv.record[-1].detail == (f"coordinator of 'g' (__consumer_offsets-"
                                             f"{index}) moved {leader} -> {p.leader} "
                                             "before the request")
    assert moves == [2, 52, 102]
    after = Adversary(1, state, services, scale={**scale, COORDINATOR_MOVE: 0,
                                                  COORDINATOR_MOVE_AFTER: 100})
    leader = p.leader
    plan = after.before(leader, 12, 4, "a", hb)
    assert plan is not None and p.leader == leader
    assert plan.post("answer") == "answer" and p.leader != leader
    assert after.record[-1].detail == (f"coordinator of 'g' (__consumer_offsets-{index}) "
                                       f"moved {leader} -> {p.leader} after the answer")
    assert after.before(p.leader, 12, 4, "a", hb) is None  # quiet now
    end = {"transactional_id": "tx", "producer_id": 1, "producer_epoch": 0, "committed": True}
    txn = Adversary(1, state, services, scale={COORDINATOR_MOVE: 100, LOST_RESPONSE: 0,
                                               ZOMBIE: 0})
    assert txn.before(0, 26, 3, "a", end) is None  # no __transaction_state yet
    assert Adversary(1, state, None, scale=dict(scale)).before(p.leader, 12, 4, "a", hb
                                                               ) is None


def test_a_move_after_the_answer_replays_as_one(make_cluster) -> None:
    """The two coordinator moves of one API are two kinds, so that a replayed key says
    which: a move after the answer stays after the answer (shrink.py replays keys)."""
    from emulator.faults.adversary import COORDINATOR_MOVE_AFTER, parse_scale
    sim = make_cluster(3)
    services = build_services(sim.state)
    services.groups.topic.ensure()
    p = sim.state.topics["__consumer_offsets"].partitions[services.groups.topic
                                                         .partition_for("g")]
    leader = p.leader
    adv = Adversary(1, sim.state, services, script=_script(
        ("a", leader, "Heartbeat", 1, COORDINATOR_MOVE_AFTER)))
    plan = adv.before(leader, 12, 4, "a", {"group_id": "g", "member_id": "m",
                                           "generation_id": 1})
    assert plan is not None and plan.post is not None and p.leader == leader  # not yet
    assert plan.post({"error_code": 0}) == {"error_code": 0} and p.leader != leader
    assert adv.record[-1].kind == COORDINATOR_MOVE_AFTER
    # scaling the family scales both, naming one scales it alone
    fam = Adversary(1, sim.state, scale=parse_scale("coordinator_move=0"))
    assert all(fam.rate(r) == 0 for r in __import__(
        "emulator.faults.adversary", fromlist=["RULES"]).RULES[12]
        if r.kind in (COORDINATOR_MOVE, COORDINATOR_MOVE_AFTER))
