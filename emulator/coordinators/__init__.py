"""Kafka's coordinators: the state machines that live in internal topics.

One subpackage per kind of coordinator, each built on ``runtime`` (placement of a key
on a partition of its internal topic, loading when that partition's leader moves,
member epochs and fencing, session timeouts, deadline heaps):

- ``groups``: the group coordinator (``__consumer_offsets``): one group namespace,
  committed offsets, and the protocols below composed into one ``GroupCoordinator``;
- ``classic``: JoinGroup/SyncGroup/Heartbeat/LeaveGroup groups;
- ``consumer``: KIP-848 consumer groups (ConsumerGroupHeartbeat), their assignors,
  the topic regex and online migration to and from classic groups;
- ``streams``: KIP-1071 streams groups, their topology and task assignor;
- ``share``: KIP-932 share groups, share-partitions and ``__share_group_state``;
- ``transactions``: the transaction coordinator (``__transaction_state``);
- ``coordinator_log``: offsets and transactions as records of their internal topics.

The coordinators import from ``emulator.cluster`` (the partitions they write, the
cluster's configs); ``emulator.cluster`` never imports them. Like the cluster they do
no I/O and never await.
"""
