"""A workaround a correct librdkafka 2.16 group consumer needs: ``StallWatch``.

A newly assigned partition starts from its committed offset, which librdkafka asks the
group coordinator for (OffsetFetch). When the coordinator has just moved (Kafka's
__consumer_offsets leader moving in a rolling restart or a preferred-leader election;
the adversary's ``coordinator_move_after_answer`` right after a SyncGroup, or
``coordinator_move_before_offset_fetch``), the old coordinator answers NOT_COORDINATOR
for the group with no partitions, as Kafka's does, and librdkafka 2.16 neither retries
nor starts the fetcher: the partition stays assigned and unread for good while the
member heartbeats the new coordinator (confluentinc/librdkafka#5586, open; its fix,
#5589, retries the OffsetFetch). A new assignment of the partition recovers at once.

So the project's librdkafka group programs (the reference programs, the wrong programs
and their corrected twins) watch for it, as a production application on librdkafka 2.16
must: a partition assigned ``STALL_S`` ago that has yielded no record, has no position
(its fetcher never started) and has records after its committed offset is assigned
again. Its note names the hang, so a run's notes say how often it met it
(docs/adversary.md has the account). Without the watch, the CI sample's reference
consumer failed one run with a partition never read (133 of 300 records).

The condition is the hang's signature, not its proof: librdkafka's ``position`` is the
application's (the last record consumed + 1), so a partition whose fetcher a rebalance
paused before anything of it was consumed looks the same (the 2026-12-07 survey's
pipeline seed 86, under debug=cgrp). Assigning such a partition again costs one
OffsetFetch and moves nothing: nothing of it was consumed since its assignment, and the
programs check only between their transactions and commits. The note says both.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from confluent_kafka import Consumer, KafkaException, TopicPartition

STALL_S = 5.0  # an assigned partition unread this long, with records to read: stuck
Listener = Callable[[Consumer, list[TopicPartition]], None]


class StallWatch:
    """The partitions assigned to one subscribed consumer and when each last moved
    (assigned, or a record read from it); ``check`` assigns again the ones librdkafka
    left waiting for an OffsetFetch answer that never comes."""

    def __init__(self, topic: str, *, cooperative: bool, earliest: bool = True,
                 note: Callable[[str], None] | None = None, name: str = "") -> None:
        self.topic = topic
        self.cooperative = cooperative  # the assignment strategy: how to assign again
        self.earliest = earliest  # auto.offset.reset: where a partition never committed starts
        self.note = note
        self.name = name
        self.since: dict[int, float] = {}
        self.checked = 0.0
        self.reassigned = 0

    def subscribe(self, c: Consumer, on_assign: Listener | None = None,
                  on_revoke: Listener | None = None) -> None:
        """``c`` subscribed to the topic, the program's own listeners called first
        (confluent-kafka assigns after on_assign unless the listener did)."""

        def assigned(consumer: Consumer, parts: list[TopicPartition]) -> None:
            if on_assign is not None:
                on_assign(consumer, parts)
            now = time.monotonic()
            for tp in parts:
                self.since[tp.partition] = now

        def revoked(consumer: Consumer, parts: list[TopicPartition]) -> None:
            if on_revoke is not None:
                on_revoke(consumer, parts)
            for tp in parts:
                self.since.pop(tp.partition, None)

        c.subscribe([self.topic], on_assign=assigned, on_revoke=revoked, on_lost=revoked)

    def consumed(self, partition: int) -> None:
        """A record of ``partition`` reached the program."""
        if partition in self.since:
            self.since[partition] = time.monotonic()

    def check(self, c: Consumer) -> None:
        """At most once a second: a partition quiet for STALL_S, with no position and
        records after its committed offset, assigned again."""
        now = time.monotonic()
        if now - self.checked < 1.0:
            return
        self.checked = now
        stuck: list[int] = []
        for partition in [p for p, t in self.since.items() if now - t > STALL_S]:
            tp = TopicPartition(self.topic, partition)
            try:
                if c.position([tp])[0].offset >= 0:  # its fetcher started
                    self.since[partition] = now
                    continue
                committed = c.committed([tp], timeout=2)[0].offset
                low, high = c.get_watermark_offsets(tp, timeout=2, cached=False)
            except KafkaException:  # asked again at the next check
                continue
            start = committed if committed >= 0 else (low if self.earliest else high)
            if high > start:
                stuck.append(partition)
            else:  # nothing to read yet
                self.since[partition] = now
        if not stuck:
            return
        try:
            if self.cooperative:
                tps = [TopicPartition(self.topic, p) for p in stuck]
                c.incremental_unassign(tps)
                c.incremental_assign(tps)
            else:  # eager: the whole assignment again, the others where they are
                again = []
                for tp in c.assignment():
                    if tp.partition not in stuck:
                        tp.offset = c.position([tp])[0].offset
                    again.append(tp)
                c.assign(again)
        except KafkaException as e:  # a rebalance under way: tried again at the next check
            if self.note is not None:
                self.note(f"{self.name}: assigning {stuck} again failed: {e}")
            return
        self.reassigned += 1
        if self.note is not None:
            self.note(f"{self.name}: partitions {stuck} assigned and unread for "
                      f"{STALL_S:g} s with records to read (librdkafka's OffsetFetch "
                      "hang, or fetchers a rebalance paused): assigned again")
        for p in stuck:
            self.since[p] = now
