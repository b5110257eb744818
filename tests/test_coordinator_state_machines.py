"""The coordinators' state machines are tables: every pair of states is either in the
table (the move happens) or raises the table's domain error (never an assert)."""

from __future__ import annotations

import itertools

import pytest
from cluster_sim import new_cluster

from emulator.cluster.state_machines import TransitionTable
from emulator.coordinators.classic import group as cg
from emulator.coordinators.consumer import group as kip848
from emulator.coordinators.groups.coordinator import GroupCoordinator
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


# ---- the KIP-848 member's states: Kafka 4.4's CurrentAssignmentBuilder, cell by cell -----
#
# Kafka keeps no table of MemberState moves: CurrentAssignmentBuilder.build() computes
# the next state from the member's state, its epoch, the target assignment, what the
# other members still hold and what the heartbeat says the member owns. So the table is
# checked by its maker: kafka_member_step below is build() and computeNextAssignment()
# (group-coordinator, modern/consumer/CurrentAssignmentBuilder.java, as of 4.2+, which
# no longer bumps the epoch when leaving UNREVOKED_PARTITIONS and does not count a
# partition the member itself is revoking as unreleased), over a single subscribed topic
# (the subscription-consistency branch, which revokes the partitions of an unsubscribed
# topic before the next target assignment, is not modelled here). Every reachable
# situation of one topic of three partitions is run through the emulator's reconcile
# and through it, and every (from, to) cell Kafka reaches must be reached the same way.

P3 = (0, 1, 2)


def _owns_any_of(owned: set[int] | None, revoking: set[int]) -> bool:
    """Kafka's ownsRevokedPartitions: no owned list in the heartbeat counts as owning."""
    return owned is None or bool(owned & revoking)


def kafka_member_step(state: str, epoch: int, assigned: set[int], pending: set[int],
                      target_epoch: int, target: set[int], held_by_others: set[int],
                      owned: set[int] | None) -> tuple[str, int, set[int], set[int]]:
    """Kafka 4.4's CurrentAssignmentBuilder.build(): (state, epoch, assigned, pending)."""

    def next_assignment(member_epoch: int) -> tuple[str, int, set[int], set[int]]:
        keep = assigned & target
        revoking = assigned - keep
        wanted = target - keep
        # unreleased: held by another member (currentPartitionEpoch != -1), not one this
        # member is revoking itself
        unreleased = {p for p in wanted if p in held_by_others and p not in pending}
        adding = wanted - unreleased
        if revoking and _owns_any_of(owned, revoking):
            return kip848.UNREVOKED, member_epoch, keep, revoking
        if adding:
            return (kip848.UNRELEASED if unreleased else kip848.STABLE_MEMBER,
                    target_epoch, keep | adding, set())
        if unreleased:
            return kip848.UNRELEASED, target_epoch, keep, set()
        return kip848.STABLE_MEMBER, target_epoch, keep, set()

    if state == kip848.STABLE_MEMBER:
        if epoch != target_epoch:
            return next_assignment(epoch)
        return state, epoch, assigned, pending
    if state == kip848.UNREVOKED:
        if _owns_any_of(owned, pending):
            return state, epoch, assigned, pending
        return next_assignment(epoch)
    return next_assignment(epoch)  # UNRELEASED_PARTITIONS


# Kafka's reachable cells: build() can send a member from each of the three states to
# each of them (UNREVOKED -> UNREVOKED both by waiting and by a new revocation).
KAFKA_MEMBER_NEXT = {
    kip848.STABLE_MEMBER: {kip848.STABLE_MEMBER, kip848.UNREVOKED, kip848.UNRELEASED},
    kip848.UNREVOKED: {kip848.STABLE_MEMBER, kip848.UNREVOKED, kip848.UNRELEASED},
    kip848.UNRELEASED: {kip848.STABLE_MEMBER, kip848.UNREVOKED, kip848.UNRELEASED},
}


def _member_situations():
    """Every situation of one topic of three partitions a member can be in: each
    partition assigned to it, being revoked by it, held by another member, or free
    (pending revocation only in UNREVOKED_PARTITIONS, where it is never empty); any
    target; the member at the target epoch or behind it; the heartbeat's owned
    partitions absent, all it holds, only those it keeps, or only those the target
    keeps (it let the others go before being told)."""
    for where in itertools.product("apof", repeat=3):
        assigned = {p for p in P3 if where[p] == "a"}
        pending = {p for p in P3 if where[p] == "p"}
        others = {p for p in P3 if where[p] == "o"}
        states = [kip848.UNREVOKED] if pending else [kip848.STABLE_MEMBER, kip848.UNRELEASED]
        for state in states:
            for bits in range(8):
                target = {p for p in P3 if bits >> p & 1}
                for behind in (False, True):
                    for owned in (None, assigned | pending, set(assigned),
                                  assigned & target):
                        yield state, assigned, pending, others, target, behind, owned


def _emulator_member_step(gc: GroupCoordinator, state: str, epoch: int, assigned: set[int],
                          pending: set[int], target_epoch: int, target: set[int],
                          others: set[int], owned: set[int] | None
                          ) -> tuple[str, int, set[int], set[int]]:
    """One step of the emulator's reconcile (ConsumerProtocol.reconcile) for member m
    of a group whose other member o holds ``others``."""
    tid = b"t" * 16
    group = kip848.ConsumerGroup("g", group_epoch=target_epoch, assignment_epoch=target_epoch)
    m = kip848.ConsumerMember("m", member_epoch=epoch, state=state,
                              assigned={tid: set(assigned)} if assigned else {},
                              pending_revocation={tid: set(pending)} if pending else {})
    other = kip848.ConsumerMember("o", member_epoch=target_epoch,
                                  assigned={tid: set(others)} if others else {})
    group.members = {"m": m, "o": other}
    group.target = {"m": {tid: set(target)} if target else {}}
    gc.consumer.reconcile(group, m, None if owned is None else {tid: set(owned)}, 0)
    return (m.state, m.member_epoch, set(m.assigned.get(tid, set())),
            set(m.pending_revocation.get(tid, set())))


def test_consumer_member_moves_are_kafkas_in_every_cell() -> None:
    """Each situation of _member_situations through the emulator's reconcile and through
    Kafka's build(): the same next state, member epoch, assignment and revocation, and
    together they reach every cell of KAFKA_MEMBER_NEXT (a cell the emulator's table
    lacks fails its transition; one the logic reaches otherwise than Kafka fails the
    comparison)."""
    gc = GroupCoordinator(new_cluster(1).state)
    reached: set[tuple[str, str]] = set()
    checked = 0
    for state, assigned, pending, others, target, behind, owned in _member_situations():
        target_epoch = 5
        epoch = 4 if behind or state == kip848.UNREVOKED else 5
        want = kafka_member_step(state, epoch, assigned, pending, target_epoch, target,
                                 others, owned)
        got = _emulator_member_step(gc, state, epoch, assigned, pending, target_epoch, target,
                                    others, owned)
        assert got == want, (state, epoch, assigned, pending, target, others, owned)
        reached.add((state, got[0]))
        checked += 1
    assert checked > 1000
    assert reached == {(a, b) for a, nexts in KAFKA_MEMBER_NEXT.items() for b in nexts}
    assert set(MEMBER_STATES) == set(KAFKA_MEMBER_NEXT)
    for current, nexts in KAFKA_MEMBER_NEXT.items():
        for target_state in MEMBER_STATES:
            assert kip848.MEMBER_TRANSITIONS.allowed(current, target_state) == \
                (target_state in nexts), (current, target_state)
