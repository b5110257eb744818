"""One share-partition (KIP-932): the records of one topic partition as one share group
sees them, pure state on a manual clock.

Modelled on Kafka's ``SharePartition``. The share-partition start offset (SPSO) is the
first offset not yet finished with; every offset from it up to the share-partition end
offset (SPEO, ``next_offset - 1`` here) is *in flight* and has a state:

    AVAILABLE --acquire--> ACQUIRED --ACCEPT--------------> ACKNOWLEDGED
        ^                     |  |----REJECT / GAP--------> ARCHIVED
        |                     |  |----RENEW (lock renewed)-> ACQUIRED
        +---RELEASE / lock timeout / member gone---+
                 (ARCHIVED instead once the delivery count reached
                  group.share.delivery.count.limit)

The table ``TRANSITIONS`` below holds these rules; anything else raises
``IllegalRecordTransition``, which the coordinator turns into INVALID_RECORD_STATE.
An acquisition takes a lock for ``record_lock_duration_ms`` (the group's
share.record.lock.duration.ms, else group.share.record.lock.duration.ms) and bumps the
record's delivery count; when the lock runs out (``expire_locks``) the record becomes
available again, so a crashed consumer's records are redelivered. Offsets at the head
that are ACKNOWLEDGED or ARCHIVED move the SPSO forward and leave the in-flight map.
New records are acquired in whole log batches (Kafka's batch-optimized acquire mode),
so MaxRecords may be exceeded to keep batch boundaries; no more than
group.share.partition.max.record.locks offsets are in flight at once.

The state of a share-partition is what Kafka's share coordinator persists
(``__share_group_state``): the SPSO, the state epoch and state batches (offset ranges
with a delivery state and count). ``state_batches`` and ``write_state`` give and take it
in that form; acquisitions are not persisted, so after a leader move the acquired
records are available again (``on_leader_change``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import IntEnum

from emulator.coordinators.share.messages import StateBatch
from wire.errors import ErrorCode as E
from wire.errors import KafkaError


class RecordState(IntEnum):
    """Kafka's RecordState ids (also the DeliveryState of persisted state batches)."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AcknowledgeType(IntEnum):
    """The AcknowledgeTypes of ShareFetch/ShareAcknowledge requests."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


S = RecordState
ACQUIRE, LOCK_TIMEOUT, MEMBER_GONE, LEADER_MOVED = "acquire", "lock_timeout", "member_gone", \
    "leader_moved"
RELEASED = "released"  # AVAILABLE, or ARCHIVED once the delivery count reached the limit

# (state, event) -> next state. Events are AcknowledgeType members or the names above.
TRANSITIONS: dict[tuple[RecordState, object], object] = {
    (S.AVAILABLE, ACQUIRE): S.ACQUIRED,
    (S.ACQUIRED, AcknowledgeType.ACCEPT): S.ACKNOWLEDGED,
    (S.ACQUIRED, AcknowledgeType.REJECT): S.ARCHIVED,
    (S.ACQUIRED, AcknowledgeType.GAP): S.ARCHIVED,
    (S.ACQUIRED, AcknowledgeType.RENEW): S.ACQUIRED,
    (S.ACQUIRED, AcknowledgeType.RELEASE): RELEASED,
    (S.ACQUIRED, LOCK_TIMEOUT): RELEASED,
    (S.ACQUIRED, MEMBER_GONE): RELEASED,
    (S.ACQUIRED, LEADER_MOVED): RELEASED,
}
FINISHED = (S.ACKNOWLEDGED, S.ARCHIVED)
MAX_STATE_SPAN = 1 << 20  # offsets held one by one: bound what a request can make us hold
GAP_LIMIT = 100_000  # compaction gaps wider than this are skipped once nothing precedes them


class IllegalRecordTransition(KafkaError):
    """An acknowledgement the record's state does not allow (INVALID_RECORD_STATE)."""

    def __init__(self, offset: int, state: RecordState, event: object) -> None:
        name = event.name if isinstance(event, AcknowledgeType) else event
        super().__init__(E.INVALID_RECORD_STATE,
                         f"The record state is invalid. Offset {offset} is {state.name}, "
                         f"{name} is not allowed.")


@dataclass(slots=True)
class InFlightRecord:
    state: RecordState = S.AVAILABLE
    delivery_count: int = 0
    member_id: str | None = None  # the acquiring member while ACQUIRED
    lock_deadline: int = 0


@dataclass
class Acquired:
    """What one acquisition hands to a consumer: offsets (first, last, delivery count)."""

    ranges: list[tuple[int, int, int]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(last - first + 1 for first, last, _ in self.ranges)

    def add(self, offset: int, delivery_count: int) -> None:
        if self.ranges and self.ranges[-1][1] == offset - 1 and \
                self.ranges[-1][2] == delivery_count:
            first, _, dc = self.ranges[-1]
            self.ranges[-1] = (first, offset, dc)
        else:
            self.ranges.append((offset, offset, delivery_count))


@dataclass
class SharePartition:
    """One (group, topic partition): SPSO, in-flight records, persisted epochs."""

    group_id: str
    topic_id: bytes
    partition: int
    start_offset: int = -1  # -1: not initialized yet (share.auto.offset.reset decides)
    next_offset: int = -1  # SPEO + 1: the next offset never acquired
    state_epoch: int = 0
    leader_epoch: int = -1  # the partition leader epoch this state was loaded under
    records: dict[int, InFlightRecord] = field(default_factory=dict)
    # The start offset Kafka's share coordinator would hold, where it differs: Kafka's
    # share-partition leader writes an acknowledgement or release with the start offset
    # from before it, and moves the start offset past newly finished records afterwards,
    # unwritten until its next write. What DescribeShareGroupOffsets and
    # ReadShareGroupStateSummary report (``reported_start``); None: ``start_offset``.
    written_start: int | None = None

    # ---- initialization -----------------------------------------------------------
    @property
    def initialized(self) -> bool:
        return self.start_offset >= 0

    @property
    def reported_start(self) -> int:
        if self.written_start is None or not self.initialized:
            return self.start_offset
        return min(self.written_start, self.start_offset)

    def reported_complete_count(self) -> int:
        """DeliveryCompleteCount from ``reported_start``: every offset below the start
        offset is finished too."""
        return self.start_offset - self.reported_start + self.delivery_complete_count()

    def initialize(self, start_offset: int, state_epoch: int | None = None) -> None:
        """Start over at ``start_offset`` with nothing in flight."""
        self.start_offset = self.next_offset = start_offset
        self.written_start = None
        self.records.clear()
        if state_epoch is not None:
            self.state_epoch = state_epoch

    def maybe_move_to_log_start(self, log_start_offset: int) -> None:
        """Records below the log start (retention, DeleteRecords) are gone: skip them."""
        if self.initialized and self.start_offset < log_start_offset:
            for o in [o for o in self.records if o < log_start_offset]:
                del self.records[o]
            self.start_offset = log_start_offset
            self.next_offset = max(self.next_offset, log_start_offset)
            self._advance_start()

    # ---- transitions ----------------------------------------------------------------
    def _apply(self, offset: int, rec: InFlightRecord, event: object, delivery_limit: int
               ) -> None:
        target = TRANSITIONS.get((rec.state, event))
        if target is None:
            raise IllegalRecordTransition(offset, rec.state, event)
        if target is RELEASED:
            target = S.ARCHIVED if rec.delivery_count >= delivery_limit else S.AVAILABLE
        rec.state = target  # type: ignore[assignment]
        if target != S.ACQUIRED:
            rec.member_id = None
            rec.lock_deadline = 0

    def _advance_start(self) -> None:
        o = self.start_offset
        while o < self.next_offset:
            rec = self.records.get(o)
            if rec is None or rec.state not in FINISHED:
                break
            del self.records[o]
            o += 1
        self.start_offset = o

    def in_flight(self) -> int:
        return max(0, self.next_offset - self.start_offset)

    # ---- acquisition -----------------------------------------------------------------
    def acquire(self, member_id: str, batches: Iterable[tuple[int, int, bool]], *,
                max_records: int, now: int, lock_ms: int, max_locks: int,
                record_limit: bool = False) -> Acquired:
        """Acquire available records for ``member_id``.

        ``batches`` are the log's batches from ``next_offset`` up to the high watermark as
        (base offset, last offset, is control batch). Released records are redelivered
        first (lowest offsets first), then new batches are taken whole (batch-optimized
        mode), or cut at ``max_records`` with ``record_limit`` (KIP-1206's record-limit
        mode). Control batches (transaction markers) are archived at once: a consumer
        never sees them.
        """
        out = Acquired()
        for offset in sorted(o for o, r in self.records.items() if r.state == S.AVAILABLE):
            if out.count >= max_records:
                return out
            self._take(offset, self.records[offset], member_id, now, lock_ms, out)
        for base, last, control in batches:
            if out.count >= max_records or self.in_flight() >= max_locks:
                break
            if last < self.next_offset:
                continue
            if base > self.next_offset:  # offsets the log no longer has (compaction)
                if self.start_offset == self.next_offset:
                    self.start_offset = base
                elif base - self.next_offset > GAP_LIMIT:
                    break  # skipped once the records before the gap are finished
                else:
                    for offset in range(self.next_offset, base):
                        self.records[offset] = InFlightRecord(S.ARCHIVED)
                self.next_offset = base
            first = max(base, self.next_offset)
            upto = last
            if record_limit and not control:
                upto = min(last, first + max_records - out.count - 1)
            for offset in range(first, upto + 1):
                rec = self.records[offset] = InFlightRecord()
                if control:
                    rec.state = S.ARCHIVED
                else:
                    self._take(offset, rec, member_id, now, lock_ms, out)
            self.next_offset = upto + 1
        self._advance_start()
        return out

    def _take(self, offset: int, rec: InFlightRecord, member_id: str, now: int, lock_ms: int,
              out: Acquired) -> None:
        self._apply(offset, rec, ACQUIRE, 1 << 30)
        rec.delivery_count += 1
        rec.member_id = member_id
        rec.lock_deadline = now + lock_ms
        out.add(offset, rec.delivery_count)

    # ---- acknowledgement ---------------------------------------------------------------
    def acknowledge(self, member_id: str, batches: list[tuple[int, int, list[int]]], *,
                    now: int, lock_ms: int, delivery_limit: int, renew_allowed: bool,
                    renew_enabled: bool = True) -> None:
        """Apply (first offset, last offset, acknowledge types) batches, all or nothing.

        Raises INVALID_REQUEST for a malformed batch (RENEW in a request without
        IsRenewAck included) or an offset past the acquired records, and
        INVALID_RECORD_STATE for an offset that is not acquired or acquired by another
        member or when nothing is in flight, or for RENEW while the group's share.renew.acknowledge.enable is false
        (KAFKA-20161). Offsets below the start offset are done and skipped, as Kafka 4.4
        does (acknowledging them again answers NONE).
        """
        plan: list[tuple[int, InFlightRecord, AcknowledgeType]] = []
        for first, last, types in batches:
            if first > last or first < 0:
                raise KafkaError(E.INVALID_REQUEST,
                                 f"Invalid acknowledgement batch {first}-{last}")
            if len(types) not in (1, last - first + 1):
                raise KafkaError(E.INVALID_REQUEST, "The number of acknowledge types must be 1 "
                                 "or the number of offsets in the batch")
            for t in types:
                if t not in AcknowledgeType._value2member_map_:
                    raise KafkaError(E.INVALID_REQUEST, f"Invalid acknowledge type {t}")
                if t == AcknowledgeType.RENEW and not renew_allowed:
                    raise KafkaError(E.INVALID_REQUEST, "Renew acknowledgements need "
                                     "IsRenewAck in the request")
                if t == AcknowledgeType.RENEW and not renew_enabled:
                    raise KafkaError(E.INVALID_RECORD_STATE, "Renew acknowledgements are not "
                                     "enabled for this share group")
            for offset in range(first, last + 1):
                if offset < self.start_offset:
                    continue  # already done (below the SPSO): Kafka 4.4 ignores it
                if not self.records:  # nothing in flight: Kafka's cache is empty
                    raise KafkaError(E.INVALID_RECORD_STATE, "Batch record not found. The "
                                     "request batch offsets are not found in the cache.")
                if offset >= self.next_offset:
                    raise KafkaError(E.INVALID_REQUEST, "Batch record not found. The first "
                                     "offset in request is past acquired records."
                                     if offset == max(first, self.start_offset) else
                                     "Batch record not found. The last offset in request "
                                     "is past acquired records.")
                rec = self.records.get(offset)
                if rec is None:
                    raise KafkaError(E.INVALID_RECORD_STATE,
                                     f"Offset {offset} is not in flight (share-partition "
                                     f"start {self.start_offset}, end {self.next_offset - 1})")
                if rec.state != S.ACQUIRED:
                    raise IllegalRecordTransition(offset, rec.state,
                                                  AcknowledgeType(types[0]))
                if rec.member_id != member_id:
                    raise KafkaError(E.INVALID_RECORD_STATE, "Member is not the owner of offset")
                t = types[0] if len(types) == 1 else types[offset - first]
                plan.append((offset, rec, AcknowledgeType(t)))
        before = self.start_offset
        for offset, rec, ack in plan:
            self._apply(offset, rec, ack, delivery_limit)
            if ack == AcknowledgeType.RENEW:
                rec.lock_deadline = now + lock_ms
        self._advance_start()
        if plan:
            self.written_start = before

    # ---- releases ----------------------------------------------------------------------
    def _release_where(self, event: str, delivery_limit: int,
                       pred: Callable[[InFlightRecord], bool]) -> int:
        before = self.start_offset
        n = 0
        for offset, rec in self.records.items():
            if rec.state == S.ACQUIRED and pred(rec):
                self._apply(offset, rec, event, delivery_limit)
                n += 1
        if n:
            self._advance_start()
            self.written_start = before
        return n

    def expire_locks(self, now: int, delivery_limit: int) -> int:
        """Acquisition locks that ran out: those records are released."""
        return self._release_where(LOCK_TIMEOUT, delivery_limit,
                                   lambda r: r.lock_deadline <= now)

    def release_member(self, member_id: str, delivery_limit: int) -> int:
        """A member left the group or closed its share session: release its records."""
        return self._release_where(MEMBER_GONE, delivery_limit,
                                   lambda r: r.member_id == member_id)

    def on_leader_change(self, leader_epoch: int, delivery_limit: int) -> None:
        """Reload under a new leader: acquisitions were not persisted, so they are gone,
        and so is the delivery they counted - Kafka 4.4's leader writes a record's delivery
        count with its acknowledgement or release, not when it is acquired, so the new
        leader delivers it with the count the crashed acquisition had (measured: records
        acquired once and lost with their leader came back with delivery count 1)."""
        for rec in self.records.values():
            if rec.state == S.ACQUIRED:
                rec.delivery_count = max(0, rec.delivery_count - 1)
        self._release_where(LEADER_MOVED, delivery_limit, lambda r: True)
        self.leader_epoch = leader_epoch

    def next_lock_deadline(self) -> int | None:
        deadlines = [r.lock_deadline for r in self.records.values() if r.state == S.ACQUIRED]
        return min(deadlines) if deadlines else None

    # ---- persisted form (share coordinator) ---------------------------------------------
    def state_batches(self) -> list[StateBatch]:
        """The in-flight records as Kafka persists them: ranges of equal state and count.

        Acquired records are written as AVAILABLE (acquisitions are not persisted).
        """
        out: list[StateBatch] = []
        for offset in sorted(self.records):
            rec = self.records[offset]
            st = S.AVAILABLE if rec.state == S.ACQUIRED else rec.state
            if st == S.AVAILABLE and rec.delivery_count == 0:
                continue
            last = out[-1] if out else None
            if last and last["last_offset"] == offset - 1 and last["delivery_state"] == st \
                    and last["delivery_count"] == rec.delivery_count:
                last["last_offset"] = offset
            else:
                out.append({"first_offset": offset, "last_offset": offset,
                            "delivery_state": int(st), "delivery_count": rec.delivery_count})
        return out

    def delivery_complete_count(self) -> int:
        """Finished records at or after the SPSO (KIP-1226's DeliveryCompleteCount)."""
        return sum(1 for r in self.records.values() if r.state in FINISHED)

    def write_state(self, start_offset: int, batches: list[StateBatch], advance: bool = True
                    ) -> None:
        """WriteShareGroupState: merge persisted state batches over what is held.

        Records are kept one per offset here, so a write whose in-flight span would pass
        ``MAX_STATE_SPAN`` offsets is refused with INVALID_REQUEST (Kafka keeps ranges).
        """
        base = start_offset if start_offset >= 0 else self.start_offset
        for b in batches:
            if b["first_offset"] > b["last_offset"] or b["first_offset"] < 0:
                raise KafkaError(E.INVALID_REQUEST, f"Invalid state batch "
                                 f"{b['first_offset']}-{b['last_offset']}")
            if b["last_offset"] - max(base, 0) >= MAX_STATE_SPAN:
                raise KafkaError(E.INVALID_REQUEST, f"State batches may span at most "
                                 f"{MAX_STATE_SPAN} offsets beyond the start offset here")
        if start_offset >= 0:
            if not self.initialized:
                self.initialize(start_offset)
            for o in [o for o in self.records if o < start_offset]:
                del self.records[o]
            self.start_offset = start_offset
            self.next_offset = max(self.next_offset, start_offset)
        for b in batches:
            st = RecordState(b["delivery_state"]) if b["delivery_state"] in \
                RecordState._value2member_map_ else S.AVAILABLE
            if st == S.ACQUIRED:
                st = S.AVAILABLE
            for offset in range(max(b["first_offset"], self.start_offset), b["last_offset"] + 1):
                self.records[offset] = InFlightRecord(st, b["delivery_count"])
            self.next_offset = max(self.next_offset, b["last_offset"] + 1)
        for offset in range(self.start_offset, self.next_offset):  # unlisted: never delivered
            self.records.setdefault(offset, InFlightRecord())
        if advance:  # the share coordinator's WriteShareGroupState keeps the written start
            self._advance_start()
        self.written_start = None
