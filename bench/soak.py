"""Soak: does the emulator's memory stay flat under a steady load? Prints the figures.

Runs ``kafka-emulator`` as its own process (3 brokers), in memory and/or with
``--data-dir`` (``--mode``), and drives it for ``--minutes`` (default 60) at a steady
rate: one idempotent acks=all producer writing ``--rate`` records/s of 100 bytes over 6
partitions (RF 3, ``retention.ms`` 60 s and 1 MB segments, so the log itself stops
growing after a minute or two), one group consumer reading them with auto-commit (a
commit every second: ``__consumer_offsets`` grows unless its cleaner keeps up), and
every sample a short-lived producer and a short-lived consumer that connect, do one
thing and leave (connections, fetch sessions and group members come and go). Every
``--sample-seconds`` it reads the emulator's RSS (anonymous and file-backed, from
/proc) and the produced/consumed counts.

At the end it prints the RSS series, the least-squares slope of RSS over time after
the warm-up (bytes per minute), the median RSS of the first and last third after
warm-up, and a verdict: ``flat`` when the slope would grow RSS by under 5% of its
mean per hour and by under 1 MB/min, else ``GROWING``. The loads run side by side when
``--mode both`` (the default), each on its own emulator process.

Asserts nothing; a growing verdict is a leak to find. Usage:
    python bench/soak.py [--minutes 60] [--rate 2000] [--sample-seconds 30]
                         [--mode memory|disk|both] [--warmup-minutes M] [--config K=V]

Measured (60 min, 2,000 records/s each, 7.2 million records, 0 failed): RssAnon after
the 10-minute warm-up +40 KB/min in memory (46.4 -> 47.8 MB) and +49 KB/min with
--data-dir (42.4 -> 44.1 MB). What grows is __consumer_offsets: the group's commit every
second adds ~355 records a minute to its active segment, which at Kafka's 100 MiB
offsets.topic.segment.bytes never rolls, so the cleaner never compacts it (on Kafka the
same records sit on disk; here the active segment is in memory). ``--config
offsets.topic.segment.bytes=1048576`` lets it roll, so the log cleaner can compact it
(not yet measured over an hour).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402
from emulator_process import emulator_process  # noqa: E402

TOPIC = "soak"
PARTITIONS = 6
VALUE = b"x" * 100
MB = 1 << 20


def proc_memory(pid: int) -> tuple[int, int]:
    """(RssAnon, RssFile) in bytes from /proc/PID/status; anonymous memory is what
    leaks, file-backed pages are the data directory's mapped segments."""
    anon = filed = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            anon = int(line.split()[1]) * 1024
        elif line.startswith("RssFile:"):
            filed = int(line.split()[1]) * 1024
    return anon, filed


@dataclass
class Sample:
    t: float  # seconds since the load started
    anon: int
    filed: int
    produced: int
    consumed: int


@dataclass
class Load:
    """One emulator under the steady load; the producer and consumer run in threads."""

    name: str
    bootstrap: str
    pid: int
    rate: int
    stop: threading.Event = field(default_factory=threading.Event)
    produced: int = 0
    failed: int = 0
    consumed: int = 0
    churn: int = 0
    samples: list[Sample] = field(default_factory=list)

    def setup(self) -> None:
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        admin.create_topics([NewTopic(TOPIC, PARTITIONS, 3, config={
            "retention.ms": "60000", "segment.bytes": str(MB),
            "min.insync.replicas": "2"})])[TOPIC].result(30)

    def produce(self) -> None:
        p = Producer({"bootstrap.servers": self.bootstrap, "acks": "all",
                      "enable.idempotence": True, "linger.ms": 5})

        def on_delivery(err: object, _msg: object) -> None:
            if err is None:
                self.produced += 1
            else:
                self.failed += 1

        start = time.monotonic()
        sent = 0
        while not self.stop.is_set():
            due = int((time.monotonic() - start) * self.rate)
            while sent < due:
                try:
                    p.produce(TOPIC, VALUE, on_delivery=on_delivery)
                    sent += 1
                except BufferError:
                    break
            p.poll(0.01)
        p.flush(30)

    def consume(self) -> None:
        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "soak-reader",
                      "auto.offset.reset": "earliest", "enable.auto.commit": True,
                      "auto.commit.interval.ms": 1000})
        c.subscribe([TOPIC])
        try:
            while not self.stop.is_set():
                for m in c.consume(500, 0.2):
                    if m.error() is None:
                        self.consumed += 1
        finally:
            c.close()

    def churn_once(self) -> None:
        """A client that comes and goes: a plain producer sends one record, a consumer
        joins its own group, reads once, commits and leaves."""
        p = Producer({"bootstrap.servers": self.bootstrap})
        p.produce(TOPIC, VALUE)
        p.flush(10)
        c = Consumer({"bootstrap.servers": self.bootstrap,
                      "group.id": f"soak-churn-{self.churn % 20}",
                      "auto.offset.reset": "latest", "enable.auto.commit": False})
        c.subscribe([TOPIC])
        c.poll(1.0)
        try:
            c.commit(asynchronous=False)
        except Exception:  # noqa: BLE001 - nothing consumed yet: nothing to commit
            pass
        c.close()
        self.churn += 1

    def internal_records(self) -> dict[str, int]:
        """Records kept in the internal topics (high watermark minus log start, summed
        over partitions): the one log here no retention bounds, compacted only once its
        segment rolls (segment.bytes 100 MiB, as Kafka's offsets.topic.segment.bytes)."""
        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "soak-probe"})
        try:
            md = c.list_topics(timeout=10)
            out = {}
            for name in ("__consumer_offsets", TOPIC):
                n = len(md.topics[name].partitions) if name in md.topics else 0
                out[name] = sum(hi - lo for lo, hi in (
                    c.get_watermark_offsets(TopicPartition(name, p), 10) for p in range(n)))
            return out
        finally:
            c.close()

    def sample(self, t0: float) -> Sample:
        anon, filed = proc_memory(self.pid)
        s = Sample(time.monotonic() - t0, anon, filed, self.produced, self.consumed)
        self.samples.append(s)
        return s


def slope_per_minute(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, bytes): bytes per minute."""
    if len(points) < 2:
        return 0.0
    mx = statistics.fmean(t for t, _ in points)
    my = statistics.fmean(v for _, v in points)
    den = sum((t - mx) ** 2 for t, _ in points)
    if den == 0:
        return 0.0
    return sum((t - mx) * (v - my) for t, v in points) / den * 60


def report(load: Load, warmup_s: float) -> str:
    lines = [f"== {load.name}: {load.produced:,} produced ({load.failed} failed), "
             f"{load.consumed:,} consumed, {load.churn} churn clients",
             f"{'min':>7} {'RssAnon MB':>11} {'RssFile MB':>11} {'produced':>11} "
             f"{'consumed':>11}"]
    for s in load.samples:
        lines.append(f"{s.t / 60:7.1f} {s.anon / MB:11.1f} {s.filed / MB:11.1f} "
                     f"{s.produced:11,} {s.consumed:11,}")
    after = [s for s in load.samples if s.t >= warmup_s]
    if len(after) < 3:
        lines.append(f"verdict: too few samples after the {warmup_s / 60:.1f} min warm-up")
        return "\n".join(lines)
    for label, get in (("RssAnon", lambda s: s.anon),
                       ("RSS (anon+file)", lambda s: s.anon + s.filed)):
        slope = slope_per_minute([(s.t, get(s)) for s in after])
        third = max(1, len(after) // 3)
        first = statistics.median(get(s) for s in after[:third])
        last = statistics.median(get(s) for s in after[-third:])
        mean = statistics.fmean(get(s) for s in after)
        flat = abs(slope) * 60 < 0.05 * mean and abs(slope) < MB
        lines.append(f"{label}: slope {slope / 1024:+.1f} KB/min after the "
                     f"{warmup_s / 60:.1f} min warm-up ({slope * 60 / MB:+.1f} MB/hour, "
                     f"{100 * slope * 60 / mean:+.1f}% of its mean {mean / MB:.1f} MB per "
                     f"hour); median first third {first / MB:.1f} MB, last third "
                     f"{last / MB:.1f} MB: {'flat' if flat else 'GROWING'}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> None:
    modes = ["memory", "disk"] if args.mode == "both" else [args.mode]
    warmup_s = (args.warmup_minutes if args.warmup_minutes is not None
                else min(10.0, args.minutes / 4)) * 60
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        stack = []
        loads: list[Load] = []
        try:
            for mode in modes:
                extra = ["--data-dir", str(Path(tmp) / "data")] if mode == "disk" else []
                extra += [a for kv in args.config for a in ("--config", kv)]
                log = open(Path(tmp) / f"{mode}.log", "w")  # noqa: SIM115 - closed below
                cm = emulator_process(*extra, stderr=log)
                proc, addrs = cm.__enter__()
                stack.append((cm, log))
                bootstrap = ",".join(f"{h}:{p}" for h, p in addrs)
                load = Load(f"{mode} ({'--data-dir' if extra else 'no data dir'}), "
                            f"pid {proc.pid}", bootstrap, proc.pid, args.rate)
                load.setup()
                loads.append(load)
            threads = [threading.Thread(target=fn, daemon=True)
                       for ld in loads for fn in (ld.produce, ld.consume)]
            for th in threads:
                th.start()
            t0 = time.monotonic()
            end = t0 + args.minutes * 60
            print(f"soak: {args.minutes:g} min at {args.rate:,} records/s per emulator, "
                  f"sampling every {args.sample_seconds:g} s, modes {', '.join(modes)}",
                  flush=True)
            for ld in loads:
                ld.sample(t0)
            while time.monotonic() < end:
                time.sleep(min(args.sample_seconds, max(0.0, end - time.monotonic())))
                for ld in loads:
                    ld.churn_once()
                    s = ld.sample(t0)
                    print(f"{s.t / 60:6.1f} min {ld.name.split(' ')[0]:<6} RssAnon "
                          f"{s.anon / MB:7.1f} MB RssFile {s.filed / MB:6.1f} MB produced "
                          f"{s.produced:,} consumed {s.consumed:,}", flush=True)
                    if ld.consumed < ld.produced - args.rate * 30:
                        print(f"  {ld.name}: the consumer is behind by "
                              f"{ld.produced - ld.consumed:,}", flush=True)
            kept = {ld.name: ld.internal_records() for ld in loads}
            for ld in loads:
                ld.stop.set()
            for th in threads:
                th.join(60)
            for ld in loads:
                print(report(ld, warmup_s), flush=True)
                print("records kept at the end: " + ", ".join(
                    f"{k} {v:,}" for k, v in kept[ld.name].items()), flush=True)
        finally:
            for cm, log in reversed(stack):
                cm.__exit__(None, None, None)
                log.close()
            for mode in modes:
                text = (Path(tmp) / f"{mode}.log").read_text()
                errors = [ln for ln in text.splitlines() if "ERROR" in ln or "Traceback" in ln]
                print(f"{mode} emulator log: {len(errors)} error lines"
                      + "".join(f"\n  {ln}" for ln in errors[:10]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=60.0, help="how long (default 60)")
    ap.add_argument("--rate", type=int, default=2000,
                    help="records/s produced into each emulator (default 2000)")
    ap.add_argument("--sample-seconds", type=float, default=30.0,
                    help="seconds between RSS samples (default 30)")
    ap.add_argument("--mode", choices=("memory", "disk", "both"), default="both",
                    help="in memory, with --data-dir, or both side by side (default)")
    ap.add_argument("--warmup-minutes", type=float, default=None,
                    help="samples before this are left out of the slope "
                    "(default: a quarter of the run, at most 10)")
    ap.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                    help="a broker config for the emulators (repeatable), e.g. "
                    "offsets.topic.segment.bytes=1048576 to let __consumer_offsets roll "
                    "and be compacted")
    run(ap.parse_args())


if __name__ == "__main__":
    try:
        main()
    except subprocess.TimeoutExpired as e:
        raise SystemExit(f"soak: {e}") from None
