"""The HTTP control plane and the ``kafka-emulator fault`` command against a running
cluster: the required routes, faults over HTTP and the command line acting on real
clients, clear 4xx answers for bad input, and a fault schedule that replays the
same sequence of cluster states every run."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from kafka import KafkaProducer
from kafka.errors import NotEnoughReplicasError

from client_tests.control_http import http
from emulator import Cluster
from emulator.testing import wait_for

# Not run with --target kafka: the emulator's control plane.
pytestmark = pytest.mark.emulator_only


@pytest.fixture
def cp() -> Iterator[tuple[Cluster, str]]:
    with Cluster(brokers=3, port=0, control_port=0,
                 config={"replica.lag.time.max.ms": "1000"}) as c:
        yield c, f"http://127.0.0.1:{c.control.port}"


def cli(base: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "emulator", "fault", "--control", base, *args],
                          capture_output=True, text=True, timeout=60)


def refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    except ConnectionRefusedError:
        return True
    return False


def test_cluster_route_and_broker_stop_start(cp: tuple[Cluster, str]) -> None:
    c, base = cp
    c.create_topic("orders", 2, 3)
    status, view = http(base, "GET", "/cluster")
    assert status == 200 and view["controller"] == 1
    assert [(b["id"], b["alive"]) for b in view["brokers"]] == [(1, True), (2, True), (3, True)]
    assert {"host", "port"} <= set(view["brokers"][0])
    p0 = view["topics"]["orders"]["partitions"][0]
    assert set(p0) >= {"partition", "leader", "leader_epoch", "replicas", "isr",
                       "adding_replicas", "removing_replicas", "high_watermark",
                       "log_end_offsets"}
    assert set(p0["log_end_offsets"]) == {str(b) for b in p0["replicas"]}
    port = view["brokers"][0]["port"]
    status, out = http(base, "POST", "/brokers/1/stop")
    assert status == 200 and out == {"broker": 1, "alive": False, "crashed": False,
                                     "controller": 2}
    assert refused(port)  # a dead broker refuses connections, never hangs
    status, view = http(base, "GET", "/cluster")
    assert view["controller"] == 2 and not view["brokers"][0]["alive"]
    assert all(1 not in p["isr"] for p in view["topics"]["orders"]["partitions"])
    status, out = http(base, "POST", "/brokers/1/start")
    assert status == 200 and out["alive"] is True and not refused(port)
    status, out = http(base, "POST", "/brokers/2/controlled-shutdown")
    assert status == 200 and out["controller"] == 1


def test_bad_requests_get_clear_4xx(cp: tuple[Cluster, str]) -> None:
    c, base = cp
    assert http(base, "POST", "/brokers/7/stop") == \
        (404, {"error": "unknown broker '7'; brokers are [1, 2, 3]"})
    status, out = http(base, "GET", "/topics/missing")
    assert status == 404 and "unknown topic 'missing'" in out["error"]
    status, out = http(base, "POST", "/faults", {"op": "meteor", "broker": 1})
    assert status == 404 and "unknown fault 'meteor'" in out["error"]
    status, out = http(base, "POST", "/faults", {"op": "pause_follower", "broker": 1,
                                                 "topic": "nope"})
    assert status == 404 and "unknown topic 'nope'" in out["error"]
    status, out = http(base, "POST", "/faults", raw=b"{not json")
    assert status == 400 and "not JSON" in out["error"]
    status, out = http(base, "GET", "/brokers/1/stop")
    assert status == 405
    status, out = http(base, "GET", "/nowhere")
    assert status == 404 and "/cluster" in out["error"]
    # a list of faults is validated whole: one bad entry and nothing is applied
    status, out = http(base, "POST", "/faults", [{"op": "pause_follower", "broker": 2},
                                                 {"op": "pause_follower", "broker": 9}])
    assert status == 404 and http(base, "GET", "/faults")[1]["followers"] == []


def test_fault_cli_stops_brokers_and_injects_errors(cp: tuple[Cluster, str]) -> None:
    c, base = cp
    c.create_topic("t", 1, 3)
    r = cli(base, "inject-error", "Produce", "NOT_ENOUGH_REPLICAS", "--count", "1",
            "--topic", "t")
    assert r.returncode == 0, r.stderr
    p = KafkaProducer(bootstrap_servers=c.bootstrap_servers, acks=1, retries=0,
                      enable_idempotence=False)
    with pytest.raises(NotEnoughReplicasError):
        p.send("t", b"first").get(timeout=30)
    assert p.send("t", b"second").get(timeout=30).offset == 0  # only the next request
    p.close()
    r = cli(base, "stop-broker", "3")
    assert r.returncode == 0 and json.loads(r.stdout)["alive"] is False
    r = cli(base, "stop-broker", "12")
    assert r.returncode == 1 and "unknown broker '12'" in r.stderr
    r = cli(base, "cut-brokers", "1", "1")
    assert r.returncode == 1 and "two different brokers" in r.stderr
    r = cli(base, "metrics")
    assert r.returncode == 0
    assert 'kafka_controller_KafkaController_ActiveControllerCount{broker="1"} 1' in r.stdout
    assert "kafka_server_ReplicaManager_UnderReplicatedPartitions" in r.stdout
    r = cli(base, "start-broker", "3")
    assert r.returncode == 0


def test_client_cut_and_dropped_response(cp: tuple[Cluster, str]) -> None:
    c, base = cp
    c.create_topic("t", 1, 3)
    leader = c.call(lambda: c.state.get_partition("t", 0).leader)
    port = c.state.brokers[leader].port
    assert http(base, "POST", "/faults", {"op": "cut_clients", "broker": leader})[0] == 200
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.settimeout(5)
        assert s.recv(1) == b""  # accepted, then cut at once
    assert http(base, "DELETE", "/faults")[0] == 200
    # the response is dropped after the append took effect
    http(base, "POST", "/faults", {"op": "drop_response", "api": "Produce", "count": 1})
    p = KafkaProducer(bootstrap_servers=c.bootstrap_servers, acks=1, retries=0,
                      enable_idempotence=False, request_timeout_ms=5000)
    with pytest.raises(Exception):  # noqa: B017 - the client sees a broken connection
        p.send("t", b"lost answer").get(timeout=30)
    p.close()
    assert c.call(lambda: c.state.get_partition("t", 0).log_end_offset) == 1


SCHEDULE = b"""{"seed": 11}
{"at_ms": 0, "op": "stop_broker", "broker": "random"}
{"at_ms": 100, "op": "stop_broker", "broker": "controller"}
{"at_ms": 200, "op": "start_broker", "broker": 1}
{"at_ms": 200, "op": "start_broker", "broker": 2}
{"at_ms": 200, "op": "start_broker", "broker": 3}
{"at_ms": 1300, "op": "stop_broker", "broker": "leader:s:0", "jitter_ms": 100}
{"at_ms": 1450, "op": "controlled_shutdown", "broker": "leader:s:1"}
"""
# (the last two steps come a second after the restarts: the brokers started at 200 ms are
# back in the ISR by then on a loaded machine too, so the leaders they elect are the same)


def run_schedule(base: str) -> list[dict]:
    status, out = http(base, "POST", "/faults/schedule", raw=SCHEDULE)
    assert status == 202 and out == {"seed": 11, "steps": 7}
    st = wait_for(lambda: (lambda r: r[1] if r[1]["done"] else None)(
        http(base, "GET", "/faults/schedule")), "the fault schedule to finish")
    return [(step["op"], step.get("error"), step["cluster"]) for step in st["applied"]]


def _without_restarted_isr(run: list[tuple]) -> list[tuple]:
    """The run with each partition's ISR left out: a broker started again rejoins the
    ISR once its first fetches caught up, a race with the next step's snapshot (three
    starts at 200 ms: broker 2 is back in the ISR when broker 3 starts, or not yet), as
    on Kafka. Everything the schedule decides (which broker each step hit, the
    controller, who is alive, leaders, leader epochs, replicas) stays compared."""
    out = []
    for op, err, state in run:
        parts = {k: [v[0], v[1], v[3]] for k, v in state["partitions"].items()}
        out.append((op, err, {**state, "partitions": parts}))
    return out


def test_the_same_schedule_twice_gives_the_same_cluster_states() -> None:
    runs = []
    for _ in range(2):
        with Cluster(brokers=3, port=0, control_port=0, seed=5) as c:
            c.create_topic("s", 2, 3)
            runs.append(run_schedule(f"http://127.0.0.1:{c.control.port}"))
    assert _without_restarted_isr(runs[0]) == _without_restarted_isr(runs[1])
    for _, _, state in runs[0] + runs[1]:  # each ISR is still a leader's own
        for leader, _, isr, replicas in state["partitions"].values():
            assert leader < 0 or leader in isr and set(isr) <= set(replicas), state
    assert len(runs[0]) == 7 and all(err is None for _, err, _ in runs[0])
    controllers = [state["controller"] for _, _, state in runs[0]]
    assert len(set(controllers)) > 1  # the controller moved during the run


def test_a_bad_schedule_is_rejected_whole(cp: tuple[Cluster, str]) -> None:
    c, base = cp
    bad = SCHEDULE + b'{"at_ms": 500, "op": "stop_broker", "broker": 99}\n'
    status, out = http(base, "POST", "/faults/schedule", raw=bad)
    assert status == 400 and out["problems"] == [
        "line 9: unknown broker 99; brokers are [1, 2, 3]"]
    assert all(b["alive"] for b in http(base, "GET", "/cluster")[1]["brokers"])
    path = "/dev/stdin"
    r = subprocess.run([sys.executable, "-m", "emulator", "fault", "--control", base,
                        "schedule", path], input=bad.decode(), capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1 and "line 9: unknown broker 99" in r.stderr


def _start_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "emulator", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})


def test_fault_schedule_at_startup_runs_and_reports(tmp_path: Any) -> None:
    f = tmp_path / "faults.jsonl"
    f.write_text('# a broker restart\n{"at_ms": 100, "op": "stop_broker", "broker": 2}\n'
                 '{"at_ms": 300, "op": "start_broker", "broker": 2}\n')
    # the environment variable, as a container would be given it
    proc = _start_cli("--control-port", "0", env={"KAFKA_EMULATOR_FAULT_SCHEDULE": str(f)})
    try:
        ready = proc.stdout.readline()
        assert "kafka-emulator ready" in ready, proc.stderr.read() if proc.poll() else ready
        base = ready.split(" control ")[1].strip()
        st = wait_for(lambda: (lambda r: r[1] if r[0] == 200 and r[1]["done"] else None)(
            http(base, "GET", "/faults/schedule")), "the startup fault schedule to finish")
        assert [(s["op"]["op"], s["op"]["broker"], s.get("error")) for s in st["applied"]] == [
            ("stop_broker", 2, None), ("start_broker", 2, None)]
        assert all(b["alive"] for b in http(base, "GET", "/cluster")[1]["brokers"])
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "fault schedule line 2 at 100 ms" in err and "2 steps, 0 failed" in err


def test_a_bad_fault_schedule_stops_the_emulator_before_it_listens(tmp_path: Any) -> None:
    f = tmp_path / "faults.jsonl"
    f.write_text('{"at_ms": 100, "op": "stop_broker", "broker": 9}\n{"at_ms": "soon"}\n')
    proc = _start_cli("--fault-schedule", str(f))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "kafka-emulator ready" not in out
    assert "line 1: unknown broker 9; brokers are [1, 2, 3]" in err
    assert "line 2: at_ms must be a non-negative integer" in err
    missing = _start_cli("--fault-schedule", str(tmp_path / "nope.jsonl"))
    _, err = missing.communicate(timeout=60)
    assert missing.returncode == 2 and "nope.jsonl" in err


def test_stop_with_a_fence_delay_over_http_and_the_command(cp: tuple[Cluster, str]) -> None:
    c, base = cp
    status, out = http(base, "POST", "/brokers/2/stop", {"fence_after_ms": 60000})
    assert status == 200 and out["alive"] and out["crashed"]
    assert refused(c.state.brokers[2].port)
    view = {b["id"]: b for b in http(base, "GET", "/cluster")[1]["brokers"]}
    assert view[2]["alive"] and view[2]["crashed"]
    assert http(base, "POST", "/brokers/3/stop", {"fence_after_ms": -1})[0] == 400
    assert http(base, "POST", "/brokers/2/start")[1] == {
        "broker": 2, "alive": True, "crashed": False, "controller": c.state.controller_id}
    r = cli(base, "stop-broker", "3", "--fence-after-ms", "60000")
    assert r.returncode == 0, r.stderr
    assert c.state.brokers[3].crashed and c.state.pending_fence
