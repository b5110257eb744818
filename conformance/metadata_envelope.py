"""How long a real Kafka cluster takes to tell every broker about an admin change.

On Kafka each broker learns the controller's changes through its own metadata cache, a
moment after the admin call that made them returned; the emulator reproduces that lag
under ``--fidelity kafka`` (emulator/cluster/metadata_views.py) within the envelope this
script measures, and emulator/fidelity/differences.py's ``metadata-propagation`` entry
quotes its output.

For each kind of change, many trials: the admin request goes to one broker (A, in turn
each of them); the moment its answer arrives, every broker (A included) is polled with
the request a client would send next, as fast as one connection per broker allows, until
it answers with the change. Printed per change, for the broker asked and for the others:
how often the very first request after the admin answer missed the change, and when the
broker applied it (min / median / p99 / max, ms after the admin answer), bounded below by
the sending of the last request that missed it and above by the answer of the first that
showed it (a poll's round trip on a busy machine widens the gap between the two).

    python -m conformance.metadata_envelope [--trials 40] [--brokers 3]

Changes: CreateTopics (Metadata shows the topic with a leader for every partition),
DeleteTopics (Metadata answers UNKNOWN_TOPIC_OR_PARTITION), CreatePartitions (Metadata
shows the new count), a leader change (AlterPartitionReassignments reordering the
replicas, then ElectLeaders PREFERRED: Metadata names the new leader and epoch), and a
topic config (IncrementalAlterConfigs: DescribeConfigs shows the value).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from client_tests.kafka_cluster import KafkaCluster
from emulator.blocking_client import BlockingConnection
from emulator.testing import wait_for

POLL_TIMEOUT_S = 10.0
Seen = Callable[[BlockingConnection], bool]


@dataclass
class Figures:
    """Lags (ms) of one change, for the broker asked and the others: ``*_upper`` to the
    first answer that showed it, ``*_lower`` to the sending of the last that did not (the
    broker applied the change between the two); and the first polls that missed it."""

    asked_upper: list[float] = field(default_factory=list)
    asked_lower: list[float] = field(default_factory=list)
    others_upper: list[float] = field(default_factory=list)
    others_lower: list[float] = field(default_factory=list)
    missed_asked: int = 0
    missed_others: int = 0


def connect(kafka: KafkaCluster, broker: int) -> BlockingConnection:
    sock = socket.create_connection(("127.0.0.1", kafka.listener_port(broker)), timeout=15)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return BlockingConnection(sock, "metadata-envelope")


def metadata(conn: BlockingConnection, topic: str) -> dict:
    return conn.call(3, 12, {"topics": [{"name": topic, "topic_id": bytes(16)}],
                             "allow_auto_topic_creation": False,
                             "include_topic_authorized_operations": False})["topics"][0]


def poll(conn: BlockingConnection, seen: Seen, t0: float) -> tuple[float, float, bool]:
    """(lower, upper, first missed): ms from ``t0`` to the sending of the last request
    that did not show the change (0 when the first did) and to the answer that did."""
    lower = 0.0
    missed = False
    deadline = time.perf_counter() + POLL_TIMEOUT_S
    while True:
        sent = time.perf_counter()
        ok = seen(conn)
        now = time.perf_counter()
        if ok:
            return lower, (now - t0) * 1000, missed
        missed = True
        lower = max(0.0, (sent - t0) * 1000)
        if now > deadline:
            raise AssertionError("the change never reached the broker")


def measure(pool: ThreadPoolExecutor, pollers: dict[int, BlockingConnection], asked: int,
            send: Callable[[], None], seen: Seen, fig: Figures) -> None:
    """Send the admin request (``send`` returns once answered), then poll every broker."""
    send()
    t0 = time.perf_counter()
    futures = {b: pool.submit(poll, c, seen, t0) for b, c in pollers.items()}
    for b, f in futures.items():
        lower, upper, missed = f.result()
        if b == asked:
            fig.asked_lower.append(lower)
            fig.asked_upper.append(upper)
            fig.missed_asked += missed
        else:
            fig.others_lower.append(lower)
            fig.others_upper.append(upper)
            fig.missed_others += missed


def ok(resp: dict, path: Callable[[dict], int]) -> None:
    code = path(resp)
    if code:
        raise AssertionError(f"admin request failed: {resp}")


def run(trials: int, brokers: int) -> dict[str, Figures]:
    out = {k: Figures() for k in ("CreateTopics", "DeleteTopics", "CreatePartitions",
                                  "leader change", "topic config")}
    with KafkaCluster(brokers=brokers) as kafka, ThreadPoolExecutor(brokers) as pool:
        ids = list(kafka.broker_ids)
        admins = {b: connect(kafka, b) for b in ids}
        pollers = {b: connect(kafka, b) for b in ids}
        everywhere = list(admins.values())
        n = len(ids)
        for i in range(trials):
            a = ids[i % len(ids)]
            admin = admins[a]
            name = f"env-{uuid.uuid4().hex[:10]}"

            def create(admin: BlockingConnection = admin, name: str = name) -> None:
                ok(admin.call(19, 7, {"topics": [{
                    "name": name, "num_partitions": 3, "replication_factor": n,
                    "assignments": [], "configs": []}], "timeout_ms": 30000,
                    "validate_only": False}), lambda r: r["topics"][0]["error_code"])

            def has_leaders(c: BlockingConnection, name: str = name, count: int = 3) -> bool:
                t = metadata(c, name)
                return t["error_code"] == 0 and len(t["partitions"]) == count and all(
                    p["leader_id"] >= 0 for p in t["partitions"])

            measure(pool, pollers, a, create, has_leaders, out["CreateTopics"])

            def grow(admin: BlockingConnection = admin, name: str = name) -> None:
                ok(admin.call(37, 3, {"topics": [{"name": name, "count": 6,
                                                  "assignments": None}],
                                      "timeout_ms": 30000, "validate_only": False}),
                   lambda r: r["results"][0]["error_code"])

            measure(pool, pollers, a, grow, lambda c, name=name: has_leaders(c, name, 6),
                    out["CreatePartitions"])

            # A leader change: reorder partition 0's replicas so that another broker is
            # preferred, wait until every broker knows the order, then elect it.
            t = metadata(admin, name)
            p0 = next(p for p in t["partitions"] if p["partition_index"] == 0)
            reps = list(p0["replica_nodes"])
            target = [*reps[1:], reps[0]]
            ok(admin.call(45, 0, {"timeout_ms": 30000, "topics": [{"name": name, "partitions": [
                {"partition_index": 0, "replicas": target}]}]}),
               lambda r: r["error_code"] or r["responses"][0]["partitions"][0]["error_code"])

            def reordered(name: str = name, target: list[int] = target) -> bool:
                return all(next(p for p in metadata(c, name)["partitions"]
                                if p["partition_index"] == 0)["replica_nodes"] == target
                           for c in everywhere)

            wait_for(reordered, "the replicas reordered everywhere", 30)

            def elect(admin: BlockingConnection = admin, name: str = name) -> None:
                ok(admin.call(43, 2, {"election_type": 0, "topic_partitions": [
                    {"topic": name, "partitions": [0]}], "timeout_ms": 30000}),
                   lambda r: r["replica_election_results"][0]["partition_result"][0][
                       "error_code"])

            def new_leader(c: BlockingConnection, name: str = name,
                           want: int = target[0], epoch: int = p0["leader_epoch"]) -> bool:
                p = next(p for p in metadata(c, name)["partitions"] if p["partition_index"] == 0)
                return p["leader_id"] == want and p["leader_epoch"] > epoch

            measure(pool, pollers, a, elect, new_leader, out["leader change"])

            value = str(3_600_000 + i)

            def alter(admin: BlockingConnection = admin, name: str = name,
                      value: str = value) -> None:
                ok(admin.call(44, 1, {"resources": [{"resource_type": 2, "resource_name": name,
                                                     "configs": [{"name": "retention.ms",
                                                                  "config_operation": 0,
                                                                  "value": value}]}],
                                      "validate_only": False}),
                   lambda r: r["responses"][0]["error_code"])

            def described(c: BlockingConnection, name: str = name, value: str = value) -> bool:
                r = c.call(32, 4, {"resources": [{"resource_type": 2, "resource_name": name,
                                                  "configuration_keys": ["retention.ms"]}],
                                   "include_synonyms": False, "include_documentation": False})
                res = r["results"][0]
                return res["error_code"] == 0 and any(
                    e["value"] == value for e in res["configs"])

            measure(pool, pollers, a, alter, described, out["topic config"])

            def delete(admin: BlockingConnection = admin, name: str = name) -> None:
                ok(admin.call(20, 6, {"topics": [{"name": name, "topic_id": bytes(16)}],
                                      "timeout_ms": 30000}),
                   lambda r: r["responses"][0]["error_code"])

            def gone(c: BlockingConnection, name: str = name) -> bool:
                return metadata(c, name)["error_code"] == 3  # UNKNOWN_TOPIC_OR_PARTITION

            measure(pool, pollers, a, delete, gone, out["DeleteTopics"])
        for c in (*admins.values(), *pollers.values()):
            c.close()
    return out


def spread(xs: list[float]) -> str:
    if not xs:
        return "-"
    s = sorted(xs)
    p99 = s[min(len(s) - 1, round(0.99 * (len(s) - 1)))]
    return (f"min {s[0]:.1f} / median {statistics.median(s):.1f} / p99 {p99:.1f} / "
            f"max {s[-1]:.1f} ms")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=40, help="trials per change (default 40)")
    ap.add_argument("--brokers", type=int, default=3, help="brokers (default 3)")
    args = ap.parse_args()
    started = time.monotonic()
    out = run(args.trials, args.brokers)
    load = os.getloadavg()
    print(f"Kafka 4.4.0, {args.brokers} brokers + 1 controller (KRaft) on one machine "
          f"({os.cpu_count()} cores, load average {load[0]:.1f} at the end), {args.trials} "
          f"trials per change, {time.monotonic() - started:.0f} s; ms after the admin "
          "answer came back")
    for kind, fig in out.items():
        print(f"{kind}:")
        for who, lower, upper, missed in (
                ("broker asked", fig.asked_lower, fig.asked_upper, fig.missed_asked),
                ("other brokers", fig.others_lower, fig.others_upper, fig.missed_others)):
            print(f"  {who}: first request right after missed it {missed}/{len(upper)}")
            print(f"    applied after  (last miss sent): {spread(lower)}")
            print(f"    applied before (first hit back): {spread(upper)}")

if __name__ == "__main__":
    main()
