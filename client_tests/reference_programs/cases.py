"""Each reference program per client as a case: set the topics up, write the input,
run the program, read back over the wire and check the history (checking.py). Shared by
client_tests/test_reference_programs.py and ``python -m
client_tests.reference_programs.survey``."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

from confluent_kafka import KafkaException, Producer

from client_tests.reference_programs import aiokafka_programs, checking, confluent, java
from client_tests.reference_programs import kafka_python as kafka_python_programs
from client_tests.wrong_clients.cases import cluster, write
from client_tests.wrong_clients.checks import read_records
from emulator import Cluster

PARTITIONS = 3
N = 300  # records per run

CLIENTS: dict[str, ModuleType] = {
    "confluent": confluent,
    "kafka-python": kafka_python_programs,
    "aiokafka": aiokafka_programs,
    "java": java,
}
# aiokafka has no KIP-447, so its pipeline is one instance on partitions it assigns
# itself: see aiokafka_programs.py.
CTP_INSTANCES = {"confluent": 2, "kafka-python": 2, "aiokafka": 1, "java": 2}


def run_producer(c: Cluster, client: str) -> checking.Verdict:
    # min.insync.replicas=2: acks=all then means "on two replicas at least"
    c.create_topic("refs", PARTITIONS, config={"min.insync.replicas": "2"})
    values = [f"r{i:05d}" for i in range(N)]
    log = CLIENTS[client].producer(c.bootstrap_servers, "refs", values, PARTITIONS)
    found = read_records(c.bootstrap_servers, "refs", PARTITIONS)
    return checking.producer(values, PARTITIONS, log, found)


def run_consumer(c: Cluster, client: str) -> checking.Verdict:
    c.create_topic("events", PARTITIONS)
    values = [f"c{i:05d}".encode() for i in range(N)]
    # a live stream while the group consumes: 300 records over 3 s
    writer = threading.Thread(target=write, args=(c.bootstrap_servers, "events", values, 3.0))
    writer.start()
    try:
        log = CLIENTS[client].consumer(c.bootstrap_servers, "events", "refs-consumer", N)
    finally:
        writer.join(90)
    found = read_records(c.bootstrap_servers, "events", PARTITIONS)
    return checking.consumer(log, found)


def run_ctp(c: Cluster, client: str) -> checking.Verdict:
    c.create_topic("in", PARTITIONS)
    c.create_topic("out", PARTITIONS)
    values = [f"i{i:05d}".encode() for i in range(N)]
    write(c.bootstrap_servers, "in", values)
    instances = CTP_INSTANCES[client]
    log = CLIENTS[client].ctp(c.bootstrap_servers, "in", "out", "refs-ctp", N, PARTITIONS,
                              instances=instances)
    # the application's next start: each transactional id fenced once more, which ends
    # a transaction a lost producer left open
    for i in range(instances):
        fence(c.bootstrap_servers, f"refs-ctp-x{i}")
    inputs = read_records(c.bootstrap_servers, "in", PARTITIONS)
    outputs = read_records(c.bootstrap_servers, "out", PARTITIONS, read_committed=True)
    return checking.ctp(log, inputs, outputs)


def fence(bootstrap: str, tid: str, attempts: int = 5) -> None:
    for attempt in range(attempts):
        try:
            Producer({"bootstrap.servers": bootstrap, "transactional.id": tid}
                     ).init_transactions(30)
            return
        except KafkaException:
            if attempt == attempts - 1:
                raise


@dataclass(frozen=True)
class Ref:
    client: str
    program: str  # producer, consumer, ctp
    promise: str
    run: Callable[[Cluster, str], checking.Verdict]

    @property
    def name(self) -> str:
        return f"{self.client}-{self.program}"

    def __call__(self, c: Cluster) -> checking.Verdict:
        return self.run(c, self.client)


PROGRAMS = {
    "producer": ("idempotent acks=all: every acknowledged record exactly once, in order "
                 "per partition, at its acknowledged offset", run_producer),
    "consumer": ("group consumer committing after processing: every record processed at "
                 "least once, in order per partition; no commit ahead of processing",
                 run_consumer),
    "ctp": ("transactional consume-transform-produce, read_committed: every input's output "
            "exactly once, none from an aborted transaction, order per partition kept",
            run_ctp),
}
REFS = [Ref(client, program, promise, fn) for client in CLIENTS
        for program, (promise, fn) in PROGRAMS.items()]

__all__ = ["REFS", "Ref", "cluster"]
