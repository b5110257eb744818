"""ListTransactions (key 66)."""

from wire.messages.common import nstring
from wire.schema import INT16, INT32, INT64, STRING, Array, Field, message

LIST_TRANSACTIONS_REQUEST = message("ListTransactionsRequest", 66, "0-2", "0+", [
    Field("state_filters", Array(STRING)),
    Field("producer_id_filters", Array(INT64)),
    Field("duration_filter", INT64, "1+", default=-1),
    nstring("transactional_id_pattern", "2+"),
])

LIST_TRANSACTIONS_RESPONSE = message("ListTransactionsResponse", 66, "0-2", "0+", [
    Field("throttle_time_ms", INT32),
    Field("error_code", INT16),
    Field("unknown_state_filters", Array(STRING)),
    Field("transaction_states", Array, fields=[
        Field("transactional_id", STRING),
        Field("producer_id", INT64),
        Field("transaction_state", STRING),
    ]),
])
