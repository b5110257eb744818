"""Metadata (key 3)."""

from wire.messages.common import authorized_operations, nstring
from wire.schema import BOOL, INT16, INT32, STRING, UUID, Array, Field, message

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
        nstring("rack", "1+"),
    ]),
    nstring("cluster_id", "2+"),
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
        authorized_operations("topic_authorized_operations", "8+"),
    ]),
    authorized_operations("cluster_authorized_operations", "8-10"),
    Field("error_code", INT16, "13+"),
])
