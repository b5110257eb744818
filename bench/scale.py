"""How the emulator's costs grow with the number of partitions, beside Kafka (docs/scale.md).

For each size (10, 100, 1k, 10k partitions by default; 100k with ``--sizes``), a fresh
system, then:

- topic creation: topics of up to 100 partitions each, replication factor 3 (the
  emulator's 3 brokers) or 1 (a single Kafka node), one CreateTopics request, timed
  until every topic is answered;
- RSS before and after, and the bytes each idle partition costs;
- Metadata for every topic (v12, one connection, sequential): p50 and p99;
- produce with confluent-kafka (acks=all, linger.ms 5): one 100-byte record to every
  partition per round, each round flushed, records/s over the rounds, and the CPU time
  per record of the server's processes and of this (client) process, and the cores both
  kept busy (their CPU over the phase's wall time; near 2 here: the machine): librdkafka 2.x
  sends one partition per ProduceRequest and its broker threads look at every
  partition they lead at each wake-up, so the client's cost per record grows with the
  partition count on its own (bench/produce_path.py measures the emulator alone);
- consume with confluent-kafka: every partition assigned from offset 0, records/s;
- the per-broker client (``produce_raw``, ``fetch_raw``): one Produce request per broker
  per round carrying a record for each partition the broker leads, then one Fetch
  request per broker per round reading a batch of each, records/s and the server's CPU
  per record of each;
- acks=all latency at 500 records/s on a one-partition topic (p50, as compare.py).

Kafka runs (bench/pom.xml's version, jars from Maven Central) where ``--kafka`` asks for
it and it can hold the size (``--kafka-max``), with as many brokers as the emulator
(``--brokers``, default 3: both at replication factor 3; ``--brokers 1``: both at 1), so
the two are compared like for like; ``--kafka-brokers 1`` keeps the older, unlike
comparison (one Kafka node at RF 1). ``--runs N`` repeats every size N times, the systems
interleaved, and ends with the headline table: per size and system the median of each
figure over the runs with its range, and the emulator/Kafka ratio of records/s as the
median of the per-run ratios with their range. A headline takes at least 3 runs. Prints a table
(``--markdown FILE`` also writes it with the command and the load average) and, with
``--plot FILE.png``, draws records/s and Metadata p50 against partitions (needs
matplotlib; without it the plot is skipped with a line saying so). Asserts nothing
(the machine is shared, figures are noisy).

    python bench/scale.py [--sizes 10,100,1000,10000] [--kafka] [--kafka-max 10000]
                          [--brokers 3] [--runs 3] [--plot docs/scale.png]
                          [--markdown table.md]

The figures of docs/scale.md's headline come from one command:

    python bench/scale.py --sizes 100,10000 --kafka --runs 3 --min-seconds 8 \
        --max-seconds 20 --metadata-requests 30 --markdown docs/scale-headline.md
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Future

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import compare  # noqa: E402
import runs  # noqa: E402
from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from emulator.blocking_client import BlockingConnection  # noqa: E402
from wire.records import build_batch  # noqa: E402

PER_TOPIC = 100
VALUE = b"v" * 100


def topic_plan(n: int) -> list[tuple[str, int]]:
    """Topics of up to PER_TOPIC partitions that add up to ``n``."""
    out, i = [], 0
    while n > 0:
        k = min(PER_TOPIC, n)
        out.append((f"scale-{i:05d}", k))
        n -= k
        i += 1
    return out


TOPICS_PER_REQUEST = 50  # Kafka refuses a CreateTopics writing > 10,000 metadata records


def create(s: compare.System, plan: list[tuple[str, int]]) -> float:
    """Seconds to create every topic: all CreateTopics requests sent, then awaited."""
    admin = AdminClient({"bootstrap.servers": s.bootstrap})
    t0 = time.perf_counter()
    futures: list[Future] = []
    for i in range(0, len(plan), TOPICS_PER_REQUEST):
        batch = plan[i:i + TOPICS_PER_REQUEST]
        futures.extend(admin.create_topics([NewTopic(n, p, s.rf) for n, p in batch],
                                           request_timeout=600, operation_timeout=600).values())
    for f in futures:
        f.result(600)
    return time.perf_counter() - t0


def wait_leaders(s: compare.System, plan: list[tuple[str, int]], timeout: float = 600) -> None:
    """Until metadata names a leader for every partition (Kafka learns them after create)."""
    admin = AdminClient({"bootstrap.servers": s.bootstrap})
    want = dict(plan)
    deadline = time.time() + timeout
    while time.time() < deadline:
        md = admin.list_topics(timeout=60)
        ok = all(name in md.topics and len(md.topics[name].partitions) == k
                 and all(p.leader >= 0 for p in md.topics[name].partitions.values())
                 for name, k in want.items())
        if ok:
            return
        time.sleep(0.5)
    raise RuntimeError("leaders not elected in time")


def metadata_latency(s: compare.System, count: int) -> tuple[float, float, int]:
    """(p50 ms, p99 ms, partitions seen) of whole-cluster Metadata v12 round trips."""
    host, port = s.bootstrap.split(",")[0].rsplit(":", 1)
    conn = BlockingConnection(socket.create_connection((host, int(port))), "scale-bench")
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    lats = []
    try:
        resp = conn.call(3, 12, {"topics": None})  # decoded once, untimed
        parts = sum(len(t["partitions"]) for t in resp["topics"])
        for _ in range(count):
            frame = conn.protocol.send_request(3, 12, {"topics": None})
            t0 = time.perf_counter()
            conn.send_raw(frame)
            conn.read_frame()  # read, not decoded: the time is the broker's
            lats.append(time.perf_counter() - t0)
    finally:
        conn.close()
    lats.sort()
    return statistics.median(lats) * 1000, lats[min(len(lats) - 1, int(len(lats) * 0.99))] \
        * 1000, parts


def produce(s: compare.System, plan: list[tuple[str, int]], min_s: float,
            max_s: float) -> tuple[float, int, float, float, float]:
    """(records/s, rounds, seconds of the slowest round, server and client CPU
    microseconds per record): one record per partition a round."""
    # message.timeout.ms: a round of 100,000 partitions takes minutes on a loaded
    # machine (librdkafka's default, 300 s, failed one such round)
    p = Producer({"bootstrap.servers": s.bootstrap, "acks": "all", "linger.ms": 5,
                  "message.timeout.ms": 900_000,
                  "queue.buffering.max.messages": 2_000_000,
                  "queue.buffering.max.kbytes": 1 << 21})
    errors: list[str] = []

    def report(err, _msg) -> None:
        if err is not None:
            errors.append(str(err))

    parts = [(name, i) for name, k in plan for i in range(k)]
    for name, i in parts[:1]:  # warm up the connections and metadata
        p.produce(name, VALUE, partition=i)
    p.flush(60)
    rounds, slowest = 0, 0.0
    server0, client0 = compare.cpu_seconds(s.pids), compare.cpu_seconds([os.getpid()])
    t0 = time.perf_counter()
    while True:
        r0 = time.perf_counter()
        for name, i in parts:
            while True:
                try:
                    p.produce(name, VALUE, partition=i, on_delivery=report)
                    break
                except BufferError:
                    p.poll(0.01)
        if p.flush(900):
            raise RuntimeError("produce round did not complete in 900 s")
        rounds += 1
        slowest = max(slowest, time.perf_counter() - r0)
        elapsed = time.perf_counter() - t0
        if errors:
            raise RuntimeError(f"produce errors: {errors[:3]}")
        if (elapsed >= min_s and rounds >= 3) or elapsed >= max_s:
            break
    records = rounds * len(parts)
    server = (compare.cpu_seconds(s.pids) - server0) / records * 1e6
    client = (compare.cpu_seconds([os.getpid()]) - client0) / records * 1e6
    return records / elapsed, rounds, slowest, server, client


def leaders(s: compare.System, plan: list[tuple[str, int]]
            ) -> tuple[dict[int, tuple[str, int]], dict[int, dict[str, list[int]]]]:
    """(each broker's address, the partitions each broker leads: topic -> indexes), from
    one Metadata request."""
    host, port = s.bootstrap.split(",")[0].rsplit(":", 1)
    with BlockingConnection.connect(host, int(port), "scale-raw", timeout=None) as admin:
        md = admin.call(3, 12, {
            "topics": [{"topic_id": bytes(16), "name": name} for name, _ in plan]})
    addr = {b["node_id"]: (b["host"], b["port"]) for b in md["brokers"]}
    per_broker: dict[int, dict[str, list[int]]] = {}
    for t in md["topics"]:
        for p in t["partitions"]:
            per_broker.setdefault(p["leader_id"], {}).setdefault(t["name"], []).append(
                p["partition_index"])
    return addr, per_broker


def connect(addr: tuple[str, int]) -> BlockingConnection:
    c = BlockingConnection.connect(*addr, client_id="scale-raw", timeout=None)
    c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return c


def rounds_until(s: compare.System, conns: list[BlockingConnection],
                 frame: Callable[[int, int], bytes], api: tuple[int, int],
                 answered: Callable[[dict], None], min_s: float,
                 max_s: float) -> tuple[int, float, float]:
    """The per-broker client's loop: each round sends connection j the request
    ``frame(j, round)`` (encoded beforehand) and waits for every answer (``answered``
    checks each), until ``min_s`` and 3 rounds have passed, or ``max_s``; then closes the
    connections. (rounds, seconds, server CPU seconds)."""
    rounds = 0
    server0 = compare.cpu_seconds(s.pids)
    t0 = time.perf_counter()
    try:
        while True:
            for j, c in enumerate(conns):
                c.protocol.expect(api[0], api[1], 1)
                c.send_raw(frame(j, rounds))
            for c in conns:
                answered(c.receive().body)
            rounds += 1
            elapsed = time.perf_counter() - t0
            if (elapsed >= min_s and rounds >= 3) or elapsed >= max_s:
                break
    finally:
        for c in conns:
            c.close()
    return rounds, elapsed, compare.cpu_seconds(s.pids) - server0


def produce_raw(s: compare.System, plan: list[tuple[str, int]], min_s: float,
                max_s: float) -> tuple[float, float]:
    """(records/s, server CPU microseconds per record) with a client that costs almost
    nothing: one Produce request (v9, acks=all) per broker per round carrying one record
    for each partition that broker leads, as the Java producer and kafka-python batch
    per broker (librdkafka sends one partition per request, and its own per-partition
    scans then dominate a 2-core machine at 10,000 partitions). The requests are encoded
    once and sent again every round (no idempotence: the broker assigns the offsets),
    so the figure is the broker's."""
    addr, per_broker = leaders(s, plan)
    batch = build_batch([(None, VALUE)], timestamp=int(time.time() * 1000))
    conns, frames = [], []
    for node, topics in per_broker.items():
        c = connect(addr[node])
        conns.append(c)
        # encoded once, sent again each round (ClientConnection.expect)
        frames.append(c.protocol.send_request(0, 9, {
            "transactional_id": None, "acks": -1, "timeout_ms": 60_000,
            "topic_data": [{"name": n, "partition_data": [
                {"index": i, "records": batch} for i in idx]} for n, idx in topics.items()]},
            correlation_id=1, expect_response=False))
    n_parts = sum(len(ps) for topics in per_broker.values() for ps in topics.values())

    def answered(resp: dict) -> None:
        bad = [p["error_code"] for t in resp["responses"]
               for p in t["partition_responses"] if p["error_code"]]
        if bad:
            raise RuntimeError(f"raw produce errors: {bad[:3]}")

    rounds, elapsed, server = rounds_until(s, conns, lambda j, _: frames[j], (0, 9), answered,
                                           min_s, max_s)
    records = rounds * n_parts
    return records / elapsed, server / records * 1e6


def fetch_raw(s: compare.System, plan: list[tuple[str, int]], min_s: float,
              max_s: float) -> tuple[float, float]:
    """(records/s, server CPU microseconds per record) of the per-broker client's reads,
    after ``produce_raw``: one Fetch request (v12, no session) per broker per round
    carrying every partition the broker leads, each reading one of the last batches
    produce_raw wrote (partition_max_bytes is that batch's size, so one record per
    partition per round, as it produced them), waiting for the answers. The requests
    are encoded beforehand (50 offsets, cycled), so the figure is the broker's."""
    addr, per_broker = leaders(s, plan)
    size = len(build_batch([(None, VALUE)], timestamp=int(time.time() * 1000)))
    conns, frames = [], []
    for node, topics in per_broker.items():
        c = connect(addr[node])
        conns.append(c)
        ends = c.call(2, 5, {"replica_id": -1, "isolation_level": 0, "topics": [
            {"name": n, "partitions": [{"partition_index": i, "current_leader_epoch": -1,
                                        "timestamp": -1} for i in idx]}
            for n, idx in topics.items()]})
        hw = {(t["name"], p["partition_index"]): p["offset"]
              for t in ends["topics"] for p in t["partitions"]}
        depth = min(50, min(hw.values()))
        frames.append([c.protocol.send_request(1, 12, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 50 << 20,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1,
            "topics": [{"topic": n, "partitions": [
                {"partition": i, "fetch_offset": hw[(n, i)] - 1 - k, "current_leader_epoch": -1,
                 "last_fetched_epoch": -1, "log_start_offset": -1,
                 "partition_max_bytes": size} for i in idx]} for n, idx in topics.items()],
            "forgotten_topics_data": [], "rack_id": ""},
            correlation_id=1, expect_response=False) for k in range(depth)])
    n_parts = sum(len(ps) for topics in per_broker.values() for ps in topics.values())
    records = 0

    def answered(resp: dict) -> None:
        nonlocal records
        for t in resp["responses"]:
            for p in t["partitions"]:
                if p["error_code"] or not p["records"]:
                    raise RuntimeError(f"raw fetch: {t['topic']}-"
                                       f"{p['partition_index']} error "
                                       f"{p['error_code']}, {len(p['records'] or b'')} B")
                records += 1

    rounds, elapsed, server = rounds_until(
        s, conns, lambda j, r: frames[j][r % len(frames[j])], (1, 12), answered, min_s, max_s)
    if records != rounds * n_parts:
        raise RuntimeError(f"raw fetch: {records} records for {rounds} x {n_parts}")
    return records / elapsed, server / records * 1e6


def consume(s: compare.System, plan: list[tuple[str, int]], expected: int) -> float:
    c = Consumer({"bootstrap.servers": s.bootstrap, "group.id": "scale-bench",
                  "enable.auto.commit": False, "fetch.max.bytes": 50 << 20})
    c.assign([TopicPartition(name, i, 0) for name, k in plan for i in range(k)])
    n = 0
    t0 = time.perf_counter()
    while n < expected and time.perf_counter() - t0 < 600:
        for m in c.consume(10000, 1.0):
            if m.error() is None:
                n += 1
    dt = time.perf_counter() - t0
    c.close()
    if n < expected:
        raise RuntimeError(f"consumed {n} of {expected}")
    return n / dt


def run(s: compare.System, n: int, args: argparse.Namespace) -> dict[str, object]:
    r: dict[str, object] = {"system": s.name, "size": n}
    plan = topic_plan(n)
    time.sleep(1)
    rss0 = compare.rss_mb(s.pids)
    r["create_s"] = create(s, plan)
    wait_leaders(s, plan)
    time.sleep(1)
    rss1 = compare.rss_mb(s.pids)
    r["rss_mb"] = rss1
    r["bytes_per_partition"] = (rss1 - rss0) * (1 << 20) / n
    r["md_p50"], r["md_p99"], seen = metadata_latency(s, args.metadata_requests)
    if seen < n:
        raise RuntimeError(f"metadata shows {seen} of {n} partitions")
    rate, rounds, slowest, server_cpu, client_cpu = produce(s, plan, args.min_seconds,
                                                            args.max_seconds)
    r["produce"], r["rounds"], r["slowest_round_s"] = rate, rounds, slowest
    r["server_cpu_us"], r["client_cpu_us"] = server_cpu, client_cpu
    # Cores busy during the produce phase: on a 2-core machine a sum near 2 means the
    # rate is what the server and the client together leave room for.
    r["cores"] = rate * (server_cpu + client_cpu) / 1e6
    r["consume"] = consume(s, plan, rounds * n)
    r["raw_produce"], r["raw_server_cpu_us"] = produce_raw(s, plan, args.min_seconds,
                                                           args.max_seconds)
    r["raw_fetch"], r["raw_fetch_cpu_us"] = fetch_raw(s, plan, args.min_seconds,
                                                      args.max_seconds)
    compare.create_topics(s, [("scale-lat", 1)])
    r["acks_all_p50"], r["acks_all_p99"] = compare.latency(s, "scale-lat", 1000, 500)
    return r


COLUMNS = [  # key, header, format
    ("size", "partitions", "{:,}"), ("system", "system", "{}"),
    ("create_s", "create s", "{:.2f}"), ("rss_mb", "RSS MB", "{:.0f}"),
    ("bytes_per_partition", "B/idle part.", "{:,.0f}"),
    ("md_p50", "Metadata p50 ms", "{:.1f}"), ("md_p99", "p99 ms", "{:.1f}"),
    ("produce", "produce rec/s", "{:,.0f}"), ("rounds", "rounds", "{}"),
    ("slowest_round_s", "slowest round s", "{:.2f}"),
    ("server_cpu_us", "server CPU us/rec", "{:.0f}"),
    ("client_cpu_us", "client CPU us/rec", "{:.0f}"),
    ("cores", "cores busy", "{:.2f}"),
    ("consume", "consume rec/s", "{:,.0f}"),
    ("raw_produce", "per-broker produce rec/s", "{:,.0f}"),
    ("raw_server_cpu_us", "its server CPU us/rec", "{:.0f}"),
    ("raw_fetch", "per-broker fetch rec/s", "{:,.0f}"),
    ("raw_fetch_cpu_us", "its server CPU us/rec", "{:.0f}"),
    ("acks_all_p50", "acks=all p50 ms", "{:.2f}"), ("acks_all_p99", "p99 ms", "{:.2f}"),
]


def table(rows: list[dict[str, object]]) -> list[str]:
    cells = [[h for _, h, _ in COLUMNS]]
    for r in rows:
        cells.append([fmt.format(r[k]) if isinstance(r.get(k), (int, float)) or k == "system"
                      else str(r.get(k, "-")) for k, _, fmt in COLUMNS])
    widths = [max(len(row[i]) for row in cells) for i in range(len(COLUMNS))]
    lines = []
    for j, row in enumerate(cells):
        lines.append("| " + " | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True))
                     + " |")
        if j == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return lines


def print_table(rows: list[dict[str, object]]) -> None:
    print("\n".join(table(rows)))


HEADLINE = [("produce", "produce rec/s (librdkafka)", "{:,.0f}"),
            ("raw_produce", "per-broker client rec/s", "{:,.0f}"),
            ("raw_fetch", "per-broker fetch rec/s", "{:,.0f}"),
            ("md_p50", "Metadata p50 ms", "{:.1f}"),
            ("acks_all_p50", "acks=all p50 ms", "{:.2f}"),
            ("server_cpu_us", "server CPU us/rec", "{:.0f}")]


def headline(rows: list[dict[str, object]]) -> list[str]:
    """Medians over the runs, with their ranges, and the emulator/Kafka ratios of
    records/s taken run by run (each run's systems ran back to back)."""
    run_ids = {str(r.get("run", 1)) for r in rows}
    lines = [f"{len(run_ids)} run(s); each cell: median (min-max).", "",
             "| partitions | system | " + " | ".join(h for _, h, _ in HEADLINE) + " |",
             "|---:|---|" + "---:|" * len(HEADLINE)]
    sizes = sorted({int(str(r["size"])) for r in rows})
    for n in sizes:
        for name in dict.fromkeys(str(r["system"]) for r in rows if r["size"] == n):
            mine = [r for r in rows if r["size"] == n and r["system"] == name]
            cells = [runs.median_range(runs.numbers(mine, k), fmt) for k, _, fmt in HEADLINE]
            lines.append(f"| {n:,} | {name} | " + " | ".join(cells) + " |")
    lines.append("")
    for n in sizes:
        at_n = [r for r in rows if r["size"] == n]
        for key, what in (("produce", "librdkafka"), ("raw_produce", "the per-broker client"),
                          ("raw_fetch", "the per-broker client's fetch")):
            ratios = runs.per_run_ratios(
                at_n, key, lambda r: str(r["system"]).startswith("emulator"),
                lambda r: str(r["system"]).startswith("Kafka"))
            if ratios:
                lines.append(f"- {n:,} partitions, records/s with {what}: emulator/Kafka "
                             f"{runs.median_range(ratios, '{:.1f}x')} over {len(ratios)} run(s)")
    return lines


def plot(rows: list[dict[str, object]], path: str) -> None:
    """records/s and Metadata p50 against partitions (log scale), one line per system."""
    try:
        import matplotlib
    except ImportError:
        print(f"--plot {path}: matplotlib is not installed, no plot written")
        return
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for name in dict.fromkeys(str(r["system"]) for r in rows):
        ok = [r for r in rows if r["system"] == name and isinstance(r.get("produce"), float)]
        sizes = [r["size"] for r in ok]
        left.plot(sizes, [r["produce"] for r in ok], marker="o", label=name)
        right.plot(sizes, [r["md_p50"] for r in ok], marker="o", label=name)
    for ax, title in ((left, "produce records/s (acks=all)"),
                      (right, "whole-cluster Metadata p50 ms")):
        ax.set_xscale("log")
        ax.set_xlabel("partitions")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"plot written to {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10,100,1000,10000")
    ap.add_argument("--kafka", action="store_true", help="also run a single Kafka node")
    ap.add_argument("--kafka-max", type=int, default=10000, help="largest size for Kafka")
    ap.add_argument("--metadata-requests", type=int, default=50)
    ap.add_argument("--min-seconds", type=float, default=3.0, help="produce at least this long")
    ap.add_argument("--max-seconds", type=float, default=60.0, help="and at most this long")
    ap.add_argument("--plot", metavar="PNG", help="draw records/s and Metadata p50 (matplotlib)")
    ap.add_argument("--markdown", metavar="FILE", help="also write the table there")
    ap.add_argument("--brokers", type=int, default=3,
                    help="brokers of the emulator and of Kafka (replication factor min(3, n))")
    ap.add_argument("--kafka-brokers", type=int, default=None,
                    help="Kafka's brokers when they should differ (not like for like)")
    ap.add_argument("--runs", type=int, default=1, help="repeat every size, interleaved")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    kafka_brokers = args.kafka_brokers or args.brokers
    rows: list[dict[str, object]] = []
    for run_no in range(1, args.runs + 1):
        for n in sizes:
            systems = [("emulator", lambda: compare.start_emulator(args.brokers))]
            if args.kafka and n <= args.kafka_max:
                compare.ensure_jars()
                systems.append(("kafka", lambda: compare.start_kafka(
                    kafka_brokers, tempfile.mkdtemp(prefix="scale-kafka-"))))
            for _, start in systems:
                s = start()
                try:
                    print(f"run {run_no}: {s.name}: {n:,} partitions ...", flush=True)
                    row = run(s, n, args)
                except Exception as e:  # noqa: BLE001 - report the failure in the table
                    row = {"system": s.name, "size": n, "create_s": f"failed: {e}"[:50]}
                finally:
                    s.stop()
                row["run"] = run_no
                rows.append(row)
                print_table([row])
    print()
    print(compare.platform_line())
    print_table(rows)
    summary = headline(rows)
    print("\n".join(summary))
    if args.plot:
        plot(rows, args.plot)
    if args.markdown:
        like = ("like for like" if kafka_brokers == args.brokers
                else "NOT like for like")
        with open(args.markdown, "w") as f:
            f.write(f"    python bench/scale.py {' '.join(sys.argv[1:])}\n\n"
                    f"{compare.platform_line()}; the emulator {args.brokers} broker(s), "
                    f"Kafka {kafka_brokers} ({like}), {time.strftime('%Y-%m-%d %H:%M')}"
                    f"\n\n" + "\n".join(summary) + "\n\nEvery run:\n\n"
                    + "\n".join(table(rows)) + "\n")


if __name__ == "__main__":
    main()
