"""ElectLeaders (key 43)."""

from wire.messages.common import by_topic, error_fields, topic_partitions
from wire.schema import INT8, INT16, INT32, STRING, Field, message

ELECT_LEADERS_REQUEST = message("ElectLeadersRequest", 43, "0-2", "2+", [
    Field("election_type", INT8, "1+"),
    topic_partitions("topic_partitions", topic="topic", nullable="0+"),  # null: all
    Field("timeout_ms", INT32, default=60000),
])

ELECT_LEADERS_RESPONSE = message("ElectLeadersResponse", 43, "0-2", "2+", [
    Field("throttle_time_ms", INT32),
    Field("error_code", INT16, "1+"),
    by_topic("replica_election_results",
             [Field("partition_id", INT32), *error_fields(null_message=False)],
             topic=[Field("topic", STRING)], partitions="partition_result"),
])
