"""What a produce waits for of the transaction coordinator (emulator/cluster/delayed.py).

Under transaction version 2 a transactional batch adds its partition to the
transaction itself; one arriving while the transaction's last end is still being
prepared (its markers not all written) is, under Kafka's timing, held by Kafka's
partition leader, which retries the coordinator's CONCURRENT_TRANSACTIONS (its
AddPartitionsToTxnManager, add.partitions.to.txn.retry.backoff.max.ms, 100 ms): the
batch waits for the markers, then is served as if it came then; past the last retry
it gets the coordinator's answer (docs/coordinator-timing.md).
"""

from __future__ import annotations

from emulator.cluster.delayed import Delayed, until
from emulator.coordinators.transactions.coordinator import TransactionCoordinator


def until_prepared(tc: TransactionCoordinator, transactional_id: str) -> Delayed[bool]:
    """The wait for ``transactional_id``'s markers: True once they are written, False
    after the leader's last retry; the batch is served then either way."""
    retry_max = tc.cfg("add.partitions.to.txn.retry.backoff.max.ms", 100)
    return until(lambda: not tc.preparing(transactional_id), tc.now() + retry_max)
