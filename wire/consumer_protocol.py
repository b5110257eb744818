"""The consumer protocol embedded in classic group requests (ConsumerProtocolSubscription
and ConsumerProtocolAssignment, versions 0-3).

The broker only looks inside these bytes to move a group between the classic and the
KIP-848 protocol (online migration): a classic member's JoinGroup metadata tells the
coordinator its topics and owned partitions, and the coordinator writes the member's
assignment for SyncGroup. Neither message is flexible (no tagged fields).

    Subscription: version int16, topics [string], user_data nullable bytes,
                  v1+ owned_partitions [topic string, partitions [int32]],
                  v2+ generation_id int32, v3+ rack_id nullable string
    Assignment:   version int16, assigned_partitions [topic string, partitions [int32]],
                  user_data nullable bytes

A version newer than 3 is read as 3 (Kafka reads the fields it knows).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

TopicPartitions = list[tuple[str, list[int]]]


class ConsumerProtocolError(ValueError):
    """The bytes are not a consumer protocol message (Kafka's SchemaException)."""


@dataclass
class Subscription:
    version: int
    topics: list[str]
    user_data: bytes | None = None
    owned_partitions: TopicPartitions = field(default_factory=list)
    generation_id: int = -1
    rack_id: str | None = None


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = bytes(data)
        self.pos = 0

    def take(self, fmt: str) -> Any:
        try:
            (v,) = struct.unpack_from(fmt, self.data, self.pos)
        except struct.error as e:
            raise ConsumerProtocolError(f"truncated consumer protocol message: {e}") from e
        self.pos += struct.calcsize(fmt)
        return v

    def string(self, nullable: bool = False) -> str | None:
        n = self.take(">h")
        if n < 0:
            if nullable:
                return None
            raise ConsumerProtocolError("null string in a non-nullable field")
        raw = self.data[self.pos:self.pos + n]
        if len(raw) != n:
            raise ConsumerProtocolError("truncated string")
        self.pos += n
        try:
            return raw.decode()
        except UnicodeDecodeError as e:
            raise ConsumerProtocolError("string is not UTF-8") from e

    def bytes_(self) -> bytes | None:
        n = self.take(">i")
        if n < 0:
            return None
        raw = self.data[self.pos:self.pos + n]
        if len(raw) != n:
            raise ConsumerProtocolError("truncated bytes")
        self.pos += n
        return raw

    def count(self) -> int:
        n: int = self.take(">i")
        if n > len(self.data):
            raise ConsumerProtocolError(f"array of {n} elements in {len(self.data)} bytes")
        return max(n, 0)

    def topic_partitions(self) -> TopicPartitions:
        out = []
        for _ in range(self.count()):
            topic = self.string() or ""
            out.append((topic, [self.take(">i") for _ in range(self.count())]))
        return out


def decode_version(data: bytes) -> int:
    """The version prefix of either message (Kafka's ConsumerProtocol.deserializeVersion)."""
    version: int = _Reader(data).take(">h")
    return version


def decode_subscription(data: bytes) -> Subscription:
    r = _Reader(data)
    version = r.take(">h")
    if version < 0:
        raise ConsumerProtocolError(f"negative subscription version {version}")
    topics = [r.string() or "" for _ in range(r.count())]
    sub = Subscription(version, topics, r.bytes_())
    if version >= 1:
        sub.owned_partitions = r.topic_partitions()
    if version >= 2:
        sub.generation_id = r.take(">i")
    if version >= 3:
        sub.rack_id = r.string(nullable=True)
    return sub


def decode_assignment(data: bytes) -> TopicPartitions:
    """The assigned partitions; an empty buffer is an empty assignment."""
    if not data:
        return []
    r = _Reader(data)
    if r.take(">h") < 0:
        raise ConsumerProtocolError("negative assignment version")
    return r.topic_partitions()


def encode_assignment(partitions: TopicPartitions, version: int = 0,
                      user_data: bytes | None = None) -> bytes:
    """ConsumerProtocolAssignment at ``version`` (clamped to 0-3, the layout is the same)."""
    out = [struct.pack(">hi", min(max(version, 0), 3), len(partitions))]
    for topic, parts in partitions:
        raw = topic.encode()
        out.append(struct.pack(f">h{len(raw)}si{len(parts)}i", len(raw), raw, len(parts),
                               *parts))
    if user_data is None:
        out.append(struct.pack(">i", -1))
    else:
        out.append(struct.pack(">i", len(user_data)) + user_data)
    return b"".join(out)


def encode_subscription(topics: list[str], version: int = 0, *,
                        owned_partitions: TopicPartitions | None = None,
                        generation_id: int = -1, rack_id: str | None = None,
                        user_data: bytes | None = None) -> bytes:
    """ConsumerProtocolSubscription (tests and tools build classic members' metadata)."""
    def s(v: str | None) -> bytes:
        if v is None:
            return struct.pack(">h", -1)
        raw = v.encode()
        return struct.pack(">h", len(raw)) + raw

    out = [struct.pack(">hi", version, len(topics)), *(s(t) for t in topics)]
    out.append(struct.pack(">i", -1) if user_data is None
               else struct.pack(">i", len(user_data)) + user_data)
    if version >= 1:
        owned = owned_partitions or []
        out.append(struct.pack(">i", len(owned)))
        for topic, parts in owned:
            out.append(s(topic) + struct.pack(f">i{len(parts)}i", len(parts), *parts))
    if version >= 2:
        out.append(struct.pack(">i", generation_id))
    if version >= 3:
        out.append(s(rack_id))
    return b"".join(out)
