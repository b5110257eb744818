"""The exactly-once history checker (emulator/history.py) proven sensitive on real runs:
each violation kind it knows is planted into a real transactional pipeline over TCP, and
the checker must report it.

A consume-transform-produce application (a read_committed confluent-kafka consumer of
one group, a transactional producer that sends the consumer's offsets with each
transaction; client_tests/eos_history.py's shape, without its faults) runs against an
in-process 3-broker emulator. It records its History exactly as eos_history does
(inputs read back from the input topic, every attempt with its outcome, the outputs a
read_committed reader finds), and ``check`` judges it. Then one thing is broken, per
test:

- the emulator, for that test only (a method of the running cluster replaced):
  offsets sent with an aborted transaction committed anyway (the pipeline's next
  session resumes past records it never wrote: **lost**; the survivor a mutation run saw over
  the 10 default seeds), a commit's markers written as ABORT markers in the data
  partitions (the application saw its commit succeed: **committed missing**), an
  abort's markers written as COMMIT markers (**aborted visible**);
- the pipeline: offsets never sent with the transaction, then a restart (**duplicated**),
  a batch written in reverse (**reordered**), a stray writer the application's log
  does not know (**unknown**), the output read read_uncommitted after an abort
  (**aborted visible** again).

The control run is the same pipeline, with an abort and a restart of its session, on the
unbroken emulator: no violation. So each kind is seen on a real run, not only on
hand-made histories (tests/test_history.py), and the checker's silence over the seeds of
client_tests/test_eos_history.py means something.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from client_tests.eos_history import BACKOFF, _read_all
from emulator import Cluster
from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.transactions import coordinator as txn_coordinator
from emulator.history import KINDS, Attempt, History, InputRecord, OutputRecord, Report, check

# Not run with --target kafka: the planted bugs are in the emulator's own code.
pytestmark = pytest.mark.emulator_only

PARTITIONS = 2
RECORDS = 40
BATCH = 8


@dataclass
class Plan:
    """How the pipeline behaves (the defaults: a correct exactly-once application)."""

    send_offsets: bool = True  # offsets with the transaction (else never committed)
    abort_at: int | None = 2  # this transaction (1-based) is aborted, then the session ends
    restart_after: int | None = None  # end the session after this many commits
    reverse: bool = False  # write a batch's outputs in reverse order
    stray: bool = False  # a writer the application's log does not know adds a record
    reader: str = "read_committed"  # how the output is read back at the end


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with Cluster(brokers=3, port=0) as c:
        yield c


def _feed(boot: str, topic: str) -> None:
    p = Producer({"bootstrap.servers": boot, "enable.idempotence": True, "acks": "all",
                  "linger.ms": 5})
    for seq in range(RECORDS):
        key = f"i{seq}".encode()
        p.produce(topic, key=key, value=key, partition=seq % PARTITIONS)
    assert p.flush(30) == 0


def _ends(boot: str, topic: str) -> dict[int, int]:
    c = Consumer({"bootstrap.servers": boot, "group.id": "hs-probe", **BACKOFF})
    try:
        return {p: c.get_watermark_offsets(TopicPartition(topic, p), 15)[1]
                for p in range(PARTITIONS)}
    finally:
        c.close()


def run_pipeline(cluster: Cluster, plan: Plan, deadline_s: float = 90) -> Report:
    """Feed the input, run the application until it has read every input record (across
    its sessions), read the output back, and check the History."""
    boot = cluster.bootstrap_servers
    tag = uuid.uuid4().hex[:8]
    src, dst, group, tid = f"hs-in-{tag}", f"hs-out-{tag}", f"hs-app-{tag}", f"hs-{tag}"
    cluster.create_topic(src, PARTITIONS, 3)
    cluster.create_topic(dst, PARTITIONS, 3)
    _feed(boot, src)
    ends = _ends(boot, src)
    assert sum(ends.values()) == RECORDS
    attempts: list[Attempt] = []
    t0 = time.monotonic()
    now = lambda: (time.monotonic() - t0) * 1000  # noqa: E731
    n = session = 0
    commits_in_session = 0
    done = False
    while not done:
        assert time.monotonic() - t0 < deadline_s, f"the pipeline did not finish: {attempts}"
        session += 1
        commits_in_session = 0
        consumer = Consumer({"bootstrap.servers": boot, "group.id": group,
                             "isolation.level": "read_committed", "enable.auto.commit": False,
                             "auto.offset.reset": "earliest", "session.timeout.ms": 6000,
                             **BACKOFF})
        producer = Producer({"bootstrap.servers": boot, "transactional.id": tid,
                             "linger.ms": 5, **BACKOFF})
        producer.init_transactions(30)
        consumer.subscribe([src])
        try:
            while True:
                assert time.monotonic() - t0 < deadline_s, f"stuck: {attempts}"
                batch = [m for m in consumer.consume(BATCH, 0.3) if m.error() is None]
                if not batch:
                    positions = consumer.position([TopicPartition(src, p)
                                                   for p in range(PARTITIONS)])
                    if all(tp.offset >= ends[tp.partition] for tp in positions):
                        done = True
                        break
                    continue
                n += 1
                aid = f"s{session}.{n}"
                ids = tuple(m.key().decode() for m in batch)
                start = now()
                producer.begin_transaction()
                for m in (reversed(batch) if plan.reverse else batch):
                    producer.produce(dst, key=m.key(), partition=m.partition(),
                                     value=json.dumps({"id": m.key().decode(),
                                                       "attempt": aid}).encode())
                if plan.send_offsets:
                    last: dict[int, int] = {}
                    for m in batch:
                        last[m.partition()] = m.offset()
                    producer.send_offsets_to_transaction(
                        [TopicPartition(src, p, o + 1) for p, o in last.items()],
                        consumer.consumer_group_metadata(), 15)
                if plan.abort_at == n:
                    # the attempt's records reach the log first (an abort would purge
                    # those still queued in the client): the abort has data to hide
                    assert producer.flush(30) == 0
                    producer.abort_transaction(30)
                    attempts.append(Attempt(aid, "aborted", ids, start, now(), "planned"))
                    break  # the session ends: the next resumes from the committed offsets
                producer.commit_transaction(30)
                attempts.append(Attempt(aid, "committed", ids, start, now()))
                commits_in_session += 1
                if plan.restart_after == commits_in_session and session == 1:
                    break
        finally:
            consumer.close()
            producer.flush(10)
    if plan.stray:
        stray = Producer({"bootstrap.servers": boot, "transactional.id": f"stray-{tag}",
                          **BACKOFF})
        stray.init_transactions(30)
        stray.begin_transaction()
        stray.produce(dst, key=b"x", partition=0,
                      value=json.dumps({"id": "x-stray", "attempt": "stray-1"}).encode())
        stray.commit_transaction(30)
    inputs = [InputRecord(m.key().decode(), m.partition(), m.offset())
              for m in _read_all(boot, src, PARTITIONS, "read_uncommitted")]
    outputs = []
    for m in _read_all(boot, dst, PARTITIONS, plan.reader):
        v = json.loads(m.value())
        outputs.append(OutputRecord(v["id"], v["attempt"], m.partition(), m.offset()))
    return check(History(inputs, attempts, outputs, []))


def kinds(report: Report) -> set[str]:
    return {k for k, c in report.counts().items() if c}


def test_the_correct_pipeline_on_the_correct_emulator_has_no_violation(
        cluster: Cluster) -> None:
    report = run_pipeline(cluster, Plan())
    assert report.ok, report.text()
    h = report.history
    # not vacuous: every input went through, an attempt aborted and its batch was redone
    assert len(h.inputs) == RECORDS and len(h.outputs) == RECORDS, report.summary()
    assert [a.outcome for a in h.attempts].count("aborted") == 1, report.summary()
    assert sum(a.outcome == "committed" for a in h.attempts) >= RECORDS // BATCH


def test_lost_offsets_of_an_aborted_transaction_committed(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulator commits the offsets an aborted transaction sent: the next session
    starts past the aborted batch, whose records never reach the output."""
    original = GroupCoordinator.complete_txn

    def committing(self: GroupCoordinator, group_id: str, producer_id: int,
                   commit: bool) -> None:
        original(self, group_id, producer_id, True)

    monkeypatch.setattr(GroupCoordinator, "complete_txn", committing)
    report = run_pipeline(cluster, Plan())
    assert "lost" in kinds(report), report.text()


def test_committed_missing_when_a_commit_writes_abort_markers(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulator writes ABORT markers for a commit in the data partitions (the
    offsets are committed, the application sees its commit succeed)."""
    original = txn_coordinator.write_markers

    def aborting(state, pending, producer_id, producer_epoch, commit, now):  # type: ignore[no-untyped-def]
        original(state, pending, producer_id, producer_epoch, False, now)

    monkeypatch.setattr(txn_coordinator, "write_markers", aborting)
    report = run_pipeline(cluster, Plan(abort_at=None))
    assert "committed missing" in kinds(report), report.text()


def test_aborted_visible_when_an_abort_writes_commit_markers(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """The emulator writes COMMIT markers for an abort in the data partitions (the
    offsets are not committed, as the abort says): a read_committed reader keeps the
    aborted attempt's records."""
    original = txn_coordinator.write_markers

    def committing(state, pending, producer_id, producer_epoch, commit, now):  # type: ignore[no-untyped-def]
        original(state, pending, producer_id, producer_epoch, True, now)

    monkeypatch.setattr(txn_coordinator, "write_markers", committing)
    report = run_pipeline(cluster, Plan())
    assert "aborted visible" in kinds(report), report.text()


def test_aborted_visible_when_the_output_is_read_uncommitted(cluster: Cluster) -> None:
    """A reader of the output that does not skip aborted transactions: the aborted
    attempt's records are there, beside the copies its redo wrote (duplicated too)."""
    report = run_pipeline(cluster, Plan(reader="read_uncommitted"))
    assert kinds(report) == {"aborted visible", "duplicated"}, report.text()


def test_duplicated_when_offsets_are_not_sent_with_the_transaction(cluster: Cluster) -> None:
    """No offsets ever committed: after a restart the application reads from the
    beginning again and writes the same records twice."""
    report = run_pipeline(cluster, Plan(send_offsets=False, abort_at=None, restart_after=2))
    assert "duplicated" in kinds(report), report.text()


def test_reordered_when_a_batch_is_written_in_reverse(cluster: Cluster) -> None:
    report = run_pipeline(cluster, Plan(reverse=True, abort_at=None))
    assert kinds(report) == {"reordered"}, report.text()


def test_unknown_when_a_writer_outside_the_log_adds_output(cluster: Cluster) -> None:
    report = run_pipeline(cluster, Plan(stray=True, abort_at=None))
    assert kinds(report) == {"unknown"}, report.text()


def test_every_kind_is_planted_above() -> None:
    """Each kind emulator/history.py reports has a test here that plants it (a new kind
    needs one)."""
    planted = {"lost", "duplicated", "aborted visible", "committed missing", "reordered",
               "unknown"}
    assert planted == set(KINDS)


_ = (KafkaError, KafkaException)  # the pipeline lets client errors fail the test as they are
