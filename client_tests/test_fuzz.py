"""The schema-driven fuzzer (wire/fuzz.py, emulator/fuzzing.py), a bounded run in the
test suite: every served API key and version, valid requests mutated field by field,
random frames and hostile record batches. Each case must be answered or its connection
closed, never a traceback in the emulator's log, and an ordinary client on its own
connection must be served throughout. bench/fuzz.py is the long run."""

from __future__ import annotations

import logging

import pytest

from emulator import Cluster
from emulator.fuzzing import Canary, drive
from emulator.handlers import HANDLERS
from wire.fuzz import Fuzzer

# Not run with --target kafka: the emulator's answers to fuzzed requests (its log stays clean).
pytestmark = pytest.mark.emulator_only

CASES = 4000


class _Tracebacks(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info or record.levelno >= logging.ERROR:
            self.records.append(record)


def test_fuzz_cases_never_hurt_the_emulator() -> None:
    tracebacks = _Tracebacks()
    logger = logging.getLogger("kafka_emulator")
    logger.addHandler(tracebacks)
    try:
        with Cluster(brokers=3, port=0) as c:
            for t in ("fuzz-0", "fuzz-1"):
                c.create_topic(t, 3, 3)
            c.create_topic("fuzz-c", 1, 3, config={"cleanup.policy": "compact"})
            served = {k: h.versions for k, h in HANDLERS.items()}
            fuzzer = Fuzzer(served, seed=18, topics=("fuzz-0", "fuzz-1", "fuzz-c"))
            addresses = [(b.host, b.port) for b in c.state.brokers.values()]
            stats = drive(addresses, fuzzer.cases(CASES), parallel=6, answer_timeout=3.0,
                          canary_every=100)
            after = Canary(addresses[0]).probe()
    finally:
        logger.removeHandler(tracebacks)
    assert stats.cases == CASES
    assert not tracebacks.records, "\n".join(
        f"{r.getMessage()}" for r in tracebacks.records[:5])
    assert stats.canary_failures == 0 and after is not None, stats.canary_errors
    # Most cases reach a handler: the fuzzer is not only sending garbage.
    assert stats.answered > CASES // 4, stats
