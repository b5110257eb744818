"""The adversary's decisions (emulator/faults/adversary.py), sans I/O: a pure function of
(seed, client, broker, API, n), so one client's faults do not depend on the others'; and
the move_leader fault operation it moves leaders with."""

from __future__ import annotations

import pytest

from emulator.faults import FaultError
from emulator.faults.adversary import (
    KINDS,
    LANDED_ERROR,
    LOST_RESPONSE,
    Adversary,
    draw,
    parse_scale,
)

PRODUCE = {"acks": -1, "timeout_ms": 1000, "topic_data": [
    {"name": "t", "partition_data": [{"index": 0, "records": b""},
                                     {"index": 1, "records": b""}]}]}


def _faults(adv: Adversary, client: str) -> list[tuple]:
    return [f.key() for f in adv.record if f.client_id == client]


def test_draw_is_a_pure_uniform_function_of_its_inputs() -> None:
    assert draw(1, "c", 1, 0, 5) == draw(1, "c", 1, 0, 5)
    assert draw(1, "c", 1, 0, 5) != draw(2, "c", 1, 0, 5)
    values = [draw(3, "c", 1, 0, n) for n in range(4000)]
    assert all(0 <= v < 1 for v in values)
    assert 0.45 < sum(values) / len(values) < 0.55
    assert 0.08 < sum(v < 0.1 for v in values) / len(values) < 0.12


def test_a_clients_faults_replay_whatever_the_other_clients_do(make_cluster) -> None:
    sim = make_cluster(3)
    sim.state.create_topic("t", 2, 3)
    alone = Adversary(5, sim.state)
    for _ in range(200):
        alone.before(1, 0, 9, "a", PRODUCE)
    mixed = Adversary(5, sim.state)
    for i in range(200):
        for _ in range(i % 3):
            mixed.before(1, 0, 9, "b", PRODUCE)  # another client, interleaved
        mixed.before(1, 0, 9, "a", PRODUCE)
    assert len(_faults(alone, "a")) > 10
    assert _faults(alone, "a") == _faults(mixed, "a")
    other = Adversary(6, sim.state)
    for _ in range(200):
        other.before(1, 0, 9, "a", PRODUCE)
    assert _faults(other, "a") != _faults(alone, "a")


def test_rates_scale_per_kind_and_acks_decide_what_applies(make_cluster) -> None:
    sim = make_cluster(3)
    sim.state.create_topic("t", 2, 3)
    off = Adversary(1, sim.state, scale={"all": 0.0})
    for _ in range(300):
        assert off.before(1, 0, 9, "a", PRODUCE) is None
    only_lost = Adversary(1, sim.state, scale={"error": 0, "landed_error": 0})
    acks1 = dict(PRODUCE, acks=1)
    for _ in range(300):
        only_lost.before(1, 0, 9, "a", PRODUCE)
        only_lost.before(1, 0, 9, "b", acks1)
    kinds = {(f.client_id, f.kind) for f in only_lost.record}
    assert kinds == {("a", LOST_RESPONSE), ("b", LOST_RESPONSE)}
    landed = Adversary(1, sim.state, scale={"error": 0, "lost_response": 0})
    for _ in range(300):
        landed.before(1, 0, 9, "b", acks1)  # acks=1 does not wait for replicas: no timeout
        landed.before(1, 0, 9, "a", PRODUCE)
    assert {(f.client_id, f.kind) for f in landed.record} == {("a", LANDED_ERROR)}


def test_error_faults_name_one_partition_of_the_request(make_cluster) -> None:
    sim = make_cluster(3)
    sim.state.create_topic("t", 2, 3)
    adv = Adversary(2, sim.state, scale={"landed_error": 0, "lost_response": 0})
    plans = [p for p in (adv.before(1, 0, 9, "a", PRODUCE) for _ in range(300)) if p]
    assert plans
    assert {(p.injection.topic, p.injection.partition) for p in plans
            if p.injection} == {("t", 0), ("t", 1)}


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
    for bad, why in (("kik=2", "kinds are all, " + ", ".join(KINDS)), ("kick=-1", ">= 0"),
                     ("kick", "a number"), ("kick=nan", ">= 0")):
        with pytest.raises(ValueError, match=why):
            parse_scale(bad)


def test_turned_off_it_injects_nothing_but_keeps_counting(make_cluster) -> None:
    """A test's setup can run with the faults off; the requests still count, so the
    faults after it replay for the same whole sequence."""
    sim = make_cluster(3)
    sim.state.create_topic("t", 2, 3)
    adv, ref = Adversary(9, sim.state), Adversary(9, sim.state)
    adv.tune(enabled=False)
    for _ in range(100):
        assert adv.before(1, 0, 9, "a", PRODUCE) is None
        ref.before(1, 0, 9, "a", PRODUCE)
    assert not adv.record
    adv.tune(enabled=True, scale="all=1")
    for _ in range(200):
        adv.before(1, 0, 9, "a", PRODUCE)
        ref.before(1, 0, 9, "a", PRODUCE)
    assert _faults(adv, "a") == _faults(ref, "a")[-len(_faults(adv, "a")):]
    assert adv.record and all(f.n > 100 for f in adv.record)


def test_a_landed_error_fails_the_partitions_the_handler_answered_as_rows(make_cluster) -> None:
    """The Produce handler answers an appended partition as a ``wire.codec.Row``; the
    REQUEST_TIMED_OUT after the write landed must fail those too (it raised
    AttributeError on them, closing the client's connection instead)."""
    from wire.codec import Row
    from wire.connection import encode_response
    from wire.errors import ErrorCode as E
    from wire.frames import decode_response

    sim = make_cluster(3)
    sim.state.create_topic("t", 2, 3)
    landed = Adversary(1, sim.state, scale={"error": 0, "lost_response": 0})
    plan = next(p for p in (landed.before(1, 0, 9, "a", PRODUCE) for _ in range(300))
                if p is not None and p.post is not None)
    result = {"responses": [{"name": "t", "partition_responses": [
        Row((0, 0, 5, -1, 0)),
        {"index": 1, "error_code": 6, "base_offset": -1}]}], "throttle_time_ms": 0}
    failed = plan.post(result)
    frame = encode_response(0, 9, 7, failed)
    parts = decode_response(0, 9, frame[4:])
    got = [(p["index"], p["error_code"], p["base_offset"])
           for p in parts[1]["responses"][0]["partition_responses"]]
    assert got == [(0, E.REQUEST_TIMED_OUT, -1), (1, 6, -1)]
