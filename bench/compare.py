"""The emulator side by side with Apache Kafka 4.x (KRaft), under the same load.

Starts Apache Kafka through the project's launcher (client_tests/kafka_cluster.py: jars
from Maven Central, a dedicated KRaft controller plus brokers; Kafka's perf tools from
client_tests/java/pom.xml), then for each system in turn: the emulator (3 virtual
brokers, one process), one Kafka broker, and optionally three, it measures

- start: from launching the process(es) to the first acknowledged produce;
- idle RSS after start, and the peak RSS under the produce and consume load;
- produce and consume throughput with confluent-kafka (1 KiB records, acks=all);
- the same with Kafka's own ProducerPerformance and ConsumerPerformance
  (kafka-producer-perf-test / kafka-consumer-perf-test);
- p50/p99 produce latency (acks=all) at a fixed moderate rate;

and prints one table with the emulator's figure divided by Kafka's and the target
(docs/scale.md), beside the CPU seconds each system's processes spent per record (a figure
a busy machine disturbs less than MB/s). Replication factor min(3, brokers) on each side:
3 on the emulator's default 3 brokers and on three Kafka nodes, 1 on one; the table's
header says what each side's topics really have (read back from the metadata) and
whether that is like for like. The emulator keeps its log in memory unless
``--emulator-data-dir`` puts it in files, as Kafka keeps its own.

``--runs N`` repeats everything N times, the systems interleaved run by run (emulator,
Kafka, emulator, Kafka, ...): each cell is then the median over the runs with its range,
and the emulator/Kafka ratio the median (with the range) of the ratios taken within each
run (bench/runs.py). A claim takes at least 3 runs on a quiet machine. ``--markdown
FILE`` also writes the table, the command and every run's figures there. Asserts
nothing: the machine is shared, figures are noisy.

    python bench/compare.py [--records 200000] [--kafka-nodes 1,3] [--kafka-version 4.4.0]
                            [--emulator-brokers 3] [--emulator-data-dir] [--runs 3]
                            [--markdown FILE]

Like for like, one broker each at replication factor 1, 3 runs:

    python bench/compare.py --emulator-brokers 1 --kafka-nodes 1 --runs 3 \
        --markdown compare-1broker.md
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from client_tests.kafka_cluster import DEFAULT_VERSION, KafkaCluster  # noqa: E402
from client_tests.kafka_cluster import ensure_jars as ensure_kafka_jars  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runs  # noqa: E402  (bench/runs.py: medians, ranges and per-run ratios)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOOLS_JARS = os.path.join(ROOT, "client_tests", "java", ".tools-jars")
KAFKA_VERSION = DEFAULT_VERSION
PARTITIONS = 3
JVM_OPTS = [  # as Kafka's bin/kafka-server-start.sh and kafka-run-class.sh set them
    "-Xmx1G", "-Xms1G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:MaxInlineLevel=15", "-Djava.awt.headless=true",
]
TOOL_JVM_OPTS = ["-Xmx512M", "-Djava.awt.headless=true"]
LOG4J2 = """status = error
rootLogger.level = WARN
rootLogger.appenderRef.stdout.ref = STDOUT
appender.stdout.type = Console
appender.stdout.name = STDOUT
appender.stdout.layout.type = PatternLayout
appender.stdout.layout.pattern = [%d] %p %m (%c)%n
"""


# ---- helpers ----------------------------------------------------------------------------
def ensure_jars() -> None:
    """Kafka's broker (the launcher's pom) and, for the perf tools, the Java client tests'
    tools classpath (client_tests/java/pom.xml, scripts/setup.d/30-java.sh)."""
    ensure_kafka_jars(KAFKA_VERSION)
    if not glob.glob(os.path.join(TOOLS_JARS, "kafka-tools-[0-9]*.jar")):
        print("installing Kafka's tools (scripts/setup.d/30-java.sh) ...", flush=True)
        subprocess.run(["bash", os.path.join(ROOT, "scripts", "setup.d", "30-java.sh")],
                       check=True)


def free_base_port(n: int) -> int:
    """n consecutive free ports (the emulator's brokers listen on BASE+i)."""
    for base in range(21000, 60000, 101):
        try:
            socks = []
            for i in range(n):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", base + i))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free ports")


def rss_mb(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except FileNotFoundError:
            pass
    return total / 1024


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds the processes have used (all their threads)."""
    total = 0.0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (FileNotFoundError, IndexError, ValueError):
            pass
    return total


class PeakRss:
    """Samples the summed RSS of some processes every 100 ms in a thread."""

    def __init__(self, pids: list[int]) -> None:
        self.pids, self.peak, self._stop = pids, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_mb(self.pids))
            self._stop.wait(0.1)

    def __enter__(self) -> PeakRss:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_mb(self.pids))


def wait_first_ack(bootstrap: str, t0: float, timeout: float = 120) -> float:
    """Seconds from t0 until a produce (acks=all, auto-created topic) is acknowledged."""
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0,
                  "socket.connection.setup.timeout.ms": 1000, "reconnect.backoff.ms": 5,
                  "reconnect.backoff.max.ms": 20, "topic.metadata.refresh.interval.ms": 10,
                  "retry.backoff.ms": 10, "retry.backoff.max.ms": 20,
                  "log_level": 0})
    acked: list[float] = []

    def delivered(err: KafkaError | None, _msg: Message) -> None:
        if err is None:
            acked.append(time.perf_counter())

    while not acked:
        try:
            p.produce("bench-start", b"x", on_delivery=delivered)
        except (BufferError, KafkaException):  # e.g. the topic is not created yet
            time.sleep(0.01)
        p.flush(0.02)
        if time.perf_counter() - t0 > timeout:
            raise RuntimeError(f"no acknowledged produce within {timeout} s")
    return acked[0] - t0


@dataclass
class System:
    name: str
    bootstrap: str
    rf: int
    procs: list[subprocess.Popen]
    start_s: float
    notes: list[str] = field(default_factory=list)
    kafka: KafkaCluster | None = None

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def stop(self) -> None:
        if self.kafka is not None:
            self.kafka.stop()
            return
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)


# ---- the systems ---------------------------------------------------------------------------
def start_emulator(brokers: int, data_dir: str | None = None) -> System:
    """The emulator as one process; its log in memory (its default) or, with
    ``data_dir``, in files there as Kafka keeps its own (docs/storage.md)."""
    base = free_base_port(brokers)
    t0 = time.perf_counter()
    disk = ["--data-dir", data_dir] if data_dir else []
    proc = subprocess.Popen(
        [sys.executable, "-m", "emulator", "--brokers", str(brokers), "--port", str(base),
         "--log-level", "WARNING", *disk], cwd=ROOT, stdout=subprocess.DEVNULL)
    start = wait_first_ack(f"127.0.0.1:{base}", t0)
    bootstrap = ",".join(f"127.0.0.1:{base + i}" for i in range(brokers))
    from emulator.log import IMPLEMENTATION

    name = f"emulator ({brokers} broker{'s' if brokers > 1 else ''})"
    return System(name, bootstrap, min(3, brokers), [proc], start,
                  [f"log core: {IMPLEMENTATION}"])


def start_kafka(nodes: int, workdir: str) -> System:
    """Apache Kafka through the project's launcher (client_tests/kafka_cluster.py): a
    dedicated KRaft controller and ``nodes`` brokers, with Kafka's own JVM options."""
    rf = min(3, nodes)
    cluster = KafkaCluster(
        brokers=nodes, version=KAFKA_VERSION, workdir=workdir, kafka_defaults=True,
        jvm_opts=JVM_OPTS, broker_heap="1G", controller_heap="512m",
        broker_config={
            "num.partitions": 1, "default.replication.factor": rf,
            "offsets.topic.replication.factor": rf, "offsets.topic.num.partitions": 50,
            "transaction.state.log.replication.factor": rf,
            "transaction.state.log.min.isr": min(2, rf),
            "share.coordinator.state.topic.replication.factor": rf,
            "share.coordinator.state.topic.min.isr": min(2, rf),
            "group.initial.rebalance.delay.ms": 0})
    t0 = time.perf_counter()
    cluster.start()
    try:
        start = wait_first_ack(cluster.bootstrap_servers, t0)
    except BaseException:
        cluster.stop()
        raise
    procs = [n.proc for n in [cluster.controller, *cluster.brokers.values()] if n and n.proc]
    name = f"Kafka {KAFKA_VERSION} ({nodes} broker{'s' if nodes > 1 else ''} + controller)"
    return System(name, cluster.bootstrap_servers, rf, procs, start,
                  ["start includes kafka-storage format of every node"], cluster)


# ---- the load ---------------------------------------------------------------------------------
def create_topics(s: System, names: list[tuple[str, int]]) -> None:
    admin = AdminClient({"bootstrap.servers": s.bootstrap})
    fs = admin.create_topics([NewTopic(n, p, s.rf) for n, p in names])
    for f in fs.values():
        f.result(60)
    time.sleep(0.5)  # let every broker learn the new leaders


def replication_factors(s: System, topics: list[str]) -> set[int]:
    """The replica counts the cluster's metadata shows for the topics' partitions: what
    each side really runs at, read back rather than taken from what was asked."""
    md = AdminClient({"bootstrap.servers": s.bootstrap}).list_topics(timeout=30)
    return {len(p.replicas) for t in topics for p in md.topics[t].partitions.values()}


def confluent_produce(s: System, topic: str, records: int) -> float:
    value = os.urandom(1024)
    p = Producer({"bootstrap.servers": s.bootstrap, "acks": "all", "linger.ms": 5,
                  "batch.size": 1 << 20, "queue.buffering.max.messages": 1_000_000,
                  "queue.buffering.max.kbytes": 1 << 20})
    errors: list[str] = []

    def report(err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            errors.append(str(err))

    t0 = time.perf_counter()
    for i in range(records):
        while True:
            try:
                p.produce(topic, value, partition=i % PARTITIONS, on_delivery=report)
                break
            except BufferError:
                p.poll(0.01)
        if i % 10000 == 0:
            p.poll(0)
    left = p.flush(300)
    dt = time.perf_counter() - t0
    if left or errors:
        raise RuntimeError(f"{left} undelivered, errors: {errors[:3]}")
    return dt


def confluent_consume(s: System, topic: str, records: int) -> float:
    c = Consumer({"bootstrap.servers": s.bootstrap, "group.id": "bench-confluent",
                  "enable.auto.commit": False, "fetch.max.bytes": 50 << 20,
                  "max.partition.fetch.bytes": 10 << 20})
    c.assign([TopicPartition(topic, i, 0) for i in range(PARTITIONS)])
    n = 0
    t0 = time.perf_counter()
    while n < records and time.perf_counter() - t0 < 300:
        for m in c.consume(10000, 1.0):
            if m.error() is None:
                n += 1
    dt = time.perf_counter() - t0
    c.close()
    if n < records:
        raise RuntimeError(f"consumed {n} of {records}")
    return dt


def java_tool(main: str, args: list[str], timeout: float = 600) -> str:
    cmd = ["java", *TOOL_JVM_OPTS, f"-Dlog4j2.configurationFile={TOOL_LOG4J}", "-cp",
           os.path.join(TOOLS_JARS, "*"), main, *args]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        tail = (r.stderr or r.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"{main.rsplit('.', 1)[-1]} exited {r.returncode}: {' | '.join(tail)}")
    return r.stdout


TOOL_LOG4J = ""


def producer_perf(s: System, topic: str, records: int) -> tuple[float, float]:
    """(MB/s, records/s) of Kafka's ProducerPerformance at full speed."""
    out = java_tool("org.apache.kafka.tools.ProducerPerformance", [
        "--topic", topic, "--num-records", str(records), "--record-size", "1024",
        "--throughput", "-1", "--producer-props", f"bootstrap.servers={s.bootstrap}",
        "acks=all"])
    m = re.findall(r"([\d.]+) records/sec \(([\d.]+) MB/sec\)", out)
    if not m:
        raise RuntimeError(f"unexpected ProducerPerformance output: {out[-300:]}")
    rec, mb = m[-1]
    return float(mb) * 1024 * 1024 / 1e6, float(rec)


def consumer_perf(s: System, topic: str, records: int,
                  timeout_ms: int = 60000) -> tuple[float, float]:
    """(MB/s, records/s) of Kafka's ConsumerPerformance (group consumer, from the start;
    records/s is its nMsg.sec, counted from the tool's start, group join included: what a
    user waits for, where fetch.nMsg.sec would be the fetching alone). ``timeout_ms``:
    the longest the tool waits for a record."""
    row = consumer_perf_row(s, topic, records, timeout_ms)
    return float(row["MB.sec"]) * 1024 * 1024 / 1e6, float(row["nMsg.sec"])


def consumer_perf_row(s: System, topic: str, records: int,
                      timeout_ms: int = 60000) -> dict[str, str]:
    """ConsumerPerformance's result line, by its header's names (nMsg.sec,
    rebalance.time.ms, fetch.nMsg.sec, ...)."""
    out = java_tool("org.apache.kafka.tools.ConsumerPerformance", [
        "--bootstrap-server", s.bootstrap, "--topic", topic, "--messages", str(records),
        "--timeout", str(timeout_ms), "--group", f"perf-{uuid.uuid4().hex[:8]}"])
    lines = [ln for ln in out.splitlines() if ln.strip()]
    for i, ln in enumerate(lines):
        if ln.startswith("start.time"):
            head = [h.strip() for h in ln.split(",")]
            vals = [v.strip() for v in lines[i + 1].split(",")]
            row = dict(zip(head, vals, strict=False))
            if int(row["data.consumed.in.nMsg"]) < records:
                raise RuntimeError(f"ConsumerPerformance read {row['data.consumed.in.nMsg']}")
            return row
    raise RuntimeError(f"unexpected ConsumerPerformance output: {out[-300:]}")


def latency(s: System, topic: str, count: int, rate: float) -> tuple[float, float]:
    """p50/p99 ms of acks=all produces sent one by one at ``rate`` records/s."""
    p = Producer({"bootstrap.servers": s.bootstrap, "acks": "all", "linger.ms": 0})
    value = os.urandom(1024)
    lats: list[float] = []

    def since(sent: float) -> Callable[[KafkaError | None, Message], None]:
        def delivered(err: KafkaError | None, _msg: Message) -> None:
            if err is None:
                lats.append(time.perf_counter() - sent)
        return delivered

    for _ in range(50):  # warm up connections and metadata
        p.produce(topic, value)
    p.flush(30)
    t0 = time.perf_counter()
    for i in range(count):
        due = t0 + i / rate
        while (wait := due - time.perf_counter()) > 0:
            p.poll(wait)
        p.produce(topic, value, on_delivery=since(time.perf_counter()))
        p.poll(0)
    p.flush(60)
    lats.sort()
    if len(lats) < count:
        raise RuntimeError(f"{count - len(lats)} latency records failed")
    return statistics.median(lats) * 1000, lats[int(len(lats) * 0.99)] * 1000


def measure(s: System, args: argparse.Namespace) -> dict[str, float | str]:
    """One run's figures for one system; a throughput's server CPU per record is beside
    it (``<key>_cpu``, microseconds of every process of the system), a figure that holds
    when a shared machine's other load steals wall time."""
    r: dict[str, float | str] = {"start_s": s.start_s}
    time.sleep(args.settle)
    r["idle_rss"] = rss_mb(s.pids)
    topics = [("bench", PARTITIONS), ("perf", PARTITIONS), ("lat", 1)]
    create_topics(s, topics)
    rfs = replication_factors(s, [t for t, _ in topics])
    r["rf"] = float(rfs.pop()) if len(rfs) == 1 else f"mixed {sorted(rfs)}"
    n = args.records
    mb = n * 1024 / 1e6
    steps: list[tuple[str, Callable[[], float | tuple[float, float]]]] = [
        ("confluent_produce", lambda: confluent_produce(s, "bench", n)),
        ("confluent_consume", lambda: confluent_consume(s, "bench", n)),
        ("perf_produce", lambda: producer_perf(s, "perf", n)),
        ("perf_consume", lambda: consumer_perf(s, "perf", n)),
    ]
    with PeakRss(s.pids) as peak:
        for key, fn in steps:
            print(f"  {s.name}: {key} ...", flush=True)
            cpu0 = cpu_seconds(s.pids)
            try:
                v = fn()
                r[key] = mb / v if isinstance(v, float) else v[0]
                r[f"{key}_cpu"] = (cpu_seconds(s.pids) - cpu0) / n * 1e6
            except (RuntimeError, KafkaException, subprocess.TimeoutExpired) as e:
                r[key] = f"failed: {e}"[:60]
                s.notes.append(f"{key}: {e}")
    r["load_rss"] = peak.peak
    print(f"  {s.name}: latency ...", flush=True)
    try:
        r["p50"], r["p99"] = latency(s, "lat", args.latency_records, args.latency_rate)
    except (RuntimeError, KafkaException) as e:
        r["p50"] = r["p99"] = "failed"
        s.notes.append(f"latency: {e}")
    return r


# ---- the table -----------------------------------------------------------------------------
ROWS = [  # key, label, unit, format, target for emulator / Kafka ("<=" or ">=" ratio)
    ("start_s", "start to first acked produce", "s", "{:.2f}", ("<=", 0.1)),
    ("idle_rss", "idle RSS", "MB", "{:.0f}", ("<=", 0.2)),
    ("load_rss", "peak RSS under load", "MB", "{:.0f}", None),
    ("confluent_produce", "produce, confluent-kafka", "MB/s", "{:.1f}", (">=", 1.0)),
    ("confluent_consume", "consume, confluent-kafka", "MB/s", "{:.1f}", (">=", 1.0)),
    ("perf_produce", "produce, ProducerPerformance", "MB/s", "{:.1f}", (">=", 1.0)),
    ("perf_consume", "consume, ConsumerPerformance", "MB/s", "{:.1f}", (">=", 1.0)),
    ("p50", "produce latency p50 (acks=all)", "ms", "{:.2f}", None),
    ("p99", "produce latency p99 (acks=all)", "ms", "{:.2f}", None),
    # what the system's processes spent per record: steadier than MB/s on a busy machine
    ("confluent_produce_cpu", "server CPU, confluent-kafka produce", "us/rec", "{:.1f}", None),
    ("confluent_consume_cpu", "server CPU, confluent-kafka consume", "us/rec", "{:.1f}", None),
    ("perf_produce_cpu", "server CPU, ProducerPerformance", "us/rec", "{:.1f}", None),
    ("perf_consume_cpu", "server CPU, ConsumerPerformance", "us/rec", "{:.1f}", None),
]


Row = dict[str, float | str]


def is_emulator(r: runs.Row) -> bool:
    return str(r["system"]).startswith("emulator")


def tools_version() -> str:
    """The version of the perf tools' jars (client_tests/java/pom.xml's, which may
    differ from the broker's ``--kafka-version``)."""
    jars = glob.glob(os.path.join(TOOLS_JARS, "kafka-tools-[0-9]*.jar"))
    return os.path.basename(jars[0])[len("kafka-tools-"):-len(".jar")] if jars else "?"


def named(name: str) -> Callable[[runs.Row], bool]:
    return lambda r: r["system"] == name


def summary(rows: list[Row], args: argparse.Namespace) -> list[str]:
    """The table over the runs (markdown): each system's median (min-max) of every
    figure, then for each Kafka cluster the emulator/Kafka ratio as the median (min-max)
    of the per-run ratios and the target's verdict on that median, with how many runs
    met it. Its header says each side's replication factor as read back from the
    topics' metadata and whether the comparison is like for like."""
    names = list(dict.fromkeys(str(r["system"]) for r in rows))
    emu, kafkas = names[0], names[1:]
    n_runs = len({r["run"] for r in rows})
    rf = {name: sorted({cell(r.get("rf", "?"), "{:.0f}") for r in rows if r["system"] == name})
          for name in names}

    def versus(name: str) -> str:
        """Whether a Kafka cluster runs at the emulator's one replication factor."""
        if name == emu:
            return ""
        same = rf[name] == rf[emu] and len(rf[name]) == 1
        return " (like for like)" if same else " (NOT like for like)"

    lines = [
        f"1 KiB records, acks=all, {args.records:,} records, {PARTITIONS} partitions, latency "
        f"at {args.latency_rate:.0f} records/s; {n_runs} run(s), the systems interleaved run "
        "by run; each cell: median (min-max) over the runs; emulator/Kafka: the median "
        "(min-max) of the per-run ratios, the target judged on that median (runs meeting it).",
        "replication factor, read back from the topics' metadata: " + ", ".join(
            f"{name} RF {'/'.join(rf[name])}{versus(name)}" for name in names)
        + "; the emulator's log "
        + ("in files (--data-dir)" if args.emulator_data_dir else "in memory")
        + f", Kafka's in files; Kafka's perf tools {tools_version()}",
        "",
        "| metric | unit | " + " | ".join(
            [emu] + [f"{k} | emulator/Kafka | target" for k in kafkas]) + " |",
        "|---|---|---:|" + "---:|---:|---|" * len(kafkas),
    ]
    for key, label, unit, fmt, target in ROWS:
        line = f"| {label} | {unit} | " + runs.median_range(
            runs.numbers([r for r in rows if r["system"] == emu], key), fmt)
        for k in kafkas:
            ratios = runs.per_run_ratios(rows, key, is_emulator, named(k))
            goal = ""
            if target and ratios:
                op, bound = target
                met = [x <= bound if op == "<=" else x >= bound for x in ratios]
                mid = statistics.median(ratios)
                ok = mid <= bound if op == "<=" else mid >= bound
                goal = f"{op}{bound:g} {'ok' if ok else 'NO'} ({sum(met)}/{len(met)})"
            line += (" | " + runs.median_range(
                runs.numbers([r for r in rows if r["system"] == k], key), fmt)
                + " | " + runs.median_range(ratios, "{:.2f}") + " | " + goal)
        lines.append(line + " |")
    return lines


def every_run(rows: list[Row]) -> list[str]:
    """Every run's figures (markdown), a column per run and system in the order they ran,
    with each system's wall time from its launch to its stop."""
    cols = [f"run {r['run']}: {r['system']}" for r in rows]
    lines = ["| metric | unit | " + " | ".join(cols) + " |",
             "|---|---|" + "---:|" * len(cols)]
    for key, label, unit, fmt, _ in [*ROWS, ("rf", "replication factor", "", "{:.0f}", None),
                                     ("seconds", "wall time, launch to stop", "s", "{:.0f}",
                                      None)]:
        lines.append(f"| {label} | {unit} | "
                     + " | ".join(cell(r.get(key, "-"), fmt) for r in rows) + " |")
    return lines


def cell(v: object, fmt: str) -> str:
    return fmt.format(v) if isinstance(v, float | int) else str(v)[:30]


def platform_line() -> str:
    import platform

    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")),
                       "")
    except OSError:
        pass
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (f"{cpu}, Linux {platform.release()}, Python {platform.python_version()}, "
            f"{java.splitlines()[0] if java else 'java ?'}; load average now {load}")


def main() -> None:
    global TOOL_LOG4J, KAFKA_VERSION
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--records", type=int, default=200_000)
    ap.add_argument("--latency-records", type=int, default=3000)
    ap.add_argument("--latency-rate", type=float, default=500.0)
    ap.add_argument("--kafka-nodes", default="1,3",
                    help="Kafka cluster sizes to run (replication factor min(3, n))")
    ap.add_argument("--kafka-version", default=DEFAULT_VERSION)
    ap.add_argument("--emulator-brokers", type=int, default=3,
                    help="the emulator's brokers (replication factor min(3, n))")
    ap.add_argument("--emulator-data-dir", action="store_true",
                    help="the emulator keeps its log in files (--data-dir), as Kafka does, "
                         "rather than in memory")
    ap.add_argument("--settle", type=float, default=3.0, help="seconds before idle RSS")
    ap.add_argument("--runs", type=int, default=1,
                    help="repeat everything, the systems interleaved run by run")
    ap.add_argument("--markdown", metavar="FILE",
                    help="also write the table and every run's figures there")
    args = ap.parse_args()
    KAFKA_VERSION = args.kafka_version
    ensure_jars()
    workdir = tempfile.mkdtemp(prefix="kafka-bench-")
    TOOL_LOG4J = os.path.join(workdir, "tools-log4j2.properties")
    with open(TOOL_LOG4J, "w") as f:
        f.write(LOG4J2.replace("WARN", "ERROR"))
    rows: list[Row] = []
    notes: dict[str, list[int]] = {}
    plans = [("emulator", args.emulator_brokers)] + [
        ("kafka", int(n)) for n in args.kafka_nodes.split(",") if n.strip()]
    try:
        for run in range(1, args.runs + 1):
            for kind, n in plans:
                print(f"run {run}/{args.runs}: starting {kind} ({n}) ...", flush=True)
                t0 = time.perf_counter()
                d = os.path.join(workdir, f"{kind}-{n}-run{run}")
                try:
                    os.makedirs(d)
                    if kind == "emulator":
                        s = start_emulator(n, d if args.emulator_data_dir else None)
                    else:
                        s = start_kafka(n, d)
                except (RuntimeError, KafkaException, subprocess.CalledProcessError) as e:
                    print(f"  {kind} ({n}) did not start: {e}", flush=True)
                    if kind == "emulator":
                        raise
                    continue
                try:
                    r = measure(s, args)
                finally:
                    s.stop()
                    shutil.rmtree(d, ignore_errors=True)  # a run's log: up to GBs
                r.update(run=run, system=s.name, seconds=time.perf_counter() - t0)
                rows.append(r)
                for note in s.notes:
                    notes.setdefault(f"{s.name}: {note}", []).append(run)
                print(f"  {s.name}: run {run} took {r['seconds']:.0f} s", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    machine = (f"machine: {os.cpu_count()} CPUs, "
               f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
               f"{platform_line()}")
    note_lines = [f"- note, {text} (run{'s' if len(rs) > 1 else ''} "
                  f"{', '.join(map(str, rs))})" for text, rs in notes.items()]
    table = summary(rows, args)
    print()
    print(machine)
    print("\n".join(table))
    print("\n".join(note_lines))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(f"    python bench/compare.py {' '.join(sys.argv[1:])}\n\n"
                    f"{machine}; {time.strftime('%Y-%m-%d %H:%M %Z')}\n\n"
                    + "\n".join(table) + "\n\n" + "\n".join(note_lines)
                    + "\n\nEvery run:\n\n" + "\n".join(every_run(rows)) + "\n")
        print(f"written to {args.markdown}")


if __name__ == "__main__":
    main()
