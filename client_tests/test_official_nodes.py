"""Three official-image nodes from a Compose file's variables are one three-broker
cluster (docs/official-images.md, "Several nodes, one cluster"): the image's entry
point as plain processes on this host, real clients over TCP. The containers
themselves are client_tests/test_official_image.py's; the same scenario on Kafka 4.4's
own nodes is .ci/official-cluster-nightly's (client_tests/official_nodes.py).
"""

from __future__ import annotations

import json
import signal
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import NewTopic

from client_tests.official_nodes import (
    COMBINED_SASL,
    ISOLATED_PLAINTEXT,
    ISOLATED_SASL,
    LINK_PORT_ENV,
    SASL_CLIENT,
    AdminClient,
    EmulatorNodes,
    metadata,
    scenario,
    wait_ready,
)
from emulator.testing import wait_for

# The emulator's image entry point in processes of its own; Kafka's side of the same
# scenario needs three JVMs and waits out broker.session.timeout.ms after the kill
# (29 s), so it runs nightly, not in CI's Kafka pass.
pytestmark = pytest.mark.emulator_only


@pytest.fixture
def nodes() -> EmulatorNodes:
    n = EmulatorNodes()
    try:
        yield n
    finally:
        n.release()
        for i in n.ids:  # what the in-process watch does for a cluster in this process
            assert "Traceback" not in n.log(i) and "] ERROR " not in n.log(i), n.log(i)


def test_three_nodes_are_one_cluster_through_a_node_crash(nodes: EmulatorNodes) -> None:
    """Every node names all three brokers, an RF 3 topic is created through node 1,
    records produced through node 1 with acks=all and min.insync.replicas=2 while node 2
    is killed are all read back through node 3, and node 2 rejoins every ISR."""
    started = time.monotonic()
    f = scenario(nodes.start(), started)
    print(f"emulator nodes: ready {f.ready_s:.2f} s, failover {f.failover_s:.2f} s, "
          f"rejoin {f.rejoin_s:.2f} s, {f.acknowledged} acknowledged, none lost")
    assert "broker 2 crashed" in nodes.log(1)


def test_sasl_nodes_are_one_cluster_through_a_node_crash() -> None:
    """The same over Kafka's SASL_PLAINTEXT example, its users in the JAAS file
    KAFKA_OPTS names (the mounted file's path here): every node's listener logs the
    user in, the state node's users serve every broker."""
    nodes = EmulatorNodes(COMBINED_SASL, SASL_CLIENT)
    try:
        scenario(nodes.start(), time.monotonic(), records=600)
    finally:
        nodes.release()
    assert "Traceback" not in nodes.log(1) and "broker 2 crashed" in nodes.log(1)


def test_the_state_nodes_stop_is_the_clusters_end(nodes: EmulatorNodes) -> None:
    """Node 1 holds the cluster's state: killed, the other nodes refuse clients (a
    cluster that is not there); back, the others register again and the cluster starts
    empty, as a Kafka cluster whose every log is gone."""
    health = nodes.port()  # node 3's control port: the image's HEALTHCHECK asks it
    nodes.nodes[3].env["KAFKA_EMULATOR_CONTROL_PORT"] = str(health)
    wait_ready(nodes.start(), time.monotonic())
    assert healthcheck(health) == (200, {"node": 3, "registered": True})
    admin = AdminClient({"bootstrap.servers": nodes.bootstrap(2)})
    admin.create_topics([NewTopic("before", 1, 3)])["before"].result(10)
    assert "before" in metadata(nodes.bootstrap(3)).topics
    nodes.kill(1)
    wait_for(lambda: "the link to node 1 closed" in nodes.log(3), "node 3 to lose its link", 10)
    with pytest.raises(KafkaException):
        metadata(nodes.bootstrap(3), timeout=2)
    assert healthcheck(health) == (503, {"node": 3, "registered": False})
    nodes.restart(1)
    wait_ready(nodes, time.monotonic(), timeout=30)
    assert "before" not in metadata(nodes.bootstrap(2)).topics


def test_a_paused_node_is_crashed_and_rejoins_when_resumed(nodes: EmulatorNodes) -> None:
    """A node that stops answering without closing anything (`docker pause`: SIGSTOP)
    is crashed after the link's 3 s of silence; resumed, it registers again."""
    wait_ready(nodes.start(), time.monotonic())
    nodes.procs[2].send_signal(signal.SIGSTOP)
    try:
        wait_for(lambda: sorted(metadata(nodes.bootstrap(3)).brokers) == [1, 3],
                 "broker 2 to leave the cluster's Metadata", 10)
    finally:
        nodes.procs[2].send_signal(signal.SIGCONT)
    wait_ready(nodes, time.monotonic(), timeout=15)
    assert "broker 2 crashed" in nodes.log(1)


def healthcheck(port: int) -> tuple[int, dict[str, object]]:
    """What docker/healthcheck.py's request to the control port gets."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/cluster", timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_a_node_the_cluster_cannot_take_is_refused_in_one_line() -> None:
    """A node whose listeners differ from the state node's is refused by the link, and so
    is a controller-only voter among combined ones: exit code 1 and one line naming the
    variable, never a cluster of its own."""
    nodes = EmulatorNodes()
    env = nodes.nodes[3].env
    for key in ("KAFKA_LISTENERS", "KAFKA_ADVERTISED_LISTENERS",
                "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP"):
        env[key] = env[key].replace("PLAINTEXT_HOST", "EXTERNAL")
    # a controller-only voter among combined ones: the link refuses the mixture
    nodes.nodes[2].env.update(KAFKA_PROCESS_ROLES="controller",
                              KAFKA_LISTENERS=nodes.nodes[2].env["KAFKA_LISTENERS"].split(",")[1])
    del nodes.nodes[2].env["KAFKA_ADVERTISED_LISTENERS"]
    try:
        for i in nodes.ids:
            nodes.restart(i)
        for i, variable in ((3, "KAFKA_LISTENERS"), (2, "KAFKA_PROCESS_ROLES")):
            assert nodes.procs[i].wait(30) == 1, nodes.log(i)
            refused = [ln for ln in nodes.log(i).splitlines()
                       if ln.startswith("kafka-emulator: refused")]
            assert len(refused) == 1 and refused[0].startswith(
                f"kafka-emulator: refused: {variable}: "), nodes.log(i)
            assert "Traceback" not in nodes.log(i)
    finally:
        nodes.release()


def test_nodes_start_again_when_the_state_node_cannot_listen() -> None:
    """Another process holds the link port when the nodes start: the state node says it
    cannot listen and exits, and the nodes start again on new ports. The other nodes
    would wait for that link for good, so start must not wait for every node to be
    ready or gone (it once waited 60 s and failed)."""
    nodes = EmulatorNodes(ISOLATED_PLAINTEXT)
    held = int(nodes.nodes[1].env[LINK_PORT_ENV])
    try:
        with socket.socket() as holder:
            holder.bind(("127.0.0.1", held))
            holder.listen()  # the brokers' nodes connect and are never answered
            nodes.start()
        assert all(int(n.env[LINK_PORT_ENV]) != held for n in nodes.nodes.values())
        wait_ready(nodes, time.monotonic())
    finally:
        nodes.release()


# ---- isolated mode: controllers 1-3, brokers 4-6 ----------------------------------------
@pytest.fixture
def isolated() -> EmulatorNodes:
    n = EmulatorNodes(ISOLATED_PLAINTEXT)
    try:
        yield n
    finally:
        n.release()
        for i in n.ids:
            assert "Traceback" not in n.log(i) and "] ERROR " not in n.log(i), n.log(i)


def test_isolated_nodes_are_one_cluster_through_a_broker_crash(isolated: EmulatorNodes) -> None:
    """Kafka's isolated-mode example: every broker node names brokers 4, 5 and 6 (each
    added when its node registered), an RF 3 topic is created through broker 4, records
    produced through it with acks=all and min.insync.replicas=2 while broker node 5 is
    killed are all read back through broker 6, and broker 5 rejoins every ISR. The
    controllers listen nowhere for clients."""
    assert isolated.brokers == [4, 5, 6]
    started = time.monotonic()
    f = scenario(isolated.start(), started, records=1500)
    print(f"emulator isolated nodes: ready {f.ready_s:.2f} s, failover {f.failover_s:.2f} s, "
          f"rejoin {f.rejoin_s:.2f} s, {f.acknowledged} acknowledged, none lost")
    state = isolated.log(1)
    assert "broker 5 crashed" in state and "node 4 registered: broker 4" in state
    for controller in (1, 2, 3):
        port = int(isolated.nodes[controller].env["KAFKA_LISTENERS"].rsplit(":", 1)[1])
        with pytest.raises(OSError):  # Kafka's clients never reach a controller
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        assert "a controller, no client listener" in isolated.log(controller)


def test_an_isolated_controller_that_holds_no_state_stops_unseen(
        isolated: EmulatorNodes) -> None:
    """Controller 2 killed: nothing a client sees changes (the cluster's state is in
    controller 1's process), only its own health answers 503 until it is back; killed
    controller 1 is the cluster's end, as in combined mode."""
    health = isolated.port()
    isolated.nodes[2].env["KAFKA_EMULATOR_CONTROL_PORT"] = str(health)
    wait_ready(isolated.start(), time.monotonic())
    assert healthcheck(health) == (200, {"node": 2, "registered": True})
    admin = AdminClient({"bootstrap.servers": isolated.bootstrap(4)})
    admin.create_topics([NewTopic("kept", 3, 3)])["kept"].result(10)
    before = sorted((p.leader, tuple(p.isrs))
                    for p in metadata(isolated.bootstrap(6)).topics["kept"].partitions.values())
    isolated.kill(2)
    wait_for(lambda: "controller node 2 lost" in isolated.log(1), "node 1 to lose node 2", 10)
    assert sorted(metadata(isolated.bootstrap(5)).brokers) == [4, 5, 6]
    assert sorted((p.leader, tuple(p.isrs)) for p in metadata(
        isolated.bootstrap(6)).topics["kept"].partitions.values()) == before
    isolated.restart(2)
    wait_for(lambda: _healthy(health), "controller 2 registered again", 15)
    isolated.kill(1)
    wait_for(lambda: "the link to node 1 closed" in isolated.log(6), "node 6 to lose its link",
             10)
    with pytest.raises(KafkaException):
        metadata(isolated.bootstrap(6), timeout=2)


def _healthy(port: int) -> bool:
    """The health check passes (False while the node is not listening yet)."""
    try:
        return healthcheck(port)[0] == 200
    except urllib.error.URLError:
        return False


# ---- isolated mode over SASL_PLAINTEXT: the users only in the broker nodes' JAAS file ----
def test_isolated_sasl_nodes_are_one_cluster_through_a_broker_crash() -> None:
    """Kafka's isolated SASL_PLAINTEXT example: the JAAS file is mounted on the broker
    nodes only, and each sends its users with its registration, so controller 1, which
    serves the brokers' listeners, logs alice in through every broker node; the
    scenario of the PLAINTEXT file holds (nothing acknowledged lost while broker 5 is
    killed); a wrong password is refused through every broker node, and no password
    reaches a log."""
    nodes = EmulatorNodes(ISOLATED_SASL, SASL_CLIENT)
    assert nodes.brokers == [4, 5, 6] and "KAFKA_OPTS" not in nodes.nodes[1].env
    started = time.monotonic()
    try:
        f = scenario(nodes.start(), started, records=900)
        print(f"emulator isolated SASL nodes: ready {f.ready_s:.2f} s, failover "
              f"{f.failover_s:.2f} s, rejoin {f.rejoin_s:.2f} s, {f.acknowledged} "
              "acknowledged, none lost")
        wrong = {**SASL_CLIENT, "sasl.password": "not-alice-secret"}
        for broker in nodes.brokers:
            with pytest.raises(KafkaException):
                metadata(nodes.bootstrap(broker), timeout=3, client=wrong)
            assert sorted(metadata(nodes.bootstrap(broker), client=SASL_CLIENT).brokers) == [
                4, 5, 6]
    finally:
        nodes.release()
    state = nodes.log(1)
    assert "broker 5 crashed" in state and "node 6 registered: broker 6" in state
    for i in nodes.ids:
        log = nodes.log(i)
        assert "Traceback" not in log and "] ERROR " not in log, log
        # users by name only, never their passwords
        assert "admin-secret" not in log and "alice-secret" not in log, log


def test_an_isolated_sasl_broker_with_other_users_is_refused(tmp_path: Path) -> None:
    """A broker node whose JAAS file gives other users than the first broker's is
    refused by the link in one line naming KAFKA_OPTS (never a broker where the
    cluster's users fail to log in), and the cluster goes on with the others."""
    nodes = EmulatorNodes(ISOLATED_SASL, SASL_CLIENT)
    other = tmp_path / "other_jaas.conf"
    other.write_text('KafkaServer {\n  org.apache.kafka.common.security.plain.PlainLoginModule '
                     'required\n  user_admin="admin-secret"\n  user_bob="bob-secret";\n};\n')
    six = nodes.nodes[6].env
    six["KAFKA_OPTS"] = f"-Djava.security.auth.login.config={other}"
    try:
        for i in (1, 2, 3, 4):
            nodes.restart(i)
        wait_for(lambda: "kafka-emulator ready" in nodes.log(4), "broker 4 registered", 30)
        nodes.restart(6)
        assert nodes.procs[6].wait(30) == 1, nodes.log(6)
        refused = [ln for ln in nodes.log(6).splitlines() if ln.startswith("kafka-emulator: ")]
        assert refused == ["kafka-emulator: refused: KAFKA_OPTS: the SASL users of node 6's "
                           "JAAS file (admin, bob) differ from node 4's (admin, alice); every "
                           "broker node must give the same users and passwords"], nodes.log(6)
        assert sorted(metadata(nodes.bootstrap(4), client=SASL_CLIENT).brokers) == [4]
    finally:
        nodes.release()
