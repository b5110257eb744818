"""AddPartitionsToTxn (key 24). v4 batches many transactions in one request (brokers'
verification); v0-3 carry one transaction in top-level fields."""

from wire.messages.common import by_topic, partition_error, topic_partitions
from wire.schema import BOOL, INT16, INT32, INT64, STRING, Array, Field, message


def _topic_results(name: str, versions: str) -> Field:
    return by_topic(name, partition_error(code="partition_error_code"),
                    partitions="results_by_partition", versions=versions)


ADD_PARTITIONS_TO_TXN_REQUEST = message("AddPartitionsToTxnRequest", 24, "0-5", "3+", [
    Field("transactions", Array, "4+", fields=[
        Field("transactional_id", STRING, "4+"),
        Field("producer_id", INT64, "4+"),
        Field("producer_epoch", INT16, "4+"),
        Field("verify_only", BOOL, "4+", default=False),
        topic_partitions(versions="4+"),
    ]),
    Field("v3_and_below_transactional_id", STRING, "0-3"),
    Field("v3_and_below_producer_id", INT64, "0-3"),
    Field("v3_and_below_producer_epoch", INT16, "0-3"),
    topic_partitions("v3_and_below_topics", versions="0-3"),
])

ADD_PARTITIONS_TO_TXN_RESPONSE = message("AddPartitionsToTxnResponse", 24, "0-5", "3+", [
    Field("throttle_time_ms", INT32),
    Field("error_code", INT16, "4+"),
    Field("results_by_transaction", Array, "4+", fields=[
        Field("transactional_id", STRING, "4+"),
        _topic_results("topic_results", "4+"),
    ]),
    _topic_results("results_by_topic_v3_and_below", "0-3"),
])
