"""DescribeProducers on a follower under each fidelity (docs/fidelity.md,
describe-producers-follower), through the handler on a manual clock.

A follower that has not fetched the leader's latest batches answers, under
``--fidelity kafka``, from its own log (the state Kafka's follower holds); ``fast``
answers every replica from the leader's state. Once caught up both agree.
client_tests/test_describe_producers_follower.py checks the behaviour on both targets.
"""

from __future__ import annotations

import pytest
from cluster_sim import new_cluster

from emulator.cluster.state import ClusterState
from emulator.handlers import api_061_describe_producers as describe
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E
from wire.records import build_batch, control_batch


def setup(mode: str) -> ClusterState:
    s = new_cluster(3, fidelity=mode).state
    s.create_topic("t", 1, 3)
    return s


def answer(s: ClusterState, broker: int) -> list[dict]:
    r = describe.handle(RequestContext(s, broker, 61, 0, 1, "c"),
                        {"topics": [{"name": "t", "partition_indexes": [0]}]}, 0)
    p = r["topics"][0]["partitions"][0]
    assert p["error_code"] == E.NONE
    return p["active_producers"]


def append(s: ClusterState, batch: bytes) -> None:
    p = s.get_partition("t", 0)
    assert s.append(p.leader, "t", 0, batch, 1).error == E.NONE


@pytest.mark.parametrize("mode", ["kafka", "fast"])
def test_a_follower_behind_answers_from_its_own_log_under_kafka(mode: str) -> None:
    s = setup(mode)
    p = s.get_partition("t", 0)
    follower = next(b for b in p.replicas if b != p.leader)
    append(s, build_batch([(b"k", b"v")], producer_id=7, producer_epoch=0, base_sequence=0,
                          timestamp=1000))
    s.tick()
    append(s, build_batch([(b"k", b"v")] * 2, producer_id=7, producer_epoch=0,
                          base_sequence=1, timestamp=2000))
    append(s, build_batch([(b"k", b"v")], producer_id=8, producer_epoch=0, base_sequence=0,
                          timestamp=3000))
    leader_view = answer(s, p.leader)
    assert [(a["producer_id"], a["last_sequence"]) for a in leader_view] == [(7, 2), (8, 0)]
    behind = answer(s, follower)
    if mode == "kafka":  # what it has fetched: producer 7's first batch only
        assert [(a["producer_id"], a["last_sequence"], a["last_timestamp"])
                for a in behind] == [(7, 0, 1000)]
    else:
        assert behind == leader_view
    s.tick()
    assert answer(s, follower) == leader_view  # caught up: the leader's state


def test_a_lagging_follower_sees_the_open_transaction_and_its_marker() -> None:
    s = setup("kafka")
    p = s.get_partition("t", 0)
    follower = next(b for b in p.replicas if b != p.leader)
    append(s, build_batch([(b"k", b"v")], producer_id=9, producer_epoch=1, base_sequence=0,
                          transactional=True, timestamp=1000))
    s.tick()
    assert [a["current_txn_start_offset"] for a in answer(s, follower)] == [0]
    p.leader_log.append_as_leader(control_batch(True, 9, 1, 2000, coordinator_epoch=5),
                                  p.leader_epoch, -1)
    s.tick()  # the follower has the marker, then falls behind again
    append(s, build_batch([(b"k", b"v")], producer_id=10, producer_epoch=0,
                          base_sequence=0, timestamp=3000))
    (entry,) = answer(s, follower)
    assert (entry["producer_id"], entry["current_txn_start_offset"],
            entry["coordinator_epoch"]) == (9, -1, 5)
