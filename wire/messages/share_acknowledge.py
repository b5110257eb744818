"""ShareAcknowledge (key 79), v1-2: acknowledge records delivered to a share group.

v1 is the GA version; v2 adds IsRenewAck and AcquisitionLockTimeoutMs (KIP-1222).
"""

from wire.messages.share_fetch import _ACK_BATCHES, _CURRENT_LEADER, _NODE_ENDPOINTS
from wire.schema import BOOL, INT16, INT32, STRING, UUID, Array, Field, message

SHARE_ACKNOWLEDGE_REQUEST = message(
    "ShareAcknowledgeRequest",
    79,
    "1-2",
    "0+",
    [
        Field("group_id", STRING, nullable="0+", default=None),
        Field("member_id", STRING, nullable="0+"),
        Field("share_session_epoch", INT32),
        Field("is_renew_ack", BOOL, "2+", default=False),
        Field(
            "topics",
            Array,
            fields=[
                Field("topic_id", UUID),
                Field(
                    "partitions",
                    Array,
                    fields=[Field("partition_index", INT32), _ACK_BATCHES],
                ),
            ],
        ),
    ],
)

SHARE_ACKNOWLEDGE_RESPONSE = message(
    "ShareAcknowledgeResponse",
    79,
    "1-2",
    "0+",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+", default=None),
        Field("acquisition_lock_timeout_ms", INT32, "2+"),
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
                        _CURRENT_LEADER,
                    ],
                ),
            ],
        ),
        _NODE_ENDPOINTS,
    ],
)
