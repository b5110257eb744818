"""Share-group APIs through the authorizer, with test_security_acls' table and client:
each API with no ACL, with the ACL Kafka's KafkaApis needs (GROUP READ to heartbeat,
fetch and acknowledge, GROUP DESCRIBE for offsets, DELETE to delete them, CLUSTER_ACTION
for the share coordinator's state APIs), and with a DENY on top."""

from __future__ import annotations

import itertools
import uuid

import pytest

from client_tests.test_security_acls import Case, Client, _grant
from client_tests.test_security_acls import cluster as cluster  # noqa: F401 - fixture
from emulator import Cluster
from emulator.security.acl import AclFilter, Op, PermissionType
from emulator.security.acl import ResourceType as RT

_n = itertools.count()
ZERO_ID = b"\x00" * 16


def _state(partition_fields: dict):
    return lambda t, g, x: {"group_id": g, "topics": [{"topic_id": ZERO_ID, "partitions": [
        dict({"partition": 0}, **partition_fields)]}]}


def _state_code(r: dict) -> int:
    return r["results"][0]["partitions"][0]["error_code"]


CASES = [
    Case("ShareGroupHeartbeat", 76, 1, lambda t, g, x: {
        "group_id": g, "member_id": "m", "member_epoch": 0, "subscribed_topic_names": [t]},
        lambda r: r["error_code"], RT.GROUP, Op.READ, 30),
    Case("ShareFetch", 78, 1, lambda t, g, x: {
        "group_id": g, "member_id": "m", "share_session_epoch": 0, "max_wait_ms": 0,
        "min_bytes": 1, "max_records": 10, "batch_size": 10, "topics": []},
        lambda r: r["error_code"], RT.GROUP, Op.READ, 30),
    Case("ShareAcknowledge", 79, 1, lambda t, g, x: {
        "group_id": g, "member_id": "m", "share_session_epoch": 1, "topics": []},
        lambda r: r["error_code"], RT.GROUP, Op.READ, 30),
    Case("DescribeShareGroupOffsets", 90, 1, lambda t, g, x: {
        "groups": [{"group_id": g, "topics": None}]},
        lambda r: r["groups"][0]["error_code"], RT.GROUP, Op.DESCRIBE, 30),
    Case("AlterShareGroupOffsets", 91, 0, lambda t, g, x: {"group_id": g, "topics": []},
         lambda r: r["error_code"], RT.GROUP, Op.READ, 30),
    Case("DeleteShareGroupOffsets", 92, 0, lambda t, g, x: {"group_id": g, "topics": []},
         lambda r: r["error_code"], RT.GROUP, Op.DELETE, 30),
    Case("InitializeShareGroupState", 83, 0, _state({"state_epoch": 1, "start_offset": 0}),
         _state_code, RT.CLUSTER, Op.CLUSTER_ACTION, 31),
    Case("ReadShareGroupState", 84, 0, _state({"leader_epoch": 0}), _state_code, RT.CLUSTER,
         Op.CLUSTER_ACTION, 31),
    Case("WriteShareGroupState", 85, 1, _state({"state_epoch": 1, "leader_epoch": 0,
                                                "start_offset": 0, "state_batches": []}),
         _state_code, RT.CLUSTER, Op.CLUSTER_ACTION, 31),
    Case("DeleteShareGroupState", 86, 0, _state({}), _state_code, RT.CLUSTER,
         Op.CLUSTER_ACTION, 31),
    Case("ReadShareGroupStateSummary", 87, 1, _state({"leader_epoch": 0}), _state_code,
         RT.CLUSTER, Op.CLUSTER_ACTION, 31),
]


@pytest.mark.parametrize("acl", ["none", "allow", "deny"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_share_api_authorization(cluster: Cluster, case: Case, acl: str) -> None:  # noqa: F811
    n = next(_n)
    topic, group = f"saz-{n}-{uuid.uuid4().hex[:6]}", f"sg-{n}"
    cluster.create_topic(topic, 1, 3)
    name = case.resource(topic, group, "")
    if acl in ("allow", "deny"):
        _grant(cluster, case.rtype, name, case.op, PermissionType.ALLOW)
    if acl == "deny":
        _grant(cluster, case.rtype, name, Op.ALL if case.rtype != RT.CLUSTER else case.op,
               PermissionType.DENY)
    try:
        # the group's coordinator for group APIs, any broker for the others
        gc = cluster.server.services["groups"]
        broker = cluster.call(lambda: gc.coordinator_for(group))
        c = Client(cluster, "alice", cluster.broker_ids.index(broker))
        code = case.error(c.call(case.key, case.version, case.body(topic, group, "")))
        c.close()
    finally:
        if acl != "none":
            cluster.call(lambda: cluster.security.acls.delete(AclFilter(principal="User:alice")))
    if acl == "allow":
        assert code != case.denied, f"{case.name} refused with the ACL it needs"
    else:
        assert code == case.denied, f"{case.name} with {acl}: got {code}"


def test_share_fetch_needs_read_on_each_topic(cluster: Cluster) -> None:  # noqa: F811
    n = next(_n)
    topic, group = f"saz-{n}-{uuid.uuid4().hex[:6]}", f"sg-{n}"
    cluster.create_topic(topic, 1, 3)
    tid = cluster.state.topics[topic].id
    share = cluster.server.services["share"]
    # the share-partition's state, as a member's ShareGroupHeartbeat initializes it
    cluster.call(lambda: share.share_group_heartbeat(group, "m0", 0, rack_id=None,
                                                     subscribed_topic_names=[topic]))
    _grant(cluster, RT.GROUP, group, Op.READ, PermissionType.ALLOW)
    body = {"group_id": group, "member_id": "m", "share_session_epoch": 0, "max_wait_ms": 0,
            "min_bytes": 1, "max_records": 10, "batch_size": 10,
            "topics": [{"topic_id": tid, "partitions": [{"partition_index": 0}]}]}
    leader = cluster.state.get_partition(topic, 0).leader
    try:
        c = Client(cluster, "alice", cluster.broker_ids.index(leader))
        r = c.call(78, 1, body)
        assert r["error_code"] == 0
        (t,) = r["responses"]
        assert t["topic_id"] == tid and t["partitions"][0]["error_code"] == 29
        _grant(cluster, RT.TOPIC, topic, Op.READ, PermissionType.ALLOW)
        r = c.call(78, 1, dict(body, member_id="m2"))
        assert r["error_code"] == 0 and r["responses"][0]["partitions"][0]["error_code"] == 0
        c.close()
    finally:
        cluster.call(lambda: cluster.security.acls.delete(AclFilter(principal="User:alice")))
