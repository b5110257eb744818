"""DescribeQuorum (key 55): the KRaft metadata quorum (KIP-595; v1 KIP-836, v2 KIP-853)."""

from wire.schema import INT16, INT32, INT64, STRING, UINT16, UUID, Array, Field, message

DESCRIBE_QUORUM_REQUEST = message("DescribeQuorumRequest", 55, "0-2", "0+", [
    Field("topics", Array, fields=[
        Field("topic_name", STRING),
        Field("partitions", Array, fields=[
            Field("partition_index", INT32),
        ]),
    ]),
])

_REPLICA_STATE = [
    Field("replica_id", INT32),
    Field("replica_directory_id", UUID, "2+"),
    Field("log_end_offset", INT64),
    Field("last_fetch_timestamp", INT64, "1+", default=-1),
    Field("last_caught_up_timestamp", INT64, "1+", default=-1),
]

DESCRIBE_QUORUM_RESPONSE = message("DescribeQuorumResponse", 55, "0-2", "0+", [
    Field("error_code", INT16),
    Field("error_message", STRING, "2+", nullable="2+"),
    Field("topics", Array, fields=[
        Field("topic_name", STRING),
        Field("partitions", Array, fields=[
            Field("partition_index", INT32),
            Field("error_code", INT16),
            Field("error_message", STRING, "2+", nullable="2+"),
            Field("leader_id", INT32),
            Field("leader_epoch", INT32),
            Field("high_watermark", INT64),
            Field("current_voters", Array, fields=list(_REPLICA_STATE)),
            Field("observers", Array, fields=list(_REPLICA_STATE)),
        ]),
    ]),
    Field("nodes", Array, "2+", fields=[
        Field("node_id", INT32, "2+"),
        Field("listeners", Array, "2+", fields=[
            Field("name", STRING, "2+"),
            Field("host", STRING, "2+"),
            Field("port", UINT16, "2+"),
        ]),
    ]),
])
