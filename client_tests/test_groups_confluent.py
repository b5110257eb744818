"""confluent-kafka (librdkafka) consumer groups over 6 partitions.

Eager (range) members with a crash, the cooperative-sticky assignor moving only the
partitions that must move, and the KIP-848 protocol (group.protocol=consumer); the
admin client lists, describes and deletes the group and reads its offsets.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from confluent_kafka import ConsumerGroupTopicPartitions
from confluent_kafka.admin import AdminClient

from client_tests.group_members import (
    PARTITIONS,
    ConfluentMember,
    balanced,
    check_no_loss,
    produce,
)
from emulator import Cluster
from emulator.testing import wait_for

CRASHING_MEMBER = textwrap.dedent("""
    import sys
    from confluent_kafka import Consumer
    c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[3],
                  "session.timeout.ms": 3000, "heartbeat.interval.ms": 300,
                  "auto.offset.reset": "earliest", "enable.auto.commit": False})
    c.subscribe([sys.argv[2]], on_assign=lambda c, ps: print(len(ps), flush=True))
    while True:
        c.poll(0.1)
""")


def test_eager_members_with_a_crash_and_admin(group_cluster: Cluster,
                                              topic_name: str) -> None:
    c = group_cluster
    group = "cf-eager"
    c.create_topic(topic_name, PARTITIONS, 3)
    produced = produce(c.bootstrap_servers, topic_name, 60)
    members = [ConfluentMember(f"cf-{i}", c.bootstrap_servers, topic_name, group)
               for i in range(2)]
    for m in members:
        m.start()
    crasher = subprocess.Popen([sys.executable, "-c", CRASHING_MEMBER, c.bootstrap_servers,
                                topic_name, group], stdout=subprocess.PIPE, text=True)
    try:
        def three_way() -> bool:
            parts = [m.partitions() for m in members]
            return [len(p) for p in parts] == [2, 2] and not parts[0] & parts[1]

        wait_for(three_way, "two in-process members with two partitions each")
        admin = AdminClient({"bootstrap.servers": c.bootstrap_servers})
        desc = admin.describe_consumer_groups([group])[group].result(10)
        assert len(desc.members) == 3
        listed = admin.list_consumer_groups().result(10).valid
        assert group in {g.group_id for g in listed}
        crasher.kill()  # no LeaveGroup: the session timeout must notice
        crasher.wait(10)
        wait_for(balanced(members, [3, 3]), "the survivors to take the crashed member's "
                 "partitions after its session timeout")
        wait_for(lambda: set(produced) <= {v for m in members for v in m.values},
                 "the survivors to read every record")
    finally:
        crasher.kill()
    for m in members:
        m.stop()
    # the crashed member committed nothing: its partitions were read by the survivors
    check_no_loss(produced, members)
    res = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])
    offsets = res[group].result().topic_partitions
    assert sum(tp.offset for tp in offsets if tp.topic == topic_name) == 60
    assert admin.delete_consumer_groups([group])[group].result(10) is None


def test_cooperative_sticky_moves_only_what_must_move(group_cluster: Cluster,
                                                      topic_name: str) -> None:
    c = group_cluster
    c.create_topic(topic_name, PARTITIONS, 3)
    produced = produce(c.bootstrap_servers, topic_name, 30)
    conf = {"partition.assignment.strategy": "cooperative-sticky"}
    members = [ConfluentMember(f"coop-{i}", c.bootstrap_servers, topic_name, "cf-coop", **conf)
               for i in range(2)]
    for m in members:
        m.start()
    wait_for(balanced(members, [3, 3]), "two members with three partitions each")
    before = [m.partitions() for m in members]
    revoked_before = [len(m.revoked) for m in members]
    members.append(ConfluentMember("coop-2", c.bootstrap_servers, topic_name, "cf-coop",
                                   **conf))
    members[2].start()
    wait_for(balanced(members, [2, 2, 2]), "three members with two partitions each")
    for m, had, n in zip(members[:2], before, revoked_before, strict=True):
        gone = set().union(*m.revoked[n:])
        assert len(gone) == 1 and gone <= had  # one partition moved, the others stayed
        assert m.partitions() == had - gone
    wait_for(lambda: sum(len(m.values) for m in members) >= 30, "every record")
    for m in members:
        m.stop()
    check_no_loss(produced, members)


def test_consumer_group_protocol(group_cluster: Cluster, topic_name: str) -> None:
    c = group_cluster
    c.create_topic(topic_name, PARTITIONS, 3)
    produced = produce(c.bootstrap_servers, topic_name, 60)
    conf = {"group.protocol": "consumer"}
    members = [ConfluentMember(f"k848-{i}", c.bootstrap_servers, topic_name, "cf-848", **conf)
               for i in range(3)]
    for m in members:
        m.start()
    wait_for(balanced(members, [2, 2, 2]), "three members with two partitions each")
    admin = AdminClient({"bootstrap.servers": c.bootstrap_servers})
    desc = admin.describe_consumer_groups(["cf-848"])["cf-848"].result(10)
    assert len(desc.members) == 3
    members[0].stop()  # leaves with epoch -1
    wait_for(balanced(members[1:], [3, 3]), "the two remaining members with three each")
    wait_for(lambda: sum(len(m.values) for m in members) >= 60, "every record")
    for m in members[1:]:
        m.stop()
    check_no_loss(produced, members)


def test_static_member_restart_keeps_its_partitions(group_cluster: Cluster,
                                                    topic_name: str) -> None:
    """The generation and state are read on the wire (Heartbeat, DescribeGroups), so
    this runs on both targets."""
    from client_tests.rawkafka import Conn, classic_generation, describe_group, find_coordinator

    c = group_cluster
    c.create_topic(topic_name, PARTITIONS, 3)
    conf = {"session.timeout.ms": 6000}

    def member(i: int) -> ConfluentMember:
        return ConfluentMember(f"static-{i}", c.bootstrap_servers, topic_name, "cf-static",
                               **{"group.instance.id": f"instance-{i}", **conf})

    members = [member(0), member(1)]
    for m in members:
        m.start()
    wait_for(balanced(members, [3, 3]), "two static members with three partitions each")
    had = members[1].partitions()
    revoked = len(members[0].revoked)
    conn = Conn(c, c.broker_ids.index(find_coordinator(c, "cf-static")))
    ids = {m["group_instance_id"]: m["member_id"]
           for m in describe_group(conn, "cf-static")["members"]}
    generation = classic_generation(conn, "cf-static", ids["instance-0"])
    members[1].stop()  # a static member leaves no LeaveGroup behind
    members[1] = member(1)
    members[1].start()
    wait_for(lambda: members[1].partitions() == had, "the restarted member's old partitions")
    assert len(members[0].revoked) == revoked  # the other member never rebalanced
    assert describe_group(conn, "cf-static")["group_state"] == "Stable"
    assert classic_generation(conn, "cf-static", ids["instance-0"]) == generation
    conn.close()
    for m in members:
        m.stop()
