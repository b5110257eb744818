"""DescribeCluster (key 60)."""

from wire.messages.common import authorized_operations, nstring, response_head
from wire.schema import BOOL, INT8, INT32, STRING, Array, Field, message

DESCRIBE_CLUSTER_REQUEST = message("DescribeClusterRequest", 60, "0-2", "0+", [
    Field("include_cluster_authorized_operations", BOOL),
    Field("endpoint_type", INT8, "1+", default=1),
    Field("include_fenced_brokers", BOOL, "2+"),
])

DESCRIBE_CLUSTER_RESPONSE = message("DescribeClusterResponse", 60, "0-2", "0+", [
    *response_head(),
    Field("endpoint_type", INT8, "1+", default=1),
    Field("cluster_id", STRING),
    Field("controller_id", INT32, default=-1),
    Field("brokers", Array, fields=[
        Field("broker_id", INT32),
        Field("host", STRING),
        Field("port", INT32),
        nstring("rack"),
        Field("is_fenced", BOOL, "2+"),
    ]),
    authorized_operations("cluster_authorized_operations"),
])
