"""A transaction as the transaction coordinator keeps it: Kafka's ``TransactionMetadata``
and ``TransactionState``, the states and which may follow which.

The coordinator (transactions/coordinator.py) moves a transaction through these states
on its requests, timers and markers; the coordinator log (coordinator_log.py) writes
and reads them as __transaction_state records. The table is the one the coordinator's
docstring draws; a transition outside it is INVALID_TXN_STATE.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from emulator.cluster.state_machines import TransitionTable
from wire.errors import ErrorCode as E

MAX_EPOCH = 32767

EMPTY = "Empty"
ONGOING = "Ongoing"
PREPARE_COMMIT = "PrepareCommit"
PREPARE_ABORT = "PrepareAbort"
COMPLETE_COMMIT = "CompleteCommit"
COMPLETE_ABORT = "CompleteAbort"
DEAD = "Dead"
PREPARE_EPOCH_FENCE = "PrepareEpochFence"
STATES = (
    EMPTY,
    ONGOING,
    PREPARE_COMMIT,
    PREPARE_ABORT,
    COMPLETE_COMMIT,
    COMPLETE_ABORT,
    DEAD,
    PREPARE_EPOCH_FENCE,
)

# target state -> the states it may be entered from (Kafka's TransactionState). A
# transition outside it is answered with INVALID_TXN_STATE, as the coordinator answers
# a request the transaction's state does not allow.
TXN_TRANSITIONS = TransitionTable(
    "transaction",
    {
        EMPTY: frozenset({EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT}),
        ONGOING: frozenset({ONGOING, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT}),
        PREPARE_COMMIT: frozenset({ONGOING}),
        PREPARE_ABORT: frozenset(
            {ONGOING, PREPARE_EPOCH_FENCE, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT}
        ),
        COMPLETE_COMMIT: frozenset({PREPARE_COMMIT}),
        COMPLETE_ABORT: frozenset({PREPARE_ABORT}),
        DEAD: frozenset({EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT}),
        PREPARE_EPOCH_FENCE: frozenset({ONGOING}),
    },
    E.INVALID_TXN_STATE,
)


@dataclass(eq=False)
class TxnMetadata:
    transactional_id: str
    producer_id: int
    timeout_ms: int
    last_update_ms: int
    producer_epoch: int = -1
    last_producer_epoch: int = -1
    previous_producer_id: int = -1
    state: str = EMPTY
    partitions: set[tuple[str, int]] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)
    start_ms: int = -1
    pending_markers: set[tuple[str, int]] = field(default_factory=set)
    # transaction version 2: a new producer id takes over once the markers are written
    rotate_producer_id: bool = False
    # Kafka's timing: when the markers of a Prepare* transaction are due (-1: at once)
    markers_due: int = -1

    def epoch_exhausted(self) -> bool:
        return self.producer_epoch >= MAX_EPOCH - 1

    def transition(self, target: str) -> None:
        """Move to ``target`` if TXN_TRANSITIONS allows it (INVALID_TXN_STATE otherwise)."""
        TXN_TRANSITIONS.check(self.transactional_id, self.state, target)
        self.state = target
