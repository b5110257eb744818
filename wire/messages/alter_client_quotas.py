"""AlterClientQuotas (key 49), KIP-546."""

from wire.schema import BOOL, FLOAT64, INT16, INT32, STRING, Array, Field, message

_ENTITY = [
    Field("entity_type", STRING),
    Field("entity_name", STRING, nullable="0+"),
]

ALTER_CLIENT_QUOTAS_REQUEST = message("AlterClientQuotasRequest", 49, "0-1", "1+", [
    Field("entries", Array, fields=[
        Field("entity", Array, fields=list(_ENTITY)),
        Field("ops", Array, fields=[
            Field("key", STRING),
            Field("value", FLOAT64),
            Field("remove", BOOL),
        ]),
    ]),
    Field("validate_only", BOOL),
])

ALTER_CLIENT_QUOTAS_RESPONSE = message("AlterClientQuotasResponse", 49, "0-1", "1+", [
    Field("throttle_time_ms", INT32),
    Field("entries", Array, fields=[
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("entity", Array, fields=list(_ENTITY)),
    ]),
])
