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

This module only computes: which node holds the state, what a registration says, and
which configurations cannot be one cluster (:class:`Refused`, one line naming the
variable). The sockets are emulator.server.node_link's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from emulator.official_image import Listener, NodePlan, Refused

LINK_PORT_ENV = "KAFKA_EMULATOR_CLUSTER_LINK_PORT"
DEFAULT_LINK_PORT = 9990
# A front says it is alive this often; the link counts a node crashed after
# LINK_TIMEOUT_S of silence (a paused container, a cut network: no FIN arrives).
HEARTBEAT_S = 1.0
LINK_TIMEOUT_S = 3.0
HEARTBEAT, GOODBYE = b".\n", b"bye\n"


@dataclass(frozen=True)
class NodeCluster:
    """This node's place in a cluster of official-image nodes."""

    node_id: int
    voters: dict[int, tuple[str, int]]
    link_port: int

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
        return sorted(self.voters)


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
    if set(plan.roles) != {"broker", "controller"}:
        raise Refused(f"{var('process.roles')}: in a cluster of several nodes (named by "
                      f"{voters_var}) only combined nodes (broker,controller) are served; "
                      "dedicated controller or broker nodes are not")
    if plan.node_id not in plan.voters:
        raise Refused(f"{var('node.id')}: node {plan.node_id} is not one of the voters "
                      f"{voters_var} names ({', '.join(map(str, sorted(plan.voters)))})")
    ids = sorted(plan.voters)
    if ids != list(range(ids[0], ids[0] + len(ids))):
        raise Refused(f"{voters_var}: voter ids {ids} must be consecutive (each voter is "
                      "one virtual broker of the cluster)")
    if plan.brokers != 1:
        raise Refused("KAFKA_EMULATOR_BROKERS_PER_NODE: a node of a cluster of several "
                      f"nodes (named by {voters_var}) is one broker")
    for ls in plan.listeners:
        if ls.protocol in ("SSL", "SASL_SSL"):
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
    return NodeCluster(plan.node_id, dict(plan.voters), link_port)


@dataclass(frozen=True)
class Registration:
    """What a front tells the link: its node id and each listener's name, security
    protocol and advertised address."""

    node_id: int
    listeners: tuple[tuple[str, str, str, int], ...]

    def encode(self) -> bytes:
        return json.dumps({"node": self.node_id,
                           "listeners": [list(ls) for ls in self.listeners]}).encode() + b"\n"

    @classmethod
    def of(cls, plan: NodePlan) -> Registration:
        return cls(plan.node_id, tuple((ls.name, ls.protocol, ls.advertised_host,
                                        ls.advertised_port) for ls in plan.listeners))

    @classmethod
    def decode(cls, line: bytes) -> Registration:
        """Raises ValueError on anything but a registration."""
        msg = json.loads(line)
        listeners = tuple((str(n), str(p), str(h), int(port))
                          for n, p, h, port in msg["listeners"])
        return cls(int(msg["node"]), listeners)


def check_registration(reg: Registration, cluster: NodeCluster,
                       state_listeners: list[Listener]) -> str | None:
    """Why the state node cannot take this registration (one line naming the variable),
    or None. Every node must serve the state node's listener names with the same
    security protocols: a client on listener L is answered every broker's L address."""
    if reg.node_id not in cluster.voters:
        return (f"KAFKA_NODE_ID: node {reg.node_id} is not one of the voters of node "
                f"{cluster.state_node}'s KAFKA_CONTROLLER_QUORUM_VOTERS")
    want = sorted((ls.name, ls.protocol) for ls in state_listeners)
    have = sorted((name, proto) for name, proto, _, _ in reg.listeners)
    if want != have:
        return ("KAFKA_LISTENERS: node {} serves {}, node {} serves {}; every node of the "
                "cluster must have the same listener names and security protocols".format(
                    reg.node_id, ", ".join(f"{n}:{p}" for n, p in have), cluster.state_node,
                    ", ".join(f"{n}:{p}" for n, p in want)))
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
