"""Running a fault schedule live, on the cluster's event loop.

The schedule itself (parsing, seeded choices, which steps are due, what became of
each) is sans-I/O in emulator.faults.schedule; this is the part that waits: it sleeps
until each step's time and applies it through the running cluster (a ``ControlTarget``,
emulator.control.operations: a broker stop also closes its listener). One way to start one, whichever way in asked for it:
``POST /faults/schedule``, ``--fault-schedule`` at startup, ``Cluster.run_fault_schedule``.
"""

from __future__ import annotations

import asyncio
import json
import logging

from emulator.control.metrics import replication_view
from emulator.control.operations import ControlTarget
from emulator.faults import FaultError, FaultSchedule, ScheduleRunner, resolve_op

log = logging.getLogger("kafka_emulator.faults")


async def run_schedule(cluster: ControlTarget, runner: ScheduleRunner) -> None:
    """Apply a schedule's steps at their times on the cluster's loop; record each
    step's result and the replication state right after it."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    for step in list(runner.pending):
        delay = start + step.at_ms / 1000 - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        try:
            applied, error = await cluster.fault_async(resolve_op(cluster.state, step.op)), None
        except (FaultError, KeyError) as e:
            applied, error = None, str(e)
        runner.record(step, applied, error, replication_view(cluster.state))
        # Off the pending list only once recorded: "done" must mean every step's result
        # is there (a step that awaits a broker stop left a window before).
        runner.pending.popleft()
        log.info("fault schedule line %d at %d ms: %s%s", step.line, step.at_ms,
                 json.dumps(applied or step.op, sort_keys=True),
                 f" failed: {error}" if error else "")
    failed = [s for s in runner.applied if "error" in s]
    log.info("fault schedule done: %d steps, %d failed%s", len(runner.applied), len(failed),
             "".join(f"; line {s['line']}: {s['error']}" for s in failed))


def start_schedule(cluster: ControlTarget,
                   schedule: FaultSchedule) -> tuple[ScheduleRunner, asyncio.Task]:
    """Run ``schedule`` from now as a task on the running loop (one posted to
    /faults/schedule, one given at startup, one run from Python)."""
    runner = ScheduleRunner(schedule, cluster.state.now())
    return runner, asyncio.get_running_loop().create_task(run_schedule(cluster, runner))


__all__ = ["run_schedule", "start_schedule"]
