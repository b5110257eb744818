"""The official Kafka images' configuration conventions, translated for the emulator.

apache/kafka (and apache/kafka-native) and confluentinc/cp-kafka (and confluent-local)
are configured by environment variables: every ``KAFKA_<PROPERTY>`` variable is a
server property, named by Kafka's documented rule (drop ``KAFKA_``, lower case, ``_``
becomes ``.``, then ``...`` becomes ``-`` and ``..`` becomes ``_``: ``KAFKA_ABC___DEF``
is ``abc-def``, ``KAFKA_ABC__DEF`` is ``abc_def``), except the JVM and log4j variables
both images reserve. apache/kafka also reads a mounted ``/mnt/shared/config/
server.properties`` (the variables override its keys) and, when neither gives anything,
its packaged single-node defaults. docs/official-images.md is the user's account.

This module only computes: :func:`translate` turns the variables (and the properties
file's text) into a :class:`NodePlan` for ``emulator.runtime.Cluster``, or raises
:class:`Refused` naming the variable the emulator cannot honour. Reading files and
starting the cluster is ``emulator.official_image_run``'s job; files the plan needs
(a JAAS file, a keystore) come through the ``read_file`` callable, so unit tests give
them as a dict.

One node described by these variables is one broker, with the node's id (unless
``KAFKA_EMULATOR_BROKERS_PER_NODE`` asks for more). Nodes whose
``KAFKA_CONTROLLER_QUORUM_VOTERS`` name each other are one cluster
(emulator.official_cluster says how). The emulator's own ``KAFKA_EMULATOR_*`` path
keeps its multi-broker default.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from emulator.cluster.config_ops import listener_base_key
from emulator.cluster.configs import ConfigError, validate_broker_configs
from emulator.cluster.kafka_configs import BROKER
from emulator.properties import env_name, parse_properties, property_name

APACHE, CONFLUENT = "apache", "confluent"

# Variables both images keep for the JVM, log4j and their scripts, never server
# properties (apache/kafka's docker wrapper; cp-kafka's template excludes the same
# plus its ZooKeeper client socket).
RESERVED = frozenset({
    "KAFKA_VERSION", "KAFKA_HEAP_OPTS", "KAFKA_LOG4J_OPTS", "KAFKA_OPTS", "KAFKA_JMX_OPTS",
    "KAFKA_JVM_PERFORMANCE_OPTS", "KAFKA_GC_LOG_OPTS", "KAFKA_LOG4J_ROOT_LOGLEVEL",
    "KAFKA_LOG4J_LOGGERS", "KAFKA_TOOLS_LOG4J_LOGLEVEL", "KAFKA_JMX_HOSTNAME",
    "KAFKA_JMX_PORT", "KAFKA_ZOOKEEPER_CLIENT_CNXN_SOCKET",
})
RESERVED_NOTES = {
    "KAFKA_LOG4J_ROOT_LOGLEVEL": "log4j's root level (the emulator's log level follows it)",
    "KAFKA_LOG4J_LOGGERS": "log4j loggers", "KAFKA_TOOLS_LOG4J_LOGLEVEL": "the tools' log4j",
    "KAFKA_LOG4J_OPTS": "log4j's options", "KAFKA_VERSION": "the image's Kafka version",
}
# apache/kafka's packaged single-node configuration (its server.properties) and
# default CLUSTER_ID.
APACHE_DEFAULTS = {
    "CLUSTER_ID": "5L6g3nShT-eMCtK--X86sw",
    "KAFKA_NODE_ID": "1",
    "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP":
        "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,PLAINTEXT_HOST:PLAINTEXT",
    "KAFKA_LISTENERS":
        "PLAINTEXT://localhost:29092,CONTROLLER://localhost:29093,PLAINTEXT_HOST://0.0.0.0:9092",
    "KAFKA_ADVERTISED_LISTENERS": "PLAINTEXT://localhost:29092,PLAINTEXT_HOST://localhost:9092",
    "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1",
    "KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS": "0",
    "KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "1",
    "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "1",
    "KAFKA_PROCESS_ROLES": "broker,controller",
    "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@localhost:29093",
    "KAFKA_INTER_BROKER_LISTENER_NAME": "PLAINTEXT",
    "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
    "KAFKA_LOG_DIRS": "/tmp/kraft-combined-logs",
}
SECRETS_DIR = "/etc/kafka/secrets"  # where both images find KAFKA_SSL_*_FILENAME files
PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
BROKER_KEYS = frozenset(row[0] for row in BROKER)
# Properties the plan itself turns into listeners, ids, security: not passed on as
# broker configs.
STRUCTURAL = frozenset({
    "listeners", "advertised.listeners", "listener.security.protocol.map",
    "inter.broker.listener.name", "controller.listener.names", "process.roles", "node.id",
    "broker.id", "controller.quorum.voters", "controller.quorum.bootstrap.servers",
    "zookeeper.connect", "sasl.enabled.mechanisms", "sasl.mechanism.inter.broker.protocol",
    "sasl.mechanism.controller.protocol", "authorizer.class.name", "super.users",
    "allow.everyone.if.no.acl.found", "ssl.client.auth", "ssl.keystore.location",
    "ssl.keystore.password", "ssl.keystore.type", "ssl.key.password",
    "ssl.keystore.filename", "ssl.keystore.credentials", "ssl.key.credentials",
    "ssl.truststore.filename", "ssl.truststore.credentials", "ssl.truststore.location",
    "ssl.truststore.password", "ssl.truststore.type", "ssl.endpoint.identification.algorithm",
    "ssl.keystore.certificate.chain", "ssl.keystore.key", "ssl.truststore.certificates",
})
_LISTENER = re.compile(r"^([A-Za-z0-9_-]+)://(\[[^\]]*\]|[^:/]*):(\d+)$")
_JAAS_USER = re.compile(r"""\buser_([^\s=]+)\s*=\s*"([^"]*)\"""")


class Refused(ValueError):
    """A setting the official image honours and the emulator cannot: one line naming
    the variable (or server.properties key) and why."""


@dataclass
class Listener:
    name: str
    protocol: str
    bind_host: str
    port: int
    advertised_host: str
    advertised_port: int
    controller: bool = False


@dataclass
class NodePlan:
    """What one official-image node becomes: ``Cluster`` arguments and log lines."""

    node_id: int
    brokers: int
    cluster_id: str | None
    listeners: list[Listener]
    config: dict[str, str]
    sasl_users: dict[str, str] = field(default_factory=dict)
    super_users: list[str] = field(default_factory=list)
    authorizer: bool = False
    allow_everyone_if_no_acl_found: bool = False
    tls_client_auth: str = "none"
    # PEM text of the broker certificate chain and key from a mounted keystore; None
    # with a TLS listener: the emulator generates a CA and certificate.
    tls_cert_pem: bytes | None = None
    tls_key_pem: bytes | None = None
    # PEM CA certificates of a mounted truststore, for ssl.client.auth
    tls_client_ca_pem: bytes | None = None
    zookeeper: bool = False
    roles: tuple[str, ...] = ("broker", "controller")
    # controller.quorum.voters: node id -> (host, port). Several voters make this node
    # one of a cluster of nodes (emulator.official_cluster).
    voters: dict[int, tuple[str, int]] = field(default_factory=dict)
    quorum_bootstrap_servers: str = ""  # controller.quorum.bootstrap.servers (KIP-853)
    # Where each property came from (a variable's name, or a server.properties key),
    # so that a refusal names what the user wrote.
    origin: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # INFO lines for the log
    warnings: list[str] = field(default_factory=list)

    @property
    def listeners_spec(self) -> str:
        """The listeners in the emulator's syntax (the served listener first)."""
        return ",".join(f"{ls.name}://{ls.bind_host}:{ls.port}" for ls in self.listeners)

    @property
    def protocol_map(self) -> str:
        return ",".join(f"{ls.name}:{ls.protocol}" for ls in self.listeners)

    @property
    def advertised(self) -> dict[str, tuple[str, int]]:
        return {ls.name: (ls.advertised_host, ls.advertised_port) for ls in self.listeners}


def env_properties(env: Mapping[str, str]) -> dict[str, str]:
    """Server properties from ``KAFKA_*`` variables (reserved and emulator ones left out)."""
    return {property_name(k): v for k, v in env.items()
            if k.startswith("KAFKA_") and k not in RESERVED
            and not k.startswith("KAFKA_EMULATOR_")}


def merged_properties(env: Mapping[str, str], flavor: str,
                      mounted: str | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """The node's server properties and where each came from (a variable's name, or
    ``server.properties``), as the flavor's scripts combine them."""
    env = dict(env)
    origin: dict[str, str] = {}
    props: dict[str, str] = {}
    # apache/kafka's documented rule: its packaged single-node configuration only when
    # the user gives none, neither a mounted file nor a property variable.
    if flavor == APACHE and (mounted is None or not mounted.strip()) and not env_properties(
            env):
        env.update({k: v for k, v in APACHE_DEFAULTS.items() if k != "CLUSTER_ID"})
    if mounted is not None:
        props.update(parse_properties(mounted))
        origin.update({k: f"server.properties key {k}" for k in props})
    for var, value in env.items():
        if var.startswith("KAFKA_") and var not in RESERVED and not var.startswith(
                "KAFKA_EMULATOR_"):
            key = property_name(var)
            props[key] = value
            origin[key] = var
    # Without listeners, both images listen where they advertise, on every interface.
    roles = props.get("process.roles", "")
    if not props.get("listeners") and props.get("advertised.listeners") and (
            roles.strip() != "controller"):
        props["listeners"] = re.sub(r"://[^:]*:", "://0.0.0.0:", props["advertised.listeners"])
        origin["listeners"] = origin.get("advertised.listeners", "advertised.listeners")
    return props, origin


def _parse_endpoints(value: str, what: str) -> list[tuple[str, str, int]]:
    out = []
    for item in value.split(","):
        item = item.strip()
        if not item:
            continue
        m = _LISTENER.match(item)
        if m is None:
            raise Refused(f"{what}: {item!r} is not NAME://HOST:PORT")
        out.append((m.group(1).upper(), m.group(2).strip("[]"), int(m.group(3))))
    return out


def jaas_users(text: str) -> dict[str, str]:
    """``user_NAME="password"`` entries of a JAAS login configuration (Kafka's PLAIN
    login module lists the users it accepts that way)."""
    return dict(_JAAS_USER.findall(text))


def jaas_path(env: Mapping[str, str]) -> str | None:
    """The JAAS file ``KAFKA_OPTS`` names with -Djava.security.auth.login.config=."""
    m = re.search(r"-Djava\.security\.auth\.login\.config=(\S+)", env.get("KAFKA_OPTS", ""))
    return m.group(1).strip("'\"") if m else None


def translate(env: Mapping[str, str], flavor: str = APACHE, *, mounted: str | None = None,
              hostname: str = "localhost",
              read_file: Callable[[str], bytes | None] = lambda _p: None) -> NodePlan:
    """The plan for one node configured as ``flavor``'s image documents it.

    ``mounted`` is /mnt/shared/config/server.properties's text (apache/kafka) or the
    properties file cp-kafka's configure step wrote; ``hostname`` the container's
    (what Kafka advertises for a listener on every interface); ``read_file`` gives a
    file's bytes or None when it does not exist.
    """
    props, origin = merged_properties(env, flavor, mounted)

    def var(key: str) -> str:
        return origin.get(key, env_name(key))

    if flavor == CONFLUENT and not props:
        props, origin = merged_properties({**APACHE_DEFAULTS, **env}, APACHE, mounted)
    notes: list[str] = []
    warnings: list[str] = []
    for name in sorted(RESERVED):
        if env.get(name):
            notes.append(f"{name}: {RESERVED_NOTES.get(name, 'a JVM setting')}; the emulator "
                         "runs no JVM, so it is not used" if name != "KAFKA_OPTS" else
                         "KAFKA_OPTS: only -Djava.security.auth.login.config (the JAAS file "
                         "of the SASL users) is read; the emulator runs no JVM")
    zookeeper = bool(props.get("zookeeper.connect"))
    if zookeeper:
        notes.append(f"{var('zookeeper.connect')}: no ZooKeeper is needed; the emulator "
                     "keeps the cluster metadata itself (as a KRaft cluster would)")
    roles = tuple(r.strip() for r in props.get("process.roles", "").split(",") if r.strip())
    for r in roles:
        if r not in ("broker", "controller"):
            raise Refused(f"{var('process.roles')}: unknown role {r!r} (broker, controller)")
    if not roles:
        roles = ("broker",)
    id_key = "node.id" if props.get("node.id") else "broker.id"
    try:
        node_id = int(props.get(id_key) or 1)
    except ValueError:
        raise Refused(f"{var(id_key)}: {props[id_key]!r} is not a number") from None
    if node_id < 0:
        raise Refused(f"{var(id_key)}: {node_id} must be 0 or more")
    try:
        brokers = int(env.get("KAFKA_EMULATOR_BROKERS_PER_NODE") or 1)
    except ValueError:
        brokers = 0
    if brokers < 1:
        raise Refused("KAFKA_EMULATOR_BROKERS_PER_NODE: must be a number of 1 or more")
    if flavor == CONFLUENT and roles != ("controller",) and not props.get(
            "advertised.listeners"):
        raise Refused("KAFKA_ADVERTISED_LISTENERS is required (cp-kafka's configure step "
                      "refuses to start without it)")

    # ---- listeners -------------------------------------------------------------------
    pmap_value = props.get("listener.security.protocol.map")
    pmap = {p: p for p in PROTOCOLS}
    if pmap_value:
        pmap = {}
        for item in pmap_value.split(","):
            name, sep, proto = item.strip().partition(":")
            if not sep or proto.strip().upper() not in PROTOCOLS:
                raise Refused(f"{var('listener.security.protocol.map')}: bad entry {item!r} "
                              f"(NAME:PROTOCOL, protocol one of {', '.join(PROTOCOLS)})")
            pmap[name.strip().upper()] = proto.strip().upper()
    controller_names = {n.strip().upper() for n in
                        props.get("controller.listener.names", "").split(",") if n.strip()}
    if not pmap_value:
        # Kafka's effective map: without an explicit map, controller listeners whose
        # names are not protocols are PLAINTEXT.
        pmap.update({n: "PLAINTEXT" for n in controller_names if n not in pmap})
    if not props.get("listeners"):
        raise Refused(f"{var('listeners')}: no listeners given (set KAFKA_LISTENERS or "
                      "KAFKA_ADVERTISED_LISTENERS)")
    served = _parse_endpoints(props["listeners"], var("listeners"))
    advertised = {name: (host, port) for name, host, port in _parse_endpoints(
        props.get("advertised.listeners", ""), var("advertised.listeners"))}
    voters: dict[int, tuple[str, int]] = {}
    for item in props.get("controller.quorum.voters", "").split(","):
        m = re.match(r"^\s*(\d+)@(\[[^\]]*\]|[^:]+):(\d+)\s*$", item)
        if m:
            voters[int(m.group(1))] = (m.group(2).strip("[]"), int(m.group(3)))
    if roles == ("controller",) and len(voters) < 2:  # several: emulator.official_cluster
        notes.append(f"{var('process.roles')}=controller: this node serves its controller "
                     "listener as a broker would (Metadata, Produce, Fetch...)")
    names = [n for n, _, _ in served]
    if len(set(names)) != len(names):
        raise Refused(f"{var('listeners')}: listener names must be unique")
    for name in advertised:
        if name not in names:
            raise Refused(f"{var('advertised.listeners')}: {name} is not one of the "
                          f"listeners ({', '.join(names)})")
    listeners: list[Listener] = []
    for name, host, port in served:
        if name not in pmap:
            raise Refused(f"{var('listener.security.protocol.map')}: listener {name} has no "
                          "security protocol (map it NAME:PROTOCOL)")
        is_controller = name in controller_names
        if name in advertised:
            a_host, a_port = advertised[name]
        elif is_controller and node_id in voters:
            a_host, a_port = voters[node_id]
        else:
            a_host, a_port = host, port
        if a_host in ("", "0.0.0.0", "::"):
            a_host = hostname
        listeners.append(Listener(name, pmap[name], host or "0.0.0.0", port, a_host, a_port,
                                  is_controller))
    # A broker listener first (the cluster's primary one), controller listeners last;
    # each answers Metadata with its own advertised address.
    listeners.sort(key=lambda ls: ls.controller)
    if any(ls.port == 0 for ls in listeners):
        raise Refused(f"{var('listeners')}: port 0 cannot be advertised; give each "
                      "listener a port")

    # ---- SASL ----------------------------------------------------------------------------
    users: dict[str, str] = {}
    sasl = any(ls.protocol.startswith("SASL_") for ls in listeners)
    if sasl:
        mechs = [m.strip().upper() for m in props.get("sasl.enabled.mechanisms", "").split(",")
                 if m.strip()]
        for key, value in props.items():
            if key.endswith(".sasl.enabled.mechanisms"):
                mechs += [m.strip().upper() for m in value.split(",") if m.strip()]
        for mech in mechs:
            if mech not in SASL_MECHANISMS:
                raise Refused(f"{var('sasl.enabled.mechanisms')}: {mech} is not served by the "
                              f"emulator ({', '.join(SASL_MECHANISMS)} are)")
        path = jaas_path(env)
        if path:
            text = read_file(path)
            if text is None:
                raise Refused(f"KAFKA_OPTS: the JAAS file {path} does not exist")
            users.update(jaas_users(text.decode("utf-8", "replace")))
        for key, value in props.items():
            if key.endswith("sasl.jaas.config"):
                users.update(jaas_users(value))
        if not users:
            raise Refused("KAFKA_OPTS: a SASL listener needs users: "
                          "-Djava.security.auth.login.config=FILE whose KafkaServer section "
                          "lists user_NAME=\"PASSWORD\", or KAFKA_LISTENER_NAME_<L>_<MECH>_SASL_"
                          "JAAS_CONFIG")
        notes.append(f"SASL users {', '.join(sorted(users))} for PLAIN, SCRAM-SHA-256, "
                     "SCRAM-SHA-512 and OAUTHBEARER")

    # ---- authorizer ---------------------------------------------------------------------
    authorizer = False
    cls = props.get("authorizer.class.name", "").strip()
    if cls:
        if cls != STANDARD_AUTHORIZER:
            raise Refused(f"{var('authorizer.class.name')}: {cls} is not available; the "
                          f"emulator checks ACLs as {STANDARD_AUTHORIZER}")
        authorizer = True
    supers = [u.strip().removeprefix("User:") for u in props.get("super.users", "").split(";")
              if u.strip()]

    # ---- TLS -----------------------------------------------------------------------------
    cert_pem = key_pem = client_ca_pem = None
    client_auth = props.get("ssl.client.auth", "none").strip().lower() or "none"
    if client_auth not in ("none", "requested", "required"):
        raise Refused(f"{var('ssl.client.auth')}: {client_auth!r} (none, requested, required)")
    if any(ls.protocol in ("SSL", "SASL_SSL") for ls in listeners):
        cert_pem, key_pem = _keystore(props, var, read_file)
        if cert_pem is None:
            notes.append("TLS: no keystore given; the emulator generates a CA and a "
                         "certificate for the advertised hosts (the ready line names "
                         "the CA file)")
        elif client_auth != "none":
            client_ca_pem = _truststore(props, var, read_file)
            if client_ca_pem is None:
                raise Refused(f"{var('ssl.client.auth')}={client_auth} with a mounted "
                              "keystore needs the truststore client certificates chain to "
                              "(KAFKA_SSL_TRUSTSTORE_FILENAME or _LOCATION)")

    # ---- the rest: broker configs ----------------------------------------------------
    config: dict[str, str] = {}
    for key, value in props.items():
        if key in STRUCTURAL:
            continue
        if key.startswith("listener.name."):
            listener_key = _listener_key(key, value, props, var)
            if listener_key is not None:
                warnings.append(listener_key)
            elif listener_base_key(key) is not None:
                config[key] = value  # acted on per listener, as Kafka's connection quotas
            continue
        if key in BROKER_KEYS:
            try:  # as Kafka checks its server.properties at start
                validate_broker_configs({key: value})
            except ConfigError as e:
                raise Refused(f"{var(key)}: {e}") from None
            config[key] = value
        else:
            warnings.append(f"{var(key)}: {key} is not a Kafka broker config; not used "
                            "(as Kafka logs unknown configs)")
    return NodePlan(
        node_id=node_id, brokers=brokers,
        cluster_id=env.get("CLUSTER_ID") or (APACHE_DEFAULTS["CLUSTER_ID"] if flavor == APACHE
                                             else None),
        listeners=listeners, config=config, sasl_users=users, super_users=supers,
        authorizer=authorizer,
        allow_everyone_if_no_acl_found=props.get(
            "allow.everyone.if.no.acl.found", "false").strip().lower() == "true",
        tls_client_auth=client_auth, tls_cert_pem=cert_pem, tls_key_pem=key_pem,
        tls_client_ca_pem=client_ca_pem,
        zookeeper=zookeeper, roles=roles, voters=voters,
        quorum_bootstrap_servers=props.get("controller.quorum.bootstrap.servers", ""),
        origin={k: var(k) for k in props}, notes=notes, warnings=warnings)


def _listener_key(key: str, value: str, props: Mapping[str, str],
                  var: Callable[[str], str]) -> str | None:
    """What becomes of one ``listener.name.<listener>.<key>`` property: None where it is
    honoured (the SASL keys read above, the connection limits the broker acts on, a TLS
    key equal to the one every listener shares), a warning line where Kafka would take it
    but nothing here depends on it; a per-listener TLS identity that differs from the
    shared one is refused, since every SSL listener here serves the same stores."""
    base = key.removeprefix("listener.name.").partition(".")[2]
    if key.endswith("sasl.jaas.config") or key.endswith(".sasl.enabled.mechanisms"):
        return None
    if listener_base_key(key) is not None:
        return None
    if base.startswith("ssl."):
        if props.get(base) == value:
            return None
        raise Refused(f"{var(key)}: a TLS setting for one listener is not served (every "
                      f"SSL listener shares one identity); set {var(base)} instead")
    return f"{var(key)}: {key} is not used by the emulator (a per-listener setting)"


def _secret(props: dict[str, str], key: str, var: Callable[[str], str],
            read_file: Callable[[str], bytes | None]) -> str | None:
    """A password given directly or, as both images' scripts take it, in a file of
    /etc/kafka/secrets named by ``*_CREDENTIALS``."""
    creds = {"ssl.keystore.password": "ssl.keystore.credentials",
             "ssl.key.password": "ssl.key.credentials",
             "ssl.truststore.password": "ssl.truststore.credentials"}[key]
    if props.get(key):
        return props[key]
    if props.get(creds):
        path = f"{SECRETS_DIR}/{props[creds]}"
        data = read_file(path)
        if data is None:
            raise Refused(f"{var(creds)}: {path} does not exist")
        return data.decode().strip()
    return None


def _keystore(props: dict[str, str], var: Callable[[str], str],
              read_file: Callable[[str], bytes | None]) -> tuple[bytes | None, bytes | None]:
    """The broker certificate chain and key (PEM) from the keystore the properties
    name: JKS (emulator.jks), PKCS12 or PEM."""
    if props.get("ssl.keystore.certificate.chain") and props.get("ssl.keystore.key"):
        return (props["ssl.keystore.certificate.chain"].encode(),
                props["ssl.keystore.key"].encode())
    key = "ssl.keystore.location"
    location = props.get(key)
    if not location and props.get("ssl.keystore.filename"):
        key = "ssl.keystore.filename"
        location = f"{SECRETS_DIR}/{props[key]}"
    if not location:
        return None, None
    data = read_file(location)
    if data is None:
        raise Refused(f"{var(key)}: the keystore {location} does not exist")
    if data[:4] == b"\xfe\xed\xfe\xed":
        return _jks_key(data, location, props, key, var, read_file)
    if b"-----BEGIN" in data:
        if b"PRIVATE KEY-----" not in data:
            raise Refused(f"{var(key)}: the PEM keystore {location} has no private key")
        pem = re.findall(rb"(-----BEGIN ([A-Z ]+)-----.*?-----END \2-----)", data, re.S)
        certs = b"\n".join(b for b, kind in pem if kind == b"CERTIFICATE")
        keys = b"\n".join(b for b, kind in pem if kind.endswith(b"PRIVATE KEY"))
        return certs + b"\n", keys + b"\n"
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    password = _secret(props, "ssl.keystore.password", var, read_file)
    try:
        pkey, cert, extra = pkcs12.load_key_and_certificates(
            data, password.encode() if password else None)
    except ValueError as e:
        raise Refused(f"{var(key)}: cannot open the PKCS12 keystore {location}: {e}") from None
    if pkey is None or cert is None:
        raise Refused(f"{var(key)}: the keystore {location} holds no private key entry")
    chain = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in [cert, *extra])
    key_pem = pkey.private_bytes(serialization.Encoding.PEM,
                                 serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())
    return chain, key_pem


def _pem_cert(der: bytes) -> bytes:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    return x509.load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM)


def _jks_key(data: bytes, location: str, props: dict[str, str], key: str,
             var: Callable[[str], str], read_file: Callable[[str], bytes | None]
             ) -> tuple[bytes, bytes]:
    """The first private key entry of a JKS keystore (emulator.jks), its key decrypted
    with ssl.key.password (else the keystore's password, as Kafka falls back)."""
    from cryptography.hazmat.primitives import serialization

    from emulator import jks

    password = (_secret(props, "ssl.key.password", var, read_file)
                or _secret(props, "ssl.keystore.password", var, read_file))
    try:
        entries = [e for e in jks.load(data, password) if e.key_der is not None]
    except jks.JksError as e:
        raise Refused(f"{var(key)}: cannot open the JKS keystore {location}: {e}") from None
    if not entries:
        raise Refused(f"{var(key)}: the keystore {location} holds no private key entry")
    pkey = serialization.load_der_private_key(entries[0].key_der or b"", None)
    key_pem = pkey.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                 serialization.NoEncryption())
    return b"".join(_pem_cert(der) for der in entries[0].certs_der), key_pem


def _truststore(props: dict[str, str], var: Callable[[str], str],
                read_file: Callable[[str], bytes | None]) -> bytes | None:
    """The CA certificates (PEM) of the truststore the properties name: JKS, PKCS12 or
    PEM."""
    if props.get("ssl.truststore.certificates"):
        return props["ssl.truststore.certificates"].encode()
    key = "ssl.truststore.location"
    location = props.get(key)
    if not location and props.get("ssl.truststore.filename"):
        key = "ssl.truststore.filename"
        location = f"{SECRETS_DIR}/{props[key]}"
    if not location:
        return None
    data = read_file(location)
    if data is None:
        raise Refused(f"{var(key)}: the truststore {location} does not exist")
    if data[:4] == b"\xfe\xed\xfe\xed":
        from emulator import jks

        try:
            entries = jks.load(data)
        except jks.JksError as e:
            raise Refused(f"{var(key)}: cannot open the JKS truststore {location}: {e}"
                          ) from None
        return b"".join(_pem_cert(der) for e in entries for der in e.certs_der)
    if b"-----BEGIN CERTIFICATE-----" in data:
        return data
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12

    password = _secret(props, "ssl.truststore.password", var, read_file)
    try:
        store = pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError as e:
        raise Refused(f"{var(key)}: cannot open the PKCS12 truststore {location}: {e}") from None
    certs = [c.certificate for c in store.additional_certs]
    if store.cert is not None:
        certs.append(store.cert.certificate)
    if not certs:
        raise Refused(f"{var(key)}: the truststore {location} holds no certificate")
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certs)


# The lines the official images' users wait for, one per waiting convention:
# Testcontainers' KafkaContainer/ConfluentKafkaContainer (Java) and the Go module wait
# for the first, Python's KRaft mode for the second, its ZooKeeper mode for the third.
def ready_lines(plan: NodePlan) -> list[str]:
    if plan.roles == ("controller",) and len(plan.voters) > 1:  # a controller, not a broker
        return [f"[KafkaRaftServer nodeId={plan.node_id}] Kafka Server started"]
    lines = []
    for n in range(plan.brokers):
        bid = plan.node_id + n
        lines.append(f"[BrokerLifecycleManager id={bid}] The broker has been unfenced. "
                     "Transitioning from RECOVERY to RUNNING.")
        lines.append(f"[KafkaRaftServer nodeId={bid}] Kafka Server started")
        if plan.zookeeper:
            lines.append(f"[KafkaServer id={bid}] started")
    return lines
