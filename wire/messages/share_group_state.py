"""The share coordinator's APIs (KIP-932), sent by share-partition leaders to the
leader of the share group's ``__share_group_state`` partition:
InitializeShareGroupState (83, v0), ReadShareGroupState (84, v0),
WriteShareGroupState (85, v0-1), DeleteShareGroupState (86, v0) and
ReadShareGroupStateSummary (87, v0-1). v1 of 85/87 adds DeliveryCompleteCount (KIP-1226).
"""

from wire.messages.common import by_topic, error_fields
from wire.schema import INT8, INT16, INT32, INT64, STRING, UUID, Array, Field, Message, message

_STATE_BATCHES = Field(
    "state_batches",
    Array,
    fields=[
        Field("first_offset", INT64),
        Field("last_offset", INT64),
        Field("delivery_state", INT8),
        Field("delivery_count", INT16),
    ],
)


def _request(name: str, key: int, versions: str, partition_fields: list[Field]) -> Message:
    return message(name, key, versions, "0+", [
        Field("group_id", STRING),
        by_topic("topics", [Field("partition", INT32), *partition_fields],
                 topic=[Field("topic_id", UUID)]),
    ])


def _response(name: str, key: int, versions: str, partition_fields: list[Field]) -> Message:
    return message(name, key, versions, "0+", [
        by_topic("results", [Field("partition", INT32), *error_fields(), *partition_fields],
                 topic=[Field("topic_id", UUID)]),
    ])


INITIALIZE_SHARE_GROUP_STATE_REQUEST = _request(
    "InitializeShareGroupStateRequest", 83, "0",
    [Field("state_epoch", INT32), Field("start_offset", INT64)])
INITIALIZE_SHARE_GROUP_STATE_RESPONSE = _response("InitializeShareGroupStateResponse", 83, "0", [])

READ_SHARE_GROUP_STATE_REQUEST = _request(
    "ReadShareGroupStateRequest", 84, "0", [Field("leader_epoch", INT32)])
READ_SHARE_GROUP_STATE_RESPONSE = _response(
    "ReadShareGroupStateResponse", 84, "0",
    [Field("state_epoch", INT32), Field("start_offset", INT64), _STATE_BATCHES])

WRITE_SHARE_GROUP_STATE_REQUEST = _request(
    "WriteShareGroupStateRequest", 85, "0-1",
    [Field("state_epoch", INT32), Field("leader_epoch", INT32), Field("start_offset", INT64),
     Field("delivery_complete_count", INT32, "1+", default=-1), _STATE_BATCHES])
WRITE_SHARE_GROUP_STATE_RESPONSE = _response("WriteShareGroupStateResponse", 85, "0-1", [])

DELETE_SHARE_GROUP_STATE_REQUEST = _request("DeleteShareGroupStateRequest", 86, "0", [])
DELETE_SHARE_GROUP_STATE_RESPONSE = _response("DeleteShareGroupStateResponse", 86, "0", [])

READ_SHARE_GROUP_STATE_SUMMARY_REQUEST = _request(
    "ReadShareGroupStateSummaryRequest", 87, "0-1", [Field("leader_epoch", INT32)])
READ_SHARE_GROUP_STATE_SUMMARY_RESPONSE = _response(
    "ReadShareGroupStateSummaryResponse", 87, "0-1",
    [Field("state_epoch", INT32), Field("leader_epoch", INT32), Field("start_offset", INT64),
     Field("delivery_complete_count", INT32, "1+", default=-1)])
