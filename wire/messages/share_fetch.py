"""ShareFetch (key 78), v1-2: fetch with acquisition locks for share groups (KIP-932).

v1 is the GA version (v0 was Kafka 4.0's early access); v2 adds ShareAcquireMode
(KIP-1206) and IsRenewAck with the RENEW acknowledgement type (KIP-1222).
Acknowledge types: 0 gap, 1 accept, 2 release, 3 reject, 4 renew.
"""

from wire.messages.common import (
    by_topic,
    current_leader,
    error_fields,
    node_endpoints,
    nstring,
    response_head,
    topic_partitions,
)
from wire.schema import (
    BOOL,
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UUID,
    Array,
    Field,
    message,
)


def share_request_head() -> list[Field]:
    """GroupId, MemberId and ShareSessionEpoch: ShareFetch and ShareAcknowledge start so."""
    return [nstring("group_id"), Field("member_id", STRING, nullable="0+"),
            Field("share_session_epoch", INT32)]


def acknowledgement_batches() -> Field:
    """Ranges of offsets with the acknowledge type of each (one for the whole range, or
    one per offset)."""
    return Field("acknowledgement_batches", Array, fields=[
        Field("first_offset", INT64), Field("last_offset", INT64),
        Field("acknowledge_types", Array(INT8)),
    ])


def share_response(lock_timeout_versions: str, partition_fields: list[Field]) -> list[Field]:
    """The answer to ShareFetch and ShareAcknowledge: per topic (by id) and partition, the
    partition's error and ``partition_fields``, then the leaders' endpoints."""
    return [
        *response_head(),
        Field("acquisition_lock_timeout_ms", INT32, lock_timeout_versions),
        by_topic("responses", [Field("partition_index", INT32), *error_fields(),
                               *partition_fields], topic=[Field("topic_id", UUID)]),
        node_endpoints(),
    ]


SHARE_FETCH_REQUEST = message("ShareFetchRequest", 78, "1-2", "0+", [
    *share_request_head(),
    Field("max_wait_ms", INT32),
    Field("min_bytes", INT32),
    Field("max_bytes", INT32, default=0x7FFFFFFF),
    Field("max_records", INT32, "1+"),
    Field("batch_size", INT32, "1+"),
    Field("share_acquire_mode", INT8, "2+", default=0),
    Field("is_renew_ack", BOOL, "2+", default=False),
    by_topic("topics", [
        Field("partition_index", INT32),
        Field("partition_max_bytes", INT32, "0"),
        acknowledgement_batches(),
    ], topic=[Field("topic_id", UUID)]),
    topic_partitions("forgotten_topics_data", topic="topic_id", topic_type=UUID),
])

SHARE_FETCH_RESPONSE = message("ShareFetchResponse", 78, "1-2", "0+", share_response("1+", [
    Field("acknowledge_error_code", INT16),
    nstring("acknowledge_error_message"),
    current_leader(),
    Field("records", RECORDS, nullable="0", default=None),
    Field("acquired_records", Array, fields=[
        Field("first_offset", INT64), Field("last_offset", INT64),
        Field("delivery_count", INT16),
    ]),
]))
