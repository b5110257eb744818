"""Transaction markers: the COMMIT/ABORT control batches that end a transaction in each
of its partitions, and the prepare window before they are written.

As Kafka's TransactionMarkerChannelManager: once the coordinator has written the prepare
record (PrepareCommit/PrepareAbort), a marker (``wire.records.control_batch``) goes to
the leader of each partition of the transaction; one whose partition has no leader, or
a leader whose process is down (crashed, not yet fenced: the metadata still names it, the
request to it fails), stays pending and is tried again at the coordinator's next tick,
with the leader the metadata names then. The coordinator
(emulator/coordinators/transactions/coordinator.py) completes the transaction when none
is left.

The prepare window: under ``--fidelity fast`` (the default) the markers are written at
once, so EndTxn answers after they are in the logs. Under Kafka's timing
(``state.fidelity.kafka_timing``) EndTxn answers with the transaction in
PrepareCommit/PrepareAbort, as Kafka's coordinator answers once the prepare record is
written, and the markers are written ``MARKER_DELAY_MS`` later (a deadline; the domain
never waits), within the envelope measured on Kafka 4.4 (conformance/coordinator_timing.py;
emulator/fidelity/differences.py DIFFERENCES ``transaction-markers``). Meanwhile the
transaction's partitions keep their last stable offset: read_committed consumers see
nothing yet.
"""

from __future__ import annotations

from emulator.coordinators.groups.base import OFFSETS_TOPIC
from emulator.coordinators.runtime.host import ClusterHost
from emulator.fidelity import Fidelity
from wire.records import control_batch

# --fidelity kafka: the time from EndTxn (the prepare record) to the markers, the window
# in which the transaction shows PrepareCommit/PrepareAbort. Kafka 4.4, three brokers,
# 70 transactions (conformance/coordinator_timing.py; the envelope is in
# emulator/fidelity/differences.py DIFFERENCES "transaction-markers"): the read_committed
# LSO passed the records 7.7-163 ms after EndTxn was sent (median 13),
# DescribeTransactions showed CompleteCommit from 9.7-186 ms (median 18-22).
MARKER_DELAY_MS = 15


def prepare_window(fidelity: Fidelity, delay_ms: int) -> int:
    """How long a transaction stays in Prepare* before its markers are written: 0 under
    ``--fidelity fast``, ``delay_ms`` under Kafka's timing."""
    if not fidelity.kafka_timing:
        return 0
    return max(0, int(delay_ms))


def write_markers(state: ClusterHost, pending: set[tuple[str, int]], producer_id: int,
                  producer_epoch: int, commit: bool, now: int) -> None:
    """Write the markers of ``pending`` (topic, partition) whose partition has a running
    leader, and take them out of it; those of __consumer_offsets need none (the group
    coordinator completes the transaction's offsets) nor do those of partitions deleted
    meanwhile (Kafka's coordinator skips a partition its metadata no longer has). What stays
    in ``pending`` waits for a leader that can take it."""
    for tp in sorted(pending):
        topic, index = tp
        if topic == OFFSETS_TOPIC:
            pending.discard(tp)
            continue
        t = state.topics.get(topic)
        if t is None or index >= len(t.partitions):
            pending.discard(tp)  # deleted meanwhile
            continue
        p = t.partitions[index]
        if p.leader < 0 or not state.is_running(p.leader):
            continue
        data = control_batch(commit, producer_id, producer_epoch, now)
        offset = state.append_control(p, data)
        p.complete_txn(producer_id, producer_epoch, offset, commit)
        pending.discard(tp)
