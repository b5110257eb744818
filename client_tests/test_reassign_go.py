"""franz-go's kadm (Go, from the Go module proxy) reassigns, lists and elects over TCP.

client_tests/go/reassign is a small kadm program built by scripts/setup.d/35-go.sh;
each call prints one JSON object per partition with kerr's error name and the
broker's message.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from emulator import Cluster
from emulator.testing import wait_for

# Not run with --target kafka: holds reassignments with the emulator's pause_follower fault.
pytestmark = pytest.mark.emulator_only

HELPER = Path(__file__).resolve().parent / "go" / ".bin" / "reassign"



@pytest.fixture
def cluster() -> Iterator[Cluster]:
    if not HELPER.exists():
        raise AssertionError(f"{HELPER} is missing: run scripts/setup.d/35-go.sh (needs Go)")
    with Cluster(brokers=4, port=0) as c:
        c.call(lambda: c.state.create_topic("t", assignments={0: [1, 2], 1: [2, 3]}))
        yield c


def kadm(c: Cluster, *args: str) -> dict[tuple[str, int], dict]:
    r = subprocess.run([str(HELPER), "-brokers", c.bootstrap_servers, *args],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    return {(row["topic"], row["partition"]): row for row in rows}


def brief(rows: dict) -> dict:
    return {k: (v["error"], v["message"]) for k, v in rows.items()}


def test_kadm_reassigns_lists_cancels_and_elects(cluster: Cluster) -> None:
    cluster.pause_follower(4)
    msg = "The manual partition assignment includes "
    assert brief(kadm(cluster, "alter", "t:0=3,4", "t:1=2,2", "t:5=1", "nope:0=1")) == {
        ("t", 0): ("", ""),
        ("t", 1): ("INVALID_REPLICA_ASSIGNMENT", msg + "the broker 2 more than once."),
        ("t", 5): ("UNKNOWN_TOPIC_OR_PARTITION", "Unable to find partition t:5."),
        ("nope", 0): ("UNKNOWN_TOPIC_OR_PARTITION", "Unable to find a topic named nope.")}
    rows = kadm(cluster, "list")
    assert {k: (v["replicas"], v["adding"], v["removing"]) for k, v in rows.items()} == {
        ("t", 0): ([3, 4, 1, 2], [3, 4], [1, 2])}
    assert set(kadm(cluster, "list", "t:0", "t:1")) == {("t", 0)}
    assert brief(kadm(cluster, "alter", "t:0=cancel", "t:1=cancel")) == {
        ("t", 0): ("", ""), ("t", 1): ("NO_REASSIGNMENT_IN_PROGRESS", "")}
    assert kadm(cluster, "list") == {}
    cluster.resume_follower(4)
    assert brief(kadm(cluster, "alter", "t:0=4,3")) == {("t", 0): ("", "")}
    wait_for(lambda: cluster.call(lambda: cluster.state.get_partition("t", 0).replicas) == [4, 3],
             "the reassignment")
    assert cluster.call(lambda: cluster.state.get_partition("t", 0).leader) == 4
    rows = kadm(cluster, "elect", "preferred", "t:0", "t:1", "t:9")
    assert {k: (v["error"], v["code"]) for k, v in rows.items()} == {
        ("t", 0): ("ELECTION_NOT_NEEDED", 84), ("t", 1): ("ELECTION_NOT_NEEDED", 84),
        ("t", 9): ("UNKNOWN_TOPIC_OR_PARTITION", 3)}
    assert rows[("t", 9)]["message"] == "No such partition as t-9"
    assert brief(kadm(cluster, "elect", "unclean", "t:0")) == {
        ("t", 0): ("ELECTION_NOT_NEEDED", "Leader election not needed for topic partition.")}
