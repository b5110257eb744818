"""test_share_groups_authz.py's scenarios against a real Apache Kafka 4.4 with
StandardAuthorizer: the same requests from alice over SASL_PLAINTEXT, the ACLs created
over the wire by admin (a super user) and waited for on every broker, the same codes.
The Kafka is test_security_acls_kafka.py's, with SHARE_TEST_CONFIG (share members
heartbeat every 500 ms, so a member learns its assignment quickly)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kafka_cluster import KafkaCluster, small_cluster_config
from targets import SHARE_TEST_CONFIG
from test_security_acls import Case, Client, _messages
from test_security_acls_kafka import ANY_FILTER, AUTHZ, JAAS, _acl_count, _grant
from test_share_groups_authz import (
    CASES,
    SHARE_FETCH_TOPIC_READ,
    SHARE_REFUSAL_MESSAGES,
    check_share,
    member_id,
    names,
    share_api_code,
    share_fetch_topic_read_scenario,
    share_topic_acls_answer,
    share_topic_acls_scenario,
)

from emulator.security.acl import Op, PermissionType
from emulator.security.acl import ResourceType as RT
from emulator.testing import wait_for


@pytest.fixture(scope="module")
def kafka() -> Iterator[KafkaCluster]:
    cfg = {**small_cluster_config(3), **AUTHZ, **SHARE_TEST_CONFIG,
           "sasl.enabled.mechanisms": "PLAIN",
           "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS}
    with KafkaCluster(3, broker_config=cfg, controller_config={**AUTHZ, **SHARE_TEST_CONFIG},
                      listeners={"SASL_PLAINTEXT": "SASL_PLAINTEXT"}) as k:
        yield k
        # SIGTERMed together with their controller, brokers wait out its absence (20 s
        # each) before they exit: nothing of this cluster needs a clean shutdown
        for bid in k.broker_ids:
            k.kill_broker(bid)


class Acls:
    """admin's CreateAcls for alice, each waited for on every broker (ACLs reach the
    brokers through the metadata log), and the removal of them all."""

    def __init__(self, boot: str) -> None:
        self.boot, self.count = boot, 0
        self.admin = Client(boot, "admin", 0)

    def grant(self, rtype: RT, name: str, op: Op, perm: PermissionType = PermissionType.ALLOW
              ) -> None:
        _grant(self.admin, rtype, name, op, perm)
        self.count += 1
        self._wait()

    def _wait(self) -> None:
        for i in range(len(self.boot.split(","))):
            c = Client(self.boot, "admin", i)
            try:
                wait_for(lambda c=c: _acl_count(c) == self.count,
                         f"{self.count} ACLs on broker {i}")
            finally:
                c.close()

    def clear(self) -> None:
        self.admin.call(31, 3, {"filters": [ANY_FILTER]})
        self.count = 0
        self._wait()
        self.admin.close()


def _create(admin: Client, topic: str) -> bytes:
    r = admin.call(19, 7, {"topics": [{"name": topic, "num_partitions": 1,
                                       "replication_factor": 3}], "timeout_ms": 30000})
    assert r["topics"][0]["error_code"] == 0, r
    return r["topics"][0]["topic_id"]


def _coordinator(admin: Client, group: str) -> str:
    """The group's coordinator (COORDINATOR_NOT_AVAILABLE until __consumer_offsets is)."""
    def find() -> str | None:
        [c] = admin.call(10, 4, {"key_type": 0, "coordinator_keys": [group]})["coordinators"]
        return f"{c['host']}:{c['port']}" if c["error_code"] == 0 else None
    return wait_for(find, f"{group}'s coordinator", timeout=60)


@pytest.mark.parametrize("acl", ["none", "allow", "deny"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_share_api_authorization_on_real_kafka(kafka: KafkaCluster, case: Case,
                                               acl: str) -> None:
    topic, group = names()
    acls = Acls(kafka.bootstrap("SASL_PLAINTEXT"))
    try:
        _create(acls.admin, topic)
        code = share_api_code(case, acl, topic, group, acls.grant,
                              lambda g: Client(_coordinator(acls.admin, g), "alice"))
    finally:
        acls.clear()
    check_share(case, acl, code)


def test_share_fetch_needs_read_on_each_topic_on_real_kafka(kafka: KafkaCluster) -> None:
    topic, group = names()
    boot = kafka.bootstrap("SASL_PLAINTEXT")
    acls = Acls(boot)
    admin = acls.admin
    try:
        topic_id = _create(admin, topic)

        def join() -> None:
            """admin joins the group and heartbeats until assigned the partition: the
            coordinator initializes the share-partition's state first."""
            member = Client(_coordinator(admin, group), "admin")
            epoch, admin_member = [0], member_id()

            def assigned() -> bool:
                r = member.call(76, 1, {"group_id": group, "member_id": admin_member,
                                        "member_epoch": epoch[0], "rack_id": None,
                                        "subscribed_topic_names": [topic]})
                assert r["error_code"] == 0, r
                epoch[0] = r["member_epoch"]
                got = r["assignment"]
                return bool(got and got["topic_partitions"])
            try:
                wait_for(assigned, f"a member of {group} assigned {topic}", timeout=30)
            finally:
                member.close()

        def leader() -> Client:
            def find() -> int | None:
                [t] = admin.call(3, 12, {"topics": [{"topic_id": topic_id, "name": None}],
                                         "allow_auto_topic_creation": False})["topics"]
                ok = t["error_code"] == 0 and t["partitions"][0]["leader_id"] >= 0
                return t["partitions"][0]["leader_id"] if ok else None
            return Client(boot, "alice", kafka.broker_ids.index(wait_for(find, "a leader")))

        got = share_fetch_topic_read_scenario(
            topic, topic_id, group, join, lambda rt, name, op: acls.grant(rt, name, op),
            leader)
    finally:
        acls.clear()
    assert got == SHARE_FETCH_TOPIC_READ


def test_share_apis_need_topic_acls_on_real_kafka(kafka: KafkaCluster) -> None:
    topic, group = names()
    other = topic + "-o"
    acls = Acls(kafka.bootstrap("SASL_PLAINTEXT"))
    try:
        for t in (topic, other):
            _create(acls.admin, t)
        got = share_topic_acls_scenario(
            topic, other, group, lambda rt, name, op: acls.grant(rt, name, op),
            lambda g: Client(_coordinator(acls.admin, g), "alice"))
    finally:
        acls.clear()
    assert got == share_topic_acls_answer(group)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_share_refusal_messages_as_kafka_on_real_kafka(kafka: KafkaCluster, case: Case) -> None:
    topic, group = names()
    boot = kafka.bootstrap("SASL_PLAINTEXT")
    admin = Client(boot, "admin", 0)
    try:
        _create(admin, topic)
    finally:
        admin.close()
    c = Client(boot, "alice", 0)
    try:
        r = c.call(case.key, case.version, case.body(topic, group, ""))
    finally:
        c.close()
    assert set(_messages(r)) == {SHARE_REFUSAL_MESSAGES.get(case.name)}
