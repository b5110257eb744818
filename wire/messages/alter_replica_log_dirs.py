"""AlterReplicaLogDirs (key 34)."""

from wire.messages.common import by_topic, partition_error, topic_partitions
from wire.schema import INT32, STRING, Array, Field, message

ALTER_REPLICA_LOG_DIRS_REQUEST = message("AlterReplicaLogDirsRequest", 34, "1-2", "2+", [
    Field("dirs", Array, fields=[Field("path", STRING), topic_partitions()]),
])

ALTER_REPLICA_LOG_DIRS_RESPONSE = message("AlterReplicaLogDirsResponse", 34, "1-2", "2+", [
    Field("throttle_time_ms", INT32),
    by_topic("results", partition_error(), topic=[Field("topic_name", STRING)]),
])
