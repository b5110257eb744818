"""Applying operations to a ClusterState: what each fault operation does, in one place.

``EFFECTS`` maps each operation of the vocabulary (emulator.faults.ops) to what it does:
broker stops and starts go to the controller, the rest change the ``FaultModel``. An
effect is a generator, sans I/O: where the network must follow (a stopped broker's
listener closes, a started one's opens, cut clients are disconnected) it yields the
ask (``CloseListener``, ``OpenListener``, ``DropClients``) and goes on once it is done.
``FaultInjector.apply`` runs an effect with no network (all a unit test with a manual
clock needs); the runtime (emulator.runtime) runs the same effect and answers each
ask with its listeners.

``FaultInjector`` also validates an operation and resolves a schedule's symbolic
brokers ("controller", "leader:T:P") against the cluster as it is now.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from emulator.cluster import controller
from emulator.cluster.events import FaultApplied
from emulator.cluster.leadership import change_leader
from emulator.cluster.log_dirs import log_dirs
from emulator.cluster.partition import Partition
from emulator.cluster.state import ClusterState
from emulator.faults.model import FaultModel, FollowerFault, StorageFault
from emulator.faults.ops import FaultError, validate_op
from emulator.faults.rules import RuledFaultModel


@dataclass(frozen=True)
class BrokerAsk:
    """Network work an effect needs done for one broker."""

    broker: int


class CloseListener(BrokerAsk):
    """The broker's listeners stop accepting and cut every connection."""


class OpenListener(BrokerAsk):
    """The broker's listeners accept again."""


@dataclass(frozen=True)
class DropClients(BrokerAsk):
    """Disconnect the broker's clients (those from ``host``; None: all)."""

    host: str | None


Io = BrokerAsk  # CloseListener, OpenListener or DropClients
Effect = Callable[[ClusterState, RuledFaultModel, dict], Iterator[Io]]


def resolve_broker(state: ClusterState, value: Any) -> int:
    """A schedule's symbolic broker, at the time its step runs."""
    if isinstance(value, int):
        return value
    if value == "controller":
        if state.controller_id < 0:
            raise FaultError("there is no controller (every broker is down)", 409)
        return state.controller_id
    if isinstance(value, str) and value.startswith("leader:"):
        _, _, rest = value.partition(":")
        topic, _, part = rest.rpartition(":")
        t = state.topics.get(topic)
        if t is None or not part.isdigit() or int(part) >= len(t.partitions):
            raise FaultError(f"{value}: unknown topic or partition", 404)
        leader = t.partitions[int(part)].leader
        if leader < 0:
            raise FaultError(f"{value}: the partition has no leader", 409)
        return leader
    raise FaultError(f"cannot resolve broker {value!r}")


def resolve_op(state: ClusterState, op: dict) -> dict:
    out = dict(op)
    if "broker" in out:
        out["broker"] = resolve_broker(state, out["broker"])
    if "brokers" in out:
        out["brokers"] = [resolve_broker(state, b) for b in out["brokers"]]
        if out["brokers"][0] == out["brokers"][1]:
            raise FaultError(f"{op['op']}: both ends of the cut are broker "
                             f"{out['brokers'][0]}", 409)
    return out


def check_topic(state: ClusterState, op: dict) -> None:
    """Direct operations naming a topic or partition must name existing ones (404);
    a log dir must be one of the broker's (checked again by the effect, for schedules)."""
    if op.get("log_dir") is not None and isinstance(op.get("broker"), int):
        _check_log_dir(state, op["broker"], op["log_dir"])
    topic = op.get("topic")
    if topic is None:
        return
    t = state.topics.get(topic)
    if t is None:
        raise FaultError(f"unknown topic {topic!r}", 404)
    part = op.get("partition")
    if part is not None and part >= len(t.partitions):
        raise FaultError(f"unknown partition {topic}-{part}; the topic has "
                         f"{len(t.partitions)} partition(s)", 404)


def _stop_broker(state: ClusterState, model: FaultModel, op: dict) -> Iterator[Io]:
    broker = op["broker"]
    if op["op"] == "controlled_shutdown" or op.get("controlled"):
        controller.controlled_shutdown(state, broker)
        yield CloseListener(broker)
        controller.broker_stopped(state, broker)
    else:
        yield CloseListener(broker)
        controller.broker_crashed(state, broker, op.get("fence_after_ms"))


def _start_broker(state: ClusterState, model: FaultModel, op: dict) -> Iterator[Io]:
    controller.broker_started(state, op["broker"])
    yield OpenListener(op["broker"])


def _follower(state: ClusterState, model: FaultModel, op: dict) -> Iterator[Io]:
    where = (op["broker"], op.get("topic"), op.get("partition"))
    if op["op"] == "pause_follower":
        model.followers.append(FollowerFault(*where, paused=True))
    elif op["op"] == "slow_follower":
        model.followers.append(FollowerFault(*where, delay_ms=op["delay_ms"],
                                             max_bytes=op.get("max_bytes")))
    else:  # resume_follower: every pause and slowdown the operation's scope covers
        model.followers = [f for f in model.followers if not (
            f.broker == op["broker"] and (op.get("topic") is None or f.topic == op["topic"])
            and (op.get("partition") is None or f.partition == op["partition"]))]
    yield from ()


def _brokers_link(state: ClusterState, model: FaultModel, op: dict) -> Iterator[Io]:
    if op["op"] == "cut_brokers":
        model.broker_cuts.add(frozenset(op["brokers"]))
    else:
        model.broker_cuts.discard(frozenset(op["brokers"]))
    yield from ()


def _cut_clients(state: ClusterState, model: FaultModel, op: dict) -> Iterator[Io]:
    model.client_cuts[op["broker"]] = op.get("host")
    yield DropClients(op["broker"], op.get("host"))


def _heal_clients(state: ClusterState, model: FaultModel, op: dict) -> Iterator[Io]:
    model.client_cuts.pop(op["broker"], None)
    yield from ()


def _request_rule(state: ClusterState, model: RuledFaultModel, op: dict) -> Iterator[Io]:
    """inject_error, drop_response, observe: a rule of the rule book (emulator.faults.rules),
    its id set in ``op`` when it had none."""
    model.rules.add(op)
    yield from ()


def _add_latency(state: ClusterState, model: FaultModel, op: dict) -> Iterator[Io]:
    key = (op["api"], op.get("broker"))
    if op["ms"]:
        model.latency_ms[key] = op["ms"]
    else:
        model.latency_ms.pop(key, None)
    yield from ()


def next_leader(state: ClusterState, p: Partition) -> int | None:
    """Where a leader move sends ``p``'s leadership: its preferred replica when that
    one is in sync and not leading (a preferred-replica election), else the next live
    in-sync replica after the leader in replica order (a failover); None when no other
    replica is in sync. Deterministic: the cluster's state decides, not a draw."""
    alive = [b for b in p.replicas if b in p.isr and b != p.leader and state.is_alive(b)
             and b not in state.shutting_down]
    if not alive:
        return None
    if p.replicas and p.replicas[0] in alive:
        return p.replicas[0]
    order = list(p.replicas)
    start = order.index(p.leader) if p.leader in order else -1
    return next((b for b in order[start + 1:] + order[:start + 1] if b in alive), None)


def move_leader(state: ClusterState, topic: str, partition: int,
                to: int | None = None) -> tuple[int, int] | None:
    """Move a partition's leader to ``to`` (an in-sync replica; None: ``next_leader``),
    through the controller's one writer of leadership. Returns (old, new), or None when
    there is nowhere to move it."""
    p = state.topics[topic].partitions[partition]
    new = next_leader(state, p) if to is None else to
    if new is None or new == p.leader:
        return None
    if new not in p.isr or not state.is_alive(new):
        raise FaultError(f"move_leader: broker {new} is not a live in-sync replica of "
                         f"{topic}-{partition} (ISR {p.isr})", 409)
    old = p.leader
    change_leader(state, p, new)
    return old, new


def _move_leader(state: ClusterState, model: FaultModel, op: dict) -> Iterator[Io]:
    moved = move_leader(state, op["topic"], op["partition"], op.get("broker"))
    if moved is None:
        raise FaultError(f"move_leader: {op['topic']}-{op['partition']} has no other live "
                         "in-sync replica to lead", 409)
    yield from ()


def _check_log_dir(state: ClusterState, broker: int, path: str) -> None:
    dirs = log_dirs(state, broker)
    if path not in dirs:
        raise FaultError(f"{path!r} is not a log dir of broker {broker}; its log.dirs are "
                         f"{', '.join(dirs)}", 404)


def _storage(state: ClusterState, model: FaultModel, op: dict) -> Iterator[Io]:
    """A storage fault replaces the broker's earlier one of the same scope (one kind
    per directory at a time); slow_writes with delay_ms 0, and heal_storage, remove."""
    broker, path, kind = op["broker"], op.get("log_dir"), op["op"]
    if path is not None:  # again here, once the broker is known (a schedule's may not be)
        _check_log_dir(state, broker, path)
    model.storage = [f for f in model.storage
                     if not (f.broker == broker and (path is None or f.log_dir == path))]
    if kind != "heal_storage" and not (kind == "slow_writes" and not op["delay_ms"]):
        model.storage.append(StorageFault(broker, path, kind, op.get("delay_ms", 0)))
    yield from ()


def _clear(state: ClusterState, model: FaultModel, op: dict) -> Iterator[Io]:
    model.clear()
    yield from ()


# What each operation does: the one dispatch on an operation's kind.
EFFECTS: dict[str, Effect] = {
    "stop_broker": _stop_broker, "controlled_shutdown": _stop_broker,
    "start_broker": _start_broker,
    "pause_follower": _follower, "slow_follower": _follower, "resume_follower": _follower,
    "cut_brokers": _brokers_link, "heal_brokers": _brokers_link,
    "cut_clients": _cut_clients, "heal_clients": _heal_clients,
    "inject_error": _request_rule, "drop_response": _request_rule, "observe": _request_rule,
    "add_latency": _add_latency, "move_leader": _move_leader, "clear": _clear,
    "disk_full": _storage, "fail_writes": _storage, "fail_fsyncs": _storage,
    "slow_writes": _storage, "heal_storage": _storage,
}


class FaultInjector:
    """Applies operations to a ClusterState; broker stops and starts go through the
    controller (the runtime also closes and reopens the listeners)."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.model = RuledFaultModel(state)
        state.faults = self.model
        self.log: list[dict] = []  # every operation applied, in order

    def validate(self, op: Any) -> dict:
        v = validate_op(op, self.state.brokers)
        check_topic(self.state, v)
        return v

    def prepare(self, op: Any, validated: bool = False) -> dict:
        """The operation validated (unless done) and its symbolic brokers resolved."""
        return resolve_op(self.state, op if validated else self.validate(op))

    def effect(self, op: dict) -> Iterator[Io]:
        """Run a prepared operation's effect, yielding its network asks; once it is
        exhausted the operation is logged and the news told."""
        yield from EFFECTS[op["op"]](self.state, self.model, op)
        self.log.append(op)
        self.state.emit(FaultApplied(op))
        self.state.changed()

    def apply(self, op: dict, validated: bool = False) -> dict:
        """Validate (unless done) and apply with no network; returns the operation as
        applied."""
        op = self.prepare(op, validated)
        for _ in self.effect(op):
            pass  # no listeners here: nothing to close, open or disconnect
        return op
