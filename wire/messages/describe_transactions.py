"""DescribeTransactions (key 65)."""

from wire.messages.common import topic_partitions
from wire.schema import INT16, INT32, INT64, STRING, Array, Field, message

DESCRIBE_TRANSACTIONS_REQUEST = message("DescribeTransactionsRequest", 65, "0", "0+", [
    Field("transactional_ids", Array(STRING))])

DESCRIBE_TRANSACTIONS_RESPONSE = message("DescribeTransactionsResponse", 65, "0", "0+", [
    Field("throttle_time_ms", INT32),
    Field("transaction_states", Array, fields=[
        Field("error_code", INT16),
        Field("transactional_id", STRING),
        Field("transaction_state", STRING),
        Field("transaction_timeout_ms", INT32),
        Field("transaction_start_time_ms", INT64),
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        topic_partitions(topic="topic"),
    ]),
])
