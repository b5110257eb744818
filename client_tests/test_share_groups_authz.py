"""Share-group APIs through the authorizer, with test_security_acls' table and client:
each API with no ACL, with the ACL Kafka's KafkaApis needs (GROUP READ to heartbeat,
fetch and acknowledge, GROUP DESCRIBE for offsets, DELETE to delete them, CLUSTER_ACTION
for the share coordinator's state APIs), and with a DENY on top.

The scenarios take the cluster's parts as callbacks (an ACL grant, a client on a given
broker) so that test_share_groups_authz_kafka.py runs the same ones on a real Kafka 4.4
with StandardAuthorizer."""

from __future__ import annotations

import base64
import itertools
import time
import uuid
from collections.abc import Callable, Iterator

import pytest

from client_tests.test_security_acls import (
    NOT_READY,
    Case,
    Client,
    _grant,
    _messages,
    authorizer_cluster,
    check,
)
from emulator import Cluster
from emulator.security.acl import AclFilter, Op, PermissionType
from emulator.security.acl import ResourceType as RT
from emulator.testing import wait_for

# Not run with --target kafka: an emulator with an authorizer and SASL users, as the session's Kafka
# has neither; the Kafka side is test_share_groups_authz_kafka.py, on a Kafka of its own.
pytestmark = pytest.mark.emulator_only

_n = itertools.count()
ZERO_ID = b"\x00" * 16
# Kafka parses a share member's id as a Uuid (ShareFetch, ShareAcknowledge): members
# send the string form of a random one, as Java's KafkaShareConsumer does.
MEMBER = "AAAAAAAAAAAAAAAAAAAAAQ"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """test_security_acls.py's cluster: PLAIN users over SASL_PLAINTEXT, the authorizer on."""
    with authorizer_cluster() as c:
        yield c


def member_id() -> str:
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def _state(partition_fields: dict):
    return lambda t, g, x: {"group_id": g, "topics": [{"topic_id": ZERO_ID, "partitions": [
        dict({"partition": 0}, **partition_fields)]}]}


def _state_code(r: dict) -> int:
    return r["results"][0]["partitions"][0]["error_code"]


CASES = [
    Case("ShareGroupHeartbeat", 76, 1, lambda t, g, x: {
        "group_id": g, "member_id": MEMBER, "member_epoch": 0, "subscribed_topic_names": [t]},
        lambda r: r["error_code"], RT.GROUP, Op.READ, 30, allowed=29),
    Case("ShareFetch", 78, 1, lambda t, g, x: {
        "group_id": g, "member_id": MEMBER, "share_session_epoch": 0, "max_wait_ms": 0,
        "min_bytes": 1, "max_records": 10, "batch_size": 10, "topics": []},
        lambda r: r["error_code"], RT.GROUP, Op.READ, 30),
    Case("ShareAcknowledge", 79, 1, lambda t, g, x: {
        "group_id": g, "member_id": MEMBER, "share_session_epoch": 1, "topics": []},
        lambda r: r["error_code"], RT.GROUP, Op.READ, 30, allowed=122),
    Case("DescribeShareGroupOffsets", 90, 1, lambda t, g, x: {
        "groups": [{"group_id": g, "topics": None}]},
        lambda r: r["groups"][0]["error_code"], RT.GROUP, Op.DESCRIBE, 30),
    Case("AlterShareGroupOffsets", 91, 0, lambda t, g, x: {"group_id": g, "topics": []},
         lambda r: r["error_code"], RT.GROUP, Op.READ, 30),
    Case("DeleteShareGroupOffsets", 92, 0, lambda t, g, x: {"group_id": g, "topics": []},
         lambda r: r["error_code"], RT.GROUP, Op.DELETE, 30, allowed=69),
    Case("InitializeShareGroupState", 83, 0, _state({"state_epoch": 1, "start_offset": 0}),
         _state_code, RT.CLUSTER, Op.CLUSTER_ACTION, 31, "share", 3),
    Case("ReadShareGroupState", 84, 0, _state({"leader_epoch": 0}), _state_code, RT.CLUSTER,
         Op.CLUSTER_ACTION, 31, "share", 42),
    Case("WriteShareGroupState", 85, 1, _state({"state_epoch": 1, "leader_epoch": 0,
                                                "start_offset": 0, "state_batches": []}),
         _state_code, RT.CLUSTER, Op.CLUSTER_ACTION, 31, "share", 42),
    Case("DeleteShareGroupState", 86, 0, _state({}), _state_code, RT.CLUSTER,
         Op.CLUSTER_ACTION, 31, "share", 3),
    Case("ReadShareGroupStateSummary", 87, 1, _state({"leader_epoch": 0}), _state_code,
         RT.CLUSTER, Op.CLUSTER_ACTION, 31, "share", 3),
]

Grant = Callable[[RT, str, Op, PermissionType], None]

# What the APIs answer with the ACL they need (Case.allowed), as a real Kafka 4.4
# answered (test_share_groups_authz_kafka.py): the heartbeat has READ on the group but
# not DESCRIBE on its topic; the acknowledgement names no open session; the group is not
# in use (described and altered as an empty one, not found to delete). The state APIs go
# to the share coordinator of their share-partition (route "share"), as a partition
# leader sends them; the zero topic id they name is unknown (UNKNOWN_TOPIC_OR_PARTITION)
# or, to Read and Write, an invalid request.


def check_share(case: Case, acl: str, code: int) -> None:
    """test_security_acls' contract: the exact answer with the ACL, the refusal without."""
    check(case, acl, code)


def share_coordinator(admin: Client, group: str) -> str:
    """The address of the share coordinator of the cases' share-partition (the group,
    the zero topic id, partition 0), asked by the super user (FindCoordinator key type
    2, "group:topic id:partition")."""
    tid = base64.urlsafe_b64encode(ZERO_ID).rstrip(b"=").decode()
    found: dict[str, str] = {}

    def ask() -> bool:
        c = admin.call(10, 6, {"key_type": 2, "coordinator_keys": [f"{group}:{tid}:0"]})
        c = c["coordinators"][0]
        found["a"] = f"{c['host']}:{c['port']}"
        return c["error_code"] == 0
    wait_for(ask, f"the share coordinator of {group}", 60)
    return found["a"]


def names() -> tuple[str, str]:
    """A fresh topic and share group."""
    n = next(_n)
    return f"saz-{n}-{uuid.uuid4().hex[:6]}", f"sg-{n}-{uuid.uuid4().hex[:6]}"


def share_api_code(case: Case, acl: str, topic: str, group: str, grant: Grant,
                   client_for: Callable[[str], Client]) -> int:
    """``case`` sent by alice with no ACL, with the ACL it needs (``allow``), or with that
    and a DENY of everything on the resource (``deny``); ``client_for(group)`` connects
    alice to the group's coordinator. Returns the case's error code (test_security_acls'
    ``check`` holds it to the contract)."""
    name = case.resource(topic, group, "")
    if acl in ("allow", "deny"):
        grant(case.rtype, name, case.op, PermissionType.ALLOW)
    if acl == "deny":
        grant(case.rtype, name, Op.ALL if case.rtype != RT.CLUSTER else case.op,
              PermissionType.DENY)
    # A coordinator not ready for the group yet (NOT_READY: on Kafka the broker that
    # FindCoordinator names can still be loading its __consumer_offsets partition; seen
    # once in CI as NOT_COORDINATOR to an allowed AlterShareGroupOffsets) is retried on a
    # coordinator found again, as clients do; authorization is answered before any such.
    deadline = time.monotonic() + 60
    while True:
        c = client_for(group)
        if case.route == "share":
            c.close()
            admin = Client(c.bootstrap, "admin")
            try:
                address = share_coordinator(admin, group)
            finally:
                admin.close()
            c = Client(address, "alice")
        try:
            code = case.error(c.call(case.key, case.version, case.body(topic, group, "")))
        finally:
            c.close()
        if code not in NOT_READY or time.monotonic() > deadline:
            return code
        time.sleep(0.2)


@pytest.mark.parametrize("acl", ["none", "allow", "deny"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_share_api_authorization(cluster: Cluster, case: Case, acl: str) -> None:
    topic, group = names()
    cluster.create_topic(topic, 1, 3)

    def client_for(group: str) -> Client:
        broker = cluster.call(lambda: cluster.server.services.groups.coordinator_for(group))
        return Client(cluster, "alice", cluster.broker_ids.index(broker))

    def grant(rtype: RT, name: str, op: Op, perm: PermissionType) -> None:
        _grant(cluster, rtype, name, op, perm)

    try:
        code = share_api_code(case, acl, topic, group, grant, client_for)
    finally:
        cluster.call(lambda: cluster.security.acls.delete(AclFilter(principal="User:alice")))
    check_share(case, acl, code)


def share_fetch_topic_read_scenario(
        topic: str, topic_id: bytes, group: str, join: Callable[[], None],
        grant: Callable[[RT, str, Op], None], leader: Callable[[], Client]
        ) -> list[tuple[int, int]]:
    """ShareFetch needs READ on the group, then READ on each topic it names: a member
    (``join``, as admin) initializes the share-partition; alice, with READ on the group
    only, opens a share session on the topic's partition at its leader, then again
    with READ on the topic. Returns (top code, partition code) of both fetches."""
    join()
    grant(RT.GROUP, group, Op.READ)
    body = {"group_id": group, "member_id": member_id(), "share_session_epoch": 0,
            "max_wait_ms": 0, "min_bytes": 1, "max_records": 10, "batch_size": 10,
            "topics": [{"topic_id": topic_id, "partitions": [{"partition_index": 0}]}]}
    out = []
    c = leader()
    try:
        r = c.call(78, 1, body)
        assert [t["topic_id"] for t in r["responses"]] == [topic_id], r
        out.append((r["error_code"], r["responses"][0]["partitions"][0]["error_code"]))
        grant(RT.TOPIC, topic, Op.READ)

        def answered() -> tuple[int, int] | None:
            """Kafka loads a share-partition (its state, from the share coordinator) on a
            broker's first fetch of it and leaves it out of that answer when the load
            takes longer than the fetch may wait; a later full fetch answers it (an
            incremental one answers only what changed). So: a full fetch, in a session
            of a new member each time, until the partition is answered."""
            r = c.call(78, 1, dict(body, member_id=member_id()))
            parts = [p for t in r["responses"] for p in t["partitions"]]
            return (r["error_code"], parts[0]["error_code"]) if parts or r["error_code"] \
                else None

        out.append(wait_for(answered, f"{topic} answered to a share fetch"))
    finally:
        c.close()
    return out


SHARE_FETCH_TOPIC_READ = [(0, 29), (0, 0)]


def test_share_fetch_needs_read_on_each_topic(cluster: Cluster) -> None:
    topic, group = names()
    cluster.create_topic(topic, 1, 3)
    share = cluster.server.services.share

    def join() -> None:  # the share-partition's state, as a member's heartbeat starts it
        cluster.call(lambda: share.share_group_heartbeat(group, "m0", 0, rack_id=None,
                                                         subscribed_topic_names=[topic]))

    def grant(rtype: RT, name: str, op: Op) -> None:
        _grant(cluster, rtype, name, op, PermissionType.ALLOW)

    def leader() -> Client:
        broker = cluster.state.get_partition(topic, 0).leader
        return Client(cluster, "alice", cluster.broker_ids.index(broker))

    try:
        got = share_fetch_topic_read_scenario(topic, cluster.state.topics[topic].id, group,
                                              join, grant, leader)
    finally:
        cluster.call(lambda: cluster.security.acls.delete(AclFilter(principal="User:alice")))
    assert got == SHARE_FETCH_TOPIC_READ


def _kind(topic_id: bytes) -> str:
    return "zero" if topic_id == ZERO_ID else "id"


def share_topic_acls_scenario(topic: str, other: str, group: str,
                              grant: Callable[[RT, str, Op], None],
                              client_for: Callable[[str], Client]) -> dict[str, object]:
    """The topic ACLs of the share-group APIs: alice may READ, DESCRIBE and DELETE the
    group (no member yet), and no topic; later DESCRIBE on ``topic`` only (never on
    ``other``). She describes, deletes and alters the group's offsets and joins it by
    ShareGroupHeartbeat, which needs DESCRIBE on every subscribed topic. Returns each
    answer in short (names as T, O, topic ids as "id" or "zero")."""
    short = {topic: "T", other: "O"}
    for op in (Op.READ, Op.DESCRIBE, Op.DELETE):
        grant(RT.GROUP, group, op)
    c = client_for(group)
    out: dict[str, object] = {}

    def describe(topics: list[str] | None) -> tuple:
        body = None if topics is None else [{"topic_name": t, "partitions": [0]}
                                            for t in topics]
        [g] = c.call(90, 1, {"groups": [{"group_id": group, "topics": body}]})["groups"]
        return (g["error_code"], [(short[t["topic_name"]], _kind(t["topic_id"]), [
            (p["partition_index"], p["start_offset"], p["leader_epoch"], p["lag"],
             p["error_code"], p["error_message"]) for p in t["partitions"]])
            for t in g["topics"]])

    def delete(topics: list[str]) -> tuple:
        r = c.call(92, 0, {"group_id": group, "topics": [{"topic_name": t} for t in topics]})
        return (r["error_code"], r["error_message"], [
            (short[t["topic_name"]], _kind(t["topic_id"]), t["error_code"], t["error_message"])
            for t in r["responses"]])

    def alter(topics: list[str]) -> tuple:
        r = c.call(91, 0, {"group_id": group, "topics": [{"topic_name": t, "partitions": [
            {"partition_index": 0, "start_offset": 0}]} for t in topics]})
        return (r["error_code"], r["error_message"], [
            (short[t["topic_name"]], _kind(t["topic_id"]), [
                (p["partition_index"], p["error_code"], p["error_message"])
                for p in t["partitions"]]) for t in r["responses"]])

    member = member_id()

    def heartbeat(topics: list[str] | None, epoch: int = 0) -> tuple:
        r = c.call(76, 1, {"group_id": group, "member_id": member, "member_epoch": epoch,
                           "rack_id": None, "subscribed_topic_names": topics})
        return (r["error_code"], r["error_message"], r["member_epoch"],
                r["assignment"] is None)

    try:
        # Kafka: NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS while the group's
        # __consumer_offsets partition is being loaded
        out["describe unknown, all topics"] = wait_for(
            lambda: (lambda d: d if d[0] not in (14, 15, 16) else None)(describe(None)),
            "the group's coordinator ready")
        out["describe unknown, T"] = describe([topic])
        out["delete unknown, T"] = delete([topic])
        out["alter unknown, T"] = alter([topic])
        out["join T, O"] = heartbeat([topic, other])
        grant(RT.TOPIC, topic, Op.DESCRIBE)
        out["join T, O; DESCRIBE T"] = heartbeat([topic, other])
        out["describe unknown, T; DESCRIBE T"] = describe([topic])
        out["join T"] = heartbeat([topic])[:2]
        out["leave"] = heartbeat(None, -1)
        # (not "all topics" now: Kafka initializes T's share-partition for the member in
        # the background, so whether T is listed is a matter of time)
        out["describe empty, T, O"] = describe([topic, other])
        out["delete empty, O, T"] = delete([other, topic])
        out["alter empty, O, T"] = alter([other, topic])
    finally:
        c.close()
    return out


_DENIED = (29, "Topic authorization failed.")
# What a real Kafka 4.4 answered (test_share_groups_authz_kafka.py): a group id not in
# use is described without error; refused topics come after the others, their
# partitions at start offset -1, leader epoch 0, lag -1; Delete drops them when the
# group is not found; Alter names them by topic id, Delete and Describe by a zero id.
SHARE_TOPIC_ACLS_ANSWER = {
    "describe unknown, all topics": (0, []),
    "describe unknown, T": (0, [("T", "zero", [(0, -1, 0, -1, *_DENIED)])]),
    "delete unknown, T": (69, "Group {group} not found.", []),
    "alter unknown, T": (0, None, [("T", "id", [(0, *_DENIED)])]),
    "join T, O": (29, None, 0, True),
    "join T, O; DESCRIBE T": (29, None, 0, True),
    "describe unknown, T; DESCRIBE T": (0, [("T", "id", [(0, -1, 0, -1, 0, None)])]),
    "join T": (0, None),
    "leave": (0, None, -1, True),
    "describe empty, T, O": (0, [("T", "id", [(0, -1, 0, -1, 0, None)]),
                                 ("O", "zero", [(0, -1, 0, -1, *_DENIED)])]),
    "delete empty, O, T": (0, None, [("O", "zero", *_DENIED), ("T", "zero", *_DENIED)]),
    "alter empty, O, T": (0, None, [("O", "id", [(0, *_DENIED)]),
                                    ("T", "id", [(0, *_DENIED)])]),
}


def share_topic_acls_answer(group: str) -> dict[str, object]:
    out = dict(SHARE_TOPIC_ACLS_ANSWER)
    code, message, rest = out["delete unknown, T"]  # type: ignore[misc]
    out["delete unknown, T"] = (code, message.format(group=group), rest)
    return out


def test_share_apis_need_topic_acls(cluster: Cluster) -> None:
    topic, group = names()
    other = topic + "-o"
    for t in (topic, other):
        cluster.create_topic(t, 1, 3)

    def client_for(group: str) -> Client:
        broker = cluster.call(lambda: cluster.server.services.groups.coordinator_for(group))
        return Client(cluster, "alice", cluster.broker_ids.index(broker))

    try:
        got = share_topic_acls_scenario(
            topic, other, group,
            lambda rt, name, op: _grant(cluster, rt, name, op, PermissionType.ALLOW),
            client_for)
    finally:
        cluster.call(lambda: cluster.security.acls.delete(AclFilter(principal="User:alice")))
    assert got == share_topic_acls_answer(group)


# The error_message of each refusal without ACLs, as Kafka 4.4 sent it (measured by
# test_share_groups_authz_kafka.py): the offset admin APIs and the share coordinator's
# state APIs send the code's own text, the others none.
SHARE_REFUSAL_MESSAGES = {
    "AlterShareGroupOffsets": "Group authorization failed.",
    "DeleteShareGroupOffsets": "Group authorization failed.",
    **{n: "Cluster authorization failed." for n in (
        "InitializeShareGroupState", "ReadShareGroupState", "WriteShareGroupState",
        "DeleteShareGroupState", "ReadShareGroupStateSummary")},
}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_share_refusal_messages_as_kafka(cluster: Cluster, case: Case) -> None:
    topic, group = names()
    cluster.create_topic(topic, 1, 3)
    c = Client(cluster, "alice")
    try:
        r = c.call(case.key, case.version, case.body(topic, group, ""))
    finally:
        c.close()
    assert set(_messages(r)) == {SHARE_REFUSAL_MESSAGES.get(case.name)}
