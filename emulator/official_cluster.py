"""Official-image nodes that name each other as controller quorum voters: one cluster.

A Compose file written for apache/kafka gives each node ``KAFKA_NODE_ID`` and the same
``KAFKA_CONTROLLER_QUORUM_VOTERS`` (``1@kafka-1:9093,2@kafka-2:9093,3@kafka-3:9093``).
Kafka makes them one cluster through its Raft quorum; here the cluster's state lives in
one process and the other nodes are fronts of it (docs/official-images.md, "Several
nodes, one cluster"):

- the *state node* is the lowest voter id. It runs the emulated cluster with one
  virtual broker per voter, every broker listening on free ports, plus the *link*: a
  small TCP service on ``KAFKA_EMULATOR_CLUSTER_LINK_PORT`` (9990 by default) of the
  voter's host;
- every node (the state node too) runs a *front*: it listens on its own
  ``KAFKA_LISTENERS``, registers with the link (its node id and advertised listeners),
  and forwards each client connection, bytes unchanged, to its virtual broker's
  listener of the same name. Metadata therefore names each broker at its own node's
  advertised address;
- a front whose link goes silent or closes (its container stopped, its process killed)
  is that broker crashed; its next registration is the broker started again. A front
  stopped by SIGTERM says so first: a controlled shutdown, as Kafka's broker does.

In isolated mode (Kafka's dedicated controllers, ``KAFKA_PROCESS_ROLES=controller``,
and broker nodes, ``broker``, whose ids are not voters) the state node is the lowest
controller. Controller nodes serve no client listener (a Kafka client never talks to
a controller): they only register with the link, for the health check. Each broker node
registers with its own node id, and the cluster gains that broker then, as Kafka's
controller learns its brokers when they register; the first broker's listener names
and protocols are the ones every later broker must serve. A broker node with SASL
listeners also sends the users its own JAAS file gives (its ``KAFKA_OPTS``), since in
Kafka's example only the brokers hold that file while here the controller's process
serves the brokers' listeners: the first broker's users are the cluster's, and a later
broker whose users differ is refused.

This module only computes: which node holds the state, what a registration says, and
which configurations cannot be one cluster (:class:`Refused`, one line naming the
variable). The sockets are emulator.server.node_link's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from emulator.official_image import Listener, NodePlan, Refused

LINK_PORT_ENV = "KAFKA_EMULATOR_CLUSTER_LINK_PORT"
DEFAULT_LINK_PORT = 9990
# A front says it is alive this often; the link counts a node crashed after
# LINK_TIMEOUT_S of silence (a paused container, a cut network: no FIN arrives).
HEARTBEAT_S = 1.0
LINK_TIMEOUT_S = 3.0
HEARTBEAT, GOODBYE = b".\n", b"bye\n"


COMBINED = ("broker", "controller")


@dataclass(frozen=True)
class NodeCluster:
    """This node's place in a cluster of official-image nodes."""

    node_id: int
    voters: dict[int, tuple[str, int]]
    link_port: int
    roles: tuple[str, ...] = COMBINED  # sorted: broker, controller or both

    @property
    def controller_only(self) -> bool:
        return self.roles == ("controller",)

    @property
    def broker_only(self) -> bool:
        return self.roles == ("broker",)

    @property
    def state_node(self) -> int:
        """The node whose process holds the cluster's state: the lowest voter id."""
        return min(self.voters)

    @property
    def holds_state(self) -> bool:
        return self.node_id == self.state_node

    @property
    def link_host(self) -> str:
        """Where this node reaches the link: the state node's voter host, or the
        loopback from the state node itself."""
        return "127.0.0.1" if self.holds_state else self.voters[self.state_node][0]

    @property
    def broker_ids(self) -> list[int]:
        """The brokers the state node starts with: every voter when the voters are
        combined nodes; none in isolated mode (brokers come by registration)."""
        return [] if self.controller_only else sorted(self.voters)


def cluster_of(plan: NodePlan, env: Mapping[str, str]) -> NodeCluster | None:
    """The cluster this node belongs to, or None when it is a node of its own (no
    voters, or only itself). Raises :class:`Refused` for a layout that cannot be served
    as one cluster: never a silent split into clusters of one node."""
    def var(key: str) -> str:
        return plan.origin.get(key, "KAFKA_" + key.upper().replace(".", "_"))

    bootstrap = [s for s in plan.quorum_bootstrap_servers.split(",") if s.strip()]
    if not plan.voters and len(bootstrap) > 1:
        raise Refused(f"{var('controller.quorum.bootstrap.servers')}: a dynamic quorum of "
                      "several controllers is not served; name the nodes in "
                      "KAFKA_CONTROLLER_QUORUM_VOTERS (id@host:port,...) to make them one "
                      "cluster")
    if len(plan.voters) < 2:
        return None
    voters_var = var("controller.quorum.voters")
    roles = tuple(sorted(set(plan.roles)))
    voter_ids = ", ".join(map(str, sorted(plan.voters)))
    if roles == ("broker",):
        if plan.node_id in plan.voters:  # as Kafka's KafkaConfig refuses it
            raise Refused(f"{var('node.id')}: broker-only node {plan.node_id} is one of the "
                          f"voters {voters_var} names ({voter_ids}); a broker node needs an "
                          "id of its own")
    elif plan.node_id not in plan.voters:
        raise Refused(f"{var('node.id')}: node {plan.node_id} is not one of the voters "
                      f"{voters_var} names ({voter_ids})")
    if roles == ("controller",):
        served = [ls.name for ls in plan.listeners if not ls.controller]
        if served:  # as Kafka's KafkaConfig refuses it
            raise Refused(f"{var('listeners')}: controller-only node {plan.node_id} may "
                          f"only have controller listeners, not {', '.join(served)}")
    ids = sorted(plan.voters)
    if roles == COMBINED and ids != list(range(ids[0], ids[0] + len(ids))):
        raise Refused(f"{voters_var}: voter ids {ids} must be consecutive (each voter is "
                      "one virtual broker of the cluster)")
    if plan.brokers != 1:
        raise Refused("KAFKA_EMULATOR_BROKERS_PER_NODE: a node of a cluster of several "
                      f"nodes (named by {voters_var}) is one broker")
    for ls in plan.listeners:
        if ls.protocol in ("SSL", "SASL_SSL") and roles != ("controller",):
            raise Refused(f"{var('listener.security.protocol.map')}: listener {ls.name} is "
                          f"{ls.protocol}; a cluster of several nodes (named by {voters_var}) "
                          "serves PLAINTEXT and SASL_PLAINTEXT listeners only")
    raw = env.get(LINK_PORT_ENV, "").strip() or str(DEFAULT_LINK_PORT)
    try:
        link_port = int(raw)
    except ValueError:
        link_port = 0
    if not 0 < link_port < 65536:
        raise Refused(f"{LINK_PORT_ENV}: {raw!r} is not a port")
    if any(ls.port == link_port for ls in plan.listeners):
        raise Refused(f"{LINK_PORT_ENV}: port {link_port} is one of the node's listeners; "
                      "give the link another port")
    return NodeCluster(plan.node_id, dict(plan.voters), link_port, roles)


@dataclass(frozen=True)
class Registration:
    """What a front tells the link: its node id, its process roles, and each listener's
    name, security protocol and advertised address (none for a controller-only node:
    it serves no client). A broker-only node with SASL listeners adds its SASL users
    (name, password; sorted by name): the state node, a controller, has no JAAS file of
    its own to serve them from. Combined nodes send none: their state node's own JAAS
    file gives the cluster's users, as before."""

    node_id: int
    listeners: tuple[tuple[str, str, str, int], ...]
    roles: tuple[str, ...] = COMBINED
    # not in repr: a registration in a log or a failed assertion shows no password
    sasl_users: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    @property
    def controller_only(self) -> bool:
        return self.roles == ("controller",)

    @property
    def sasl(self) -> bool:
        """Whether a listener of this node is SASL_PLAINTEXT (the only SASL served)."""
        return any(p.startswith("SASL_") for _, p, _, _ in self.listeners)

    def encode(self) -> bytes:
        msg: dict[str, object] = {"node": self.node_id, "roles": list(self.roles),
                                  "listeners": [list(ls) for ls in self.listeners]}
        if self.sasl_users:  # absent otherwise: a registration an older link reads alike
            msg["sasl_users"] = dict(self.sasl_users)
        return json.dumps(msg).encode() + b"\n"

    @classmethod
    def of(cls, plan: NodePlan) -> Registration:
        roles = tuple(sorted(set(plan.roles)))
        served = [] if roles == ("controller",) else plan.listeners
        users = tuple(sorted(plan.sasl_users.items())) if roles == ("broker",) else ()
        return cls(plan.node_id, tuple((ls.name, ls.protocol, ls.advertised_host,
                                        ls.advertised_port) for ls in served), roles,
                   users if any(ls.protocol.startswith("SASL_") for ls in served) else ())

    @classmethod
    def decode(cls, line: bytes) -> Registration:
        """Raises ValueError on anything but a registration (an older node's, without
        roles or users, reads as a combined node without users)."""
        msg = json.loads(line)
        listeners = tuple((str(n), str(p), str(h), int(port))
                          for n, p, h, port in msg["listeners"])
        roles = tuple(sorted({str(r) for r in msg.get("roles", COMBINED)}))
        users = tuple(sorted((str(u), str(pw))
                             for u, pw in dict(msg.get("sasl_users") or {}).items()))
        return cls(int(msg["node"]), listeners, roles, users)


def listener_kinds(listeners: Iterable[Listener]) -> list[tuple[str, str]]:
    """(name, security protocol) of each listener: what every broker must serve alike."""
    return sorted((ls.name, ls.protocol) for ls in listeners)


def check_registration(reg: Registration, cluster: NodeCluster,
                       served: list[tuple[str, str]] | None,
                       served_by: int | None = None,
                       users: tuple[tuple[str, str], ...] = ()) -> str | None:
    """Why the state node cannot take this registration (one line naming the variable),
    or None. ``served`` is the listener names and security protocols every broker must
    serve (a client on listener L is answered every broker's L address): the state
    node's, or in isolated mode those of the first broker that registered
    (``served_by``), None before one did; ``users`` are that first broker's SASL
    users, which every later broker must give alike (a client that logs in through one
    broker must log in through all, as with Kafka's brokers sharing one JAAS file).
    Combined nodes register only with a combined state node, broker-only ones only
    with a controller-only one: a mixture would be brokers the state node does not know
    how to count."""
    what = cluster.state_node if served_by is None else served_by
    if reg.controller_only or reg.roles == COMBINED:
        if reg.node_id not in cluster.voters:
            return (f"KAFKA_NODE_ID: node {reg.node_id} is not one of the voters of node "
                    f"{cluster.state_node}'s KAFKA_CONTROLLER_QUORUM_VOTERS")
        if reg.roles != cluster.roles:
            return (f"KAFKA_PROCESS_ROLES: node {reg.node_id} is {','.join(reg.roles)}, node "
                    f"{cluster.state_node} {','.join(cluster.roles)}; the voters of a cluster "
                    "of several nodes are all combined nodes or all controller-only ones")
        if reg.controller_only:
            return None
    elif not cluster.controller_only:
        return (f"KAFKA_PROCESS_ROLES: broker-only node {reg.node_id} with combined voters "
                f"(node {cluster.state_node} is broker,controller) is not served; broker "
                "nodes are served with controller-only voters (isolated mode)")
    elif reg.node_id in cluster.voters:
        return (f"KAFKA_NODE_ID: broker-only node {reg.node_id} is one of the voters of node "
                f"{cluster.state_node}'s KAFKA_CONTROLLER_QUORUM_VOTERS")
    have = sorted((name, proto) for name, proto, _, _ in reg.listeners)
    if served is not None and served != have:
        return ("KAFKA_LISTENERS: node {} serves {}, node {} serves {}; every node of the "
                "cluster must have the same listener names and security protocols".format(
                    reg.node_id, ", ".join(f"{n}:{p}" for n, p in have), what,
                    ", ".join(f"{n}:{p}" for n, p in served)))
    if reg.roles == COMBINED:
        return None  # the state node's own users serve combined nodes
    if reg.sasl and not reg.sasl_users:  # a node from before users were sent
        return (f"KAFKA_OPTS: broker node {reg.node_id} sent no SASL users for its SASL "
                f"listeners; node {cluster.state_node} serves them only with the users of "
                "the broker node's JAAS file (run every node from the same image)")
    if served is not None and reg.sasl_users != users:
        # names only: a password never goes to a log
        return ("KAFKA_OPTS: the SASL users of node {}'s JAAS file ({}) differ from node "
                "{}'s ({}); every broker node must give the same users and passwords".format(
                    reg.node_id, ", ".join(u for u, _ in reg.sasl_users) or "none", what,
                    ", ".join(u for u, _ in users) or "none"))
    return None


def encode_reply(endpoints: Mapping[str, int] | None, refused: str | None = None) -> bytes:
    """The link's answer: the broker's listener ports by name, or a refusal."""
    msg: dict[str, object] = {"refused": refused} if refused else {"endpoints": dict(
        endpoints or {})}
    return json.dumps(msg).encode() + b"\n"


def decode_reply(line: bytes) -> dict[str, int]:
    """The endpoints a registration was given; :class:`Refused` with the link's line."""
    msg = json.loads(line)
    if "refused" in msg:
        raise Refused(str(msg["refused"]))
    return {str(k): int(v) for k, v in msg["endpoints"].items()}
