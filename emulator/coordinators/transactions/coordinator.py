"""The transaction coordinator and producer ids: InitProducerId, AddPartitionsToTxn,
AddOffsetsToTxn, EndTxn, transaction timeouts, DescribeTransactions, ListTransactions.

Modelled on Kafka's ``TransactionCoordinator`` and ``TransactionMetadata``. Transaction
version 1: the client's epoch stays the same across transactions, the coordinator bumps
it on InitProducerId and when it fences a producer. Transaction version 2 (KIP-890 part
2, the ``transaction.version`` feature at level 2, which the Java 4.x producer uses):
EndTxn v5 bumps the epoch at the end of every transaction (the markers carry the new
epoch, so a zombie's late writes of the old epoch are fenced) and answers the new
epoch, a new producer id once the epoch is exhausted; Produce v12+ and TxnOffsetCommit
v5+ add their partition to the transaction implicitly (no AddPartitionsToTxn or
AddOffsetsToTxn); an abort of an empty transaction just bumps the epoch; a retried
EndTxn of the old epoch answers the new one. A
transactional.id is coordinated by the leader of partition
``abs(javaHashCode(id)) % transaction.state.log.num.partitions`` of the internal
``__transaction_state`` topic, created on first use.

State table (``TransactionState``; the states and ``TxnMetadata`` are in
transactions/metadata.py):

    Empty / CompleteCommit / CompleteAbort -> Ongoing        AddPartitionsToTxn,
                                                             AddOffsetsToTxn
    Ongoing            -> PrepareCommit | PrepareAbort       EndTxn, or a timeout (abort
                                                             with a bumped epoch)
    PrepareCommit      -> CompleteCommit                     every marker written
    PrepareAbort       -> CompleteAbort
    Ongoing            -> (fence) PrepareAbort               InitProducerId from a new
                                                             producer with the same id
    Empty / Complete*  -> PrepareAbort -> CompleteAbort      EndTxn v5 abort of an empty
                                                             transaction (epoch bump only)

Ending a transaction writes a COMMIT/ABORT marker into every partition of the
transaction (emulator/coordinators/transactions/markers.py: the markers and the prepare
window before them, at once under ``--fidelity fast``, ``marker_delay(txn)`` ms later
under Kafka's timing, written by ``tick`` when that deadline of the ``Deadlines`` heap
comes). Until they are written DescribeTransactions shows Prepare*, and the same
transactional id gets CONCURRENT_TRANSACTIONS from InitProducerId, AddPartitionsToTxn,
AddOffsetsToTxn and a retried EndTxn, as on Kafka. A partition without a leader (or
whose leader crashed and is not fenced yet) keeps the transaction in Prepare* until
``tick`` can write its marker. Offsets sent with
TxnOffsetCommit are released to the group coordinator on commit.

``marker_delay_ms`` (an attribute) or ``marker_delay`` (a method of the transaction,
replaceable) is the hook adversarial mode uses to make markers slow.

Cost follows what changed (docs/architecture.md): ``tick`` visits only the transactions whose
timeout or transactional.id.expiration.ms is due (a ``Deadlines`` heap, rescheduled at
every change, which ``_persist`` sees) and those still waiting to write markers.

Every change of a transaction's state is written as a TransactionLog record of
__transaction_state (emulator.coordinators.coordinator_log), the coordinator rebuilt from
those when a data directory is loaded.
"""

from __future__ import annotations

import re
from typing import cast

from emulator.cluster.configs import segment_size_configs
from emulator.cluster.events import TxnChanged
from emulator.coordinators.groups.base import OFFSETS_TOPIC
from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.runtime.deadlines import Deadlines
from emulator.coordinators.runtime.host import ClusterHost
from emulator.coordinators.runtime.placement import InternalTopic
from emulator.coordinators.transactions.markers import (
    MARKER_DELAY_MS,
    prepare_window,
    write_markers,
)
from emulator.coordinators.transactions.messages import (
    DescribedTransaction,
    ListedTransaction,
)
from emulator.coordinators.transactions.metadata import (
    COMPLETE_ABORT,
    COMPLETE_COMMIT,
    EMPTY,
    MAX_EPOCH,
    ONGOING,
    PREPARE_ABORT,
    PREPARE_COMMIT,
    STATES,
    TxnMetadata,
)
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import InvalidRecordError, read_header

TXN_TOPIC = "__transaction_state"


class TransactionCoordinator:
    """Producer ids for the whole cluster, and every transactional id's state."""

    def __init__(self, state: ClusterHost, groups: GroupCoordinator | None = None) -> None:
        self.state = state
        self.topic = InternalTopic(
            state, TXN_TOPIC, lambda: self.cfg("transaction.state.log.num.partitions", 50),
            lambda: self.cfg("transaction.state.log.replication.factor", 3),
            # TransactionLog's topic configs (Kafka 4.4): min.insync.replicas from
            # transaction.state.log.min.isr (2; capped at the replicas, as every
            # partition's effective min ISR is), no unclean leader election
            lambda: {"cleanup.policy": "compact", "compression.type": "uncompressed",
                     "min.insync.replicas": str(self.cfg("transaction.state.log.min.isr", 2)),
                     "unclean.leader.election.enable": "false",
                     **segment_size_configs(self.cfg("transaction.state.log.segment.bytes",
                                                     104857600))})
        self.groups = groups
        self.txns: dict[str, TxnMetadata] = {}
        self.next_producer_id = 0
        # When each transactional id next needs the tick: its timeout (Ongoing) or its
        # expiration (Empty, Complete*); Prepare* ones wait for leaders (``_markers``,
        # looked at every tick until their markers are written).
        self.timers = Deadlines()
        self._markers: set[str] = set()
        # Under Kafka's timing, how long after EndTxn the markers are written (ms); an
        # attribute adversarial mode (or a test) may change, see ``marker_delay``.
        self.marker_delay_ms = MARKER_DELAY_MS
        self._expiry: int | None = None  # the expiration the timers were computed with
        self.visits = 0  # transactions a tick looked at (tests/test_scale.py counts)
        state.tick_hooks.append(self.tick)

    # ---- plumbing -----------------------------------------------------------------
    def now(self) -> int:
        now: int = self.state.now()
        return now

    def cfg(self, key: str, default: int) -> int:
        v = self.state.config.get(key)
        return default if v is None else int(v)

    def _persist(self, txn: TxnMetadata, removed: bool = False) -> None:
        """News for the __transaction_state records (emulator.coordinators.coordinator_log);
        every change of a transaction passes here, so its timer is rescheduled here."""
        self.schedule(txn)
        self.state.emit(TxnChanged(txn=txn, removed=removed))

    def _changed(self) -> None:
        """News for the server: a tick soon, and the requests parked on no partition in
        particular re-checked. Requests parked on partitions (fetches, acks=all
        produces) wait on no transaction's state itself: a marker wakes those of its
        partition when it is appended (``append_control``), so none is named here."""
        self.state.changed(partitions_only=True, keys=())

    def schedule(self, txn: TxnMetadata) -> None:
        """Recompute when ``tick`` must next look at ``txn`` (after any change of it)."""
        tid = txn.transactional_id
        due = None
        self._markers.discard(tid)
        if self.txns.get(tid) is txn:
            if txn.state in (PREPARE_COMMIT, PREPARE_ABORT) and txn.markers_due > self.now():
                due = txn.markers_due  # Kafka's timing: the markers are not due yet
            elif txn.state in (PREPARE_COMMIT, PREPARE_ABORT):
                self._markers.add(tid)
            elif txn.state == ONGOING:
                due = txn.start_ms + txn.timeout_ms + 1
            elif txn.state in (EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT) \
                    and self._expiry is not None:
                due = txn.last_update_ms + self._expiry + 1
        self.timers.set(tid, due)

    def next_deadline(self) -> int | None:
        """When ``tick`` next has something to do (markers due, a timeout, an
        expiration): the server sets a tick for it when it comes before its next
        periodic one (emulator/server/purgatory.py)."""
        return self.timers.next_due()

    def new_producer_id(self) -> int:
        pid = self.next_producer_id
        self.next_producer_id += 1
        return pid

    # ---- placement (emulator/coordinators/runtime/placement.py) ----------------------
    def ensure_txn_topic(self) -> None:
        self.topic.ensure()

    def coordinator_for(self, transactional_id: str, create: bool = True) -> int:
        return self.topic.coordinator_for(transactional_id, create)

    def check_coordinator(self, broker_id: int | None, transactional_id: str) -> None:
        """NOT_COORDINATOR unless ``broker_id`` (None: an in-process caller) coordinates."""
        if broker_id is not None:
            self.topic.check(broker_id, transactional_id)

    # ---- InitProducerId -----------------------------------------------------------------
    def init_producer_id(self, transactional_id: str | None, timeout_ms: int,
                         producer_id: int = -1, producer_epoch: int = -1,
                         broker_id: int | None = None) -> tuple[int, int, int]:
        """Returns (error, producer id, epoch)."""
        if transactional_id is None:
            # An idempotent producer: any broker hands out a fresh producer id.
            return E.NONE, self.new_producer_id(), 0
        try:
            if transactional_id == "":
                raise KafkaError(E.INVALID_REQUEST)
            self.check_coordinator(broker_id, transactional_id)
            if not 0 < timeout_ms <= self.cfg("transaction.max.timeout.ms", 900000):
                raise KafkaError(E.INVALID_TRANSACTION_TIMEOUT)
            txn = self.txns.get(transactional_id)
            if txn is None:
                txn = self.txns[transactional_id] = TxnMetadata(
                    transactional_id, self.new_producer_id(), timeout_ms, self.now())
            return self._init_transit(txn, timeout_ms, producer_id, producer_epoch)
        except KafkaError as e:
            return e.code, -1, -1
        finally:
            self._changed()

    def _init_transit(self, txn: TxnMetadata, timeout_ms: int, expected_pid: int,
                      expected_epoch: int) -> tuple[int, int, int]:
        given = expected_pid >= 0
        if given and not (txn.producer_epoch == -1 or expected_pid == txn.producer_id or (
                expected_pid == txn.previous_producer_id and expected_epoch >= MAX_EPOCH - 1)):
            raise KafkaError(E.PRODUCER_FENCED)
        if txn.state in (PREPARE_COMMIT, PREPARE_ABORT):
            raise KafkaError(E.CONCURRENT_TRANSACTIONS)
        if txn.state == ONGOING:
            # Fence the current producer: abort its transaction with a bumped epoch and
            # let the new one retry (it then gets yet another epoch).
            txn.producer_epoch += 1
            txn.last_producer_epoch = -1
            self._end(txn, commit=False)
            raise KafkaError(E.CONCURRENT_TRANSACTIONS)
        now = self.now()
        if txn.epoch_exhausted() and (not given or expected_epoch == txn.producer_epoch):
            txn.previous_producer_id = txn.producer_id
            txn.producer_id = self.new_producer_id()
            txn.last_producer_epoch = txn.producer_epoch if given else -1
            txn.producer_epoch = 0
        elif not given or txn.producer_epoch == -1 or expected_epoch == txn.producer_epoch:
            txn.last_producer_epoch = txn.producer_epoch if given else -1
            txn.producer_epoch += 1
        elif expected_epoch != txn.last_producer_epoch:
            raise KafkaError(E.PRODUCER_FENCED)
        # else: a retry of an InitProducerId that already bumped the epoch
        txn.timeout_ms = timeout_ms
        txn.transition(EMPTY)
        txn.partitions.clear()
        txn.groups.clear()
        txn.start_ms = -1
        txn.last_update_ms = now
        self._persist(txn)
        return E.NONE, txn.producer_id, txn.producer_epoch

    # ---- AddPartitionsToTxn / AddOffsetsToTxn -----------------------------------------------
    def _validate(self, transactional_id: str | None, producer_id: int, epoch: int,
                  broker_id: int | None) -> TxnMetadata:
        if not transactional_id:
            raise KafkaError(E.INVALID_REQUEST)
        self.check_coordinator(broker_id, transactional_id)
        txn = self.txns.get(transactional_id)
        if txn is None or txn.producer_id != producer_id:
            raise KafkaError(E.INVALID_PRODUCER_ID_MAPPING)
        if txn.producer_epoch != epoch:
            raise KafkaError(E.PRODUCER_FENCED)
        if txn.state in (PREPARE_COMMIT, PREPARE_ABORT):
            raise KafkaError(E.CONCURRENT_TRANSACTIONS)
        return txn

    def add_partitions(self, transactional_id: str, producer_id: int, epoch: int,
                       partitions: list[tuple[str, int]], broker_id: int | None = None,
                       verify_only: bool = False) -> dict[tuple[str, int], int]:
        """Per partition error codes, as AddPartitionsToTxn answers them."""
        unknown = {tp for tp in partitions if self._unknown(tp)}
        if unknown:
            return {tp: E.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown
                    else E.OPERATION_NOT_ATTEMPTED for tp in partitions}
        try:
            txn = self._validate(transactional_id, producer_id, epoch, broker_id)
        except KafkaError as e:
            return dict.fromkeys(partitions, e.code)
        if verify_only:
            return {tp: E.NONE if txn.state == ONGOING and tp in txn.partitions
                    else E.INVALID_TXN_STATE for tp in partitions}
        self._begin(txn)
        txn.partitions.update(partitions)
        self._persist(txn)
        self._changed()
        return dict.fromkeys(partitions, E.NONE)

    def _unknown(self, tp: tuple[str, int]) -> bool:
        t = self.state.topics.get(tp[0])
        return t is None or not 0 <= tp[1] < len(t.partitions)

    def _begin(self, txn: TxnMetadata) -> None:
        now = self.now()
        if txn.state != ONGOING:
            txn.transition(ONGOING)
            txn.start_ms = now
        txn.last_update_ms = now

    def add_offsets(self, transactional_id: str, producer_id: int, epoch: int, group_id: str,
                    broker_id: int | None = None) -> int:
        """AddOffsetsToTxn: the group's offsets partition joins the transaction."""
        try:
            txn = self._validate(transactional_id, producer_id, epoch, broker_id)
        except KafkaError as e:
            return e.code
        self._begin(txn)
        txn.groups.add(group_id)
        if self.groups is not None:
            txn.partitions.add((OFFSETS_TOPIC, self.groups.partition_for(group_id)))
        self._persist(txn)
        self._changed()
        return E.NONE

    # ---- EndTxn ---------------------------------------------------------------------------------
    def end_txn(self, transactional_id: str, producer_id: int, epoch: int, commit: bool,
                broker_id: int | None = None, tv2: bool = False) -> tuple[int, int, int]:
        """Returns (error, producer id, epoch); ``tv2``: EndTxn v5 (transaction version 2)."""
        try:
            if not transactional_id:
                raise KafkaError(E.INVALID_REQUEST)
            self.check_coordinator(broker_id, transactional_id)
            txn = self.txns.get(transactional_id)
            if tv2:
                return self._end_txn_v2(txn, producer_id, epoch, commit)
            if txn is None or txn.producer_id != producer_id:
                raise KafkaError(E.INVALID_PRODUCER_ID_MAPPING)
            if epoch != txn.producer_epoch:
                raise KafkaError(E.PRODUCER_FENCED)
            done = COMPLETE_COMMIT if commit else COMPLETE_ABORT
            preparing = PREPARE_COMMIT if commit else PREPARE_ABORT
            if txn.state == ONGOING:
                self._end(txn, commit)
            elif txn.state == preparing:
                raise KafkaError(E.CONCURRENT_TRANSACTIONS)
            elif txn.state != done:
                raise KafkaError(E.INVALID_TXN_STATE, f"TransactionalId {transactional_id}: "
                                 f"cannot {'commit' if commit else 'abort'} in state "
                                 f"{txn.state}")
            return E.NONE, txn.producer_id, txn.producer_epoch
        except KafkaError as e:
            return e.code, -1, -1

    def _end_txn_v2(self, txn: TxnMetadata | None, producer_id: int, epoch: int,
                    commit: bool) -> tuple[int, int, int]:
        """EndTxn v5 (Kafka's handleEndTransaction with TV_2)."""
        if txn is None:
            raise KafkaError(E.INVALID_PRODUCER_ID_MAPPING)
        done = COMPLETE_COMMIT if commit else COMPLETE_ABORT
        retry = txn.state == done and epoch == txn.last_producer_epoch and (
            producer_id == txn.producer_id or producer_id == txn.previous_producer_id)
        if retry:  # the answer was lost: the bump already happened
            return E.NONE, txn.producer_id, txn.producer_epoch
        if producer_id != txn.producer_id:
            raise KafkaError(E.INVALID_PRODUCER_ID_MAPPING)
        if txn.state in (PREPARE_COMMIT, PREPARE_ABORT):
            # The epoch was bumped when the transaction was prepared: only a retry of
            # that EndTxn (the old epoch) is valid; the same outcome is still being
            # written (CONCURRENT_TRANSACTIONS), the other one is not allowed.
            if epoch != txn.producer_epoch - 1:
                raise KafkaError(E.PRODUCER_FENCED)
            if txn.state == (PREPARE_COMMIT if commit else PREPARE_ABORT):
                raise KafkaError(E.CONCURRENT_TRANSACTIONS)
            raise KafkaError(E.INVALID_TXN_STATE, f"TransactionalId {txn.transactional_id}: "
                             f"cannot {'commit' if commit else 'abort'} in state {txn.state}")
        if epoch != txn.producer_epoch:
            raise KafkaError(E.PRODUCER_FENCED)
        if txn.state == ONGOING or (not commit and txn.state in (
                EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT)):
            # (aborting an empty transaction writes no marker: only the bump)
            self._bump_epoch(txn)
            self._end(txn, commit)
        else:
            raise KafkaError(E.INVALID_TXN_STATE, f"TransactionalId {txn.transactional_id}: "
                             f"cannot {'commit' if commit else 'abort'} in state {txn.state}")
        return E.NONE, txn.producer_id, txn.producer_epoch

    def _bump_epoch(self, txn: TxnMetadata) -> None:
        """Transaction version 2's bump at the end of a transaction; at the last epoch
        the markers still carry it and a new producer id follows them."""
        txn.last_producer_epoch = txn.producer_epoch
        txn.producer_epoch += 1
        txn.rotate_producer_id = txn.epoch_exhausted()

    def marker_delay(self, txn: TxnMetadata) -> int:
        """How long ``txn`` stays in Prepare* before its markers are written: 0 under
        ``--fidelity fast``, ``marker_delay_ms`` under Kafka's timing (``prepare_window``).
        Adversarial mode may set ``marker_delay_ms`` or replace this method (per
        transaction, seeded)."""
        return prepare_window(self.state.fidelity, self.marker_delay_ms)

    def _end(self, txn: TxnMetadata, commit: bool) -> None:
        now = self.now()
        txn.transition(PREPARE_COMMIT if commit else PREPARE_ABORT)
        txn.last_update_ms = now
        txn.pending_markers = set(txn.partitions)
        delay = self.marker_delay(txn) if txn.pending_markers or txn.groups else 0
        txn.markers_due = now + delay if delay > 0 else -1
        self._persist(txn)
        if txn.markers_due < 0:
            self._write_markers(txn)

    def _write_markers(self, txn: TxnMetadata) -> None:
        """Write what markers can be written; complete the transaction when all are."""
        commit = txn.state == PREPARE_COMMIT
        now = self.now()
        write_markers(self.state, txn.pending_markers, txn.producer_id, txn.producer_epoch,
                      commit, now)
        if txn.pending_markers:
            return
        if self.groups is not None:
            for g in sorted(txn.groups):
                self.groups.complete_txn(g, txn.producer_id, commit)
        txn.transition(COMPLETE_COMMIT if commit else COMPLETE_ABORT)
        txn.partitions.clear()
        txn.groups.clear()
        txn.markers_due = -1
        txn.last_update_ms = now
        if txn.rotate_producer_id:
            txn.rotate_producer_id = False
            txn.previous_producer_id = txn.producer_id
            txn.producer_id = self.new_producer_id()
            txn.producer_epoch = 0
        self._persist(txn)
        self._changed()

    # ---- the produce path -----------------------------------------------------------------------
    def preparing(self, transactional_id: str) -> bool:
        """Is the transaction still writing the markers of its last end (Prepare*)? A
        produce that adds a partition (transaction version 2) waits for that under
        Kafka's timing (emulator/coordinators/transactions/waits.py)."""
        txn = self.txns.get(transactional_id)
        return txn is not None and txn.state in (PREPARE_COMMIT, PREPARE_ABORT)

    def check_produce(self, transactional_id: str, topic: str, partition: int,
                      records: bytes | None, implicit_add: bool = False) -> int:
        """Error code for a transactional batch that is not part of an ongoing transaction.

        ``implicit_add`` (Produce v12+ under transaction version 2): the batch adds its
        partition to the transaction, beginning one if needed, as the partition leader's
        AddPartitionsToTxn to the coordinator does in Kafka.
        """
        if not records:
            return E.NONE
        try:
            h = read_header(records)
        except InvalidRecordError:
            return E.NONE  # the append reports the corrupt batch
        if not h.is_transactional:
            return E.NONE
        txn = self.txns.get(transactional_id)
        if txn is None or txn.producer_id != h.producer_id:
            return E.INVALID_PRODUCER_ID_MAPPING
        if h.producer_epoch < txn.producer_epoch:
            return E.INVALID_PRODUCER_EPOCH
        if implicit_add:
            if h.producer_epoch != txn.producer_epoch:
                return E.PRODUCER_FENCED
            if txn.state in (PREPARE_COMMIT, PREPARE_ABORT):
                return E.CONCURRENT_TRANSACTIONS
            if (topic, partition) not in txn.partitions or txn.state != ONGOING:
                self._begin(txn)
                txn.partitions.add((topic, partition))
                self._persist(txn)
                self._changed()
            return E.NONE
        if txn.state != ONGOING or (topic, partition) not in txn.partitions:
            return E.INVALID_TXN_STATE
        return E.NONE

    # ---- time -------------------------------------------------------------------------------------
    def tick(self, now: int | None = None) -> bool:
        """Abort timed-out transactions (fencing their producer), retry markers, expire
        ids: only the transactions that are due or still writing markers are visited."""
        if now is None:
            now = self.now()
        changed = False
        expiry = self.cfg("transactional.id.expiration.ms", 604800000)
        if expiry != self._expiry:  # first tick, or the config changed: reschedule all
            self._expiry = expiry
            for each in list(self.txns.values()):
                self.schedule(each)
        due = cast("list[str]", self.timers.pop_due(now))  # transactional ids
        for tid in due + sorted(self._markers):
            txn = self.txns.get(tid)
            if txn is None:
                continue
            self.visits += 1
            if txn.state == ONGOING and now > txn.start_ms + txn.timeout_ms:
                txn.producer_epoch += 1  # Kafka's prepareFenceProducerEpoch
                txn.last_producer_epoch = -1
                self._end(txn, commit=False)
                changed = True
            elif txn.state in (PREPARE_COMMIT, PREPARE_ABORT) and now >= txn.markers_due:
                before, state = len(txn.pending_markers), txn.state
                self._write_markers(txn)
                changed |= len(txn.pending_markers) != before or txn.state != state
            elif txn.state in (EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT) \
                    and now - txn.last_update_ms > expiry:
                del self.txns[tid]
                self._persist(txn, removed=True)
                changed = True
            self.schedule(txn)
        if changed:
            self._changed()
        return changed

    # ---- administration -----------------------------------------------------------------------------
    def describe(self, transactional_id: str, broker_id: int | None = None
                 ) -> DescribedTransaction:
        out: DescribedTransaction = {"transactional_id": transactional_id,
                                     "error_code": E.NONE}
        try:
            if not transactional_id:
                raise KafkaError(E.INVALID_REQUEST)
            self.check_coordinator(broker_id, transactional_id)
            txn = self.txns.get(transactional_id)
            if txn is None:
                raise KafkaError(E.TRANSACTIONAL_ID_NOT_FOUND)
        except KafkaError as e:
            out["error_code"] = e.code
            return out
        topics: dict[str, list[int]] = {}
        for t, p in sorted(txn.partitions):
            topics.setdefault(t, []).append(p)
        out["transaction_state"] = txn.state
        out["transaction_timeout_ms"] = txn.timeout_ms
        out["transaction_start_time_ms"] = txn.start_ms
        out["producer_id"] = txn.producer_id
        out["producer_epoch"] = txn.producer_epoch
        out["topics"] = [{"topic": t, "partitions": ps} for t, ps in topics.items()]
        return out

    def list_transactions(self, broker_id: int | None = None, states: list[str] | None = None,
                          producer_ids: list[int] | None = None, duration_ms: int = -1,
                          pattern: str | None = None
                          ) -> tuple[int, list[str], list[ListedTransaction]]:
        """(error, unknown state filters, transactions this broker coordinates)."""
        if broker_id is not None and self.topic.loading_here(broker_id):
            # Kafka's TransactionStateManager.listTransactionStates: any partition
            # loading, and the whole listing is COORDINATOR_LOAD_IN_PROGRESS
            return E.COORDINATOR_LOAD_IN_PROGRESS, [], []
        unknown = [s for s in states or [] if s not in STATES]
        try:
            regex = re.compile(pattern) if pattern else None
        except re.error:
            return E.INVALID_REGULAR_EXPRESSION, unknown, []
        now = self.now()
        out: list[ListedTransaction] = []
        for tid, txn in sorted(self.txns.items()):
            if states and txn.state not in states:
                continue
            if producer_ids and txn.producer_id not in producer_ids:
                continue
            if duration_ms >= 0 and now - txn.start_ms <= duration_ms:
                continue
            if regex is not None and not regex.fullmatch(tid):
                continue
            if not self.topic.coordinated_by(broker_id, tid):
                continue
            out.append({"transactional_id": tid, "producer_id": txn.producer_id,
                        "transaction_state": txn.state})
        return E.NONE, unknown, out
