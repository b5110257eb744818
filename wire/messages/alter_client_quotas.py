"""AlterClientQuotas (key 49), KIP-546."""

from wire.messages.common import error_fields
from wire.schema import BOOL, FLOAT64, INT32, STRING, Array, Field, message


def quota_entity() -> Field:
    """Whom a quota applies to: (entity type, name) pairs; a null name is the default."""
    return Field("entity", Array, fields=[
        Field("entity_type", STRING), Field("entity_name", STRING, nullable="0+")])


ALTER_CLIENT_QUOTAS_REQUEST = message("AlterClientQuotasRequest", 49, "0-1", "1+", [
    Field("entries", Array, fields=[
        quota_entity(),
        Field("ops", Array, fields=[
            Field("key", STRING), Field("value", FLOAT64), Field("remove", BOOL)]),
    ]),
    Field("validate_only", BOOL),
])

ALTER_CLIENT_QUOTAS_RESPONSE = message("AlterClientQuotasResponse", 49, "0-1", "1+", [
    Field("throttle_time_ms", INT32),
    Field("entries", Array, fields=[*error_fields(null_message=False), quota_entity()]),
])
