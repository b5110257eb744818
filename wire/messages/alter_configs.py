"""AlterConfigs (key 33)."""

from wire.messages.common import config_change_request, config_change_response, config_value
from wire.schema import message

ALTER_CONFIGS_REQUEST = message(
    "AlterConfigsRequest", 33, "0-2", "2+", config_change_request(config_value()))

ALTER_CONFIGS_RESPONSE = message("AlterConfigsResponse", 33, "0-2", "2+", config_change_response())
