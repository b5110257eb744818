"""Metadata (key 3)."""

from wire.schema import BOOL, INT16, INT32, STRING, UUID, Array, Field, message

NO_AUTHORIZED_OPERATIONS = -(2**31)

METADATA_REQUEST = message("MetadataRequest", 3, "0-13", "9+", [
    Field("topics", Array, nullable="1+", fields=[
        Field("topic_id", UUID, "10+"),
        Field("name", STRING, nullable="10+"),
    ]),
    Field("allow_auto_topic_creation", BOOL, "4+", default=True),
    Field("include_cluster_authorized_operations", BOOL, "8-10"),
    Field("include_topic_authorized_operations", BOOL, "8+"),
])

METADATA_RESPONSE = message("MetadataResponse", 3, "0-13", "9+", [
    Field("throttle_time_ms", INT32, "3+"),
    Field("brokers", Array, fields=[
        Field("node_id", INT32),
        Field("host", STRING),
        Field("port", INT32),
        Field("rack", STRING, "1+", nullable="1+", default=None),
    ]),
    Field("cluster_id", STRING, "2+", nullable="2+", default=None),
    Field("controller_id", INT32, "1+", default=-1),
    Field("topics", Array, fields=[
        Field("error_code", INT16),
        Field("name", STRING, nullable="12+"),
        Field("topic_id", UUID, "10+"),
        Field("is_internal", BOOL, "1+"),
        Field("partitions", Array, fields=[
            Field("error_code", INT16),
            Field("partition_index", INT32),
            Field("leader_id", INT32),
            Field("leader_epoch", INT32, "7+", default=-1),
            Field("replica_nodes", Array(INT32)),
            Field("isr_nodes", Array(INT32)),
            Field("offline_replicas", Array(INT32), "5+"),
        ]),
        Field("topic_authorized_operations", INT32, "8+", default=NO_AUTHORIZED_OPERATIONS),
    ]),
    Field("cluster_authorized_operations", INT32, "8-10", default=NO_AUTHORIZED_OPERATIONS),
    Field("error_code", INT16, "13+"),
])
