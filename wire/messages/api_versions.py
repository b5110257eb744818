"""ApiVersions (key 18)."""

from wire.schema import BOOL, INT16, INT32, INT64, STRING, Array, Field, message

API_VERSIONS_REQUEST = message("ApiVersionsRequest", 18, "0-5", "3+", [
    Field("client_software_name", STRING, "3+"),
    Field("client_software_version", STRING, "3+"),
    # v5: which cluster and node the client means to reach (Kafka 4.4).
    Field("cluster_id", STRING, "5+", nullable="5+", default=None),
    Field("node_id", INT32, "5+", default=-1),
])

API_VERSIONS_RESPONSE = message("ApiVersionsResponse", 18, "0-5", "3+", [
    Field("error_code", INT16),
    Field("api_keys", Array, fields=[
        Field("api_key", INT16),
        Field("min_version", INT16),
        Field("max_version", INT16),
    ]),
    Field("throttle_time_ms", INT32, "1+"),
    Field("supported_features", Array, "3+", tag=0, fields=[
        Field("name", STRING),
        Field("min_version", INT16),
        Field("max_version", INT16),
    ]),
    Field("finalized_features_epoch", INT64, "3+", tag=1, default=-1),
    Field("finalized_features", Array, "3+", tag=2, fields=[
        Field("name", STRING),
        Field("max_version_level", INT16),
        Field("min_version_level", INT16),
    ]),
    Field("zk_migration_ready", BOOL, "3+", tag=3),
])
