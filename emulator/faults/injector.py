"""Applying operations to a ClusterState.

``FaultInjector`` validates an operation, resolves a schedule's symbolic brokers
("controller", "leader:T:P") against the cluster as it is now, sends broker stops and
starts to the controller and the rest to the ``FaultModel``. That is all a unit test
with a manual clock needs; the runtime (emulator.runtime) adds the listeners.
"""

from __future__ import annotations

from typing import Any

from emulator.cluster import controller
from emulator.cluster.state import ClusterState
from emulator.faults.model import FaultModel
from emulator.faults.ops import FaultError, validate_op


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
    """Direct operations naming a topic or partition must name existing ones (404)."""
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


class FaultInjector:
    """Applies operations to a ClusterState; broker stops and starts go through the
    controller (the runtime also closes and reopens the listeners)."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state
        self.model = FaultModel(state)
        state.faults = self.model
        self.log: list[dict] = []  # every operation applied, in order

    def validate(self, op: Any) -> dict:
        v = validate_op(op, self.state.brokers)
        check_topic(self.state, v)
        return v

    def apply(self, op: dict, validated: bool = False) -> dict:
        """Validate (unless done) and apply; returns the operation as applied."""
        op = resolve_op(self.state, op if validated else self.validate(op))
        kind = op["op"]
        if kind == "stop_broker":
            if op.get("controlled"):
                controller.controlled_shutdown(self.state, op["broker"])
                controller.broker_stopped(self.state, op["broker"])
            else:
                controller.broker_crashed(self.state, op["broker"], op.get("fence_after_ms"))
        elif kind == "controlled_shutdown":
            controller.controlled_shutdown(self.state, op["broker"])
            controller.broker_stopped(self.state, op["broker"])
        elif kind == "start_broker":
            controller.broker_started(self.state, op["broker"])
        else:
            self.model.apply(op)
        self.log.append(op)
        self.state.emit("fault", **op)
        self.state.changed()
        return op
