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
run the embedding program's main module again) from a thread of the server (uvloop's
own spawn forks from the event loop: up to 1.6 s at a load of 14 with a large heap),
checks one batch at a time over its stdin/stdout, ignores SIGINT and ends with the
server. If it cannot start or dies,
the batch is validated inline as before, with one log line.
"""

from __future__ import annotations

import asyncio
import logging
import os
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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
        self._proc: subprocess.Popen | None = None
        self._thread: ThreadPoolExecutor | None = None  # one job at a time
        self.offloaded = 0  # batches validated by the worker (tests and benches read it)
        self.in_flight = 0  # batches with the worker now

    @staticmethod
    def wanted(req: dict) -> bool:
        """Does any batch of this Produce request need ``precheck`` (a compressed v2
        batch)? Asked first so that the common request - uncompressed batches, as
        librdkafka sends by default - costs no coroutine and no topic lookup."""
        for td in req.get("topic_data") or ():
            for pd in td["partition_data"] or ():
                records = pd["records"]
                if records and needs_offline_check(records):
                    return True
        return False

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

    def _roundtrip(self, job: bytes) -> tuple:
        """In the checker's own thread: start the worker if need be (subprocess uses
        vfork, and the fork is off the event loop either way), send one job, wait for
        its outcome. One thread, so jobs never interleave; a request that stops waiting
        does not stop the round trip, so answers never go to the wrong job."""
        proc = self._proc
        if proc is None or proc.poll() is not None:
            root = str(Path(__file__).resolve().parents[2])  # the folder holding emulator/
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                [root, *filter(None, [os.environ.get("PYTHONPATH")])])}
            proc = self._proc = subprocess.Popen(
                [sys.executable, "-m", "emulator.server.check_worker"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(_LEN.pack(len(job)) + job)
        proc.stdin.flush()
        head = proc.stdout.read(4)
        if len(head) < 4:
            raise EOFError("the worker ended")
        size = _LEN.unpack(head)[0]
        body = proc.stdout.read(size)
        if len(body) < size:
            raise EOFError("the worker ended")
        import pickle

        return pickle.loads(body)

    async def _offline(self, batch: bytes, rules: object, now: int, tp: str) -> tuple | None:
        if self._thread is None:
            self._thread = ThreadPoolExecutor(max_workers=1,
                                              thread_name_prefix="produce-check")
        import pickle  # here: only a large batch goes to the worker (docs/scale.md)

        self.in_flight += 1
        try:
            job = pickle.dumps((batch, rules, now, tp), protocol=5)
            outcome = await asyncio.get_running_loop().run_in_executor(
                self._thread, self._roundtrip, job)
        except (OSError, EOFError, ValueError, pickle.PickleError) as e:
            # No worker (it could not start, or died): validate inline, as before.
            log.warning("produce validation worker unavailable (%s: %s): validating %s on "
                        "the event loop", type(e).__name__, e, tp)
            self._kill()
            return None
        finally:
            self.in_flight -= 1
        self.offloaded += 1
        return outcome

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                proc.kill()
            except ProcessLookupError:
                pass
        if proc is not None:
            for pipe in (proc.stdin, proc.stdout):
                try:
                    if pipe is not None:
                        pipe.close()
                except OSError:
                    pass

    async def aclose(self) -> None:
        """Stop the worker (it also ends by itself when its stdin closes)."""
        proc = self._proc
        self._kill()
        if self._thread is not None:
            self._thread.shutdown(wait=False, cancel_futures=True)
            self._thread = None
        if proc is not None:
            await asyncio.get_running_loop().run_in_executor(None, proc.wait)
