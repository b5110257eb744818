"""SASL and TLS with real clients over TCP: every mechanism, every listener kind, and
Kafka's answers to wrong passwords, early requests and protocol mix-ups."""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import shutil
import socket
import ssl
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator

import pytest
from confluent_kafka import Consumer, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

from emulator import Cluster
from emulator.blocking_client import BlockingConnection, ConnectionClosed
from emulator.testing import wait_for
from wire.connection import size_prefixed

# Not run with --target kafka: drives the emulator's clock.
pytestmark = pytest.mark.emulator_only

LISTENERS = ("PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,"
             "SASL_SSL://127.0.0.1:0,SSL://127.0.0.1:0")
USERS = {"alice": "alice-secret", "bob": "bob-secret"}
MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tls_dir = tmp_path_factory.mktemp("tls")
    with Cluster(3, security={"listeners": LISTENERS, "sasl_users": USERS,
                              "tls_dir": str(tls_dir), "tls_client_auth": "requested"}) as c:
        yield c


def _roundtrip_confluent(conf: dict, topic: str, n: int = 20) -> list[bytes]:
    p = Producer(conf)
    for i in range(n):
        p.produce(topic, key=b"k", value=f"v{i}".encode())
    assert p.flush(20) == 0
    c = Consumer({**conf, "group.id": f"g-{uuid.uuid4().hex[:8]}",
                  "auto.offset.reset": "earliest"})
    c.subscribe([topic])
    got: list[bytes] = []
    try:
        for _ in range(200):
            m = c.poll(0.2)
            if m is not None and m.error() is None:
                got.append(m.value())
            elif m is not None:
                print("consumer error", m.error())
            if len(got) == n:
                break
    finally:
        c.close()
    return got


@pytest.mark.parametrize("listener", ["SASL_PLAINTEXT", "SASL_SSL"])
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_confluent_every_mechanism(secured: Cluster, listener: str, mechanism: str) -> None:
    topic = f"sasl-{listener}-{mechanism}-{uuid.uuid4().hex[:6]}"
    secured.create_topic(topic, 3)
    conf = secured.client_config("confluent", listener=listener, user="alice",
                                 mechanism=mechanism)
    assert _roundtrip_confluent(conf, topic) == [f"v{i}".encode() for i in range(20)]


def test_metadata_is_answered_per_listener(secured: Cluster) -> None:
    for listener in ("PLAINTEXT", "SASL_SSL", "SSL"):
        conf = secured.client_config("confluent", listener=listener, user="bob")
        md = AdminClient(conf).list_topics(timeout=10)
        ports = sorted(f"127.0.0.1:{b.port}" for b in md.brokers.values())
        assert ports == sorted(secured.bootstrap_for(listener).split(",")), listener


def test_wrong_password_gets_kafkas_message(secured: Cluster) -> None:
    for mechanism, message in [
        ("PLAIN", "Authentication failed: Invalid username or password"),
        ("SCRAM-SHA-256", "Authentication failed during authentication due to invalid "
                          "credentials with SASL mechanism SCRAM-SHA-256"),
    ]:
        errors: list[str] = []
        conf = secured.client_config("confluent", listener="SASL_PLAINTEXT", user="alice",
                                     mechanism=mechanism, password="wrong")
        conf["error_cb"] = lambda e, errors=errors: errors.append(e.str())
        admin = AdminClient(conf)
        with pytest.raises(KafkaException):
            admin.list_topics(timeout=3)
        admin.poll(1)  # serves error_cb
        assert any(message in e for e in errors), (mechanism, errors)
    # Nothing else noticed: alice still logs in.
    conf = secured.client_config("confluent", listener="SASL_PLAINTEXT", user="alice")
    assert AdminClient(conf).list_topics(timeout=10).brokers


def test_kafka_python_scram_over_tls(secured: Cluster) -> None:
    from kafka import KafkaConsumer, KafkaProducer

    topic = f"kp-{uuid.uuid4().hex[:8]}"
    secured.create_topic(topic, 1)
    kw = secured.client_config("kafka-python", listener="SASL_SSL", user="bob",
                               mechanism="SCRAM-SHA-256")
    p = KafkaProducer(**kw)
    p.send(topic, b"hello").get(timeout=20)
    p.close()
    c = KafkaConsumer(topic, auto_offset_reset="earliest", consumer_timeout_ms=10000, **kw)
    assert [m.value for m in c][:1] == [b"hello"]
    c.close()


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512", "OAUTHBEARER"])
def test_aiokafka_over_sasl_ssl(secured: Cluster, mechanism: str) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    topic = f"aio-{mechanism}-{uuid.uuid4().hex[:8]}"
    secured.create_topic(topic, 1)

    async def run() -> bytes:
        kw = secured.client_config("aiokafka", listener="SASL_SSL", user="alice",
                                   mechanism=mechanism)
        p = AIOKafkaProducer(**kw)
        await p.start()
        try:
            await p.send_and_wait(topic, b"hi")
        finally:
            await p.stop()
        c = AIOKafkaConsumer(topic, auto_offset_reset="earliest", **kw)
        await c.start()
        try:
            return (await asyncio.wait_for(c.getone(), 20)).value
        finally:
            await c.stop()

    assert asyncio.run(run()) == b"hi"


def test_kcat_scram_over_tls(secured: Cluster) -> None:
    kcat = shutil.which("kcat")
    assert kcat, "kcat is not installed (scripts/setup.d installs it)"
    topic = f"kcat-{uuid.uuid4().hex[:8]}"
    secured.create_topic(topic, 1)
    conf = secured.client_config("confluent", listener="SASL_SSL", user="alice",
                                 mechanism="SCRAM-SHA-256")
    args = [kcat, "-b", conf.pop("bootstrap.servers")]
    for k, v in conf.items():
        args += ["-X", f"{k}={v}"]
    subprocess.run(args + ["-P", "-t", topic], input=b"one\ntwo\n", check=True, timeout=60)
    out = subprocess.run(args + ["-C", "-t", topic, "-e", "-o", "beginning"],
                         capture_output=True, check=True, timeout=60)
    assert out.stdout.split() == [b"one", b"two"]


def test_mutual_tls_principal_is_the_certificate_subject(tmp_path) -> None:
    with Cluster(1, security={"listeners": "SSL://127.0.0.1:0", "tls_dir": str(tmp_path),
                              "tls_client_auth": "required", "authorizer": True,
                              "super_users": ["CN=client,O=kafka-emulator"]}) as c:
        c.create_topic("mtls", 1)
        conf = c.client_config("confluent", mtls=True)
        assert _roundtrip_confluent(conf, "mtls", 3) == [b"v0", b"v1", b"v2"]
        # Without a client certificate the TLS handshake itself fails (required).
        bare = {k: v for k, v in c.client_config("confluent").items()
                if k not in ("ssl.certificate.location", "ssl.key.location")}
        with pytest.raises(KafkaException):
            AdminClient(bare).list_topics(timeout=3)


# ---- raw protocol: Kafka's exact answers ---------------------------------------------

def _addr(c: Cluster, listener: str) -> tuple[str, int]:
    host, port = c.bootstrap_for(listener).split(",")[0].rsplit(":", 1)
    return host, int(port)


class Raw(BlockingConnection):
    def __init__(self, sock: socket.socket) -> None:
        super().__init__(sock, "sec-test")

    def call(self, key: int, version: int, body: dict) -> dict | None:
        """The answer, or None when the broker closed the connection instead."""
        try:
            return super().call(key, version, body)
        except (ConnectionClosed, ConnectionResetError):
            return None


def _raw(c: Cluster, listener: str) -> Raw:
    return Raw(socket.create_connection(_addr(c, listener), timeout=10))


METADATA = {"topics": None, "allow_auto_topic_creation": False}


# ---- wire-level SASL scenarios, run here and on a real Kafka 4.4 with a SASL_PLAINTEXT
# listener (test_security_acls_kafka.py): ``connect`` opens a raw connection to a
# listener by name, ``user``/``other`` are two (name, password) pairs the listener knows.
Connect = Callable[[str], Raw]


def requests_before_authentication_scenario(connect: Connect) -> None:
    r = connect("SASL_PLAINTEXT")
    assert r.call(18, 3, {"client_software_name": "t", "client_software_version": "1"})
    assert r.call(3, 12, METADATA) is None  # Kafka: IllegalSaslStateException, closed


def sasl_on_plaintext_scenario(connect: Connect) -> None:
    r = connect("PLAINTEXT")
    resp = r.call(17, 1, {"mechanism": "PLAIN"})
    assert resp == {"error_code": 34, "mechanisms": []}
    resp = r.call(36, 2, {"auth_bytes": b"\0a\0b"})
    assert resp is not None and resp["error_code"] == 34
    assert r.call(3, 12, METADATA) is not None  # still usable


def unsupported_mechanism_scenario(connect: Connect, enabled: set[str]) -> None:
    r = connect("SASL_PLAINTEXT")
    resp = r.call(17, 1, {"mechanism": "GSSAPI"})
    assert resp is not None and resp["error_code"] == 33
    assert set(resp["mechanisms"]) == enabled
    assert r.closed()


def plain(user: tuple[str, str]) -> bytes:
    return b"\0" + user[0].encode() + b"\0" + user[1].encode()


def no_reauthentication_scenario(connect: Connect, user: tuple[str, str]) -> None:
    """Kafka's default connections.max.reauth.ms 0: sessions never expire and a second
    SaslHandshake or SaslAuthenticate is ILLEGAL_SASL_STATE; the connection stays open."""
    r = connect("SASL_PLAINTEXT")
    assert r.call(17, 1, {"mechanism": "PLAIN"})["error_code"] == 0
    resp = r.call(36, 2, {"auth_bytes": plain(user)})
    assert (resp["error_code"], resp["error_message"], resp["session_lifetime_ms"]) == (0, "", 0)
    assert r.call(3, 12, METADATA)["brokers"]
    assert r.call(17, 1, {"mechanism": "PLAIN"}) == {"error_code": 34, "mechanisms": []}
    resp = r.call(36, 2, {"auth_bytes": plain(user)})
    assert (resp["error_code"], resp["error_message"]) == (
        34, "SaslAuthenticate request received after successful authentication")
    assert r.call(3, 12, METADATA)["brokers"]


def reauthentication_scenario(connect: Connect, user: tuple[str, str],
                              other: tuple[str, str], lifetime_ms: int) -> None:
    """With connections.max.reauth.ms set (``lifetime_ms``): KIP-368 re-authentication."""
    r = connect("SASL_PLAINTEXT")
    assert r.call(17, 1, {"mechanism": "PLAIN"})["error_code"] == 0
    resp = r.call(36, 2, {"auth_bytes": plain(user)})
    assert resp["error_code"] == 0 and resp["session_lifetime_ms"] == lifetime_ms
    assert r.call(3, 12, METADATA)["brokers"]
    # a SaslHandshake on an authenticated connection re-authenticates...
    assert r.call(17, 1, {"mechanism": "PLAIN"})["error_code"] == 0
    assert r.call(36, 2, {"auth_bytes": plain(user)})["error_code"] == 0
    # at most one re-authentication a second: a handshake sooner is ILLEGAL_SASL_STATE
    assert r.call(17, 1, {"mechanism": "PLAIN"}) == {"error_code": 34, "mechanisms": []}
    time.sleep(1.1)
    # ...but may not change the principal.
    assert r.call(17, 1, {"mechanism": "PLAIN"})["error_code"] == 0
    resp = r.call(36, 2, {"auth_bytes": plain(other)})
    assert (resp["error_code"], resp["error_message"]) == (
        58, f"Cannot change principals during re-authentication from User.{user[0]}: "
            f"User.{other[0]}")
    assert r.closed()


def handshake_v0_scenario(connect: Connect, user: tuple[str, str]) -> None:
    r = connect("SASL_PLAINTEXT")
    assert r.call(17, 0, {"mechanism": "PLAIN"})["error_code"] == 0
    token = plain(user)
    r.send_raw(size_prefixed(token))
    assert r.read_frame() == b""  # the empty PLAIN answer, unframed
    assert r.call(3, 12, METADATA)["brokers"]


def test_requests_before_authentication_close_the_connection(secured: Cluster) -> None:
    requests_before_authentication_scenario(lambda listener: _raw(secured, listener))


def test_sasl_on_a_plaintext_listener_is_illegal_sasl_state(secured: Cluster) -> None:
    sasl_on_plaintext_scenario(lambda listener: _raw(secured, listener))


def test_unsupported_mechanism_then_close(secured: Cluster) -> None:
    unsupported_mechanism_scenario(lambda listener: _raw(secured, listener), set(MECHANISMS))


def test_handshake_v1_plain_then_no_reauthentication_by_default(secured: Cluster) -> None:
    no_reauthentication_scenario(lambda listener: _raw(secured, listener),
                                 ("alice", USERS["alice"]))


def test_reauthentication_with_connections_max_reauth_ms() -> None:
    with Cluster(1, security={"listeners": "SASL_PLAINTEXT://127.0.0.1:0",
                              "sasl_users": USERS, "connections_max_reauth_ms": 60_000}) as c:
        reauthentication_scenario(lambda listener: _raw(c, listener),
                                  ("alice", USERS["alice"]), ("bob", USERS["bob"]), 60_000)


def test_handshake_v0_raw_tokens(secured: Cluster) -> None:
    handshake_v0_scenario(lambda listener: _raw(secured, listener), ("alice", USERS["alice"]))


def test_session_lifetime_and_expiry(tmp_path) -> None:
    from emulator.cluster.clock import ManualClock

    clock = ManualClock()
    with Cluster(1, clock=clock, security={
            "listeners": "SASL_PLAINTEXT://127.0.0.1:0", "sasl_users": USERS,
            "connections_max_reauth_ms": 60_000}) as c:
        r = _raw(c, "SASL_PLAINTEXT")
        assert r.call(17, 1, {"mechanism": "PLAIN"})["error_code"] == 0
        resp = r.call(36, 1, {"auth_bytes": b"\0alice\0alice-secret"})
        assert resp["session_lifetime_ms"] == 60_000
        assert r.call(3, 12, METADATA)["brokers"]
        c.call(lambda: clock.advance(60_001))
        assert r.call(3, 12, METADATA) is None  # expired without re-authentication


def test_tls_client_on_plaintext_listener_and_reverse(secured: Cluster, caplog) -> None:
    ctx = ssl.create_default_context(cafile=secured.tls.ca)
    with socket.create_connection(_addr(secured, "PLAINTEXT"), timeout=10) as s:
        with pytest.raises((ssl.SSLError, ConnectionError)):
            ctx.wrap_socket(s, server_hostname="127.0.0.1")
    r = _raw(secured, "SSL")  # a plaintext Kafka request to a TLS listener
    assert r.call(18, 3, {"client_software_name": "t", "client_software_version": "1"}) is None
    # TLS itself still works on the same listener.
    with socket.create_connection(_addr(secured, "SSL"), timeout=10) as s:
        with ctx.wrap_socket(s, server_hostname="127.0.0.1") as t:
            assert Raw(t).call(3, 12, METADATA)["brokers"]


def test_command_line_from_environment_variables(tmp_path) -> None:
    """``kafka-emulator`` with KAFKA_EMULATOR_* security variables (as the Docker image and
    the testcontainers module's with_sasl set them): the ready line names each listener
    and the CA; a SCRAM client logs in on the SASL_SSL listener."""
    import os
    import sys

    env = {**os.environ, "KAFKA_EMULATOR_LISTENERS":
           "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
           "KAFKA_EMULATOR_SASL_USERS": "carol:c-pw,dave:d-pw",
           "KAFKA_EMULATOR_SUPER_USERS": "carol", "KAFKA_EMULATOR_AUTHORIZER": "1",
           "KAFKA_EMULATOR_TLS_DIR": str(tmp_path), "KAFKA_EMULATOR_BROKERS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "emulator", "--log-level", "WARNING"],
                            env=env, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert "kafka-emulator ready:" in line, line
        words = line.split()
        sasl_ssl = words[words.index("SASL_SSL") + 1]
        assert words[words.index("tls-ca") + 1] == str(tmp_path / "ca.pem")
        conf = {"bootstrap.servers": sasl_ssl, "security.protocol": "SASL_SSL",
                "sasl.mechanisms": "SCRAM-SHA-256", "sasl.username": "carol",
                "sasl.password": "c-pw", "ssl.ca.location": str(tmp_path / "ca.pem")}
        admin = AdminClient(conf)
        admin.create_topics([NewTopic("from-env", 1, 1)])["from-env"].result(15)
        assert "from-env" in admin.list_topics(timeout=10).topics
        dave = AdminClient({**conf, "sasl.username": "dave", "sasl.password": "d-pw"})
        assert "from-env" not in dave.list_topics(timeout=10).topics  # no DESCRIBE ACL
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_scram_users_through_the_admin_api(secured: Cluster) -> None:
    """AlterUserScramCredentials (51) then a SCRAM login as the new user; Describe (50)."""
    from confluent_kafka.admin import (
        ScramCredentialInfo,
        ScramMechanism,
        UserScramCredentialDeletion,
        UserScramCredentialUpsertion,
    )

    admin = AdminClient(secured.client_config("confluent", listener="SASL_PLAINTEXT",
                                              user="alice"))
    user = f"u{uuid.uuid4().hex[:8]}"
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192)
    for f in admin.alter_user_scram_credentials(
            [UserScramCredentialUpsertion(user, info, b"fresh-pw")]).values():
        f.result(10)
    futures = admin.describe_user_scram_credentials([user])
    desc = futures.result(10) if hasattr(futures, "result") else {
        k: f.result(10) for k, f in futures.items()}
    infos = desc[user].scram_credential_infos
    assert [(i.mechanism, i.iterations) for i in infos] == [(ScramMechanism.SCRAM_SHA_256, 8192)]
    conf = secured.client_config("confluent", listener="SASL_PLAINTEXT", user=user,
                                 mechanism="SCRAM-SHA-256", password="fresh-pw")
    assert AdminClient(conf).list_topics(timeout=10).brokers
    assert "fresh-pw" not in str(secured.security.credentials.to_dict())  # salted only
    for f in admin.alter_user_scram_credentials(
            [UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_256)]).values():
        f.result(10)
    assert user not in secured.security.credentials.users


def test_kafka_python_mutual_tls(tmp_path) -> None:
    """kafka-python with a client certificate (ssl_context from client_config) where the
    certificate is required and its subject is the only super user."""
    from kafka import KafkaConsumer, KafkaProducer

    with Cluster(1, security={"listeners": "SSL://127.0.0.1:0", "tls_dir": str(tmp_path),
                              "tls_client_auth": "required", "authorizer": True,
                              "super_users": ["CN=client,O=kafka-emulator"]}) as c:
        c.create_topic("kp-mtls", 1)
        kw = c.client_config("kafka-python")
        p = KafkaProducer(**kw)
        p.send("kp-mtls", b"signed").get(timeout=20)
        p.close()
        consumer = KafkaConsumer("kp-mtls", auto_offset_reset="earliest", **kw)
        got = wait_for(lambda: [r.value for rs in consumer.poll(500).values() for r in rs],
                       "the record over mutual TLS")
        assert got == [b"signed"]
        consumer.close()


def test_kafka_python_oauthbearer(secured: Cluster) -> None:
    """kafka-python with the unsecured-JWT token provider client_config hands it."""
    from kafka import KafkaProducer

    topic = f"kp-oauth-{uuid.uuid4().hex[:8]}"
    secured.create_topic(topic, 1)
    kw = secured.client_config("kafka-python", listener="SASL_PLAINTEXT", user="bob",
                               mechanism="OAUTHBEARER")
    p = KafkaProducer(**kw)
    meta = p.send(topic, b"token").get(timeout=20)
    p.close()
    assert meta.offset == 0


def _own_ca_and_server_cert(d) -> tuple[str, str, str]:
    """A user's own CA (RSA, unlike the emulator's EC one) and a broker certificate it
    signed for 127.0.0.1/localhost: (ca.pem, server chain .pem, server key .pem)."""
    now = datetime.datetime.now(datetime.UTC)

    def issue(subject, key, issuer, signer, ca: bool, sans=None):
        b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
             .public_key(key.public_key()).serial_number(x509.random_serial_number())
             .not_valid_before(now - datetime.timedelta(minutes=5))
             .not_valid_after(now + datetime.timedelta(days=1))
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if sans:
            b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        return b.sign(signer, hashes.SHA256())

    ca_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "my own CA")])
    ca = issue(ca_name, ca_key, ca_name, ca_key, True)
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    cert = issue(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "my broker")]), key,
                 ca_name, ca_key, False,
                 [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))])
    pem = serialization.Encoding.PEM
    paths = (d / "my-ca.pem", d / "my-server.pem", d / "my-server-key.pem")
    paths[0].write_bytes(ca.public_bytes(pem))
    paths[1].write_bytes(cert.public_bytes(pem) + ca.public_bytes(pem))
    paths[2].write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return tuple(str(p) for p in paths)


def test_user_supplied_certificate(tmp_path) -> None:
    """--tls-cert/--tls-key: the brokers present the user's certificate; clients given
    client_config() log in over SASL_SSL, and the generated CA alone does not verify it."""
    my_ca, cert, key = _own_ca_and_server_cert(tmp_path)
    with Cluster(1, security={"listeners": "SASL_SSL://127.0.0.1:0",
                              "sasl_users": {"alice": "alice-pw"}, "tls_cert": cert,
                              "tls_key": key, "tls_dir": str(tmp_path / "tls")}) as c:
        host, port = c.bootstrap_servers.split(",")[0].rsplit(":", 1)
        seen = ssl.get_server_certificate((host, int(port)), ca_certs=my_ca)
        assert seen.strip() == open(cert).read().split("-----END CERTIFICATE-----")[0].strip() \
            + "\n-----END CERTIFICATE-----"
        # client_config trusts the user's chain (trust.pem: generated CA + that chain)
        conf = c.client_config("confluent", user="alice", mechanism="SCRAM-SHA-256")
        assert conf["ssl.ca.location"] == str(tmp_path / "tls" / "trust.pem")
        topic = f"own-cert-{uuid.uuid4().hex[:6]}"
        assert len(_roundtrip_confluent(conf, topic, 5)) == 5
        generated = ssl.create_default_context(cafile=str(tmp_path / "tls" / "ca.pem"))
        with pytest.raises(ssl.SSLCertVerificationError):
            with socket.create_connection((host, int(port)), timeout=10) as s:
                generated.wrap_socket(s, server_hostname=host)
