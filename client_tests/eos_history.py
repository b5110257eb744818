"""An exactly-once pipeline run through a seeded storm of faults, its history recorded
for emulator/history.py to check (client_tests/test_eos_history.py runs it per seed,
bench/eos_history.py runs many seeds and prints a table).

The cluster is ``python -m emulator --data-dir DIR --control-port P`` (3 brokers) on fixed
ports, so it can be SIGKILLed and started again on the same directory while the clients
keep going. On it:

- an input producer (idempotent, acks=all) writes records with unique ids (``i<seq>``,
  partition ``seq % IN_PARTITIONS``) at a steady rate while the faults run;
- two application instances, each a read_committed consumer of one group and a
  transactional producer of its own ``transactional.id``, consume a batch, write one
  output record per input record (to partition ``input partition % OUT_PARTITIONS``,
  naming the input id and the attempt), send the offsets with the transaction and
  commit. An abortable error aborts and rewinds to the batch's start; a retriable commit
  is retried; anything else drops the instance's clients (a crash: the next session's
  init_transactions fences the old producer). Every attempt and its outcome is logged;
- the faults come from a seeded plan (``plan(seed)``): windows of one fault each, from
  leader kills (stop_broker/start_broker of a partition's leader, sometimes fenced only
  after a delay as Kafka's session timeout would), coordinator moves (the group's or the
  transaction coordinator's broker shut down and started again, or its internal
  partition's leadership moved by a reassignment and a preferred election, no broker
  stopped), network cuts (a leader cut off from a follower, a broker cut off from the
  clients) and SIGKILL restarts of the whole process. Each fault and its undo are sent
  as a fault schedule (emulator/faults/schedule.py's format, ``POST /faults/schedule``);
  the schedule lines actually run are kept, with their times, as the run's events.

At the end every fault is undone, the input producer flushes, the instances catch up
(the group's committed offsets reach the input's end) and stop, each transactional id is
fenced once more (init_transactions, as the application's next start would: a
transaction left open by a stuck producer is aborted), and a read_committed reader of
the output (up to each partition's high watermark) and a reader of the input give the
rest of the History. On a violation the output log as the brokers hold it (batches,
producer ids, markers) is written beside the history.
"""

from __future__ import annotations

import faulthandler
import json
import logging
import os
import random
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from client_tests.process_guard import die_with_parent
from emulator.blocking_client import BlockingConnection
from emulator.containers import free_port_block
from emulator.control.operations import http_request
from emulator.history import Attempt, Event, History, InputRecord, OutputRecord, Report, check
from wire.records import decode_records, iter_batches, read_header

IN, OUT = "eos-in", "eos-out"
IN_PARTITIONS, OUT_PARTITIONS = 4, 3
GROUP = "eos-app"
APPS = ("a", "b")
KINDS = ("leader_kill", "group_coordinator_move", "txn_coordinator_move", "broker_cut",
         "client_cut", "sigkill_restart")
ROOT = Path(__file__).resolve().parent.parent
DEBUG = ({"debug": os.environ["EOS_HISTORY_DEBUG"], "log_level": 7}
         if os.environ.get("EOS_HISTORY_DEBUG") else {})
BACKOFF: dict[str, Any] = {"reconnect.backoff.ms": 50, "reconnect.backoff.max.ms": 500,
                           "retry.backoff.ms": 50, "retry.backoff.max.ms": 500,
                           "topic.metadata.refresh.interval.ms": 2000}
# librdkafka's own log (connection refused... through every fault) goes to a logger of
# ours, quiet unless EOS_HISTORY_DEBUG names librdkafka debug contexts (e.g. eos,protocol)
_QUIET = logging.getLogger("eos_history.librdkafka")
_QUIET.propagate = bool(os.environ.get("EOS_HISTORY_DEBUG"))
if not _QUIET.propagate:
    _QUIET.addHandler(logging.NullHandler())
BACKOFF["logger"] = _QUIET


# ---- the plan --------------------------------------------------------------------------
@dataclass(frozen=True)
class Window:
    """One fault, from ``at_s`` after the faults start, undone ``duration_s`` later;
    ``pick`` chooses among the candidates found when it starts (a leader, a follower)."""

    at_s: float
    kind: str
    duration_s: float
    pick: int
    variant: int  # 0 or 1: a kind's two forms (fenced at once or later, kill or move)


def plan(seed: int, faults: int = 4) -> list[Window]:
    """The seed's faults: ``faults`` windows of different kinds (while there are kinds
    left) in a seeded order, each 0.6-2.0 s long, 0.3-1.0 s apart, from 0.5-1.5 s in."""
    rng = random.Random(seed)
    kinds = list(KINDS)
    rng.shuffle(kinds)
    out: list[Window] = []
    t = rng.uniform(0.5, 1.5)
    for i in range(faults):
        kind = kinds[i] if i < len(kinds) else rng.choice(KINDS)
        dur = rng.uniform(0.6, 2.0)
        out.append(Window(round(t, 2), kind, round(dur, 2), rng.randrange(1 << 16),
                          rng.randrange(2)))
        t += dur + rng.uniform(0.3, 1.0)
    return out


# ---- the emulator as a process ---------------------------------------------------------
class EmulatorProcess:
    """``python -m emulator --data-dir DIR`` on fixed ports with its control plane."""

    def __init__(self, data_dir: Path, log_path: Path) -> None:
        self.data_dir, self.log_path = data_dir, log_path
        base = free_port_block(4)
        self.port, self.control_port = base, base + 3
        self.bootstrap = ",".join(f"127.0.0.1:{base + i}" for i in range(3))
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> None:
        log = open(self.log_path, "a")  # noqa: SIM115 - the child holds it
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "emulator", "--port", str(self.port), "--control-port",
             str(self.control_port), "--data-dir", str(self.data_dir), "--log-level", "INFO"],
            stdout=subprocess.PIPE, stderr=log, text=True, cwd=ROOT,
            preexec_fn=die_with_parent)
        log.close()
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "kafka-emulator ready" not in line:
            raise RuntimeError(f"the emulator did not start: {line!r}; its log: "
                               f"{self.log_path}")
        self.starts += 1

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(30)

    def control(self, method: str, path: str, body: Any = None, raw: bytes | None = None
                ) -> Any:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(f"http://127.0.0.1:{self.control_port}{path}",
                                     data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            text = resp.read()
        return json.loads(text) if text else None

    def operation(self, name: str, **fields: Any) -> Any:
        return self.control(*http_request(name, fields))

    def coordinator(self, key: str, key_type: int) -> int:
        """FindCoordinator on the wire, asked of the first broker that answers."""
        for i in range(3):
            try:
                with BlockingConnection.connect("127.0.0.1", self.port + i,
                                                client_id="history", timeout=5) as c:
                    r = c.call(10, 4, {"key_type": key_type, "coordinator_keys": [key]})
                [co] = r["coordinators"]
                if co["error_code"] == 0:
                    return int(co["node_id"])
            except (OSError, ConnectionError):
                continue
        return -1


# ---- the application -------------------------------------------------------------------
@dataclass
class Log:
    """What the application did and what happened around it, with times since t0."""

    t0: float = field(default_factory=time.monotonic)
    attempts: list[Attempt] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def now(self) -> float:
        return (time.monotonic() - self.t0) * 1000

    def event(self, what: str) -> None:
        with self.lock:
            self.events.append(Event(self.now(), what))

    def attempt(self, a: Attempt) -> None:
        with self.lock:
            self.attempts.append(a)


class App(threading.Thread):
    """One instance of the exactly-once application (see the module docstring)."""

    def __init__(self, name: str, bootstrap: str, log: Log) -> None:
        super().__init__(daemon=True, name=f"eos-app-{name}")
        self.app, self.bootstrap, self.log = name, bootstrap, log
        self.stop = threading.Event()
        self.sessions = 0
        self.n = 0
        self.crashes: list[str] = []
        self.seen: set[int] = set()  # consumer error codes already logged

    def run(self) -> None:
        while not self.stop.is_set():
            self.sessions += 1
            try:
                self.session()
            except Exception as e:  # noqa: BLE001 - any failure: the instance restarts
                self.crashes.append(repr(e))
                self.log.event(f"app {self.app} session {self.sessions} crashed: {e!r}")
                time.sleep(0.2)

    def session(self) -> None:
        consumer = Consumer({"bootstrap.servers": self.bootstrap, "group.id": GROUP,
                             "client.id": f"{self.app}-{self.sessions}",
                             "isolation.level": "read_committed",
                             "enable.auto.commit": False, "auto.offset.reset": "earliest",
                             "session.timeout.ms": 6000, "heartbeat.interval.ms": 500,
                             "max.poll.interval.ms": 30000, **BACKOFF})
        producer = Producer({"bootstrap.servers": self.bootstrap,
                             "transactional.id": f"eos-{self.app}",
                             "transaction.timeout.ms": 10000, "message.timeout.ms": 10000,
                             "linger.ms": 5, **BACKOFF, **DEBUG})
        try:
            self._init(producer)
            self.log.event(f"app {self.app} session {self.sessions}: producer initialized")
            consumer.subscribe([IN], on_assign=self._assigned, on_revoke=self._revoked)
            while not self.stop.is_set():
                batch = [m for m in consumer.consume(100, 0.3) if not self._error(m)]
                if batch:
                    self.transaction(consumer, producer, batch)
        finally:
            consumer.close()

    def _assigned(self, _c: Consumer, tps: list[TopicPartition]) -> None:
        self.log.event(f"app {self.app}: assigned {sorted(tp.partition for tp in tps)}")

    def _revoked(self, _c: Consumer, tps: list[TopicPartition]) -> None:
        self.log.event(f"app {self.app}: revoked {sorted(tp.partition for tp in tps)}")

    def _error(self, m: Any) -> bool:
        if m.error() is None:
            return False
        if m.error().fatal():
            raise KafkaException(m.error())
        if m.error().code() not in self.seen:
            self.seen.add(m.error().code())
            self.log.event(f"app {self.app}: consumer error {m.error()}")
        return True

    def _init(self, producer: Producer) -> None:
        for _ in range(20):
            try:
                producer.init_transactions(15)
                return
            except KafkaException as e:
                if not e.args[0].retriable():
                    raise
        raise RuntimeError("init_transactions kept failing")

    def transaction(self, consumer: Consumer, producer: Producer, batch: list) -> None:
        self.n += 1
        aid = f"{self.app}{self.sessions}.{self.n}"
        ids = tuple(m.key().decode() for m in batch)
        start = self.log.now()
        first: dict[int, int] = {}
        last: dict[int, int] = {}
        for m in batch:
            first.setdefault(m.partition(), m.offset())
            last[m.partition()] = m.offset()
        outcome, note = "unknown", ""
        try:
            producer.begin_transaction()
            for m in batch:
                value = json.dumps({"id": m.key().decode(), "attempt": aid,
                                    "in": [m.partition(), m.offset()]}).encode()
                producer.produce(OUT, key=m.key(), value=value,
                                 partition=m.partition() % OUT_PARTITIONS)
            send_offsets(producer, [TopicPartition(IN, p, o + 1) for p, o in last.items()],
                         consumer.consumer_group_metadata(), 8)
            self._commit(producer)
            outcome = "committed"
        except KafkaException as e:
            err: KafkaError = e.args[0]
            note = f"{err.name()}: {err.str()}"
            if err.txn_requires_abort():
                self._abort(producer)
                outcome = "aborted"
                for p, o in first.items():  # read the batch again
                    try:
                        consumer.seek(TopicPartition(IN, p, o))
                    except KafkaException:
                        pass  # no longer assigned: its next owner starts from the commit
            else:
                raise
        except Hung as e:
            note = str(e)
            raise
        finally:
            self.log.attempt(Attempt(aid, outcome, ids, start, self.log.now(), note))  # type: ignore[arg-type]

    def _commit(self, producer: Producer) -> None:
        for _ in range(10):
            try:
                producer.commit_transaction(15)
                return
            except KafkaException as e:
                if not e.args[0].retriable():
                    raise
        raise RuntimeError("commit_transaction kept failing")

    def _abort(self, producer: Producer) -> None:
        for _ in range(10):
            try:
                producer.abort_transaction(15)
                return
            except KafkaException as e:
                if not e.args[0].retriable():
                    raise
        raise RuntimeError("abort_transaction kept failing")


class Hung(RuntimeError):
    """A client call that did not return long after its own timeout."""


def send_offsets(producer: Producer, offsets: list[TopicPartition], group: Any,
                 timeout: float) -> None:
    """``send_offsets_to_transaction`` that gives up on the call when it does not return
    in ``timeout`` + 4 s: librdkafka's coordinator requests ignore that timeout
    (confluentinc/librdkafka#5456) and can wait for ever on a group coordinator whose
    connection went while it was cached (#5511; seen here after a SIGKILL restart of
    every broker, as it would after one of a real cluster). The call is left blocked in
    its thread with the producer it holds, and the instance restarts (its new producer
    fences the stuck one), as an application with a watchdog would."""
    outcome: list[BaseException | None] = []

    def call() -> None:
        try:
            producer.send_offsets_to_transaction(offsets, group, timeout)
            outcome.append(None)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            outcome.append(e)

    worker = threading.Thread(target=call, daemon=True, name="send-offsets")
    worker.start()
    worker.join(timeout + 4)
    if not outcome:
        raise Hung(f"send_offsets_to_transaction did not return in {timeout + 4:g} s "
                   "(librdkafka#5456/#5511)")
    if outcome[0] is not None:
        raise outcome[0]


class InputProducer(threading.Thread):
    """Writes ``i<seq>`` at ``rate`` records/s until stopped, then flushes."""

    def __init__(self, bootstrap: str, rate: int) -> None:
        super().__init__(daemon=True, name="eos-input")
        self.bootstrap, self.rate = bootstrap, rate
        self.stop = threading.Event()
        self.sent = self.acked = self.failed = 0
        self.unflushed = 0

    def run(self) -> None:
        p = Producer({"bootstrap.servers": self.bootstrap, "acks": "all",
                      "enable.idempotence": True, "linger.ms": 5,
                      "message.timeout.ms": 120000, **BACKOFF})

        def delivered(err: object, _m: object) -> None:
            if err is None:
                self.acked += 1
            else:
                self.failed += 1

        start = time.monotonic()
        while not self.stop.is_set():
            due = int((time.monotonic() - start) * self.rate)
            while self.sent < due:
                key = f"i{self.sent}".encode()
                p.produce(IN, key=key, value=key, partition=self.sent % IN_PARTITIONS,
                          on_delivery=delivered)
                self.sent += 1
            p.poll(0.02)
        self.unflushed = p.flush(120)


# ---- faults ----------------------------------------------------------------------------
class Faults:
    """Applies a plan's windows to the running emulator and records what ran."""

    def __init__(self, emu: EmulatorProcess, log: Log) -> None:
        self.emu, self.log = emu, log
        self.schedule_lines: list[str] = []  # the schedule actually run, times from t0
        self.applied: list[str] = []

    def cluster(self) -> dict:
        return self.emu.control("GET", "/cluster")

    def leader(self, view: dict, pick: int) -> tuple[str, int, int]:
        parts = [(t, p["partition"], p["leader"]) for t in (IN, OUT)
                 for p in view["topics"][t]["partitions"] if p["leader"] >= 0]
        return parts[pick % len(parts)]

    def schedule(self, steps: list[dict], what: str) -> None:
        """Run ``steps`` (``at_ms`` relative to now) as a fault schedule."""
        now = self.log.now()
        text = "\n".join(json.dumps(s) for s in steps)
        self.emu.control("POST", "/faults/schedule", raw=text.encode())
        self.schedule_lines.extend(json.dumps({**s, "at_ms": int(now + s["at_ms"])})
                                   for s in steps)
        self.log.event(what + ": " + "; ".join(json.dumps(s) for s in steps))

    def wait_schedule(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            st = self.emu.control("GET", "/faults/schedule")
            if st["done"]:
                for a in st["applied"]:
                    if "error" in a:
                        self.log.event(f"schedule step failed: {a['op']}: {a['error']}")
                return
            time.sleep(0.05)
        raise AssertionError("the fault schedule did not finish")

    def run_window(self, w: Window) -> None:
        ms = int(w.duration_s * 1000)
        view = self.cluster()
        if w.kind == "sigkill_restart":
            self.log.event("SIGKILL the emulator process")
            self.emu.kill()
            time.sleep(w.duration_s)
            self.emu.start()
            self.log.event(f"emulator started again on its data dir (start {self.emu.starts})")
        elif w.kind == "leader_kill":
            topic, part, b = self.leader(view, w.pick)
            stop: dict[str, Any] = {"at_ms": 0, "op": "stop_broker", "broker": b}
            if w.variant:
                stop["fence_after_ms"] = min(ms, 1500)  # a crash noticed late, as on Kafka
            self.schedule([stop, {"at_ms": ms, "op": "start_broker", "broker": b}],
                          f"leader kill: broker {b}, leader of {topic}-{part}")
            self.wait_schedule()
        elif w.kind in ("group_coordinator_move", "txn_coordinator_move"):
            group = w.kind == "group_coordinator_move"
            key = GROUP if group else f"eos-{APPS[w.pick % len(APPS)]}"
            b = self.emu.coordinator(key, 0 if group else 1)
            if b < 0:
                self.log.event(f"coordinator move skipped: no coordinator for {key}")
                return
            if w.variant:
                self.schedule([{"at_ms": 0, "op": "controlled_shutdown", "broker": b},
                               {"at_ms": ms, "op": "start_broker", "broker": b}],
                              f"coordinator of {key} (broker {b}) shut down")
                self.wait_schedule()
            else:
                self.move_coordinator(view, key, group, b)
                time.sleep(w.duration_s)
        elif w.kind == "broker_cut":
            topic, part, b = self.leader(view, w.pick)
            [p] = [x for x in view["topics"][topic]["partitions"] if x["partition"] == part]
            others = [r for r in p["replicas"] if r != b]
            f = others[w.pick % len(others)]
            self.schedule([{"at_ms": 0, "op": "cut_brokers", "brokers": [b, f]},
                           {"at_ms": ms, "op": "heal_brokers", "brokers": [b, f]}],
                          f"network cut between {b} (leader of {topic}-{part}) and {f}")
            self.wait_schedule()
        elif w.kind == "client_cut":
            b = 1 + w.pick % 3
            if w.variant:  # the coordinator of one of the transactions
                b = self.emu.coordinator(f"eos-{APPS[w.pick % len(APPS)]}", 1)
            self.schedule([{"at_ms": 0, "op": "cut_clients", "broker": b},
                           {"at_ms": ms, "op": "heal_clients", "broker": b}],
                          f"clients cut off broker {b}")
            self.wait_schedule()
        self.applied.append(w.kind)

    def move_coordinator(self, view: dict, key: str, group: bool, broker: int) -> None:
        """Move the leadership of the key's internal partition to another replica: a
        reassignment that reorders its replicas, then a preferred-leader election."""
        from emulator.coordinators.runtime.placement import partition_for
        topic = "__consumer_offsets" if group else "__transaction_state"
        parts = view["topics"][topic]["partitions"]
        index = partition_for(key, len(parts))
        [p] = [x for x in parts if x["partition"] == index]
        others = [r for r in p["replicas"] if r != broker]
        replicas = [*others, broker]
        self.emu.control("POST", "/reassignments", {"topic": topic, "partition": index,
                                                    "replicas": replicas})
        self.emu.control("POST", "/elections/preferred", {"topic": topic,
                                                          "partitions": [index]})
        self.log.event(f"coordinator of {key} moved off broker {broker}: {topic}-{index} "
                       f"replicas {replicas}, preferred leader elected")

    def heal(self) -> None:
        """Undo anything still in force: every broker up, no fault left."""
        self.emu.control("DELETE", "/faults")
        for b in self.cluster()["brokers"]:
            if not b["alive"]:
                self.emu.operation("start_broker", broker=b["id"])
        self.log.event("every fault cleared, every broker up")


# ---- the log as the broker holds it (printed on a violation) ---------------------------
def dump_log(emu: EmulatorProcess, topic: str, partitions: int) -> list[str]:
    """Every batch of ``topic`` as its leader holds it, read uncommitted over a raw
    Fetch: offsets, producer id and epoch, transactional or control (COMMIT/ABORT), the
    attempts its records name; and the partition's HW, LSO and aborted transactions."""
    view = emu.control("GET", "/cluster")
    out = []
    for part in view["topics"][topic]["partitions"]:
        p, leader = part["partition"], part["leader"]
        offset, seen_end = 0, False
        with BlockingConnection.connect("127.0.0.1", emu.port + leader - 1,
                                        client_id="history-dump", timeout=10) as c:
            while not seen_end:
                r = c.call(1, 12, {"max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 24,
                                   "isolation_level": 0, "session_id": 0,
                                   "session_epoch": -1, "rack_id": "", "topics": [
                                       {"topic": topic, "partitions": [
                                           {"partition": p, "fetch_offset": offset,
                                            "partition_max_bytes": 1 << 24}]}],
                                   "forgotten_topics_data": []})
                pr = r["responses"][0]["partitions"][0]
                if offset == 0:
                    out.append(f"{topic}-{p} leader {leader} error {pr['error_code']} hw "
                               f"{pr['high_watermark']} lso {pr['last_stable_offset']} "
                               f"aborted {pr['aborted_transactions']}")
                data = bytes(pr["records"] or b"")
                batches = iter_batches(data)
                if not batches:
                    break
                for b in batches:
                    h = read_header(b)
                    if h.is_control:
                        kind = "ABORT" if decode_records(b)[0].key[2:4] == b"\0\0" else "COMMIT"
                        what = f"control {kind}"
                    else:
                        names = sorted({json.loads(r.value)["attempt"]
                                        for r in decode_records(b) if r.value})
                        what = (f"{'txn ' if h.is_transactional else ''}{h.record_count} "
                                f"records of {','.join(names)}")
                    out.append(f"  {h.base_offset}-{h.last_offset} pid {h.producer_id} "
                               f"epoch {h.producer_epoch} leader epoch "
                               f"{h.partition_leader_epoch}: {what}")
                    offset = h.last_offset + 1
                seen_end = offset >= pr["high_watermark"]
    return out


# ---- one run ---------------------------------------------------------------------------
@dataclass
class Result:
    seed: int
    windows: list[Window]
    report: Report
    schedule: list[str]
    seconds: float
    inputs: int
    app_sessions: int
    notes: list[str]
    emulator_errors: int = 0

    def text(self) -> str:
        lines = [f"seed {self.seed}: {self.report.summary()} in {self.seconds:.1f} s; faults: "
                 + ", ".join(f"{w.kind}@{w.at_s}s/{w.duration_s}s" for w in self.windows)]
        if not self.report.ok:
            lines.append(self.report.text())
            lines.append("the fault schedule run (times since the start):")
            lines.extend("  " + ln for ln in self.schedule)
            lines.append("what happened (times since the start):")
            lines.extend(f"  {e.at_ms:7.0f} ms {e.what}" for e in self.report.history.events)
        lines.extend(self.notes)
        return "\n".join(lines)


def _read_all(bootstrap: str, topic: str, partitions: int, isolation: str,
              timeout: float = 60) -> list:
    """Every record up to each partition's end (for read_committed: its last stable
    offset, which is its end once no transaction is open)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": f"history-reader-{topic}",
                  "isolation.level": isolation, "enable.auto.commit": False,
                  "enable.partition.eof": True, **BACKOFF})
    # the high watermarks, asked read_uncommitted: a read_committed consumer's own
    # watermarks are last stable offsets, and an open transaction would hold them back
    # unseen (what it holds back would look lost)
    probe = Consumer({"bootstrap.servers": bootstrap, "group.id": "history-probe",
                      "isolation.level": "read_uncommitted", **BACKOFF})
    ends = {p: probe.get_watermark_offsets(TopicPartition(topic, p), 15)[1]
            for p in range(partitions)}
    probe.close()
    c.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out = []
    eof: set[int] = set()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            m = c.poll(0.2)
            if m is None:
                continue
            if m.error() is not None:
                if m.error().code() != KafkaError._PARTITION_EOF:
                    raise KafkaException(m.error())
                pos = c.position([TopicPartition(topic, m.partition())])[0].offset
                if pos >= ends[m.partition()]:
                    eof.add(m.partition())
                if len(eof) == partitions:
                    return out
                continue
            out.append(m)
        raise AssertionError(f"{topic}: did not reach the end of every partition "
                             f"(ends {ends}, at the end: {sorted(eof)})")
    finally:
        c.close()


def fence(bootstrap: str, transactional_id: str) -> None:
    """init_transactions with ``transactional_id``: the coordinator bumps its epoch and
    completes whatever transaction the previous producer left open."""
    p = Producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                  **BACKOFF})
    for _ in range(10):
        try:
            p.init_transactions(15)
            return
        except KafkaException as e:
            if not e.args[0].retriable():
                raise
    raise RuntimeError(f"could not fence {transactional_id}")


def _committed_caught_up(bootstrap: str, ends: dict[int, int]) -> bool:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": GROUP, **BACKOFF})
    try:
        got = c.committed([TopicPartition(IN, p) for p in ends], 10)
        return all(tp.offset >= ends[tp.partition] for tp in got)
    except KafkaException:
        return False
    finally:
        c.close()


def run(seed: int, workdir: Path, faults: int = 4, rate: int = 150) -> Result:
    """One seed: the cluster, the pipeline, the seed's ``faults`` faults (the input
    written at ``rate`` records/s meanwhile), then the check."""
    t_start = time.monotonic()
    windows = plan(seed, faults)
    emu = EmulatorProcess(workdir / "data", workdir / "emulator.log")
    emu.start()
    log = Log()
    notes: list[str] = []
    apps: list[App] = []
    feeder: InputProducer | None = None
    try:
        admin = AdminClient({"bootstrap.servers": emu.bootstrap, "logger": _QUIET})
        futures = admin.create_topics([
            NewTopic(IN, IN_PARTITIONS, 3, config={"min.insync.replicas": "2"}),
            NewTopic(OUT, OUT_PARTITIONS, 3, config={"min.insync.replicas": "2"})])
        for f in futures.values():
            f.result(30)
        feeder = InputProducer(emu.bootstrap, rate)
        feeder.start()
        apps = [App(a, emu.bootstrap, log) for a in APPS]
        for a in apps:
            a.start()
        faults = Faults(emu, log)
        log.t0 = time.monotonic()
        for w in windows:
            delay = log.t0 + w.at_s - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            faults.run_window(w)
        faults.heal()
        feeder.stop.set()
        feeder.join(150)
        log.event(f"input done: {feeder.sent} sent, {feeder.acked} acked, "
                  f"{feeder.failed} failed")
        probe = Consumer({"bootstrap.servers": emu.bootstrap, "group.id": "history-probe"})
        ends = {p: probe.get_watermark_offsets(TopicPartition(IN, p), 15)[1]
                for p in range(IN_PARTITIONS)}
        probe.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _committed_caught_up(emu.bootstrap, ends):
            time.sleep(0.3)
        else:
            if time.monotonic() >= deadline:
                notes.append("the application did not catch up within 60 s (its threads' "
                             f"stacks: {workdir / 'stacks.txt'})")
                with open(workdir / "stacks.txt", "w") as out:
                    faulthandler.dump_traceback(out, all_threads=True)
        for a in apps:
            a.stop.set()
        for a in apps:
            a.join(60)
        log.event("application stopped")
        for app in APPS:  # as its next start would: fence the old producer, abort its
            fence(emu.bootstrap, f"eos-{app}")  # open transaction (one left hung, say)
        log.event("every transactional id fenced: no transaction left open")
        inputs = [InputRecord(m.key().decode(), m.partition(), m.offset())
                  for m in _read_all(emu.bootstrap, IN, IN_PARTITIONS, "read_uncommitted")]
        outputs = []
        for m in _read_all(emu.bootstrap, OUT, OUT_PARTITIONS, "read_committed"):
            v = json.loads(m.value())
            outputs.append(OutputRecord(v["id"], v["attempt"], m.partition(), m.offset()))
        history = History(inputs, list(log.attempts), outputs, list(log.events))
        report = check(history)
        if not report.ok:
            try:
                (workdir / "out-log.txt").write_text("\n".join(dump_log(emu, OUT,
                                                                       OUT_PARTITIONS)))
                notes.append(f"the output log as the brokers hold it: {workdir / 'out-log.txt'}")
            except Exception as e:  # noqa: BLE001 - a diagnosis, not the check
                notes.append(f"could not dump the output log: {e!r}")
        (workdir / "history.json").write_text(json.dumps(
            {k: [vars(x) for x in getattr(history, k)]
             for k in ("inputs", "attempts", "outputs", "events")}))
        errors = [ln for ln in emu.log_path.read_text().splitlines()
                  if " ERROR " in ln or "Traceback" in ln]
        if errors:
            notes.append(f"the emulator logged {len(errors)} errors: " + " | ".join(errors[:5]))
        crashes = [c for a in apps for c in a.crashes]
        if crashes:
            notes.append(f"app sessions restarted {len(crashes)} times: "
                         + "; ".join(sorted(set(crashes)))[:600])
        return Result(seed, windows, report, faults.schedule_lines,
                      time.monotonic() - t_start, len(inputs),
                      sum(a.sessions for a in apps), notes, len(errors))
    finally:
        for a in apps:
            a.stop.set()
        if feeder is not None:
            feeder.stop.set()
        emu.kill(signal.SIGTERM)


