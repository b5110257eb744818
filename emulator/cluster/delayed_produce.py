"""Kafka's DelayedProduce, sans I/O: what one Produce request's appends wait for.

An acks=all append is answered once the ISR has it (the high watermark passed its last
offset: ``acks_all_done``), or with REQUEST_TIMED_OUT at the request's timeout; a slow
log dir (the storage fault slow_writes) holds any answer until its write is done, as
Kafka's handler thread is busy in the write meanwhile. ``ProduceAcks`` keeps that
state for one request and builds its wait (``wait``); the handler answers each append
as ``final`` says, encoding only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from emulator.cluster.delayed import Delayed
from emulator.cluster.replication import AppendResult
from wire.errors import ErrorCode as E

# (topic, partition, last offset, leader epoch, the topic's id when appended) ->
# (done, error code): acks_all_done
AcksAllDone = Callable[[str, int, int, int, bytes | None], tuple[bool, int]]


class ProduceAcks:
    """The acknowledgements of one Produce request's appends (``appended``: topic,
    partition, the append's result), with ``written_ms`` the end of a slow log dir's
    write (0: none). Its answer is whether the request timed out."""

    __slots__ = ("_acked", "_done", "_ids", "_now", "_pending", "_start", "acks",
                 "written_ms")

    def __init__(
        self,
        acks_all_done: AcksAllDone,
        now: Callable[[], int],
        acks: int,
        appended: list[tuple[str, int, AppendResult]],
        slow_writes: bool,
        topic_ids: Mapping[str, bytes] | None = None,
    ) -> None:
        self._done = acks_all_done
        # The ids of the topics appended to: a topic deleted while the answer waits,
        # even if one of the same name is created meanwhile, answers
        # UNKNOWN_TOPIC_OR_PARTITION (Kafka completes the delayed produce as it stops
        # the deleted partition), never the new topic's high watermark.
        self._ids: Mapping[str, bytes] = topic_ids or {}
        self._now = now
        self.acks = acks
        # A slow log dir (slow_writes: a storage fault is in force): Kafka's handler
        # thread is busy in the write, so no answer leaves before the last write is
        # done; the request timeout counts from there (DelayedProduce starts after the
        # append). The loop goes on meanwhile.
        written = max((r.written_at_ms for _, _, r in appended), default=0) if slow_writes else 0
        self.written_ms = written if written > now() else 0
        # (a partition the append found acknowledged is done already: not pending)
        self._pending = [(n, i, r) for n, i, r in appended if self._waits(r)] if acks == -1 else []
        # Partitions before _pending[_start] were found done: done stays done (the high
        # watermark only grows in a leader epoch; another epoch or a lost leader is
        # done with an error), so each check resumes at the first one not done, and a
        # request on thousands of partitions, woken by each budgeted tick, costs each
        # partition once; ``final`` takes the codes the checks found (``_acked``, by id
        # of the AppendResult) instead of asking again, as a partition of Kafka's
        # DelayedProduce whose acks were satisfied is not looked at again.
        self._start = 0
        self._acked: dict[int, int] = {}

    def _waits(self, r: AppendResult) -> bool:
        return self.acks == -1 and r.error == 0 and r.last_offset >= 0 and not r.acked

    def _check(self) -> bool:
        """Every pending append acknowledged (and the slow write done)?"""
        if self.written_ms and self._now() < self.written_ms:
            return False
        pending, done_all = self._pending, self._done
        while self._start < len(pending):
            n, i, r = pending[self._start]
            done, code = done_all(n, i, r.last_offset, r.leader_epoch, self._ids.get(n))
            if not done:
                return False
            self._acked[id(r)] = code
            self._start += 1
        return True

    def wait(self, timeout_ms: int) -> Delayed[bool] | None:
        """None when the request is answered now; else its wait, answering whether it
        timed out, woken by its pending partitions (``checked``: this looked already)."""
        written, clock = self.written_ms, self._now
        if self.acks == 1 and written:
            return Delayed(
                lambda: False if clock() >= written else None,
                written,
                lambda: False,
                keys=frozenset(),
                checked=True,
                not_before_ms=written,
            )
        if self.acks != -1 or not (self._pending or written):
            return None
        now = clock()
        if self._check():
            return None
        return Delayed(
            lambda: False if self._check() else None,
            max(now, written) + max(0, timeout_ms),
            lambda: True,
            keys=frozenset((n, i) for n, i, _ in self._pending),
            checked=True,
            not_before_ms=written,
        )

    def final(self, name: str, index: int, r: AppendResult, timed_out: bool) -> AppendResult:
        """The result to answer for an append: acks=all's code (REQUEST_TIMED_OUT when
        the wait ran out first, NOT_ENOUGH_REPLICAS_AFTER_APPEND, NOT_LEADER_OR_FOLLOWER)
        on an append that waited, else the append's own."""
        if not self._waits(r):
            return r
        code = self._acked.get(id(r)) if self._acked else None
        if code is None:
            done, code = self._done(name, index, r.last_offset, r.leader_epoch,
                                    self._ids.get(name))
            if not done and timed_out:
                code = E.REQUEST_TIMED_OUT
        if code:
            # Only the error changes: Kafka's DelayedProduce sets the error of the
            # append's PartitionResponse, which keeps its base offset, log append time
            # and log start offset; the leader epoch is kept for ClusterState.deposed_by
            # (a NOT_LEADER_OR_FOLLOWER answer names the leader that took over).
            return replace(r, error=code)
        return r
