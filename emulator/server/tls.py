"""TLS for SSL and SASL_SSL listeners: certificates, the server context, client principals.

With ``--tls-dir DIR`` (or no directory: a temporary one) the emulator writes, at
start, a CA and a broker certificate for the advertised host (plus localhost and
127.0.0.1), and a client certificate for mutual TLS:

    DIR/ca.pem, DIR/ca-key.pem           the CA clients trust (kept across restarts)
    DIR/truststore.p12                   the CA as a Java/Spark PKCS12 truststore
    DIR/trust.pem                        with --tls-cert: the CA plus the user's chain,
                                         what clients trust (also in truststore.p12)
    DIR/server.pem, DIR/server-key.pem   the brokers' certificate chain and key
    DIR/client.pem, DIR/client-key.pem   a client certificate (CN=client) for mTLS
    DIR/client.p12                       the same as a Java PKCS12 keystore

Java stores use the password ``changeit``. A user-supplied certificate and key
(``--tls-cert``/``--tls-key``) replace the generated broker certificate. The
principal of a TLS client is ``User:`` plus its certificate's subject in RFC 2253
form, as Kafka's default principal builder gives it (``User:ANONYMOUS`` without one).
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

STORE_PASSWORD = "changeit"
CLIENT_CN = "client"
CLIENT_SUBJECT = f"CN={CLIENT_CN},O=kafka-emulator"


@dataclass
class TlsFiles:
    dir: str
    ca: str
    truststore: str
    cert: str
    key: str
    client_cert: str
    client_key: str
    client_keystore: str
    store_password: str = STORE_PASSWORD
    # What clients should trust: ca.pem, or with a user-supplied broker certificate
    # trust.pem (the generated CA plus the certificates of the user's chain, so a chain
    # ending in the user's CA verifies); truststore.p12 holds the same certificates.
    trust: str = ""

    def __post_init__(self) -> None:
        self.trust = self.trust or self.ca

    def as_dict(self) -> dict[str, str]:
        return dict(vars(self))


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kafka-emulator")])


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _issue(subject: x509.Name, key: ec.EllipticCurvePrivateKey, issuer: x509.Name,
           issuer_key: ec.EllipticCurvePrivateKey, *, ca: bool,
           sans: list[x509.GeneralName] | None = None,
           usage: list[x509.ObjectIdentifier] | None = None) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
         .public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(now - datetime.timedelta(hours=1))
         .not_valid_after(now + datetime.timedelta(days=3650 if ca else 825))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        b = b.add_extension(x509.KeyUsage(True, False, False, False, False, True, True,
                                          False, False), critical=True)
    if sans:
        b = b.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    if usage:
        b = b.add_extension(x509.ExtendedKeyUsage(usage), critical=False)
    return b.sign(issuer_key, hashes.SHA256())


def _san(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def prepare(tls_dir: str | None, hosts: list[str], cert: str | None = None,
            key: str | None = None) -> TlsFiles:
    """Write (or reuse the CA of) the TLS files; returns their paths."""
    d = Path(tls_dir) if tls_dir else Path(tempfile.mkdtemp(prefix="kafka-emulator-tls-"))
    d.mkdir(parents=True, exist_ok=True)
    ca_pem, ca_key_pem = d / "ca.pem", d / "ca-key.pem"
    if ca_pem.exists() and ca_key_pem.exists():
        ca_cert = x509.load_pem_x509_certificate(ca_pem.read_bytes())
        ca_key = serialization.load_pem_private_key(ca_key_pem.read_bytes(), None)
        assert isinstance(ca_key, ec.EllipticCurvePrivateKey), "ca-key.pem must be an EC key"
    else:
        ca_key = _key()
        ca_cert = _issue(_name("kafka-emulator CA"), ca_key, _name("kafka-emulator CA"),
                         ca_key, ca=True)
        ca_key_pem.write_bytes(_pem_key(ca_key))
        ca_key_pem.chmod(0o600)
        ca_pem.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    ca_der = ca_cert.public_bytes(serialization.Encoding.PEM)
    pw = serialization.BestAvailableEncryption(STORE_PASSWORD.encode())
    trusted = [ca_cert]
    trust_pem = ca_pem
    server_pem, server_key_pem = d / "server.pem", d / "server-key.pem"
    if cert and key:
        server_pem, server_key_pem = Path(cert), Path(key)
        trusted += x509.load_pem_x509_certificates(server_pem.read_bytes())
        trust_pem = d / "trust.pem"
        trust_pem.write_bytes(b"".join(c.public_bytes(serialization.Encoding.PEM)
                                       for c in trusted))
    (d / "truststore.p12").write_bytes(pkcs12.serialize_java_truststore(
        [pkcs12.PKCS12Certificate(c, b"kafka-emulator-ca" if i == 0 else f"trusted-{i}".encode())
         for i, c in enumerate(trusted)],
        pw))
    if not (cert and key):
        names = list(dict.fromkeys([*hosts, "localhost", "127.0.0.1", "::1"]))
        skey = _key()
        scert = _issue(_name(hosts[0] if hosts else "localhost"), skey, ca_cert.subject, ca_key,
                       ca=False, sans=[_san(h) for h in names if h],
                       usage=[ExtendedKeyUsageOID.SERVER_AUTH])
        server_key_pem.write_bytes(_pem_key(skey))
        server_pem.write_bytes(scert.public_bytes(serialization.Encoding.PEM) + ca_der)
    ckey = _key()
    # DER order O, CN: Java's RFC 2253 form (Kafka's principal) reads CN=client,O=...
    subject = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kafka-emulator"),
                         x509.NameAttribute(NameOID.COMMON_NAME, CLIENT_CN)])
    ccert = _issue(subject, ckey, ca_cert.subject, ca_key, ca=False,
                   usage=[ExtendedKeyUsageOID.CLIENT_AUTH])
    (d / "client-key.pem").write_bytes(_pem_key(ckey))
    (d / "client.pem").write_bytes(ccert.public_bytes(serialization.Encoding.PEM) + ca_der)
    (d / "client.p12").write_bytes(pkcs12.serialize_key_and_certificates(
        b"client", ckey, ccert, [ca_cert], pw))
    return TlsFiles(str(d), str(ca_pem), str(d / "truststore.p12"), str(server_pem),
                    str(server_key_pem), str(d / "client.pem"), str(d / "client-key.pem"),
                    str(d / "client.p12"), trust=str(trust_pem))


def server_context(files: TlsFiles, client_auth: str = "none",
                   ca: str | None = None) -> ssl.SSLContext:
    """The brokers' TLS context; ``client_auth`` is Kafka's ssl.client.auth."""
    if client_auth not in ("none", "requested", "required"):
        raise ValueError(f"ssl.client.auth must be none, requested or required: {client_auth}")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(files.cert, files.key)
    if client_auth != "none":
        ctx.load_verify_locations(ca or files.ca)
        ctx.verify_mode = ssl.CERT_REQUIRED if client_auth == "required" else ssl.CERT_OPTIONAL
    return ctx


def peer_principal(ssl_object: object) -> str | None:
    """``User:<subject DN>`` of a verified client certificate, else None."""
    getpeercert = getattr(ssl_object, "getpeercert", None)
    der = getpeercert(binary_form=True) if getpeercert else None
    if not der:
        return None
    return "User:" + x509.load_der_x509_certificate(der).subject.rfc4514_string()
