"""AddOffsetsToTxn (key 25)."""

from wire.schema import INT16, INT32, INT64, STRING, Field, message

ADD_OFFSETS_TO_TXN_REQUEST = message("AddOffsetsToTxnRequest", 25, "0-4", "3+", [
    Field("transactional_id", STRING),
    Field("producer_id", INT64),
    Field("producer_epoch", INT16),
    Field("group_id", STRING),
])

ADD_OFFSETS_TO_TXN_RESPONSE = message("AddOffsetsToTxnResponse", 25, "0-4", "3+", [
    Field("throttle_time_ms", INT32), Field("error_code", INT16)])
