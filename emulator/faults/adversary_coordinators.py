"""What the adversary's coordinator faults find in the coordinators' state: how long a
request must be held for its member's session or its records' acquisition locks to run
out, and a second instance of a transactional application. Functions of the services'
state, no I/O; emulator/faults/adversary.py decides when and records what happened.

A hold is Kafka's own timer doing the work: the request is delayed in the network
(``Plan.hold_ms``) until the coordinator's deadline has passed, and the handler then
answers from the state that timer made (UNKNOWN_MEMBER_ID; INVALID_RECORD_STATE for
records whose locks ran out and went back to be delivered again). Nothing is expired by
hand, so the answer is one Kafka gives to a request that took that long to arrive.
"""

from __future__ import annotations

from emulator.coordinators.share.partition import RecordState
from emulator.services import Services
from wire.errors import ErrorCode as E

# The slack after a deadline before the held request is let through (ms): the
# coordinator's timers run on the cluster's tick.
HOLD_SLACK_MS = 50


def classic_group_of(services: Services, client_id: str) -> str | None:
    """The first stable classic group (by id) with a member of this client id: the group
    a fetching consumer belongs to. Looked up only when a Fetch drew a rebalance, so its
    cost (the groups) is paid once in many fetches."""
    table = services.groups.groups
    for gid in sorted(table):
        g = table.peek(gid)
        if g is not None and g.type == "classic" and g.state == "Stable" and any(
                m.client_id == client_id for m in g.members.values()):
            return str(gid)
    return None


def session_hold(services: Services, group_id: str, member_id: str, now: int) -> int | None:
    """How long to hold a member's heartbeat for its session to run out (ms), or None
    when the group has no such member."""
    g = services.groups.groups.peek(group_id)
    m = None if g is None else g.members.get(member_id)
    if m is None:
        return None
    # (a member's session deadline is set when it joins; one already passed, the
    # coordinator's next timer expires it: the request goes at once)
    return max(m.hb_deadline - now + HOLD_SLACK_MS, 0)


def share_lock_hold(services: Services, req: dict, now: int) -> tuple[int, int] | None:
    """(ms to hold, records) for a ShareAcknowledge, or a ShareFetch carrying
    acknowledgements, to arrive after the acquisition locks of the records it
    acknowledges (held by this member) have run out; None when it acknowledges none."""
    share = services.share
    group_id, member_id = req["group_id"], req["member_id"]
    deadlines = []  # of the records acknowledged that this member holds
    for t in req["topics"]:
        for p in t["partitions"]:
            # (no share-partition: a group or partition the coordinator does not hold)
            sp = share.partitions.get((group_id, t["topic_id"], p["partition_index"]))
            if sp is None:
                continue
            for b in p["acknowledgement_batches"]:
                for offset in range(b["first_offset"], b["last_offset"] + 1):
                    rec = sp.records.get(offset)
                    if rec is not None and rec.state == RecordState.ACQUIRED \
                            and rec.member_id == member_id:
                        deadlines.append(rec.lock_deadline)
    if not deadlines:
        return None
    return max(max(deadlines) - now + HOLD_SLACK_MS, 0), len(deadlines)


def second_instance(services: Services, transactional_id: str) -> str | None:
    """Another instance of the application calls InitProducerId with this transactional
    id: the coordinator fences the first (aborting its open transaction). Returns what
    happened, or None when there is no such producer yet, or when the coordinator fenced
    nobody: a transaction completing (PrepareCommit/PrepareAbort) is answered
    CONCURRENT_TRANSACTIONS with the epoch unchanged (Kafka's
    TransactionCoordinator.prepareInitProducerIdTransit: the new instance backs off and
    retries), while an open one is fenced with a bumped epoch and the same answer."""
    txns = services.transactions
    txn = txns.txns.get(transactional_id)
    if txn is None:
        return None
    first = (txn.producer_id, txn.producer_epoch)
    err, _, _ = txns.init_producer_id(transactional_id, txn.timeout_ms)
    if err and err != E.CONCURRENT_TRANSACTIONS or (txn.producer_id, txn.producer_epoch) == first:
        return None
    return (f"a second instance of {transactional_id!r} initialised (InitProducerId answered "
            f"{E(err).name}): producer {txn.producer_id} now at epoch {txn.producer_epoch}, "
            "the first instance fenced")
