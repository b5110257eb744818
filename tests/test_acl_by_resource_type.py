"""Authorizer.authorize_any, Kafka's authorizeByResourceType, rule by rule (pure).

InitProducerId without a transactional id asks "may this principal WRITE some topic?"
(IDEMPOTENT_WRITE on the cluster being the other way). Kafka's answer (the default
Authorizer.authorizeByResourceType, which StandardAuthorizer uses): allowed when the
operation is allowed on a topic named "hardcode" (a super user, an ALLOW on ``*`` or on a
prefix of "hardcode", allow.everyone.if.no.acl.found with no ACL for it); denied by a DENY
on ``*``; allowed by an ALLOW on ``*``; otherwise allowed by an ALLOW that no DENY
dominates (a literal DENY of the same name for a literal ALLOW; a PREFIXED DENY naming a
prefix of the allowed name, for either). Only the principal's bindings (or ``User:*``'s)
for its host (or ``*``) and for the operation (or ALL) count.
client_tests/test_acl_wildcard_deny.py's ``write_on_some_topic_by_pattern`` asks the same
of a real Kafka 4.4 and of the emulator over the wire; the mutation run found these
rules unpinned (and the prefix domination missing).
"""

from __future__ import annotations

import json

import pytest

from emulator.security.acl import (
    AclBinding,
    AclFilter,
    AclStore,
    Authorizer,
    Op,
    PatternType,
    PermissionType,
)
from emulator.security.acl import ResourceType as RT

L, P = PatternType.LITERAL, PatternType.PREFIXED
ALLOW, DENY = PermissionType.ALLOW, PermissionType.DENY
ALICE, HOST = "User:alice", "10.0.0.7"


def b(name: str, pt: PatternType = L, perm: PermissionType = ALLOW, op: Op = Op.WRITE,
      principal: str = ALICE, host: str = "*", rt: RT = RT.TOPIC) -> AclBinding:
    return AclBinding(rt, name, pt, principal, host, op, perm)


def any_write(*bindings: AclBinding, **kw: object) -> bool:
    return Authorizer(AclStore(list(bindings)), **kw).authorize_any(  # type: ignore[arg-type]
        ALICE, HOST, Op.WRITE, RT.TOPIC)


CASES = [
    ("no ACL", [], False),
    ("a literal allow", [b("foo-bar")], True),
    ("a prefixed allow", [b("foo", P)], True),
    ("a literal allow denied literally", [b("foo-bar"), b("foo-bar", perm=DENY)], False),
    ("a literal allow dominated by a prefixed deny", [b("foo-bar"), b("foo", P, DENY)], False),
    ("a prefixed allow dominated by a shorter prefixed deny",
     [b("foo-", P), b("foo", P, DENY)], False),
    ("a prefixed allow dominated by an equal prefixed deny",
     [b("foo", P), b("foo", P, DENY)], False),
    ("a prefixed allow under a longer prefixed deny", [b("foo", P), b("foo-bar", P, DENY)],
     True),
    ("a prefixed allow beside a literal deny of its name", [b("foo", P), b("foo", L, DENY)],
     True),
    ("a deny of another operation", [b("foo"), b("foo", perm=DENY, op=Op.READ)], True),
    ("an allow of another operation", [b("foo", op=Op.READ)], False),
    ("ALL allows", [b("foo", op=Op.ALL)], True),
    ("ALL denies", [b("foo"), b("foo", perm=DENY, op=Op.ALL)], False),
    ("one undominated allow is enough", [b("foo-bar"), b("foo", P, DENY), b("other")], True),
    ("a wildcard allow", [b("*")], True),
    ("a wildcard allow beside literal and prefixed denies",
     [b("*"), b("foo", perm=DENY), b("f", P, DENY)], True),
    ("a wildcard deny beats every allow", [b("*"), b("foo"), b("*", perm=DENY)], False),
    ("a wildcard deny of User:*", [b("foo"), b("*", perm=DENY, principal="User:*")], False),
    ("an allow of User:*", [b("foo", principal="User:*")], True),
    ("an allow of another user", [b("foo", principal="User:bob")], False),
    ("a deny of another user", [b("foo"), b("foo", P, DENY, principal="User:bob")], True),
    ("an allow for alice's host", [b("foo", host=HOST)], True),
    ("an allow for another host", [b("foo", host="10.0.0.8")], False),
    ("a deny for another host", [b("foo"), b("f", P, DENY, host="10.0.0.8")], True),
    ("a deny for alice's host", [b("foo"), b("f", P, DENY, host=HOST)], False),
    ("an allow on another resource type", [b("foo", rt=RT.GROUP)], False),
    ("a prefixed allow of a prefix of 'hardcode'", [b("hard", P), b("foo", perm=DENY)], True),
    ("a wildcard allow beside a deny that covers 'hardcode'", [b("*"), b("hard", P, DENY)],
     True),
    ("an allow denied literally, then an undominated one", [b("x"), b("x", perm=DENY), b("y")],
     True),
]


@pytest.mark.parametrize("bindings,want", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_write_on_some_topic(bindings: list[AclBinding], want: bool) -> None:
    assert any_write(*bindings) is want
    # the order of the bindings never matters
    assert any_write(*reversed(bindings)) is want


def test_a_super_user_may_always() -> None:
    a = Authorizer(AclStore([b("*", perm=DENY, principal="User:*")]),
                   super_users={"User:admin"})
    assert a.authorize_any("User:admin", HOST, Op.WRITE, RT.TOPIC)
    assert not a.authorize_any(ALICE, HOST, Op.WRITE, RT.TOPIC)


def test_allow_everyone_if_no_acl_found_asks_of_a_hardcoded_name() -> None:
    """No ACL names "hardcode": allowed, whatever the other topics' ACLs say; an ACL that
    applies to that very name (anyone's: literally, or a prefix of it) is an ACL found."""
    assert any_write(b("foo", perm=DENY), allow_everyone_if_no_acl_found=True)
    assert not any_write(b("foo", perm=DENY))
    assert not any_write(b("*", perm=DENY), allow_everyone_if_no_acl_found=True)
    for found in (b("hardcode", op=Op.READ, principal="User:bob"),
                  b("h", P, DENY, principal="User:bob")):
        assert not any_write(found, allow_everyone_if_no_acl_found=True), found


def test_a_replaced_store_authorizes_from_its_new_bindings() -> None:
    store = AclStore([b("foo")])
    a = Authorizer(store)
    assert a.authorize_any(ALICE, HOST, Op.WRITE, RT.TOPIC)  # the index is built
    store.replace([b("bar", P), b("ba", P, DENY)])
    assert store.bindings == [b("bar", P), b("ba", P, DENY)]
    assert not a.authorize_any(ALICE, HOST, Op.WRITE, RT.TOPIC)
    assert not a.authorize(ALICE, HOST, Op.WRITE, RT.TOPIC, "bar-1")
    store.replace([b("bar", P)])
    assert a.authorize(ALICE, HOST, Op.WRITE, RT.TOPIC, "bar-1")


def test_authorized_operations_honour_the_host() -> None:
    a = Authorizer(AclStore([b("foo", op=Op.READ, host=HOST)]))
    bits = a.authorized_operations(ALICE, HOST, RT.TOPIC, "foo")
    assert bits == (1 << int(Op.READ)) | (1 << int(Op.DESCRIBE))
    assert a.authorized_operations(ALICE, "10.0.0.8", RT.TOPIC, "foo") == 0


def test_a_binding_serializes_with_plain_numbers() -> None:
    d = b("foo", P, DENY).to_dict()
    assert all(type(v) in (int, str) for v in d.values()), d
    assert json.loads(json.dumps(d)) == d
    assert AclBinding.from_dict(d) == b("foo", P, DENY)


# ---- the filters of DescribeAcls and DeleteAcls (Kafka's AclBindingFilter) -------------
BOB_HOST = b("foo", op=Op.READ, principal="User:bob", host="10.0.0.9")
FILTER_CASES = [
    ("MATCH with no name matches every binding", AclFilter(pattern_type=PatternType.MATCH),
     b("foo"), True),
    ("MATCH of a name: the literal binding of it", AclFilter(
        pattern_type=PatternType.MATCH, resource_name="foo-1"), b("foo-1"), True),
    ("MATCH of a name: the wildcard binding", AclFilter(
        pattern_type=PatternType.MATCH, resource_name="foo-1"), b("*"), True),
    ("MATCH of a name: a prefix binding of it", AclFilter(
        pattern_type=PatternType.MATCH, resource_name="foo-1"), b("foo", P), True),
    ("MATCH of a name: not a prefix binding of another", AclFilter(
        pattern_type=PatternType.MATCH, resource_name="foo-1"), b("bar", P), False),
    ("MATCH of a name: not a literal binding of its prefix", AclFilter(
        pattern_type=PatternType.MATCH, resource_name="foo-1"), b("foo"), False),
    ("a host filter: the binding's host", AclFilter(host="10.0.0.9"), BOB_HOST, True),
    ("a host filter: another host", AclFilter(host="10.0.0.8"), BOB_HOST, False),
    ("a host filter is literal: '*' is not every host", AclFilter(host="*"), BOB_HOST, False),
    ("a principal filter: another principal", AclFilter(principal=ALICE), BOB_HOST, False),
    ("an operation filter: another operation", AclFilter(operation=Op.WRITE), BOB_HOST, False),
    ("a permission filter: another permission", AclFilter(permission_type=DENY), BOB_HOST,
     False),
    ("a resource type filter: another type", AclFilter(resource_type=RT.GROUP), BOB_HOST,
     False),
    ("everything given and equal", AclFilter(RT.TOPIC, "foo", L, "User:bob", "10.0.0.9",
                                             Op.READ, ALLOW), BOB_HOST, True),
]


@pytest.mark.parametrize("f,binding,want", [c[1:] for c in FILTER_CASES],
                         ids=[c[0] for c in FILTER_CASES])
def test_acl_filters(f: AclFilter, binding: AclBinding, want: bool) -> None:
    assert f.matches(binding) is want
