"""ShareFetch (key 78), v1-2: fetch with acquisition locks for share groups (KIP-932).

v1 is the GA version (v0 was Kafka 4.0's early access); v2 adds ShareAcquireMode
(KIP-1206) and IsRenewAck with the RENEW acknowledgement type (KIP-1222).
Acknowledge types: 0 gap, 1 accept, 2 release, 3 reject, 4 renew.
"""

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

_ACK_BATCHES = Field(
    "acknowledgement_batches",
    Array,
    fields=[
        Field("first_offset", INT64),
        Field("last_offset", INT64),
        Field("acknowledge_types", Array(INT8)),
    ],
)

SHARE_FETCH_REQUEST = message(
    "ShareFetchRequest",
    78,
    "1-2",
    "0+",
    [
        Field("group_id", STRING, nullable="0+", default=None),
        Field("member_id", STRING, nullable="0+"),
        Field("share_session_epoch", INT32),
        Field("max_wait_ms", INT32),
        Field("min_bytes", INT32),
        Field("max_bytes", INT32, default=0x7FFFFFFF),
        Field("max_records", INT32, "1+"),
        Field("batch_size", INT32, "1+"),
        Field("share_acquire_mode", INT8, "2+", default=0),
        Field("is_renew_ack", BOOL, "2+", default=False),
        Field(
            "topics",
            Array,
            fields=[
                Field("topic_id", UUID),
                Field(
                    "partitions",
                    Array,
                    fields=[
                        Field("partition_index", INT32),
                        Field("partition_max_bytes", INT32, "0"),
                        _ACK_BATCHES,
                    ],
                ),
            ],
        ),
        Field(
            "forgotten_topics_data",
            Array,
            fields=[Field("topic_id", UUID), Field("partitions", Array(INT32))],
        ),
    ],
)

_NODE_ENDPOINTS = Field(
    "node_endpoints",
    Array,
    fields=[
        Field("node_id", INT32),
        Field("host", STRING),
        Field("port", INT32),
        Field("rack", STRING, nullable="0+", default=None),
    ],
)

_CURRENT_LEADER = Field(
    "current_leader", None, fields=[Field("leader_id", INT32), Field("leader_epoch", INT32)]
)

SHARE_FETCH_RESPONSE = message(
    "ShareFetchResponse",
    78,
    "1-2",
    "0+",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("acquisition_lock_timeout_ms", INT32, "1+"),
        Field(
            "responses",
            Array,
            fields=[
                Field("topic_id", UUID),
                Field(
                    "partitions",
                    Array,
                    fields=[
                        Field("partition_index", INT32),
                        Field("error_code", INT16),
                        Field("error_message", STRING, nullable="0+", default=None),
                        Field("acknowledge_error_code", INT16),
                        Field("acknowledge_error_message", STRING, nullable="0+", default=None),
                        _CURRENT_LEADER,
                        Field("records", RECORDS, nullable="0", default=None),
                        Field(
                            "acquired_records",
                            Array,
                            fields=[
                                Field("first_offset", INT64),
                                Field("last_offset", INT64),
                                Field("delivery_count", INT16),
                            ],
                        ),
                    ],
                ),
            ],
        ),
        _NODE_ENDPOINTS,
    ],
)
