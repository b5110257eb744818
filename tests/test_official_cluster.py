"""emulator.official_cluster: which official-image configurations are one cluster of
nodes, which are refused in one line, and what a node's front tells the state node
(the processes and containers are client_tests/test_official_nodes.py and
client_tests/test_official_image.py)."""

from __future__ import annotations

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
)
from emulator.official_image import Refused, translate
from emulator.official_image_run import state_plan


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
    ({"KAFKA_PROCESS_ROLES": "controller"}, "KAFKA_PROCESS_ROLES", "only combined nodes"),
    ({"KAFKA_PROCESS_ROLES": "broker"}, "KAFKA_PROCESS_ROLES", "only combined nodes"),
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
    assert check_registration(fine, nodes, state.listeners) is None
    stranger = Registration(7, fine.listeners)
    assert "KAFKA_NODE_ID: node 7" in (check_registration(stranger, nodes, state.listeners)
                                        or "")
    other = translate(node_env(3, KAFKA_LISTENERS="PLAINTEXT://:19092,CONTROLLER://:9093",
                               KAFKA_ADVERTISED_LISTENERS="PLAINTEXT://kafka-3:19092"),
                      hostname="kafka-3")
    why = check_registration(Registration.of(other), nodes, state.listeners) or ""
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
