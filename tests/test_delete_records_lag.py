"""DeleteRecords in the window before a broker learns a metadata change (--fidelity kafka),
on a manual clock (tests/test_metadata_views.py's set-up).

Kafka's ReplicaManager.deleteRecords asks the broker's own metadata first: a partition
the broker does not know yet is UNKNOWN_TOPIC_OR_PARTITION, and a new leader that has not
learned it leads answers NOT_LEADER_OR_FOLLOWER; once the broker has learned the change
the same request deletes. The handler's check of the broker's view was unpinned: a
mutation run of emulator/handlers/api_021_delete_records.py (docs/mutation.md) left every
change to that call's arguments alive, the client tests seeing only settled views.
"""

from __future__ import annotations

from cluster_sim import new_cluster

from emulator.cluster import controller
from emulator.cluster.clock import ManualClock
from emulator.cluster.metadata_views import DEFAULT_LAG_MS
from emulator.cluster.state import ClusterState
from emulator.fidelity import Fidelity
from emulator.handlers import api_021_delete_records
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E
from wire.records import build_batch

LAG_MAX = DEFAULT_LAG_MS[1]


def make() -> tuple[ClusterState, ManualClock]:
    s, clock, _ = new_cluster(3, ManualClock(1_000_000), fidelity=Fidelity("kafka", seed=7))
    return s, clock


def delete(s: ClusterState, broker: int, topic: str, partition: int,
           offset: int) -> tuple[int, int]:
    req = {"topics": [{"name": topic, "partitions": [
        {"partition_index": partition, "offset": offset}]}], "timeout_ms": 1000}
    out = api_021_delete_records.handle(RequestContext(s, broker, 21, 2, 1, "t"), req, 2)
    [t] = out["topics"]
    [p] = t["partitions"]
    assert (t["name"], p["partition_index"]) == (topic, partition)
    return p["error_code"], p["low_watermark"]


def test_a_new_topic_is_unknown_to_a_broker_until_it_learns_it() -> None:
    s, clock = make()
    s.create_topic("t", 2, 3)
    p = s.topics["t"].partitions[1]
    for b in (1, 2, 3):  # nobody has applied the record yet
        assert delete(s, b, "t", 1, 0) == (E.UNKNOWN_TOPIC_OR_PARTITION, -1)
    clock.advance(LAG_MAX)
    s.append(p.leader, "t", 1, build_batch([(None, b"v")] * 3), 1)
    followers = [b for b in p.replicas if b != p.leader]
    assert delete(s, followers[0], "t", 1, 1) == (E.NOT_LEADER_OR_FOLLOWER, -1)
    s.tick()  # the followers fetch: the high watermark reaches 3
    assert p.high_watermark == 3
    assert delete(s, p.leader, "t", 1, 1) == (E.NONE, 1)


def test_a_new_leader_refuses_until_it_learns_it_leads() -> None:
    s, clock = make()
    s.create_topic("lead", 1, 3)
    clock.advance(LAG_MAX)
    p = s.topics["lead"].partitions[0]
    old = p.leader
    s.metadata_views.set_lag(old, 60_000)  # the old leader learns the move a minute late
    controller.controlled_shutdown(s, old)
    new = p.leader
    assert new not in (old, -1)
    assert delete(s, new, "lead", 0, 0) == (E.NOT_LEADER_OR_FOLLOWER, -1)
    clock.advance(LAG_MAX)
    # the new leader has learned it leads (the old one not yet): its own view decides
    assert delete(s, new, "lead", 0, 0) == (E.NONE, 0)
