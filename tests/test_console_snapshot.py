"""The console's snapshot as a pure function of the domain (manual clock, no I/O): a
reassignment held by a paused follower shows its moving replica at 0 bytes, a crashed
broker and the throttles show, and ``kafka-emulator top`` renders the same frame."""

from __future__ import annotations

from cluster_sim import new_cluster

from emulator.cluster.clock import ManualClock
from emulator.cluster.reassignment import start_reassignment
from emulator.control.console import ConsoleCache, console_snapshot
from emulator.faults import FaultInjector
from emulator.tools.top import render
from wire.records import build_batch


def test_snapshot_of_a_held_reassignment_and_a_crashed_broker() -> None:
    clock = ManualClock()
    s, _, faults = new_cluster(3, clock)
    s.create_topic("t", assignments={0: [1, 2]},
                   configs={"leader.replication.throttled.replicas": "0:1"})
    p = s.topics["t"].partitions[0]
    assert s.append(p.leader, "t", 0, build_batch([(None, b"v" * 50)] * 10), 1).error == 0
    faults.apply({"op": "pause_follower", "broker": 3})
    start_reassignment(s, p, [3, 1])
    snap = console_snapshot(s, faults=faults.model.describe(), fault_log=[{"op": "x"}] * 30)
    (r,) = snap["reassignments"]
    assert (r["topic"], r["partition"], r["adding"], r["removing"]) == ("t", 0, [3], [2])
    (moving,) = r["progress"]
    assert moving["broker"] == 3 and moving["bytes"] == 0 and moving["target_bytes"] > 0
    assert moving["fraction"] == 0.0
    assert snap["throttled_topics"] == [{"topic": "t", "leader_replicas": "0:1",
                                         "follower_replicas": ""}]
    assert snap["faults"]["followers"] and len(snap["fault_log"]) == 20
    leader = next(b for b in snap["brokers"] if b["id"] == p.leader)
    assert leader["produced"] == 10 and leader["controller"] == (p.leader == s.controller_id)
    frame = render(snap)
    assert "REASSIGNMENTS (1 in flight)" in frame
    assert "replica 3: [------------------------]   0.0%" in frame

    faults.apply({"op": "stop_broker", "broker": 2})
    snap = console_snapshot(s)
    b2 = next(b for b in snap["brokers"] if b["id"] == 2)
    assert b2["crashed"] or b2["fenced"], b2
    assert snap["groups"] == [] and snap["schedule"] is None


def test_cached_snapshot_rebuilds_only_changed_topics_and_equals_a_fresh_one() -> None:
    """With a ConsoleCache, a refresh rebuilds the views of the topics whose partitions
    changed (an append, a leader change, a broker's liveness) and reuses the others; the
    snapshot is the same as one built from nothing."""
    s = new_cluster(3).state
    for i in range(5):
        s.create_topic(f"t{i}", assignments={0: [1, 2], 1: [2, 3], 2: [3, 1]})
    cache = ConsoleCache()
    first = console_snapshot(s, cache=cache)
    assert cache.rebuilt == 5 and first == console_snapshot(s)
    again = console_snapshot(s, cache=cache)
    assert cache.rebuilt == 0 and again == first
    revs = {n: tv.rev for n, tv in cache.topics.items()}

    p = s.topics["t3"].partitions[1]
    assert s.append(p.leader, "t3", 1, build_batch([(None, b"v")] * 4), 1).error == 0
    snap = console_snapshot(s, cache=cache)
    assert cache.rebuilt == 1 and snap == console_snapshot(s)
    assert [n for n, tv in cache.topics.items() if tv.rev != revs[n]] == ["t3"]
    (t3,) = [t for t in snap["topics"] if t["name"] == "t3"]
    assert t3["partitions"][1][5][str(p.leader)] == 4

    s.delete_topic("t0")
    faults = FaultInjector(s)
    faults.apply({"op": "stop_broker", "broker": 2})  # every topic has a replica on 2
    snap = console_snapshot(s, cache=cache)
    assert sorted(cache.topics) == ["t1", "t2", "t3", "t4"] and cache.rebuilt == 4
    assert snap == console_snapshot(s)
