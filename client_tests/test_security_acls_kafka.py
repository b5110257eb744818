"""The authorization table of test_security_acls.py against a real Apache Kafka 4.4 with
StandardAuthorizer (client_tests/kafka_cluster.py): the same requests, ACLs created over
the wire with CreateAcls by a super user, the same codes. Kafka: a SASL_PLAINTEXT
listener with PLAIN users admin and alice; the inter-broker PLAINTEXT listener's
ANONYMOUS principal is a super user so the brokers can work."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Callable, Iterator

import pytest
from kafka_cluster import KafkaCluster, small_cluster_config
from test_security_acls import (
    ACL_CAP_ANSWER,
    ACL_VALIDATION_ANSWER,
    CASES,
    CONSUMER_HEARTBEAT_SUBSCRIPTION,
    FETCH_SESSION_CODES,
    OFFSET_FETCH_ANSWER,
    USERS,
    Case,
    Client,
    _names,
    _records,
    acl_cap_scenario,
    acl_validation_scenario,
    answer,
    check,
    check_refusal_messages,
    consumer_heartbeat_subscription_scenario,
    delegation_token_codes,
    fetch_session_scenario,
    offset_fetch_scenario,
    route,
    streams_heartbeat_scenario,
)
from test_security_sasl import (
    Raw,
    handshake_v0_scenario,
    no_reauthentication_scenario,
    reauthentication_scenario,
    requests_before_authentication_scenario,
    sasl_on_plaintext_scenario,
    unsupported_mechanism_scenario,
)

from emulator.blocking_client import call as wire_call
from emulator.security.acl import Op, PermissionType
from emulator.security.acl import ResourceType as RT
from emulator.testing import wait_for

JAAS = ("org.apache.kafka.common.security.plain.PlainLoginModule required "
        'username="admin" password="admin-pw" '
        + " ".join(f'user_{u}="{p}"' for u, p in USERS.items()) + ";")
AUTHZ = {"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
         "super.users": "User:admin;User:ANONYMOUS"}
ANY_FILTER = {"resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
              "principal_filter": None, "host_filter": None, "operation": 1,
              "permission_type": 1}


@pytest.fixture(scope="module")
def kafka() -> Iterator[KafkaCluster]:
    cfg = {**small_cluster_config(3), **AUTHZ, "sasl.enabled.mechanisms": "PLAIN",
           "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS}
    with KafkaCluster(3, broker_config=cfg, controller_config=AUTHZ,
                      listeners={"SASL_PLAINTEXT": "SASL_PLAINTEXT"}) as k:
        yield k
        # SIGTERMed together with their controller, brokers wait out its absence (20 s
        # each) before they exit: nothing of this cluster needs a clean shutdown
        for bid in k.broker_ids:
            k.kill_broker(bid)


def _acl_count(admin: Client) -> int:
    resp = admin.call(29, 3, ANY_FILTER)
    return sum(len(r["acls"]) for r in resp["resources"])


def _controller_acl_count(kafka: KafkaCluster) -> int:
    """The ACLs the controller holds (DescribeAcls on its PLAINTEXT listener, as
    ANONYMOUS, a super user). A broker forwards some requests to the controller
    (AlterPartitionReassignments, CreateTopics and the other controller APIs), which
    authorizes them with ACLs it applies from the metadata log on its own schedule: a
    broker may have a new ACL before the controller has, so a test that waits only for
    the brokers can see the controller answer by the ACLs before."""
    port = kafka.controller.ports["CONTROLLER"]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        resp = wire_call(s, 29, 3, ANY_FILTER, "acl-count")
    return sum(len(r["acls"]) for r in resp["resources"])


def _grant(admin: Client, rtype: RT, name: str, op: Op, perm: PermissionType) -> None:
    resp = admin.call(30, 3, {"creations": [{
        "resource_type": int(rtype), "resource_name": name, "resource_pattern_type": 3,
        "principal": "User:alice", "host": "*", "operation": int(op),
        "permission_type": int(perm)}]})
    assert resp["results"][0]["error_code"] == 0, resp


@pytest.mark.parametrize("acl", ["none", "allow", "deny"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_api_authorization_on_real_kafka(kafka: KafkaCluster, case: Case, acl: str) -> None:
    topic, group, txn, name = _names(case)
    boot = kafka.bootstrap("SASL_PLAINTEXT")
    admin = Client(boot, "admin", 0)
    resp = admin.call(19, 7, {"topics": [{"name": topic, "num_partitions": 1,
                                          "replication_factor": 3}], "timeout_ms": 30000})
    assert resp["topics"][0]["error_code"] == 0, resp
    want = 0
    if acl in ("allow", "deny"):
        _grant(admin, case.rtype, name, case.op, PermissionType.ALLOW)
        want += 1
        for rtype, op in case.also:
            _grant(admin, rtype, case.resource_of(rtype, topic, group, txn), op,
                   PermissionType.ALLOW)
            want += 1
    if acl == "deny":
        _grant(admin, case.rtype, name, Op.ALL if case.rtype != RT.CLUSTER else case.op,
               PermissionType.DENY)
        want += 1
    # ACLs reach each broker and the controller through the metadata log: wait until
    # the controller and alice's broker have them.
    wait_for(lambda: _controller_acl_count(kafka) == want, f"{want} ACLs on the controller")
    wait_for(lambda: _acl_count(admin) == want, f"{want} ACLs on broker 1")
    address = route(admin, case, topic, group, txn)
    # ... and on the broker the request goes to
    if address != admin.bootstrap:
        there = Client(address, "admin")
        wait_for(lambda: _acl_count(there) == want, f"{want} ACLs on {address}")
        there.close()
    alice = Client(address, "alice")
    try:
        code = answer(alice, case, topic, group, txn)
    finally:
        alice.close()
        admin.call(31, 3, {"filters": [ANY_FILTER]})
        wait_for(lambda: _acl_count(admin) == 0, "no ACLs on broker 1")
        wait_for(lambda: _controller_acl_count(kafka) == 0, "no ACLs on the controller")
        admin.close()
    check(case, acl, code)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_refusal_messages_as_kafka_on_real_kafka(kafka: KafkaCluster, case: Case) -> None:
    topic, group, txn, _ = _names(case)
    boot = kafka.bootstrap("SASL_PLAINTEXT")
    admin = Client(boot, "admin", 0)
    resp = admin.call(19, 7, {"topics": [{"name": topic, "num_partitions": 1,
                                          "replication_factor": 3}], "timeout_ms": 30000})
    admin.close()
    assert resp["topics"][0]["error_code"] in (0, 36), resp  # 36: made by another case
    alice = Client(boot, "alice", 0)
    try:
        r = alice.call(case.key, case.version, case.body(topic, group, txn))
    finally:
        alice.close()
    check_refusal_messages(case, r)


def test_fetch_session_reauthorization_on_real_kafka(kafka: KafkaCluster) -> None:
    """The emulator's fetch-session scenario: Kafka re-authorizes the partitions a
    session holds on every incremental fetch."""
    boot = kafka.bootstrap("SASL_PLAINTEXT")
    admin, alice = Client(boot, "admin", 0), Client(boot, "alice", 0)

    def grant(t: str) -> None:
        _grant(admin, RT.TOPIC, t, Op.READ, PermissionType.ALLOW)
        wait_for(lambda: _described(admin, t) == 1, f"READ on {t} on broker 1")

    def revoke(t: str) -> None:
        resp = admin.call(31, 3, {"filters": [{**ANY_FILTER, "resource_type_filter": 2,
                                               "resource_name_filter": t,
                                               "pattern_type_filter": 3}]})
        assert resp["filter_results"][0]["error_code"] == 0, resp
        wait_for(lambda: _described(admin, t) == 0, f"no ACL on {t} on broker 1")

    try:
        seen = fetch_session_scenario(admin, alice, kafka.broker_ids[0], grant, revoke)
    finally:
        alice.close()
        admin.call(31, 3, {"filters": [ANY_FILTER]})
        admin.close()
    assert seen == FETCH_SESSION_CODES


def _described(admin: Client, topic: str) -> int:
    resp = admin.call(29, 3, {**ANY_FILTER, "resource_type_filter": 2,
                              "resource_name_filter": topic, "pattern_type_filter": 3})
    return sum(len(r["acls"]) for r in resp["resources"])


def test_delegation_tokens_over_sasl_on_real_kafka(kafka: KafkaCluster) -> None:
    assert delegation_token_codes(kafka.bootstrap("SASL_PLAINTEXT")) == (61, 61)


def test_create_topics_hides_configs_without_describe_configs_on_real_kafka(
        kafka: KafkaCluster) -> None:
    """What test_security_acls' emulator test expects, on Kafka: CREATE alone gives no
    partitions, factor or configs and topic_config_error_code 29."""
    boot = kafka.bootstrap("SASL_PLAINTEXT")
    admin = Client(boot, "admin", 0)
    hidden, shown = (f"ctk-{x}-{uuid.uuid4().hex[:6]}" for x in "hs")
    try:
        for t in (hidden, shown):
            _grant(admin, RT.TOPIC, t, Op.CREATE, PermissionType.ALLOW)
        _grant(admin, RT.TOPIC, shown, Op.DESCRIBE_CONFIGS, PermissionType.ALLOW)
        wait_for(lambda: _described(admin, hidden) == 1 and _described(admin, shown) == 2,
                 "the ACLs on broker 1")
        alice = Client(boot, "alice", 0)
        out = {}
        for t in (hidden, shown):
            r = alice.call(19, 7, {"topics": [{
                "name": t, "num_partitions": 1, "replication_factor": 1, "assignments": [],
                "configs": [{"name": "retention.ms", "value": "1000"}]}],
                "timeout_ms": 30000, "validate_only": False})
            out[t] = r["topics"][0]
        alice.close()
    finally:
        admin.call(31, 3, {"filters": [ANY_FILTER]})
        admin.close()
    h, s = out[hidden], out[shown]
    assert (h["error_code"], h["topic_config_error_code"], h["num_partitions"],
            h["replication_factor"], h["configs"]) == (0, 29, -1, -1, [])
    assert (s["error_code"], s["topic_config_error_code"], s["num_partitions"]) == (0, 0, 1)
    assert {e["name"]: e["value"] for e in s["configs"]}["retention.ms"] == "1000"


def test_offset_fetch_needs_describe_on_topics_on_real_kafka(kafka: KafkaCluster) -> None:
    boot = kafka.bootstrap("SASL_PLAINTEXT")
    admin = Client(boot, "admin", 0)
    want = [0]

    def grant(rtype: RT, name: str, op: Op) -> None:
        _grant(admin, rtype, name, op, PermissionType.ALLOW)
        want[0] += 1
        for i in range(len(boot.split(","))):  # alice talks to the group's coordinator
            c = Client(boot, "admin", i)
            wait_for(lambda c=c: _acl_count(c) == want[0], f"{want[0]} ACLs on broker {i}")
            c.close()

    try:
        got = offset_fetch_scenario(boot, grant)
    finally:
        admin.call(31, 3, {"filters": [ANY_FILTER]})
        admin.close()
    assert got == OFFSET_FETCH_ANSWER


def test_acl_operations_over_10000_records_on_real_kafka(kafka: KafkaCluster) -> None:
    assert acl_cap_scenario(kafka.bootstrap("SASL_PLAINTEXT")) == ACL_CAP_ANSWER


def test_acl_requests_kafka_refuses_on_real_kafka(kafka: KafkaCluster) -> None:
    assert acl_validation_scenario(kafka.bootstrap("SASL_PLAINTEXT")) == ACL_VALIDATION_ANSWER


# ---- the SASL wire scenarios of test_security_sasl.py on this Kafka (PLAIN only) -------
def _connect(kafka: KafkaCluster) -> Callable[[str], Raw]:
    def connect(listener: str) -> Raw:
        host, port = kafka.bootstrap(listener).split(",")[0].rsplit(":", 1)
        return Raw(socket.create_connection((host, int(port)), timeout=10))
    return connect


def test_requests_before_authentication_on_real_kafka(kafka: KafkaCluster) -> None:
    requests_before_authentication_scenario(_connect(kafka))


def test_sasl_on_a_plaintext_listener_on_real_kafka(kafka: KafkaCluster) -> None:
    sasl_on_plaintext_scenario(_connect(kafka))


def test_unsupported_mechanism_on_real_kafka(kafka: KafkaCluster) -> None:
    unsupported_mechanism_scenario(_connect(kafka), {"PLAIN"})


def test_no_reauthentication_by_default_on_real_kafka(kafka: KafkaCluster) -> None:
    no_reauthentication_scenario(_connect(kafka), ("alice", USERS["alice"]))


def test_handshake_v0_on_real_kafka(kafka: KafkaCluster) -> None:
    handshake_v0_scenario(_connect(kafka), ("alice", USERS["alice"]))


def test_reauthentication_with_connections_max_reauth_ms_on_real_kafka() -> None:
    """KIP-368 re-authentication needs connections.max.reauth.ms, so a Kafka of its own
    (one broker) with 60 s: the same scenario the emulator runs."""
    cfg = {**small_cluster_config(1), **AUTHZ, "sasl.enabled.mechanisms": "PLAIN",
           "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
           "connections.max.reauth.ms": "60000"}
    with KafkaCluster(1, broker_config=cfg, controller_config=AUTHZ,
                      listeners={"SASL_PLAINTEXT": "SASL_PLAINTEXT"}) as k:
        reauthentication_scenario(_connect(k), ("alice", USERS["alice"]),
                                  ("admin", USERS["admin"]), 60_000)


def _create(admin: Client, topic: str) -> None:
    resp = admin.call(19, 7, {"topics": [{"name": topic, "num_partitions": 1,
                                          "replication_factor": 3}], "timeout_ms": 30000})
    assert resp["topics"][0]["error_code"] == 0, resp


def _metadata(client: Client, topic: str | None = None) -> dict:
    return client.call(3, 12, {
        "topics": None if topic is None else [{"topic_id": b"\0" * 16, "name": topic}],
        "allow_auto_topic_creation": False, "include_topic_authorized_operations": True})


def test_metadata_lists_only_described_topics_and_fills_operations_on_real_kafka(
        kafka: KafkaCluster) -> None:
    """test_security_acls.py's Metadata scenario: READ implies DESCRIBE; topics alice
    may not describe are left out; authorized operations are READ and DESCRIBE."""
    mine, other = f"mine-{uuid.uuid4().hex[:6]}", f"other-{uuid.uuid4().hex[:6]}"
    boot = kafka.bootstrap("SASL_PLAINTEXT")
    admin = Client(boot, "admin", 0)
    try:
        for t in (mine, other):
            _create(admin, t)
        _grant(admin, RT.TOPIC, mine, Op.READ, PermissionType.ALLOW)
        wait_for(lambda: _described(admin, mine) == 1, f"READ on {mine} on broker 1")
        alice = Client(boot, "alice", 0)
        try:
            def listed() -> dict | None:
                by_name = {t["name"]: t for t in _metadata(alice)["topics"]}
                return by_name if mine in by_name else None
            by_name = wait_for(listed, f"{mine} in alice's metadata")
            assert other not in by_name
            assert by_name[mine]["topic_authorized_operations"] == (1 << 3) | (1 << 8)
        finally:
            alice.close()
    finally:
        admin.call(31, 3, {"filters": [ANY_FILTER]})
        admin.close()


def test_produce_by_topic_id_is_authorized_by_the_topics_name_on_real_kafka(
        kafka: KafkaCluster) -> None:
    """Produce v13 names topics by id only: WRITE on the topic's name is what counts."""
    topic = f"pid-{uuid.uuid4().hex[:6]}"
    boot = kafka.bootstrap("SASL_PLAINTEXT")
    admin = Client(boot, "admin", 0)
    codes = []
    try:
        _create(admin, topic)

        def described() -> dict | None:
            [t] = _metadata(admin, topic)["topics"]
            ok = t["error_code"] == 0 and t["partitions"] and t["partitions"][0]["leader_id"] >= 0
            return t if ok else None
        t = wait_for(described, f"{topic}'s leader")
        leader, topic_id = t["partitions"][0]["leader_id"], t["topic_id"]
        body = {"transactional_id": None, "acks": 1, "timeout_ms": 5000, "topic_data": [
            {"topic_id": topic_id, "partition_data": [{"index": 0, "records": _records()}]}]}
        for grant in (False, True):
            if grant:
                _grant(admin, RT.TOPIC, topic, Op.WRITE, PermissionType.ALLOW)
                wait_for(lambda: _described(admin, topic) == 1, f"WRITE on {topic}")
            alice = Client(boot, "alice", kafka.broker_ids.index(leader))
            try:
                def answer(alice: Client = alice) -> dict | None:
                    r = alice.call(0, 13, body)
                    # a leader that has not yet learnt the topic answers UNKNOWN_TOPIC_ID
                    code = r["responses"][0]["partition_responses"][0]["error_code"]
                    return r if code != 100 else None
                r = wait_for(answer, "the leader to know the topic")
            finally:
                alice.close()
            assert r["responses"][0]["topic_id"] == topic_id
            codes.append(r["responses"][0]["partition_responses"][0]["error_code"])
    finally:
        admin.call(31, 3, {"filters": [ANY_FILTER]})
        admin.close()
    assert codes == [29, 0]


def _group_acl_helpers(kafka: KafkaCluster, admin: Client, group: str
                       ) -> tuple[Callable[[RT, str, Op], None], Callable[[], Client]]:
    """(grant, coordinator) for a group scenario: ``grant`` allows alice one more ACL and
    waits until every broker has it (whichever broker coordinates the group);
    ``coordinator`` is alice logged in at the group's coordinator."""
    boot = kafka.bootstrap("SASL_PLAINTEXT")
    want = [0]

    def grant(rtype: RT, name: str, op: Op) -> None:
        _grant(admin, rtype, name, op, PermissionType.ALLOW)
        want[0] += 1
        for i in range(len(kafka.broker_ids)):
            c = Client(boot, "admin", i)
            try:
                wait_for(lambda c=c: _acl_count(c) == want[0], f"{want[0]} ACLs on broker {i}")
            finally:
                c.close()

    def coordinator() -> Client:
        def find() -> str | None:
            [c] = admin.call(10, 4, {"key_type": 0, "coordinator_keys": [group]})["coordinators"]
            return f"{c['host']}:{c['port']}" if c["error_code"] == 0 else None
        return Client(wait_for(find, f"{group}'s coordinator", timeout=60), "alice")

    return grant, coordinator


def test_streams_group_heartbeat_needs_describe_on_topics_and_create_for_internal_ones_on_real_kafka(
        kafka: KafkaCluster) -> None:
    """test_security_acls.py's streams scenario: GROUP READ, then DESCRIBE on the
    topology's topics, then CREATE for the changelog topic the coordinator finds missing."""
    suffix = uuid.uuid4().hex[:6]
    group, source = f"sgk-{suffix}", f"sgksrc-{suffix}"
    boot = kafka.bootstrap("SASL_PLAINTEXT")
    admin = Client(boot, "admin", 0)
    grant, coordinator = _group_acl_helpers(kafka, admin, group)

    def exists(topic: str) -> bool:
        [t] = _metadata(admin, topic)["topics"]
        return t["error_code"] == 0

    try:
        _create(admin, source)
        streams_heartbeat_scenario(group, source, grant, coordinator, exists)
    finally:
        admin.call(31, 3, {"filters": [ANY_FILTER]})
        admin.close()


def test_consumer_group_heartbeat_needs_describe_on_subscribed_topics_on_real_kafka(
        kafka: KafkaCluster) -> None:
    suffix = uuid.uuid4().hex[:6]
    topic, group = f"cghk-{suffix}", f"cgk-{suffix}"
    boot = kafka.bootstrap("SASL_PLAINTEXT")
    admin = Client(boot, "admin", 0)
    grant, coordinator = _group_acl_helpers(kafka, admin, group)

    try:
        _create(admin, topic)
        got = consumer_heartbeat_subscription_scenario(topic, group, grant, coordinator)
    finally:
        admin.call(31, 3, {"filters": [ANY_FILTER]})
        admin.close()
    assert got == CONSUMER_HEARTBEAT_SUBSCRIPTION
