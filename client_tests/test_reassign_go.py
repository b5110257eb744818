"""franz-go's kadm (Go, from the Go module proxy) reassigns, lists and elects over TCP,
on either target (the emulator, or a real Kafka with --target kafka).

client_tests/go/reassign is a small kadm program built by scripts/setup.d/35-go.sh;
each call prints one JSON object per partition with kerr's error name and the
broker's message. A reassignment is held in flight as client_tests/test_reassign_admin_api.py
holds one: its target broker is down (it stays registered, so the move waits for it).
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest

from client_tests.rawkafka import create_assigned, metadata_brokers, replicas_of
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for

Target = Cluster | KafkaTarget
HELPER = Path(__file__).resolve().parent / "go" / ".bin" / "reassign"


@pytest.fixture(autouse=True)
def require_helper() -> None:
    if not HELPER.exists():
        raise AssertionError(f"{HELPER} is missing: run scripts/setup.d/35-go.sh (needs Go)")


def kadm(c: Target, *args: str) -> dict[tuple[str, int], dict]:
    r = subprocess.run([str(HELPER), "-brokers", c.bootstrap_servers, *args],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(line) for line in r.stdout.splitlines()]
    return {(row["topic"], row["partition"]): row for row in rows}


def brief(rows: dict) -> dict:
    return {k: (v["error"], v["message"]) for k, v in rows.items()}


def test_kadm_reassigns_lists_cancels_and_elects(cluster: Target) -> None:
    b1, b2, b3 = cluster.broker_ids
    s = uuid.uuid4().hex[:8]
    t, nope = f"t-{s}", f"nope-{s}"
    create_assigned(cluster, t, {0: [b1, b2], 1: [b2, b1]})
    # b3, the target of t-0's move, is down: the move waits for it. Once b3 is fenced (at
    # once on the emulator, after broker.session.timeout.ms on Kafka) no client picks it.
    cluster.stop_broker(b3)
    wait_for(lambda: b3 not in metadata_brokers(cluster), f"broker {b3} fenced", 60)
    msg = "The manual partition assignment includes "
    assert brief(kadm(cluster, "alter", f"{t}:0={b3},{b2}", f"{t}:1={b2},{b2}", f"{t}:5={b1}",
                      f"{nope}:0={b1}")) == {
        (t, 0): ("", ""),
        (t, 1): ("INVALID_REPLICA_ASSIGNMENT", msg + f"the broker {b2} more than once."),
        (t, 5): ("UNKNOWN_TOPIC_OR_PARTITION", f"Unable to find partition {t}:5."),
        (nope, 0): ("UNKNOWN_TOPIC_OR_PARTITION", f"Unable to find a topic named {nope}.")}

    def in_flight() -> dict:
        return {k: (v["replicas"], v["adding"], v["removing"])
                for k, v in kadm(cluster, "list").items() if k[0] == t}

    # Kafka's brokers learn of the reassignment from the metadata log, a moment later
    wait_for(lambda: in_flight() == {(t, 0): ([b3, b2, b1], [b3], [b1])},
             f"{t}-0's reassignment listed")
    assert set(kadm(cluster, "list", f"{t}:0", f"{t}:1")) == {(t, 0)}
    assert brief(kadm(cluster, "alter", f"{t}:0=cancel", f"{t}:1=cancel")) == {
        (t, 0): ("", ""), (t, 1): ("NO_REASSIGNMENT_IN_PROGRESS", "")}
    wait_for(lambda: in_flight() == {}, f"{t}-0's reassignment cancelled")
    # the replicas without the ones being added: b1, the one being removed, is now last
    wait_for(lambda: replicas_of(cluster, t)[0] == [b2, b1], f"{t}-0 back on {b2}, {b1}")
    cluster.start_broker(b3)
    wait_for(lambda: b3 in metadata_brokers(cluster), f"broker {b3} back", 60)
    # Since the cancel t-0's preferred replica is b2 while b1 leads: Kafka's auto leader
    # rebalance (every leader.imbalance.check.interval.seconds, 300 s, counted from the
    # controller's start, so it can strike in a long Kafka pass) may have moved the
    # leader to b2 already. The emulator's first check is as far off, so there b1 leads.
    before = replicas_of(cluster, t)[2]
    assert before == b1 or (isinstance(cluster, KafkaTarget) and before == b2), before
    assert brief(kadm(cluster, "alter", f"{t}:0={b3},{b2}")) == {(t, 0): ("", "")}
    # the leader b1 is removed: the first target replica in the ISR leads. A leader b2
    # stays in the target, so it keeps leading (until a rebalance moves it to b3).
    leaders = {b3} if before == b1 else {b2, b3}
    want = ([b3, b2], sorted([b2, b3]), leaders)
    seen = [replicas_of(cluster, t)]

    def reassigned() -> bool:
        seen.append(replicas_of(cluster, t))
        replicas, isr, leader = seen[-1]
        return (replicas, isr) == want[:2] and leader in leaders
    try:
        wait_for(reassigned, "the reassignment", 60)
    except AssertionError as e:  # say where it stood: (replicas, ISR, leader)
        raise AssertionError(f"{e}: want {want}, first {seen[0]}, last {seen[-1]}") from None
    if seen[-1][2] != b3:  # led by b2 since Kafka's rebalance: the preferred b3 leads next
        assert brief(kadm(cluster, "elect", "preferred", f"{t}:0")) == {(t, 0): ("", "")}
        wait_for(lambda: replicas_of(cluster, t)[2] == b3, f"{t}-0 led by {b3}")
    rows = kadm(cluster, "elect", "preferred", f"{t}:0", f"{t}:1", f"{t}:9")
    assert {k: (v["error"], v["code"]) for k, v in rows.items()} == {
        (t, 0): ("ELECTION_NOT_NEEDED", 84), (t, 1): ("ELECTION_NOT_NEEDED", 84),
        (t, 9): ("UNKNOWN_TOPIC_OR_PARTITION", 3)}
    assert rows[(t, 9)]["message"] == f"No such partition as {t}-9"
    assert brief(kadm(cluster, "elect", "unclean", f"{t}:0")) == {
        (t, 0): ("ELECTION_NOT_NEEDED", "Leader election not needed for topic partition.")}
