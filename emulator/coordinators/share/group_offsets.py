"""The share groups' offsets admin APIs, as the group coordinator serves them:
DescribeShareGroupOffsets (90), AlterShareGroupOffsets (91), DeleteShareGroupOffsets (92).

On Kafka these are the group coordinator's (GroupCoordinatorService's
describeShareGroupOffsets, alterShareGroupOffsets, deleteShareGroupOffsets), which asks
the share coordinator for each share-partition's state. Here they read and write the
share-partitions the ``SharePartitionManager`` holds, through its public methods only
(``share_partition``, ``partition_keys``, ``persist``, ``forget``, ``read_limit``): a
role of their own, kept out of the share-partition leader's module (sessions, fetch,
acknowledge), which was over 600 lines with them.
"""

from __future__ import annotations

from emulator.coordinators.share import messages as shm
from emulator.coordinators.share.coordinator import SharePartitionManager
from emulator.coordinators.share.groups import DEAD, ShareGroup
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

NOT_HOSTED = "This server does not host this topic-partition."
NO_TOPIC_ID = b"\x00" * 16


def describe_offsets(sc: SharePartitionManager, group_id: str,
                     topics: list[tuple[str, list[int]]] | None,
                     with_lag: bool) -> list[shm.ShareTopicOffsets]:
    """DescribeShareGroupOffsets for one group; raises group-level KafkaError (a group
    of another type). A group id not in use is answered as a share group without
    state (no topics, or the named partitions at start offset -1), as Kafka 4.4
    answers it (measured)."""
    if group_id not in sc.groups:
        other = sc.gc.groups.get(group_id)
        if other is not None and other.state != DEAD:
            sc.membership.share_group(group_id)  # GROUP_ID_NOT_FOUND: not a share group
    by_name = sc.state.topics
    if topics is None:
        by_id = sc.state.topics_by_id
        found: dict[str, list[int]] = {}
        for key in sorted(sc.partition_keys(group_id), key=lambda k: (k[1], k[2])):
            t = by_id.get(key[1])
            if t is not None and sc.partitions[key].initialized:
                found.setdefault(t.name, []).append(key[2])
        topics = sorted(found.items())
    out: list[shm.ShareTopicOffsets] = []
    for name, parts in topics:
        topic = by_name.get(name)
        rows: list[shm.SharePartitionOffset] = []
        for idx in parts:
            # Kafka's state summary for a partition without state: leader epoch 0
            row: shm.SharePartitionOffset = {"partition_index": idx, "start_offset": -1,
                                             "leader_epoch": 0, "lag": -1,
                                             "error_code": E.NONE}
            if topic is None or not 0 <= idx < len(topic.partitions):
                row["error_code"], row["error_message"] = E.UNKNOWN_TOPIC_OR_PARTITION, NOT_HOSTED
            else:
                sp = sc.partitions.get((group_id, topic.id, idx))
                if sp is not None and sp.initialized:
                    p = topic.partitions[idx]
                    row["start_offset"], row["leader_epoch"] = sp.reported_start, sp.leader_epoch
                    if with_lag:
                        row["lag"] = max(0, sc.read_limit(group_id, p) - sp.start_offset
                                         - sp.delivery_complete_count())
            rows.append(row)
        out.append({"topic_name": name, "topic_id": topic.id if topic else NO_TOPIC_ID,
                    "partitions": rows})
    return out


def _empty_group(sc: SharePartitionManager, group_id: str, create: bool) -> ShareGroup:
    """The share group an alter or delete acts on: it must have no members."""
    if not group_id:
        raise KafkaError(E.INVALID_GROUP_ID, "The group id is invalid.")
    group = sc.membership.share_group(group_id, create=create)
    if not group.is_empty:
        raise KafkaError(E.NON_EMPTY_GROUP, "The group is not empty.")
    return group


def alter_offsets(sc: SharePartitionManager, group_id: str,
                  topics: list[tuple[str, list[tuple[int, int]]]]) -> list[shm.AlteredShareTopic]:
    """AlterShareGroupOffsets: set SPSOs of an empty (or new) share group."""
    _empty_group(sc, group_id, create=True)
    out: list[shm.AlteredShareTopic] = []
    for name, parts in topics:
        topic = sc.state.topics.get(name)
        rows: list[shm.AlteredSharePartition] = []
        for idx, offset in parts:
            if topic is None or not 0 <= idx < len(topic.partitions):
                rows.append({"partition_index": idx,
                             "error_code": E.UNKNOWN_TOPIC_OR_PARTITION,
                             "error_message": NOT_HOSTED})
                continue
            sc.state_coordinator.ensure_state_topic()
            sp = sc.share_partition(group_id, topic.id, idx)
            sp.initialize(offset, sp.state_epoch + 1)
            sc.persist(sp)
            rows.append({"partition_index": idx, "error_code": E.NONE})
        out.append({"topic_name": name, "topic_id": topic.id if topic else NO_TOPIC_ID,
                    "partitions": rows})
    sc.mark_changed()
    return out


def delete_offsets(sc: SharePartitionManager, group_id: str,
                   topic_names: list[str]) -> list[shm.DeletedShareTopic]:
    """DeleteShareGroupOffsets: forget the state of whole topics for an empty group."""
    _empty_group(sc, group_id, create=False)
    out: list[shm.DeletedShareTopic] = []
    for name in topic_names:
        topic = sc.state.topics.get(name)
        if topic is None:
            out.append({"topic_name": name, "topic_id": NO_TOPIC_ID,
                        "error_code": E.UNKNOWN_TOPIC_OR_PARTITION,
                        "error_message": NOT_HOSTED})
            continue
        for key in [k for k in sc.partition_keys(group_id) if k[1] == topic.id]:
            sc.forget(key)
        out.append({"topic_name": name, "topic_id": topic.id, "error_code": E.NONE})
    sc.mark_changed()
    return out


__all__ = ["alter_offsets", "delete_offsets", "describe_offsets"]
