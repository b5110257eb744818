"""DeleteTopics (key 20)."""

from wire.messages.common import nstring
from wire.schema import INT16, INT32, STRING, UUID, Array, Field, message

DELETE_TOPICS_REQUEST = message("DeleteTopicsRequest", 20, "1-6", "4+", [
    Field("topics", Array, "6+", fields=[nstring("name", "6+"), Field("topic_id", UUID, "6+")]),
    Field("topic_names", Array(STRING), "0-5"),
    Field("timeout_ms", INT32),
])

DELETE_TOPICS_RESPONSE = message("DeleteTopicsResponse", 20, "1-6", "4+", [
    Field("throttle_time_ms", INT32, "1+"),
    Field("responses", Array, fields=[
        Field("name", STRING, nullable="6+"),
        Field("topic_id", UUID, "6+"),
        Field("error_code", INT16),
        nstring("error_message", "5+"),
    ]),
])
