"""WriteTxnMarkers (key 27)."""

from wire.messages.common import by_topic, partition_error, topic_partitions
from wire.schema import BOOL, INT8, INT16, INT32, INT64, Array, Field, message

WRITE_TXN_MARKERS_REQUEST = message("WriteTxnMarkersRequest", 27, "1-2", "1+", [
    Field("markers", Array, fields=[
        Field("producer_id", INT64),
        Field("producer_epoch", INT16),
        Field("transaction_result", BOOL),
        topic_partitions(partitions="partition_indexes"),
        Field("coordinator_epoch", INT32),
        # v2 (KIP-1228): the transaction version the marker is written with.
        Field("transaction_version", INT8, "2+", default=0),
    ]),
])

WRITE_TXN_MARKERS_RESPONSE = message("WriteTxnMarkersResponse", 27, "1-2", "1+", [
    Field("markers", Array, fields=[
        Field("producer_id", INT64), by_topic("topics", partition_error())]),
])
