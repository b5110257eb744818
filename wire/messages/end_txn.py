"""EndTxn (key 26)."""

from wire.schema import BOOL, INT16, INT32, INT64, STRING, Field, message

END_TXN_REQUEST = message("EndTxnRequest", 26, "0-5", "3+", [
    Field("transactional_id", STRING),
    Field("producer_id", INT64),
    Field("producer_epoch", INT16),
    Field("committed", BOOL),
])

END_TXN_RESPONSE = message("EndTxnResponse", 26, "0-5", "3+", [
    Field("throttle_time_ms", INT32),
    Field("error_code", INT16),
    Field("producer_id", INT64, "5+", default=-1),
    Field("producer_epoch", INT16, "5+", default=-1),
])
