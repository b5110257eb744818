"""Share-group state survives a crash with --data-dir, because it is what Kafka's share
coordinator writes: ShareSnapshot/ShareUpdate records of ``__share_group_state``.

A KafkaShareConsumer (Java 4.4) accepts ten records; a second one acquires the next ten
and halts without acknowledging; the emulator is SIGKILLed and started again on the same
data directory. kafka-share-groups then reports the share-partition start offset (10)
before any consumer came back, a new consumer gets exactly offsets 10-19 (never 0-9),
and the records the crashed consumer held come with delivery count 2. Kafka's own
ShareGroupStateMessageFormatter (kafka-console-consumer) decodes the records.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from client_tests import producing
from client_tests.producing import numbered
from client_tests.test_data_dir import Emulator, free_ports
from client_tests.test_share_groups_java import (
    SHARE_GROUPS,
    TOOLS_JVM,
    ShareConsumer,
    require_java,
)
from emulator.testing import wait_for

# Not run with --target kafka: the emulator's --data-dir process and its recovery.
pytestmark = pytest.mark.emulator_only

TOPIC, GROUP = "kept-shares", "sg-restart"
CONSOLE = "org.apache.kafka.tools.consumer.ConsoleConsumer"
FORMATTER = "org.apache.kafka.tools.consumer.group.share.ShareGroupStateMessageFormatter"


def tool(bootstrap: str, *args: str) -> str:
    r = subprocess.run(TOOLS_JVM + [SHARE_GROUPS, "--bootstrap-server", bootstrap, *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def offsets(bootstrap: str) -> tuple[int, int]:
    """(START-OFFSET, LAG) as kafka-share-groups --describe --offsets shows them. The
    start offset is the one last written: with an acknowledgement, the one from before it
    (Kafka 4.4), so after all records are accepted the lag says so, not the start."""
    out = tool(bootstrap, "--describe", "--group", GROUP, "--offsets")
    row = next(line.split() for line in out.splitlines() if TOPIC in line)
    return int(row[3]), int(row[4])  # GROUP TOPIC PARTITION START-OFFSET LAG


def produce(bootstrap: str, start: int, n: int) -> None:
    producing.produce(bootstrap, TOPIC, numbered(n, start), per_flush=1, timeout=10,
                      config={"acks": "all"})


def test_share_state_survives_a_crash_and_restart(tmp_path: Path) -> None:
    require_java()
    emu = Emulator(tmp_path / "data", free_ports(3), tmp_path / "emulator.log")
    bootstrap = emu.start()
    cluster = SimpleNamespace(bootstrap_servers=bootstrap)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(TOPIC, 1, 3)])[TOPIC].result(30)
    produce(bootstrap, 0, 10)
    tool(bootstrap, "--reset-offsets", "--group", GROUP, "--topic", TOPIC, "--to-earliest",
         "--execute")
    first = ShareConsumer(cluster, GROUP, TOPIC, "accept")
    try:
        wait_for(lambda: sorted(first.offsets()) == list(range(10)), "the first ten", 60)
    finally:
        first.close()  # implicit acknowledgement: accepted
    wait_for(lambda: offsets(bootstrap) == (0, 0), "the first ten accepted", 60)
    produce(bootstrap, 10, 10)
    crashing = ShareConsumer(cluster, GROUP, TOPIC, "crash:1")
    crashing.proc.wait(60)
    held = set(crashing.offsets())
    crashing.close()
    assert held and held <= set(range(10, 20)), held

    emu.stop(signal.SIGKILL)
    bootstrap = emu.start()
    cluster.bootstrap_servers = bootstrap
    assert "rebuilt 1 share-partitions from __share_group_state" in emu.log_path.read_text()
    # the share-partition's start offset as stored, before any consumer came back: 10
    # (the first ten accepted), the ten after it not finished
    assert offsets(bootstrap) == (10, 10)
    again = ShareConsumer(cluster, GROUP, TOPIC, "accept")
    try:
        wait_for(lambda: sorted(again.offsets()) == list(range(10, 20)), "the other ten", 60)
        counts = {o: n for _, o, n in again.records}
        assert all(counts[o] == 2 for o in held), counts  # delivered before the crash
        assert all(counts[o] == 1 for o in set(range(10, 20)) - held), counts
    finally:
        again.close()
    wait_for(lambda: offsets(bootstrap) == (10, 0), "all twenty accepted", 60)

    r = subprocess.run(TOOLS_JVM + [CONSOLE, "--bootstrap-server", bootstrap, "--topic",
                                    "__share_group_state", "--from-beginning",
                                    "--formatter", FORMATTER, "--timeout-ms", "8000"],
                       capture_output=True, text=True, timeout=120)
    lines, text, pos = [], r.stdout, r.stdout.find("{")
    while pos >= 0:  # the formatter writes one JSON object per record, no separator
        obj, end = json.JSONDecoder().raw_decode(text, pos)
        lines.append(obj)
        pos = text.find("{", end)
    assert lines, r.stdout + r.stderr
    ours = [x for x in lines if x["key"]["data"]["groupId"] == GROUP]
    kinds = {x["key"]["type"] for x in ours}
    assert kinds == {0, 1}, ours[:3]  # ShareSnapshot and ShareUpdate records
    last = ours[-1]["value"]["data"]
    assert last["startOffset"] == 20, last
    emu.stop(signal.SIGTERM)
