"""What a plain start imports: only what the configuration uses (docs/scale.md, start-up).

A default PLAINTEXT cluster started as ``kafka-emulator`` starts it must not load TLS
(cryptography's x509), the adversary, the fidelity table, the schema registry, the
control plane, the crc32c package (whose ``__init__`` reads the installed distributions)
or google-re2 (for regex subscriptions only); each is imported where it is used, and is
still there when asked for. The start's speed itself is measured by bench/start.py,
never here; this holds the imports that decide it.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from emulator import runtime
from emulator.faults import adversary

# Runs a cluster as the command does (serve() up to the ready line, the refusals it
# names included), then reports the modules loaded (json imported after); the arguments
# are the command's.
PROBE = """
import asyncio, sys
from emulator import cli
args = cli.build_parser().parse_args(sys.argv[1:])
async def go():
    from emulator.runtime import Cluster
    cli.refusals()
    c = Cluster(args.brokers, port=0, security=cli.security_config(args, {}),
                fidelity=args.fidelity, control_port=args.control_port)
    await c.start_async()
    loaded = sorted(sys.modules)
    await c.stop_async()
    return loaded
loaded = asyncio.run(go())
import asyncio
import json
print(json.dumps(loaded))
"""

LAZY = [
    "cryptography",
    "emulator.server.tls",
    "emulator.faults.adversary",
    "emulator.schema_registry",
    "emulator.server.schema_registry",
    "emulator.server.control",
    "emulator.control.console",
    "crc32c",
    "h11",
    "re2",
    "emulator.fidelity.differences",  # the table (read for --fidelity kafka's configs)
    "emulator.faults.schedule",  # only with --fault-schedule or one posted
    # the stdlib modules of rare paths: member ids (uuid imports platform), the
    # heap trim of a data dir (ctypes), the produce check worker (pickle), SCRAM
    "uuid",
    "ctypes",
    "pickle",
    "hashlib",
    "hmac",
    # the data dir's store (only StorageError is named, for the refusal) and json
    # (the data dir's files, OAUTHBEARER's tokens, the control plane)
    "emulator.storage.store",
    "json",
    # a Range's message for a large double (--config checks; 0.35 MB of RSS)
    "decimal",
    # share groups: built at the first share request (emulator/services.py)
    "emulator.coordinators.share.coordinator",
    # streams groups: the group coordinator's streams part, made at its first use
    "emulator.coordinators.streams.group",
    "emulator.coordinators.streams.protocol",
    # the fault injector, its model, rules and match language: made at the cluster's
    # first ``faults`` (a fault, rule, journal, schedule or the adversary)
    "emulator.faults.injector",
    "emulator.faults.model",
    "emulator.faults.rules",
    "emulator.faults.match",
]


def loaded(*args: str) -> set[str]:
    r = subprocess.run(
        [sys.executable, "-c", PROBE, "--port", "0", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return set(json.loads(r.stdout.splitlines()[-1]))


def test_a_plaintext_start_leaves_the_optional_parts_unimported() -> None:
    mods = loaded()
    assert "emulator.server.app" in mods  # the probe did start a cluster
    assert sorted(m for m in LAZY if m in mods) == []


@pytest.mark.parametrize(
    ("args", "needs"),
    [
        (["--fidelity", "adversarial"], "emulator.faults.adversary"),
        (["--fidelity", "kafka"], "emulator.fidelity.differences"),
        (["--listeners", "SSL://127.0.0.1:0"], "cryptography"),
        (["--control-port", "0"], "emulator.server.control"),
    ],
)
def test_what_a_configuration_uses_is_imported_when_it_starts(args: list[str], needs: str) -> None:
    assert needs in loaded(*args)


def test_the_adversary_scale_variable_is_the_adversarys() -> None:
    """runtime names it without importing the adversary."""
    assert runtime.ADVERSARY_SCALE_ENV == adversary.SCALE_ENV


def test_importing_the_package_does_not_start_the_runtime() -> None:
    code = "import sys, emulator.cli; print('emulator.runtime' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "False", r.stderr
    from emulator import Cluster  # still the way in

    assert Cluster is runtime.Cluster


def _hook_names(hooks: list) -> list[str]:
    return [getattr(h, "__qualname__", repr(h)) for h in hooks]


def test_the_share_coordinator_is_built_at_first_use_with_its_hooks_in_place() -> None:
    """build_services leaves the share coordinator to its first use; built then, its
    observers and tick sit where the eager build put them (after the coordinator log's,
    before anything registered since), so events and ticks reach services in the same
    order as before."""
    from emulator.cluster.fetch_sessions import FetchSessions
    from emulator.cluster.state import Broker, ClusterState
    from emulator.coordinators.coordinator_log import CoordinatorLog
    from emulator.coordinators.groups.coordinator import GroupCoordinator
    from emulator.coordinators.share.coordinator import SharePartitionManager
    from emulator.coordinators.share.state_log import ShareStateLog
    from emulator.coordinators.transactions.coordinator import TransactionCoordinator
    from emulator.services import build_services

    def later(kind: str, event: object) -> None: ...
    def later_tick(now: int) -> None: ...

    eager = ClusterState([Broker(1, "h", 9001)])
    gc = GroupCoordinator(eager)
    txn = TransactionCoordinator(eager, gc)
    CoordinatorLog(eager, gc, txn)
    ShareStateLog(eager, SharePartitionManager(eager, gc))
    FetchSessions(eager)
    eager.hooks.append(later)
    eager.tick_hooks.append(later_tick)

    lazy = ClusterState([Broker(1, "h", 9001)])
    services = build_services(lazy)
    lazy.hooks.append(later)  # registered after build_services, before the first use
    lazy.tick_hooks.append(later_tick)
    assert services.share_if_built is None
    # not built by build_services: its three observers (the coordinator, its state log,
    # its internal topic's loads) and its tick are missing until then
    assert len(lazy.hooks) == len(eager.hooks) - 3
    assert len(lazy.tick_hooks) == len(eager.tick_hooks) - 1
    share = services.share
    assert services.share_if_built is share is not None
    assert services.share_state_log is not None and services.share is share  # built once
    assert _hook_names(lazy.hooks) == _hook_names(eager.hooks)
    assert _hook_names(lazy.tick_hooks) == _hook_names(eager.tick_hooks)


def test_the_fault_model_is_made_at_first_use_and_wired_into_a_running_server() -> None:
    """No fault model until ``faults`` is asked (the server's fault points unset, which
    the dispatcher reads as no fault); asked on a running cluster, it is wired into
    the state and the server at once. Under --fidelity adversarial it is made at start,
    for the adversary's follower lags."""
    from emulator.runtime import Cluster

    async def go() -> None:
        c = Cluster(1, port=0)
        await c.start_async()
        try:
            assert c.server is not None and c.state.faults is None
            assert c.server.faults.inject_error is None
            await c.fault_async(
                {
                    "op": "inject_error",
                    "api": "Produce",
                    "error": "NOT_LEADER_OR_FOLLOWER",
                    "count": 1,
                }
            )
            model = c.faults.model
            assert c.state.faults is model
            assert c.server.faults.inject_error == model.inject_error
            assert c.server.faults.drop_response == model.drop_response
            assert c.server.faults.client_allowed == model.client_allowed
            assert c.server.faults.latency == model.latency_s
        finally:
            await c.stop_async()
        a = Cluster(1, port=0, fidelity="adversarial")
        await a.start_async()
        try:
            assert a.state.faults is not None and a.state.faults is a.faults.model
            assert a.server is not None and a.server.faults.inject_error is not None
        finally:
            await a.stop_async()

    asyncio.run(go())
