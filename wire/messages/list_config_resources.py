"""ListConfigResources (key 74); v0 was ListClientMetricsResources (KIP-714), v1 lists
every config resource type (KIP-1142)."""

from wire.schema import INT8, INT16, INT32, STRING, Array, Field, message

LIST_CONFIG_RESOURCES_REQUEST = message("ListConfigResourcesRequest", 74, "0-1", "0+", [
    Field("resource_types", Array(INT8), "1+"),
])

LIST_CONFIG_RESOURCES_RESPONSE = message("ListConfigResourcesResponse", 74, "0-1", "0+", [
    Field("throttle_time_ms", INT32),
    Field("error_code", INT16),
    Field("config_resources", Array, fields=[
        Field("resource_name", STRING),
        Field("resource_type", INT8, "1+", default=16),
    ]),
])
