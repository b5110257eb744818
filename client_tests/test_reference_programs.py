"""Correct programs in four clients stay correct under ``--fidelity adversarial``.

Per client (confluent-kafka/librdkafka, kafka-python, aiokafka, Kafka's Java client):
an idempotent acks=all producer, a transactional consume-transform-produce reading
read_committed, and a group consumer (cooperative-sticky where the client has it; Java:
KIP-848 with REFERENCE_GROUP_PROTOCOL=consumer) that commits after processing
(client_tests/reference_programs/). Each run's
history is checked over the wire by emulator/history.py (reference_programs/checking.py
says what each program promises): no loss, no duplicate, no reorder of what it
promises, no commit ahead of processing; and the adversary's soundness check
(emulator/faults/soundness.py) found no answer Kafka could not have given.

The README's test command runs a sample sized to its time budget: seeds 1 and
2 for each producer (a few seconds a run), seed 1 for each consumer and pipeline (10-20
s a run); ``KAFKA_EMULATOR_REFERENCE_SEEDS`` gives every program other seeds (``N`` for
seeds 0..N-1, ``A-B`` or ``A,B``). The nightly job
(.ci/adversary-nightly) runs 100 each through ``python -m
client_tests.reference_programs.survey``, docs/fidelity-wrong-clients.md has its table.
"""

from __future__ import annotations

import os

import pytest

from client_tests.reference_programs.cases import REFS, Ref, cluster
from client_tests.reference_programs.java import JAVA_DIR
from client_tests.wrong_clients.cases import CONFIG
from emulator import Cluster

pytestmark = pytest.mark.emulator_only  # the fidelity modes are the emulator's


def seeds(spec: str) -> list[int]:
    """``N`` (seeds 0..N-1), ``A-B`` or ``A,B,C``."""
    if "-" in spec:
        a, b = spec.split("-", 1)
        return list(range(int(a), int(b) + 1))
    if "," in spec:
        return [int(s) for s in spec.split(",") if s.strip()]
    return list(range(int(spec)))


_SPEC = os.environ.get("KAFKA_EMULATOR_REFERENCE_SEEDS")
SAMPLE = {"producer": [1, 2], "consumer": [1], "ctp": [1]}
# aiokafka's consumer was out of this sample while its stall under seeds 1, 2 and 3 was
# unexplained; it was aiokafka's (client_tests/test_aiokafka_reset_stall.py), and its
# programs now set the short metadata_max_age_ms that works around it.
SAMPLE_FOR: dict[str, list[int]] = {}
RUNS = [pytest.param(ref, seed, id=f"{ref.name}-{seed}") for ref in REFS
        for seed in (seeds(_SPEC) if _SPEC else
                     SAMPLE_FOR.get(ref.name, SAMPLE[ref.program]))]


@pytest.mark.parametrize(("ref", "seed"), RUNS)
def test_reference_program_is_clean_under_adversarial(ref: Ref, seed: int) -> None:
    if ref.client == "java" and not (JAVA_DIR / ".classes" / "ReferencePrograms.class").exists():
        pytest.fail("client_tests/java/.classes/ReferencePrograms.class is missing: run "
                    "scripts/setup.d/30-java.sh (needs a JDK and Maven)")
    with cluster("adversarial", seed) as c:
        verdict = ref(c)
        faults = [f"{r.kind}: {r.detail}" for r in list(c.adversary.record)[:40]]
        unsound = list(c.adversary.violations)
    assert unsound == [], f"{ref.name} seed {seed}: the adversary's soundness check: {unsound}"
    assert verdict.problems == [], (f"{ref.name} seed {seed}:\n{verdict.text()}\n"
                                    "the adversary:\n  " + "\n  ".join(faults))
    history = verdict.report.history
    # not vacuous: the program did its work, and the adversary acted
    assert len(history.inputs) > 0 and history.outputs, verdict.text()
    assert len(faults) > 1, f"seed {seed}: the adversary injected nothing but its settings"


# Only OffsetFetch moves the group's coordinator: a JoinGroup's or a Heartbeat's move
# (coordinator_move, and with it coordinator_move_after_answer) shortly before would make
# the OffsetFetch's move wait out its quiet window (COORDINATOR_QUIET_REQUESTS), and
# whether one came first was the client's timing (a JoinGroup retried under load shifts
# the draws): CI once saw seed 1 move nothing before an OffsetFetch.
# Half the OffsetFetches (rate 0.05 x 10), not all: at x20 every OffsetFetch past the
# quiet window (COORDINATOR_QUIET_REQUESTS of the client's requests) met a move, the
# watch's own OffsetFetch too, so whether a stuck partition ever recovered was the
# client's request count between two checks. Under load a member made more than 50
# requests between checks and met a move at every one: 6 moves, 83 records lost by the
# 60 s deadline (seed 1, twice in 8 runs beside a busy machine). That schedule is
# legal, and no program could recover under it; at x10 a run of ten moves in a row is
# one in a thousand, and 9 of 10 seeds still showed the hang.
HANG_SCALE = ("coordinator_move_before_offset_fetch=10,coordinator_move=0,rebalance=0,"
              "kick=0")


def test_the_librdkafka_consumer_recovers_from_its_offset_fetch_hang() -> None:
    """librdkafka 2.16 leaves a partition unread for good when its OffsetFetch meets a
    coordinator that has just moved (confluentinc/librdkafka#5586;
    client_tests/librdkafka_hang.py). With the group's coordinator moved before every
    OffsetFetch (and no rebalance to hand out the partitions again), the reference
    consumer lost all 300 records under seed 1 before its StallWatch; with it each run is
    clean and the watch says it assigned the stuck partitions again. Every seed tried
    must be clean and sound; seeds are tried until one shows the hang, since whether
    librdkafka meets the move (and hangs on it) is the client's timing: a seed that
    showed no move or no hang is reported, not failed on, unless none shows it."""
    ref = next(r for r in REFS if r.name == "confluent-consumer")
    tried = []
    for seed in range(1, 9):
        with Cluster(brokers=3, port=0, fidelity="adversarial", seed=seed, config=CONFIG,
                     adversary_scale=HANG_SCALE) as c:
            verdict = ref(c)
            moves = [r for r in c.adversary.record
                     if r.kind == "coordinator_move_before_offset_fetch"]
            unsound = list(c.adversary.violations)
        assert unsound == [], f"seed {seed}: the adversary's soundness check: {unsound}"
        assert verdict.problems == [], f"seed {seed}:\n{verdict.text()}"
        hangs = [n for n in verdict.log.notes if "OffsetFetch hang" in n]
        if moves and hangs:
            return
        tried.append(f"seed {seed}: {len(moves)} coordinator move(s) before an OffsetFetch, "
                     f"{len(hangs)} hang note(s)")
    pytest.fail("the hang never showed, so nothing tested the watch:\n" + "\n".join(tried))
