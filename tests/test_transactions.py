"""The transaction coordinator under a manual clock: epochs and fencing, markers in the
logs, the last stable offset, aborted transactions, timeouts, transactional offsets."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from cluster_sim import new_cluster

from emulator.cluster import controller
from emulator.cluster.events import Appended, TxnChanged
from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.runtime.placement import CREATE_MS, FIRST_LEARN_MS, FIRST_LOAD_MS
from emulator.coordinators.transactions.coordinator import TXN_TOPIC, TransactionCoordinator
from emulator.coordinators.transactions.markers import MARKER_DELAY_MS
from emulator.coordinators.transactions.metadata import TxnMetadata
from emulator.coordinators.transactions.waits import until_prepared
from emulator.handlers import api_061_describe_producers
from emulator.handlers.base import RequestContext
from emulator.services import build_services
from emulator.storage import DataDir
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import build_batch, control_batch, decode_records, read_header

if TYPE_CHECKING:
    from conftest import MakeCluster

TID = "txn-1"


class Harness:
    def __init__(self, fidelity: str | None = None, brokers: int | list[int] = 3,
                 **config: str) -> None:
        sim = new_cluster(brokers, fidelity=fidelity,
                          **{"transaction.state.log.num.partitions": "4",
                             "offsets.topic.num.partitions": "4", **config})
        self.state, self.clock = sim.state, sim.clock
        self.state.create_topic("t", 2, 1)
        self.gc = GroupCoordinator(self.state)
        self.tc = TransactionCoordinator(self.state, self.gc)
        self.seq: dict[int, int] = {}

    def init(self, tid: str = TID, timeout: int = 60_000, **kw) -> tuple[int, int]:
        err, pid, epoch = self.tc.init_producer_id(tid, timeout, **kw)
        assert err == E.NONE, E(err)
        return pid, epoch

    def produce(self, pid: int, epoch: int, part: int = 0, n: int = 1,
                tid: str = TID) -> int:
        seq = self.seq.get((pid, part), 0)
        batch = build_batch([(None, b"x")] * n, producer_id=pid, producer_epoch=epoch,
                            base_sequence=seq, transactional=True)
        err = self.tc.check_produce(tid, "t", part, batch)
        if err:
            return -err
        p = self.state.get_partition("t", part)
        r = self.state.append(p.leader, "t", part, batch, -1)
        assert r.error == E.NONE, r
        self.seq[(pid, part)] = seq + n
        return r.base_offset

    def partition(self, i: int = 0):
        return self.state.get_partition("t", i)


def test_init_bumps_epoch_and_fences_the_previous_producer() -> None:
    h = Harness()
    pid, e0 = h.init()
    assert e0 == 0
    pid2, e1 = h.init()
    assert (pid2, e1) == (pid, 1)
    err = h.tc.add_partitions(TID, pid, e0, [("t", 0)])
    assert err == {("t", 0): E.PRODUCER_FENCED}
    assert h.tc.end_txn(TID, pid, e0, True)[0] == E.PRODUCER_FENCED


def test_commit_writes_markers_and_moves_the_last_stable_offset() -> None:
    h = Harness()
    pid, epoch = h.init()
    assert h.tc.add_partitions(TID, pid, epoch, [("t", 0)]) == {("t", 0): E.NONE}
    assert h.produce(pid, epoch, n=3) == 0
    p = h.partition()
    assert p.high_watermark == 3 and p.last_stable_offset() == 0
    assert h.tc.describe(TID)["transaction_state"] == "Ongoing"
    assert h.tc.end_txn(TID, pid, epoch, True) == (E.NONE, pid, epoch)
    assert p.log_end_offset == 4 and p.last_stable_offset() == 4
    marker = p.leader_log.batch_at(3)
    hdr = read_header(marker)
    assert hdr.is_control and hdr.is_transactional and hdr.producer_id == pid
    assert decode_records(marker)[0].key == b"\x00\x00\x00\x01"  # COMMIT
    assert p.aborted == []
    assert h.tc.describe(TID)["transaction_state"] == "CompleteCommit"
    # the next transaction continues with the same epoch and sequence
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    assert h.produce(pid, epoch) == 4


def test_abort_records_the_aborted_transaction() -> None:
    h = Harness()
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("t", 0), ("t", 1)])
    h.produce(pid, epoch, part=0, n=2)
    h.produce(pid, epoch, part=1, n=1)
    assert h.tc.end_txn(TID, pid, epoch, False)[0] == E.NONE
    a = h.partition(0).aborted
    assert [(x.producer_id, x.first_offset, x.last_offset) for x in a] == [(pid, 0, 2)]
    assert h.partition(0).aborted_between(0, 3)
    assert h.partition(1).last_stable_offset() == 2


def test_lso_waits_for_the_marker_to_replicate() -> None:
    h = Harness()
    h.state.create_topic("r", 1, 3)
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("r", 0)])
    p = h.state.get_partition("r", 0)
    batch = build_batch([(None, b"x")], producer_id=pid, producer_epoch=epoch,
                        base_sequence=0, transactional=True)
    h.state.append(p.leader, "r", 0, batch, -1)
    h.state.tick()
    assert p.high_watermark == 1 and p.last_stable_offset() == 0
    h.tc.end_txn(TID, pid, epoch, True)
    assert p.log_end_offset == 2 and p.high_watermark == 1
    assert p.last_stable_offset() == 0  # marker not yet replicated
    h.state.tick()
    assert p.high_watermark == 2 and p.last_stable_offset() == 2


def test_new_producer_aborts_an_ongoing_transaction() -> None:
    h = Harness()
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    h.produce(pid, epoch, n=2)
    err, _, _ = h.tc.init_producer_id(TID, 60_000)
    assert err == E.CONCURRENT_TRANSACTIONS  # the old transaction is being aborted
    assert h.partition().aborted[0].first_offset == 0
    pid2, epoch2 = h.init()
    assert (pid2, epoch2) == (pid, epoch + 2)
    assert h.produce(pid, epoch) == -E.INVALID_PRODUCER_EPOCH  # the zombie is fenced
    assert h.tc.add_partitions(TID, pid, epoch, [("t", 0)]) == {("t", 0): E.PRODUCER_FENCED}


def test_transaction_timeout_aborts_and_fences() -> None:
    h = Harness()
    pid, epoch = h.init(timeout=10_000)
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    h.produce(pid, epoch)
    h.state.clock.advance(10_001)
    h.tc.tick()
    assert h.tc.describe(TID)["transaction_state"] == "CompleteAbort"
    assert h.tc.describe(TID)["producer_epoch"] == epoch + 1
    assert h.partition().aborted and h.partition().last_stable_offset() == 2
    assert h.tc.end_txn(TID, pid, epoch, True)[0] == E.PRODUCER_FENCED


@pytest.mark.parametrize(("commit", "state", "code"), [
    (True, "Empty", E.INVALID_TXN_STATE),
    (True, "CompleteCommit", E.NONE),  # a retried EndTxn
    (False, "CompleteCommit", E.INVALID_TXN_STATE),
    (False, "CompleteAbort", E.NONE),
    (True, "PrepareCommit", E.CONCURRENT_TRANSACTIONS),
    (False, "PrepareAbort", E.CONCURRENT_TRANSACTIONS),  # the same outcome being written
    (True, "PrepareAbort", E.INVALID_TXN_STATE),
    (False, "PrepareCommit", E.INVALID_TXN_STATE),
])
def test_end_txn_state_rules(commit: bool, state: str, code: int) -> None:
    h = Harness()
    pid, epoch = h.init()
    h.tc.txns[TID].state = state
    assert h.tc.end_txn(TID, pid, epoch, commit)[0] == code


def test_request_errors() -> None:
    h = Harness()
    pid, epoch = h.init()
    assert h.tc.init_producer_id("", 1000)[0] == E.INVALID_REQUEST
    assert h.tc.init_producer_id(TID, 10**9)[0] == E.INVALID_TRANSACTION_TIMEOUT
    assert h.tc.add_partitions("other", pid, epoch, [("t", 0)]) == \
        {("t", 0): E.INVALID_PRODUCER_ID_MAPPING}
    assert h.tc.add_partitions(TID, pid, epoch, [("t", 0), ("nope", 0)]) == \
        {("t", 0): E.OPERATION_NOT_ATTEMPTED, ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert h.tc.end_txn(TID, pid + 1, epoch, True)[0] == E.INVALID_PRODUCER_ID_MAPPING
    assert h.produce(pid, epoch) == -E.INVALID_TXN_STATE  # partition never added
    assert h.tc.describe("nope")["error_code"] == E.TRANSACTIONAL_ID_NOT_FOUND


def test_kip360_reinit_with_current_epoch() -> None:
    h = Harness()
    pid, epoch = h.init()
    assert h.init(producer_id=pid, producer_epoch=epoch) == (pid, epoch + 1)
    # a retry of that call (the response was lost) gets the same epoch back
    assert h.init(producer_id=pid, producer_epoch=epoch) == (pid, epoch + 1)
    err, _, _ = h.tc.init_producer_id(TID, 60_000, producer_id=pid + 99, producer_epoch=0)
    assert err == E.PRODUCER_FENCED


def test_transactional_offsets_commit_with_the_transaction() -> None:
    h = Harness()
    pid, epoch = h.init()
    assert h.tc.add_offsets(TID, pid, epoch, "grp") == E.NONE
    res = h.gc.txn_offset_commit("grp", pid, "", -1, [("t", [(0, 10, -1, "")])])
    assert res == [("t", [(0, E.NONE)])]
    [(_, [e])] = h.gc.fetch_offsets("grp", [("t", [0])], require_stable=True)
    assert e["error_code"] == E.UNSTABLE_OFFSET_COMMIT
    [(_, [e])] = h.gc.fetch_offsets("grp", [("t", [0])])
    assert e["committed_offset"] == -1
    assert h.tc.end_txn(TID, pid, epoch, True)[0] == E.NONE
    [(_, [e])] = h.gc.fetch_offsets("grp", [("t", [0])], require_stable=True)
    assert (e["error_code"], e["committed_offset"]) == (E.NONE, 10)
    # an aborted transaction's offsets are dropped
    h.tc.add_offsets(TID, pid, epoch, "grp")
    h.gc.txn_offset_commit("grp", pid, "", -1, [("t", [(0, 20, -1, "")])])
    h.tc.end_txn(TID, pid, epoch, False)
    [(_, [e])] = h.gc.fetch_offsets("grp", [("t", [0])])
    assert e["committed_offset"] == 10


def test_markers_wait_for_a_leader() -> None:
    h = Harness()
    h.state.create_topic("solo", 1, 1)
    p = h.state.get_partition("solo", 0)
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("solo", 0)])
    leader = p.leader
    controller.broker_stopped(h.state, leader)
    assert p.leader == -1
    assert h.tc.end_txn(TID, pid, epoch, True)[0] == E.NONE
    assert h.tc.describe(TID)["transaction_state"] == "PrepareCommit"
    assert h.tc.add_partitions(TID, pid, epoch, [("t", 0)]) == \
        {("t", 0): E.CONCURRENT_TRANSACTIONS}
    controller.broker_started(h.state, leader)
    h.tc.tick()
    assert h.tc.describe(TID)["transaction_state"] == "CompleteCommit"
    assert p.log_end_offset == 1


def test_coordinator_placement_and_listing() -> None:
    h = Harness()
    broker = h.tc.coordinator_for(TID)
    assert TXN_TOPIC in h.state.topics and len(h.state.topics[TXN_TOPIC].partitions) == 4
    other = next(b for b in (1, 2, 3) if b != broker)
    err, _, _ = h.tc.init_producer_id(TID, 60_000, broker_id=other)
    assert err == E.NOT_COORDINATOR
    err, pid, _ = h.tc.init_producer_id(TID, 60_000, broker_id=broker)
    assert err == E.NONE
    _, unknown, listed = h.tc.list_transactions(broker_id=broker, states=["Empty", "Bogus"])
    assert unknown == ["Bogus"] and [x["transactional_id"] for x in listed] == [TID]
    assert h.tc.list_transactions(broker_id=other)[2] == []
    assert h.tc.list_transactions(producer_ids=[pid + 1])[2] == []
    assert len(h.tc.list_transactions(pattern="txn-.*")[2]) == 1
    assert h.tc.list_transactions(pattern="zzz")[2] == []
    with pytest.raises(KafkaError):
        h.tc.check_coordinator(other, TID)


# ---- transactions v2 (KIP-890 part 2) ----------------------------------------------------------
def _produce_v2(h: Harness, pid: int, epoch: int, part: int = 0) -> int:
    """A Produce v12+ batch: the partition joins the transaction implicitly."""
    seq = h.seq.get((pid, epoch, part), 0)
    batch = build_batch([(None, b"x")], producer_id=pid, producer_epoch=epoch,
                        base_sequence=seq, transactional=True)
    err = h.tc.check_produce(TID, "t", part, batch, implicit_add=True)
    if err:
        return -err
    p = h.partition(part)
    r = h.state.append(p.leader, "t", part, batch, -1)
    assert r.error == E.NONE, r
    h.seq[(pid, epoch, part)] = seq + 1
    return r.base_offset


def test_v2_epoch_bumps_at_every_end_and_markers_carry_it() -> None:
    h = Harness()
    pid, e0 = h.init()
    assert _produce_v2(h, pid, e0) == 0
    assert h.tc.txns[TID].state == "Ongoing"
    assert h.tc.end_txn(TID, pid, e0, True, tv2=True) == (E.NONE, pid, e0 + 1)
    marker = read_header(h.partition(0).leader_log.read(1, 1 << 20, 10)[0])
    assert marker.is_control and marker.producer_epoch == e0 + 1
    # The old epoch is a zombie now; the new one starts the next transaction.
    assert _produce_v2(h, pid, e0) == -E.INVALID_PRODUCER_EPOCH
    assert _produce_v2(h, pid, e0 + 1) == 2
    assert h.tc.end_txn(TID, pid, e0 + 1, False, tv2=True) == (E.NONE, pid, e0 + 2)
    assert h.partition(0).last_stable_offset() == 4


def test_v2_retried_end_answers_the_bumped_epoch() -> None:
    h = Harness()
    pid, e0 = h.init()
    _produce_v2(h, pid, e0)
    assert h.tc.end_txn(TID, pid, e0, True, tv2=True) == (E.NONE, pid, e0 + 1)
    assert h.tc.end_txn(TID, pid, e0, True, tv2=True) == (E.NONE, pid, e0 + 1)
    # the other outcome with the old epoch is a fenced producer's
    assert h.tc.end_txn(TID, pid, e0, False, tv2=True)[0] == E.PRODUCER_FENCED


def test_v2_abort_of_an_empty_transaction_bumps_commit_is_invalid() -> None:
    h = Harness()
    pid, e0 = h.init()
    assert h.tc.end_txn(TID, pid, e0, True, tv2=True)[0] == E.INVALID_TXN_STATE
    assert h.tc.end_txn(TID, pid, e0, False, tv2=True) == (E.NONE, pid, e0 + 1)
    assert h.tc.txns[TID].state == "CompleteAbort"
    assert h.partition(0).leader_log.log_end_offset == 0  # no marker for no partition


def test_v2_implicit_add_waits_while_markers_are_pending() -> None:
    h = Harness()
    pid, e0 = h.init()
    _produce_v2(h, pid, e0, part=1)
    p1 = h.partition(1)
    leader = p1.leader
    controller.broker_stopped(h.state, leader)  # no leader for the marker: PrepareCommit
    assert h.tc.end_txn(TID, pid, e0, True, tv2=True) == (E.NONE, pid, e0 + 1)
    assert h.tc.txns[TID].state == "PrepareCommit"
    assert _produce_v2(h, pid, e0 + 1) == -E.CONCURRENT_TRANSACTIONS
    controller.broker_started(h.state, leader)
    h.tc.tick()
    assert h.tc.txns[TID].state == "CompleteCommit"
    assert _produce_v2(h, pid, e0 + 1) >= 0


def test_v2_exhausted_epoch_moves_to_a_new_producer_id() -> None:
    h = Harness()
    pid, e0 = h.init()
    h.tc.txns[TID].producer_epoch = 32765
    _produce_v2(h, pid, 32765)
    err, pid2, e2 = h.tc.end_txn(TID, pid, 32765, True, tv2=True)
    assert err == E.NONE and pid2 != pid and e2 == 0
    # a retry from the old producer id still gets the new identity
    assert h.tc.end_txn(TID, pid, 32765, True, tv2=True) == (E.NONE, pid2, 0)


def _prepared_v2(h: Harness, commit: bool) -> tuple[int, int]:
    """A v2 transaction left in PrepareCommit/PrepareAbort (its partition has no leader
    for the marker); the producer id and the epoch the client sent its EndTxn with."""
    pid, e0 = h.init()
    _produce_v2(h, pid, e0, part=1)
    controller.broker_stopped(h.state, h.partition(1).leader)
    assert h.tc.end_txn(TID, pid, e0, commit, tv2=True) == (E.NONE, pid, e0 + 1)
    assert h.tc.txns[TID].state == ("PrepareCommit" if commit else "PrepareAbort")
    return pid, e0


@pytest.mark.parametrize("commit", [True, False])
def test_v2_end_while_prepared_only_the_retry_of_the_same_outcome_waits(commit: bool) -> None:
    """Kafka's handleEndTransaction under transaction version 2, in Prepare*: the epoch
    was bumped when the transaction was prepared, so only the client's EndTxn retried
    with the epoch before the bump is valid (the same outcome: CONCURRENT_TRANSACTIONS
    while the markers are written; the other: INVALID_TXN_STATE); the bumped epoch itself
    or any other is a fenced producer's."""
    h = Harness()
    pid, e0 = _prepared_v2(h, commit)
    assert h.tc.end_txn(TID, pid, e0, commit, tv2=True)[0] == E.CONCURRENT_TRANSACTIONS
    assert h.tc.end_txn(TID, pid, e0, not commit, tv2=True)[0] == E.INVALID_TXN_STATE
    for epoch in (e0 + 1, e0 + 2, e0 - 1):
        assert h.tc.end_txn(TID, pid, epoch, commit, tv2=True)[0] == E.PRODUCER_FENCED, epoch
    assert h.tc.txns[TID].state == ("PrepareCommit" if commit else "PrepareAbort")


def test_v2_end_names_an_unknown_producer() -> None:
    """EndTxn v5 of a transactional id the coordinator does not know, or with another
    producer id than the transaction's: INVALID_PRODUCER_ID_MAPPING."""
    h = Harness()
    pid, e0 = h.init()
    # a refused EndTxn v5 names no producer (Kafka: NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
    assert h.tc.end_txn("nobody", pid, e0, False, tv2=True) == \
        (E.INVALID_PRODUCER_ID_MAPPING, -1, -1)
    assert h.tc.end_txn(TID, pid + 1, e0, False, tv2=True) == \
        (E.INVALID_PRODUCER_ID_MAPPING, -1, -1)
    assert h.tc.txns[TID].producer_epoch == e0  # no bump for a refused EndTxn


def _txn_writes(h: Harness) -> list[str]:
    """The transactions' changes to be written to __transaction_state, as they come."""
    seen: list[str] = []
    h.state.hooks.append(lambda kind, event: seen.append(kind)
                         if isinstance(event, TxnChanged) else None)
    return seen


def test_v2_implicit_add_joins_each_new_partition_once() -> None:
    """Produce v12+ adds its partition to the transaction, as the partition leader's
    AddPartitionsToTxn to the coordinator does in Kafka: a partition new to the ongoing
    transaction joins it (and its marker is written at the end); one already in it
    writes nothing to __transaction_state (Kafka's coordinator answers at once when
    every partition is already there)."""
    h = Harness()
    pid, e0 = h.init()
    writes = _txn_writes(h)
    assert _produce_v2(h, pid, e0, part=0) == 0
    assert len(writes) == 1
    assert _produce_v2(h, pid, e0, part=0) == 1
    assert len(writes) == 1
    assert _produce_v2(h, pid, e0, part=1) == 0
    assert h.tc.txns[TID].partitions == {("t", 0), ("t", 1)}
    assert len(writes) == 2
    assert h.tc.end_txn(TID, pid, e0, True, tv2=True) == (E.NONE, pid, e0 + 1)
    assert h.partition(0).last_stable_offset() == 3  # two records and the marker
    assert h.partition(1).last_stable_offset() == 2


def test_transactional_batch_needs_its_producer_and_an_added_partition() -> None:
    """Before transaction version 2 a transactional batch must come from the producer id
    the transactional id has (INVALID_PRODUCER_ID_MAPPING otherwise, an unknown
    transactional id too) and go to a partition AddPartitionsToTxn added to the
    ongoing transaction (INVALID_TXN_STATE otherwise)."""
    h = Harness()
    pid, epoch = h.init()
    assert h.tc.add_partitions(TID, pid, epoch, [("t", 0)]) == {("t", 0): E.NONE}
    assert h.produce(pid, epoch, part=1) == -E.INVALID_TXN_STATE
    assert h.produce(pid + 1, epoch, part=0) == -E.INVALID_PRODUCER_ID_MAPPING
    assert h.produce(pid, epoch, part=0, tid="nobody") == -E.INVALID_PRODUCER_ID_MAPPING
    assert h.produce(pid, epoch, part=0) == 0


def test_add_partitions_answers_only_on_the_coordinator() -> None:
    """AddPartitionsToTxn on a broker that does not coordinate the transactional id:
    NOT_COORDINATOR for every partition, and the transaction is unchanged."""
    h = Harness()
    pid, epoch = h.init()
    broker = h.tc.coordinator_for(TID)
    other = next(b for b in (1, 2, 3) if b != broker)
    assert h.tc.add_partitions(TID, pid, epoch, [("t", 0)], broker_id=other) == \
        {("t", 0): E.NOT_COORDINATOR}
    assert h.tc.txns[TID].state == "Empty" and not h.tc.txns[TID].partitions
    assert h.tc.add_partitions(TID, pid, epoch, [("t", 0)], broker_id=broker) == \
        {("t", 0): E.NONE}


def test_add_partitions_verify_only_adds_nothing() -> None:
    """AddPartitionsToTxn v4+'s verify-only batches (KIP-890 part 1: a partition leader
    asking before it appends a transactional batch): NONE for a partition already in
    the ongoing transaction, INVALID_TXN_STATE otherwise; the transaction is unchanged."""
    h = Harness()
    pid, epoch = h.init()

    def verify(*parts: int) -> dict[tuple[str, int], int]:
        return h.tc.add_partitions(TID, pid, epoch, [("t", p) for p in parts],
                                   verify_only=True)

    assert verify(0) == {("t", 0): E.INVALID_TXN_STATE}  # nothing ongoing
    assert h.tc.txns[TID].state == "Empty" and not h.tc.txns[TID].partitions
    assert h.tc.add_partitions(TID, pid, epoch, [("t", 0)]) == {("t", 0): E.NONE}
    assert verify(0, 1) == {("t", 0): E.NONE, ("t", 1): E.INVALID_TXN_STATE}
    assert h.tc.txns[TID].partitions == {("t", 0)}


def test_a_transaction_request_needs_a_transactional_id() -> None:
    """AddPartitionsToTxn and AddOffsetsToTxn with an empty transactional id:
    INVALID_REQUEST, before anything else is looked at."""
    h = Harness()
    pid, epoch = h.init()
    assert h.tc.add_partitions("", pid, epoch, [("t", 0)]) == {("t", 0): E.INVALID_REQUEST}
    assert h.tc.add_offsets("", pid, epoch, "g") == E.INVALID_REQUEST


def test_end_txn_needs_a_transactional_id_and_its_coordinator() -> None:
    """EndTxn with an empty transactional id: INVALID_REQUEST; on a broker that does not
    coordinate it: NOT_COORDINATOR, and the transaction goes on."""
    h = Harness()
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    assert h.tc.end_txn("", pid, epoch, True)[0] == E.INVALID_REQUEST
    broker = h.tc.coordinator_for(TID)
    other = next(b for b in (1, 2, 3) if b != broker)
    assert h.tc.end_txn(TID, pid, epoch, True, broker_id=other)[0] == E.NOT_COORDINATOR
    assert h.tc.txns[TID].state == "Ongoing"
    assert h.tc.end_txn(TID, pid, epoch, True, broker_id=broker)[0] == E.NONE


def test_init_producer_id_fencing_by_producer_id_kip360() -> None:
    """InitProducerId naming a producer id and epoch (KIP-360), as Kafka 4.4's
    handleInitProducerId lets it through: a transactional id the coordinator has just
    created (an idempotent producer turning transactional), the transaction's producer
    id, or the previous producer id with an exhausted epoch (>= 32766: the retry of the
    InitProducerId that moved to a new id); anything else is PRODUCER_FENCED."""
    h = Harness()
    idem = h.tc.init_producer_id(None, 60_000)[1]
    err, pid, epoch = h.tc.init_producer_id(TID, 60_000, producer_id=idem, producer_epoch=0)
    assert err == E.NONE and pid != idem and epoch == 0
    h.tc.txns[TID].producer_epoch = 32766  # the last epoch: the next init moves on
    err, pid2, e2 = h.tc.init_producer_id(TID, 60_000, producer_id=pid, producer_epoch=32766)
    assert err == E.NONE and pid2 > pid and e2 == 0
    assert (h.tc.txns[TID].previous_producer_id, h.tc.txns[TID].last_producer_epoch) == \
        (pid, 32766)
    # its retry (the answer was lost) gets the same new identity back
    assert h.tc.init_producer_id(TID, 60_000, producer_id=pid, producer_epoch=32766) == \
        (E.NONE, pid2, 0)
    for stranger, ep in ((pid + 99, 32766), (pid, 32765), (pid, 0)):
        err = h.tc.init_producer_id(TID, 60_000, producer_id=stranger, producer_epoch=ep)[0]
        assert err == E.PRODUCER_FENCED, (stranger, ep)


def test_init_producer_id_fences_a_retry_below_the_exhausted_epoch_v2() -> None:
    """Transaction version 2 moves to a new producer id after the markers of the
    transaction that reached epoch 32766; the old producer id passes InitProducerId only
    with an exhausted epoch, so its epoch before that bump (32765) is fenced."""
    h = Harness()
    pid, _ = h.init()
    h.tc.txns[TID].producer_epoch = 32765
    _produce_v2(h, pid, 32765)
    err, pid2, _ = h.tc.end_txn(TID, pid, 32765, True, tv2=True)
    assert err == E.NONE and pid2 != pid
    assert h.tc.txns[TID].last_producer_epoch == 32765
    err = h.tc.init_producer_id(TID, 60_000, producer_id=pid, producer_epoch=32765)[0]
    assert err == E.PRODUCER_FENCED


def test_init_producer_id_fences_an_ongoing_transaction_with_the_next_epoch() -> None:
    """InitProducerId while the transaction is ongoing (Kafka's prepareFenceProducerEpoch):
    the epoch goes up by one for the abort (its marker carries it), the last epoch is
    forgotten (-1, as __transaction_state records it), so the old epoch's retry is
    fenced; the producer then gets the epoch after the abort's. In PrepareCommit the
    answer is CONCURRENT_TRANSACTIONS and nothing changes."""
    h = Harness()
    h.init()
    pid, epoch = h.init()
    assert epoch == 1
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    h.produce(pid, epoch)
    err = h.tc.init_producer_id(TID, 60_000, producer_id=pid, producer_epoch=epoch)[0]
    assert err == E.CONCURRENT_TRANSACTIONS
    txn = h.tc.txns[TID]
    assert (txn.state, txn.producer_epoch, txn.last_producer_epoch) == ("CompleteAbort", 2, -1)
    marker = read_header(h.partition(0).leader_log.read(1, 1 << 20, 10)[0])
    assert marker.is_control and marker.producer_epoch == 2
    err = h.tc.init_producer_id(TID, 60_000, producer_id=pid, producer_epoch=epoch)[0]
    assert err == E.PRODUCER_FENCED
    assert h.init() == (pid, 3)
    # a transaction waiting for its markers: InitProducerId is told to come back
    h.tc.add_partitions(TID, pid, 3, [("t", 1)])
    h.produce(pid, 3, part=1)
    controller.broker_stopped(h.state, h.partition(1).leader)
    assert h.tc.end_txn(TID, pid, 3, True)[0] == E.NONE
    assert h.tc.txns[TID].state == "PrepareCommit"
    assert h.tc.init_producer_id(TID, 60_000)[0] == E.CONCURRENT_TRANSACTIONS
    assert (h.tc.txns[TID].state, h.tc.txns[TID].producer_epoch) == ("PrepareCommit", 3)


def test_init_producer_id_at_the_last_epoch_moves_to_a_new_producer_id() -> None:
    """InitProducerId without a producer id when the epoch is exhausted (32766): a new
    producer id at epoch 0, the old one kept as the previous id, no last epoch (-1: no
    retry to recognise, as Kafka's prepareProducerIdRotation without an expected id)."""
    h = Harness()
    pid, _ = h.init()
    h.tc.txns[TID].producer_epoch = 32766
    err, pid2, e2 = h.tc.init_producer_id(TID, 60_000)
    assert err == E.NONE and pid2 > pid and e2 == 0
    txn = h.tc.txns[TID]
    assert (txn.previous_producer_id, txn.last_producer_epoch) == (pid, -1)


def test_transaction_timeout_bounds() -> None:
    """InitProducerId's transaction timeout: 1 ms up to transaction.max.timeout.ms
    (900000 by default) inclusive; 0 or more is INVALID_TRANSACTION_TIMEOUT (Kafka's
    handleInitProducerId: timeout <= 0 or > the max)."""
    h = Harness()
    assert h.tc.init_producer_id("t0", 0)[0] == E.INVALID_TRANSACTION_TIMEOUT
    assert h.tc.init_producer_id("t1", 1)[0] == E.NONE
    assert h.tc.init_producer_id("t2", 900_000)[0] == E.NONE
    assert h.tc.init_producer_id("t3", 900_001)[0] == E.INVALID_TRANSACTION_TIMEOUT


def test_the_epoch_before_the_last_is_bumped_not_rotated() -> None:
    """At epoch 32765 InitProducerId bumps to 32766 with the same producer id; only
    32766 (Kafka's isEpochExhausted: >= Short.MAX_VALUE - 1) moves to a new id."""
    h = Harness()
    pid, _ = h.init()
    h.tc.txns[TID].producer_epoch = 32765
    assert h.init(producer_id=pid, producer_epoch=32765) == (pid, 32766)


def test_transaction_max_timeout_is_the_brokers_config_and_a_refusal_names_no_producer() -> None:
    """transaction.max.timeout.ms bounds InitProducerId's timeout; a refused
    InitProducerId answers producer id -1 and epoch -1 (Kafka's NO_PRODUCER_ID and
    NO_PRODUCER_EPOCH)."""
    state = new_cluster(3, **{"transaction.state.log.num.partitions": "4",
                              "transaction.max.timeout.ms": "1000"}).state
    tc = TransactionCoordinator(state)
    assert tc.init_producer_id("a", 1001) == (E.INVALID_TRANSACTION_TIMEOUT, -1, -1)
    assert tc.init_producer_id("a", 1000)[0] == E.NONE


def test_a_plain_init_forgets_the_last_epoch_and_the_start_time() -> None:
    """InitProducerId without a producer id bumps the epoch and records no last epoch
    (-1), so an old epoch is not taken for a retry later; the transaction is Empty with
    no start time (DescribeTransactions' TransactionStartTimeMs -1, as Kafka answers)."""
    h = Harness()
    pid, e0 = h.init()
    h.tc.add_partitions(TID, pid, e0, [("t", 0)])
    assert h.tc.end_txn(TID, pid, e0, False)[0] == E.NONE
    assert h.init() == (pid, e0 + 1)
    d = h.tc.describe(TID)
    assert (d["transaction_state"], d["transaction_start_time_ms"]) == ("Empty", -1)
    assert h.tc.txns[TID].last_producer_epoch == -1
    err = h.tc.init_producer_id(TID, 60_000, producer_id=pid, producer_epoch=e0)[0]
    assert err == E.PRODUCER_FENCED


def test_a_marker_of_the_same_epoch_keeps_the_sequences_and_ends_the_transaction() -> None:
    """appendEndTxnMarker moves the producer's epoch only when the marker's differs
    (maybeUpdateProducerEpoch): a marker of the same epoch (transactions v1) keeps the
    batches' sequences, so a gap after it is still out of order and a retry of a
    batch before it is still a duplicate; the entry then has no transaction open
    and the marker's coordinator epoch, as DescribeProducers answers them."""
    h = Harness()
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    assert h.produce(pid, epoch, n=2) == 0
    assert h.tc.end_txn(TID, pid, epoch, True)[0] == E.NONE
    p = h.partition()
    leader = p.leader
    ctx = RequestContext(h.state, leader, 0, 9, 0, "c", services=build_services(h.state))
    req = {"topics": [{"name": "t", "partition_indexes": [0]}]}
    [part] = api_061_describe_producers.handle(ctx, req, 0)["topics"][0]["partitions"]
    [state] = part["active_producers"]
    assert (state["producer_epoch"], state["last_sequence"], state["coordinator_epoch"],
            state["current_txn_start_offset"]) == (epoch, 1, 0, -1)
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])

    def batch(seq: int, n: int) -> bytes:
        return build_batch([(None, b"x")] * n, producer_id=pid, producer_epoch=epoch,
                           base_sequence=seq, transactional=True)

    retry = h.state.append(leader, "t", 0, batch(0, 2), -1)
    assert (retry.error, retry.base_offset) == (E.NONE, 0)  # the duplicate's offset
    gap = h.state.append(leader, "t", 0, batch(5, 1), -1)
    assert gap.error == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert p.log_end_offset == 3  # two records and the marker


def test_aborted_between_is_the_overlap_with_the_fetched_range() -> None:
    """The aborted transactions a read_committed fetch of [start, end) carries, as
    Kafka's collectAbortedTxns: those whose abort marker is at or after start and
    whose first offset is before end."""
    h = Harness()
    pid, epoch = h.init()
    for _ in range(2):
        h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
        h.produce(pid, epoch, n=2)
        err, pid, epoch = h.tc.end_txn(TID, pid, epoch, False)
        assert err == E.NONE
    p = h.partition()
    assert [(a.first_offset, a.last_offset) for a in p.aborted] == [(0, 2), (3, 5)]

    def firsts(start: int, end: int) -> list[int]:
        return [a.first_offset for a in p.aborted_between(start, end)]

    assert firsts(0, 6) == [0, 3]
    assert firsts(2, 3) == [0]  # the first one's marker is the range's first offset
    assert firsts(3, 3) == []  # ends before the second begins, after the first ended
    assert firsts(5, 9) == [3]
    assert firsts(6, 9) == []


def test_a_transaction_from_offset_0_holds_the_last_stable_offset_at_0() -> None:
    """The open transaction's first offset is the first batch's, even at offset 0: its
    later batches do not move it, so the last stable offset stays at 0 until the
    marker, and an abort covers every batch."""
    h = Harness()
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    assert [h.produce(pid, epoch) for _ in range(3)] == [0, 1, 2]
    p = h.partition()
    assert p.high_watermark == 3 and p.last_stable_offset() == 0
    assert h.tc.end_txn(TID, pid, epoch, False)[0] == E.NONE
    assert [(a.first_offset, a.last_offset) for a in p.aborted] == [(0, 3)]
    assert p.last_stable_offset() == 4


def test_a_marker_that_bumps_the_epoch_makes_the_next_batch_start_at_sequence_0() -> None:
    """A marker with a new epoch (every end of a transactions-v2 transaction) leaves
    the producer's entry at that epoch with no batches: Kafka's check then compares
    the next batch's sequence with NO_SEQUENCE, so only 0 follows (anything else is
    OUT_OF_ORDER_SEQUENCE_NUMBER), and the sequences go on from there."""
    h = Harness()
    pid, e0 = h.init()
    assert _produce_v2(h, pid, e0) == 0
    assert h.tc.end_txn(TID, pid, e0, True, tv2=True) == (E.NONE, pid, e0 + 1)
    p = h.partition()
    assert p.producers[pid].epoch == e0 + 1 and not p.producers[pid].batches
    skipping = build_batch([(None, b"x")], producer_id=pid, producer_epoch=e0 + 1,
                           base_sequence=1, transactional=True)
    assert h.tc.check_produce(TID, "t", 0, skipping, implicit_add=True) == E.NONE
    r = h.state.append(p.leader, "t", 0, skipping, -1)
    assert r.error == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert _produce_v2(h, pid, e0 + 1) == 2
    assert _produce_v2(h, pid, e0 + 1) == 3  # sequence 1
    # a producer id the partition has not seen still starts anywhere (no epoch known)
    stranger = build_batch([(None, b"x")], producer_id=pid + 1, producer_epoch=0,
                           base_sequence=7)
    assert h.state.append(p.leader, "t", 0, stranger, -1).error == E.NONE


def test_a_marker_on_a_partition_without_the_producers_data_starts_its_sequences() -> None:
    """A partition in the transaction that got none of its data gets the marker all the
    same, and the marker creates the producer's entry there at its epoch with no
    batches: as on Kafka, the producer's first batch there must have sequence 0."""
    h = Harness()
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("t", 0), ("t", 1)])
    h.produce(pid, epoch, part=0)
    assert h.tc.end_txn(TID, pid, epoch, True)[0] == E.NONE
    p1 = h.partition(1)
    assert p1.log_end_offset == 1  # the marker alone
    h.tc.add_partitions(TID, pid, epoch, [("t", 1)])
    skipping = build_batch([(None, b"x")], producer_id=pid, producer_epoch=epoch,
                           base_sequence=3, transactional=True)
    r = h.state.append(p1.leader, "t", 1, skipping, -1)
    assert r.error == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert h.produce(pid, epoch, part=1) == 1  # sequence 0


# ---- when a transaction completes: the markers, the prepare window, the tick's timers ---------
@pytest.mark.parametrize("delay", [1, 15])
def test_kafka_timing_writes_the_markers_delay_ms_after_end_txn(delay: int) -> None:
    """Under Kafka's timing EndTxn answers with the transaction in PrepareCommit and the
    markers are written ``marker_delay_ms`` later, at the tick the server sets for that
    time (``next_deadline``); meanwhile the same id is CONCURRENT_TRANSACTIONS and a
    Produce adding its partition is held (``preparing``)."""
    h = Harness("kafka")
    h.tc.marker_delay_ms = delay
    pid, epoch = h.init()
    assert not h.tc.preparing(TID)  # Empty
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    assert h.produce(pid, epoch) == 0
    assert not h.tc.preparing(TID)  # Ongoing
    assert not h.tc.preparing("no-such-id")
    ended = h.clock.now_ms()
    assert h.tc.end_txn(TID, pid, epoch, True) == (E.NONE, pid, epoch)
    assert h.tc.txns[TID].state == "PrepareCommit" and h.tc.preparing(TID)
    assert h.tc.next_deadline() == ended + delay
    assert h.tc.add_partitions(TID, pid, epoch, [("t", 0)]) == {
        ("t", 0): E.CONCURRENT_TRANSACTIONS}
    h.clock.advance(delay - 1)
    assert h.tc.tick() is False  # nothing due yet
    assert h.tc.txns[TID].state == "PrepareCommit" and h.partition().log_end_offset == 1
    h.clock.advance(1)
    assert h.tc.tick() is True
    assert h.tc.txns[TID].state == "CompleteCommit" and not h.tc.preparing(TID)
    marker = read_header(h.partition().leader_log.batch_at(1))
    assert marker.is_control and marker.producer_id == pid


def test_kafka_timing_with_no_marker_delay_completes_at_once() -> None:
    h = Harness("kafka")
    h.tc.marker_delay_ms = 0
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    h.produce(pid, epoch)
    assert h.tc.end_txn(TID, pid, epoch, False) == (E.NONE, pid, epoch)
    assert h.tc.txns[TID].state == "CompleteAbort"
    assert h.partition().log_end_offset == 2


def test_a_marker_is_stamped_with_the_time_it_is_written() -> None:
    """Kafka's leader writes the marker batch with its clock's time (WriteTxnMarkers):
    here the cluster's clock when the markers are written, after the prepare window."""
    h = Harness("kafka")
    h.tc.marker_delay_ms = 40
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    h.produce(pid, epoch)
    h.clock.advance(7)
    h.tc.end_txn(TID, pid, epoch, True)
    h.clock.advance(40)
    h.tc.tick()
    marker = read_header(h.partition().leader_log.batch_at(1))
    assert marker.is_control
    assert marker.base_timestamp == marker.max_timestamp == h.clock.now_ms()


def test_the_markers_of_a_transaction_with_offsets_are_all_written_at_once() -> None:
    """__consumer_offsets takes no marker here (the group coordinator completes the
    offsets), and the partitions after it in order still get theirs in the same
    EndTxn: the transaction completes without waiting for a tick."""
    h = Harness()
    pid, epoch = h.init()
    h.tc.add_offsets(TID, pid, epoch, "grp")
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    h.produce(pid, epoch)
    assert h.tc.end_txn(TID, pid, epoch, True)[0] == E.NONE
    assert h.tc.txns[TID].state == "CompleteCommit"
    assert h.partition().log_end_offset == 2


def test_a_leaderless_partition_holds_only_its_own_marker() -> None:
    """A marker whose partition has no leader waits for one; the markers of the other
    partitions are written in the same EndTxn, and the one left at the next tick that
    finds a leader; after that the tick visits the transaction no more."""
    h = Harness()
    leader = next(b for b in (1, 2, 3)
                  if b not in (h.partition(0).leader, h.partition(1).leader))
    h.state.create_topic("a-first", assignments={0: [leader]})  # sorts before "t"
    lonely = h.state.get_partition("a-first", 0)
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("a-first", 0), ("t", 0), ("t", 1)])
    controller.broker_stopped(h.state, leader)
    assert lonely.leader == -1
    assert h.tc.end_txn(TID, pid, epoch, True)[0] == E.NONE
    assert h.tc.txns[TID].state == "PrepareCommit"
    assert h.tc.txns[TID].pending_markers == {("a-first", 0)}
    assert [h.partition(i).log_end_offset for i in (0, 1)] == [1, 1]  # their markers
    controller.broker_started(h.state, leader)
    assert h.tc.tick() is True
    assert h.tc.txns[TID].state == "CompleteCommit" and lonely.log_end_offset == 1
    visits = h.tc.visits
    h.tc.tick()
    assert h.tc.visits == visits


def test_markers_of_deleted_partitions_are_dropped() -> None:
    """A marker whose partition is gone (its topic deleted, or deleted and created
    again with fewer partitions) is not written and no longer awaited: Kafka's
    coordinator skips a partition it finds no leader endpoint for ("likely deleted
    already"), and the other partitions still get theirs."""
    h = Harness("kafka")
    h.tc.marker_delay_ms = 10
    h.state.create_topic("gone", 2, 1)
    h.state.create_topic("lost", 1, 1)
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("gone", 1), ("lost", 0), ("t", 0)])
    assert h.tc.end_txn(TID, pid, epoch, True)[0] == E.NONE
    h.state.delete_topic("gone")
    h.state.create_topic("gone", 1, 1)
    h.state.delete_topic("lost")
    h.clock.advance(10)
    assert h.tc.tick() is True
    assert h.tc.txns[TID].state == "CompleteCommit"
    assert h.partition().log_end_offset == 1  # t-0's marker
    assert h.state.get_partition("gone", 0).log_end_offset == 0


def test_a_marker_goes_to_a_leader_with_id_0() -> None:
    h = Harness(brokers=[0, 1, 2])
    h.state.create_topic("zero", assignments={0: [0]})
    assert h.state.get_partition("zero", 0).leader == 0
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("zero", 0)])
    assert h.tc.end_txn(TID, pid, epoch, True)[0] == E.NONE
    assert h.tc.txns[TID].state == "CompleteCommit"
    assert h.state.get_partition("zero", 0).log_end_offset == 1


def test_the_next_transaction_after_a_new_producer_id_keeps_it() -> None:
    """Transaction version 2 at the last epoch: the markers carry it and a new producer
    id follows them, once: the next transactions of the new id keep it."""
    h = Harness()
    pid, _ = h.init()
    h.tc.txns[TID].producer_epoch = 32766
    _produce_v2(h, pid, 32766)
    err, pid2, e2 = h.tc.end_txn(TID, pid, 32766, True, tv2=True)
    assert err == E.NONE and isinstance(pid2, int) and pid2 not in (pid, -1) and e2 == 0
    assert h.tc.describe(TID)["producer_id"] == pid2
    assert _produce_v2(h, pid2, 0) >= 0
    # its first transaction ended by a timeout (a fence, no bump of EndTxn's) keeps it
    h.clock.advance(60_001)
    h.tc.tick()
    assert h.tc.txns[TID].state == "CompleteAbort"
    assert (h.tc.txns[TID].producer_id, h.tc.txns[TID].producer_epoch) == (pid2, 1)
    assert _produce_v2(h, pid2, 1) >= 0
    assert h.tc.end_txn(TID, pid2, 1, True, tv2=True) == (E.NONE, pid2, 2)


def test_the_tick_visits_an_ongoing_transaction_at_its_timeout_not_before() -> None:
    """The timeout aborts the transaction at the first millisecond past it, fencing the
    producer as Kafka's prepareFenceProducerEpoch does: the epoch bumped and no last
    epoch kept, so the old producer's retry is no retry (PRODUCER_FENCED), and an
    InitProducerId naming the producer with no epoch (-1, which equals that absent
    last epoch) is answered the current epoch without a bump (Kafka's
    prepareIncrementProducerEpoch reads it as a retry)."""
    h = Harness()
    h.init()
    pid, epoch = h.init(timeout=10_000)
    assert epoch == 1
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    start = h.tc.txns[TID].start_ms
    h.tc.tick()
    assert h.tc.next_deadline() == start + 10_001
    visits = h.tc.visits
    h.clock.advance(10_000)
    assert h.tc.tick() is False and h.tc.visits == visits
    assert h.tc.txns[TID].state == "Ongoing"
    h.clock.advance(1)
    assert h.tc.tick() is True
    assert h.tc.txns[TID].state == "CompleteAbort"
    assert h.tc.txns[TID].producer_epoch == epoch + 1
    assert h.tc.end_txn(TID, pid, epoch, False, tv2=True)[0] == E.PRODUCER_FENCED
    assert h.tc.init_producer_id(TID, 10_000, pid, -1) == (E.NONE, pid, epoch + 1)


@pytest.mark.parametrize("configured", [True, False])
def test_an_idle_transactional_id_expires_just_past_its_expiration(configured: bool) -> None:
    """transactional.id.expiration.ms (7 days by default) after its last update, an Empty
    or Complete transactional id is forgotten, at the first millisecond past it; the tick
    visits it then and not before."""
    expiry = 1_000 if configured else 604_800_000
    h = Harness(**({"transactional.id.expiration.ms": str(expiry)} if configured else {}))
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    h.tc.end_txn(TID, pid, epoch, True)
    h.init("other")  # stays Empty, updated at the same time
    last = h.tc.txns[TID].last_update_ms
    assert h.tc.txns["other"].last_update_ms == last
    news: list[TxnChanged] = []
    h.state.hooks.append(lambda kind, ev: news.append(ev) if isinstance(ev, TxnChanged)
                         else None)
    h.tc.tick()
    assert h.tc.next_deadline() == last + expiry + 1
    visits = h.tc.visits
    h.clock.advance(expiry)
    assert h.tc.tick() is False and h.tc.visits == visits
    assert TID in h.tc.txns
    h.clock.advance(1)
    assert h.tc.tick() is True
    assert TID not in h.tc.txns and "other" not in h.tc.txns
    assert h.tc.visits == visits + 2
    # each one's record in __transaction_state is a tombstone
    assert sorted((ev.txn.transactional_id, ev.removed) for ev in news) == [
        ("other", True), (TID, True)]


def test_a_crashed_leader_gets_no_marker_until_a_new_leader_takes_over() -> None:
    """A leader whose process died is still the leader until the controller fences it
    (broker.session.timeout.ms): Kafka's coordinator cannot deliver the marker to it
    (the request fails, and is retried with the partition's leader as the metadata
    then names it), so the transaction stays PrepareCommit; once the broker is fenced
    the new leader gets the marker and the transaction completes."""
    h = Harness()
    h.state.create_topic("r", 1, 3)
    p = h.state.get_partition("r", 0)
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("r", 0)])
    batch = build_batch([(None, b"x")], producer_id=pid, producer_epoch=epoch,
                        base_sequence=0, transactional=True)
    h.state.append(p.leader, "r", 0, batch, -1)
    h.state.tick()
    assert p.high_watermark == 1 and len(p.isr) == 3
    old = p.leader
    controller.broker_crashed(h.state, old, fence_after_ms=5_000)
    assert h.state.is_alive(old) and not h.state.is_running(old)
    assert h.tc.end_txn(TID, pid, epoch, True)[0] == E.NONE
    assert h.tc.txns[TID].state == "PrepareCommit"
    assert p.leader == old and p.leader_log.log_end_offset == 1  # no marker written
    assert h.tc.add_partitions(TID, pid, epoch, [("r", 0)]) == {
        ("r", 0): E.CONCURRENT_TRANSACTIONS}
    h.clock.advance(5_000)
    h.state.tick()  # the controller fences it, a new leader is elected, the marker goes
    assert p.leader not in (old, -1)
    assert h.tc.txns[TID].state == "CompleteCommit"
    assert read_header(p.leader_log.batch_at(1)).is_control


def test_markers_left_waiting_for_leaders_are_written_as_leaders_come_back() -> None:
    """The tick tries the markers still waiting at each pass, and tells of a change only
    when it wrote one."""
    h = Harness()
    h.state.create_topic("a", assignments={0: [1]})
    h.state.create_topic("b", assignments={0: [2]})
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("a", 0), ("b", 0)])
    controller.broker_stopped(h.state, 1)
    controller.broker_stopped(h.state, 2)
    assert h.tc.end_txn(TID, pid, epoch, False)[0] == E.NONE
    assert h.tc.txns[TID].pending_markers == {("a", 0), ("b", 0)}
    assert h.tc.tick() is False  # no leader yet: nothing written
    # a pass that aborts another transaction tells of it, though these still wait
    opid, oepoch = h.init("other", timeout=100)
    assert h.tc.add_offsets("other", opid, oepoch, "grp") == E.NONE
    h.clock.advance(101)
    assert h.tc.tick() is True
    assert h.tc.txns["other"].state == "CompleteAbort"
    assert h.tc.txns[TID].pending_markers == {("a", 0), ("b", 0)}
    controller.broker_started(h.state, 2)
    assert h.tc.tick() is True
    assert h.tc.txns[TID].pending_markers == {("a", 0)}
    assert h.tc.txns[TID].state == "PrepareAbort"
    controller.broker_started(h.state, 1)
    assert h.tc.tick() is True
    assert h.tc.txns[TID].state == "CompleteAbort"


def test_kafka_timing_an_empty_v2_abort_waits_for_no_marker() -> None:
    """Transaction version 2's abort of an empty transaction (only the epoch bump) has
    no marker to write, so it completes at once under Kafka's timing too (Kafka's
    coordinator writes CompleteAbort as soon as it finds no partition to send to)."""
    h = Harness("kafka")
    h.tc.marker_delay_ms = 50
    pid, epoch = h.init()
    assert h.tc.end_txn(TID, pid, epoch, False, tv2=True) == (E.NONE, pid, epoch + 1)
    assert h.tc.txns[TID].state == "CompleteAbort"


def test_the_marker_delay_hook_is_asked_for_each_transaction() -> None:
    """``marker_delay`` (the hook adversarial mode replaces) is asked with the transaction
    whose markers it delays."""
    h = Harness("kafka")
    asked: list[str] = []

    def delay(txn: TxnMetadata) -> int:
        asked.append(txn.transactional_id)
        return 30

    h.tc.marker_delay = delay  # type: ignore[method-assign]
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    ended = h.clock.now_ms()
    h.tc.end_txn(TID, pid, epoch, True)
    assert asked == [TID] and h.tc.next_deadline() == ended + 30


# ---- the leader's append of a marker (Replication.append_control) ---------------------


def test_a_marker_is_appended_as_any_leader_append() -> None:
    """The leader appends a transaction marker as it appends a batch
    (UnifiedLog.appendAsLeader): stamped with its leader epoch, told to the observers
    (the data directory writes it before the EndTxn is answered), and naming its
    partition alone to the next tick and the parked requests (no visit of every
    partition, no wake of every parked request)."""
    s = new_cluster(3).state
    s.create_topic("m", assignments={0: [1, 2, 3]})
    p = s.get_partition("m", 0)
    events: list[object] = []
    s.hooks.append(lambda kind, event: events.append(event))
    s.tick()
    s.take_changes()
    assert not s.dirty_all
    base = s.append_control(p, control_batch(True, 7, 0, 1000))
    (batch,) = p.leader_log.read(base, 1 << 20, base + 1)
    assert read_header(batch).partition_leader_epoch == p.leader_epoch == 0
    assert [e for e in events if isinstance(e, Appended)] == [
        Appended(topic="m", partition=0, base=base, last=base)]
    assert not s.dirty_all
    assert s.take_changes() == (False, {("m", 0)})


def test_a_marker_rolls_the_leaders_segment_when_segment_ms_passed() -> None:
    """UnifiedLog.append rolls the active segment before any append, a marker's too
    (maybeRoll): past segment.ms the marker starts a new segment, which retention then
    deletes apart from the batches before it."""
    sim = new_cluster(3)
    s = sim.state
    s.create_topic("m", assignments={0: [1, 2, 3]}, configs={"segment.ms": "1000"})
    p = s.get_partition("m", 0)
    assert s.append(p.leader, "m", 0, build_batch([(None, b"v")]), 1).error == E.NONE
    sim.clock.advance(1001)
    base = s.append_control(p, control_batch(True, 7, 0, s.now()))
    assert p.leader_log.segment_ranges() == [(0, base), (base, base + 1)]


def test_a_marker_on_a_leader_alone_in_its_isr_moves_the_high_watermark_at_once(
        make_cluster: MakeCluster) -> None:
    """A leader alone in its ISR (its followers dropped out) has the marker it appends
    acknowledged at once: the high watermark passes it without waiting for a fetch,
    as after a lone leader's batch."""
    s, clock, f = make_cluster(**{"replica.lag.time.max.ms": "1000"})
    s.create_topic("m", assignments={0: [1, 2, 3]})
    p = s.get_partition("m", 0)
    s.tick()
    f.apply({"op": "pause_follower", "broker": 2})
    f.apply({"op": "pause_follower", "broker": 3})
    assert s.append(p.leader, "m", 0, build_batch([(None, b"v")]), 1).error == E.NONE
    clock.advance(1001)
    s.tick()
    assert (p.isr, p.high_watermark) == ([1], 1)
    base = s.append_control(p, control_batch(True, 7, 0, s.now()))
    assert p.high_watermark == base + 1


def test_a_marker_the_data_dir_cannot_write_takes_its_log_dir_offline(
        make_cluster: MakeCluster, tmp_path: Path) -> None:
    """The data directory writes a marker as any append, from an observer; a write it
    cannot make it reports to the log dir failure channel, and the marker's append
    tells the controller once the observers are done: the replica goes offline and
    leadership moves, as after a batch's failed write (Kafka's LogDirFailureChannel).
    A real write error: a file stands where the partition's directory goes."""
    s, _, _ = make_cluster()
    s.create_topic("m", assignments={0: [1, 2]})
    store = DataDir(str(tmp_path / "data"))
    (tmp_path / "data" / "m-0").write_text("")  # os.makedirs fails: FileExistsError
    p = s.get_partition("m", 0)
    s.hooks.append(lambda kind, event: store.on_event(s, event))
    try:
        s.append_control(p, control_batch(True, 7, 0, s.now()))
    finally:
        store.close()
    assert (p.offline, p.leader, len(s.offline_log_dirs[1])) == ({1}, 2, 1)
    assert not s.log_dir_failure_channel.pending


# ---- DescribeTransactions, ListTransactions and the rest of the coordinator's plumbing ---------
def test_describe_answers_every_field() -> None:
    h = Harness()
    coordinator = h.tc.coordinator_for(TID)
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("t", 1), ("t", 0)])
    start = h.tc.txns[TID].start_ms
    assert h.tc.describe(TID, coordinator) == {
        "transactional_id": TID, "error_code": E.NONE, "transaction_state": "Ongoing",
        "transaction_timeout_ms": 60_000, "transaction_start_time_ms": start,
        "producer_id": pid, "producer_epoch": epoch,
        "topics": [{"topic": "t", "partitions": [0, 1]}]}
    other = next(b for b in (1, 2, 3) if b != coordinator)
    assert h.tc.describe(TID, other) == {"transactional_id": TID,
                                         "error_code": E.NOT_COORDINATOR}
    assert h.tc.describe("") == {"transactional_id": "", "error_code": E.INVALID_REQUEST}
    assert h.tc.describe("unknown") == {"transactional_id": "unknown",
                                        "error_code": E.TRANSACTIONAL_ID_NOT_FOUND}


def _ids_on_two_coordinators(h: Harness) -> tuple[str, str]:
    """Two transactional ids, "a-..." sorting before "b-...", on different coordinators."""
    a = "a-0"
    b = next(f"b-{i}" for i in range(100)
             if h.tc.coordinator_for(f"b-{i}") != h.tc.coordinator_for(a))
    return a, b


def test_list_transactions_filters_each_id() -> None:
    """ListTransactions (Kafka's listTransactionStates): by state, producer id, duration
    (KIP-994: left out when now - start <= the filter), transactional id pattern and
    coordinator, each id judged alone; each listed with its id, producer id and state."""
    h = Harness()
    a, b = _ids_on_two_coordinators(h)
    bpid, bepoch = h.init(b)
    h.tc.add_partitions(b, bpid, bepoch, [("t", 0)])  # b begins 1000 ms before a
    h.clock.advance(1_000)
    apid, aepoch = h.init(a)
    h.tc.add_partitions(a, apid, aepoch, [("t", 1)])
    h.init("c-empty")
    entry_a = {"transactional_id": a, "producer_id": apid, "transaction_state": "Ongoing"}
    entry_b = {"transactional_id": b, "producer_id": bpid, "transaction_state": "Ongoing"}

    def listed(**filters: object) -> list:
        err, unknown, out = h.tc.list_transactions(**filters)  # type: ignore[arg-type]
        assert (err, unknown) == (E.NONE, [])
        return out

    assert listed(states=["Ongoing"]) == [entry_a, entry_b]
    assert [x["transactional_id"] for x in listed(states=["Empty"])] == ["c-empty"]
    assert listed(producer_ids=[bpid]) == [entry_b]
    assert listed(pattern="b-.*") == [entry_b]
    assert listed(broker_id=h.tc.coordinator_for(b), states=["Ongoing"]) == [entry_b]
    assert listed(duration_ms=500, states=["Ongoing"]) == [entry_b]
    assert listed(duration_ms=999, states=["Ongoing"]) == [entry_b]
    assert listed(duration_ms=1_000, states=["Ongoing"]) == []  # 1000 <= 1000
    assert listed(duration_ms=0, states=["Ongoing"]) == [entry_b]  # a began just now
    assert listed(duration_ms=-1, states=["Ongoing"]) == [entry_a, entry_b]
    assert h.tc.list_transactions(states=["Nope"]) == (E.NONE, ["Nope"], [])


def test_list_transactions_while_a_coordinator_partition_loads() -> None:
    """Kafka's listTransactionStates answers COORDINATOR_LOAD_IN_PROGRESS as a whole while
    the broker loads any __transaction_state partition (Kafka's timing: the first
    leaders load after they learn of the topic); a listing of every broker (no broker
    named) is not one broker's."""
    h = Harness("kafka")
    h.tc.ensure_txn_topic()
    leader = h.state.topics[TXN_TOPIC].partitions[0].leader
    h.clock.advance(CREATE_MS + FIRST_LEARN_MS)
    assert h.tc.list_transactions(broker_id=leader) == (E.COORDINATOR_LOAD_IN_PROGRESS, [], [])
    assert h.tc.list_transactions()[0] == E.NONE
    h.clock.advance(FIRST_LOAD_MS)
    assert h.tc.list_transactions(broker_id=leader)[0] == E.NONE


def test_transaction_news_wakes_only_the_requests_parked_on_no_key() -> None:
    """A transaction's change names no partition or group to the parked requests (its
    markers wake their partitions when they are appended), and sends no tick over
    every partition."""
    h = Harness()
    pid, epoch = h.init()
    h.state.dirty_all = h.state.changed_all = False
    version = h.state.version
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    assert h.state.version > version
    assert not h.state.dirty_all and not h.state.changed_all


def test_add_partitions_knows_a_topics_partitions_by_their_count() -> None:
    h = Harness()
    pid, epoch = h.init()
    assert h.tc.add_partitions(TID, pid, epoch, [("t", 1), ("t", 2)]) == {
        ("t", 1): E.OPERATION_NOT_ATTEMPTED, ("t", 2): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert h.tc.add_partitions(TID, pid, epoch, [("t", -1)]) == {
        ("t", -1): E.UNKNOWN_TOPIC_OR_PARTITION}


def test_add_offsets_adds_the_groups_offsets_partition_on_its_coordinator() -> None:
    """AddOffsetsToTxn adds the group's __consumer_offsets partition to the transaction
    (Kafka's handleAddOffsetsToTransaction: DescribeTransactions lists it), answered only
    by the transactional id's coordinator."""
    h = Harness()
    coordinator = h.tc.coordinator_for(TID)
    other = next(b for b in (1, 2, 3) if b != coordinator)
    pid, epoch = h.init()
    assert h.tc.add_offsets(TID, pid, epoch, "grp", broker_id=other) == E.NOT_COORDINATOR
    assert h.tc.add_offsets(TID, pid, epoch, "grp", broker_id=coordinator) == E.NONE
    assert h.tc.describe(TID)["topics"] == [
        {"topic": "__consumer_offsets", "partitions": [h.gc.partition_for("grp")]}]


def test_coordinator_for_without_create_creates_no_topic() -> None:
    h = Harness()
    with pytest.raises(KafkaError) as e:
        h.tc.coordinator_for(TID, create=False)
    assert e.value.code == E.COORDINATOR_NOT_AVAILABLE and TXN_TOPIC not in h.state.topics
    assert h.tc.coordinator_for(TID) in (1, 2, 3) and TXN_TOPIC in h.state.topics


def test_producer_ids_are_handed_out_one_after_another() -> None:
    h = Harness()
    first = h.tc.init_producer_id(None, 0)[1]
    assert [h.tc.init_producer_id(None, 0)[1] for _ in range(2)] == [first + 1, first + 2]
    assert h.init("x")[0] == first + 3


@pytest.mark.parametrize("delay, ready, retry_max", [(50, True, None), (150, False, None),
                                                     (150, True, 250)])
def test_a_produce_adding_its_partition_waits_for_the_markers_up_to_the_retry_max(
        delay: int, ready: bool, retry_max: int | None) -> None:
    """Transaction version 2 under Kafka's timing: a Produce that adds its partition
    while the transaction's last end is still being prepared waits for the markers, as
    Kafka's leader retries the coordinator, up to add.partitions.to.txn.retry.backoff.max.ms
    (100 by default): ready once they are written, else answered at that deadline."""
    config = {} if retry_max is None else {
        "add.partitions.to.txn.retry.backoff.max.ms": str(retry_max)}
    h = Harness("kafka", **config)
    h.tc.marker_delay_ms = delay
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    h.tc.end_txn(TID, pid, epoch, True)
    wait = until_prepared(h.tc, TID)
    limit = 100 if retry_max is None else retry_max
    assert wait.deadline_ms == h.clock.now_ms() + limit
    assert wait.check() is None
    h.clock.advance(min(delay, limit))
    h.tc.tick()
    assert wait.check() is (True if ready else None)
    assert until_prepared(h.tc, "no-such-id").check() is True


def test_the_transaction_state_topic_is_created_as_kafkas() -> None:
    """TransactionLog's topic (Kafka 4.4): transaction.state.log.num.partitions (50)
    partitions of transaction.state.log.replication.factor (3) replicas, compacted,
    uncompressed, min.insync.replicas from transaction.state.log.min.isr (2), no
    unclean election, segments of transaction.state.log.segment.bytes (the emulator's
    default 102400, below the 1 MiB minimum: internal.segment.bytes)."""
    s = new_cluster(3).state
    TransactionCoordinator(s).ensure_txn_topic()
    t = s.topics[TXN_TOPIC]
    assert (len(t.partitions), {len(p.replicas) for p in t.partitions}) == (50, {3})
    assert dict(t.configs) == {
        "cleanup.policy": "compact", "compression.type": "uncompressed",
        "min.insync.replicas": "2", "unclean.leader.election.enable": "false",
        "segment.bytes": "1048576", "internal.segment.bytes": "102400"}
    s = new_cluster(3, **{"transaction.state.log.num.partitions": "7",
                          "transaction.state.log.replication.factor": "2",
                          "transaction.state.log.min.isr": "1",
                          "transaction.state.log.segment.bytes": "2097152"}).state
    TransactionCoordinator(s).ensure_txn_topic()
    t = s.topics[TXN_TOPIC]
    assert (len(t.partitions), {len(p.replicas) for p in t.partitions}) == (7, {2})
    assert dict(t.configs) == {
        "cleanup.policy": "compact", "compression.type": "uncompressed",
        "min.insync.replicas": "1", "unclean.leader.election.enable": "false",
        "segment.bytes": "2097152"}


def test_a_new_coordinator_starts_at_producer_id_0_and_kafkas_marker_delay() -> None:
    """A new cluster's first producer id is 0 (Kafka's controller hands out its first
    block from 0); under Kafka's timing the markers follow EndTxn MARKER_DELAY_MS later
    unless told otherwise; no tick has visited anything yet."""
    h = Harness("kafka")
    assert h.tc.visits == 0
    assert h.tc.init_producer_id(None, 0) == (E.NONE, 0, 0)
    pid, epoch = h.init()
    h.tc.add_partitions(TID, pid, epoch, [("t", 0)])
    ended = h.clock.now_ms()
    h.tc.end_txn(TID, pid, epoch, True)
    assert h.tc.next_deadline() == ended + MARKER_DELAY_MS
