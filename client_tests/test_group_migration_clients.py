"""Online classic <-> consumer group migration with real clients (KIP-848's rolling
upgrade and downgrade): two kafka-python consumers (classic protocol) hold a group,
a confluent-kafka consumer with group.protocol=consumer joins it (the group becomes a
consumer group whose classic members go on with JoinGroup/SyncGroup/Heartbeat), the
three share the partitions, and when the KIP-848 member leaves the group is classic
again. Records are produced throughout; none is lost and none committed is read twice.
The same with Kafka's own 4.4 Java consumers, the classic ones on the cooperative-sticky
assignor (owned partitions in their JoinGroup metadata: the two-step revocation).
Runs on the emulator and, with ``--target kafka``, on a real Kafka 4.4 (whose default
group.consumer.migration.policy is bidirectional, as here).
"""

from __future__ import annotations

import subprocess
import threading

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient

from client_tests.group_members import (
    PARTITIONS,
    ConfluentMember,
    KafkaPythonMember,
    Member,
    balanced,
    check_no_loss,
)
from client_tests.test_share_groups_java import JVM, require_java
from emulator import Cluster
from emulator.testing import wait_for


class Producing(threading.Thread):
    """Produces numbered records round-robin over the partitions until stopped."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.topic = bootstrap, topic
        self.stopping = threading.Event()
        self.values: list[bytes] = []

    def run(self) -> None:
        p = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 2})
        i = 0
        while not self.stopping.is_set():
            v = b"m%06d" % i
            p.produce(self.topic, value=v, partition=i % PARTITIONS)
            self.values.append(v)
            i += 1
            p.poll(0)
            self.stopping.wait(0.01)
        assert p.flush(20) == 0

    def stop(self) -> list[bytes]:
        self.stopping.set()
        self.join(30)
        return self.values


def group_type(admin: AdminClient, group: str) -> str:
    listed = admin.list_consumer_groups().result(10)
    for g in listed.valid:
        if g.group_id == group:
            return str(g.type).rsplit(".", 1)[-1].lower()
    return ""


def described(admin: AdminClient, group: str) -> str:
    """The group as DescribeConsumerGroups shows it: its type and state, and each member
    with its assigned partitions (for a failure's message)."""
    try:
        d = admin.describe_consumer_groups([group])[group].result(10)
    except Exception as e:  # noqa: BLE001 - a message, not a check
        return f"(DescribeGroups failed: {e})"
    rows = [f"{m.client_id} {m.member_id}: "
            f"{sorted(tp.partition for tp in m.assignment.topic_partitions)}"
            for m in d.members]
    return f"{d.type} {d.state}, members: " + "; ".join(rows)


def test_classic_group_upgrades_and_downgrades_online(group_cluster: Cluster,
                                                      topic_name: str) -> None:
    c = group_cluster
    group = f"mig-{topic_name}"
    c.create_topic(topic_name, PARTITIONS, 3)
    admin = AdminClient({"bootstrap.servers": c.bootstrap_servers})
    producer = Producing(c.bootstrap_servers, topic_name)
    producer.start()
    classic = [KafkaPythonMember(f"classic-{i}", c.bootstrap_servers, topic_name, group)
               for i in range(2)]
    for m in classic:
        m.start()
    wait_for(balanced(classic, [3, 3]), "two classic members with three partitions each",
             timeout=60)
    assert group_type(admin, group) == "classic"

    modern = ConfluentMember("kip848", c.bootstrap_servers, topic_name, group,
                             **{"group.protocol": "consumer"})
    modern.start()
    members = [*classic, modern]
    try:
        wait_for(balanced(members, [2, 2, 2]),
                 "the KIP-848 member sharing with the classic ones", timeout=60)
    except AssertionError as e:  # and where the coordinator stood
        raise AssertionError(f"{e}\nthe coordinator: {described(admin, group)}") from None
    assert group_type(admin, group) == "consumer"
    desc = admin.describe_consumer_groups([group])["mig-" + topic_name].result(10)
    assert len(desc.members) == 3
    seen = sum(len(m.values) for m in members)
    wait_for(lambda: sum(len(m.values) for m in members) > seen + 50,
             "records flowing in the mixed group")

    modern.stop()  # the last consumer-protocol member leaves: the group turns classic
    wait_for(balanced(classic, [3, 3]), "the classic members alone again", timeout=60)
    wait_for(lambda: group_type(admin, group) == "classic", "the group classic again")
    produced = producer.stop()
    wait_for(lambda: len({v for m in members for v in m.values}) >= len(produced),
             "every record read", timeout=60)
    for m in classic:
        m.stop()
    check_no_loss(produced, members)


class JavaMember(Member):
    """Kafka's 4.4 Java consumer (client_tests/java/src/GroupMember.java) in a JVM, with
    the classic (cooperative-sticky) or the consumer group protocol."""

    def __init__(self, name: str, bootstrap: str, topic: str, group: str,
                 protocol: str) -> None:
        super().__init__(name)
        self.args = [bootstrap, group, topic, protocol]

    def loop(self) -> None:
        proc = subprocess.Popen(JVM + ["GroupMember", *self.args], text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        reader = threading.Thread(target=self._read, args=(proc,), daemon=True)
        reader.start()
        self.ready.set()
        self.stopping.wait()
        try:
            proc.stdin.write("quit\n")
            proc.stdin.close()
            proc.wait(timeout=60)
        except (BrokenPipeError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        reader.join(10)

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            kind, _, rest = line.rstrip("\n").partition(" ")
            if kind == "R":
                self._record([rest.split(" ", 2)[2].encode()])
            elif kind == "P":
                with self.lock:
                    self.assigned = {int(p) for p in rest.split()}
            elif kind in ("C", "CF"):
                self._committed(kind == "C")


def test_java_classic_cooperative_members_migrate_online(group_cluster: Cluster,
                                                          topic_name: str) -> None:
    """Kafka's own 4.4 consumers: two classic members with the cooperative-sticky assignor
    (their JoinGroup metadata reports owned partitions, so revocation is the two-step
    one), a third with group.protocol=consumer joins and leaves; no record is lost and
    none whose offset was committed is read again."""
    require_java()
    c = group_cluster
    group = f"jmig-{topic_name}"
    c.create_topic(topic_name, PARTITIONS, 3)
    admin = AdminClient({"bootstrap.servers": c.bootstrap_servers})
    producer = Producing(c.bootstrap_servers, topic_name)
    producer.start()
    classic = [JavaMember(f"jc-{i}", c.bootstrap_servers, topic_name, group, "classic")
               for i in range(2)]
    for m in classic:
        m.start()
    wait_for(balanced(classic, [3, 3]), "two classic Java members", timeout=90)
    assert group_type(admin, group) == "classic"
    modern = JavaMember("jk", c.bootstrap_servers, topic_name, group, "consumer")
    modern.start()
    members = [*classic, modern]
    wait_for(balanced(members, [2, 2, 2]), "the KIP-848 Java member sharing", timeout=90)
    assert group_type(admin, group) == "consumer"
    seen = sum(len(m.values) for m in members)
    wait_for(lambda: sum(len(m.values) for m in members) > seen + 50, "records flowing")
    modern.stop()
    wait_for(balanced(classic, [3, 3]), "the classic members alone again", timeout=90)
    wait_for(lambda: group_type(admin, group) == "classic", "the group classic again")
    produced = producer.stop()
    wait_for(lambda: len({v for m in members for v in m.values}) >= len(produced),
             "every record read", timeout=60)
    for m in classic:
        m.stop()
    check_no_loss(produced, members)  # and nothing committed was read again
