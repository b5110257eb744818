"""InitProducerId (key 22)."""

from wire.schema import BOOL, INT16, INT32, INT64, STRING, Field, message

INIT_PRODUCER_ID_REQUEST = message("InitProducerIdRequest", 22, "0-6", "2+", [
    Field("transactional_id", STRING, nullable="0+"),
    Field("transaction_timeout_ms", INT32),
    Field("producer_id", INT64, "3+", default=-1),
    Field("producer_epoch", INT16, "3+", default=-1),
    Field("enable2_pc", BOOL, "6+", default=False),
    Field("keep_prepared_txn", BOOL, "6+", default=False),
])

INIT_PRODUCER_ID_RESPONSE = message("InitProducerIdResponse", 22, "0-6", "2+", [
    Field("throttle_time_ms", INT32),
    Field("error_code", INT16),
    Field("producer_id", INT64, default=-1),
    Field("producer_epoch", INT16),
    Field("ongoing_txn_producer_id", INT64, "6+", default=-1),
    Field("ongoing_txn_producer_epoch", INT16, "6+", default=-1),
])
