"""The coordinators' typed shapes of wire messages match the wire's declarations.

A coordinator takes a decoded request and gives a response as a ``TypedDict`` of exactly
the fields it reads or writes (emulator/coordinators/*/messages.py); SHAPES lists each,
with the wire struct it stands for, and tests/wire_shapes.py's check (which the
cluster's shapes share, tests/test_cluster_messages.py) holds each to the wire's
declaration: its fields, their types, None and ``NotRequired`` where the wire allows.
"""

from __future__ import annotations

import typing

from wire_shapes import Shape, mismatches, shape_test

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
from wire.share_state_records import SHARE_SNAPSHOT_VALUE, SHARE_UPDATE_VALUE

SHAPES: list[Shape] = [
    (streams.StreamsGroupHeartbeatRequest, streams_group.STREAMS_GROUP_HEARTBEAT_REQUEST, ()),
    (streams.StreamsGroupHeartbeatResponse, streams_group.STREAMS_GROUP_HEARTBEAT_RESPONSE, ()),
    (streams.DescribedStreamsGroup, streams_group.STREAMS_GROUP_DESCRIBE_RESPONSE, ("groups",)),
    (groups.JoinGroupResponse, join_group.JOIN_GROUP_RESPONSE, ()),
    (groups.SyncGroupResponse, sync_group.SYNC_GROUP_RESPONSE, ()),
    (groups.DescribedClassicGroup, describe_groups.DESCRIBE_GROUPS_RESPONSE, ("groups",)),
    (groups.ListedGroup, list_groups.LIST_GROUPS_RESPONSE, ("groups",)),
    (groups.FetchedOffset, offset_fetch.OFFSET_FETCH_RESPONSE, ("groups", "topics", "partitions")),
    (
        groups.TopicPartitionsById,
        consumer_group_heartbeat.CONSUMER_GROUP_HEARTBEAT_REQUEST,
        ("topic_partitions",),
    ),
    (groups.GroupHeartbeatResponse, consumer_group_heartbeat.CONSUMER_GROUP_HEARTBEAT_RESPONSE, ()),
    (groups.GroupHeartbeatResponse, share_group_heartbeat.SHARE_GROUP_HEARTBEAT_RESPONSE, ()),
    (
        groups.DescribedConsumerGroup,
        consumer_group_describe.CONSUMER_GROUP_DESCRIBE_RESPONSE,
        ("groups",),
    ),
    (share.DescribedShareGroup, share_group_describe.SHARE_GROUP_DESCRIBE_RESPONSE, ("groups",)),
    (
        share.ShareTopicOffsets,
        share_group_offsets.DESCRIBE_SHARE_GROUP_OFFSETS_RESPONSE,
        ("groups", "topics"),
    ),
    (
        share.AlteredShareTopic,
        share_group_offsets.ALTER_SHARE_GROUP_OFFSETS_RESPONSE,
        ("responses",),
    ),
    (
        share.DeletedShareTopic,
        share_group_offsets.DELETE_SHARE_GROUP_OFFSETS_RESPONSE,
        ("responses",),
    ),
    (
        share.StateBatch,
        share_group_state.WRITE_SHARE_GROUP_STATE_REQUEST,
        ("topics", "partitions", "state_batches"),
    ),
    (
        share.StateBatch,
        share_group_state.READ_SHARE_GROUP_STATE_RESPONSE,
        ("results", "partitions", "state_batches"),
    ),
    (share.StateBatch, SHARE_SNAPSHOT_VALUE, ("state_batches",)),
    (share.StateBatch, SHARE_UPDATE_VALUE, ("state_batches",)),
    (
        share.StateSummary,
        share_group_state.READ_SHARE_GROUP_STATE_SUMMARY_RESPONSE,
        ("results", "partitions"),
    ),
    (
        transactions.DescribedTransaction,
        describe_transactions.DESCRIBE_TRANSACTIONS_RESPONSE,
        ("transaction_states",),
    ),
    (
        transactions.ListedTransaction,
        list_transactions.LIST_TRANSACTIONS_RESPONSE,
        ("transaction_states",),
    ),
]


test_shape_matches_the_wire = shape_test(SHAPES)


def test_a_renamed_field_is_found() -> None:
    """The check itself: a shape with a field the wire does not have, a wrong scalar, a
    missing None, each is reported."""

    class Bad(typing.TypedDict):
        group_idd: str
        member_epoch: str
        instance_id: str

    found = mismatches(Bad, streams_group.STREAMS_GROUP_HEARTBEAT_REQUEST, "r", read=True)
    assert found == [
        "r.group_idd: no such field on the wire",
        "r.member_epoch: <class 'str'> for int32",
        "r.instance_id: admits None False, wire nullable (0, 32768)",
    ]
