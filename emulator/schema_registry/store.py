"""The registry's storage: the compacted ``_schemas`` topic of the emulated cluster.

As Confluent's KafkaStore: one partition, ``cleanup.policy=compact``, replicated like
the other internal state (min(3, brokers)); every change is a record appended on the
partition's leader, and the registry's view is rebuilt by reading the topic from its
start (``catch_up``), so a registry on a restored ``--data-dir``, or after the leader
moved, serves the same ids. Records a client produces to the topic itself are read the
same way. Domain code: appends go through ``ClusterState.append_control`` and an
``append`` event (the data directory writes them out), no I/O here.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from emulator.cluster.events import Appended
from emulator.schema_registry.errors import store_error
from emulator.schema_registry.model import Record, Registry
from wire.records import Record as KafkaRecord
from wire.records import build_batch, decode_records, read_header

TOPIC = "_schemas"
MAX_LONG = (1 << 63) - 1
log = logging.getLogger("kafka_emulator.schema_registry")


def _json(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


class SchemaStore:
    """Reads and appends the records of ``_schemas`` for one ``Registry``."""

    def __init__(self, state: Any, registry: Registry | None = None, topic: str = TOPIC) -> None:
        self.state = state
        self.topic = topic
        self.registry = registry or Registry()
        self.registry.write = self.write
        self.position = 0  # next offset of the topic to apply
        self.last_write: tuple[int, int] | None = None  # (last offset, leader epoch)
        self.skipped = 0  # records that are not the registry's JSON

    def ensure_topic(self) -> None:
        """Create ``_schemas`` if this cluster has none (a restored one is kept)."""
        if self.topic in self.state.topics:
            return
        rf = min(3, len(self.state.brokers))
        self.state.create_topic(self.topic, 1, rf, configs={"cleanup.policy": "compact"})
        self.state.changed()

    def _partition(self) -> Any:
        t = self.state.topics.get(self.topic)
        if t is None:
            raise store_error(f"Error in the backend data store: topic {self.topic} is gone")
        p = t.partitions[0]
        if p.leader < 0:
            raise store_error(f"Error in the backend data store: {self.topic} has no leader")
        return p

    def catch_up(self) -> int:
        """Apply the records appended since the last call; returns how many."""
        try:
            p = self._partition()
        except Exception:  # noqa: BLE001 - no leader now: the view stays as it is
            return 0
        log_ = p.leader_log
        if log_.log_end_offset < self.position:
            # The leader's log is shorter than what was read (a new, truncated leader):
            # rebuild the view from the start.
            self.registry.__init__(self.write)  # type: ignore[misc]
            self.position = 0
        n = 0
        hw = p.high_watermark  # as Confluent's reader: committed records only
        for data, *_ in log_.batches_from(self.position, MAX_LONG):
            header = read_header(data)
            if header.base_offset >= hw:
                break
            if header.is_control:
                self.position = header.last_offset + 1
                continue
            for r in decode_records(data):
                if r.offset < self.position:
                    continue
                if r.offset >= hw:
                    return n
                self._apply(r.key, r.value)
                self.position = r.offset + 1
                n += 1
            self.position = header.last_offset + 1
        return n

    def pending(self) -> tuple[bool, bool]:
        """Whether the last write is committed yet: (done, lost). Done when the high
        watermark passed it (the ISR has it, as acks=all); lost when the leader changed
        or the log was truncated under it."""
        if self.last_write is None:
            return True, False
        last, epoch = self.last_write
        done, error = self.state.acks_all_done(self.topic, 0, last, epoch)
        if done:
            self.last_write = None
        return done, bool(error)

    def caught_up(self) -> bool:
        """Has the view every record the leader holds (start: the replay is whole)?"""
        try:
            p = self._partition()
        except Exception:  # noqa: BLE001 - no leader yet
            return False
        self.catch_up()
        return self.position >= p.log_end_offset

    def _apply(self, key: bytes | None, value: bytes | None) -> None:
        try:
            k = json.loads(key) if key is not None else None
            v = json.loads(value) if value is not None else None
        except (ValueError, UnicodeDecodeError):
            self.skipped += 1
            return
        if not isinstance(k, dict) or not (v is None or isinstance(v, dict)):
            self.skipped += 1
            return
        try:
            self.registry.apply(k, v)
        except (KeyError, TypeError, ValueError):
            self.skipped += 1

    def write(self, records: list[Record]) -> None:
        """Append ``records`` (one batch) on the leader. They join the view once
        committed (``pending``, then ``catch_up``), as Confluent's registry answers a
        write only after its reader has read it back."""
        p = self._partition()
        now = self.state.now()
        batch = build_batch([KafkaRecord(i, now, _json(k), None if v is None else _json(v))
                             for i, (k, v) in enumerate(records)], timestamp=now)
        base = self.state.append_control(p, batch)
        self.last_write = (base + len(records) - 1, p.leader_epoch)
        self.state.emit(Appended(topic=self.topic, partition=0, base=-1, last=-1))
        self.catch_up()
