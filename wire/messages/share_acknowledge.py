"""ShareAcknowledge (key 79), v1-2: acknowledge records delivered to a share group.

v1 is the GA version; v2 adds IsRenewAck and AcquisitionLockTimeoutMs (KIP-1222).
"""

from wire.messages.common import by_topic, current_leader
from wire.messages.share_fetch import acknowledgement_batches, share_request_head, share_response
from wire.schema import BOOL, INT32, UUID, Field, message

SHARE_ACKNOWLEDGE_REQUEST = message("ShareAcknowledgeRequest", 79, "1-2", "0+", [
    *share_request_head(),
    Field("is_renew_ack", BOOL, "2+", default=False),
    by_topic("topics", [Field("partition_index", INT32), acknowledgement_batches()],
             topic=[Field("topic_id", UUID)]),
])

SHARE_ACKNOWLEDGE_RESPONSE = message(
    "ShareAcknowledgeResponse", 79, "1-2", "0+", share_response("2+", [current_leader()]))
