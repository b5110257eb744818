"""aiokafka consumer groups: two members share 6 partitions, a third joins, all stop,
and a newcomer resumes from the committed offsets without loss."""

from __future__ import annotations

from client_tests.group_members import (
    PARTITIONS,
    AioKafkaMember,
    balanced,
    check_no_loss,
    produce,
)
from emulator import Cluster
from emulator.testing import wait_for


def test_members_join_balance_and_resume(group_cluster: Cluster,
                                         topic_name: str) -> None:
    c = group_cluster
    c.create_topic(topic_name, PARTITIONS, 3)
    produced = produce(c.bootstrap_servers, topic_name, 60)
    members = [AioKafkaMember(f"aio-{i}", c.bootstrap_servers, topic_name, "aio-grp")
               for i in range(2)]
    for m in members:
        m.start()
    wait_for(balanced(members, [3, 3]), "two members with three partitions each")
    members.append(AioKafkaMember("aio-2", c.bootstrap_servers, topic_name, "aio-grp"))
    members[2].start()
    wait_for(balanced(members, [2, 2, 2]), "three members with two partitions each")
    wait_for(lambda: sum(len(m.values) for m in members) >= 60, "the first 60 records")
    for m in members:
        m.stop()

    produced += produce(c.bootstrap_servers, topic_name, 30, start=60)
    late = AioKafkaMember("aio-late", c.bootstrap_servers, topic_name, "aio-grp")
    late.start()
    wait_for(lambda: len(late.values) >= 30, "the newcomer to read the last 30 records")
    late.stop()
    check_no_loss(produced, [*members, late])
    assert set(produced[60:]) <= set(late.values)
