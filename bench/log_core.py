"""Micro-benchmark of the log and ISR core: the Cython build against its pure twin.

Measures operations per second of each twin on the same prebuilt data and prints
a table with the ratio. Asserts nothing (timings are noisy on a shared machine).

    python bench/log_core.py [--seconds 0.5] [--record-size 1024]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from emulator.log import isr as pure_isr  # noqa: E402
from emulator.log import pure  # noqa: E402
from wire.records import build_batch  # noqa: E402

try:
    from emulator.log import _core
except ImportError:
    sys.exit("emulator.log._core is not compiled: run `pip install -e .` first")


def rate(fn: Callable[[int], None], seconds: float) -> float:
    """Operations per second of ``fn(n)``, which performs n operations; best of 3."""
    n = 1000
    while True:  # size a run to about a tenth of the budget
        t0 = time.perf_counter()
        fn(n)
        dt = time.perf_counter() - t0
        if dt > seconds / 10 or n > 10_000_000:
            break
        n *= 4
    best = 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        fn(n)
        best = max(best, n / (time.perf_counter() - t0))
    return best


def scenarios(impl, isr, record_size: int, records_per_batch: int, log_batches: int):
    """(name, benchmark) pairs for one twin; every benchmark takes an operation count."""
    batch = build_batch([(b"key", os.urandom(record_size))] * records_per_batch,
                        timestamp=1_700_000_000_000)
    small = build_batch([(b"k", b"v")], timestamp=1_700_000_000_000)

    full = impl.Log()
    for i in range(log_batches):
        full.append_as_leader(build_batch([(b"k", b"v" * 100)] * 4, timestamp=i), i // 1000)
    end = full.log_end_offset
    rng = random.Random(1)
    offsets = [rng.randrange(end) for _ in range(4096)]

    def append_leader(n: int) -> None:
        log = impl.Log()
        append = log.append_as_leader
        for i in range(n):
            append(batch, 5)
            if i & 63 == 63:  # retention: 1 MiB retained, so this measures CPU, not DRAM
                log.delete_before(log.log_end_offset)

    def append_leader_small(n: int) -> None:
        log = impl.Log()
        append = log.append_as_leader
        for _ in range(n):
            append(small, 5)

    def append_follower(n: int) -> None:
        log = impl.Log()
        append = log.append_as_follower
        for i in range(n):
            append(small, i, i, 5, i)

    def read_one(n: int) -> None:
        read = full.read
        for i in range(n):
            read(offsets[i & 4095], 1, end)

    def read_64k(n: int) -> None:
        read = full.read
        for i in range(n):
            read(offsets[i & 4095], 65536, end)

    def index_lookup(n: int) -> None:
        at = full.batch_at
        for i in range(n):
            at(offsets[i & 4095])

    def time_lookup(n: int) -> None:
        by_time = full.offset_for_timestamp
        for i in range(n):
            by_time(offsets[i & 4095] >> 2)

    def epoch_lookup(n: int) -> None:
        eo = full.end_offset_for_epoch
        for i in range(n):
            eo(i & 15)

    def replicate(n: int) -> None:
        leader, follower = impl.Log(), impl.Log()
        for _ in range(n):
            leader.append_as_leader(small, 1)
            for data, base, last, epoch, ts in leader.batches_from(follower.log_end_offset,
                                                                   1 << 20):
                follower.append_as_follower(data, base, last, epoch, ts)

    def truncate_and_refill(n: int) -> None:
        log = impl.Log()
        for _ in range(64):
            log.append_as_leader(small, 1)
        for i in range(n):
            log.truncate_to(log.log_end_offset - 1)
            log.append_as_leader(small, 1)
            if i & 63 == 0:
                log.delete_before(log.log_end_offset - 32)

    followers = {b: isr.FollowerState(log_end_offset=100) for b in (2, 3)}
    members = [1, 2, 3]

    def isr_round(n: int) -> None:
        update, hw, lagging = isr.update_fetch_state, isr.isr_high_watermark, \
            isr.out_of_sync_replicas
        f2, f3 = followers[2], followers[3]
        for i in range(n):
            update(f2, i, i, i)
            update(f3, i, i, i)
            hw(1, i, members, followers)
            lagging(1, members, followers, i, 30_000)

    return [
        (f"append as leader ({records_per_batch} x {record_size} B batch)", append_leader),
        ("append as leader (1 small record)", append_leader_small),
        ("append as follower (shared bytes)", append_follower),
        ("replicate: leader append + follower fetch", replicate),
        ("read by offset (1 batch)", read_one),
        ("read by offset (64 KiB)", read_64k),
        ("index lookup (batch at offset)", index_lookup),
        ("time index lookup", time_lookup),
        ("leader-epoch lookup", epoch_lookup),
        ("truncate + append", truncate_and_refill),
        ("ISR round (2 fetch updates, HW, lag check)", isr_round),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=0.5, help="budget per measurement")
    ap.add_argument("--record-size", type=int, default=1024)
    ap.add_argument("--records-per-batch", type=int, default=16)
    ap.add_argument("--log-batches", type=int, default=100_000)
    args = ap.parse_args()
    shape = (args.record_size, args.records_per_batch, args.log_batches)
    py = scenarios(pure, pure_isr, *shape)
    cy = scenarios(_core, _core, *shape)
    print(f"log core micro-benchmark (python {sys.version.split()[0]}, "
          f"CRC-32C hardware: {_core.CRC32C_HARDWARE}, {os.cpu_count()} CPUs)")
    print(f"{'operation':46} {'pure ops/s':>12} {'cython ops/s':>13} {'ratio':>7}")
    ratios = []
    for (name, fp), (_, fc) in zip(py, cy, strict=True):
        rp, rc = rate(fp, args.seconds), rate(fc, args.seconds)
        ratios.append(rc / rp)
        print(f"{name:46} {rp:12,.0f} {rc:13,.0f} {rc / rp:6.1f}x", flush=True)
    geo = 1.0
    for r in ratios:
        geo *= r
    print(f"{'geometric mean':46} {'':12} {'':13} {geo ** (1 / len(ratios)):6.1f}x")


if __name__ == "__main__":
    main()
