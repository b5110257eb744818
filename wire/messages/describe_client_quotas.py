"""DescribeClientQuotas (key 48)."""

from wire.messages.alter_client_quotas import quota_entity
from wire.messages.common import response_head
from wire.schema import BOOL, FLOAT64, INT8, STRING, Array, Field, message

DESCRIBE_CLIENT_QUOTAS_REQUEST = message("DescribeClientQuotasRequest", 48, "0-1", "1+", [
    Field("components", Array, fields=[
        Field("entity_type", STRING),
        Field("match_type", INT8),
        Field("match", STRING, nullable="0+"),
    ]),
    Field("strict", BOOL),
])

DESCRIBE_CLIENT_QUOTAS_RESPONSE = message("DescribeClientQuotasResponse", 48, "0-1", "1+", [
    *response_head(null_message=False),
    Field("entries", Array, nullable="0+", fields=[
        quota_entity(),
        Field("values", Array, fields=[Field("key", STRING), Field("value", FLOAT64)]),
    ]),
])
