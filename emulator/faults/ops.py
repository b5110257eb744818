"""The vocabulary of fault operations and its validation.

One operation is a JSON object (``{"op": "stop_broker", "broker": 2}``); ``OPS`` lists
each with its fields. ``validate_op`` checks one against the cluster's broker ids and
normalizes it (API keys and error codes as ints): unknown brokers, APIs, error names
and fields are refused with a message that says what is allowed. Pure: no cluster
state beyond the broker ids.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from wire.errors import ErrorCode
from wire.messages import NAMES

BROKER, BROKERS, INT, BOOL, STR, API, ERROR = (
    "broker", "two brokers", "int", "bool", "str", "api", "error")

# op -> {field: (kind, required)}
OPS: dict[str, dict[str, tuple[str, bool]]] = {
    "stop_broker": {"broker": (BROKER, True), "controlled": (BOOL, False),
                    "fence_after_ms": (INT, False)},
    "start_broker": {"broker": (BROKER, True)},
    "controlled_shutdown": {"broker": (BROKER, True)},
    "pause_follower": {"broker": (BROKER, True), "topic": (STR, False),
                       "partition": (INT, False)},
    "slow_follower": {"broker": (BROKER, True), "delay_ms": (INT, True),
                      "max_bytes": (INT, False), "topic": (STR, False),
                      "partition": (INT, False)},
    "resume_follower": {"broker": (BROKER, True), "topic": (STR, False),
                        "partition": (INT, False)},
    "cut_brokers": {"brokers": (BROKERS, True)},
    "heal_brokers": {"brokers": (BROKERS, True)},
    "cut_clients": {"broker": (BROKER, True), "host": (STR, False)},
    "heal_clients": {"broker": (BROKER, True)},
    "inject_error": {"api": (API, True), "error": (ERROR, True), "count": (INT, False),
                     "broker": (BROKER, False), "topic": (STR, False),
                     "partition": (INT, False), "client_id": (STR, False)},
    "add_latency": {"api": (API, True), "ms": (INT, True), "broker": (BROKER, False)},
    "drop_response": {"api": (API, True), "count": (INT, False), "broker": (BROKER, False),
                      "client_id": (STR, False)},
    "clear": {},
}
BROKER_OPS = ("stop_broker", "start_broker", "controlled_shutdown")
SCHEDULE_FIELDS = ("at_ms", "jitter_ms")
API_KEYS = {name.lower(): key for key, name in NAMES.items()}


class FaultError(ValueError):
    """A fault operation that names something unknown or is malformed (HTTP 4xx)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _api_key(value: Any) -> int:
    if isinstance(value, bool):
        raise FaultError(f"api must be an API key or name, got {value!r}")
    if isinstance(value, int):
        if value not in NAMES:
            raise FaultError(f"unknown API key {value}; known keys are {sorted(NAMES)}")
        return value
    if isinstance(value, str):
        key = API_KEYS.get(value.lower().replace("_", "").replace("-", ""))
        if key is None and value.isdigit():
            return _api_key(int(value))
        if key is None:
            names = ", ".join(NAMES[k] for k in sorted(NAMES))
            raise FaultError(f"unknown API {value!r}; known APIs are {names}")
        return key
    raise FaultError(f"api must be an API key or name, got {value!r}")


def _error_code(value: Any) -> int:
    if isinstance(value, bool):
        raise FaultError(f"error must be an error code or name, got {value!r}")
    if isinstance(value, int):
        try:
            return int(ErrorCode(value))
        except ValueError:
            raise FaultError(f"unknown error code {value}") from None
    if isinstance(value, str):
        try:
            return int(ErrorCode[value.upper()])
        except KeyError:
            raise FaultError(f"unknown error {value!r}; use a Kafka error name such as "
                             "NOT_LEADER_OR_FOLLOWER or a numeric code") from None
    raise FaultError(f"error must be an error code or name, got {value!r}")


def _broker(value: Any, broker_ids: Iterable[int], name: str = "broker") -> Any:
    ids = sorted(broker_ids)
    if isinstance(value, str) and (value in ("random", "controller")
                                   or value.startswith("leader:")):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise FaultError(f"{name} must be a broker id, got {value!r}")
    if value not in ids:
        raise FaultError(f"unknown broker {value}; brokers are {ids}", 404)
    return value


def validate_op(op: Any, broker_ids: Iterable[int], symbolic: bool = False) -> dict:
    """Check one operation; returns it normalized (API keys and error codes as ints).

    ``symbolic`` allows the schedule's broker choices ("random", "controller",
    "leader:T:P"); the direct ways in take broker ids only.
    """
    if not isinstance(op, dict):
        raise FaultError(f"a fault is a JSON object, got {type(op).__name__}")
    name = op.get("op")
    if not isinstance(name, str):
        raise FaultError(f"missing \"op\"; one of {', '.join(OPS)}")
    kind = name.replace("-", "_")
    spec = OPS.get(kind)
    if spec is None:
        raise FaultError(f"unknown fault {name!r}; faults are {', '.join(OPS)}", 404)
    ids = list(broker_ids)
    out: dict[str, Any] = {"op": kind}
    for key, value in op.items():
        if key == "op" or (symbolic and key in SCHEDULE_FIELDS):
            continue
        if key not in spec:
            allowed = ", ".join(spec) or "no fields"
            raise FaultError(f"{kind}: unknown field {key!r} (allowed: {allowed})")
        t, _ = spec[key]
        if t == BROKER:
            v = _broker(value, ids)
            if isinstance(v, str) and not symbolic:
                raise FaultError(f"{kind}: broker must be a broker id, got {value!r}")
            out[key] = v
        elif t == BROKERS:
            if not isinstance(value, list) or len(value) != 2:
                raise FaultError(f"{kind}: brokers must be a list of two broker ids")
            a, b = (_broker(v, ids, "brokers") for v in value)
            if isinstance(a, str) or isinstance(b, str):
                if not symbolic:
                    raise FaultError(f"{kind}: brokers must be broker ids")
            elif a == b:
                raise FaultError(f"{kind}: a cut needs two different brokers, got {a} twice")
            out[key] = [a, b]
        elif t == INT:
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise FaultError(f"{kind}: {key} must be a non-negative integer, got {value!r}")
            out[key] = value
        elif t == BOOL:
            if not isinstance(value, bool):
                raise FaultError(f"{kind}: {key} must be true or false, got {value!r}")
            out[key] = value
        elif t == STR:
            if not isinstance(value, str) or not value:
                raise FaultError(f"{kind}: {key} must be a non-empty string, got {value!r}")
            out[key] = value
        elif t == API:
            out[key] = _api_key(value)
        elif t == ERROR:
            out[key] = _error_code(value)
    for key, (_, required) in spec.items():
        if required and key not in out:
            raise FaultError(f"{kind}: missing field {key!r}")
    if "partition" in out and "topic" not in out:
        raise FaultError(f"{kind}: partition needs a topic")
    if kind in ("inject_error", "drop_response"):
        out.setdefault("count", 1)
    return out
