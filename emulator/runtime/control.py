"""The control-facing half of ``emulator.Cluster``: the operations of the control
surface (emulator.control's one table: faults, broker stops and starts, rules, groups,
the journal, barriers, schedules) and the bridge that runs them on the cluster's own
event loop from any thread.

Every way in ends here: the Python ``Cluster`` and the pytest plugin's handle call these
methods directly, the HTTP control plane (emulator.server.control) and the CLI (through
it) call ``fault_async``/``operation_async`` on the loop, a fault schedule
(emulator.server.schedule) calls ``fault_async``. The cluster itself (what it is made
of, its addresses, starting and stopping it) is emulator/runtime/cluster.py, whose
``Cluster`` is this class with those parts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from emulator.cluster.state import Broker, ClusterState
from emulator.control.handle import ControlHandle, operation

if TYPE_CHECKING:
    from emulator.faults.injector import FaultInjector, Io
    from emulator.server.app import EmulatorServer
    from emulator.server.watch import Watch

T = TypeVar("T")


class ClusterControl(ControlHandle):
    """The operations of a running cluster, each run on its loop; ``Cluster``
    (emulator/runtime/cluster.py) sets the parts they act on."""

    state: ClusterState
    _faults: FaultInjector | None  # None until ``faults`` is first asked
    server: EmulatorServer | None  # None until started and after stopping
    watch: Watch | None  # the journal, barriers and waits; made on first use
    advertised_host: str
    _loop: asyncio.AbstractEventLoop | None
    _owns_loop: bool  # the loop runs on the cluster's own thread (``start``)

    # ---- control ------------------------------------------------------------------------
    def _in_loop(self) -> bool:
        try:
            return asyncio.get_running_loop() is self._loop
        except RuntimeError:
            return False

    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the cluster's loop (safe from any thread) and return its result."""
        if self._loop is None or self._in_loop() or not self._owns_loop:
            return fn()

        async def wrapped() -> T:
            return fn()

        return asyncio.run_coroutine_threadsafe(wrapped(), self._loop).result(timeout=60)

    def run_async(self, coro_fn: Callable[[], Any]) -> Any:
        """Run an async operation on the cluster's loop from a plain thread."""
        assert self._loop is not None
        if self._owns_loop and not self._in_loop():
            # a wait of the control surface may take its longest (MAX_WAIT_MS) and more
            return asyncio.run_coroutine_threadsafe(coro_fn(), self._loop).result(timeout=90)
        raise RuntimeError("use the *_async methods from inside the cluster's event loop")

    # ---- operations (emulator.control: one table for Python, HTTP, CLI, schedules) -----
    @property
    def faults(self) -> FaultInjector:
        """The fault model and the effect of each operation, made (and wired into the
        state and a running server) on first use: a cluster no fault, rule, schedule or
        adversary touches never imports emulator.faults' injector, rules and match
        (docs/scale.md, start-up). Until then ``state.faults`` is None and the server's
        fault points are unset, which the cluster and the dispatcher read as what an
        empty model answers: no fault."""
        if self._faults is None:
            from emulator.faults.injector import FaultInjector

            self._faults = FaultInjector(self.state)  # sets state.faults
            if self.server is not None:
                wire_faults(self.server, self._faults)
        return self._faults

    async def fault_async(self, op: dict) -> dict:
        """Validate and apply one operation of the fault vocabulary, broker stops and
        starts included; returns it as applied. Its effect (emulator.faults.EFFECTS)
        is the one a unit test runs without listeners; here each network ask it makes
        is answered by the server's listeners."""
        op = self.faults.prepare(op)
        for ask in self.faults.effect(op):
            await self._answer(ask)
        return op

    async def _answer(self, ask: Io) -> None:
        from emulator.faults.injector import CloseListener, DropClients, OpenListener

        if self.server is None:
            return
        if isinstance(ask, CloseListener):
            await self.server.close_listener(ask.broker)
        elif isinstance(ask, OpenListener):
            await self.server.reopen_listener(ask.broker)
        elif isinstance(ask, DropClients):
            for w in self.server.client_connections(ask.broker):
                peer = w.get_extra_info("peername") or ("?", 0)
                if ask.host is None or peer[0] == ask.host:
                    w.transport.abort()

    def ensure_watch(self) -> Watch:
        """The journal, barriers and waits, made (and wired into the server) on first use."""
        if self.watch is None:
            from emulator.server.watch import Watch

            self.watch = Watch(self.state, self.faults.model, lambda: (
                self.server.services.groups if self.server is not None else None))
            if self.server is not None:
                self.server.faults.watch = self.watch
        return self.watch

    async def operation_async(self, name: str, fields: dict[str, Any]) -> dict:
        """One operation of the table that is not a fault (rules, groups, the journal,
        barriers: emulator.server.watch), its fields already checked."""
        from emulator.server.watch import run

        return await run(self.ensure_watch(), name, fields)

    def operation(self, name: str, **fields: Any) -> Any:
        """One operation of the table by name, e.g. ``operation("journal",
        group="billing")``, as the control plane would run it; a refusal raises
        ``ControlError`` (its ``status`` and ``message``)."""
        from emulator.control.operations import BY_NAME, ControlError, check_fields
        from emulator.faults import FaultError

        op = BY_NAME[name]
        checked = check_fields(op, fields, self.state.brokers)
        try:
            return self.run_async(lambda: self.operation_async(name, checked))
        except FaultError as e:
            raise ControlError(e.status, str(e)) from None

    def fault(self, op: dict) -> dict:
        """Apply a fault from any thread, e.g. ``fault({"op": "pause_follower",
        "broker": 3})``; see ``emulator.faults.OPS`` for every operation."""
        if self._owns_loop and not self._in_loop():
            return self.run_async(lambda: self.fault_async(op))
        raise RuntimeError("use fault_async from inside the cluster's event loop")

    async def stop_broker_async(self, broker_id: int, controlled: bool = False,
                                fence_after_ms: int | None = None) -> None:
        await self.fault_async(operation("stop_broker", broker=broker_id,
                                         controlled=controlled or None,
                                         fence_after_ms=fence_after_ms))

    async def start_broker_async(self, broker_id: int) -> None:
        await self.fault_async(operation("start_broker", broker=broker_id))

    async def add_broker_async(self, broker_id: int) -> None:
        """A broker the cluster was not made with joins it, fenced and not listening
        (a broker node of the official image registering in isolated mode:
        emulator.server.node_link); start_broker_async starts it. ValueError for a
        broker of the cluster."""
        self.state.add_broker(Broker(broker_id, self.advertised_host, 0))
        if self.server is not None:
            self.server.add_broker(broker_id)

    def stop_broker(self, broker_id: int, controlled: bool = False,
                    fence_after_ms: int | None = None) -> None:
        """Crash (or, with ``controlled``, cleanly shut down) one broker.

        A crash is fenced by the controller at once, or after ``fence_after_ms`` (default:
        the ``broker.session.timeout.ms`` given in the config, else 0); until then
        metadata still names the dead broker, as on Kafka while its session runs out.
        """
        self.run_async(lambda: self.stop_broker_async(broker_id, controlled, fence_after_ms))

    def start_broker(self, broker_id: int) -> None:
        self.run_async(lambda: self.start_broker_async(broker_id))

    async def controlled_shutdown_async(self, broker_id: int) -> None:
        await self.stop_broker_async(broker_id, controlled=True)

    def create_topic(self, name: str, partitions: int = 1, replication_factor: int = -1,
                     config: dict[str, str] | None = None) -> None:
        """Create a topic directly (no admin client needed). Under Kafka's timing
        (``--fidelity kafka``), return once every broker knows it (each learns it a few ms
        late: emulator/cluster/metadata_views.py), as the Kafka target's create_topic
        waits until every broker knows the leaders; from the loop's own thread, at once."""
        rf = replication_factor if replication_factor > 0 else min(3, len(self.state.brokers))
        self.call(lambda: self.state.create_topic(name, partitions, rf, configs=config))
        views = self.state.metadata_views
        if not views.active or self._in_loop():
            return
        deadline = time.monotonic() + 60
        while (left := self.call(lambda: views.settled_in(name))) > 0 \
                and time.monotonic() < deadline:
            time.sleep(min(left / 1000, 0.05))


def wire_faults(server: EmulatorServer, faults: FaultInjector) -> None:
    """The server's fault points asked of the fault model (each request asks them)."""
    model = faults.model
    server.faults.inject_error = model.inject_error
    server.faults.latency = model.latency_s
    server.faults.drop_response = model.drop_response
    server.faults.client_allowed = model.client_allowed
