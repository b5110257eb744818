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
the warm-up (KB per minute, and what it would add in a day), the median RSS of the
first and last third after warm-up, and a verdict per emulator: ``flat`` when the
RssAnon slope after warm-up is at most ``--flat-kb-per-min`` (default 5 KB/min, about
7 MB a day: a leak of 100 bytes per offset commit, one a second, would show as 6
KB/min), else ``GROWING``; the exit status is 1 when any emulator is GROWING (or
lost records). The warm-up (default 10 minutes) covers the first roll of the
internal topics' 100 KiB segments. The loads run side by side when ``--mode both``
(the default), each on its own emulator process; every sample line carries the
machine's 1-minute load average and the emulator's CPU seconds.

Usage:
    python bench/soak.py [--minutes 60] [--rate 2000] [--sample-seconds 30]
                         [--mode memory|disk|both] [--warmup-minutes M] [--config K=V]
                         [--flat-kb-per-min 5]

Measured (2026-11-27, 2 shared cores, other engineers' benchmarks running: 1-minute
load 0.8-22.7, median 8.9), two 60-minute runs side by side (``--mode memory`` and
``--mode disk``, each its own process), 7.2 million records each, 0 failed:

- before (Kafka's 100 MiB internal segments, ``--config
  offsets.topic.segment.bytes=104857600``): +40 KB/min in memory, +49 KB/min with
  --data-dir (an earlier 60-minute run); a 25-minute run beside the ones below: +56 KB/min
  in memory (second half +47), and __consumer_offsets held all 9,044 commits written;
- after (the 100 KiB default): in memory **flat**, +2.6 KB/min after the 10-minute
  warm-up (second half +1.2 KB/min; 46.4 MB from minute 15 to 60), __consumer_offsets
  holding 1,636 of the 21,672 records written; with --data-dir **GROWING**, +82 KB/min:
  a step of 2.5 MB between minutes 38 and 42 (39.7 -> 42.2 MB; the 25-minute run's disk
  emulator stepped +3.8 MB in the same minutes of wall-clock time, as the machine's load
  fell from ~10 to ~5), and +6.2 KB/min before it, +13.8 KB/min after it.

The disk step (found 2026-11-28): each replica's log keeps five C arrays, 8 bytes per
batch, that double when full and never shrink. With --data-dir every closed segment's
batches are swapped for views of its file (here ~600-700 batches of ~1.5 KB per 1 MB
segment, 1,600-2,500 alive per log), and the swap asked for room for all of them
although it is one for one: it doubled any log whose live batches were above half its
arrays less a segment's worth, a window the live count (the producer's batch rate,
which moves with the machine's load) drifts into; 18 logs going from 4,096 to 8,192
slots is 18 x 160 KB = 2.9 MB. Fixed (the swap asks for its net growth, none), and
the store trims the C heap (malloc_trim) after mapping segments. That the arithmetic
fits the step is an inference: the old run's arrays were not measured. Ruled out on
the way: threads (5, constant: the main one and 4 libuv workers) and their malloc
arenas (3 x 132 KB), mapped segment files (RssFile, not RssAnon), and Python objects
(tracemalloc flat over 4 minutes of a disk emulator rolling 20 KB segments ~20 times a
second). After: a 30-minute ``--mode disk`` run (1-minute load 0.7-8.5,
median 2.4; 3.6 million records, 0 failed), no step: RssAnon 36.8-38.9 MB from
minute 10 to 30, slope -2.3 KB/min after a 10-minute warm-up (**flat**), but +7.5
KB/min with the script's default warm-up for 30 minutes (7.5 min: GROWING by the 5 KB/min
test); medians of the first and last third 37.6 and 37.8 MB. The heap's +-1 MB
swing dominates a 20-minute fit: an hour's run is the test.

The hour's run (2026-12-02, ``python bench/soak.py --minutes 60 --mode both``, the two
emulators side by side; load 0.6-10.6, median 3.0, a CI rehearsal running beside it for
the first 45 minutes; 7.2 million records each, 0 failed, 0 error lines): in memory
RssAnon +4.5 KB/min after the 10-minute warm-up: flat (second half +1.3; medians of the
first and last third 46.5 and 46.6 MB); with ``--data-dir`` +3.3 KB/min: flat (second
half -18.1; 37.6 and 37.7 MB; anon+file +8.3 KB/min, 60.8 and 60.7 MB);
__consumer_offsets held 1,666 of the 21,701 records written.
"""

from __future__ import annotations

import argparse
import os
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

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition  # noqa: E402
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


def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of the process, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Sample:
    t: float  # seconds since the load started
    anon: int
    filed: int
    produced: int
    consumed: int
    load: float = 0.0  # the machine's 1-minute load average
    cpu: float = 0.0  # the emulator's CPU seconds so far


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
        """__consumer_offsets at the end: its offsets (high watermark minus log start,
        summed over partitions: every commit ever written) and the records it still
        holds (read back: what compaction left). It is the one log here no retention
        bounds, compacted only once its segment rolls (offsets.topic.segment.bytes)."""
        name = "__consumer_offsets"
        c = Consumer({"bootstrap.servers": self.bootstrap, "group.id": "soak-probe",
                      "enable.auto.commit": False, "enable.partition.eof": True})
        try:
            md = c.list_topics(timeout=10)
            n = len(md.topics[name].partitions) if name in md.topics else 0
            marks = {p: c.get_watermark_offsets(TopicPartition(name, p), 10)
                     for p in range(n)}
            todo = {p for p, (lo, hi) in marks.items() if hi > lo}
            c.assign([TopicPartition(name, p, marks[p][0]) for p in sorted(todo)])
            held = 0
            deadline = time.monotonic() + 60
            while todo and time.monotonic() < deadline:
                for m in c.consume(1000, 1.0):
                    if m.error() is None:
                        held += 1
                    elif m.error().code() == KafkaError._PARTITION_EOF:
                        todo.discard(m.partition())
            return {"__consumer_offsets offsets": sum(hi - lo for lo, hi in marks.values()),
                    "__consumer_offsets records held": held}
        finally:
            c.close()

    def sample(self, t0: float) -> Sample:
        anon, filed = proc_memory(self.pid)
        s = Sample(time.monotonic() - t0, anon, filed, self.produced, self.consumed,
                   os.getloadavg()[0], proc_cpu_seconds(self.pid))
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


def report(load: Load, warmup_s: float, flat_kb_per_min: float) -> tuple[str, bool]:
    """The emulator's series and figures, and whether its RssAnon stayed flat."""
    lines = [f"== {load.name}: {load.produced:,} produced ({load.failed} failed), "
             f"{load.consumed:,} consumed, {load.churn} churn clients",
             f"{'min':>7} {'RssAnon MB':>11} {'RssFile MB':>11} {'produced':>11} "
             f"{'consumed':>11} {'load':>5} {'cpu s':>7}"]
    for s in load.samples:
        lines.append(f"{s.t / 60:7.1f} {s.anon / MB:11.1f} {s.filed / MB:11.1f} "
                     f"{s.produced:11,} {s.consumed:11,} {s.load:5.1f} {s.cpu:7.0f}")
    after = [s for s in load.samples if s.t >= warmup_s]
    if len(after) < 3:
        lines.append(f"verdict: too few samples after the {warmup_s / 60:.1f} min warm-up")
        return "\n".join(lines), False
    loads = [s.load for s in load.samples]
    lines.append(f"machine load (1-min average) over the run: min {min(loads):.1f}, median "
                 f"{statistics.median(loads):.1f}, max {max(loads):.1f}; emulator CPU "
                 f"{load.samples[-1].cpu - load.samples[0].cpu:.0f} s")
    flat = False
    for label, get in (("RssAnon", lambda s: s.anon),
                       ("RSS (anon+file)", lambda s: s.anon + s.filed)):
        slope = slope_per_minute([(s.t, get(s)) for s in after])
        half = slope_per_minute([(s.t, get(s)) for s in after[len(after) // 2:]])
        third = max(1, len(after) // 3)
        first = statistics.median(get(s) for s in after[:third])
        last = statistics.median(get(s) for s in after[-third:])
        lines.append(f"{label}: slope {slope / 1024:+.1f} KB/min over the "
                     f"{(after[-1].t - after[0].t) / 60:.0f} min after the "
                     f"{warmup_s / 60:.1f} min warm-up ({slope * 60 * 24 / MB:+.1f} MB a "
                     f"day at that rate; second half alone {half / 1024:+.1f} KB/min); "
                     f"median first third {first / MB:.1f} MB, last third {last / MB:.1f} MB")
        if label == "RssAnon":
            flat = slope <= flat_kb_per_min * 1024
    lines.append(f"verdict: {'flat' if flat else 'GROWING'} (RssAnon slope after warm-up "
                 f"{'<=' if flat else '>'} {flat_kb_per_min:g} KB/min)")
    return "\n".join(lines), flat and load.failed == 0


def run(args: argparse.Namespace) -> bool:
    """True when every emulator's RssAnon stayed flat and no record failed."""
    ok = True
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
                load = Load(f"{mode} ({'--data-dir' if mode == 'disk' else 'no data dir'}), "
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
                          f"{s.produced:,} consumed {s.consumed:,} load {s.load:.1f} "
                          f"cpu {s.cpu:.0f} s", flush=True)
                    if ld.consumed < ld.produced - args.rate * 30:
                        print(f"  {ld.name}: the consumer is behind by "
                              f"{ld.produced - ld.consumed:,}", flush=True)
            kept = {ld.name: ld.internal_records() for ld in loads}
            for ld in loads:
                ld.stop.set()
            for th in threads:
                th.join(60)
            for ld in loads:
                text, flat = report(ld, warmup_s, args.flat_kb_per_min)
                print(text, flush=True)
                print("records kept at the end: " + ", ".join(
                    f"{k} {v:,}" for k, v in kept[ld.name].items()), flush=True)
                ok = ok and flat
        finally:
            for cm, log in reversed(stack):
                cm.__exit__(None, None, None)
                log.close()
            for mode in modes:
                text = (Path(tmp) / f"{mode}.log").read_text()
                errors = [ln for ln in text.splitlines() if "ERROR" in ln or "Traceback" in ln]
                print(f"{mode} emulator log: {len(errors)} error lines"
                      + "".join(f"\n  {ln}" for ln in errors[:10]))
    return ok


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
                    "offsets.topic.segment.bytes=104857600 for Kafka's internal "
                    "segments")
    ap.add_argument("--flat-kb-per-min", type=float, default=5.0,
                    help="the largest RssAnon slope after warm-up called flat "
                    "(default 5 KB/min, about 7 MB a day)")
    if not run(ap.parse_args()):
        sys.exit(1)


if __name__ == "__main__":
    try:
        main()
    except subprocess.TimeoutExpired as e:
        raise SystemExit(f"soak: {e}") from None
