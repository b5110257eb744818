"""What the wrong-client programs must achieve, checked from outside them.

Each checker reads what the program left behind over the wire, with a plain,
well-behaved client (it must not fall for the faults the program falls for), and returns
the broken promises as sentences: an empty list is a pass. They name values, not
counts, so a failing test says which record went missing or came twice.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Iterable

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    KafkaError,
    KafkaException,
    TopicPartition,
)

from client_tests.reading import end_offsets


def lost(expected: Iterable[bytes], seen: Iterable[bytes]) -> list[str]:
    """Every expected value must be among those seen."""
    missing = sorted(set(expected) - set(seen))
    if not missing:
        return []
    return [f"{len(missing)} record(s) lost, e.g. {_some(missing)}"]


def duplicated(seen: Iterable[bytes], what: str = "written") -> list[str]:
    """No value may be seen twice."""
    twice = sorted(v for v, n in Counter(seen).items() if n > 1)
    if not twice:
        return []
    return [f"{len(twice)} record(s) {what} more than once, e.g. {_some(twice)}"]


def exactly_once(expected: Iterable[bytes], seen: list[bytes], what: str = "written") -> list[str]:
    return lost(expected, seen) + duplicated(seen, what)


def _some(values: list[bytes]) -> str:
    return ", ".join(v.decode(errors="replace") for v in values[:3])


# How long the high watermarks must stay still before a checker takes them as the end:
# longer than the adversary's longest follower lag (FOLLOWER_LAG_MS), during which an
# acknowledged acks=1 record sits above the high watermark, unreadable but not lost.
SETTLE_S = 1.8


def settled_ends(bootstrap: str, topic: str, partitions: int,
                 timeout: float = 30.0) -> dict[int, int]:
    """The high watermarks once they stopped moving for ``SETTLE_S``: the followers
    have fetched what the leaders hold (a record still above a high watermark then is
    one the followers never got, as a leader move would show)."""
    deadline = time.monotonic() + timeout
    ends = end_offsets(bootstrap, topic, partitions, timeout)
    while True:
        time.sleep(SETTLE_S)
        again = end_offsets(bootstrap, topic, partitions, timeout)
        if again == ends or time.monotonic() > deadline:
            return again
        ends = again


def stable_ends(bootstrap: str, topic: str, partitions: int,
                timeout: float = 30.0) -> dict[int, int]:
    """The end offsets once no transaction is open on ``topic`` (the last stable offset
    has reached the high watermark: every transaction's marker is written), so that a
    read_committed reader sees every committed record. Transactions the program left
    open count as a failure of the program, after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        high = settled_ends(bootstrap, topic, partitions, timeout)
        stable = end_offsets(bootstrap, topic, partitions, timeout, read_committed=True)
        if stable == high:
            return high
        if time.monotonic() > deadline:
            raise AssertionError(f"{topic}: transactions still open after {timeout} s "
                                 f"(last stable offsets {stable}, high watermarks {high})")
        time.sleep(0.1)


def read_topic(bootstrap: str, topic: str, partitions: int,
               read_committed: bool = False, timeout: float = 30.0) -> list[bytes]:
    """Every value in ``topic`` (all ``partitions``, from the beginning to the end offset
    each had when reading started), duplicates included. With ``read_committed`` only
    committed transactions' records, once no transaction is open (stable_ends)."""
    return [v for v, _p, _o in read_records(bootstrap, topic, partitions, read_committed,
                                             timeout)]


def read_records(bootstrap: str, topic: str, partitions: int,
                 read_committed: bool = False, timeout: float = 30.0
                 ) -> list[tuple[bytes, int, int]]:
    """read_topic's records with where each sits: (value, partition, offset)."""
    ends = (stable_ends(bootstrap, topic, partitions, timeout) if read_committed
            else settled_ends(bootstrap, topic, partitions, timeout))
    c = Consumer({
        "bootstrap.servers": bootstrap, "group.id": f"checker-{uuid.uuid4()}",
        "enable.auto.commit": False,
        "isolation.level": "read_committed" if read_committed else "read_uncommitted",
        "enable.partition.eof": True,
    })
    records: list[tuple[bytes, int, int]] = []
    try:
        c.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(partitions)])
        todo = {p for p, end in ends.items() if end > 0}
        deadline = time.monotonic() + timeout
        while todo:
            if time.monotonic() > deadline:
                raise AssertionError(f"checker: could not read {topic} to its end "
                                     f"(partitions {sorted(todo)} unfinished)")
            m = c.poll(0.2)
            if m is None:
                continue
            if m.error():
                # The end of a partition: with read_committed the last records may be
                # markers (or aborted), so no record reaches the end offset itself.
                if m.error().code() == KafkaError._PARTITION_EOF \
                        and m.offset() >= ends.get(m.partition(), 0):
                    todo.discard(m.partition())
                continue
            if m.offset() < ends[m.partition()]:
                records.append((m.value(), m.partition(), m.offset()))
            if m.offset() + 1 >= ends[m.partition()]:
                todo.discard(m.partition())
        return records
    finally:
        c.close()


def committed_behind(bootstrap: str, group: str, topic: str, partitions: int,
                     settle_s: float = 10.0) -> dict[int, int]:
    """Per partition, how many records the group's committed offset is behind the end:
    what a restart of the group's application would read again. Asked until they meet
    or ``settle_s`` passes (offsets committed in a transaction become visible once its
    markers are written)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": group,
                  "client.id": "checker", "enable.auto.commit": False})
    try:
        deadline = time.monotonic() + settle_s
        while True:
            ends = end_offsets(bootstrap, topic, partitions)
            behind: dict[int, int] = {}
            try:
                got = c.committed([TopicPartition(topic, p) for p in range(partitions)],
                                  timeout=5)
            except KafkaException:
                got = None
            if got is not None:
                for tp in got:
                    at = tp.offset if tp.error is None and tp.offset >= 0 else 0
                    if ends[tp.partition] > at:
                        behind[tp.partition] = ends[tp.partition] - at
                if not behind:
                    return {}
            if time.monotonic() > deadline:
                return behind if got is not None else {p: -1 for p in range(partitions)}
            time.sleep(0.2)
    finally:
        c.close()
