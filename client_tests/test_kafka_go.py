"""segmentio/kafka-go (Go, v0.4.50 from the Go module proxy) reads as a group member whose
topic does not exist yet when it joins, on either target (``--target kafka``).

client_tests/go/kafkago (built by scripts/setup.d/35-go.sh) does what kafka-go's own
TestConsumerGroupWithTopic and TestConsumerGroupWithGroupTopicsSingle do: a Reader with a
GroupID (and Topic, or GroupTopics) and a partition watcher every 100 ms starts, a second
later the topic is created and one message written, and the reader must read it.

What happens, on Kafka 4.4 as here: the group's leader asks Metadata for the topic (with
allow_auto_topic_creation), which creates it and answers UNKNOWN_TOPIC_OR_PARTITION, so
the first generation assigns nothing. The partition watcher then asks again at once: on
Kafka the brokers learn the auto-created topic from the controller some 30 ms later
(emulator/cluster/topics.py AUTO_CREATE_SHOWN_MS), so that look fails too, the watcher
ends the generation and the reader joins again, until an assignment finds the topic.
The emulator used to show the topic at once: the watcher's first look saw one partition,
never saw a change, and the reader kept its empty assignment (3 runs of 3).

kafka-go's test itself is a race on Kafka too: if the topic becomes visible between the
leader's look and the watcher's first look of the same generation, the reader keeps its
empty assignment. Measured on Kafka 4.4.0 (--target kafka's settings, a busy 2-core
machine): 5 of 16 runs read the message; on the emulator 26 of 32 (docs/fidelity.md,
``auto-create-visibility``). So the test asserts what is certain on both targets - the
first generation assigns nothing, its watcher's first look finds the topic unknown when
it comes within 20 ms of the creation (client_tests/test_metadata_auto_create.py holds
the same with raw requests) - and that a reader that was given the partition reads the
message.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest

from client_tests.rawkafka import coordinator_call
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for

Target = Cluster | KafkaTarget
HELPER = Path(__file__).resolve().parent / "go" / ".bin" / "kafkago"
UNKNOWN = "Problem getting partitions during startup, [3] Unknown Topic Or Partition"


@pytest.fixture(autouse=True)
def require_helper() -> None:
    if not HELPER.exists():
        raise AssertionError(f"{HELPER} is missing: run scripts/setup.d/35-go.sh (needs Go)")


def _ms(line: str) -> float:
    return float(line.split("ms ", 1)[0])


def generations(log: list[str]) -> list[dict]:
    """Per generation the reader went through: what it was assigned, when (ms) the
    leader's Metadata was answered (kafka-go logs the balancer after it) and the partition
    watcher started, and whether the watcher's first look failed (kafka-go's own log)."""
    out: list[dict] = []
    looked = None
    # kafka-go logs a generation's "subscribed" line and its watcher's lines from
    # different goroutines, so the watcher's start (and its first failed look) may come
    # before the "subscribed" line of its generation (seen in a full run): such lines wait
    # in ``early`` for the generation they belong to.
    early: dict = {}
    for line in log:
        if "balancer to assign group" in line:
            looked = _ms(line)
        elif "subscribed to topics and partitions:" in line:
            out.append({"assigned": not line.rstrip().endswith("map[]"), "leader_look": looked,
                        "watcher": None, "first_look_failed": False, **early})
            early = {}
        elif "started partition watcher" in line:
            if out and out[-1]["watcher"] is None:
                out[-1]["watcher"] = _ms(line)
            else:
                early = {"watcher": _ms(line)}
        elif UNKNOWN in line:
            if early:
                early["first_look_failed"] = True
            elif out:
                out[-1]["first_look_failed"] = True
    return out


@pytest.mark.parametrize("mode", ["topic", "group-topics"])
def test_a_group_reader_whose_topic_is_auto_created_by_its_leader(cluster: Target,
                                                                  mode: str) -> None:
    s = uuid.uuid4().hex[:12]
    topic, group = f"kafka-go-{s}", f"kafka-go-group-{s}"
    # A fresh Kafka creates and loads __consumer_offsets first (kafka-go would wait 5 s
    # after a NOT_COORDINATOR, by when the test has created the topic itself).
    wait_for(lambda: coordinator_call(cluster, group, 15, 5, {
        "groups": [group], "include_authorized_operations": False})["groups"][0][
        "error_code"] == 0, f"the coordinator of {group} loaded", 60)
    r = subprocess.run([str(HELPER), "-brokers", cluster.bootstrap_servers, "-mode", mode,
                        "-topic", topic, "-group", group],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    gens = generations(out["log"])
    log = "\n".join(out["log"])
    assert gens, f"the reader never joined its group:\n{log}"
    # the leader's Metadata created the topic and answered it unknown: nothing assigned
    first = gens[0]
    assert not first["assigned"], log
    # On the emulator a look within 20 ms of the creation finds the topic still unknown
    # (the creation reaches the brokers' metadata later, as on Kafka), so the watcher's
    # first look fails and the reader rejoins and gets the partition. On Kafka 4.4 when
    # the creation becomes visible is the broker's timing: 29-67 ms after it on a quiet
    # machine, but 7 ms once under load (the watcher's first look then found the topic
    # and kafka-go kept its empty assignment: kafka-go's own race, which Kafka lets it
    # lose), so there either outcome is one Kafka gives and only the rest is asserted.
    assert first["leader_look"] is not None and first["watcher"] is not None, log
    if not isinstance(cluster, KafkaTarget) and first["watcher"] - first["leader_look"] < 20:
        assert first["first_look_failed"], log
    if any(g["assigned"] for g in gens):
        assert out["ok"], f"assigned the partition but read {out}:\n{log}"
