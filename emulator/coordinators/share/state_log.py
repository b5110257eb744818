"""Share-partition state as records of ``__share_group_state``, and its reload.

Kafka's share coordinator (ShareCoordinatorShard) persists each share-partition of a
share group under the key (group, topic id, partition) in the ``__share_group_state``
partition ``abs(hash("group:topicId:partition")) % num.partitions``:

- InitializeShareGroupState, or a write under a new state epoch, writes a
  ShareSnapshot record (the whole state: SPSO, state epoch, leader epoch, state
  batches, timestamps) with the next snapshot epoch;
- any other write appends a ShareUpdate record holding only the state batches that
  changed, until ``share.coordinator.snapshot.update.records.per.snapshot`` (500)
  updates have been written since the snapshot, when a new ShareSnapshot is written;
- DeleteShareGroupState writes tombstones for both keys.

On load the snapshot is the state and each update is merged over it (its batches
replace those offsets' states; offsets below its start offset are dropped).

Here the SharePartitionManager emits ``share_state_changed`` whenever a share-partition's
persisted form may have changed (an acquisition, an acknowledgement, a release or lock
timeout, an admin change, an initialization, a deletion); ``ShareStateLog`` compares it
with what it last wrote and appends the records above through
``ClusterState.append_control`` plus an ``append`` event, so a data directory writes
them before the request is answered. ``replay`` rebuilds the share-partitions (and
their share groups, empty, as Kafka's group coordinator reloads them) after a restart
with --data-dir. Acquisition locks are not persisted: acquired records come back
available with the delivery count they had.

Differs from Kafka: the delivery count of an acquired record is persisted at once (the
emulator's share-partition leader and share coordinator are one process; Kafka writes it
with the acknowledgement or release, and a leader move in a running emulator undoes the
unwritten count as Kafka's does, SharePartition.on_leader_change); records are
not pruned from the topic (Kafka deletes records older than the oldest needed snapshot).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from emulator.cluster.events import DomainEvent, ShareStateChanged, observes
from emulator.coordinators.runtime.host import ClusterHost
from emulator.coordinators.share.coordinator import SharePartitionManager
from emulator.coordinators.share.groups import ShareGroup
from emulator.coordinators.share.messages import StateBatch
from emulator.coordinators.share.partition import SharePartition
from emulator.coordinators.share.state import SHARE_STATE_TOPIC, kafka_uuid
from wire.records import Record
from wire.share_state_records import (
    SNAPSHOT,
    UPDATE,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)

Key = tuple[str, bytes, int]  # group id, topic id, partition
OffsetStates = dict[int, tuple[int, int]]  # offset -> (delivery state, delivery count)


@dataclass
class Persisted:
    """What the log holds for one share-partition (what the last records said)."""

    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    create_ms: int
    offsets: OffsetStates = field(default_factory=dict)
    updates: int = 0  # ShareUpdate records since the snapshot


def expand(batches: list[StateBatch]) -> OffsetStates:
    out: OffsetStates = {}
    for b in batches:
        for o in range(b["first_offset"], b["last_offset"] + 1):
            out[o] = (b["delivery_state"], b["delivery_count"])
    return out


def compress(offsets: OffsetStates) -> list[StateBatch]:
    """Offset states as state batches: runs of consecutive offsets with equal state."""
    out: list[StateBatch] = []
    for o in sorted(offsets):
        st, dc = offsets[o]
        last = out[-1] if out else None
        if last and last["last_offset"] == o - 1 and last["delivery_state"] == st \
                and last["delivery_count"] == dc:
            last["last_offset"] = o
        else:
            out.append({"first_offset": o, "last_offset": o, "delivery_state": st,
                        "delivery_count": dc})
    return out


class ShareStateLog:
    """Writes share-partition state changes as ShareSnapshot/ShareUpdate records."""

    def __init__(self, state: ClusterHost, share: SharePartitionManager) -> None:
        self.state = state
        self.share = share
        self.persisted: dict[Key, Persisted] = {}
        state.hooks.append(self._on_event)

    def per_snapshot(self) -> int:
        v = self.state.config.get("share.coordinator.snapshot.update.records.per.snapshot")
        return int(v) if v is not None else 500

    @observes(ShareStateChanged)
    def _on_event(self, kind: str, event: DomainEvent) -> None:
        if not isinstance(event, ShareStateChanged):
            return
        key: Key = event.key
        sp = event.sp
        if sp is not None and not isinstance(sp, SharePartition):
            raise TypeError(f"ShareStateChanged carries a {type(sp).__name__}, not a "
                            f"SharePartition")
        if sp is None:
            if self.persisted.pop(key, None) is not None:
                self._append(key, [Record(0, self.state.now(), encode_key(t, *key), None)
                                   for t in (SNAPSHOT, UPDATE)])
            return
        self._write(key, sp)

    def _write(self, key: Key, sp: SharePartition) -> None:
        now = self.state.now()
        offsets = expand(sp.state_batches())
        old = self.persisted.get(key)
        complete = sp.delivery_complete_count()
        if old is None or old.state_epoch != sp.state_epoch or \
                old.updates + 1 >= self.per_snapshot():
            new = Persisted(0 if old is None else old.snapshot_epoch + 1, sp.state_epoch,
                            sp.leader_epoch, sp.start_offset,
                            now if old is None else old.create_ms, offsets)
            value = {"snapshot_epoch": new.snapshot_epoch, "state_epoch": new.state_epoch,
                     "leader_epoch": new.leader_epoch, "start_offset": new.start_offset,
                     "delivery_complete_count": complete, "create_timestamp": new.create_ms,
                     "write_timestamp": now, "state_batches": compress(offsets)}
            self.persisted[key] = new
            self._append(key, [Record(0, now, encode_key(SNAPSHOT, *key),
                                      encode_value(SNAPSHOT, value))])
            return
        changed = {o: s for o, s in offsets.items() if old.offsets.get(o) != s}
        if not changed and sp.start_offset == old.start_offset and \
                sp.leader_epoch == old.leader_epoch:
            return
        old.offsets = offsets
        old.start_offset, old.leader_epoch = sp.start_offset, sp.leader_epoch
        old.updates += 1
        value = {"snapshot_epoch": old.snapshot_epoch, "leader_epoch": sp.leader_epoch,
                 "start_offset": sp.start_offset, "delivery_complete_count": complete,
                 "state_batches": compress(changed)}
        self._append(key, [Record(0, now, encode_key(UPDATE, *key),
                                  encode_value(UPDATE, value))])

    def _append(self, key: Key, records: list[Record]) -> None:
        self.share.topic.append(f"{key[0]}:{kafka_uuid(key[1])}:{key[2]}", records)


# ---- rebuilding ---------------------------------------------------------------------------
def replay(state: ClusterHost, share: SharePartitionManager, log: ShareStateLog) -> tuple[int, int]:
    """Rebuild share-partitions from ``__share_group_state``; returns (loaded, unreadable
    records skipped)."""
    loaded: dict[Key, Persisted] = {}
    skipped = 0
    for r in share.topic.records():
        if r.key is None:
            continue
        try:
            decoded = decode_key(r.key)
            if decoded is None:
                continue
            kind, k = decoded
            key = (k["group_id"], k["topic_id"], k["partition"])
            if r.value is None:
                loaded.pop(key, None)
                continue
            v = decode_value(kind, r.value)
        except (ValueError, IndexError, KeyError, struct.error):
            skipped += 1
            continue
        if kind == SNAPSHOT:
            loaded[key] = Persisted(v["snapshot_epoch"], v["state_epoch"], v["leader_epoch"],
                                    v["start_offset"], v["create_timestamp"],
                                    expand(v["state_batches"]))
            continue
        cur = loaded.get(key)
        if cur is None or v["snapshot_epoch"] != cur.snapshot_epoch:
            continue  # an update of a snapshot that is gone
        cur.updates += 1
        cur.leader_epoch = max(cur.leader_epoch, v["leader_epoch"])
        if v["start_offset"] >= 0:
            cur.start_offset = v["start_offset"]
            cur.offsets = {o: s for o, s in cur.offsets.items() if o >= cur.start_offset}
        cur.offsets.update(expand(v["state_batches"]))
    n = 0
    for key, st in loaded.items():
        if key[1] not in state.topics_by_id:
            continue
        sp = share.share_partition(*key)
        sp.initialize(st.start_offset, st.state_epoch)
        if st.start_offset >= 0:
            sp.write_state(st.start_offset, compress(st.offsets))
        sp.leader_epoch = st.leader_epoch
        log.persisted[key] = st
        if key[0] not in share.groups:  # back as an empty share group, as Kafka reloads it
            share.groups[key[0]] = ShareGroup(key[0])
        n += 1
    return n, skipped


__all__ = ["SHARE_STATE_TOPIC", "ShareStateLog", "compress", "expand", "replay"]
