"""Produce validation off the event loop, for batches that inflate past 1 MiB.

Kafka's leader decompresses and walks every produced batch (emulator/log/validator.py);
a legal gzip batch of a few hundred KB can inflate to 64 MiB and take 0.1-0.7 s to
check, during which a single event loop would answer nobody. So before the Produce
handler runs, the server looks at each compressed batch: one that inflates within
INLINE_INFLATE is inflated here (a few milliseconds) and handed to the domain inflated,
so nothing is done twice; a larger one is validated in a worker process and the
domain gets the outcome (``Checked``), which it applies where it would have validated.

A process, not a thread: cramjam's decompressors and the records walk hold the GIL,
so a thread would still stop the loop (measured: 50-100 ms pauses for one 63 MiB
batch). The worker is started on first need (spawn: nothing of the emulator's state
is copied), checks one batch at a time, and ignores SIGINT (the emulator stops it).
If it cannot start or dies, the batch is validated inline as before, with one log line.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import signal
from concurrent.futures import ProcessPoolExecutor

from emulator.cluster.replication import topic_rules
from emulator.handlers.base import RequestContext
from emulator.log.validator import Checked, check_outcome, inflate_inline, needs_offline_check

log = logging.getLogger("kafka_emulator")

# Inflated bytes one request may have inflated on the event loop (its first batches);
# the rest of its compressed batches go to the worker. About 20 ms of gzip.
INLINE_BUDGET = 8 << 20


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the process group


class BatchChecker:
    """Fills ``ctx.checked`` for a Produce request (see the module docstring)."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self.offloaded = 0  # batches validated by the worker (tests and benches read it)
        self.in_flight = 0  # batches with the worker now

    async def precheck(self, ctx: RequestContext, req: dict, version: int) -> None:
        cluster = ctx.cluster
        checked: dict[tuple[str, int], Checked] = {}
        budget = INLINE_BUDGET
        for td in req.get("topic_data") or ():
            if version >= 13:
                t = cluster.topics_by_id.get(td["topic_id"])
            else:
                t = cluster.topics.get(td["name"])
            if t is None:
                continue
            for pd in td["partition_data"] or ():
                records = pd["records"]
                if not records or not needs_offline_check(records):
                    continue  # uncompressed or not a v2 batch: the validator is quick
                key = (t.name, pd["index"])
                if budget > 0:
                    inflated = inflate_inline(records)
                    if inflated is not None:
                        checked[key] = inflated
                        budget -= len(inflated.inflated or b"")
                        continue
                outcome = await self._offline(bytes(records), topic_rules(cluster, t),
                                              cluster.now(), f"{t.name}-{pd['index']}")
                if outcome is not None:
                    checked[key] = Checked(outcome=outcome)
        if checked:
            ctx.checked = checked

    async def _offline(self, batch: bytes, rules: object, now: int, tp: str) -> tuple | None:
        loop = asyncio.get_running_loop()
        try:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                    initializer=_worker_init)
            self.in_flight += 1
            try:
                outcome = await loop.run_in_executor(self._pool, check_outcome, batch, rules,
                                                     now, tp)
            finally:
                self.in_flight -= 1
        except Exception as e:  # noqa: BLE001 - no worker: validate inline, as before
            log.warning("produce validation worker unavailable (%s: %s): validating %s on "
                        "the event loop", type(e).__name__, e, tp)
            self.close()
            return None
        self.offloaded += 1
        return outcome

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
