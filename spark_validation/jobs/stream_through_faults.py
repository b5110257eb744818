"""A streaming query keeps running through a reassignment, a crash and a new partition.

A producer (confluent-kafka, idempotent, acks=all) writes numbered records the whole
time. A Spark query (subscribe, earliest, ``failOnDataLoss=true``, processing-time
trigger, exactly-once Parquet sink) reads them while, one after another:

1. ``reassign``: partition 0 moves to a replica set without its leader
   (AlterPartitionReassignments through kafka-python 3's admin client): the new
   replica starts empty, catches up, joins the ISR, the leader moves, the old
   replica goes away;
2. ``crash``: the broker leading partition 1 crashes (no controlled shutdown) and
   comes back a few seconds later;
3. ``add_partition``: CreatePartitions takes the topic from 3 to 4 partitions, and
   the producer writes into the new one.

Checks: the query never fails, and when the producer stops the sink holds exactly
the records of the log, (partition, offset, value) for (partition, offset, value),
each once, and every record the producer saw acknowledged is in the log.

    python -m spark_validation.jobs.stream_through_faults   # its own 3-broker emulator
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from emulator.testing import wait_for
from spark_validation import kafka_util as ku
from spark_validation import streams
from spark_validation.jobs._cli import main

TOPIC = "spark-faults"
STEPS = ("reassign", "crash", "add_partition")
RATE_PER_S = 100


class Producer(threading.Thread):
    """Numbered records, round robin over the partitions it is told exist."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        super().__init__(name="spark-faults-producer", daemon=True)
        from confluent_kafka import Producer as CP

        self.topic = topic
        self.partitions = partitions
        self.acked: list[tuple[int, int, str]] = []  # (partition, offset, value)
        self.errors: list[str] = []
        self.sent = 0
        self._halt = threading.Event()
        self._p = CP({"bootstrap.servers": bootstrap, "enable.idempotence": True,
                      "acks": "all", "linger.ms": 5, "message.timeout.ms": 120_000,
                      "topic.metadata.refresh.interval.ms": 1000})

    def _delivered(self, err: Any, msg: Any) -> None:
        if err is not None:
            self.errors.append(str(err))
        else:
            self.acked.append((msg.partition(), msg.offset(), msg.value().decode()))

    def run(self) -> None:
        while not self._halt.is_set():
            n = self.sent
            self._p.produce(self.topic, value=f"r-{n}".encode(), key=str(n).encode(),
                            partition=n % self.partitions, on_delivery=self._delivered)
            self.sent += 1
            self._p.poll(0)
            time.sleep(1 / RATE_PER_S)
        left = self._p.flush(120)
        if left:
            self.errors.append(f"{left} records undelivered at the end")

    def knows_partitions(self, n: int) -> bool:
        """Does the producer's metadata show ``n`` partitions of the topic yet?"""
        md = self._p.list_topics(self.topic, timeout=5).topics.get(self.topic)
        return md is not None and len(md.partitions) >= n

    def acked_in(self, partition: int) -> int:
        return sum(1 for a in self.acked if a[0] == partition)

    def finish(self) -> None:
        self._halt.set()
        self.join(150)


def run(spark: Any, cluster: Any, work: str, steps: tuple[str, ...] = STEPS) -> dict[str, Any]:
    bootstrap = cluster.bootstrap_servers
    ku.create_topic(bootstrap, TOPIC, 3, replication_factor=2)
    producer = Producer(bootstrap, TOPIC, 3)
    producer.start()
    out, ckpt = streams.workdir(work, "faults")
    df = streams.read_stream(spark, bootstrap, subscribe=TOPIC, startingOffsets="earliest",
                             failOnDataLoss=True)
    q = streams.start_parquet_sink(df.selectExpr(*streams.KEY_COLUMNS), out, ckpt,
                                   {"processingTime": "1 second"}, name="faults")
    log: dict[str, Any] = {}
    try:
        streams.wait_rows(spark, q, out, 50)
        for step in steps:
            t0 = time.monotonic()
            log[step] = {"reassign": _reassign, "crash": _crash,
                         "add_partition": _add_partition}[step](cluster, producer)
            # The query must go on reading after each fault.
            seen = len(streams.output(spark, out))
            streams.wait_rows(spark, q, out, seen + 50)
            log[step]["seconds"] = round(time.monotonic() - t0, 1)
        producer.finish()
        assert not producer.errors, f"producer errors: {producer.errors[:5]}"
        records = ku.consume_all(bootstrap, TOPIC)
        expected = [(r.partition, r.offset, r.value.decode()) for r in records]
        rows = streams.wait_rows(spark, q, out, len(expected))
        # Once a batch has read to the log end nothing more can arrive, so the rows
        # compared below are final: a batch past the end would show up as extra rows.
        ends: dict[int, int] = {}
        for r in records:
            ends[r.partition] = max(ends.get(r.partition, 0), r.offset + 1)
        streams.wait_read_to(q, TOPIC, ends)
        assert q.exception() is None and q.isActive, f"query died: {q.exception()}"
    finally:
        producer.finish()
        streams.stop(q)
    rows = streams.output(spark, out)
    dup = streams.duplicates(rows)
    assert not dup, f"records read more than once: {list(dup)[:10]}"
    assert rows == expected, (
        f"sink has {len(rows)} rows, the log {len(expected)}; missing "
        f"{sorted(set(expected) - set(rows))[:6]}, unexpected {sorted(set(rows) - set(expected))[:6]}")
    lost = set(producer.acked) - set(expected)
    assert not lost, f"acknowledged records missing from the log: {sorted(lost)[:6]}"
    return {"steps": log, "records": len(rows), "produced": producer.sent,
            "partitions": sorted({r[0] for r in rows}), "batches": q.lastProgress["batchId"]}


def _leader_and_replicas(cluster: Any, partition: int) -> tuple[int, list[int]]:
    """From Metadata, not the emulator's state: ``cluster`` may be an emulator in a Docker
    container (spark_validation/docker_emulator.py), which offers only bootstrap_servers,
    broker_ids and stop_broker/start_broker."""
    leader, replicas, _ = ku.partition_state(cluster.bootstrap_servers, TOPIC, partition)
    return leader, replicas


def _reassign(cluster: Any, producer: Producer) -> dict[str, Any]:
    from kafka import TopicPartition

    leader, replicas = _leader_and_replicas(cluster, 0)
    spare = [b for b in cluster.broker_ids if b not in replicas]
    target = [spare[0]] + [b for b in replicas if b != leader]
    a = ku.admin(cluster.bootstrap_servers)
    try:
        result = a.alter_partition_reassignments({TopicPartition(TOPIC, 0): target})
        assert all(err is None for err in result.values()), f"reassignment refused: {result}"
        wait_for(lambda: not a.list_partition_reassignments({TOPIC: [0]}),
                 "the reassignment of partition 0 to finish", 60, interval=0.2)
    finally:
        a.close()
    new_leader, now = _leader_and_replicas(cluster, 0)
    assert sorted(now) == sorted(target) and new_leader != leader, (
        f"partition 0: replicas {now} leader {new_leader}, wanted {target} without {leader}")
    return {"replicas_before": replicas, "leader_before": leader, "replicas_after": now,
            "leader_after": new_leader}


def _crash(cluster: Any, producer: Producer) -> dict[str, Any]:
    leader, replicas = _leader_and_replicas(cluster, 1)
    cluster.stop_broker(leader)
    acked = producer.acked_in(1)
    # The other replica takes over and the producer keeps writing to partition 1.
    wait_for(lambda: producer.acked_in(1) >= acked + 50,
             "writes to partition 1 while its old leader is down", 60)
    new_leader, _ = _leader_and_replicas(cluster, 1)
    cluster.start_broker(leader)
    wait_for(lambda: leader in ku.partition_state(cluster.bootstrap_servers, TOPIC, 1)[2],
             f"broker {leader} back in partition 1's ISR", 60, interval=0.2)
    return {"crashed": leader, "leader_while_down": new_leader}


def _add_partition(cluster: Any, producer: Producer) -> dict[str, Any]:
    a = ku.admin(cluster.bootstrap_servers)
    try:
        a.create_partitions({TOPIC: 4})
    finally:
        a.close()
    wait_for(lambda: ku._has_leaders(cluster.bootstrap_servers, TOPIC, 4),
             "4 partitions with leaders", 30, interval=0.2)
    # Write to partition 3 only once the producer's own metadata knows it (its refresh
    # runs every second), or librdkafka fails those records as an unknown partition.
    wait_for(lambda: producer.knows_partitions(4), "the producer to learn of partition 3")
    producer.partitions = 4
    wait_for(lambda: producer.acked_in(3) >= 20, "writes to partition 3", 60)
    return {"partitions": 4}


if __name__ == "__main__":
    sys.exit(main(run, __doc__, needs_cluster=True))
