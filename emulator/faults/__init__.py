"""Faults, sans I/O: what is broken, asked by the cluster and the server as they run.

One vocabulary of fault operations serves every way in (``Cluster.fault`` in Python
and the pytest handle, ``POST /faults`` on the HTTP control plane, ``kafka-emulator
fault`` on the command line, the testcontainers module) and the seeded fault schedule;
emulator.control.operations puts it in the table of every control operation. An operation is a JSON object::

    {"op": "stop_broker", "broker": 2}
    {"op": "inject_error", "api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER",
     "count": 3, "topic": "orders", "partition": 0}

One module each, imported in this order (each only uses the ones before it):

- ``ops``: the vocabulary (``OPS``: each operation's fields, what they mean) and
  ``validate_op``, which refuses unknown brokers, APIs, error names and fields with a
  message that says what is allowed;
- ``model``: ``FaultModel``, the faults in force and the hooks the cluster's
  replication (``follower_can_fetch``, ``fetch_budget``) and the server
  (``inject_error``, ``latency_s``, ``drop_response``, ``client_allowed``) ask;
- ``injector``: what each operation does (``EFFECTS``, sans I/O: the network work it
  needs is yielded as asks) and ``FaultInjector``, which applies operations to a
  ``ClusterState`` with no network, all a unit test with a manual clock needs;
- ``schedule``: the seeded schedule's parser and its sans-I/O runner; the server's
  loop drives a live one (emulator.server.schedule).

The schedule file's format and its replay rules are described in ``schedule``.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from emulator.faults.injector import (
        EFFECTS,
        CloseListener,
        DropClients,
        FaultInjector,
        OpenListener,
        check_topic,
        resolve_broker,
        resolve_op,
    )
    from emulator.faults.model import (
        DropRule,
        ErrorRule,
        FaultModel,
        FollowerFault,
        Injection,
        request_items,
        request_mentions,
        split_request,
    )
    from emulator.faults.ops import (
        API_KEYS,
        BROKER_OPS,
        OPS,
        SCHEDULE_FIELDS,
        FaultError,
        FaultOp,
        Field,
        validate_op,
    )
    from emulator.faults.schedule import (
        FaultSchedule,
        ScheduledFault,
        ScheduleError,
        ScheduleRunner,
        run_due,
    )

__all__ = [
    "API_KEYS", "BROKER_OPS", "EFFECTS", "OPS", "SCHEDULE_FIELDS", "CloseListener",
    "DropClients", "DropRule", "ErrorRule", "FaultError", "FaultInjector", "FaultModel",
    "FaultOp", "FaultSchedule", "Field", "FollowerFault", "Injection", "OpenListener",
    "ScheduleError", "ScheduleRunner", "ScheduledFault", "check_topic", "request_items",
    "request_mentions",
    "resolve_broker", "resolve_op", "run_due", "split_request", "validate_op",
]

# Each name's module, imported at its first use: importing emulator.faults.model (the
# dispatcher does) or a cluster that no fault, rule, schedule or adversary touches
# loads none of the injector, the rules, the match language or the schedule
# (docs/scale.md, start-up; tests/test_start_imports.py holds it).
_MODULES = {
    **dict.fromkeys(("EFFECTS", "CloseListener", "DropClients", "FaultInjector",
                     "OpenListener", "check_topic", "resolve_broker", "resolve_op"),
                    "injector"),
    **dict.fromkeys(("DropRule", "ErrorRule", "FaultModel", "FollowerFault", "Injection",
                     "request_items", "request_mentions", "split_request"), "model"),
    **dict.fromkeys(("API_KEYS", "BROKER_OPS", "OPS", "SCHEDULE_FIELDS", "FaultError",
                     "FaultOp", "Field", "validate_op"), "ops"),
    **dict.fromkeys(("FaultSchedule", "ScheduledFault", "ScheduleError", "ScheduleRunner",
                     "run_due"), "schedule"),
}


def __getattr__(name: str) -> Any:
    """A name of the package, from its module, imported on first use."""
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'emulator.faults' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"emulator.faults.{module}"), name)
    globals()[name] = value  # asked once
    return value
