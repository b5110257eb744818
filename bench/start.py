"""Start-up beside kfake and Kafka: from process start to the first acknowledged produce,
and the idle RSS once started.

Each system is started as its own process(es), the same way for all, on the default
PLAINTEXT listener, and a confluent-kafka (librdkafka) producer is created at the moment
the process is launched; it retries every few ms until a broker answers, then sends one
record (acks=all) to a topic nobody created (auto-created, one partition) until one is
acknowledged. Ports are below the ephemeral range, which a client polling a port nobody
listens on yet could be handed as its own source port (a connection to itself). The figures, each the median over ``--runs`` runs with the systems
interleaved run by run (bench/runs.py):

- ``ready line``: the process printed its ready line (the emulator's "kafka-emulator
  ready", kfake's own); Kafka prints none;
- ``first ack``: the first acknowledged produce, counted from just before the launch
  (Kafka's client starts once the launcher sees its brokers registered: see kafka());
- ``CPU to the ack``: user and system CPU time the process(es) had used at that ack
  (clock ticks, 10 ms): on a busy machine steadier than the wall clock;
- ``idle RSS``: VmRSS of the process(es) ``--idle`` seconds after that ack, the producer
  gone (Kafka: its controller and brokers summed).

The systems: the emulator (``kafka-emulator``, as a user runs it), franz-go's kfake
(github.com/twmb/franz-go/pkg/kfake, from the Go module proxy, started by the tiny main in
bench/kfake/, built here on demand with ``go build``), Apache Kafka 4.4 (a KRaft
controller plus brokers through client_tests/kafka_cluster.py, storage format included,
Kafka's own JVM options as bench/compare.py starts it), and the Docker image
(kafka-emulator:latest, scripts/setup.d/50-docker.sh; skipped with the reason when no
engine answers or the image is absent; timed from ``docker start`` of a created
container, which also runs the image's control plane and schema registry). Each for
every ``--brokers`` count (3, the CLI's default, and 1). Asserts nothing; the target
(0.15 s, 30 MB) is in docs/scale.md.

    python bench/start.py [--runs 7] [--brokers 3,1] [--no-kafka] [--no-image]
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from confluent_kafka import KafkaError, KafkaException, Message, Producer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)
from compare import JVM_OPTS, cpu_seconds, rss_mb  # noqa: E402

from client_tests.kafka_cluster import DEFAULT_VERSION, KafkaCluster  # noqa: E402
from client_tests.kafka_cluster import ensure_jars as ensure_kafka_jars  # noqa: E402

KFAKE_DIR = os.path.join(HERE, "kfake")
KFAKE_BIN = os.path.join(KFAKE_DIR, ".bin", "kfake-server")
IMAGE = os.environ.get("KAFKA_EMULATOR_IMAGE", "kafka-emulator:latest")
TOPIC = "bench-start"


@dataclass
class Sample:
    ready_s: float | None
    ack_s: float | None
    rss_mb: float | None
    cpu_s: float | None = None  # CPU the process(es) used up to the first ack


@dataclass
class Row:
    name: str
    samples: list[Sample] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    failed: str | None = None


def free_base_port(n: int) -> int:
    """``n`` consecutive free ports below the ephemeral range (see the module's doc)."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    for base in range(20000 + os.getpid() % 997, low - n, 13):
        socks: list[socket.socket] = []
        try:
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
    raise RuntimeError("no free ports below the ephemeral range")


# ---- the client --------------------------------------------------------------------------
def first_ack(bootstrap: str, t0: float, timeout: float = 120,
              gone: Callable[[], str | None] = lambda: None) -> float:
    """Seconds from ``t0`` until a record (acks=all) to an auto-created topic is
    acknowledged. The producer is made before this is called for every system alike; its
    reconnect and retry backoffs are a few ms, so it finds a listener within ~5 ms of
    its opening and asks again for the topic's leader within ~10 ms. ``gone`` says why
    the system can no longer answer (its process exited), else None: the wait stops
    there instead of running out its timeout."""
    p = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0,
                  "socket.connection.setup.timeout.ms": 1000, "reconnect.backoff.ms": 2,
                  "reconnect.backoff.max.ms": 5, "topic.metadata.refresh.interval.ms": 10,
                  "retry.backoff.ms": 5, "retry.backoff.max.ms": 10, "log_level": 0,
                  # No re-bootstrap: with no broker up yet (Kafka takes seconds) librdkafka
                  # would drop and re-add the bootstrap broker at every refresh, killing
                  # the connection in progress each time.
                  "metadata.recovery.strategy": "none"})
    acked: list[float] = []

    def delivered(err: KafkaError | None, _msg: Message) -> None:
        if err is None:
            acked.append(time.perf_counter())

    try:
        while not acked:
            try:
                p.produce(TOPIC, b"x", on_delivery=delivered)
            except (BufferError, KafkaException):
                time.sleep(0.005)
            p.flush(0.01)
            if time.perf_counter() - t0 > timeout:
                raise RuntimeError(f"no acknowledged produce within {timeout} s")
            if not acked and (why := gone()) is not None:
                raise RuntimeError(why)
        return acked[0] - t0
    finally:
        p.flush(1)
        del p


def idle_rss(pids: list[int], idle_s: float) -> float:
    time.sleep(idle_s)
    return rss_mb(pids)


def ready_reader(proc: subprocess.Popen, marker: str) -> Callable[[], float | None]:
    """Reads the process's stdout in a thread; the returned function gives the time
    (perf_counter) its ``marker`` line came, None if it never did."""
    seen: list[float] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            if marker in line and not seen:
                seen.append(time.perf_counter())
    threading.Thread(target=read, daemon=True).start()
    return lambda: seen[0] if seen else None


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


def run_process(cmd: list[str], brokers: int, base: int, marker: str,
                idle_s: float, cwd: str | None = None) -> Sample:
    bootstrap = ",".join(f"127.0.0.1:{base + i}" for i in range(brokers))
    env = None if cwd is None else {**os.environ, "PYTHONPATH": cwd}
    # stderr to a file, read only if the process exits before its first ack (a port
    # taken meanwhile by another program: its one line says so); a pipe nobody reads
    # would stall a process that logs.
    err = tempfile.TemporaryFile("w+")
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True,
                            cwd=cwd, env=env)

    def gone() -> str | None:
        if proc.poll() is None:
            return None
        err.seek(0)
        last = (err.read().strip().splitlines() or ["(nothing on stderr)"])[-1]
        return f"{cmd[0]} exited with {proc.returncode} before its first ack: {last}"

    try:
        ready = ready_reader(proc, marker)
        ack = first_ack(bootstrap, t0, gone=gone)
        cpu = cpu_seconds([proc.pid])
        rss = idle_rss([proc.pid], idle_s)
        r = ready()
        return Sample(None if r is None else r - t0, ack, rss, cpu)
    finally:
        stop(proc)
        err.close()


# ---- the systems -------------------------------------------------------------------------
def emulator_cmd() -> list[str]:
    """``kafka-emulator`` as pip installed it beside this interpreter (not a shim on PATH,
    such as pyenv's, which costs a shell and pyenv itself), else ``python -m emulator``."""
    exe = os.path.join(os.path.dirname(sys.executable), "kafka-emulator")
    return [exe] if os.access(exe, os.X_OK) else [sys.executable, "-m", "emulator"]


def compile_bytecode(root: str = ROOT) -> None:
    """Write the emulator's bytecode caches, as ``pip install`` does for an installed
    package. An editable install under PYTHONDONTWRITEBYTECODE=1 (set in this project's
    environment) has none, and every start would compile ~300 modules first."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(root, "emulator"),
                    os.path.join(root, "wire")], check=True, stdout=subprocess.DEVNULL)


def python_floor(brokers: int, idle_s: float) -> Sample:
    """The interpreter alone: ``python3 -c "print('ready')"`` to its line (site and .pth
    files included), the floor under any Python program's start here."""
    del brokers, idle_s
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", "print('ready')"], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "ready"
    return Sample(time.perf_counter() - t0, None, None)


def emulator(brokers: int, idle_s: float, root: str | None = None) -> Sample:
    """``root``: the emulator of another tree (``python -m emulator`` there), e.g. an
    older commit's ``git archive`` for a before/after figure."""
    base = free_base_port(brokers)
    cmd = emulator_cmd() if root is None else [sys.executable, "-m", "emulator"]
    # This tree's emulator even where the installed command would import another: an
    # editable install made elsewhere (its finder maps the package to that path) fails
    # every start here, each run then waiting out first_ack's timeout.
    return run_process([*cmd, "--brokers", str(brokers), "--port", str(base)],
                       brokers, base, "kafka-emulator ready", idle_s, cwd=root or ROOT)


def build_kfake() -> str:
    """bench/kfake/.bin/kfake-server, built when missing or older than its sources."""
    sources = [os.path.join(KFAKE_DIR, f) for f in ("main.go", "go.mod", "go.sum")]
    if os.path.exists(KFAKE_BIN) and all(
            os.path.getmtime(KFAKE_BIN) >= os.path.getmtime(s) for s in sources):
        return KFAKE_BIN
    if shutil.which("go") is None:
        raise RuntimeError("the Go toolchain (go) is not installed (scripts/setup.d/35-go.sh)")
    print("building bench/kfake (go build) ...", flush=True)
    subprocess.run(["go", "build", "-o", KFAKE_BIN, "."], cwd=KFAKE_DIR, check=True)
    return KFAKE_BIN


def kfake(brokers: int, idle_s: float) -> Sample:
    base = free_base_port(brokers)
    return run_process([KFAKE_BIN, "-brokers", str(brokers), "-port", str(base)],
                       brokers, base, "kfake ready", idle_s)


def kafka(brokers: int, idle_s: float) -> Sample:
    """Kafka 4.4 as bench/compare.py starts it (its storage format included). The
    producer starts once the launcher has seen every broker registered (it asks Metadata
    every 0.2 s): polling a port for the ~10 s a JVM takes to listen, a client's
    connect would in time be given that very port as its own source port (connected to
    itself, it holds the port Kafka then cannot bind), so the ack is counted from the
    launch but the client comes up to 0.2 s late, a few % of Kafka's figure."""
    rf = min(3, brokers)
    workdir = tempfile.mkdtemp(prefix="bench-start-kafka-")
    cluster = KafkaCluster(
        brokers=brokers, version=DEFAULT_VERSION, workdir=workdir, kafka_defaults=True,
        jvm_opts=JVM_OPTS, broker_heap="1G", controller_heap="512m",
        broker_config={"num.partitions": 1, "default.replication.factor": rf,
                       "offsets.topic.replication.factor": rf,
                       "transaction.state.log.replication.factor": rf,
                       "share.coordinator.state.topic.replication.factor": rf,
                       "group.initial.rebalance.delay.ms": 0})
    t0 = time.perf_counter()
    try:
        cluster.start()
        ack = first_ack(cluster.bootstrap_servers, t0)
        pids = [n.proc.pid for n in [cluster.controller, *cluster.brokers.values()]
                if n and n.proc]
        cpu = cpu_seconds(pids)
        return Sample(None, ack, idle_rss(pids, idle_s), cpu)
    finally:
        cluster.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def docker_ready() -> str | None:
    """None when the image can be timed, else why not."""
    if shutil.which("docker") is None:
        return "no docker command"
    if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
        return "no Docker engine answers (scripts/setup.d/50-docker.sh starts one)"
    if subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True).returncode:
        return f"no image {IMAGE} (scripts/setup.d/50-docker.sh builds it)"
    return None


def image(brokers: int, idle_s: float) -> Sample:
    """The image as a user runs it, timed from ``docker start`` of a container created
    beforehand (creating one copies the image's files on the vfs driver: not start-up)."""
    base = free_base_port(brokers)
    bootstrap = ",".join(f"127.0.0.1:{base + i}" for i in range(brokers))
    cid = subprocess.run(
        ["docker", "create", "-e", f"KAFKA_EMULATOR_BROKERS={brokers}",
         "-e", f"KAFKA_EMULATOR_PORT={base}", "-e", "KAFKA_EMULATOR_ADVERTISED_HOST=127.0.0.1",
         "-p", f"{base}-{base + brokers - 1}:{base}-{base + brokers - 1}", IMAGE],
        check=True, capture_output=True, text=True).stdout.strip()
    try:
        wall0, t0 = time.time(), time.perf_counter()
        subprocess.Popen(["docker", "start", cid], stdout=subprocess.DEVNULL)
        ack = first_ack(bootstrap, t0)
        pid = int(subprocess.run(["docker", "inspect", "-f", "{{.State.Pid}}", cid],
                                 capture_output=True, text=True).stdout.strip())
        cpu = cpu_seconds([pid, *children(pid)])
        rss = idle_rss([pid, *children(pid)], idle_s)
        return Sample(logged_ready(cid, wall0), ack, rss, cpu)
    finally:
        subprocess.run(["docker", "rm", "-f", cid], capture_output=True)


def logged_ready(cid: str, wall0: float) -> float | None:
    """When the container logged its ready line, by the timestamp docker gave the line
    (the engine's clock, this machine's): seconds after ``wall0``."""
    logs = subprocess.run(["docker", "logs", "-t", cid], capture_output=True, text=True)
    for line in (logs.stdout + logs.stderr).splitlines():
        if "kafka-emulator ready" in line:
            stamp = line.split(" ", 1)[0]  # 2026-12-06T15:47:05.123456789Z
            day, frac = stamp.rstrip("Z").split(".")
            then = datetime.datetime.strptime(day, "%Y-%m-%dT%H:%M:%S").replace(
                tzinfo=datetime.UTC).timestamp() + float("0." + frac)
            return then - wall0
    return None


def children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (the image's entry point runs the emulator)."""
    out: list[int] = []
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = [int(k) for k in f.read().split()]
    except OSError:
        return out
    for k in kids:
        out += [k, *children(k)]
    return out


# ---- the table ---------------------------------------------------------------------------
def fmt(values: list[float], unit: str, scale: float = 1.0, digits: int = 3) -> str:
    if not values:
        return "-"
    vs = [v * scale for v in values]
    mid = statistics.median(vs)
    return (f"{mid:.{digits}f} {unit}" + (f" ({min(vs):.{digits}f}-{max(vs):.{digits}f})"
                                           if len(vs) > 1 else ""))


def table(rows: list[Row]) -> str:
    head = ("system", "ready line", "first acked produce", "CPU to the ack", "idle RSS")
    lines = [f"| {' | '.join(head)} |", "|" + "---|" * len(head)]
    for r in rows:
        if r.failed:
            lines.append(f"| {r.name} | {r.failed} | | | |")
            continue
        ready = [s.ready_s for s in r.samples if s.ready_s is not None]
        acks = [s.ack_s for s in r.samples if s.ack_s is not None]
        rss = [s.rss_mb for s in r.samples if s.rss_mb is not None]
        cpu = [s.cpu_s for s in r.samples if s.cpu_s is not None]
        lines.append(f"| {r.name} | {fmt(ready, 's')} | {fmt(acks, 's')} | "
                     f"{fmt(cpu, 's', digits=2)} | {fmt(rss, 'MB', digits=1)} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="runs per system (default 7)")
    ap.add_argument("--brokers", default="3,1",
                    help="broker counts, comma-separated (default 3,1)")
    ap.add_argument("--idle", type=float, default=2.0,
                    help="seconds after the first ack before RSS is read (default 2)")
    ap.add_argument("--kafka-runs", type=int, default=None,
                    help="runs of Kafka (default: --runs); each takes ~10 s")
    ap.add_argument("--no-kafka", action="store_true", help="leave Kafka out")
    ap.add_argument("--no-kfake", action="store_true", help="leave kfake out")
    ap.add_argument("--no-image", action="store_true", help="leave the Docker image out")
    ap.add_argument("--baseline", metavar="DIR",
                    help="also time the emulator of another tree, e.g. an older commit: "
                    "git archive C | tar -x -C DIR (its compiled log core copied in)")
    ap.add_argument("--no-compile", action="store_true",
                    help="do not write the emulator's bytecode caches first (see "
                    "compile_bytecode): the start of an editable install without them")
    args = ap.parse_args()
    counts = [int(n) for n in args.brokers.split(",") if n.strip()]
    if not args.no_compile:
        compile_bytecode()
        if args.baseline:
            compile_bytecode(args.baseline)

    systems: list[tuple[str, Callable[[int, float], Sample], int]] = [
        ("emulator", emulator, args.runs)]
    if args.baseline:
        base_dir = os.path.abspath(args.baseline)
        systems.append((f"emulator at {args.baseline}",
                        lambda n, idle: emulator(n, idle, base_dir), args.runs))
    skipped: list[str] = []
    if not args.no_kfake:
        try:
            build_kfake()
            systems.append(("kfake", kfake, args.runs))
        except (RuntimeError, subprocess.CalledProcessError) as e:
            skipped.append(f"kfake: {e}")
    if not args.no_kafka:
        try:
            ensure_kafka_jars(DEFAULT_VERSION, quiet=True)
            systems.append((f"Kafka {DEFAULT_VERSION}", kafka,
                            args.kafka_runs if args.kafka_runs is not None else args.runs))
        except Exception as e:  # noqa: BLE001 - any reason is printed
            skipped.append(f"Kafka: {e}")
    if not args.no_image:
        why = docker_ready()
        if why is None:
            systems.append((f"image {IMAGE}", image, args.runs))
        else:
            skipped.append(f"image: {why}")

    rows: dict[tuple[str, int], Row] = {}
    floor = Row("python3 alone (interpreter start to a printed line)")
    for n in counts:
        for name, _, _ in systems:
            extra = " + controller" if name.startswith("Kafka") else ""
            rows[(name, n)] = Row(f"{name} ({n} broker{'s' if n > 1 else ''}{extra})")
    for run in range(1, args.runs + 1):
        floor.samples.append(python_floor(0, 0))
        for n in counts:
            for name, fn, runs in systems:
                row = rows[(name, n)]
                if run > runs or row.failed:
                    continue
                try:
                    s = fn(n, args.idle)
                except Exception as e:  # noqa: BLE001 - one line in the table
                    row.failed = f"failed: {e}".splitlines()[0]
                    continue
                row.samples.append(s)
                ready = "-" if s.ready_s is None else f"{s.ready_s:.3f} s"
                print(f"run {run}: {row.name}: ready line {ready}, first ack "
                      f"{s.ack_s or 0:.3f} s, CPU {s.cpu_s or 0:.2f} s, idle RSS "
                      f"{s.rss_mb or 0:.1f} MB", flush=True)
    load = os.getloadavg()
    print(f"\nmedians (min-max) of {args.runs} runs; load average {load[0]:.2f} "
          f"{load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    print(table([*rows.values(), floor]))
    for s in skipped:
        print(f"skipped {s}")


if __name__ == "__main__":
    main()
