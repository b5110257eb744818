"""The controller's reaction to brokers going down and coming back.

Kafka's KRaft controller (seed 003, specs/reassignment.md section 4): when a
broker is fenced, every partition it led elects a new leader from the live ISR
(or, with unclean.leader.election.enable, from any live replica), and the broker
leaves every ISR it was in, except that the last ISR member stays recorded so
that the partition can come back without data loss. Each leader change bumps the
leader epoch; every change bumps the partition epoch. A returning broker's
replicas truncate to where the leader's epoch history says they diverged, catch
up by fetching, and rejoin the ISR by the usual rule.
"""

from __future__ import annotations

from emulator.cluster.partition import Partition
from emulator.cluster.state import ClusterState


def _unclean_allowed(state: ClusterState, p: Partition) -> bool:
    t = state.topics.get(p.topic)
    return t is not None and state.topic_config(t, "unclean.leader.election.enable") == "true"


def elect_leader(state: ClusterState, p: Partition, exclude: int | None = None,
                 allow_unclean: bool | None = None) -> bool:
    """Offline-partition leader selection: first live ISR member in replica order."""
    live_isr = [b for b in p.replicas if b in p.isr and b != exclude and state.is_alive(b)]
    new = live_isr[0] if live_isr else -1
    unclean = False
    if new < 0:
        if allow_unclean is None:
            allow_unclean = _unclean_allowed(state, p)
        if allow_unclean:
            live = [b for b in p.replicas if b != exclude and state.is_alive(b)]
            if live:
                new, unclean = live[0], True
    return change_leader(state, p, new, unclean=unclean)


def change_leader(state: ClusterState, p: Partition, new: int, unclean: bool = False) -> bool:
    if new == p.leader:
        return False
    now = state.now()
    old = p.leader
    p.leader = new
    p.leader_epoch += 1
    p.partition_epoch += 1
    if new >= 0:
        log = p.logs[new]
        if unclean:
            p.isr = [new]
            p.high_watermark = min(p.high_watermark, log.log_end_offset)
        p.high_watermark = min(p.high_watermark, log.log_end_offset)
        log.assign_epoch(p.leader_epoch, log.log_end_offset)
        p.reset_follower_states(now)
    state.emit("leader_change", topic=p.topic, partition=p.index, old=old, new=new,
               epoch=p.leader_epoch, unclean=unclean)
    return True


def broker_stopped(state: ClusterState, broker_id: int) -> None:
    """A broker died (or finished a controlled shutdown): fence it."""
    b = state.brokers[broker_id]
    if not b.alive:
        return
    b.alive = False
    for t in state.topics.values():
        for p in t.partitions:
            if broker_id not in p.replicas:
                continue
            if p.leader == broker_id:
                elect_leader(state, p, exclude=broker_id)
            if broker_id in p.isr and len(p.isr) > 1:
                p.isr.remove(broker_id)
                p.partition_epoch += 1
                state.isr_shrinks += 1
            if p.leader >= 0:
                p.maybe_advance_hw()
    if state.controller_id == broker_id:
        state.elect_controller()
    state.emit("broker_stopped", broker=broker_id)
    state.changed()


def controlled_shutdown(state: ClusterState, broker_id: int) -> None:
    """Move leadership off a broker before it stops (Kafka's controlled shutdown)."""
    for t in state.topics.values():
        for p in t.partitions:
            if p.leader == broker_id:
                elect_leader(state, p, exclude=broker_id, allow_unclean=False)
            if broker_id in p.isr and len(p.isr) > 1:
                p.isr.remove(broker_id)
                p.partition_epoch += 1
    state.changed()


def broker_started(state: ClusterState, broker_id: int) -> None:
    """A broker came back: truncate divergent replicas, lead what it can, catch up."""
    b = state.brokers[broker_id]
    if b.alive:
        return
    b.alive = True
    for t in state.topics.values():
        for p in t.partitions:
            if broker_id not in p.replicas:
                continue
            if p.leader < 0:
                if broker_id in p.isr:
                    change_leader(state, p, broker_id)
                continue
            truncate_follower(p, broker_id)
    if state.controller_id < 0 or state.controller_id not in state.alive_brokers():
        state.elect_controller()
    state.emit("broker_started", broker=broker_id)
    state.changed()


def truncate_follower(p: Partition, broker_id: int) -> None:
    """Truncate a follower's log where it diverges from the leader's epoch history."""
    log = p.logs[broker_id]
    leader_log = p.leader_log
    epoch = log.latest_epoch
    if epoch < 0:
        log.truncate_to(min(log.log_end_offset, leader_log.log_end_offset))
        return
    found, end = leader_log.end_offset_for_epoch(epoch)
    if found < 0:
        log.truncate_fully_and_start_at(leader_log.log_start_offset)
        return
    if found != epoch:
        # The follower's epoch is unknown to the leader: truncate to the leader's
        # end of the largest epoch below it, then retry with the follower's history.
        own_found, own_end = log.end_offset_for_epoch(found)
        end = min(end, own_end)
    log.truncate_to(min(end, log.log_end_offset))
