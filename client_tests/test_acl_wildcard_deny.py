"""ACLs bound to the wildcard principal ``User:*``, on the emulator (here) and on Apache
Kafka 4.4 (test_acl_wildcard_deny_kafka.py runs the same scenarios).

StandardAuthorizer: a binding whose principal is ``User:*`` matches every principal, a
DENY that matches wins over any ALLOW (the principal's own or the wildcard's), and a
wildcard ALLOW alone allows. A mutation run found that a DENY bound to ``User:*`` could be
ignored with 234 tests green: the ACL table (test_security_acls.py) binds every ACL to
``User:alice``. Here the same raw requests go to both targets, sent by ``alice`` logged in
with PLAIN (``admin`` is a super user who creates the topic and the ACLs): Metadata of
the topic (DESCRIBE: TOPIC_AUTHORIZATION_FAILED when refused), a Produce to it (WRITE)
and InitProducerId without a transactional id (WRITE on any topic: Kafka's
authorizeByResourceType, where a wildcard DENY on every topic name refuses).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

import pytest
from test_security_acls import Client, authorizer_cluster

from emulator.security.acl import Op, PermissionType
from emulator.security.acl import ResourceType as RT
from emulator.testing import wait_for
from wire.records import build_batch

# Not run with --target kafka: an emulator with an authorizer and SASL users, as the session's Kafka has
# neither; the Kafka side is test_acl_wildcard_deny_kafka.py, on a Kafka of its own.
pytestmark = pytest.mark.emulator_only

TOPIC_AUTHORIZATION_FAILED = 29
CLUSTER_AUTHORIZATION_FAILED = 31
COORDINATOR_LOAD_IN_PROGRESS = 14
ANY_FILTER = {"resource_type_filter": 1, "resource_name_filter": None, "pattern_type_filter": 1,
              "principal_filter": None, "host_filter": None, "operation": 1,
              "permission_type": 1}


@pytest.fixture(scope="module")
def bootstrap() -> Iterator[str]:
    """A SASL_PLAINTEXT listener with the emulator's authorizer (Kafka's:
    test_acl_wildcard_deny_kafka.py)."""
    with authorizer_cluster(1) as c:
        yield c.bootstrap_servers


def _acls(admin: Client) -> int:
    return sum(len(r["acls"]) for r in admin.call(29, 3, ANY_FILTER)["resources"])


def _set_acls(admin: Client, bindings: list[tuple[RT, str, str, Op, PermissionType]]) -> None:
    """Replace every ACL with ``bindings`` (type, name, principal, operation, permission;
    literal patterns, any host), and wait until the broker applies them (on Kafka they
    come through the metadata log)."""
    admin.call(31, 3, {"filters": [ANY_FILTER]})
    wait_for(lambda: _acls(admin) == 0, "no ACLs")
    if bindings:
        resp = admin.call(30, 3, {"creations": [{
            "resource_type": int(rt), "resource_name": name, "resource_pattern_type": 3,
            "principal": principal, "host": "*", "operation": int(op),
            "permission_type": int(perm)} for rt, name, principal, op, perm in bindings]})
        assert all(r["error_code"] == 0 for r in resp["results"]), resp
    wait_for(lambda: _acls(admin) == len(bindings), f"{len(bindings)} ACLs applied")


def _describe(alice: Client, topic: str) -> int:
    md = alice.call(3, 12, {"topics": [{"topic_id": bytes(16), "name": topic}],
                            "allow_auto_topic_creation": False,
                            "include_topic_authorized_operations": False})
    return md["topics"][0]["error_code"]


def _produce(alice: Client, topic: str) -> int:
    r = alice.call(0, 9, {"transactional_id": None, "acks": 1, "timeout_ms": 10000,
                          "topic_data": [{"name": topic, "partition_data": [
                              {"index": 0, "records": build_batch([(b"k", b"v")])}]}]})
    return r["responses"][0]["partition_responses"][0]["error_code"]


def _idempotent_init(alice: Client) -> int:
    """InitProducerId without a transactional id; Kafka answers the retriable
    COORDINATOR_LOAD_IN_PROGRESS while its first producer id block is allocated."""
    def answer() -> tuple[int] | None:  # a tuple: 0 (NONE) is an answer too
        r = alice.call(22, 4, {"transactional_id": None, "transaction_timeout_ms": 60000,
                               "producer_id": -1, "producer_epoch": -1})
        code: int = r["error_code"]
        return None if code == COORDINATOR_LOAD_IN_PROGRESS else (code,)

    return wait_for(answer, "InitProducerId answered", timeout=30, interval=0.2)[0]


@pytest.fixture
def topic(bootstrap: str) -> Iterator[tuple[Client, Client, str]]:
    with scenario_topic(bootstrap) as t:
        yield t


@contextlib.contextmanager
def scenario_topic(bootstrap: str) -> Iterator[tuple[Client, Client, str]]:
    """A scenario's (admin, alice, topic): a new topic both clients know, its ACLs deleted
    after (test_acl_wildcard_deny_kafka.py's ``topic`` on Kafka too)."""
    admin = Client(bootstrap, "admin")
    name = f"wild-{uuid.uuid4().hex[:8]}"
    resp = admin.call(19, 7, {"topics": [{"name": name, "num_partitions": 1,
                                          "replication_factor": 1}], "timeout_ms": 30000})
    assert resp["topics"][0]["error_code"] == 0, resp
    wait_for(lambda: _describe(admin, name) == 0, f"{name} known")
    alice = Client(bootstrap, "alice")
    try:
        yield admin, alice, name
    finally:
        alice.close()
        admin.call(31, 3, {"filters": [ANY_FILTER]})
        admin.close()


ALLOW, DENY = PermissionType.ALLOW, PermissionType.DENY


def wildcard_deny_beats_alices_allow(admin: Client, alice: Client, name: str) -> None:
    _set_acls(admin, [(RT.TOPIC, name, "User:alice", Op.ALL, ALLOW)])
    assert _describe(alice, name) == 0 and _produce(alice, name) == 0  # the ALLOW works
    _set_acls(admin, [(RT.TOPIC, name, "User:alice", Op.ALL, ALLOW),
                      (RT.TOPIC, name, "User:*", Op.WRITE, DENY)])
    assert _produce(alice, name) == TOPIC_AUTHORIZATION_FAILED
    assert _describe(alice, name) == 0  # a DENY of WRITE leaves DESCRIBE allowed
    _set_acls(admin, [(RT.TOPIC, name, "User:alice", Op.ALL, ALLOW),
                      (RT.TOPIC, name, "User:*", Op.ALL, DENY)])
    assert _describe(alice, name) == TOPIC_AUTHORIZATION_FAILED
    assert _produce(alice, name) == TOPIC_AUTHORIZATION_FAILED


def wildcard_allow_allows_and_alices_deny_beats_it(admin: Client, alice: Client,
                                                   name: str) -> None:
    _set_acls(admin, [(RT.TOPIC, name, "User:*", Op.WRITE, ALLOW)])
    assert _produce(alice, name) == 0 and _describe(alice, name) == 0  # WRITE implies it
    _set_acls(admin, [(RT.TOPIC, name, "User:*", Op.WRITE, ALLOW),
                      (RT.TOPIC, name, "User:alice", Op.WRITE, DENY)])
    assert _produce(alice, name) == TOPIC_AUTHORIZATION_FAILED


def wildcard_deny_on_every_topic_refuses_an_idempotent_producer(
        admin: Client, alice: Client, name: str) -> None:
    """InitProducerId without a transactional id needs WRITE on some topic; a DENY of
    WRITE bound to ``User:*`` on the wildcard topic name leaves none."""
    _set_acls(admin, [(RT.TOPIC, name, "User:alice", Op.WRITE, ALLOW)])
    assert _idempotent_init(alice) == 0
    _set_acls(admin, [(RT.TOPIC, name, "User:alice", Op.WRITE, ALLOW),
                      (RT.TOPIC, "*", "User:*", Op.WRITE, DENY)])
    assert _idempotent_init(alice) == CLUSTER_AUTHORIZATION_FAILED
    assert _produce(alice, name) == TOPIC_AUTHORIZATION_FAILED


def _set_patterned(admin: Client, bindings: list[tuple[str, int, Op, PermissionType]]) -> None:
    """ACLs of alice on topics: (name, pattern type 3 literal or 4 prefixed, op, perm)."""
    admin.call(31, 3, {"filters": [ANY_FILTER]})
    wait_for(lambda: _acls(admin) == 0, "no ACLs")
    resp = admin.call(30, 3, {"creations": [{
        "resource_type": int(RT.TOPIC), "resource_name": name, "resource_pattern_type": pt,
        "principal": "User:alice", "host": "*", "operation": int(op),
        "permission_type": int(perm)} for name, pt, op, perm in bindings]})
    assert all(r["error_code"] == 0 for r in resp["results"]), resp
    wait_for(lambda: _acls(admin) == len(bindings), f"{len(bindings)} ACLs applied")


LITERAL, PREFIXED = 3, 4


def write_on_some_topic_by_pattern(admin: Client, alice: Client, name: str) -> None:
    """Kafka's authorizeByResourceType (InitProducerId without a transactional id: WRITE
    on some topic): an ALLOW counts unless a DENY dominates it: a literal DENY of the
    same name, or a PREFIXED DENY that is a prefix of the allowed name (for a literal or
    a prefixed ALLOW); a literal DENY does not dominate a prefixed ALLOW."""
    cases = [
        ([("w-foo-bar", LITERAL, Op.WRITE, ALLOW)], 0),
        ([("w-foo-bar", LITERAL, Op.WRITE, ALLOW), ("w-foo-bar", LITERAL, Op.WRITE, DENY)],
         CLUSTER_AUTHORIZATION_FAILED),
        ([("w-foo-bar", LITERAL, Op.WRITE, ALLOW), ("w-foo", PREFIXED, Op.WRITE, DENY)],
         CLUSTER_AUTHORIZATION_FAILED),
        ([("w-foo-", PREFIXED, Op.WRITE, ALLOW), ("w-foo", PREFIXED, Op.WRITE, DENY)],
         CLUSTER_AUTHORIZATION_FAILED),
        ([("w-foo", PREFIXED, Op.WRITE, ALLOW), ("w-foo-bar", PREFIXED, Op.WRITE, DENY)], 0),
        ([("w-foo", PREFIXED, Op.WRITE, ALLOW), ("w-foo", LITERAL, Op.WRITE, DENY)], 0),
        ([("w-foo-bar", LITERAL, Op.WRITE, ALLOW), ("w-foo-bar", LITERAL, Op.READ, DENY)], 0),
        ([("w-foo-bar", LITERAL, Op.READ, ALLOW)], CLUSTER_AUTHORIZATION_FAILED),
        ([("w-foo-bar", LITERAL, Op.ALL, ALLOW), ("w-foo", PREFIXED, Op.ALL, DENY),
          ("w-other", LITERAL, Op.WRITE, ALLOW)], 0),
    ]
    for bindings, want in cases:
        _set_patterned(admin, bindings)
        assert _idempotent_init(alice) == want, bindings


SCENARIOS = [wildcard_deny_beats_alices_allow, wildcard_allow_allows_and_alices_deny_beats_it,
             wildcard_deny_on_every_topic_refuses_an_idempotent_producer,
             write_on_some_topic_by_pattern]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[f.__name__ for f in SCENARIOS])
def test_wildcard_principal_acls(topic: tuple[Client, Client, str], scenario) -> None:  # type: ignore[no-untyped-def]
    scenario(*topic)
