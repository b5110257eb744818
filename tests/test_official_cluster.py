"""emulator.official_cluster: which official-image configurations are one cluster of
nodes, which are refused in one line, and what a node's front tells the state node
(the processes and containers are client_tests/test_official_nodes.py and
client_tests/test_official_image.py)."""

from __future__ import annotations

import asyncio

import pytest

from emulator.official_cluster import (
    DEFAULT_LINK_PORT,
    LINK_PORT_ENV,
    NodeCluster,
    Registration,
    check_registration,
    cluster_of,
    decode_reply,
    encode_reply,
    listener_kinds,
)
from emulator.official_image import Refused, translate
from emulator.official_image_run import isolated_state_plan, state_plan


def node_env(node: int, **extra: str) -> dict[str, str]:
    """Node ``node`` of Kafka's three-node combined-mode Compose example."""
    env = {
        "KAFKA_NODE_ID": str(node),
        "KAFKA_PROCESS_ROLES": "broker,controller",
        "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP":
            "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,PLAINTEXT_HOST:PLAINTEXT",
        "KAFKA_CONTROLLER_QUORUM_VOTERS": "1@kafka-1:9093,2@kafka-2:9093,3@kafka-3:9093",
        "KAFKA_LISTENERS": "PLAINTEXT://:19092,CONTROLLER://:9093,PLAINTEXT_HOST://:9092",
        "KAFKA_ADVERTISED_LISTENERS":
            f"PLAINTEXT://kafka-{node}:19092,PLAINTEXT_HOST://localhost:{node}9092",
        "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
        "CLUSTER_ID": "4L6g3nShT-eMCtK--X86sw",
    }
    env.update(extra)
    return env


def nodes_of(env: dict[str, str]) -> NodeCluster | None:
    return cluster_of(translate(env, hostname=f"kafka-{env['KAFKA_NODE_ID']}"), env)


def test_voters_naming_each_other_are_one_cluster_with_its_state_in_the_lowest() -> None:
    one, two = nodes_of(node_env(1)), nodes_of(node_env(2))
    assert one is not None and two is not None
    assert one.broker_ids == two.broker_ids == [1, 2, 3]
    assert (one.state_node, one.holds_state, one.link_host) == (1, True, "127.0.0.1")
    assert (two.state_node, two.holds_state, two.link_host) == (1, False, "kafka-1")
    assert two.link_port == DEFAULT_LINK_PORT
    other_port = nodes_of(node_env(2, **{LINK_PORT_ENV: "7777"}))
    assert other_port is not None and other_port.link_port == 7777


def test_a_single_voter_is_a_node_of_its_own() -> None:
    env = node_env(1, KAFKA_CONTROLLER_QUORUM_VOTERS="1@kafka-1:9093")
    assert nodes_of(env) is None
    assert nodes_of({k: v for k, v in env.items()
                     if k != "KAFKA_CONTROLLER_QUORUM_VOTERS"}) is None


@pytest.mark.parametrize(("extra", "variable", "words"), [
    ({"KAFKA_PROCESS_ROLES": "controller"}, "KAFKA_LISTENERS",
     "controller-only node 2 may only have controller listeners, not PLAINTEXT"),
    ({"KAFKA_PROCESS_ROLES": "broker"}, "KAFKA_NODE_ID", "broker-only node 2 is one of the"),
    ({"KAFKA_NODE_ID": "4"}, "KAFKA_NODE_ID", "not one of the voters"),
    ({"KAFKA_CONTROLLER_QUORUM_VOTERS": "1@kafka-1:9093,2@kafka-2:9093,4@kafka-3:9093"},
     "KAFKA_CONTROLLER_QUORUM_VOTERS", "consecutive"),
    ({"KAFKA_EMULATOR_BROKERS_PER_NODE": "3"}, "KAFKA_EMULATOR_BROKERS_PER_NODE", "one broker"),
    ({"KAFKA_LISTENER_SECURITY_PROTOCOL_MAP":
      "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,PLAINTEXT_HOST:SASL_SSL",
      "KAFKA_OPTS": ""}, "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP", "PLAINTEXT_HOST is SASL_SSL"),
    ({LINK_PORT_ENV: "9092"}, LINK_PORT_ENV, "one of the node's listeners"),
    ({LINK_PORT_ENV: "x"}, LINK_PORT_ENV, "not a port"),
    ({"KAFKA_CONTROLLER_QUORUM_VOTERS": "",
      "KAFKA_CONTROLLER_QUORUM_BOOTSTRAP_SERVERS": "kafka-1:9093,kafka-2:9093"},
     "KAFKA_CONTROLLER_QUORUM_BOOTSTRAP_SERVERS", "dynamic quorum"),
])
def test_what_cannot_be_one_cluster_is_refused_naming_the_variable(
        extra: dict[str, str], variable: str, words: str) -> None:
    env = node_env(2, **extra)
    if "SASL_SSL" in str(extra):
        env["KAFKA_LISTENER_NAME_PLAINTEXT_HOST_PLAIN_SASL_JAAS_CONFIG"] = 'user_a="b";'
    with pytest.raises(Refused) as e:
        nodes_of(env)
    line = str(e.value)
    assert line.startswith(f"{variable}:") and words in line and "\n" not in line, line


def test_a_registration_says_the_nodes_advertised_listeners() -> None:
    reg = Registration.of(translate(node_env(2), hostname="kafka-2"))
    assert Registration.decode(reg.encode()) == reg
    assert reg.node_id == 2
    assert ("PLAINTEXT_HOST", "PLAINTEXT", "localhost", 29092) in reg.listeners
    assert ("PLAINTEXT", "PLAINTEXT", "kafka-2", 19092) in reg.listeners
    # the controller listener is advertised as its voter entry
    assert ("CONTROLLER", "PLAINTEXT", "kafka-2", 9093) in reg.listeners
    with pytest.raises(ValueError):
        Registration.decode(b"GET / HTTP/1.1\r\n")


def test_the_state_node_takes_only_voters_with_its_listeners() -> None:
    state = translate(node_env(1), hostname="kafka-1")
    nodes = nodes_of(node_env(1))
    assert nodes is not None
    fine = Registration.of(translate(node_env(3), hostname="kafka-3"))
    served = listener_kinds(state.listeners)
    assert check_registration(fine, nodes, served) is None
    stranger = Registration(7, fine.listeners)
    assert "KAFKA_NODE_ID: node 7" in (check_registration(stranger, nodes, served) or "")
    other = translate(node_env(3, KAFKA_LISTENERS="PLAINTEXT://:19092,CONTROLLER://:9093",
                               KAFKA_ADVERTISED_LISTENERS="PLAINTEXT://kafka-3:19092"),
                      hostname="kafka-3")
    why = check_registration(Registration.of(other), nodes, served) or ""
    assert why.startswith("KAFKA_LISTENERS: node 3 serves") and "same listener names" in why


def test_the_link_answers_ports_or_one_refusal() -> None:
    assert decode_reply(encode_reply({"PLAINTEXT": 41000})) == {"PLAINTEXT": 41000}
    with pytest.raises(Refused, match="^KAFKA_LISTENERS: differs$"):
        decode_reply(encode_reply(None, "KAFKA_LISTENERS: differs"))


def test_the_state_node_runs_one_broker_per_voter_on_free_ports() -> None:
    plan = translate(node_env(1), hostname="kafka-1")
    nodes = nodes_of(node_env(1))
    assert nodes is not None
    cluster = state_plan(plan, nodes)
    assert (cluster.node_id, cluster.brokers) == (1, 3)
    assert {(ls.bind_host, ls.port) for ls in cluster.listeners} == {("0.0.0.0", 0)}
    assert [ls.name for ls in cluster.listeners] == [ls.name for ls in plan.listeners]


# ---- isolated mode: controller-only voters, broker-only nodes ---------------------------
def isolated_env(node: int) -> dict[str, str]:
    """Node ``node`` of Kafka's isolated-mode Compose example: controllers 1-3 (services
    controller-1..3), brokers 4-6 (services kafka-1..3)."""
    env = {"KAFKA_NODE_ID": str(node),
           "KAFKA_CONTROLLER_QUORUM_VOTERS":
               "1@controller-1:9093,2@controller-2:9093,3@controller-3:9093",
           "KAFKA_CONTROLLER_LISTENER_NAMES": "CONTROLLER",
           "CLUSTER_ID": "4L6g3nShT-eMCtK--X86sw"}
    if node <= 3:
        return {**env, "KAFKA_PROCESS_ROLES": "controller",
                "KAFKA_LISTENERS": "CONTROLLER://:9093"}
    return {**env, "KAFKA_PROCESS_ROLES": "broker",
            "KAFKA_LISTENERS": "PLAINTEXT://:19092,PLAINTEXT_HOST://:9092",
            "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP":
                "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,PLAINTEXT_HOST:PLAINTEXT",
            "KAFKA_ADVERTISED_LISTENERS":
                f"PLAINTEXT://kafka-{node - 3}:19092,PLAINTEXT_HOST://localhost:{node - 2}9092"}


def isolated(node: int) -> tuple[NodeCluster, Registration]:
    plan = translate(isolated_env(node), hostname="kafka-x")
    nodes = cluster_of(plan, isolated_env(node))
    assert nodes is not None
    return nodes, Registration.of(plan)


def test_isolated_nodes_are_one_cluster_with_its_state_in_the_lowest_controller() -> None:
    (one, one_reg), (two, two_reg) = isolated(1), isolated(2)
    (broker, broker_reg) = isolated(5)
    assert (one.holds_state, one.controller_only, one.broker_ids) == (True, True, [])
    assert (two.holds_state, two.link_host) == (False, "controller-1")
    assert (broker.holds_state, broker.broker_only, broker.link_host) == (
        False, True, "controller-1")
    # controllers serve no client: they register without listeners
    assert one_reg.listeners == two_reg.listeners == ()
    assert Registration.decode(two_reg.encode()) == two_reg and two_reg.controller_only
    assert Registration.decode(broker_reg.encode()).roles == ("broker",)
    assert ("PLAINTEXT_HOST", "PLAINTEXT", "localhost", 39092) in broker_reg.listeners
    # no voter ids to count: broker ids come by registration, any ids
    assert isolated(4)[0].voters == one.voters


def test_the_isolated_state_node_takes_controllers_and_brokers_alike() -> None:
    state, _ = isolated(1)
    _, broker4 = isolated(4)
    _, broker6 = isolated(6)
    _, controller2 = isolated(2)
    assert check_registration(controller2, state, None) is None
    assert check_registration(broker4, state, None) is None  # the first broker: any listeners
    served = sorted((n, p) for n, p, _, _ in broker4.listeners)
    assert check_registration(broker6, state, served, 4) is None
    other = Registration(6, (("EXTERNAL", "PLAINTEXT", "localhost", 1),), ("broker",))
    why = check_registration(other, state, served, 4) or ""
    assert why.startswith("KAFKA_LISTENERS: node 6 serves EXTERNAL:PLAINTEXT, node 4 serves")
    voter = Registration(2, broker4.listeners, ("broker",))
    assert (check_registration(voter, state, served, 4) or "").startswith(
        "KAFKA_NODE_ID: broker-only node 2 is one of the voters")
    combined = Registration(3, broker4.listeners)
    assert (check_registration(combined, state, served, 4) or "").startswith(
        "KAFKA_PROCESS_ROLES: node 3 is broker,controller, node 1 controller")


def test_a_combined_state_node_refuses_controllers_and_brokers_apart() -> None:
    """A mixture is refused, never a cluster that counts its brokers wrong."""
    combined = nodes_of(node_env(1))
    assert combined is not None
    _, controller2 = isolated(2)
    _, broker4 = isolated(4)
    assert (check_registration(controller2, combined, None) or "").startswith(
        "KAFKA_PROCESS_ROLES: node 2 is controller, node 1 broker,controller")
    assert (check_registration(broker4, combined, None) or "").startswith(
        "KAFKA_PROCESS_ROLES: broker-only node 4 with combined voters")


def test_the_isolated_state_node_runs_the_first_broker_on_free_ports() -> None:
    plan = translate(isolated_env(1), hostname="controller-1")
    _, broker5 = isolated(5)
    cluster = isolated_state_plan(plan, broker5)
    assert (cluster.node_id, cluster.brokers, cluster.voters) == (5, 1, {})
    assert [(ls.name, ls.bind_host, ls.port, ls.advertised_host, ls.advertised_port)
            for ls in cluster.listeners] == [("PLAINTEXT", "0.0.0.0", 0, "kafka-2", 19092),
                                             ("PLAINTEXT_HOST", "0.0.0.0", 0, "localhost", 39092)]
    assert cluster.config["offsets.topic.replication.factor"] == "3"  # Kafka's default
    given = translate({**isolated_env(1), "KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "1"},
                      hostname="controller-1")
    assert isolated_state_plan(given, broker5).config["offsets.topic.replication.factor"] == "1"


async def _register(port: int, reg: Registration) -> dict[str, int] | str:
    """One registration over the link: the endpoints given, or the refusal line."""
    r, w = await asyncio.open_connection("127.0.0.1", port)
    try:
        w.write(reg.encode())
        try:
            return decode_reply(await asyncio.wait_for(r.readline(), 10))
        except Refused as e:
            return str(e)
    finally:
        w.close()


async def _isolated_link() -> tuple[list[dict[str, int] | str], list[int]]:
    from emulator.official_image_run import cluster_for
    from emulator.runtime import Cluster, stop_serving
    from emulator.server.node_link import LinkServer

    made: list[Cluster] = []

    async def make(first: Registration) -> Cluster:
        c = cluster_for(isolated_state_plan(translate(isolated_env(1)), first), control=False)
        made.append(c)
        await c.start_async()
        return c

    state, controller = isolated(1)[0], isolated(2)[1]
    link = LinkServer(None, NodeCluster(1, state.voters, 0, state.roles), [], make)
    server = await asyncio.start_server(link._serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    other = Registration(5, (("EXTERNAL", "PLAINTEXT", "localhost", 1),), ("broker",))
    try:
        answers = list(await asyncio.gather(
            _register(port, isolated(4)[1]), _register(port, other),
            _register(port, controller)))
        return answers, (sorted(made[0].state.brokers) if len(made) == 1 else [])
    finally:
        server.close()
        await link.stop()
        for c in made:
            await stop_serving(c)


def test_the_isolated_link_makes_the_cluster_for_the_first_broker_only() -> None:
    """Two broker nodes with different listeners registering at once: the first makes
    the cluster with its listeners, the other is refused naming KAFKA_LISTENERS (never
    a broker serving listeners the cluster does not have); a controller gets no
    endpoints and starts no broker. (The link ends each broker's registration when its
    connection closes: the broker is crashed then.)"""
    from emulator.runtime import new_event_loop

    loop = new_event_loop()
    try:
        answers, brokers = loop.run_until_complete(_isolated_link())
    finally:
        loop.close()
    four, five, controller = answers
    assert controller == {}
    # whichever came first made the cluster (one cluster, its one broker); the other
    # was refused against it
    if isinstance(four, dict):
        assert sorted(four) == ["PLAINTEXT", "PLAINTEXT_HOST"] and brokers == [4]
        assert isinstance(five, str) and five.startswith(
            "KAFKA_LISTENERS: node 5 serves EXTERNAL:PLAINTEXT, node 4 serves"), five
    else:
        assert isinstance(five, dict) and sorted(five) == ["EXTERNAL"] and brokers == [5]
        assert four.startswith("KAFKA_LISTENERS: node 4 serves PLAINTEXT:PLAINTEXT"), four


# ---- isolated mode over SASL_PLAINTEXT: the users come with the brokers' registrations --
def isolated_sasl(node: int, jaas: str = 'user_admin="admin-secret" user_alice="alice-secret";'
                  ) -> tuple[NodeCluster, Registration]:
    """Node ``node`` of Kafka's isolated SASL_PLAINTEXT example: the broker nodes' JAAS
    file (given inline here) lists the users; the controllers have none."""
    env = isolated_env(node)
    if node > 3:
        env.update({
            "KAFKA_LISTENERS": "SASL_PLAINTEXT://:19094,SASL_PLAINTEXT_HOST://:9094",
            "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP": "CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:"
                                                    "SASL_PLAINTEXT,SASL_PLAINTEXT_HOST:SASL_PLAINTEXT",
            "KAFKA_ADVERTISED_LISTENERS": f"SASL_PLAINTEXT://kafka-{node - 3}:19094,"
                                          f"SASL_PLAINTEXT_HOST://localhost:{node - 2}9094",
            "KAFKA_SASL_ENABLED_MECHANISMS": "PLAIN",
            "KAFKA_LISTENER_NAME_SASL_PLAINTEXT_PLAIN_SASL_JAAS_CONFIG": jaas})
    plan = translate(env, hostname="kafka-x")
    nodes = cluster_of(plan, env)
    assert nodes is not None
    return nodes, Registration.of(plan)


USERS = (("admin", "admin-secret"), ("alice", "alice-secret"))


def test_an_isolated_sasl_broker_registers_with_its_jaas_users() -> None:
    """A broker-only SASL node is one of the cluster (no longer refused) and its
    registration carries its users, through the wire and back; a controller's and a
    PLAINTEXT broker's carry none, and the users never show in a registration's repr."""
    broker, reg = isolated_sasl(5)
    assert broker.broker_only and reg.sasl and reg.sasl_users == USERS
    assert Registration.decode(reg.encode()) == reg
    assert Registration.decode(reg.encode()).sasl_users == USERS
    assert "secret" not in repr(reg)
    assert isolated_sasl(2)[1].sasl_users == () and isolated(5)[1].sasl_users == ()
    assert b"sasl_users" not in isolated(5)[1].encode()  # read alike by an older link
    # a combined node's registration carries none: the state node's own file serves it
    combined = Registration.of(translate(node_env(
        2, KAFKA_LISTENER_SECURITY_PROTOCOL_MAP="CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,"
        "PLAINTEXT_HOST:SASL_PLAINTEXT",
        KAFKA_LISTENER_NAME_PLAINTEXT_HOST_PLAIN_SASL_JAAS_CONFIG='user_a="b";'),
        hostname="kafka-2"))
    assert combined.sasl and combined.sasl_users == ()


def test_the_isolated_state_node_takes_the_first_brokers_users_and_refuses_others() -> None:
    """Every broker must give the users the first one gave (a client logs in through
    any broker, as with Kafka's brokers that share one JAAS file); a different set, or a
    SASL broker sending none (a node from before users were sent), is refused in one
    line naming KAFKA_OPTS and naming users but never a password."""
    state, _ = isolated_sasl(1)
    _, four = isolated_sasl(4)
    served = sorted((n, p) for n, p, _, _ in four.listeners)
    assert check_registration(four, state, None) is None
    assert check_registration(isolated_sasl(6)[1], state, served, 4, USERS) is None
    other = isolated_sasl(6, 'user_admin="admin-secret" user_alice="other";')[1]
    why = check_registration(other, state, served, 4, USERS) or ""
    assert why.startswith("KAFKA_OPTS: the SASL users of node 6's JAAS file (admin, alice) "
                          "differ from node 4's (admin, alice)"), why
    assert "secret" not in why and "other" not in why and "\n" not in why
    fewer = isolated_sasl(6, 'user_admin="admin-secret";')[1]
    assert (check_registration(fewer, state, served, 4, USERS) or "").startswith(
        "KAFKA_OPTS: the SASL users of node 6's JAAS file (admin) differ")
    old = Registration.decode(Registration(6, four.listeners, ("broker",)).encode())
    assert (check_registration(old, state, served, 4, USERS) or "").startswith(
        "KAFKA_OPTS: broker node 6 sent no SASL users for its SASL listeners")
    assert (check_registration(old, state, None) or "").startswith("KAFKA_OPTS: broker node 6")


def test_the_isolated_state_node_serves_the_first_brokers_users() -> None:
    """The cluster made for the first broker logs in its users: the controller's own
    plan (no JAAS file in Kafka's example) has none."""
    plan = translate(isolated_env(1), hostname="controller-1")
    assert plan.sasl_users == {}
    cluster = isolated_state_plan(plan, isolated_sasl(4)[1])
    assert cluster.sasl_users == dict(USERS)
    assert {ls.protocol for ls in cluster.listeners} == {"SASL_PLAINTEXT"}
