"""The coordinators' state machines are tables: every pair of states is either in the
table (the move happens) or raises the table's domain error (never an assert)."""

from __future__ import annotations

import itertools

import pytest

from emulator.cluster.state_machines import TransitionTable
from emulator.coordinators.classic import group as cg
from emulator.coordinators.consumer import group as kip848
from emulator.coordinators.transactions import metadata as txns
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

CLASSIC_STATES = sorted(cg.VALID_PREVIOUS)
TXN_STATES = sorted(txns.STATES)
MEMBER_STATES = sorted({kip848.STABLE_MEMBER, kip848.UNREVOKED, kip848.UNRELEASED})


def _pairs(states: list[str]) -> list[tuple[str, str]]:
    return list(itertools.product(states, states))  # sorted: the same order on every worker


@pytest.mark.parametrize(("current", "target"), _pairs(CLASSIC_STATES))
def test_classic_group_transitions_follow_the_table(current: str, target: str) -> None:
    g = cg.ClassicGroup("g", state_ts=0, state=current)
    if current in cg.VALID_PREVIOUS[target]:
        g.transition(target, 5)
        assert (g.previous_state, g.state, g.state_ts) == (current, target, 5)
        return
    with pytest.raises(KafkaError) as e:
        g.transition(target, 5)
    assert e.value.code == E.UNKNOWN_SERVER_ERROR
    assert e.value.message.startswith("Group g should be in the [")
    assert e.value.message.endswith(f"before moving to {target} state. Instead it is in "
                                    f"{current} state.")
    assert g.state == current  # refused: nothing moved


@pytest.mark.parametrize(("current", "target"), _pairs(TXN_STATES))
def test_transaction_transitions_follow_the_table(current: str, target: str) -> None:
    t = txns.TxnMetadata("tx", producer_id=1, timeout_ms=1000, last_update_ms=0, state=current)
    if txns.TXN_TRANSITIONS.allowed(current, target):
        t.transition(target)
        assert t.state == target
        return
    with pytest.raises(KafkaError) as e:
        t.transition(target)
    assert e.value.code == E.INVALID_TXN_STATE
    assert t.state == current


def test_transaction_table_is_kafkas() -> None:
    """Spot checks of Kafka's TransactionState: commit only from Ongoing, completion only
    from the matching prepare, and an abort may fence from Empty or a completed state."""
    allowed = txns.TXN_TRANSITIONS.allowed
    assert allowed(txns.ONGOING, txns.PREPARE_COMMIT)
    assert not allowed(txns.EMPTY, txns.PREPARE_COMMIT)
    assert not allowed(txns.PREPARE_ABORT, txns.COMPLETE_COMMIT)
    assert allowed(txns.COMPLETE_COMMIT, txns.PREPARE_ABORT)
    assert not allowed(txns.ONGOING, txns.DEAD)


# Kafka 4.4's TransactionState.VALID_PREVIOUS_STATES, written out: target <- previous.
KAFKA_TXN_PREVIOUS = {
    "Empty": {"Empty", "CompleteCommit", "CompleteAbort"},
    "Ongoing": {"Ongoing", "Empty", "CompleteCommit", "CompleteAbort"},
    "PrepareCommit": {"Ongoing"},
    "PrepareAbort": {"Ongoing", "PrepareEpochFence", "Empty", "CompleteCommit", "CompleteAbort"},
    "CompleteCommit": {"PrepareCommit"},
    "CompleteAbort": {"PrepareAbort"},
    "Dead": {"Empty", "CompleteAbort", "CompleteCommit"},
    "PrepareEpochFence": {"Ongoing"},
}


# Kafka 4.4's ClassicGroupState (its static block of addValidPreviousStates), written out.
KAFKA_CLASSIC_PREVIOUS = {
    "Empty": {"PreparingRebalance"},
    "PreparingRebalance": {"Stable", "CompletingRebalance", "Empty"},
    "CompletingRebalance": {"PreparingRebalance"},
    "Stable": {"CompletingRebalance"},
    "Dead": {"Stable", "PreparingRebalance", "CompletingRebalance", "Empty", "Dead"},
}


def test_classic_group_table_is_kafkas_in_every_cell() -> None:
    """All 25 pairs against Kafka's table (the parametrized test above reads the
    emulator's own table, so it cannot see a wrong cell; mutmut does not mutate it)."""
    assert set(CLASSIC_STATES) == set(KAFKA_CLASSIC_PREVIOUS)
    for target, previous in KAFKA_CLASSIC_PREVIOUS.items():
        for current in CLASSIC_STATES:
            assert (current in cg.VALID_PREVIOUS[target]) == (current in previous), \
                (current, target)


def test_transaction_table_is_kafkas_in_every_cell() -> None:
    """All 64 (from, to) pairs against Kafka's table. mutmut mutates code inside
    functions only, so a wrong cell of TXN_TRANSITIONS (module-level data) is caught
    here or nowhere."""
    assert set(TXN_STATES) == set(KAFKA_TXN_PREVIOUS)
    for target, previous in KAFKA_TXN_PREVIOUS.items():
        for current in TXN_STATES:
            assert txns.TXN_TRANSITIONS.allowed(current, target) == (current in previous), \
                (current, target)


@pytest.mark.parametrize(("current", "target"), _pairs(MEMBER_STATES + ["bogus"]))
def test_consumer_member_transitions_follow_the_table(current: str, target: str) -> None:
    m = kip848.ConsumerMember("m", state=current)
    if current in MEMBER_STATES and target in MEMBER_STATES:
        m.transition(target)
        assert m.state == target
        return
    with pytest.raises(KafkaError) as e:
        m.transition(target)
    assert e.value.code == E.UNKNOWN_SERVER_ERROR
    assert m.state == current


def test_a_table_without_a_message_names_the_machine_and_the_valid_states() -> None:
    t = TransitionTable("door", {"open": frozenset({"closed"}), "closed": frozenset({"open"})},
                        E.INVALID_REQUEST)
    with pytest.raises(KafkaError) as e:
        t.check("front", "open", "open")
    assert e.value.code == E.INVALID_REQUEST
    assert e.value.message == ("door front: invalid state transition open -> open "
                               "(valid previous states of open: ['closed'])")
