"""Replication, the leader's side: appends to a leader's log (Kafka's appendRecordsToLeader).

Above the cluster's data (``emulator.cluster.metadata``), below the controller.
Produce and transaction markers append here: the checks, the LogValidator, the
storage faults in force, the log; the followers' fetches, the ISR and the high
watermark are ``emulator.cluster.followers``'s (the tick's work). Replication never
writes leadership or replica sets: that is the controller's.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypedDict

from emulator.cluster.effective_configs import ProduceConfigs
from emulator.cluster.events import Appended
from emulator.cluster.followers import Followers, advance_hw
from emulator.cluster.metadata import ClusterMetadata, Topic
from emulator.cluster.partition import Partition
from emulator.cluster.ports import StorageConditions
from emulator.log import Log
from emulator.log.validator import (
    Checked,
    RecordValidationError,
    TopicRules,
    timestamp_window,
    validate_in_window,
)
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import (
    CONTROL_BIT,
    LOG_OVERHEAD,
    InvalidRecordError,
    recompress,
    split_batches,
)

_LENGTH = struct.Struct(">i")  # a batch's length field (after its base offset)


class RecordError(TypedDict):
    """One record a batch was refused for (KIP-467: Produce v8+'s record_errors)."""

    batch_index: int
    batch_index_error_message: str | None


@dataclass(slots=True)
class AppendResult:
    error: int = 0
    base_offset: int = -1
    last_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    message: str | None = None
    record_errors: list[RecordError] = field(default_factory=list)
    leader_epoch: int = -1  # the leader epoch the append was made in (acks=all waits)
    reason: str = ""  # why a batch was refused, for the broker's log (Kafka may send no message)
    # a slow log dir (storage fault slow_writes): the write is done only at this time
    # (ms), and no acknowledgement goes out before it; 0: done at once
    written_at_ms: int = 0
    # acks=all already satisfied when the append returned (the high watermark passed it
    # with enough of the ISR: a lone replica's case): acks_all_done would say (True, 0)
    acked: bool = False



_NO_ERRORS: list[RecordError] = []  # shared by the appended results: never changed


@dataclass(slots=True)
class _Shared:
    """What the partitions of one topic in one Produce request share (append_many)."""

    topic: Topic
    pc: ProduceConfigs
    now: int
    window: tuple[int, int]  # the validator's timestamp bounds at ``now``
    log_append_time: int  # ``now`` for a LogAppendTime topic, else -1
    observed: bool  # does anyone observe Appended?
    # the faults in force when a storage fault is among them, else None (ports)
    storage_faults: StorageConditions | None
    recompress: bool  # the topic names a codec and Kafka's timing rewrites batches


def _recompress(records: bytes, codec: int, checked: Checked | None, max_bytes: int,
                tp: str) -> bytes:
    """The batch in the topic's codec, as Kafka's LogValidator rewrites a batch whose
    codec is not the topic's compression.type (docs/fidelity.md, topic-compression-type):
    consumers then read the topic's codec whatever the producer used. The rewritten
    batch is held to max.message.bytes again (UnifiedLog.append's second check)."""
    body = checked.inflated if checked is not None else None
    out = recompress(records, codec, body)
    if len(out) > max_bytes:
        raise KafkaError(E.MESSAGE_TOO_LARGE, f"Message batch size is {len(out)} bytes in "
                         f"append to partition {tp} which exceeds the maximum "
                         f"configured size of {max_bytes}.")
    return out


def topic_rules(state: ClusterMetadata, t: Topic) -> TopicRules:
    """The topic's configs the produce validator applies (resolved once per change)."""
    return state.produce_configs(t).rules


class Replication:
    """The leader's append path of one cluster: Produce and transaction markers.

    An append touches its partition (``dirty``) and wakes an idle one's followers
    (``Followers.wake``); the followers' fetches, the ISR and the high watermark beyond
    a lone replica's are the tick's work, in ``emulator.cluster.followers``.
    """

    def __init__(self, state: ClusterMetadata, followers: Followers) -> None:
        self.state = state
        self.followers = followers

    # ---- produce --------------------------------------------------------------------
    def append(self, broker_id: int, topic: str, index: int, records: bytes | None,
               acks: int, checked: Checked | None = None) -> AppendResult:
        """Append one partition's records on its leader; Kafka's appendRecordsToLeader.
        ``checked``: what the server already found out about the batch (its records
        inflated, or the validator's outcome computed off the event loop)."""
        return self.append_many(broker_id, topic, ((index, records, checked),), acks)[0]

    def append_many(self, broker_id: int, topic: str,
                    parts: Iterable[tuple[int, bytes | None, Checked | None]],
                    acks: int) -> list[AppendResult]:
        """``append`` for each (index, records, checked) of one topic of a Produce request.

        What the partitions share is looked up once (the topic, its configs, the time,
        the timestamp window, the observers, the faults in force) and the parked
        requests are woken once, after the last append: a request carrying a record for
        each of 100 partitions costs each partition only its own work (docs/scale.md,
        the per-broker client)."""
        st = self.state
        t = st.topics.get(topic)
        out: list[AppendResult] = []
        if t is None:
            for _ in parts:
                out.append(AppendResult(E.UNKNOWN_TOPIC_OR_PARTITION,
                                        message=KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION).message))
            return out
        pc = st.produce_configs(t)
        now = st.now()
        faults = st.faults
        shared = _Shared(
            t, pc, now, timestamp_window(pc.rules, now), now if pc.log_append_time else -1,
            st.observed(Appended),
            faults if faults is not None and faults.storage else None,
            pc.codec >= 0 and st.fidelity.kafka_timing)
        keys: list[tuple[str, int]] = []
        partitions = t.partitions
        n = len(partitions)
        append_leader = self._append_leader
        for index, records, checked in parts:
            try:
                if not 0 <= index < n:
                    raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION)
                p = partitions[index]
                r = append_leader(p, broker_id, records, acks, checked, shared)
                out.append(r)
                if r.error == 0 and r.leader_epoch >= 0:  # appended (not a duplicate)
                    keys.append((topic, index))
            except KafkaError as e:
                out.append(AppendResult(e.code, message=e.message))
        if keys:
            st.changed(partitions_only=True, keys=keys)
        return out

    def _append_leader(self, p: Partition, broker_id: int, records: bytes | None, acks: int,
                       checked: Checked | None, shared: _Shared) -> AppendResult:
        """One partition's append (``append_many``): checks, validation, the log."""
        if p.leader != broker_id or p.offline or broker_id not in p.replicas:
            p.check_leader(broker_id)
        fol = self.followers
        if not records:
            raise KafkaError(E.INVALID_RECORD, "Produce request contains no records")
        size = len(records)
        # One batch whose length field covers the whole blob (the common case, read
        # in place); anything else is split to find out what is wrong with it.
        if size < LOG_OVERHEAD or _LENGTH.unpack_from(records, 8)[0] + LOG_OVERHEAD != size:
            try:
                spans = split_batches(records)
            except InvalidRecordError as e:
                raise KafkaError(E.CORRUPT_MESSAGE, str(e)) from e
            if len(spans) != 1:
                raise KafkaError(E.INVALID_RECORD, "Produce requests with version 3 and above "
                                 "must contain exactly one record batch per partition")
        pc = shared.pc
        max_bytes = pc.max_message_bytes
        if size > max_bytes:
            raise KafkaError(E.MESSAGE_TOO_LARGE, f"The request included a message larger "
                             f"than the max message size the server will accept "
                             f"({size} > {max_bytes})")
        isr = p.isr
        n_isr = len(isr)
        n_replicas = len(p.replicas)
        if acks == -1 and n_isr < n_replicas:  # a full ISR is never too small
            min_isr = min(pc.min_insync_replicas, max(1, n_replicas))
            if n_isr < min_isr:
                raise KafkaError(E.NOT_ENOUGH_REPLICAS, f"The size of the current ISR "
                                 f"{set(isr)} is insufficient to satisfy the min.isr "
                                 f"requirement of {min_isr} for partition {p.topic}-{p.index}")
        now = shared.now
        try:
            low, high = shared.window
            h = validate_in_window(records, pc.rules, low, high, (p.topic, p.index),
                                   checked=checked)
            # The validator checked these very bytes' CRC-32C here, unless the outcome
            # came from the check worker (bytes this process has not read): the log then
            # checks the CRC itself, as it does for every batch it did not see checked.
            crc_checked = checked is None or checked.outcome is None
            if h.attributes & CONTROL_BIT:
                raise KafkaError(E.INVALID_RECORD, "Control records are not allowed to be "
                                 "written by clients")
            if h.producer_id >= 0:
                dup = p.check_sequence(h)
                if dup is not None:
                    return AppendResult(0, dup, dup + h.last_offset_delta, -1,
                                        p.log_start_offset)
            if shared.recompress and pc.codec != h.compression:
                records = _recompress(records, pc.codec, checked, max_bytes,
                                      f"{p.topic}-{p.index}")
                size = len(records)
                crc_checked = False  # new bytes: the log checks their CRC
            lat = shared.log_append_time
            written_at = 0
            faults = shared.storage_faults
            if faults is not None:
                # a storage fault on this log dir (emulator/faults): a failed write
                # takes the directory offline first, as Kafka's appendAsLeader does
                err, written_at = faults.storage_write(p, broker_id, now)
                if err is not None:
                    fol.tell_log_dir_failures(faults)
                    raise KafkaError(E.KAFKA_STORAGE_ERROR, f"Error while appending "
                                     f"records to {p.topic}-{p.index}: {err}")
            logs = p.logs
            n_logs = len(logs)
            if n_logs > 1 and p not in fol.active and p not in self.state.dirty:
                fol.wake(p, now)  # (it looks at the followers' logs: none without them)
            log = logs[p.leader]
            log.maybe_roll(size, pc.segment_bytes, pc.segment_ms, now)
            base, last, _ = log.append_as_leader(records, p.leader_epoch, lat, crc_checked)
        except InvalidRecordError as e:
            code = E.CORRUPT_MESSAGE if e.corrupt else E.INVALID_RECORD
            raise KafkaError(code, str(e)) from e
        except RecordValidationError as e:
            return AppendResult(e.code, message=e.message, reason=str(e), record_errors=[
                {"batch_index": i, "batch_index_error_message": m}
                for i, m in e.record_errors])
        if h.producer_id >= 0:
            p.record_producer(h, base, last)
        st = self.state
        # A lone replica (no follower anywhere, the ISR the leader, nothing pending) has
        # nothing for a tick to replicate: its high watermark moves below and retention is
        # told here, which is all the tick's visit would do (2.4 us a partition, measured).
        lone = n_logs == 1 and n_replicas == 1 and len(isr) == 1 \
            and p not in fol.active and p not in fol.parked_at
        if lone:
            st.retention_marks.add(p)
        else:
            st.dirty.add(p)  # mark_active: the next tick lets the followers fetch
        if shared.observed:
            st.emit(Appended(topic=p.topic, partition=p.index, base=base, last=last))
            channel = st.log_dir_failure_channel
            if channel.pending:
                # The data directory (emulator.storage, an observer) could not write the
                # batch and reported its log dir: told to the controller now that the
                # observers are done (ports.LogDirFailureChannel). The dir is this
                # replica's: the append fails, as on Kafka's IOException.
                fol.tell_log_dir_failures(channel)
                if broker_id in p.offline:
                    raise KafkaError(E.KAFKA_STORAGE_ERROR, f"Error while appending "
                                     f"records to {p.topic}-{p.index}: the log dir failed")
                isr = p.isr  # the controller acted: read what it left
        hw = p.high_watermark
        if len(isr) == 1:
            if len(p.replicas) == 1:
                # maybe_advance_hw's answer for a lone replica (the ISR is the leader,
                # never below min(min.insync.replicas, 1)): the log end
                leo = log.log_end_offset
                if leo > hw:
                    p.high_watermark = hw = leo
            else:
                advance_hw(st, p, now, shared.topic)
                hw = p.high_watermark
        # acks_all_done's (True, 0), found now (done stays done: DelayedProduce)
        acked = hw > last and (
            len(isr) >= len(p.replicas)
            or len(isr) >= min(pc.min_insync_replicas, max(1, len(p.replicas))))
        return AppendResult(0, base, last, lat, log.log_start_offset, None, _NO_ERRORS,
                            p.leader_epoch, "", written_at, acked)

    def append_control(self, p: Partition, data: bytes) -> int:
        """Write a transaction marker on the leader (the coordinator's WriteTxnMarkers)."""
        self.followers.wake(p, self.state.now())
        t = self.state.topics.get(p.topic)
        if t is not None:
            self.roll_if_due(t, p.leader_log, len(data), self.state.now())
        # the marker keeps the timestamp it was built with, the same instant here
        # (Kafka also marks a LOG_APPEND_TIME topic's marker LogAppendTime: the type
        # bit of a control batch, which no client reads)
        base, _, _ = p.leader_log.append_as_leader(data, p.leader_epoch)
        self.followers.mark_active(p)
        if self.state.hooks:
            # news like any append's: with --data-dir the marker is on disk before the
            # EndTxn that wrote it is answered (else a crash right after the answer left
            # a committed transaction open in the log, and recovery aborted it)
            self.state.emit(Appended(topic=p.topic, partition=p.index, base=base,
                                     last=base))
            channel = self.state.log_dir_failure_channel
            if channel.pending:  # the data directory could not write it (as above)
                self.followers.tell_log_dir_failures(channel)
        if len(p.isr) == 1:
            advance_hw(self.state, p)
        self.state.changed(partitions_only=True, keys=(p.key,))
        return base

    def roll_if_due(self, t: Topic, log: Log, size: int, now: int) -> None:
        """Roll the leader's active segment before an append (segment.bytes, segment.ms;
        internal.segment.bytes where set: ClusterMetadata.produce_configs)."""
        pc = self.state.produce_configs(t)
        log.maybe_roll(size, pc.segment_bytes, pc.segment_ms, now)

    def acks_all_done(self, topic: str, index: int, last_offset: int,
                      leader_epoch: int = -1, topic_id: bytes | None = None
                      ) -> tuple[bool, int]:
        """Has the ISR acknowledged up to last_offset? Returns (done, error code).

        Partition.checkEnoughReplicasReachOffset: done once the high watermark
        passes the offset, with NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR is then
        below the effective min.insync.replicas. The broker losing leadership while
        waiting (``Partition.deposed``: even if it leads again by now) answers
        NOT_LEADER_OR_FOLLOWER, as the deposed leader's purgatory does: the append may
        have been truncated away. A new leader epoch with the same leader (a
        reassignment's bump) goes on waiting: Kafka's check asks only whether the
        broker leads.
        """
        t = self.state.topics.get(topic)
        if t is None or index >= len(t.partitions) \
                or (topic_id is not None and t.id != topic_id):
            # deleted while waiting (a topic of the same name since is another one)
            return True, E.UNKNOWN_TOPIC_OR_PARTITION
        p = t.partitions[index]
        if p.leader < 0 or (0 <= leader_epoch != p.leader_epoch
                            and p.deposed(leader_epoch) is not None):
            return True, E.NOT_LEADER_OR_FOLLOWER
        if p.high_watermark > last_offset:
            # a full ISR is never below min(min.insync.replicas, replication factor)
            if len(p.isr) < len(p.replicas) \
                    and len(p.isr) < self.state.effective_min_isr(t, p):
                return True, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND
            return True, 0
        # No check that the append is still in the log: only a leader change truncates
        # a leader's log, and the deposed check above answers every append made before
        # one (a history too short to tell answers deposed too).
        return False, 0
