"""Leader election and partition changes: the controller's pen (PartitionChangeBuilder).

Every write of a partition's leader, leader epoch and ISR by the controller goes
through ``apply_change`` here; the reassignment module writes replica sets
(``reassignment.replay_change``) and their leader and ISR through the same function.
Both are the controller's own code: replication and the cluster's data never call in
here. An election moves the controller's partition state machine, which sits below
(``ClusterMetadata.controller.machines``, emulator.cluster.state_machines): nothing
here calls the controller role back. Kafka 4.x decides with KRaft's
PartitionChangeBuilder.

Every change bumps the partition epoch; a leader change (or a replica-set shrink)
bumps the leader epoch.
"""

from __future__ import annotations

from enum import IntEnum

from emulator.cluster.events import Appended, LeaderChanged
from emulator.cluster.followers import advance_hw
from emulator.cluster.metadata import ClusterMetadata
from emulator.cluster.partition import Partition, PendingMarker
from emulator.cluster.state_machines import PartitionState as PS
from wire.records import control_batch


class Election(IntEnum):
    """How a leader is chosen (Kafka's leader selectors / PartitionChangeBuilder's
    Election): one representation everywhere. PREFERRED and UNCLEAN are also
    ElectLeaders' ElectionType on the wire (0 and 1, emulator.cluster.election); the
    others never leave the controller."""

    PREFERRED = 0  # replicas[0] if valid, else keep a valid leader, else next in ISR
    UNCLEAN = 1  # OFFLINE, then any acceptable replica (ISR reset to it)
    OFFLINE = 2  # ONLINE in KRaft: keep a valid leader, else first ISR member in order
    REASSIGN = 3  # first target replica in the ISR (kept leader if still valid)
    CONTROLLED_SHUTDOWN = 4  # OFFLINE with the shutting-down broker excluded


PREFERRED, UNCLEAN, OFFLINE, REASSIGN, CONTROLLED_SHUTDOWN = Election


def unclean_allowed(state: ClusterMetadata, p: Partition) -> bool:
    """The partition's topic has unclean.leader.election.enable."""
    t = state.topics.get(p.topic)
    return t is not None and state.topic_config(t, "unclean.leader.election.enable") == "true"


def acceptable_leader(state: ClusterMetadata, b: int, exclude: int | None = None) -> bool:
    """Registered, unfenced and not in controlled shutdown (nor ``exclude``)."""
    return b != exclude and state.is_alive(b) and b not in state.shutting_down


def select_leader(state: ClusterMetadata, p: Partition, strategy: Election, isr: list[int],
                  replicas: list[int], exclude: int | None = None) -> tuple[int, bool]:
    """(new leader, unclean) by PartitionChangeBuilder.electLeader; -1 when none. A
    replica in a failed log directory (``p.offline``) is never chosen: Kafka's
    controller takes a replica only in a directory its broker reports online."""
    offline = p.offline

    def valid(b: int) -> bool:
        return b in isr and acceptable_leader(state, b, exclude) and b not in offline

    if strategy == PREFERRED:
        if replicas and valid(replicas[0]):
            return replicas[0], False
        if p.leader >= 0 and valid(p.leader):
            return p.leader, False
        return next((b for b in replicas[1:] if valid(b)), -1), False
    if p.leader >= 0 and valid(p.leader):
        return p.leader, False
    found = next((b for b in replicas if valid(b)), -1)
    if found >= 0:
        return found, False
    if strategy == UNCLEAN:
        found = next((b for b in replicas if acceptable_leader(state, b, exclude)
                      and b not in offline), -1)
        if found >= 0:
            return found, True
    return -1, False


def partition_change(state: ClusterMetadata, p: Partition, strategy: Election = OFFLINE,
                     target_isr: list[int] | None = None, exclude: int | None = None,
                     force_epoch_bump: bool = False) -> bool:
    """One PartitionChangeRecord: a new ISR and the election that follows it.

    An ISR that would become empty stays as it was (ELR is off), so the last
    member is remembered for a clean recovery. Returns whether anything changed.
    """
    isr = list(p.isr if target_isr is None else target_isr)
    if not isr:
        isr = list(p.isr)
    if strategy in (OFFLINE, CONTROLLED_SHUTDOWN) and unclean_allowed(state, p):
        strategy = UNCLEAN
    targets = [b for b in p.replicas if b not in p.removing_replicas] \
        if strategy == REASSIGN else p.replicas
    new, unclean = select_leader(state, p, strategy, isr, targets, exclude)
    if unclean:
        isr = [new]
    if new == p.leader and isr == p.isr and not force_epoch_bump:
        return False
    apply_change(state, p, new, isr, unclean=unclean, force_epoch_bump=force_epoch_bump)
    return True


def apply_change(state: ClusterMetadata, p: Partition, new_leader: int, isr: list[int],
                 unclean: bool = False, force_epoch_bump: bool = False) -> None:
    """Write a partition change and let the brokers act on it (LeaderAndIsr)."""
    state.before_metadata_change()
    old = p.leader
    p.isr = list(isr)
    p.partition_epoch += 1
    if new_leader != old and old >= 0:
        p.follower_hw[old] = p.high_watermark  # a deposed leader keeps its HW as a follower
    if new_leader != old or force_epoch_bump:
        p.leader = new_leader
        p.leader_epoch += 1
        p.note_leader_change(p.leader_epoch - 1, old)
        if new_leader >= 0:
            become_leader(state, p, new_leader, moved=new_leader != old)
        state.emit(LeaderChanged(topic=p.topic, partition=p.index, old=old, new=new_leader,
                   epoch=p.leader_epoch, unclean=unclean))
    c = state.controller
    if c is not None:
        # the controller's partition state machine, below this module (state_machines)
        m = c.machines
        current = m.partitions.state(p.key)
        if p.leader >= 0 and state.is_alive(p.leader):
            # Online -> Online is an election; an ISR change or an epoch bump that
            # keeps the leader (a reassignment starting) is not a transition.
            if current is not PS.OnlinePartition or new_leader != old:
                m.move_partition(p, PS.OnlinePartition)
        elif current in (PS.OnlinePartition, PS.NewPartition):
            m.move_partition(p, PS.OfflinePartition)
    if p.leader >= 0:
        advance_hw(state, p)
    state.touch(p)
    state.partition_changed(p)


def become_leader(state: ClusterMetadata, p: Partition, broker_id: int, moved: bool) -> None:
    """Partition.makeLeader on ``broker_id``: epoch start, HW, follower states."""
    log = p.logs[broker_id]
    retried: list[tuple[PendingMarker, bool]] = []
    if moved:
        retried = markers_sent_again(p, log.log_end_offset)
        # The new leader's high watermark is its own, from its last fetch.
        hw = p.follower_hw.get(broker_id, 0)
        p.high_watermark = min(max(hw, log.log_start_offset), log.log_end_offset)
        p.truncate_producer_state(log.log_end_offset)
    log.assign_epoch(p.leader_epoch, log.log_end_offset)
    for m, lacked in retried:
        rewrite_marker(state, p, m, lacked)
    p.fetcher_epoch.pop(broker_id, None)
    p.next_fetch_ms.pop(broker_id, None)
    p.reset_follower_states(state.now(), new_leader=moved)


def markers_sent_again(p: Partition, log_end: int) -> list[tuple[PendingMarker, bool]]:
    """The markers the transaction coordinator sends again to a new leader whose log
    ends at ``log_end``, in the order they were written, each with whether the new
    leader lacked it (called before the change touches the high watermark or the
    producers' state).

    WriteTxnMarkers appends with acks=-1: a marker the old leader's high watermark had
    not passed had not completed, so its leader change answered NOT_LEADER_OR_FOLLOWER
    and the coordinator retries it at the new leader (TransactionMarkerRequestCompletion
    Handler: retriable). That is every marker the new leader lacks after a clean election,
    and also one it has (fetched, but not yet by every ISR member): Kafka then holds the
    marker twice, the second of no transaction. An ABORT marker the new leader lacks
    though its write had completed (an unclean election) is written again too: without
    it the aborted data would read as committed, where Kafka leaves the transaction
    hanging open. A producer whose state moved past the marker (the emulator's
    coordinator counts a marker as written once the leader has it, so the producer may
    have gone on; Kafka's would not have let it) gets no retry.
    """
    hw = p.high_watermark
    pending = [m for m in p.unreplicated_markers if m.marker_offset >= hw]
    at = {m.marker_offset for m in pending}
    # completed ones first: every marker still pending was appended after them
    out = [PendingMarker(a.producer_id, p.producers[a.producer_id].epoch, False,
                         a.first_offset, a.last_offset)
           for a in p.aborted if a.last_offset >= log_end and a.last_offset not in at]
    out += pending
    return [(m, m.marker_offset >= log_end) for m in out
            if p.producers[m.producer_id].epoch == m.epoch
            and not 0 <= p.producers[m.producer_id].txn_first_offset]


def rewrite_marker(state: ClusterMetadata, p: Partition, m: PendingMarker, lacked: bool) -> None:
    """The coordinator's retry of marker ``m`` at the new leader, which took over before
    the marker's write completed (``markers_sent_again``).

    Kafka cannot lose a marker so: WriteTxnMarkers appends with acks=-1, and a marker
    whose leader moved before its followers had it is answered NOT_LEADER_OR_FOLLOWER
    and sent again to the new leader; until then the transaction is open there (its data
    below the last stable offset). The emulator's coordinator counts a marker as written
    once the leader has it, so the leader change writes it again at once, as the
    coordinator's retry would; it counts as unreplicated until the followers fetch it.
    Without this an aborted transaction's data stayed on the new leader with no marker
    and no aborted-transaction entry (read_committed readers were given it as
    committed), and a committed one's marker offset was missing.

    When the new leader ``lacked`` the marker but has the transaction's data (its log
    ends past the first offset), the marker ends the transaction there (an ABORT is recorded for
    read_committed). Otherwise, as on Kafka's retry, it is a marker of no ongoing
    transaction (ProducerAppendInfo.appendEndTxnMarker completes a transaction only when
    the producer has one open): a control batch and no aborted-transaction entry."""
    # the producer's state is never dropped while a marker of its is pending
    # (complete_txn makes both; nothing expires producers here)
    entry = p.producers[m.producer_id]
    if lacked and 0 <= m.first_offset < p.leader_log.log_end_offset:
        entry.txn_first_offset = m.first_offset
    data = control_batch(m.commit, m.producer_id, m.epoch, state.now())
    base, _, _ = p.leader_log.append_as_leader(data, p.leader_epoch, -1)
    p.complete_txn(m.producer_id, m.epoch, base, m.commit)
    if state.hooks:
        state.emit(Appended(topic=p.topic, partition=p.index, base=base, last=base))


def change_leader(state: ClusterMetadata, p: Partition, new: int, unclean: bool = False) -> bool:
    """Force ``new`` as leader (tests and tools); an unclean change resets the ISR."""
    if new == p.leader:
        return False
    isr = [new] if unclean else (p.isr if new in p.isr or new < 0 else p.isr + [new])
    apply_change(state, p, new, isr, unclean=unclean)
    return True

