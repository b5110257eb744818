"""The share coordinator's records in ``__share_group_state`` (KIP-932), Kafka's layouts.

A record's key is a record type (int16) followed by the key message at version 0 (not
flexible); its value is a version (int16) followed by the value message (flexible from
version 0; a tombstone has no value). Kafka's share coordinator writes:

    type 0  ShareSnapshotKey   (GroupId, TopicId, Partition)
            ShareSnapshotValue (SnapshotEpoch, StateEpoch, LeaderEpoch, StartOffset,
                                CreateTimestamp, WriteTimestamp, StateBatches,
                                tagged 0: DeliveryCompleteCount, KIP-1226)
    type 1  ShareUpdateKey     (GroupId, TopicId, Partition)
            ShareUpdateValue   (SnapshotEpoch, LeaderEpoch, StartOffset, StateBatches,
                                tagged 0: DeliveryCompleteCount)

A snapshot is the whole state of one share-partition; an update carries the state
batches that changed since, merged over the snapshot on load.
"""

from __future__ import annotations

import struct
from typing import Any

from wire.codec import CompiledMessage
from wire.schema import INT8, INT16, INT32, INT64, STRING, UUID, Array, Field, message

SNAPSHOT, UPDATE = 0, 1

_KEY_FIELDS = [Field("group_id", STRING), Field("topic_id", UUID), Field("partition", INT32)]
_STATE_BATCHES = Field("state_batches", Array, fields=[
    Field("first_offset", INT64),
    Field("last_offset", INT64),
    Field("delivery_state", INT8),
    Field("delivery_count", INT16),
])
_COMPLETE = Field("delivery_complete_count", INT32, tag=0, default=-1)

SHARE_SNAPSHOT_KEY = message("ShareSnapshotKey", SNAPSHOT, "0", "none", _KEY_FIELDS)
SHARE_UPDATE_KEY = message("ShareUpdateKey", UPDATE, "0", "none", _KEY_FIELDS)
SHARE_SNAPSHOT_VALUE = message("ShareSnapshotValue", SNAPSHOT, "0", "0+", [
    Field("snapshot_epoch", INT32), Field("state_epoch", INT32), Field("leader_epoch", INT32),
    Field("start_offset", INT64), _COMPLETE, Field("create_timestamp", INT64),
    Field("write_timestamp", INT64), _STATE_BATCHES])
SHARE_UPDATE_VALUE = message("ShareUpdateValue", UPDATE, "0", "0+", [
    Field("snapshot_epoch", INT32), Field("leader_epoch", INT32), Field("start_offset", INT64),
    _COMPLETE, _STATE_BATCHES])

_KEYS = {SNAPSHOT: CompiledMessage(SHARE_SNAPSHOT_KEY), UPDATE: CompiledMessage(SHARE_UPDATE_KEY)}
_VALUES = {SNAPSHOT: CompiledMessage(SHARE_SNAPSHOT_VALUE),
           UPDATE: CompiledMessage(SHARE_UPDATE_VALUE)}


def encode_key(record_type: int, group_id: str, topic_id: bytes, partition: int) -> bytes:
    return struct.pack(">h", record_type) + _KEYS[record_type].encode(
        {"group_id": group_id, "topic_id": topic_id, "partition": partition}, 0)


def decode_key(data: bytes) -> tuple[int, dict[str, Any]] | None:
    """(record type, key fields), or None for a record type this module does not know."""
    (record_type,) = struct.unpack_from(">h", data, 0)
    codec = _KEYS.get(record_type)
    if codec is None:
        return None
    return record_type, codec.decode(data, 0, 2)[0]


def encode_value(record_type: int, value: dict[str, Any]) -> bytes:
    return struct.pack(">h", 0) + _VALUES[record_type].encode(value, 0)


def decode_value(record_type: int, data: bytes) -> dict[str, Any]:
    return _VALUES[record_type].decode(data, 0, 2)[0]
