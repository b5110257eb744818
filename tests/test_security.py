"""The security domain, sans I/O: Kafka's authorizer rules, SCRAM (RFC 7677's example),
PLAIN and OAUTHBEARER mechanisms, the connection state table, listener parsing."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import random

import pytest

from emulator.security.acl import (
    AclBinding,
    AclFilter,
    AclStore,
    Authorizer,
    Op,
    PatternType,
    PermissionType,
    all_operations,
    applies,
    binding_error,
    filter_error,
    names_a_filter,
)
from emulator.security.acl import ResourceType as RT
from emulator.security.config import Security, SecurityConfig
from emulator.security.listeners import ListenerError, parse_listeners
from emulator.security.sasl import (
    AuthenticationFailed,
    OAuthBearerServer,
    PlainServer,
    ScramServer,
)
from emulator.security.scram import CredentialStore, ScramCredential, ScramMechanism
from emulator.security.session import AUTHENTICATED, FAILED, Session

ALLOW, DENY = PermissionType.ALLOW, PermissionType.DENY
LIT, PRE = PatternType.LITERAL, PatternType.PREFIXED


def acl(rt: RT, name: str, op: Op, perm: PermissionType = ALLOW, pt: PatternType = LIT,
        principal: str = "User:alice", host: str = "*") -> AclBinding:
    return AclBinding(rt, name, pt, principal, host, op, perm)


@pytest.mark.parametrize("bindings, op, name, expected", [
    ([], Op.READ, "t", False),                                   # no ACL: deny (default)
    ([acl(RT.TOPIC, "t", Op.READ)], Op.READ, "t", True),
    ([acl(RT.TOPIC, "t", Op.READ)], Op.WRITE, "t", False),
    ([acl(RT.TOPIC, "t", Op.READ)], Op.DESCRIBE, "t", True),     # READ implies DESCRIBE
    ([acl(RT.TOPIC, "t", Op.ALTER)], Op.DESCRIBE, "t", True),
    ([acl(RT.TOPIC, "t", Op.ALTER_CONFIGS)], Op.DESCRIBE_CONFIGS, "t", True),
    ([acl(RT.TOPIC, "t", Op.DESCRIBE)], Op.READ, "t", False),    # not the other way round
    ([acl(RT.TOPIC, "t", Op.ALL)], Op.DELETE, "t", True),
    ([acl(RT.TOPIC, "*", Op.READ)], Op.READ, "anything", True),  # wildcard name
    ([acl(RT.TOPIC, "team.", Op.READ, pt=PRE)], Op.READ, "team.a", True),
    ([acl(RT.TOPIC, "team.", Op.READ, pt=PRE)], Op.READ, "other", False),
    ([acl(RT.TOPIC, "t", Op.READ, principal="User:*")], Op.READ, "t", True),
    ([acl(RT.TOPIC, "t", Op.READ, principal="User:bob")], Op.READ, "t", False),
    ([acl(RT.TOPIC, "t", Op.READ, host="10.0.0.1")], Op.READ, "t", False),  # other host
    ([acl(RT.TOPIC, "t", Op.READ, host="127.0.0.1")], Op.READ, "t", True),
    ([acl(RT.TOPIC, "t", Op.ALL), acl(RT.TOPIC, "t", Op.READ, DENY)], Op.READ, "t", False),
    ([acl(RT.TOPIC, "*", Op.ALL), acl(RT.TOPIC, "t", Op.ALL, DENY, PRE)], Op.WRITE, "tx",
     False),                                                     # DENY wins over any ALLOW
    ([acl(RT.TOPIC, "t", Op.ALL), acl(RT.TOPIC, "t", Op.READ, DENY)], Op.DESCRIBE, "t",
     True),                                                      # DENY READ is not DESCRIBE
    ([acl(RT.GROUP, "t", Op.READ)], Op.READ, "t", False),       # other resource type
])
def test_authorizer_rules(bindings: list[AclBinding], op: Op, name: str, expected: bool) -> None:
    a = Authorizer(AclStore(list(bindings)))
    assert a.authorize("User:alice", "127.0.0.1", op, RT.TOPIC, name) is expected


def test_super_users_and_allow_everyone_if_no_acl_found() -> None:
    a = Authorizer(AclStore(), super_users={"User:admin"})
    assert a.authorize("User:admin", "h", Op.ALTER, RT.CLUSTER, "kafka-cluster")
    assert not a.authorize("User:alice", "h", Op.DESCRIBE, RT.CLUSTER, "kafka-cluster")
    open_ = Authorizer(AclStore([acl(RT.TOPIC, "other", Op.READ)]),
                       allow_everyone_if_no_acl_found=True)
    assert open_.authorize("User:alice", "h", Op.WRITE, RT.TOPIC, "free")  # no ACL names it
    assert not open_.authorize("User:alice", "h", Op.WRITE, RT.TOPIC, "other")


def test_authorized_operations_bit_fields() -> None:
    assert all_operations(RT.TOPIC) == 3576  # what Kafka reports without an authorizer
    assert all_operations(RT.GROUP) == 328
    assert all_operations(RT.CLUSTER) == 8096
    a = Authorizer(AclStore([acl(RT.TOPIC, "t", Op.WRITE)]))
    assert a.authorized_operations("User:alice", "h", RT.TOPIC, "t") == (1 << 4) | (1 << 8)


def test_authorize_any_topic_write_for_idempotent_producers() -> None:
    a = Authorizer(AclStore([acl(RT.TOPIC, "t", Op.WRITE)]))
    assert a.authorize_any("User:alice", "h", Op.WRITE, RT.TOPIC)
    a.store.add(acl(RT.TOPIC, "*", Op.WRITE, DENY))
    assert not a.authorize_any("User:alice", "h", Op.WRITE, RT.TOPIC)


def test_filters_match_describe_and_delete() -> None:
    store = AclStore([acl(RT.TOPIC, "t", Op.READ), acl(RT.TOPIC, "te", Op.READ, pt=PRE),
                      acl(RT.TOPIC, "*", Op.WRITE), acl(RT.GROUP, "g", Op.READ)])
    match = AclFilter(RT.TOPIC, "test", PatternType.MATCH)
    assert {b.resource_name for b in store.describe(match)} == {"te", "*"}
    assert len(store.describe(AclFilter())) == 4
    assert [b.resource_name for b in store.delete(AclFilter(RT.GROUP))] == ["g"]
    assert len(store.bindings) == 3
    assert AclStore.from_list(store.to_list()).bindings == store.bindings  # serializable


def test_the_index_finds_exactly_the_bindings_that_apply() -> None:
    """AclStore.applying (an index by type, literal name and prefix) agrees with the
    definition (acl.applies) on random stores, after additions and deletions."""
    rng = random.Random(7)
    names = ["a", "ab", "abc", "b", "*", "abd", "ba"]

    def rand_binding() -> AclBinding:
        return acl(rng.choice([RT.TOPIC, RT.GROUP]), rng.choice(names),
                   rng.choice([Op.READ, Op.WRITE]),
                   pt=rng.choice([PatternType.LITERAL, PRE]))

    store = AclStore([rand_binding() for _ in range(40)])
    for step in range(200):
        if step % 3 == 0:
            store.add(rand_binding())
        elif step % 7 == 0:
            store.delete(AclFilter(RT.TOPIC, rng.choice(names), PatternType.MATCH))
        rtype, name = rng.choice([RT.TOPIC, RT.GROUP]), rng.choice(names + ["abcd", "c"])
        expected = {b for b in store.bindings if applies(b, rtype, name)}
        assert set(store.applying(rtype, name)) == expected
        assert len(store.applying(rtype, name)) == len(expected)  # none twice


NO_COLON = ("Could not parse principal from `alice` (no colon is present separating the "
            "principal type from the principal name)")
CLUSTER_ONLY = "The only valid name for the CLUSTER resource is kafka-cluster"


@pytest.mark.parametrize("binding, expected", [
    # the broker's checks come first, the CLUSTER name's before the empty name's; the
    # pattern type of kafka-cluster is not checked (Kafka 4.4 creates a PREFIXED one)
    (acl(RT.CLUSTER, "other", Op.ALTER), CLUSTER_ONLY),
    (acl(RT.CLUSTER, "", Op.ALTER), CLUSTER_ONLY),
    (acl(RT.CLUSTER, "kafka-cluster", Op.ALTER, pt=PRE), None),
    (acl(RT.TOPIC, "", Op.READ), "Invalid empty resource name"),
    (acl(RT.TOPIC, "", Op.READ, pt=PRE), "Invalid empty resource name"),
    # then the controller's: a code Kafka does not know reads as UNKNOWN
    (acl(RT.UNKNOWN, "t", Op.READ), "Invalid resourceType UNKNOWN"),
    (acl(RT.TOPIC, "t", Op.READ, pt=PatternType.UNKNOWN), "Invalid patternType UNKNOWN"),
    (acl(RT.TOPIC, "t", Op.UNKNOWN), "Invalid operation UNKNOWN"),
    (acl(RT.TOPIC, "t", Op.READ, perm=PermissionType.UNKNOWN),
     "Invalid permissionType UNKNOWN"),
    (acl(RT.TOPIC, "t", Op.READ, principal="alice"), NO_COLON),
    (acl(RT.TOPIC, "t", Op.READ), None),
    (acl(RT.GROUP, "g", Op.READ, perm=DENY, pt=PRE), None),
    (acl(RT.CLUSTER, "kafka-cluster", Op.ALTER), None),
])
def test_binding_validation_as_kafka(binding: AclBinding, expected: str | None) -> None:
    """CreateAcls' INVALID_REQUEST messages, each as Kafka 4.4 words it (the same cases
    over the wire on both targets: client_tests/test_security_acls.py)."""
    assert binding_error(binding) == expected


@pytest.mark.parametrize("binding, expected", [
    (acl(RT.ANY, "t", Op.READ), True),
    (acl(RT.TOPIC, "t", Op.READ, pt=PatternType.ANY), True),
    (acl(RT.TOPIC, "t", Op.READ, pt=PatternType.MATCH), True),
    (acl(RT.TOPIC, "t", Op.ANY), True),
    (acl(RT.TOPIC, "t", Op.READ, perm=PermissionType.ANY), True),
    (acl(RT.TOPIC, "t", Op.READ, pt=PRE), False),
    (acl(RT.UNKNOWN, "t", Op.UNKNOWN, perm=PermissionType.UNKNOWN,
         pt=PatternType.UNKNOWN), False),
])
def test_a_creation_naming_any_or_match_is_a_filter(binding: AclBinding,
                                                    expected: bool) -> None:
    """What fails a whole CreateAcls request in Kafka (its AclBinding cannot hold ANY or
    MATCH), apart from what binding_error refuses per creation."""
    assert names_a_filter(binding) is expected


@pytest.mark.parametrize("f, expected", [
    (AclFilter(resource_type=RT.UNKNOWN), "Unknown patternFilter."),
    (AclFilter(pattern_type=PatternType.UNKNOWN), "Unknown patternFilter."),
    (AclFilter(operation=Op.UNKNOWN), "Unknown entryFilter."),
    (AclFilter(permission_type=PermissionType.UNKNOWN), "Unknown entryFilter."),
    (AclFilter(RT.UNKNOWN, operation=Op.UNKNOWN), "Unknown patternFilter."),
    (AclFilter(), None),
    (AclFilter(RT.TOPIC, "t", PatternType.MATCH, "User:a", "*", Op.READ, DENY), None),
])
def test_delete_filter_validation_as_kafka(f: AclFilter, expected: str | None) -> None:
    """DeleteAcls' INVALID_REQUEST messages (AclControlManager.validateFilter): any one
    unknown element of the pattern, then of the entry, refuses the filter."""
    assert filter_error(f) == expected


_FOO = acl(RT.TOPIC, "foo", Op.READ)
_ALL_DENY = acl(RT.TOPIC, "*", Op.WRITE, perm=DENY, principal="User:bob", host="10.0.0.1")
_FO = acl(RT.TOPIC, "fo", Op.READ, pt=PRE, host="10.0.0.1")
_BAR = acl(RT.TOPIC, "bar", Op.READ, pt=PRE)
_GROUP_FOO = acl(RT.GROUP, "foo", Op.READ)


@pytest.mark.parametrize("f, expected", [
    # MATCH: every binding that applies to the name (literal, "*", prefixes of it);
    # with no name, every binding of the type
    (AclFilter(RT.TOPIC, None, PatternType.MATCH), {_FOO, _ALL_DENY, _FO, _BAR}),
    (AclFilter(RT.TOPIC, "foo", PatternType.MATCH), {_FOO, _ALL_DENY, _FO}),
    (AclFilter(RT.TOPIC, "bar-1", PatternType.MATCH), {_ALL_DENY, _BAR}),
    # ANY, or a pattern type: the name exactly
    (AclFilter(RT.TOPIC, "foo", PatternType.ANY), {_FOO}),
    (AclFilter(pattern_type=PRE), {_FO, _BAR}),
    (AclFilter(RT.GROUP), {_GROUP_FOO}),
    (AclFilter(principal="User:bob"), {_ALL_DENY}),
    (AclFilter(host="10.0.0.1"), {_ALL_DENY, _FO}),
    (AclFilter(operation=Op.WRITE), {_ALL_DENY}),
    (AclFilter(permission_type=DENY), {_ALL_DENY}),
])
def test_describe_filters_match_as_kafka(f: AclFilter, expected: set[AclBinding]) -> None:
    """Kafka's AclBindingFilter.matches, each element on its own: what DescribeAcls
    lists and DeleteAcls removes."""
    store = AclStore([_FOO, _ALL_DENY, _FO, _BAR, _GROUP_FOO])
    assert set(store.describe(f)) == expected


# ---- SCRAM ----------------------------------------------------------------------------
def test_scram_sha_256_matches_rfc_7677_example() -> None:
    """RFC 7677 section 3: user "user", password "pencil"."""
    salt = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
    mech = ScramMechanism.SCRAM_SHA_256
    cred = ScramCredential.from_password(mech, "pencil", 4096, salt)
    store = CredentialStore()
    store.set("user", mech, cred)
    server = ScramServer(store, "SCRAM-SHA-256")
    first = server.evaluate(b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO").decode()
    attrs = dict(a.split("=", 1) for a in first.split(","))
    assert attrs["r"].startswith("rOprNGfwEbeRWgbNEkqO") and attrs["i"] == "4096"
    salted = hashlib.pbkdf2_hmac("sha256", b"pencil", salt, 4096)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    without_proof = f"c=biws,r={attrs['r']}"
    auth = f"n=user,r=rOprNGfwEbeRWgbNEkqO,{first},{without_proof}".encode()
    sig = hmac.new(hashlib.sha256(client_key).digest(), auth, "sha256").digest()
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, sig, strict=True)))
    final = server.evaluate(f"{without_proof},p={proof.decode()}".encode())
    server_key = hmac.new(salted, b"Server Key", "sha256").digest()
    assert final == b"v=" + base64.b64encode(hmac.new(server_key, auth, "sha256").digest())
    assert server.complete and server.principal == "User:user"
    # The RFC's own ServerKey/StoredKey derivation is what the store keeps, not the password.
    assert cred.server_key == server_key


def test_scram_wrong_proof_and_unknown_user_get_kafkas_generic_message() -> None:
    store = CredentialStore()
    store.add_user("alice", "secret")
    s = ScramServer(store, "SCRAM-SHA-512")
    first = s.evaluate(b"n,,n=alice,r=abc").decode()
    nonce = first.split(",")[0][2:]
    with pytest.raises(AuthenticationFailed, match="invalid credentials with SASL mechanism "
                                                   "SCRAM-SHA-512"):
        s.evaluate(f"c=biws,r={nonce},p={base64.b64encode(bytes(64)).decode()}".encode())
    with pytest.raises(AuthenticationFailed, match="Authentication failed during"):
        ScramServer(store, "SCRAM-SHA-256").evaluate(b"n,,n=nobody,r=abc")


def test_plain_checks_salted_credentials() -> None:
    store = CredentialStore()
    store.add_user("alice", "secret")
    assert PlainServer(store).evaluate(b"\0alice\0secret") == b""
    with pytest.raises(AuthenticationFailed, match="Invalid username or password"):
        PlainServer(store).evaluate(b"\0alice\0nope")
    with pytest.raises(AuthenticationFailed, match="different from username"):
        PlainServer(store).evaluate(b"bob\0alice\0secret")
    assert "secret" not in json.dumps(store.to_dict())


def _jwt(claims: dict, alg: str = "none") -> str:
    def part(o: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(o).encode()).rstrip(b"=").decode()
    return f"{part({'alg': alg})}.{part(claims)}."


def test_oauthbearer_unsecured_jwt() -> None:
    now = 1_700_000_000_000
    ok = OAuthBearerServer(now)
    token = _jwt({"sub": "svc", "exp": now // 1000 + 60})
    assert ok.evaluate(f"n,,\x01auth=Bearer {token}\x01\x01".encode()) == b""
    assert ok.principal == "User:svc" and ok.credential_expiry_ms == now + 60_000
    expired = OAuthBearerServer(now)
    challenge = expired.evaluate(
        f"n,,\x01auth=Bearer {_jwt({'sub': 'svc', 'exp': now // 1000 - 1})}\x01\x01".encode())
    assert json.loads(challenge) == {"status": "invalid_token"}
    with pytest.raises(AuthenticationFailed):
        expired.evaluate(b"\x01")


# ---- the connection state table -------------------------------------------------------
def test_session_table_and_reauthentication_lifetime() -> None:
    sec = Security.from_config(SecurityConfig(sasl_users={"alice": "pw"},
                                              connections_max_reauth_ms=1000))
    s = Session.for_listener("SASL_PLAINTEXT", "SASL_PLAINTEXT", None)
    assert s.gate(18, 0) is None and s.gate(17, 0) is None
    assert "during SASL handshake" in (s.gate(3, 0) or "")
    assert s.handshake("PLAIN", 1, sec, 0)
    assert "during SASL authentication" in (s.gate(3, 0) or "")
    s.authenticate(b"\0alice\0pw", sec, 0)
    assert s.state == AUTHENTICATED and s.session_lifetime_ms(0) == 1000
    assert s.gate(3, 999) is None and "expired" in (s.gate(3, 1000) or "")
    assert s.gate(17, 1000) is None  # re-authentication is still allowed
    bad = Session.for_listener("SASL_SSL", "SASL_SSL", None)
    assert not bad.handshake("GSSAPI", 1, sec, 0) and bad.state == FAILED
    assert bad.close_after_response


def test_listener_parsing() -> None:
    specs = parse_listeners("PLAINTEXT://127.0.0.1:9092,SASL_SSL://:9192")
    assert [(s.name, s.protocol, s.host, s.port) for s in specs] == [
        ("PLAINTEXT", "PLAINTEXT", "127.0.0.1", 9092), ("SASL_SSL", "SASL_SSL", "", 9192)]
    named = parse_listeners("CLIENT://h:1", "CLIENT:SASL_SSL")
    assert named[0].protocol == "SASL_SSL" and named[0].uses_tls and named[0].uses_sasl
    for bad in ("PLAINTEXT://h", "FOO://h:1", "PLAINTEXT://h:1,PLAINTEXT://h:2",
                "PLAINTEXT://h:1,SSL://h:1"):
        with pytest.raises(ListenerError):
            parse_listeners(bad)


def test_failed_reauthentication_names_the_phase() -> None:
    sec = Security.from_config(SecurityConfig(sasl_users={"alice": "pw"}))
    s = Session.for_listener("SASL_SSL", "SASL_SSL", None)
    assert s.handshake("SCRAM-SHA-256", 1, sec, 0)
    s.authenticate(b"n,,n=alice,r=x", sec, 0)
    with pytest.raises(AuthenticationFailed):
        s.authenticate(b"c=biws,r=wrong,p=AAAA", sec, 0)
    s = Session.for_listener("SASL_SSL", "SASL_SSL", None)
    s.handshake("PLAIN", 1, sec, 0)
    s.authenticate(b"\0alice\0pw", sec, 0)
    assert s.handshake("PLAIN", 1, sec, 0)  # re-authentication
    with pytest.raises(AuthenticationFailed, match="Invalid username or password"):
        s.authenticate(b"\0alice\0bad", sec, 0)
    s = Session.for_listener("SASL_SSL", "SASL_SSL", None)
    s.handshake("SCRAM-SHA-256", 1, sec, 0)
    s.authenticate(b"n,,n=alice,r=x", sec, 0)
    s.state, s.principal = AUTHENTICATED, "User:alice"  # as after a completed login
    assert s.handshake("SCRAM-SHA-256", 1, sec, 0)
    with pytest.raises(AuthenticationFailed, match="during re-authentication due to"):
        s.authenticate(b"n,,n=nobody,r=x", sec, 0)
