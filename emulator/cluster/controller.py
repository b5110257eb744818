"""The controller: one broker's role, deciding leaders, ISRs and replica sets.

Kafka 4.x decides with KRaft's PartitionChangeBuilder; we follow its rules for every change, and keep the partition and
replica state machines of Kafka's ZooKeeper-era controller (``state_machines.py``) as the controller's
in-memory view, enforced on every transition:

- Broker failure (fencing): partitions it led go Offline; it leaves every ISR
  (unless it is the last member, which stays recorded, leader -1); each affected
  partition elects a new leader (the first acceptable ISR member in replica order,
  or with unclean.leader.election.enable the first acceptable replica, ISR reset to
  it); its replicas go Offline.
- Broker startup: its replicas go Online (their fetchers truncate where the leader's
  epoch history says they diverged, then catch up and rejoin the ISR by the
  leader's rules); Offline and New partitions try to elect a leader.
- Controlled shutdown: the broker is no longer an acceptable leader; it leaves every
  ISR and leaderships move to other ISR members before it stops.
- Reassignment (emulator.cluster.reassignment: started and cancelled by
  AlterPartitionReassignments, completed by ``reassignment.on_isr_change`` when every
  target replica is in sync, or by any of the controller's own partition changes whose
  ISR allows it: they all go through ``reassignment.partition_change``, as every
  change goes through PartitionChangeBuilder in Kafka).
- Preferred leader election (ElectLeaders, auto.leader.rebalance.enable).
- Controller failover: the role moves to the lowest live broker id, the controller
  epoch goes up, and the new controller rebuilds its state machines from the
  metadata (which survives, as the metadata log does) and tries to elect leaderless
  partitions. It completes no reassignment itself: a KRaft controller completes one
  in the partition change that makes its ISR allow it, so none is left to resume.

Every change bumps the partition epoch; a leader change (or a replica-set shrink)
bumps the leader epoch. Functions take the cluster's data (``ClusterMetadata``);
the active controller is ``state.controller`` (typed there as
``ports.ControllerRole``: the cluster's data sits below this module).

The controller is the only writer of leadership and replica sets: its partition
changes and elections go through ``reassignment.partition_change`` (a reassignment's
completion first, then ``emulator.cluster.leadership``'s election), reassignments
through ``emulator.cluster.reassignment``; both sit below this module and move the
controller's state machines (``ControllerStateMachines``, emulator.cluster.
state_machines, below them all) without calling this role back. Replication tells
the controller of ISR changes through its ``isr_listeners`` (AlterPartition), so
nothing below imports or calls this module.
"""


from __future__ import annotations

from emulator.cluster.events import (
    BrokerCrashed,
    BrokerHalted,
    BrokerStarted,
    BrokerStopped,
    ControlledShutdown,
    ControllerChanged,
    ControllerFailover,
    LogDirFailed,
)
from emulator.cluster.leadership import (
    CONTROLLED_SHUTDOWN,
    OFFLINE,
    PREFERRED,
    REASSIGN,
    UNCLEAN,
    acceptable_leader,
    apply_change,
    change_leader,
    select_leader,
    unclean_allowed,
)
from emulator.cluster.log_dirs import (
    is_offline,
    live_log_dirs,
    metadata_log_dir,
    replica_log_dir,
)
from emulator.cluster.metadata import ClusterMetadata
from emulator.cluster.partition import Partition
from emulator.cluster.ports import ControllerRole
from emulator.cluster.reassignment import partition_change
from emulator.cluster.state_machines import (
    ControllerStateMachines,
    PartitionState,
    ReplicaState,
)

PS = PartitionState
RS = ReplicaState

DEFAULT_UNCLEAN_INTERVAL_MS = 300_000  # unclean.leader.election.interval.ms


def _conf(state: ClusterMetadata, key: str, default: str) -> str:
    try:
        return state.broker_config(key)
    except KeyError:
        return default


class Controller:
    """The active controller: which broker holds the role, its epoch, failover and its
    timers; its in-memory state machines are ``machines`` (ports.ControllerRole)."""

    def __init__(self, state: ClusterMetadata, broker_id: int, epoch: int) -> None:
        self.state = state
        self.broker_id = broker_id
        self.epoch = epoch
        self.machines = ControllerStateMachines(state.emit)
        now = state.now()
        self.next_rebalance_ms = now + self.rebalance_interval_ms()
        self.next_unclean_ms = now + int(_conf(state, "unclean.leader.election.interval.ms",
                                               str(DEFAULT_UNCLEAN_INTERVAL_MS)))

    def __repr__(self) -> str:
        return f"Controller(broker={self.broker_id}, epoch={self.epoch})"

    def rebalance_interval_ms(self) -> int:
        return int(self.state.broker_config("leader.imbalance.check.interval.seconds")) * 1000

    # ---- failover ------------------------------------------------------------------------
    def on_controller_failover(self) -> None:
        """Seed 002's onControllerFailover: rebuild the state machines, then elect where
        a leader is missing (no reassignment is left complete but not completed: every
        partition change checks that as it is made)."""
        st = self.state
        m = self.machines
        m.clear()
        for p in all_partitions(st):
            for b in _replica_set(p):
                m.replicas.set_initial((p.topic, p.index, b), RS.OnlineReplica
                                       if st.is_alive(b) else RS.OfflineReplica)
            if p.leader >= 0 and st.is_alive(p.leader):
                initial = PS.OnlinePartition
            elif p.leader < 0 and p.leader_epoch == 0:
                initial = PS.NewPartition
            else:
                initial = PS.OfflinePartition
            m.partitions.set_initial(p.key, initial)
        for key, s in m.replicas:
            if s is RS.OnlineReplica:
                m.replicas.transition(key, RS.OnlineReplica)
        trigger_online_partitions(st, m)
        st.emit(ControllerFailover(controller=self.broker_id, epoch=self.epoch))

    # ---- periodic work -------------------------------------------------------------------
    def tick(self, now: int) -> bool:
        st = self.state
        changed = False
        if now >= self.next_unclean_ms:
            self.next_unclean_ms = now + int(_conf(st, "unclean.leader.election.interval.ms",
                                                   str(DEFAULT_UNCLEAN_INTERVAL_MS)))
            changed |= self.elect_unclean_leaders()
        if now >= self.next_rebalance_ms:
            self.next_rebalance_ms = now + self.rebalance_interval_ms()
            if st.config_bool("auto.leader.rebalance.enable"):
                changed |= auto_rebalance(st) > 0
        return changed

    def elect_unclean_leaders(self) -> bool:
        """Leaderless partitions of topics that allow it (unclean.leader.election.interval.ms)."""
        changed = False
        for p in all_partitions(self.state):
            if p.leader < 0 and unclean_allowed(self.state, p):
                # the topic allows it: partition_change's default election is unclean
                changed |= partition_change(self.state, p)
        return changed


# ---- helpers ----------------------------------------------------------------------------
def all_partitions(state: ClusterMetadata) -> list[Partition]:
    return [p for t in state.topics.values() for p in t.partitions]


def _replica_set(p: Partition) -> list[int]:
    return list(dict.fromkeys(p.replicas + p.adding_replicas + p.removing_replicas))


def trigger_online_partitions(state: ClusterMetadata, machines: ControllerStateMachines
                              ) -> None:
    """Offline and New partitions -> Online, with the offline leader selector."""
    for p in all_partitions(state):
        if machines.partitions.state(p.key) in (PS.OfflinePartition, PS.NewPartition):
            partition_change(state, p)  # unclean where the topic allows it


# ---- controller election -----------------------------------------------------------------
def elect_controller(state: ClusterMetadata) -> ControllerRole | None:
    """Give the role to the lowest live broker if the current one is gone.

    The new controller gets the next controller epoch and resumes the old one's
    unfinished work (``on_controller_failover``).
    """
    c = state.controller
    if c is not None and state.is_alive(c.broker_id):
        return c
    alive = state.alive_brokers()
    if not alive:
        state.controller = None
        state.emit(ControllerChanged(controller=-1))
        return None
    state.controller_epoch += 1
    new = Controller(state, alive[0], state.controller_epoch)
    state.controller = new
    state.emit(ControllerChanged(controller=new.broker_id, epoch=new.epoch))
    new.on_controller_failover()
    return new


def auto_rebalance(state: ClusterMetadata) -> int:
    """auto.leader.rebalance.enable: preferred elections for imbalanced brokers.

    Per preferred broker (replicas[0]), the imbalance ratio is the share of its
    preferred partitions it does not lead; above
    leader.imbalance.per.broker.percentage (ZooKeeper KafkaController's rule;
    KRaft acts on any imbalance, as with 0) those partitions elect preferred
    leaders; a partition being reassigned too (KRaft's imbalanced partitions are all
    those not led by their first replica, the first target replica during a
    reassignment; ZooKeeper's controller skipped them). Returns the number of
    leaders moved.
    """
    pct = int(state.broker_config("leader.imbalance.per.broker.percentage"))
    by_preferred: dict[int, list[Partition]] = {}
    for p in all_partitions(state):
        if p.replicas:
            by_preferred.setdefault(p.replicas[0], []).append(p)
    moved = 0
    for broker, parts in sorted(by_preferred.items()):
        if not acceptable_leader(state, broker):
            continue
        imbalanced = [p for p in parts if p.leader != broker]
        if not imbalanced or len(imbalanced) * 100 <= pct * len(parts):
            continue
        for p in imbalanced:
            if partition_change(state, p, PREFERRED) and p.leader == broker:
                moved += 1
    if moved:
        state.changed()
    return moved


# ---- brokers -----------------------------------------------------------------------------
def broker_stopped(state: ClusterMetadata, broker_id: int) -> None:
    """A broker died (or finished a controlled shutdown): fence it (onBrokerFailure).

    Seed 002's order: partitions it led go Offline, its replicas go Offline (it
    leaves every ISR), the partitions it left elect. When the broker was the
    controller, the metadata change is made first and the new controller then
    rebuilds its state machines from it (KRaft fences through the new controller).
    """
    b = state.brokers[broker_id]
    state.pending_fence.pop(broker_id, None)
    b.crashed = b.unregistered = False
    if not b.alive:
        return
    b.alive = False
    c = state.controller
    if c is not None and c.broker_id == broker_id:
        state.controller = c = None
    if c is not None:
        for p in all_partitions(state):
            if p.leader == broker_id:
                c.machines.move_partition(p, PS.OfflinePartition)
        for p in all_partitions(state):
            if broker_id in _replica_set(p):
                c.machines.move_replica(p, broker_id, RS.OfflineReplica)
    for p in all_partitions(state):
        if broker_id in p.isr or p.leader == broker_id:
            partition_change(state, p, OFFLINE,
                             target_isr=[r for r in p.isr if r != broker_id],
                             exclude=broker_id)
    state.shutting_down.discard(broker_id)
    # No other partition elects (handleBrokerFenced looks at the broker's ISRs only):
    # a leaderless one waits for its own trigger (a broker's return, the periodic
    # unclean check).
    if state.controller is None:
        elect_controller(state)
    state.emit(BrokerStopped(broker=broker_id))
    state.changed()


def broker_unregistered(state: ClusterMetadata, broker_id: int) -> None:
    """UnregisterBroker of a running broker under Kafka's timing: the controller drops
    its registration and fences it as a stopped one (it leaves Metadata's brokers and
    every ISR, its partitions elect other leaders, replica sets keep it), while its
    process keeps running and answering, until it restarts (measured on Kafka 4.4:
    still out after 20 s; docs/fidelity.md, unregister-running-broker)."""
    b = state.brokers[broker_id]
    if not b.alive or b.crashed:
        return
    broker_stopped(state, broker_id)
    b.unregistered = True


def controlled_shutdown(state: ClusterMetadata, broker_id: int) -> list[tuple[str, int]]:
    """Move leadership and ISR membership off a broker before it stops.

    KRaft's enterControlledShutdown: the broker is no longer an acceptable leader
    and leaves every ISR; partitions it led elect another ISR member. Where it was
    the only ISR member the ISR keeps it and the partition goes leaderless (ELR
    off). Returns those leaderless partitions. A controller shutting down hands
    its role over first.
    """
    if not state.is_alive(broker_id):
        return []
    state.shutting_down.add(broker_id)
    c = state.controller
    if c is not None and c.broker_id == broker_id:
        others = [b for b in state.alive_brokers() if b not in state.shutting_down]
        if others:
            state.controller_epoch += 1
            new = Controller(state, others[0], state.controller_epoch)
            state.controller = c = new
            state.emit(ControllerChanged(controller=new.broker_id, epoch=new.epoch))
            new.on_controller_failover()
    stranded = []
    for p in all_partitions(state):
        if broker_id in p.isr or p.leader == broker_id:
            was_leader = p.leader == broker_id
            partition_change(state, p, CONTROLLED_SHUTDOWN,
                             target_isr=[r for r in p.isr if r != broker_id],
                             exclude=broker_id)
            if was_leader and p.leader < 0:
                stranded.append(p.key)
        if c is not None and broker_id in _replica_set(p):
            c.machines.move_replica(p, broker_id, RS.OfflineReplica)
    state.emit(ControlledShutdown(broker=broker_id))
    state.changed()
    return stranded


def crash_fence_delay(state: ClusterMetadata, fence_after_ms: int | None = None) -> int:
    """How long a crashed broker stays unfenced: the explicit value, else the
    broker.session.timeout.ms given at startup, else 0 (fenced at once)."""
    if fence_after_ms is not None:
        return fence_after_ms
    return int(state.static_overrides.get("broker.session.timeout.ms", "0"))


def broker_crashed(state: ClusterMetadata, broker_id: int,
                   fence_after_ms: int | None = None) -> None:
    """A broker's process died; the controller fences it after ``fence_after_ms``
    (default: ``crash_fence_delay``).

    Kafka's controller only learns of a crash when the broker's heartbeats stop for
    broker.session.timeout.ms (9 s by default). Until then the broker stays registered
    and unfenced: metadata still names it leader and in-sync replica, its partitions
    take no writes, and their followers fall behind. With 0 it is fenced at once (the
    emulator's default, for fast suites).
    """
    b = state.brokers[broker_id]
    fence_after_ms = crash_fence_delay(state, fence_after_ms)
    if fence_after_ms <= 0 or not b.alive:
        broker_stopped(state, broker_id)
        return
    if b.crashed:
        return
    b.crashed = True
    state.pending_fence[broker_id] = state.now() + fence_after_ms
    state.emit(BrokerCrashed(broker=broker_id, fence_after_ms=fence_after_ms))
    state.changed()


def broker_started(state: ClusterMetadata, broker_id: int) -> None:
    """A broker came back (onBrokerStartup): its replicas go online and catch up.

    Back before its old self was fenced, it registers as a new incarnation, and the
    controller fences the old one first (its leaderships and ISR places go).
    """
    b = state.brokers[broker_id]
    if b.crashed:
        broker_stopped(state, broker_id)
    if b.alive:
        return
    b.alive = True  # (not shutting down: broker_stopped took it out of that set)
    _log_dirs_back(state, broker_id)
    c = elect_controller(state)  # the current one while it lives
    for p in all_partitions(state):
        if broker_id not in _replica_set(p):
            continue
        # its fetcher restarts: it must check for divergence before fetching
        p.fetcher_epoch.pop(broker_id, None)
        if c is not None:
            c.machines.move_replica(p, broker_id, RS.OnlineReplica)
    if c is not None:
        # Only leaderless partitions change here; each completes a reassignment its ISR
        # allows before the election (Kafka checks on the ISR before the election, so
        # a led partition whose unclean leader's ISR of one allows it completes with its
        # next AlterPartition, not here).
        trigger_online_partitions(state, c.machines)
    state.emit(BrokerStarted(broker=broker_id))
    state.changed()

# ---- log directories ---------------------------------------------------------------------
def log_dir_failed(state: ClusterMetadata, broker_id: int, path: str, reason: str) -> bool:
    """A write to one of the broker's log directories failed: what Kafka 4.4 does next.

    The broker (ReplicaManager.handleLogDirFailure): every replica it hosts in that
    directory goes offline (``p.offline``: KAFKA_STORAGE_ERROR to produce and fetch,
    its fetchers stop). If no directory is left, or the failed one holds the metadata
    log, the broker halts (Exit.halt(1)): a crash, fenced after the session timeout.
    Otherwise its next heartbeat names the directory, and the controller
    (ReplicationControlManager.handleDirectoriesOffline) removes those replicas from
    their ISRs and elects other leaders, as when fencing a broker, for those
    partitions only: every partition with a replica in the directory, in the ISR or
    not (a leaderless one of a topic allowing unclean elections gets its unclean
    leader there and then), and no other (the rest wait for their own triggers: a
    broker's return, the periodic unclean check). The directory stays offline until
    the broker restarts.
    Returns whether the broker halted; False as well when the directory had already
    failed (the LogDirFailureChannel reports a directory once).
    """
    if not state.is_running(broker_id):
        return False  # a stopped or halted broker writes nothing
    failed = state.offline_log_dirs.setdefault(broker_id, set())
    if path in failed:
        return False
    failed.add(path)
    hit = []
    for t in list(state.topics.values()):
        for p in t.partitions:
            if broker_id in p.logs and replica_log_dir(state, broker_id, t.name,
                                                       p.index) == path:
                p.offline.add(broker_id)
                state.partition_changed(p)
                hit.append(p)
    state.emit(LogDirFailed(broker=broker_id, log_dir=path, reason=reason))
    if not live_log_dirs(state, broker_id) or path == metadata_log_dir(state, broker_id):
        why = (f"all log dirs of broker {broker_id} have failed" if not
               live_log_dirs(state, broker_id) else f"the metadata log dir {path} has failed")
        state.emit(BrokerHalted(broker=broker_id, reason=why))
        broker_crashed(state, broker_id)
        return True
    c = state.controller
    for p in hit:
        # the broker's replica is in p.offline now: no election picks it
        partition_change(state, p, OFFLINE, target_isr=[r for r in p.isr if r != broker_id])
        if c is not None:
            c.machines.move_replica(p, broker_id, RS.OfflineReplica)
    state.changed()
    return False


def _place_in_live_dirs(state: ClusterMetadata, p: Partition) -> None:
    """A new replica never goes to a failed log dir (LogManager picks among the live
    ones): where its usual dir failed, the broker's first live dir takes it."""
    for b in p.replicas:
        if is_offline(state, b, replica_log_dir(state, b, p.topic, p.index)):
            live = live_log_dirs(state, b)
            if live:
                state.replica_dir_moves[(p.topic, p.index, b)] = live[0]


def _log_dirs_back(state: ClusterMetadata, broker_id: int) -> None:
    """A restarted broker opens its log directories afresh (LogManager's startup): the
    failed ones are online again; a storage fault still in force fails them again at
    their next write or checkpoint."""
    if state.offline_log_dirs.pop(broker_id, None) is None:
        return
    for p in all_partitions(state):
        if broker_id in p.offline:
            p.offline.discard(broker_id)
            state.partition_changed(p)


# ---- topics ----------------------------------------------------------------------------
def on_new_partition(state: ClusterMetadata, p: Partition) -> None:
    """onNewPartitionCreation: New, then Online with the first live replica leading."""
    if state.offline_log_dirs:
        _place_in_live_dirs(state, p)
    c = state.controller
    if c is not None:
        c.machines.move_partition(p, PS.NewPartition)
        for b in p.replicas:
            c.machines.move_replica(p, b, RS.NewReplica)
    p.isr = [b for b in p.replicas if state.is_alive(b) and b not in state.shutting_down]
    p.leader = p.isr[0] if p.isr else -1
    if p.leader < 0:
        p.isr = list(p.replicas)  # remembered; the first to come back leads
        p.leader = -1
    else:
        p.leader_log.assign_epoch(p.leader_epoch, 0)
    p.reset_follower_states(state.now())
    if c is not None:
        if p.leader >= 0:
            c.machines.move_partition(p, PS.OnlinePartition)
        for b in p.replicas:
            c.machines.move_replica(p, b, RS.OnlineReplica if state.is_alive(b)
                                    else RS.OfflineReplica)


def on_partition_deletion(state: ClusterMetadata, p: Partition) -> None:
    """Topic deletion: partitions and replicas go Offline, then NonExistent."""
    if state.replica_dir_moves:
        for b in _replica_set(p):
            state.replica_dir_moves.pop((p.topic, p.index, b), None)
    c = state.controller
    if c is None:
        return
    m = c.machines
    if m.partitions.state(p.key) is not PS.NonExistentPartition:
        m.move_partition(p, PS.OfflinePartition)
        m.move_partition(p, PS.NonExistentPartition)
    for b in _replica_set(p):
        key = (p.topic, p.index, b)
        if m.replicas.state(key) is not RS.NonExistentReplica:
            m.move_replica(p, b, RS.OfflineReplica)
            m.move_replica(p, b, RS.NonExistentReplica)


def fence_due(state: ClusterMetadata, now: int) -> None:
    """Fence the crashed brokers whose session timed out (the controller notices)."""
    for broker_id, deadline in sorted(state.pending_fence.items()):
        if now >= deadline:
            broker_stopped(state, broker_id)


__all__ = [
    "CONTROLLED_SHUTDOWN", "OFFLINE", "PREFERRED", "REASSIGN", "UNCLEAN", "Controller",
    "apply_change", "auto_rebalance", "broker_crashed", "broker_started",
    "broker_stopped", "broker_unregistered", "change_leader", "controlled_shutdown", "crash_fence_delay",
    "elect_controller", "fence_due", "log_dir_failed", "on_new_partition",
    "on_partition_deletion", "partition_change", "select_leader", "trigger_online_partitions",
]
