"""Partition reassignment as Kafka's KRaft controller does it (KIP-455, KAFKA-42).

Everything here follows ``ReplicationControlManager`` (RCM), ``PartitionChangeBuilder``
(PCB), ``PartitionReassignmentReplicas`` and ``PartitionReassignmentRevert``
(what a user sees of it: docs/reassignment.md):

- Validation, per partition and in Kafka's order, with Kafka's messages: unknown
  topic, unknown partition, then (for a target) an empty list, unregistered brokers
  and duplicates checked in ascending broker order, then, when the request forbids
  it (v1, KIP-860), a change of replication factor. A null target cancels. One bad
  partition never stops the others.
- A request is applied atomically: every partition is checked and its change
  computed against the metadata as it was when the request arrived (the records of
  one controller write event), then all changes are applied together.
- A target is compared with the current replica list, which while a reassignment
  runs includes the replicas being added: ``replicas = target + removing`` (removing
  and adding ascending). An empty adding or removing result leaves the stored list
  as it was (PCB writes only what changes), a quirk of Kafka's we keep.
- Every change goes through ``build_change``, PCB.build without ELR: complete the
  reassignment when every target replica is in the ISR, elect (keep a valid leader,
  else the first valid target replica), bump the leader epoch when a replica leaves
  the list, write only what changed. Completion can happen in the record that
  starts the reassignment; it never moves a valid leader to the preferred replica.
- Cancelling reverts to the replicas minus the adding ones (their order as it now
  is) and the ISR minus the adding ones; an ISR that would be empty takes the first
  replica, which needs the topic's unclean.leader.election.enable.

Replication does the rest: a new replica starts as an empty log and catches up by
fetching from the leader (``Followers.replicate_partition``, throttled by
``emulator.cluster.throttle``); when it joins the ISR the controller completes the
reassignment (``on_isr_change``, which the controller hears from replication),
moves the leader if it was removed, and the removed replicas' logs are deleted.

Below the controller, above leadership (``emulator.cluster.leadership``): as in Kafka,
where every PartitionChangeBuilder.build checks completion, the controller's own
partition changes (fencing, controlled shutdown, a failed log dir, a broker's return,
elections) go through ``partition_change`` here, which completes a reassignment the new
ISR allows before electing. ``start_reassignment``, ``cancel_partition_reassignment``
and ``maybe_complete_reassignment`` are the entry points for tests and tools.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from emulator.cluster import leadership
from emulator.cluster.events import ReassignmentCompleted, ReassignmentsAltered, ReassignmentStarted
from emulator.cluster.metadata import MAX_RECORDS_PER_USER_OP, ClusterMetadata, Topic
from emulator.cluster.partition import Partition
from emulator.cluster.state_machines import ReplicaState
from wire.errors import ErrorCode as E
from wire.errors import KafkaError

ONLINE = leadership.OFFLINE  # PCB's Election.ONLINE: keep a valid leader, else the first valid
UNCLEAN = leadership.UNCLEAN
PREFERRED = leadership.PREFERRED


# ---- PartitionReassignmentReplicas and PartitionReassignmentRevert ------------------------
@dataclass(frozen=True)
class ReassignmentReplicas:
    """The replica lists of a reassignment (Kafka's PartitionReassignmentReplicas)."""

    replicas: list[int]
    adding: list[int]
    removing: list[int]

    @classmethod
    def of(cls, current: Sequence[int], target: Sequence[int]) -> ReassignmentReplicas:
        """From the current list (adding replicas included) to a target.

        [3,2,1,0] -> [7,3,1,9] gives replicas [7,3,1,9,0,2], adding [7,9], removing [0,2].
        """
        removing = sorted(set(current) - set(target))
        adding = sorted(set(target) - set(current))
        return cls(list(target) + removing, adding, removing)

    @property
    def in_progress(self) -> bool:
        return bool(self.adding or self.removing)

    def maybe_complete(self, isr: Sequence[int]) -> tuple[list[int], list[int]] | None:
        """(replicas, ISR) once every target replica is in the ISR, else None."""
        if not self.in_progress:
            return None
        new_isr, new_replicas = list(isr), list(self.replicas)
        if self.removing:
            new_isr = [b for b in isr if b not in self.removing]
            if not new_isr:
                return None
            new_replicas = [b for b in self.replicas if b not in self.removing]
            if not new_replicas:
                return None
        if not set(new_replicas) <= set(new_isr):
            return None
        return new_replicas, new_isr

    def original_replicas(self) -> list[int]:
        return [b for b in self.replicas if b not in self.adding]


@dataclass(frozen=True)
class Revert:
    """What cancelling leaves (Kafka's PartitionReassignmentRevert)."""

    replicas: list[int]
    isr: list[int]
    unclean: bool

    @classmethod
    def of(cls, p: Partition) -> Revert:
        r = ReassignmentReplicas(list(p.replicas), list(p.adding_replicas),
                                 list(p.removing_replicas))
        replicas = r.original_replicas()
        isr = [b for b in p.isr if b not in r.adding]
        if isr:
            return cls(replicas, isr, False)
        if not replicas:
            raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT, "Invalid replica assignment: "
                             "addingReplicas contains all replicas.")
        return cls(replicas, [replicas[0]], True)


def is_reassigning(p: Partition) -> bool:
    return bool(p.adding_replicas or p.removing_replicas)


# ---- PartitionChangeBuilder ---------------------------------------------------------------
@dataclass
class PartitionChange:
    """One PartitionChangeRecord: only the fields that change are set (None = same).

    ``leader`` set to the current leader means "bump the leader epoch".
    """

    topic: str
    index: int
    leader: int | None = None
    isr: list[int] | None = None
    replicas: list[int] | None = None
    adding: list[int] | None = None
    removing: list[int] | None = None
    unclean: bool = False

    def is_noop(self) -> bool:
        return (self.leader is None and self.isr is None and self.replicas is None
                and self.adding is None and self.removing is None)


def build_change(state: ClusterMetadata, p: Partition, *, isr: list[int] | None = None,
                 replicas: list[int] | None = None, adding: list[int] | None = None,
                 removing: list[int] | None = None,
                 election: leadership.Election = ONLINE) -> PartitionChange | None:
    """PartitionChangeBuilder.build with ELR off; None when nothing would change."""
    t_isr = list(p.isr if isr is None else isr)
    t_replicas = list(p.replicas if replicas is None else replicas)
    t_adding = list(p.adding_replicas if adding is None else adding)
    t_removing = list(p.removing_replicas if removing is None else removing)
    done = ReassignmentReplicas(t_replicas, t_adding, t_removing).maybe_complete(t_isr)
    if done is not None:
        t_replicas, t_isr = done
        t_adding, t_removing = [], []
    rec = PartitionChange(p.topic, p.index)
    leader, unclean = leadership.select_leader(state, p, election, t_isr, t_replicas)
    if leader != p.leader:
        rec.leader = leader
        if unclean:
            rec.isr, rec.unclean = [leader], True
    elif not set(p.replicas) <= set(t_replicas):
        rec.leader = p.leader  # a replica left the list: the leader epoch must move
    if rec.isr is None and t_isr and t_isr != p.isr:
        rec.isr = t_isr
    if t_replicas and t_replicas != p.replicas:
        rec.replicas = t_replicas
    if t_removing != p.removing_replicas:
        rec.removing = t_removing
    if t_adding != p.adding_replicas:
        rec.adding = t_adding
    return None if rec.is_noop() else rec


def replay_change(state: ClusterMetadata, p: Partition, rec: PartitionChange) -> None:
    """Replay a change (the controller's replay of a PartitionChangeRecord): new
    replicas start empty, the leader and ISR are written through
    ``leadership.apply_change`` (LeaderAndIsr), replicas that left the list are stopped
    and their logs deleted. Named apart from that function: this one writes replica
    sets, that one only leaders and ISRs."""
    state.before_metadata_change()
    before = set(p.replicas)
    was_reassigning = is_reassigning(p)
    if rec.replicas is not None:
        p.replicas = list(rec.replicas)
    if rec.adding is not None:
        p.adding_replicas = list(rec.adding)
    if rec.removing is not None:
        p.removing_replicas = list(rec.removing)
    added = [b for b in p.replicas if b not in before]
    gone = sorted(before - set(p.replicas))
    create_replicas(state, p, added)
    new_leader = p.leader if rec.leader is None else rec.leader
    leadership.apply_change(state, p, new_leader, p.isr if rec.isr is None else rec.isr,
                            unclean=rec.unclean, force_epoch_bump=rec.leader is not None)
    delete_replicas(state, p, gone)
    if not was_reassigning and is_reassigning(p):
        state.emit(ReassignmentStarted(topic=p.topic, partition=p.index,
                   replicas=list(p.replicas), adding=list(p.adding_replicas),
                   removing=list(p.removing_replicas)))
    elif was_reassigning and not is_reassigning(p):
        state.emit(ReassignmentCompleted(topic=p.topic, partition=p.index,
                   replicas=list(p.replicas)))
    state.changed()


def create_replicas(state: ClusterMetadata, p: Partition, brokers: Iterable[int]) -> None:
    """New replicas: an empty log each, NewReplica then Online (or Offline if down)."""
    c = state.controller
    for b in brokers:
        p.add_replica(b)
        p.fetcher_epoch.pop(b, None)
        if c is not None:
            c.machines.move_replica(p, b, ReplicaState.NewReplica)
            c.machines.move_replica(p, b, ReplicaState.OnlineReplica if state.is_alive(b)
                                    else ReplicaState.OfflineReplica)


def delete_replicas(state: ClusterMetadata, p: Partition, brokers: Iterable[int]) -> None:
    """Removed replicas: StopReplica with deletion (Offline, then NonExistent)."""
    c = state.controller
    for b in brokers:
        if c is not None:
            c.machines.move_replica(p, b, ReplicaState.OfflineReplica)
            c.machines.move_replica(p, b, ReplicaState.NonExistentReplica)
        p.delete_replica(b)


# ---- validation -----------------------------------------------------------------------
def find_partition(state: ClusterMetadata, topic: str, index: int) -> tuple[Topic, Partition]:
    """RCM.alterPartitionReassignment's lookups, with its messages."""
    t = state.topics.get(topic)
    if t is None:
        raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find a topic named {topic}.")
    if not 0 <= index < len(t.partitions):
        raise KafkaError(E.UNKNOWN_TOPIC_OR_PARTITION,
                         f"Unable to find partition {topic}:{index}.")
    return t, t.partitions[index]


def validate_assignment(state: ClusterMetadata, replicas: Sequence[int]) -> None:
    """RCM.validateManualPartitionAssignment: brokers checked in ascending order.

    A registered broker passes even when fenced (down); one an UnregisterBroker took out
    while it runs (--fidelity kafka) does not: Kafka's controller dropped its
    registration (UnregisterBrokerRecord)."""
    if not replicas:
        raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment "
                         "includes an empty replica list.")
    prev = None
    for b in sorted(replicas):
        if b not in state.brokers or state.brokers[b].unregistered:
            raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment "
                             f"includes broker {b}, but no such broker is registered.")
        if b == prev:
            raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment "
                             f"includes the broker {b} more than once.")
        prev = b


def validate_rf_unchanged(p: Partition, target: Sequence[int]) -> None:
    """KIP-860 (4.1): the current RF is |replicas|, or |(replicas + adding) - removing|
    while a reassignment runs; a target of another size is refused."""
    if is_reassigning(p):
        current = len((set(p.replicas) | set(p.adding_replicas)) - set(p.removing_replicas))
    else:
        current = len(p.replicas)
    if current != len(target):
        raise KafkaError(E.INVALID_REPLICATION_FACTOR, "The replication factor is changed "
                         f"from {current} to {len(target)}")


def unclean_allowed(state: ClusterMetadata, t: Topic) -> bool:
    return state.topic_config(t, "unclean.leader.election.enable").lower() == "true"


# ---- the two operations -------------------------------------------------------------------
def change_reassignment(state: ClusterMetadata, p: Partition, target: Sequence[int],
                        allow_rf_change: bool = True) -> PartitionChange | None:
    """RCM.changePartitionReassignment: validate, then the record (None: no change)."""
    validate_assignment(state, target)
    if not allow_rf_change:
        validate_rf_unchanged(p, target)
    r = ReassignmentReplicas.of(p.replicas, target)
    return build_change(
        state, p,
        replicas=r.replicas if r.replicas != p.replicas else None,
        removing=r.removing or None,  # an empty result leaves the stored list alone
        adding=r.adding or None)


def cancel_reassignment(state: ClusterMetadata, t: Topic, p: Partition) -> PartitionChange | None:
    """RCM.cancelPartitionReassignment (PartitionReassignmentRevert)."""
    if not is_reassigning(p):
        raise KafkaError(E.NO_REASSIGNMENT_IN_PROGRESS)  # generic: a null message
    revert = Revert.of(p)
    allowed = unclean_allowed(state, t)
    if revert.unclean and not allowed:
        raise KafkaError(E.INVALID_REPLICA_ASSIGNMENT, "Unable to revert partition assignment "
                         f"for {t.name}:{p.index} because it would require an unclean "
                         "leader election.")
    return build_change(state, p, isr=revert.isr, replicas=revert.replicas, adding=[],
                        removing=[], election=UNCLEAN if allowed else ONLINE)


@dataclass
class PartitionResult:
    index: int
    error_code: int = 0
    error_message: str | None = None


@dataclass
class TopicResult:
    name: str
    partitions: list[PartitionResult] = field(default_factory=list)


def alter_partition_reassignments(
    state: ClusterMetadata,
    topics: Sequence[tuple[str, Sequence[tuple[int, Sequence[int] | None]]]],
    allow_rf_change: bool = True,
) -> list[TopicResult]:
    """RCM.alterPartitionReassignments: per-partition results, applied atomically.

    ``topics`` is [(name, [(partition index, target replicas or None to cancel)])].
    Each change is computed against the metadata as the request found it; then all
    of them are applied, in request order, with nothing else in between. Past 10,000
    changes (one PartitionChangeRecord each) the rest fail as Kafka's controller fails
    them.
    """
    results: list[TopicResult] = []
    changes: list[tuple[Partition, PartitionChange]] = []
    for name, parts in topics:
        tr = TopicResult(name)
        for index, target in parts:
            res = PartitionResult(index)
            try:
                t, p = find_partition(state, name, index)
                if target is None:
                    rec = cancel_reassignment(state, t, p)
                else:
                    rec = change_reassignment(state, p, list(target), allow_rf_change)
                if rec is not None and len(changes) >= MAX_RECORDS_PER_USER_OP:
                    # The controller's records list is full (BoundedList): Kafka 4.4 keeps
                    # the first 10,000 changes and fails each further one with
                    # UNKNOWN_SERVER_ERROR and no message (seen on a real 4.4).
                    res.error_code = E.UNKNOWN_SERVER_ERROR
                elif rec is not None:
                    changes.append((p, rec))
            except KafkaError as e:
                res.error_code, res.error_message = e.code, e.message
            tr.partitions.append(res)
        results.append(tr)
    for p, rec in changes:
        replay_change(state, p, rec)
    if changes:
        state.emit(ReassignmentsAltered(count=len(changes)))
    return results


@dataclass
class OngoingReassignment:
    index: int
    replicas: list[int]
    adding: list[int]
    removing: list[int]


def ongoing(p: Partition) -> OngoingReassignment:
    return OngoingReassignment(p.index, list(p.replicas), list(p.adding_replicas),
                               list(p.removing_replicas))


def list_partition_reassignments(
    state: ClusterMetadata, topics: Sequence[tuple[str, Sequence[int]]] | None = None,
) -> list[tuple[str, list[OngoingReassignment]]]:
    """RCM.listPartitionReassignments: every reassigning partition (``topics`` None),
    or the listed ones that are reassigning; unknown names and indexes are skipped
    and topics with nothing to show are left out."""
    out: list[tuple[str, list[OngoingReassignment]]] = []
    if topics is None:
        for t in state.topics.values():
            found = [ongoing(p) for p in t.partitions if is_reassigning(p)]
            if found:
                out.append((t.name, found))
        return out
    for name, indexes in topics:
        topic = state.topics.get(name)
        if topic is None:
            continue
        found = [ongoing(topic.partitions[i]) for i in indexes
                 if 0 <= i < len(topic.partitions) and is_reassigning(topic.partitions[i])]
        if found:
            out.append((name, found))
    return out


# ---- progress (what kafka-emulator reassign shows for moves in flight) -----------------------
@dataclass
class ReplicaProgress:
    broker: int
    bytes: int  # bytes this replica holds
    target_bytes: int  # bytes the leader holds
    log_end_offset: int
    leader_log_end_offset: int


def progress(p: Partition) -> list[ReplicaProgress]:
    """How far each adding replica has caught up with the leader, in bytes."""
    if p.leader < 0:
        return []
    leader = p.leader_log
    out = []
    for b in p.adding_replicas:
        log = p.logs.get(b)
        if log is None:
            continue
        out.append(ReplicaProgress(b, log.size_bytes, leader.size_bytes, log.log_end_offset,
                                   leader.log_end_offset))
    return out


# ---- entry points (one implementation: the AlterPartitionReassignments handler, an ISR
# change and the controller's own partition changes all go through build_change) ----
def start_reassignment(state: ClusterMetadata, p: Partition, target: list[int]) -> None:
    """changePartitionReassignment for one partition, applied at once (may complete)."""
    rec = change_reassignment(state, p, target)
    if rec is not None:
        replay_change(state, p, rec)


def maybe_complete_reassignment(state: ClusterMetadata, p: Partition) -> bool:
    """Complete a reassignment whose target replicas are all in the ISR.

    The removing replicas leave the ISR and the replica list, the leader moves only if
    it was removed, and the removed replicas' logs are deleted. False if not complete.
    """
    r = ReassignmentReplicas(list(p.replicas), list(p.adding_replicas),
                             list(p.removing_replicas))
    if r.maybe_complete(p.isr) is None:
        return False
    rec = build_change(state, p)
    if rec is None:
        return False
    replay_change(state, p, rec)
    return not is_reassigning(p)


def partition_change(state: ClusterMetadata, p: Partition,
                     strategy: leadership.Election = ONLINE, target_isr: list[int] | None = None,
                     exclude: int | None = None) -> bool:
    """The controller's own partition change (a broker fenced, in controlled shutdown or
    back, a failed log dir, an election) as PartitionChangeBuilder.build makes it: a
    running reassignment is completed first when the new ISR allows it (checked on the
    ISR before the election), then the leader is elected among the replicas left. With
    nothing to complete it is ``leadership.partition_change``. Returns whether anything
    changed.

    ``exclude`` matters only there: its callers exclude a broker already fenced or in
    controlled shutdown, which no election takes anyway. After a completion the replicas
    are all in the ISR, so an unclean election would find no other leader than a clean
    one: the strategy goes to the election as it is.
    """
    isr = list(p.isr if target_isr is None else target_isr)
    r = ReassignmentReplicas(list(p.replicas), list(p.adding_replicas),
                             list(p.removing_replicas))
    if r.maybe_complete(isr) is None:
        return leadership.partition_change(state, p, strategy, target_isr, exclude)
    rec = build_change(state, p, isr=isr, election=strategy)
    assert rec is not None  # a completion always changes the replica lists
    replay_change(state, p, rec)
    return True


def cancel_partition_reassignment(state: ClusterMetadata, p: Partition) -> None:
    """cancelPartitionReassignment: back to the replicas minus the adding ones."""
    rec = cancel_reassignment(state, state.topics[p.topic], p)
    if rec is not None:
        replay_change(state, p, rec)


def on_isr_change(state: ClusterMetadata, p: Partition) -> None:
    """An AlterPartition reached the controller: a reassignment may now complete."""
    if p.adding_replicas or p.removing_replicas:
        maybe_complete_reassignment(state, p)


__all__ = [
    "ONLINE", "PREFERRED", "UNCLEAN", "OngoingReassignment", "PartitionChange",
    "PartitionResult", "ReassignmentReplicas", "ReplicaProgress", "Revert", "TopicResult",
    "alter_partition_reassignments", "build_change",
    "cancel_partition_reassignment", "cancel_reassignment", "change_reassignment", "create_replicas", "delete_replicas", "find_partition",
    "is_reassigning", "list_partition_reassignments",
    "maybe_complete_reassignment", "on_isr_change", "partition_change", "progress", "replay_change", "start_reassignment", "unclean_allowed",
    "validate_assignment", "validate_rf_unchanged",
]
