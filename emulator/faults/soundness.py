"""The adversary's soundness check: no answer Kafka could not give.

``--fidelity adversarial`` is worth its reds only if every answer a client gets is one a
real Kafka 4.4 cluster could give in some schedule consistent with what the client has
seen. The adversary is built that way (its faults are events in the cluster, the
handlers answer from the state; emulator/faults/adversary.py); this module checks it, on
every answer of an adversarial cluster, so that a handler or a fault that breaks the
rule shows as a named violation instead of as a client's "bug".

The invariants (docs/fidelity.md, "The adversary's soundness"):

1. **Leadership.** NOT_LEADER_OR_FOLLOWER for a partition comes (on Produce, Fetch and
   ListOffsets of a client) only from a broker that is not its leader in the
   controller's state or in its own metadata view, or whose leadership changed while
   the request was in the broker (the deposed leader's purgatory answers so).
2. **No append after a refusal without a leader change.** A broker that answered
   NOT_LEADER_OR_FOLLOWER for a partition appends to it again only at a later leader
   epoch than the one it knew when it refused (a broker whose metadata lags refuses
   at the epoch it knows, then learns that it leads: Kafka's ReplicaManager does so; a
   refusal because leadership changed while the request waited, as a deposed leader's
   purgatory answers, says nothing of the epoch after it).
3. **Idempotent retries.** A retried batch of an idempotent producer (same producer id,
   epoch and base sequence) that was appended is answered with the offset of its first
   append, unless a leader change came in between and the first append is no longer in
   the answering leader's log (truncated away: Kafka appends the retry anew). A first
   append the new leader holds is in the producer state its log built, and Kafka answers
   the retry with its offset.
4. **The ISR.** NOT_ENOUGH_REPLICAS is answered only to acks=all, and only while the
   partition's ISR is below its min.insync.replicas, or after its ISR changed while the
   request was in the broker (Kafka decides it as it appends, and an answer that waits
   for another partition's acks leaves later: DelayedProduce keeps a failed partition's
   error).
5. **The hint.** A NOT_LEADER_OR_FOLLOWER answer to a Produce never names the answering
   broker itself as the current leader.
6. **read_committed.** No record of an aborted transaction reaches a read_committed
   reader: a Fetch at isolation level 1 returns a transactional batch that the
   producer's transaction aborted only with an aborted-transaction entry that makes the
   reader skip it (the consumer's filter, Kafka's CompletedFetch, is replayed on the
   answer). The truth is the client's history, not the partition's state a bug could
   have lost: the offsets each transactional batch was appended at (the Produce
   answers) and the producer's EndTxn with ``committed`` false answered 0, which aborts
   every batch its producer id and epoch appended since its previous EndTxn. A
   transaction the coordinator aborts on its own (a timeout, a fencing InitProducerId)
   is not in that history and is not judged.

Sans I/O: ``snapshot`` is taken when a request arrives, ``check`` when its answer is
ready; a violation is logged at ERROR (one line naming the answer) and kept in
``violations``, which ``Cluster`` raises at exit and the pytest fixtures fail the test
on. Memory is bounded (``MAX_TRACKED``).
"""

from __future__ import annotations

import logging
from typing import Any

from emulator.cluster.state import ClusterState
from emulator.faults.model import topic_name
from emulator.log.cleaner import control_type
from wire.errors import ErrorCode as E
from wire.records import HEADER_SIZE, BatchHeader, InvalidRecordError, read_header

log = logging.getLogger("kafka_emulator")

# The batches and refusals remembered (oldest forgotten first): enough for any test's
# in-flight window, bounded for long runs.
MAX_TRACKED = 200_000
NOT_LEADER = int(E.NOT_LEADER_OR_FOLLOWER)
NOT_ENOUGH = int(E.NOT_ENOUGH_REPLICAS)
END_TXN = 26
ABORT = 0  # the control record type of an ABORT marker (COMMIT is 1)

# (topic, partition) -> (leader, leader epoch) in the controller's state, then (leader,
# leader epoch) in the receiving broker's own metadata view, then the partition epoch
# (it moves with every ISR change), when the request arrived
Snapshot = dict[tuple[str, int], tuple[int, int, int, int, int]]


class Soundness:
    """The invariants above, checked answer by answer for one cluster."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.violations: list[str] = []
        self.checked = 0  # answers checked (a test that the check ran sees it move)
        # (broker, topic, partition) -> the leader epoch it answered NOT_LEADER at
        self._refused: dict[tuple[int, str, int], int] = {}
        # (producer id, epoch, topic, partition, base sequence) -> (offset, leader epoch)
        self._appended: dict[tuple[int, int, str, int, int], tuple[int, int]] = {}
        # (producer id, epoch) -> its transactional batches appended since its last
        # EndTxn: (topic, partition, base offset, base sequence)
        self._open: dict[tuple[int, int], list[tuple[str, int, int, int]]] = {}
        # (topic, partition, base offset) -> (producer id, epoch, base sequence) of a
        # batch whose transaction its producer aborted
        self._aborted: dict[tuple[str, int, int], tuple[int, int, int]] = {}

    # ---- when a request arrives ---------------------------------------------------------
    def snapshot(self, api: int, req: dict, broker: int = -1) -> Snapshot | None:
        """Leader and leader epoch of the partitions a Produce, Fetch or ListOffsets
        names, as the request arrives: in the controller's state and in ``broker``'s
        metadata view (a broker whose view lags refuses from what it knew then, and may
        learn that it leads before its answer leaves: the answer is Kafka's). EndTxn
        needs nothing of the state (an empty snapshot: its answer is checked)."""
        if api == END_TXN:
            return {}
        if api not in (0, 1, 2):
            return None
        snap: Snapshot = {}
        for name, index in _request_partitions(self.state, api, req):
            p = self._partition(name, index)
            if p is not None:
                view = self._view(broker, name, index, p)
                snap[(name, index)] = (
                    p.leader, p.leader_epoch, view[0], view[1], p.partition_epoch
                )
        return snap

    # ---- when its answer is ready -------------------------------------------------------
    def check(
        self, broker: int, api: int, version: int, req: dict, result: Any, snap: Snapshot | None
    ) -> None:
        if not isinstance(result, dict) or snap is None:
            return
        self.checked += 1
        if api == 0:
            self._produce(broker, req, result, snap)
        elif api == 1 and _replica_id(req) < 0:
            self._partitions(
                broker, "Fetch", result.get("responses"), "partitions", "partition_index", snap
            )
            if req.get("isolation_level") == 1:
                self._read_committed(broker, result.get("responses"))
        elif api == 2:
            self._partitions(
                broker, "ListOffsets", result.get("topics"), "partitions", "partition_index", snap
            )
        elif api == END_TXN:
            self._end_txn(req, result)

    def _partitions(
        self, broker: int, api: str, topics: Any, key: str, index_key: str, snap: Snapshot
    ) -> None:
        for t in topics or ():
            name = topic_name(self.state, t)
            if name is None:
                continue
            for p in t.get(key) or ():
                index, err = _index_error(p, index_key)
                if err == NOT_LEADER:
                    self._not_leader(broker, api, name, index, snap)

    def _produce(self, broker: int, req: dict, result: dict, snap: Snapshot) -> None:
        batches = _produce_batches(self.state, req)
        for t in result.get("responses") or ():
            name = topic_name(self.state, t)
            if name is None:
                continue
            for pr in t.get("partition_responses") or ():
                index, err = _index_error(pr, "index")
                if err == NOT_LEADER:
                    self._not_leader(broker, "Produce", name, index, snap)
                    hint = pr.get("current_leader") if isinstance(pr, dict) else None
                    if isinstance(hint, dict) and hint.get("leader_id") == broker:
                        self._violation(
                            f"Produce: broker {broker} answered "
                            f"NOT_LEADER_OR_FOLLOWER for {name}-{index} naming "
                            "itself the current leader"
                        )
                elif err == NOT_ENOUGH:
                    self._not_enough(name, index, req["acks"], snap)
                elif err == 0:
                    # a field a dict leaves out is encoded at its default: 0 is what the
                    # client reads then
                    offset = pr[2] if isinstance(pr, tuple) else pr.get("base_offset", 0)
                    batch = batches.get((name, index))
                    self._appended_ok(broker, name, index, int(offset), snap, batch)
                    self._txn_appended(name, index, int(offset), batch)

    # ---- the invariants -------------------------------------------------------------------
    def _not_leader(self, broker: int, api: str, name: str, index: int, snap: Snapshot) -> None:
        p = self._partition(name, index)
        if p is None:
            return
        arrived = snap.get((name, index))
        view_leader, _ = self._view(broker, name, index, p)
        changed = arrived is None or arrived[:2] != (p.leader, p.leader_epoch)
        if (
            p.leader == broker
            and view_leader == broker
            and not changed
            and arrived is not None
            and arrived[2] == broker
        ):
            self._violation(
                f"{api}: broker {broker} answered NOT_LEADER_OR_FOLLOWER for "
                f"{name}-{index} while it led it at leader epoch "
                f"{p.leader_epoch} in the controller's state and in its own "
                "metadata, the whole time the request was in it"
            )
        if changed or arrived is None:
            return  # refused because leadership changed while it waited: explained
        # the leader epoch the broker refused at, as it knew it when the request arrived
        # (its metadata may lag, and catch up before the answer leaves)
        self._remember(self._refused, (broker, name, index), arrived[3])

    def _not_enough(self, name: str, index: int, acks: int, snap: Snapshot) -> None:
        if acks != -1:  # Partition.appendRecordsToLeader asks the ISR of acks=all alone
            self._violation(
                f"Produce: NOT_ENOUGH_REPLICAS for {name}-{index} answered to acks={acks}"
            )
            return
        t = self.state.topics.get(name)
        p = self._partition(name, index)
        if t is None or p is None:
            return
        arrived = snap.get((name, index))
        if arrived is None or arrived[4] != p.partition_epoch:
            return  # the ISR changed while the request was in: it may have been too small
        min_isr = self.state.effective_min_isr(t, p)
        if len(p.isr) >= min_isr:
            self._violation(
                f"Produce: NOT_ENOUGH_REPLICAS for {name}-{index} with ISR "
                f"{p.isr}, min.insync.replicas {min_isr}"
            )

    def _appended_ok(
        self,
        broker: int,
        name: str,
        index: int,
        offset: int,
        snap: Snapshot,
        batch: BatchHeader | None,
    ) -> None:
        arrived = snap.get((name, index))
        refused_at = self._refused.pop((broker, name, index), None)
        if arrived is None:
            return  # the partition was made after the request came: no epoch to judge by
        epoch = arrived[1]
        if refused_at == epoch:
            self._violation(
                f"Produce: broker {broker} appended to {name}-{index} at "
                f"leader epoch {epoch} after answering NOT_LEADER_OR_FOLLOWER "
                "for it at that same epoch"
            )
        if batch is None or batch.producer_id < 0:
            return  # not idempotent (an idempotent batch has a sequence: LogValidator)
        pid, pepoch, seq = batch.producer_id, batch.producer_epoch, batch.base_sequence
        key = (pid, pepoch, name, index, seq)
        first = self._appended.get(key)
        if first is None or first[0] == offset:
            if first is None:
                self._remember(self._appended, key, (offset, epoch))
            return
        said = (
            f"Produce: producer {pid} epoch {pepoch} sequence {seq} to {name}-{index} "
            f"answered offset {offset}, first appended at {first[0]}"
        )
        if first[1] == epoch:
            self._violation(f"{said} in the same leader epoch {epoch}: a retried batch "
                            "written twice")
        elif self._holds(broker, name, index, first[0], key):
            self._violation(
                f"{said} at leader epoch {first[1]}, which broker {broker}'s log still "
                f"holds at leader epoch {epoch}: a retried batch written twice"
            )
        else:  # truncated away by the leader change: appended anew, the retries' offset
            self._remember(self._appended, key, (offset, epoch))

    # ---- read_committed: no aborted record given as committed ------------------------------
    def _txn_appended(self, name: str, index: int, offset: int, h: BatchHeader | None) -> None:
        """Remember where a transactional batch of an answered Produce went (a client's
        batch is never a control batch: LogValidator refuses it)."""
        if h is None or not h.is_transactional:
            return
        key = (h.producer_id, h.producer_epoch)
        batches = self._open.get(key)
        if batches is None:
            batches = []
            self._remember(self._open, key, batches)
        batches.append((name, index, offset, h.base_sequence))

    def _end_txn(self, req: dict, result: dict) -> None:
        """An EndTxn answered 0 decides every batch its producer id and epoch appended
        since the last one: aborted (remembered) or committed (forgotten)."""
        if int(result.get("error_code") or 0) != 0:
            return
        pid, epoch = req.get("producer_id", -1), req.get("producer_epoch", -1)
        batches = self._open.pop((pid, epoch), None) or ()
        if req.get("committed"):
            return
        for name, index, offset, sequence in batches:
            self._remember(self._aborted, (name, index, offset), (pid, epoch, sequence))

    def _read_committed(self, broker: int, topics: Any) -> None:
        """Replay a read_committed consumer's filter on a Fetch answer (Kafka's
        CompletedFetch: an aborted-transaction entry puts its producer among the aborted
        once the batches reach its first offset, an ABORT marker takes it out, and a
        transactional batch of an aborted producer is skipped); a batch it would give the
        application that its producer aborted is a violation."""
        if not self._aborted:
            return
        for t in topics or ():
            name = topic_name(self.state, t) if isinstance(t, dict) else None
            if name is None:
                continue
            for p in t.get("partitions") or ():
                if not isinstance(p, dict) or int(p.get("error_code") or 0) != 0:
                    continue
                records, index = p.get("records"), p.get("partition_index")
                if (
                    not records
                    or not isinstance(records, bytes | bytearray | memoryview)
                    or not isinstance(index, int)
                ):
                    continue
                for h in _delivered(records, p.get("aborted_transactions")):
                    aborted = self._aborted.get((name, index, h.base_offset))
                    if aborted == (h.producer_id, h.producer_epoch, h.base_sequence):
                        self._violation(
                            f"Fetch: broker {broker} gave a read_committed reader "
                            f"offsets {h.base_offset}-{h.last_offset} of {name}-{index}, "
                            f"records of producer {h.producer_id} epoch "
                            f"{h.producer_epoch} whose transaction it aborted (EndTxn "
                            "committed=false answered 0), with no aborted-transaction "
                            "entry to skip them"
                        )

    # ---- helpers ----------------------------------------------------------------------------
    def _view(self, broker: int, name: str, index: int, p: Any) -> tuple[int, int]:
        """(leader, leader epoch) of the partition in ``broker``'s metadata view (the
        controller's state when the view is current, or names the broker the leader, or
        no broker is named: -1)."""
        hint = self.state.metadata_views.leader_hint(broker, name, index) if broker >= 0 else None
        return hint if hint is not None else (p.leader, p.leader_epoch)

    def _holds(
        self, broker: int, name: str, index: int, offset: int, key: tuple[int, int, str, int, int]
    ) -> bool:
        """Whether ``broker``'s log of the partition holds, at ``offset``, the batch of
        that producer id, epoch and base sequence (a partition or replica gone since, its
        topic deleted or the replica moved away, holds none)."""
        try:
            data = self.state.topics[name].partitions[index].logs[broker].batch_at(offset)
        except (KeyError, IndexError):
            data = None
        if data is None:  # gone, or past the log's end
            return False
        h = read_header(data)
        return (h.base_offset, h.producer_id, h.producer_epoch, h.base_sequence) == (
            offset, key[0], key[1], key[4]
        )

    def _partition(self, name: str, index: int) -> Any:
        t = self.state.topics.get(name)
        if t is None or not 0 <= index < len(t.partitions):
            return None
        return t.partitions[index]

    @staticmethod
    def _remember(table: dict, key: Any, value: Any) -> None:
        table.pop(key, None)
        table[key] = value
        if len(table) > MAX_TRACKED:
            del table[next(iter(table))]

    def _violation(self, text: str) -> None:
        self.violations.append(text)
        log.error("adversary soundness violation (an answer Kafka could not give): %s", text)


def _replica_id(req: dict) -> int:
    """The replica a Fetch comes from (-1: a consumer's), by replica_id up to v14 and
    replica_state from v15, as Kafka's FetchRequest.replicaId reads it. Broker 0 is a
    replica like any other: its fetch is not a client's read."""
    replica = req.get("replica_id")
    if replica is None or replica < 0:
        replica = (req.get("replica_state") or {}).get("replica_id", -1)
    return int(replica)


def _index_error(p: Any, index_key: str) -> tuple[int, int]:
    """(index, error code) of a partition's answer: a ``Row`` (its leading fields) or a
    dict, whose fields left out are encoded at their default, 0 (what the client reads)."""
    if isinstance(p, tuple):
        return int(p[0]), int(p[1])
    return int(p.get(index_key) or 0), int(p.get("error_code") or 0)


def _request_partitions(state: ClusterState, api: int, req: dict) -> list[tuple[str, int]]:
    out: list[tuple[str, object]] = []
    if api == 0:
        for t in req.get("topic_data") or ():
            name = topic_name(state, t)
            if name is not None:
                out.extend((name, p.get("index")) for p in t.get("partition_data") or ())
    else:
        for t in req.get("topics") or ():
            name = topic_name(state, t)
            if name is not None:
                out.extend(
                    (name, p.get("partition", p.get("partition_index")))
                    for p in t.get("partitions") or ()
                )
    return [(n, i) for n, i in out if isinstance(i, int)]


def _headers(records: bytes | bytearray | memoryview) -> list[tuple[int, BatchHeader]]:
    """(position, header) of the whole batches of a records blob (a Fetch answer may end
    in a partial one, which the reader skips too)."""
    out = []
    pos = 0
    while len(records) - pos >= HEADER_SIZE:
        h = read_header(records, pos)  # a whole header: read_header raises only on a short one
        if pos + h.size > len(records):
            break
        out.append((pos, h))
        pos += h.size
    return out


def _delivered(records: bytes | bytearray | memoryview, aborted: Any) -> list[BatchHeader]:
    """The transactional data batches of a read_committed Fetch answer that a consumer
    gives its application, given the answer's aborted transactions (Kafka's
    CompletedFetch.nextFetchedRecord, consumeAbortedTransactionsUpTo, isBatchAborted)."""
    # (the Fetch handler's entries, each with both fields; None when it sent none)
    pending = sorted((int(a["first_offset"]), int(a["producer_id"])) for a in aborted or ())
    next_entry = 0
    aborted_producers: set[int] = set()
    out = []
    for pos, h in _headers(records):
        if h.producer_id < 0:
            continue
        while next_entry < len(pending) and pending[next_entry][0] <= h.last_offset:
            aborted_producers.add(pending[next_entry][1])
            next_entry += 1
        if h.is_control:
            if _is_abort_marker(records[pos : pos + h.size]):
                aborted_producers.discard(h.producer_id)
            continue
        if h.is_transactional and h.producer_id not in aborted_producers:
            out.append(h)
    return out


def _is_abort_marker(batch: bytes | bytearray | memoryview) -> bool:
    """Whether a control batch is an ABORT marker (its record's key is (version, type),
    and type 0 is ABORT); a COMMIT marker takes no producer out of the aborted ones."""
    return control_type(bytes(batch)) == ABORT


def _produce_batches(state: ClusterState, req: dict) -> dict[tuple[str, int], BatchHeader]:
    """(topic, partition) -> the header of the batch its records carry: Produce v3+
    carries one (Kafka's ProduceRequest.validateRecords answers INVALID_RECORD to more,
    and v0-2 are gone since Kafka 4.0)."""
    out = {}
    for t in req.get("topic_data") or ():
        name = topic_name(state, t)
        if name is None:
            continue
        for p in t.get("partition_data") or ():
            records = p.get("records")
            if not records:
                continue
            try:
                h = read_header(records)
            except InvalidRecordError:
                continue
            out[(name, p.get("index"))] = h
    return out
