"""What the two adversarial surveys share (``python -m client_tests.wrong_clients.survey``
and ``python -m client_tests.reference_programs.survey``): the ``--jobs``/``--timeout``
options and where a run happens.

A run spends almost all its time waiting, not computing (its clients' retries, the
checker's read-back waiting for the high watermarks to stand still), so ``--jobs N``
runs N at once, each in a process of its own with its own cluster, killed after
``--timeout`` s: a client can hang for good, and only a process boundary gets the other
runs past it. With ``--jobs 1`` each run happens in the survey's own process, when the
table needs its result. Either way a run is the same run (same seed, same program, same
checks) and the table the same table, printed in the same order.

A run's result is its broken promises and the adversary's soundness violations it met
(answers Kafka could not give: a bug of the emulator, and no evidence either way about
the program). A survey names a run by the words of its hidden ``--task`` option, which
the process started for the run is given.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, Protocol, TypeVar

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

# (broken promises, soundness violations): what one run found
Result = tuple[list[str], list[str]]


class Pending(Protocol[T_co]):
    """A result asked for later: a Future of the pool, or a call not yet made."""

    def result(self) -> T_co: ...


class _Later(Generic[T]):
    """``--jobs 1``: the call made when its result is first asked for, in order."""

    def __init__(self, call: Callable[[], T]) -> None:
        self._call = call

    def result(self) -> T:
        return self._call()


def add_options(ap: argparse.ArgumentParser, task: Sequence[str]) -> None:
    """``--jobs``, ``--timeout`` and the hidden ``--task`` whose words are ``task``."""
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="runs at once, each in its own process (default 1: all in this one)",
    )
    ap.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="with --jobs: a run still going after this many s is killed and counts as failed",
    )
    ap.add_argument("--task", nargs=len(task), metavar=tuple(task), help=argparse.SUPPRESS)


def print_result(result: Result) -> None:
    """The end of a ``--task`` process: its run's result as a JSON line on stdout."""
    problems, unsound = result
    print(json.dumps({"problems": problems, "unsound": unsound}), flush=True)


def in_process(module: str, task: Sequence[str], timeout: float) -> Result:
    """One run in a process of its own (``python -m module --task ...``), killed after
    ``timeout`` s. A run can hang for good: confluent-kafka's Consumer.close() can wait
    inside its rebalance callback while holding the GIL, which freezes the in-process
    cluster too (seen once in 300 librdkafka pipeline runs). What the run wrote to
    stderr (a failing run's problems, the clients' logs) is passed on, as it would be
    shown with ``--jobs 1``."""
    cmd = [sys.executable, "-m", module, "--task", *task]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [f"error: hung, killed after {timeout:.0f} s"], []
    if out.stderr.strip():
        print(out.stderr, file=sys.stderr, end="", flush=True)
    for line in reversed(out.stdout.splitlines()):
        if line.startswith("{"):
            got = json.loads(line)
            return got["problems"], got["unsound"]
    return [
        f"error: the run's process exited {out.returncode} without a result: {out.stderr[-300:]}"
    ], []


class Runs:
    """Where a survey's runs happen, as its ``--jobs`` says.

    ``run`` makes one run: in this process (``local``) with ``--jobs 1``, else in a
    process of its own. ``later`` queues a piece of the survey's work (one run, or a
    search of several): with ``--jobs N`` every piece is queued at once on N threads so
    they stay busy across the table's rows; with ``--jobs 1`` a piece is done when its
    result is asked for, the rows in order."""

    def __init__(
        self, module: str, args: argparse.Namespace, local: Callable[[Sequence[str]], Result]
    ) -> None:
        self.module = module
        self.jobs: int = args.jobs
        self.timeout: float = args.timeout
        self.local = local
        self._pool = ThreadPoolExecutor(self.jobs) if self.jobs > 1 else None

    @property
    def parallel(self) -> bool:
        return self._pool is not None

    def run(self, *task: str) -> Result:
        if self._pool is None:
            return self.local(task)
        return in_process(self.module, task, self.timeout)

    def later(self, call: Callable[[], T]) -> Pending[T]:
        if self._pool is None:
            return _Later(call)
        return self._pool.submit(call)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()


def finish(bad: bool, unsound: list[str]) -> None:
    """The survey's end: the runs that met the soundness check, listed; exit 1 when a
    row failed or any run met it."""
    if unsound:
        print(f"\n{len(unsound)} run(s) met the adversary's soundness check:")
        for line in unsound:
            print(f"- {line}")
    sys.exit(1 if bad or unsound else 0)
