"""WriteTxnMarkers (key 27)."""

from wire.schema import BOOL, INT8, INT16, INT32, INT64, STRING, Array, Field, message

WRITE_TXN_MARKERS_REQUEST = message(
    "WriteTxnMarkersRequest",
    27,
    "1-2",
    "1+",
    [
        Field(
            "markers",
            Array,
            fields=[
                Field("producer_id", INT64),
                Field("producer_epoch", INT16),
                Field("transaction_result", BOOL),
                Field(
                    "topics",
                    Array,
                    fields=[
                        Field("name", STRING),
                        Field("partition_indexes", Array(INT32)),
                    ],
                ),
                Field("coordinator_epoch", INT32),
                # v2 (KIP-1228): the transaction version the marker is written with.
                Field("transaction_version", INT8, "2+", default=0),
            ],
        ),
    ],
)

WRITE_TXN_MARKERS_RESPONSE = message(
    "WriteTxnMarkersResponse",
    27,
    "1-2",
    "1+",
    [
        Field(
            "markers",
            Array,
            fields=[
                Field("producer_id", INT64),
                Field(
                    "topics",
                    Array,
                    fields=[
                        Field("name", STRING),
                        Field(
                            "partitions",
                            Array,
                            fields=[
                                Field("partition_index", INT32),
                                Field("error_code", INT16),
                            ],
                        ),
                    ],
                ),
            ],
        ),
    ],
)
