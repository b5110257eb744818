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
batch). The worker (emulator/server/check_worker.py) is started on first need as
``python -m emulator.server.check_worker`` (not multiprocessing's spawn, which would
run the embedding program's main module again), checks one batch at a time over its
stdin/stdout, ignores SIGINT and ends with the server. If it cannot start or dies,
the batch is validated inline as before, with one log line.
"""

from __future__ import annotations

import asyncio
import logging
import os
import pickle
import struct
import sys
from pathlib import Path

import emulator
from emulator.cluster.replication import topic_rules
from emulator.handlers.base import RequestContext
from emulator.log.validator import (
    INLINE_INFLATE,
    Checked,
    inflate_inline,
    needs_offline_check,
)

log = logging.getLogger("kafka_emulator")

# Inflated bytes one request may have inflated on the event loop (its first batches);
# the rest of its compressed batches go to the worker. About 20 ms of gzip.
INLINE_BUDGET = 8 << 20


_LEN = struct.Struct(">I")


class BatchChecker:
    """Fills ``ctx.checked`` for a Produce request (see the module docstring)."""

    def __init__(self) -> None:
        self._proc: asyncio.subprocess.Process | None = None
        self._lock: asyncio.Lock | None = None  # one batch at a time
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
                # (A batch this large on the wire inflates past the bound: no probe.)
                if budget > 0 and len(records) < INLINE_INFLATE:
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

    async def _worker(self) -> asyncio.subprocess.Process:
        if self._proc is None or self._proc.returncode is not None:
            root = str(Path(emulator.__file__).resolve().parent.parent)
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                [root, *filter(None, [os.environ.get("PYTHONPATH")])])}
            self._proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "emulator.server.check_worker",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env)
        return self._proc

    async def _offline(self, batch: bytes, rules: object, now: int, tp: str) -> tuple | None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        self.in_flight += 1
        try:
            async with self._lock:
                proc = await self._worker()
                assert proc.stdin is not None and proc.stdout is not None
                job = pickle.dumps((batch, rules, now, tp), protocol=5)
                proc.stdin.write(_LEN.pack(len(job)) + job)
                await proc.stdin.drain()
                size = _LEN.unpack(await proc.stdout.readexactly(4))[0]
                outcome = pickle.loads(await proc.stdout.readexactly(size))
        except asyncio.CancelledError:
            self.close()  # its answer would be read as the next job's
            raise
        except (OSError, EOFError, asyncio.IncompleteReadError, pickle.PickleError) as e:
            # No worker (it could not start, or died): validate inline, as before.
            log.warning("produce validation worker unavailable (%s: %s): validating %s on "
                        "the event loop", type(e).__name__, e, tp)
            self.close()
            return None
        finally:
            self.in_flight -= 1
        self.offloaded += 1
        return outcome

    def close(self) -> asyncio.subprocess.Process | None:
        """Stop the worker (it also ends by itself when its stdin closes)."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            try:
                proc.kill()
            except ProcessLookupError:
                pass
        return proc

    async def aclose(self) -> None:
        proc = self.close()
        if proc is not None:
            await proc.wait()
