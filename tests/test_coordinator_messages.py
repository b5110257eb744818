"""The coordinators' typed shapes of wire messages match the wire's declarations.

A coordinator takes a decoded request and gives a response as a ``TypedDict`` of exactly
the fields it reads or writes (emulator/coordinators/*/messages.py), so that mypy checks
each field; the handler hands the codec's dict over with a ``cast``. Nothing in mypy
ties those shapes to the schema the codec decodes by (wire/messages/): this test does.
Every key of a shape must be a field of its wire struct, of the matching type (an
integer type is ``int``, an array a ``list``, a struct a nested shape), admitting None
exactly where the wire declares the field nullable in some version, and a field the
coordinator may leave out (``NotRequired``) only where the encoder has a default.
"""

from __future__ import annotations

import types
import typing
from typing import NotRequired, Union, get_args, get_origin, get_type_hints, is_typeddict

import pytest

from emulator.coordinators.groups import messages as groups
from emulator.coordinators.share import messages as share
from emulator.coordinators.streams import messages as streams
from emulator.coordinators.transactions import messages as transactions
from wire.messages import (
    consumer_group_describe,
    consumer_group_heartbeat,
    describe_groups,
    describe_transactions,
    join_group,
    list_groups,
    list_transactions,
    offset_fetch,
    share_group_describe,
    share_group_heartbeat,
    share_group_offsets,
    share_group_state,
    streams_group,
    sync_group,
)
from wire.schema import (
    BOOL,
    BYTES,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    UINT16,
    UINT32,
    UUID,
    Array,
    Field,
    Message,
    Struct,
    Type,
)
from wire.share_state_records import SHARE_SNAPSHOT_VALUE, SHARE_UPDATE_VALUE

SCALARS: dict[Type, type] = {INT8: int, INT16: int, INT32: int, INT64: int, UINT16: int,
                             UINT32: int, STRING: str, BOOL: bool, UUID: bytes, BYTES: bytes,
                             FLOAT64: float}


def _field(struct: Struct | Message, name: str) -> Field:
    for f in struct.fields:
        if f.name == name:
            return f
    raise KeyError(name)


def _struct_at(message: Message, path: tuple[str, ...]) -> Struct | Message:
    """The struct reached from ``message`` through the fields of ``path`` (arrays
    stepped into)."""
    struct: Struct | Message = message
    for name in path:
        t = _field(struct, name).type
        if isinstance(t, Array):
            t = t.item
        assert isinstance(t, Struct), f"{message.name}.{'.'.join(path)} is not a struct"
        struct = t
    return struct


def _split_optional(hint: object) -> tuple[object, bool]:
    """(the hint without None, whether it admitted None)."""
    if get_origin(hint) in (Union, types.UnionType):
        args = [a for a in get_args(hint) if a is not type(None)]
        assert len(args) == 1, f"a union of several types: {hint}"
        return args[0], len(args) < len(get_args(hint))
    return hint, False


def mismatches(shape: type, struct: Struct | Message, where: str, *, read: bool) -> list[str]:
    """What in ``shape`` (a TypedDict) the wire's ``struct`` does not declare so. A
    shape the coordinator ``read``s (a request) must admit None wherever the wire may
    carry it; one it writes may fill a nullable field always."""
    out: list[str] = []
    hints = get_type_hints(shape, include_extras=True)
    for name, hint in hints.items():
        at = f"{where}.{name}"
        try:
            f = _field(struct, name)
        except KeyError:
            out.append(f"{at}: no such field on the wire")
            continue
        if get_origin(hint) is NotRequired:
            (hint,) = get_args(hint)
            if f.versions is None:
                out.append(f"{at}: optional but never on the wire")
        base, optional = _split_optional(hint)
        if base is type(None):  # always null here (a field the coordinator never fills)
            base, optional = None, True
        if (optional or read) and optional != (f.nullable is not None):
            out.append(f"{at}: admits None {optional}, wire nullable {f.nullable}")
        if base is not None:
            out += _type_mismatches(base, f.type, at, read)
    return out


def _type_mismatches(hint: object, wire: object, at: str, read: bool) -> list[str]:
    if isinstance(wire, Array):
        if get_origin(hint) is not list:
            return [f"{at}: {hint} for an array"]
        return _type_mismatches(get_args(hint)[0], wire.item, f"{at}[]", read)
    if isinstance(wire, Struct):
        if not (isinstance(hint, type) and is_typeddict(hint)):
            return [f"{at}: {hint} for a struct"]
        return mismatches(hint, wire, at, read=read)
    expected = SCALARS.get(typing.cast(Type, wire))
    if hint is not expected:
        return [f"{at}: {hint} for {wire}"]
    return []


# (shape, message, the path of fields from the message to the shape's struct)
SHAPES: list[tuple[type, Message, tuple[str, ...]]] = [
    (streams.StreamsGroupHeartbeatRequest, streams_group.STREAMS_GROUP_HEARTBEAT_REQUEST, ()),
    (streams.StreamsGroupHeartbeatResponse, streams_group.STREAMS_GROUP_HEARTBEAT_RESPONSE,
     ()),
    (streams.DescribedStreamsGroup, streams_group.STREAMS_GROUP_DESCRIBE_RESPONSE,
     ("groups",)),
    (groups.JoinGroupResponse, join_group.JOIN_GROUP_RESPONSE, ()),
    (groups.SyncGroupResponse, sync_group.SYNC_GROUP_RESPONSE, ()),
    (groups.DescribedClassicGroup, describe_groups.DESCRIBE_GROUPS_RESPONSE, ("groups",)),
    (groups.ListedGroup, list_groups.LIST_GROUPS_RESPONSE, ("groups",)),
    (groups.FetchedOffset, offset_fetch.OFFSET_FETCH_RESPONSE,
     ("groups", "topics", "partitions")),
    (groups.TopicPartitionsById, consumer_group_heartbeat.CONSUMER_GROUP_HEARTBEAT_REQUEST,
     ("topic_partitions",)),
    (groups.GroupHeartbeatResponse, consumer_group_heartbeat.CONSUMER_GROUP_HEARTBEAT_RESPONSE,
     ()),
    (groups.GroupHeartbeatResponse, share_group_heartbeat.SHARE_GROUP_HEARTBEAT_RESPONSE, ()),
    (groups.DescribedConsumerGroup, consumer_group_describe.CONSUMER_GROUP_DESCRIBE_RESPONSE,
     ("groups",)),
    (share.DescribedShareGroup, share_group_describe.SHARE_GROUP_DESCRIBE_RESPONSE,
     ("groups",)),
    (share.ShareTopicOffsets, share_group_offsets.DESCRIBE_SHARE_GROUP_OFFSETS_RESPONSE,
     ("groups", "topics")),
    (share.AlteredShareTopic, share_group_offsets.ALTER_SHARE_GROUP_OFFSETS_RESPONSE,
     ("responses",)),
    (share.DeletedShareTopic, share_group_offsets.DELETE_SHARE_GROUP_OFFSETS_RESPONSE,
     ("responses",)),
    (share.StateBatch, share_group_state.WRITE_SHARE_GROUP_STATE_REQUEST,
     ("topics", "partitions", "state_batches")),
    (share.StateBatch, share_group_state.READ_SHARE_GROUP_STATE_RESPONSE,
     ("results", "partitions", "state_batches")),
    (share.StateBatch, SHARE_SNAPSHOT_VALUE, ("state_batches",)),
    (share.StateBatch, SHARE_UPDATE_VALUE, ("state_batches",)),
    (share.StateSummary, share_group_state.READ_SHARE_GROUP_STATE_SUMMARY_RESPONSE,
     ("results", "partitions")),
    (transactions.DescribedTransaction, describe_transactions.DESCRIBE_TRANSACTIONS_RESPONSE,
     ("transaction_states",)),
    (transactions.ListedTransaction, list_transactions.LIST_TRANSACTIONS_RESPONSE,
     ("transaction_states",)),
]


@pytest.mark.parametrize(("shape", "message", "path"), SHAPES,
                         ids=[f"{s[0].__qualname__}-{s[1].name}" for s in SHAPES])
def test_shape_matches_the_wire(shape: type, message: Message, path: tuple[str, ...]) -> None:
    where = ".".join((message.name, *path))
    read = message.kind == "request"
    assert mismatches(shape, _struct_at(message, path), where, read=read) == []


def test_a_renamed_field_is_found() -> None:
    """The check itself: a shape with a field the wire does not have, a wrong scalar, a
    missing None, each is reported."""

    class Bad(typing.TypedDict):
        group_idd: str
        member_epoch: str
        instance_id: str

    found = mismatches(Bad, streams_group.STREAMS_GROUP_HEARTBEAT_REQUEST, "r", read=True)
    assert found == ["r.group_idd: no such field on the wire",
                     "r.member_epoch: <class 'str'> for int32",
                     "r.instance_id: admits None False, wire nullable (0, 32768)"]
