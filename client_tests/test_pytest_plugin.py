"""The pytest plugin (emulator/pytest_plugin.py) as a user's test suite meets it.

The first tests here use its fixtures directly, with two different clients on one
cluster and a broker crash through the control handle. The rest run small suites in
a child pytest, as a user's project would, to check what only a whole session shows:
scopes, markers, ini settings, and one cluster per pytest-xdist worker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Producer

from client_tests.reading import kafka_python_values
from emulator import Cluster

# Not run with --target kafka: the emulator's pytest plugin.
pytestmark = pytest.mark.emulator_only

PARTITIONS = 3


def confluent_produce(bootstrap: str, topic: str, values: list[bytes],
                      cluster: Cluster | None = None) -> None:
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 2})
    errors: list[object] = []
    for i, v in enumerate(values):
        p.produce(topic, value=v, partition=i % PARTITIONS,
                  on_delivery=lambda err, _m: errors.append(err) if err else None)
    left = p.flush(60)
    # On a timeout, say what the cluster looked like (leaders, ISR, high watermarks).
    assert left == 0, f"{left} records unacknowledged after 60 s; cluster: " + (
        repr(cluster.cluster_info()) if cluster else "?")
    assert errors == []


def test_fixtures_with_two_clients_and_a_broker_crash(
    kafka_bootstrap: str, kafka_control: Cluster, kafka_topic_name: str
) -> None:
    """confluent-kafka produces, kafka-python consumes; injected errors, then a leader
    dies in between."""
    assert len(kafka_bootstrap.split(",")) == 3
    kafka_control.create_topic(kafka_topic_name, partitions=PARTITIONS, replication_factor=3)
    # The producer retries retriable errors: every record still lands once.
    kafka_control.inject_error("Produce", "NOT_LEADER_OR_FOLLOWER", count=2)
    first = [f"before-{i}".encode() for i in range(30)]
    confluent_produce(kafka_bootstrap, kafka_topic_name, first, kafka_control)

    leader = kafka_control.call(lambda: kafka_control.state.topics[kafka_topic_name]
                                .partitions[0].leader)
    kafka_control.stop_broker(leader)
    new_leader = kafka_control.call(lambda: kafka_control.state.topics[kafka_topic_name]
                                    .partitions[0].leader)
    assert new_leader not in (leader, -1)

    second = [f"after-{i}".encode() for i in range(30)]
    confluent_produce(kafka_bootstrap, kafka_topic_name, second, kafka_control)
    got = kafka_python_values(kafka_bootstrap, kafka_topic_name, PARTITIONS,
                              len(first) + len(second))
    assert sorted(got) == sorted(first + second)


@pytest.mark.kafka_brokers(1, config={"num.partitions": "4"})
def test_marker_sets_brokers_and_config(kafka_cluster: Cluster, kafka_bootstrap: str) -> None:
    assert kafka_cluster.broker_ids == [1]
    assert kafka_bootstrap.count(",") == 0
    assert kafka_cluster.state.config["num.partitions"] == "4"


def test_factory_makes_more_clusters(
    kafka_cluster_factory: Callable[..., Cluster], kafka_bootstrap: str
) -> None:
    big = kafka_cluster_factory(brokers=5)
    assert big.broker_ids == [1, 2, 3, 4, 5]
    assert not set(big.bootstrap_servers.split(",")) & set(kafka_bootstrap.split(","))


@pytest.mark.kafka_fidelity("kafka", seed=7)
def test_fidelity_marker_gives_kafkas_defaults(kafka_cluster: Cluster,
                                               kafka_bootstrap: str) -> None:
    """The marker's mode reaches the cluster: DescribeConfigs over the wire shows
    Kafka's group.initial.rebalance.delay.ms and broker.session.timeout.ms."""
    from confluent_kafka.admin import AdminClient, ConfigResource

    assert (kafka_cluster.state.fidelity.mode, kafka_cluster.state.fidelity.seed) == ("kafka", 7)
    admin = AdminClient({"bootstrap.servers": kafka_bootstrap})
    res = ConfigResource(ConfigResource.Type.BROKER, "1")
    entries = admin.describe_configs([res])[res].result(20)
    assert entries["group.initial.rebalance.delay.ms"].value == "3000"
    assert entries["broker.session.timeout.ms"].value == "9000"


# ---- whole sessions in a child pytest ------------------------------------------------

RECORDER = '''
import json, os, pathlib

def record(name, cluster, **extra):
    out = pathlib.Path(os.environ["RECORD_DIR"]) / f"{name}.json"
    out.write_text(json.dumps({
        "faults": cluster.call(lambda: cluster.faults.model.describe()),
        "bootstrap": cluster.bootstrap_servers,
        "brokers": len(cluster.broker_ids),
        "alive": sorted(b.id for b in cluster.state.brokers.values() if b.alive),
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
        **extra,
    }))
'''


def run_child(tmp_path: Path, tests: str, *args: str, ini: str = "",
              env_extra: dict[str, str] | None = None) -> dict[str, dict]:
    """Run ``tests`` in a child pytest (plugins from entry points, as for users)."""
    (tmp_path / "recorder.py").write_text(RECORDER)
    (tmp_path / "test_child.py").write_text(textwrap.dedent(tests))
    (tmp_path / "pytest.ini").write_text(f"[pytest]\n{ini}\n")
    records = tmp_path / "records"
    records.mkdir()
    # The child imports the emulator under test (this checkout), not whatever copy the
    # package was installed from: it finds the plugin by its entry point either way.
    repo = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "RECORD_DIR": str(records),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), repo])}
    env.pop("PYTEST_ADDOPTS", None)
    env.pop("KAFKA_EMULATOR_FIDELITY", None)
    env.update(env_extra or {})
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(tmp_path), *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, f"child pytest failed:\n{proc.stdout}\n{proc.stderr}"
    return {p.stem: json.loads(p.read_text()) for p in records.glob("*.json")}


SHARED_TESTS = '''
import pytest
from recorder import record

def test_a(kafka_cluster, kafka_control):
    assert kafka_control is kafka_cluster
    record("a", kafka_cluster)
    kafka_control.stop_broker(2)
    kafka_control.cut_brokers(1, 3)

def test_b(kafka_cluster):
    record("b", kafka_cluster)

@pytest.mark.kafka_brokers(2)
def test_c(kafka_cluster):
    record("c", kafka_cluster)
'''


def test_session_scope_shares_and_heals(tmp_path: Path) -> None:
    """One cluster per broker count for the session, healed between tests: a stopped
    broker is back and the faults are gone."""
    rec = run_child(tmp_path, SHARED_TESTS, "--kafka-emulator-scope=session")
    assert rec["a"]["bootstrap"] == rec["b"]["bootstrap"]
    assert rec["b"]["alive"] == [1, 2, 3]
    assert rec["b"]["faults"]["broker_cuts"] == []
    assert rec["c"]["brokers"] == 2 and rec["c"]["bootstrap"] != rec["a"]["bootstrap"]


def test_function_scope_by_default_and_ini_brokers(tmp_path: Path) -> None:
    rec = run_child(tmp_path, SHARED_TESTS, ini="kafka_emulator_brokers = 4")
    assert rec["a"]["bootstrap"] != rec["b"]["bootstrap"]
    assert rec["a"]["brokers"] == rec["b"]["brokers"] == 4
    assert rec["b"]["alive"] == [1, 2, 3, 4]
    assert rec["c"]["brokers"] == 2


XDIST_TESTS = '''
import pytest
from confluent_kafka import Producer
from recorder import record

@pytest.mark.parametrize("i", range(6))
def test_worker(kafka_bootstrap, kafka_cluster, kafka_topic_name, i):
    p = Producer({"bootstrap.servers": kafka_bootstrap, "acks": "all"})
    p.produce(kafka_topic_name, value=b"x")
    assert p.flush(20) == 0
    record(f"t{i}", kafka_cluster, topics=sorted(kafka_cluster.state.topics))
'''


def test_xdist_one_cluster_per_worker(tmp_path: Path) -> None:
    """Under pytest-xdist each worker gets its own session cluster, on its own ports."""
    rec = run_child(tmp_path, XDIST_TESTS, "-n", "2", "-p", "xdist",
                    "--kafka-emulator-scope=session")
    assert len(rec) == 6
    by_worker: dict[str, set[str]] = {}
    for r in rec.values():
        by_worker.setdefault(r["worker"], set()).add(r["bootstrap"])
    assert set(by_worker) == {"gw0", "gw1"}, by_worker
    assert all(len(b) == 1 for b in by_worker.values()), by_worker
    (b0,), (b1,) = by_worker.values()
    assert not set(b0.split(",")) & set(b1.split(","))


FIDELITY_TESTS = '''
import pytest
from recorder import record

def fid(cluster):
    f = cluster.state.fidelity
    return {"mode": f.mode, "seed": f.seed,
            "delay": cluster.state.config_int("group.initial.rebalance.delay.ms")}

def test_default(kafka_cluster):
    record("default", kafka_cluster, **fid(kafka_cluster))

@pytest.mark.kafka_fidelity("adversarial", seed=11)
def test_marked(kafka_cluster):
    record("marked", kafka_cluster, **fid(kafka_cluster))

@pytest.mark.kafka_fidelity("fast")
def test_marked_fast(kafka_cluster):
    record("marked_fast", kafka_cluster, **fid(kafka_cluster))

def test_factory(kafka_cluster_factory):
    c = kafka_cluster_factory(brokers=1)
    record("factory", c, **fid(c))
'''


def test_fidelity_from_ini_marker_and_one_cluster_per_mode(tmp_path: Path) -> None:
    """The ini option makes kafka the default; the marker overrides it per test (seed
    too); a session-scoped pool never hands a kafka test the fast cluster, or back."""
    rec = run_child(tmp_path, FIDELITY_TESTS, "--kafka-emulator-scope=session",
                    ini="kafka_emulator_fidelity = kafka")
    assert {k: (r["mode"], r["seed"], r["delay"]) for k, r in rec.items()} == {
        "default": ("kafka", 0, 3000), "marked": ("adversarial", 11, 3000),
        "marked_fast": ("fast", 0, 0), "factory": ("kafka", 0, 3000)}
    assert len({rec[k]["bootstrap"] for k in ("default", "marked", "marked_fast")}) == 3


def test_fidelity_option_over_environment_over_ini(tmp_path: Path) -> None:
    env = {"KAFKA_EMULATOR_FIDELITY": "adversarial"}
    rec = run_child(tmp_path, FIDELITY_TESTS, ini="kafka_emulator_fidelity = kafka",
                    env_extra=env)
    assert rec["default"]["mode"] == "adversarial" and rec["factory"]["mode"] == "adversarial"
    again = tmp_path / "again"
    again.mkdir()
    rec = run_child(again, FIDELITY_TESTS, "--kafka-emulator-fidelity=fast",
                    "--kafka-emulator-seed=5", env_extra=env)
    assert (rec["default"]["mode"], rec["default"]["seed"]) == ("fast", 5)
    assert (rec["marked"]["mode"], rec["marked"]["seed"]) == ("adversarial", 11)


def test_a_bad_fidelity_is_a_usage_error(tmp_path: Path) -> None:
    """A typo in the mode stops the run naming the modes, rather than running fast."""
    (tmp_path / "test_child.py").write_text(textwrap.dedent('''
        import pytest

        @pytest.mark.kafka_fidelity("kafak")
        def test_x(kafka_cluster):
            pass
    '''))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    env.pop("KAFKA_EMULATOR_FIDELITY", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           str(tmp_path)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode != 0
    assert "kafka_fidelity takes one of fast, kafka, adversarial" in proc.stdout + proc.stderr


def test_a_failing_adversarial_test_reports_the_faults_it_met(tmp_path: Path) -> None:
    """The report of a failed test against an adversarial cluster lists the faults
    injected while it ran, with the seed that replays them."""
    (tmp_path / "test_child.py").write_text(textwrap.dedent('''
        import pytest
        from confluent_kafka import Producer

        @pytest.mark.kafka_fidelity("adversarial", seed=5)
        def test_x(kafka_cluster):
            kafka_cluster.create_topic("t", 3, 3)
            p = Producer({"bootstrap.servers": kafka_cluster.bootstrap_servers,
                          "enable.idempotence": True, "client.id": "reported"})
            for _ in range(100):
                p.produce("t", b"x")
                p.flush(10)
            assert False, "the application's own check failed"
    '''))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    env.pop("KAFKA_EMULATOR_FIDELITY", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           str(tmp_path)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "kafka-emulator adversary (seed 5, " in proc.stdout, proc.stdout
    assert "from 'reported': " in proc.stdout, proc.stdout
