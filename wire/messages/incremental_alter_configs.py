"""IncrementalAlterConfigs (key 44)."""

from wire.messages.common import config_change_request, config_change_response
from wire.schema import INT8, STRING, Field, message

INCREMENTAL_ALTER_CONFIGS_REQUEST = message(
    "IncrementalAlterConfigsRequest", 44, "0-1", "1+", config_change_request([
        Field("name", STRING),
        Field("config_operation", INT8),  # 0 set, 1 delete, 2 append, 3 subtract
        Field("value", STRING, nullable="0+"),
    ]))

INCREMENTAL_ALTER_CONFIGS_RESPONSE = message(
    "IncrementalAlterConfigsResponse", 44, "0-1", "1+", config_change_response())
