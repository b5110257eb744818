"""Each wrong program as a case: set a cluster up, run the program (wrong or fixed),
check what it must achieve. Shared by client_tests/test_wrong_clients.py and
``python -m client_tests.wrong_clients.survey`` (which prints the seeds table of
docs/fidelity-wrong-clients.md).

A run returns the broken promises (checks.py): an empty list is a pass.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from confluent_kafka import Producer

from client_tests.wrong_clients import (
    abort_without_rewind,
    acks1_durable,
    checks,
    commit_before_process,
    create_then_use,
    forgetful_listener,
    latest_reset,
    offsets_outside_txn,
    producer_retries,
    retriable_as_fatal,
    uncommitted_reader,
)
from emulator import Cluster

# The brokers' group settings of the client tests (client_tests/group_members.py):
# sessions as short as 1 s allowed, and no initial rebalance delay (as in fast mode;
# kafka and adversarial would otherwise take Kafka's 3 s).
CONFIG = {
    "group.min.session.timeout.ms": "1000",
    "group.initial.rebalance.delay.ms": "0",
}


def cluster(fidelity: str, seed: int) -> Cluster:
    return Cluster(brokers=3, port=0, fidelity=fidelity, seed=seed, config=CONFIG)


def values(n: int, prefix: str = "v") -> list[bytes]:
    return [f"{prefix}{i:05d}".encode() for i in range(n)]


def write(bootstrap: str, topic: str, vals: list[bytes], spread_s: float = 0.0) -> None:
    """The input, written once each (idempotent: the input itself must not be what
    goes wrong); with ``spread_s`` in ten bursts over that many seconds, as a live
    stream arrives."""
    p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                  "linger.ms": 5})
    burst = max(1, len(vals) // 10)
    for i, v in enumerate(vals):
        p.produce(topic, value=v)
        if spread_s and i % burst == burst - 1:
            p.poll(0)
            time.sleep(spread_s / 10)
    if p.flush(60):
        raise AssertionError("the input could not be written")


def run_producer_retries(c: Cluster, fixed: bool) -> list[str]:
    c.create_topic("events", 3)
    vals = values(300)
    run = producer_retries.fixed if fixed else producer_retries.wrong
    errors = run(c.bootstrap_servers, "events", vals)
    seen = checks.read_topic(c.bootstrap_servers, "events", 3)
    return [f"delivery errors: {errors[:3]}"] * bool(errors) + checks.exactly_once(vals, seen)


def run_retriable_as_fatal(c: Cluster, fixed: bool) -> list[str]:
    c.create_topic("events", 3)
    vals = values(150)
    run = retriable_as_fatal.fixed if fixed else retriable_as_fatal.wrong
    run(c.bootstrap_servers, "events", vals)  # what it logged: the program's own view
    seen = checks.read_topic(c.bootstrap_servers, "events", 3)
    return checks.exactly_once(vals, seen) if fixed else checks.lost(vals, seen)


def run_commit_before_process(c: Cluster, fixed: bool) -> list[str]:
    c.create_topic("orders", 3)
    vals = values(150)
    write(c.bootstrap_servers, "orders", vals)
    run = commit_before_process.fixed if fixed else commit_before_process.wrong
    processed = run(c.bootstrap_servers, "orders", "billing", len(vals))
    return checks.lost(vals, processed)


def run_create_then_use(c: Cluster, fixed: bool) -> list[str]:
    vals = values(100)
    run = create_then_use.fixed if fixed else create_then_use.wrong
    read = run(c.bootstrap_servers, "replay", vals)
    return checks.exactly_once(vals, read, "read")


def run_forgetful_listener(c: Cluster, fixed: bool) -> list[str]:
    c.create_topic("clicks", 3)
    vals = values(300)
    db = forgetful_listener.Database()
    run = forgetful_listener.fixed if fixed else forgetful_listener.wrong
    writer = threading.Thread(target=write, args=(c.bootstrap_servers, "clicks", vals, 4.0))
    writer.start()  # a live stream: 300 records over 4 s while the sink runs
    try:
        run(c.bootstrap_servers, "clicks", "clicks-sink", db, len(vals))
    finally:
        writer.join(60)
    return checks.exactly_once(vals, db.rows, "stored")


def run_offsets_outside_txn(c: Cluster, fixed: bool) -> list[str]:
    c.create_topic("orders", 3)
    c.create_topic("shipments", 3)
    vals = values(200)
    write(c.bootstrap_servers, "orders", vals)
    run = offsets_outside_txn.fixed if fixed else offsets_outside_txn.wrong
    run(c.bootstrap_servers, "orders", "shipments", "shipper", len(vals))
    shipped = checks.read_topic(c.bootstrap_servers, "shipments", 3, read_committed=True)
    problems = checks.exactly_once([b"ship:" + v for v in vals], shipped)
    lost = checks.lost([b"ship:" + v for v in vals], shipped)
    behind = {} if lost else checks.committed_behind(c.bootstrap_servers, "shipper",
                                                     "orders", 3)
    if behind:  # every shipment is committed: a restart ships them again
        problems.append(f"{sum(behind.values())} order(s) would be shipped more than once: "
                        f"committed offsets of orders behind the end ({behind}) while "
                        "every order's shipment is committed; a restart reads them again")
    return problems


def run_acks1_durable(c: Cluster, fixed: bool) -> list[str]:
    # min.insync.replicas=2: what makes acks=all mean "on two replicas at least"
    c.create_topic("outbox", 3, config={"min.insync.replicas": "2"})
    vals = values(300)
    run = acks1_durable.fixed if fixed else acks1_durable.wrong
    deleted = run(c.bootstrap_servers, "outbox", vals)  # acknowledged: "durable"
    seen = checks.read_topic(c.bootstrap_servers, "outbox", 3)
    problems = checks.lost(deleted, seen)
    if problems:
        problems[0] = "acknowledged: " + problems[0]
    if fixed:  # the twin also delivers every row, once
        problems += checks.exactly_once(vals, seen)
    return problems


def _orders_to_shipments(c: Cluster) -> list[bytes]:
    c.create_topic("orders", 3)
    c.create_topic("shipments", 3)
    vals = values(200)
    write(c.bootstrap_servers, "orders", vals)
    return vals


def run_abort_without_rewind(c: Cluster, fixed: bool) -> list[str]:
    vals = _orders_to_shipments(c)
    run = abort_without_rewind.fixed if fixed else abort_without_rewind.wrong
    run(c.bootstrap_servers, "orders", "shipments", "shipper", len(vals))
    shipped = checks.read_topic(c.bootstrap_servers, "shipments", 3, read_committed=True)
    return checks.exactly_once([b"ship:" + v for v in vals], shipped)


def run_uncommitted_reader(c: Cluster, fixed: bool) -> list[str]:
    vals = _orders_to_shipments(c)
    # the upstream: a correct exactly-once shipper (aborts and redoes a failed batch)
    abort_without_rewind.fixed(c.bootstrap_servers, "orders", "shipments", "shipper",
                               len(vals))
    run = uncommitted_reader.fixed if fixed else uncommitted_reader.wrong
    billed = run(c.bootstrap_servers, "shipments", 3)
    return checks.exactly_once([b"ship:" + v for v in vals], billed, "billed")


def run_latest_reset(c: Cluster, fixed: bool) -> list[str]:
    c.create_topic("signups", 3)
    vals = values(300)

    def start_producers() -> threading.Thread:  # a live stream: 300 records over 4 s
        t = threading.Thread(target=write, args=(c.bootstrap_servers, "signups", vals, 4.0))
        t.start()
        return t

    run = latest_reset.fixed if fixed else latest_reset.wrong
    processed = run(c.bootstrap_servers, "signups", "welcome-mailer", len(vals),
                    start_producers)
    return checks.lost(vals, processed)


@dataclass(frozen=True)
class Case:
    name: str  # the module in client_tests/wrong_clients/
    promise: str  # what the checker asserts
    symptom: str  # the words of the broken promise the wrong program must show
    run: Callable[[Cluster, bool], list[str]]


CASES = [
    Case("commit_before_process", "no record lost", "lost", run_commit_before_process),
    Case("producer_retries", "no record written twice (none lost)", "more than once",
         run_producer_retries),
    Case("create_then_use", "every record written is read, once", "lost",
         run_create_then_use),
    Case("forgetful_listener", "every record stored in the database exactly once",
         "more than once", run_forgetful_listener),
    Case("retriable_as_fatal", "no record lost", "lost", run_retriable_as_fatal),
    Case("offsets_outside_txn", "every order shipped exactly once (read_committed), and "
         "the group's offsets at the end (a restart ships nothing again)",
         "more than once", run_offsets_outside_txn),
    Case("acks1_durable", "every acknowledged record is in the topic", "acknowledged",
         run_acks1_durable),
    Case("abort_without_rewind", "every order shipped exactly once (read_committed)",
         "lost", run_abort_without_rewind),
    Case("uncommitted_reader", "every shipment billed exactly once", "more than once",
         run_uncommitted_reader),
    Case("latest_reset", "every record written after the group started is processed",
         "lost", run_latest_reset),
]
