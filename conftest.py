"""What every test directory shares (tests/, client_tests/, spark_validation/): a run
that passes reads as one.

- librdkafka's own log lines (``%3|...|FAIL|...`` when a broker a test stopped is
  redialled, or when a handle outlives its cluster) go to the ``librdkafka`` Python
  logger instead of the process's stderr: pytest shows them with a failing test's
  captured log and nowhere else, so a passing run prints none. A test that passes its
  own ``logger`` keeps it.
- A test running longer than SLOW_AFTER_S is named while it runs, then every
  SLOW_EVERY_S, by the process that draws the progress line (with pytest-xdist, the
  controller): no silent minutes at 99%.
- Every encoder the tests compile refuses a dict key that names no field of its struct
  (``KAFKA_WIRE_STRICT_FIELDS=1``, wire/codec.py): a misspelt key in a handler's
  response or a test's request fails the test instead of going out as the field's
  default. Set here, before any encoder is compiled, for this process and the
  emulators and workers it starts; a run may set it to 0.
- The tests that share a JVM through a module- or session-scoped fixture (SHARED_JVMS:
  a Kafka cluster of a module, the SparkSession) are one pytest-xdist group each, so
  under ``--dist loadgroup`` (scripts/test) one worker starts that JVM once instead of
  every worker that drew one of its tests starting its own.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("KAFKA_WIRE_STRICT_FIELDS", "1")

# Fixture names of the module- or session-scoped fixtures that start JVMs: ``kafka`` (a
# KafkaCluster of the client_tests/*_kafka.py modules), ``spark`` (spark_validation's
# SparkSession).
SHARED_JVMS = frozenset({"kafka", "spark"})
SLOW_AFTER_S = 30.0
SLOW_EVERY_S = 30.0
RDKAFKA_LOGGER = logging.getLogger("librdkafka")
RDKAFKA_LOGGER.addHandler(logging.NullHandler())  # never logging's last-resort stderr


def _with_logger(config: Any, kwargs: dict) -> Any:
    if isinstance(config, dict) and "logger" not in config and "logger" not in kwargs:
        return {**config, "logger": RDKAFKA_LOGGER}
    return config


def _quiet(cls: type) -> type:
    """A subclass of the extension type ``cls`` (Producer, Consumer) whose instances
    log through RDKAFKA_LOGGER unless given a logger."""

    def __init__(self: Any, config: Any = None, *args: Any, **kwargs: Any) -> None:
        if config is None:
            cls.__init__(self, *args, **kwargs)
        else:
            cls.__init__(self, _with_logger(config, kwargs), *args, **kwargs)

    return type(cls.__name__, (cls,), {"__init__": __init__, "__module__": cls.__module__,
                                       "__qualname__": cls.__qualname__,
                                       "__doc__": cls.__doc__,
                                       "_kafka_emulator_quiet": True})


def _quiet_confluent_kafka() -> None:
    try:
        import confluent_kafka
        from confluent_kafka.admin import AdminClient
    except ImportError:
        return
    for name in ("Producer", "Consumer"):
        cls = getattr(confluent_kafka, name)
        if not getattr(cls, "_kafka_emulator_quiet", False):
            setattr(confluent_kafka, name, _quiet(cls))
    # AdminClient is a Python class whose __init__ names itself (super(AdminClient,
    # self)): wrapped in place rather than replaced by a subclass.
    if not getattr(AdminClient.__init__, "_kafka_emulator_quiet", False):
        original = AdminClient.__init__

        def __init__(self: Any, conf: Any, **kwargs: Any) -> None:
            original(self, _with_logger(conf, kwargs), **kwargs)

        __init__._kafka_emulator_quiet = True  # type: ignore[attr-defined]
        AdminClient.__init__ = __init__  # type: ignore[method-assign]


_quiet_confluent_kafka()


class SlowTestReporter:
    """Names the tests running longer than SLOW_AFTER_S, from a timer thread."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.running: dict[str, tuple[float, float]] = {}  # nodeid -> (start, last said)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="slow-tests", daemon=True)
        self.thread.start()

    def pytest_runtest_logstart(self, nodeid: str, location: object) -> None:
        now = time.monotonic()
        with self.lock:
            self.running[nodeid] = (now, now)

    def pytest_runtest_logfinish(self, nodeid: str, location: object) -> None:
        with self.lock:
            self.running.pop(nodeid, None)

    def pytest_unconfigure(self) -> None:
        self.stop.set()

    def _watch(self) -> None:
        while not self.stop.wait(1.0):
            now = time.monotonic()
            due = []
            with self.lock:
                for nodeid, (start, said) in self.running.items():
                    if now - start >= SLOW_AFTER_S and (said == start
                                                        or now - said >= SLOW_EVERY_S):
                        due.append((nodeid, now - start))
                        self.running[nodeid] = (start, now)
            tr = self.config.pluginmanager.get_plugin("terminalreporter")
            for nodeid, elapsed in due:
                if tr is not None:
                    tr.write("\n")
                    tr.write_line(f"[still running after {elapsed:.0f} s] {nodeid}")


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # a pytest-xdist worker
        config.pluginmanager.register(XdistGroupIds(), "kafka-emulator-xdist-group-ids")
    # Only where the progress is drawn: not in pytest-xdist's workers.
    if not hasattr(config, "workerinput") and config.option.verbose >= -1:
        config.pluginmanager.register(SlowTestReporter(config), "kafka-emulator-slow-tests")


def shared_jvm_group(item: pytest.Item) -> str | None:
    """The xdist group of a test that uses a SHARED_JVMS fixture scoped wider than the
    test: the fixture's name, with its module's for a module-scoped one."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    groups = []
    for name in sorted(SHARED_JVMS & set(info.names_closure)):
        defs = info.name2fixturedefs.get(name)
        if not defs or defs[-1].scope == "function":
            continue
        if defs[-1].scope == "module":
            groups.append(f"{Path(str(item.path)).stem}-{name}")
        else:
            groups.append(name)
    return "+".join(groups) or None


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist names the groups in the node ids
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        group = shared_jvm_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


class XdistGroupIds:
    """What pytest-xdist (3.8) does for ``--dist loadgroup`` in a worker, where it did not
    take: name an item's group in its node id (``nodeid@group``, which the controller's
    LoadGroupScheduling reads). xdist sets ``item._nodeid``, which pytest 9 no longer
    reads (a node id is ``item._id``, a NodeId), so no test was grouped."""

    @pytest.hookimpl(trylast=True)  # after pytest-xdist's own hook
    def pytest_collection_modifyitems(self, config: pytest.Config,
                                      items: list[pytest.Item]) -> None:
        if not config.getvalue("loadgroup"):
            return
        for item in items:
            names = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                            for m in item.iter_markers("xdist_group")})
            if names and "@" not in item.nodeid and hasattr(item, "_id"):
                from _pytest.nodeid import coerce_node_id  # pytest >= 9 only
                item._id = coerce_node_id(f"{item.nodeid}@{'_'.join(names)}")

