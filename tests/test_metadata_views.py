"""Per-broker metadata views (emulator/cluster/metadata_views.py) on a manual clock.

Under ``--fidelity kafka`` each broker learns the controller's changes after a lag, as a
Kafka broker learns them through its own metadata cache: right after CreateTopics,
DeleteTopics, CreatePartitions, a leader change or a config change, a request to a
broker that has not learned it yet gets the answer Kafka gives in that window. Under
``fast`` (the default) every broker sees every change at once. The same behaviour over
TCP, against real Kafka too, is client_tests/test_metadata_propagation.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from cluster_sim import new_cluster

from emulator.cluster import config_ops, controller
from emulator.cluster.clock import ManualClock
from emulator.cluster.metadata_views import CURRENT, DEFAULT_LAG_MS
from emulator.cluster.state import ClusterState
from emulator.fidelity import Fidelity
from emulator.handlers import (
    api_002_list_offsets,
    api_003_metadata,
    api_032_describe_configs,
    api_075_describe_topic_partitions,
)
from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

LAG_MAX = DEFAULT_LAG_MS[1]


def make(mode: str, clock: ManualClock | None = None) -> tuple[ClusterState, ManualClock]:
    s, clock, _ = new_cluster(3, clock or ManualClock(1_000_000), fidelity=Fidelity(mode, seed=7))
    return s, clock


def ctx(s: ClusterState, broker: int, key: int = 3) -> RequestContext:
    return RequestContext(s, broker, key, 12, 1, "t")


def metadata(s: ClusterState, broker: int, name: str | None = None) -> Any:
    """Metadata v12 of ``name`` (or of every topic) as broker ``broker`` answers it."""
    topics = None if name is None else [{"name": name, "topic_id": bytes(16)}]
    req = {"topics": topics, "allow_auto_topic_creation": False,
           "include_topic_authorized_operations": False}
    out = api_003_metadata.handle(ctx(s, broker), req, 12)
    if name is None:
        return {t["name"] for t in out["topics"]}
    return out["topics"][0]


def list_offsets(s: ClusterState, broker: int, name: str, epoch: int = -1) -> int:
    req = {"replica_id": -1, "isolation_level": 0, "topics": [
        {"name": name, "partitions": [{"partition_index": 0, "timestamp": -1,
                                       "current_leader_epoch": epoch}]}]}
    out = api_002_list_offsets.handle(ctx(s, broker, 2), req, 7)
    return out["topics"][0]["partitions"][0]["error_code"]


def test_fast_every_broker_knows_a_new_topic_at_once() -> None:
    s, _ = make("fast")
    s.create_topic("t", 1, 3)
    assert not s.metadata_views.active
    for b in (1, 2, 3):
        assert metadata(s, b, "t")["error_code"] == E.NONE
        assert metadata(s, b, "t")["partitions"][0]["leader_id"] >= 0


def test_kafka_a_new_topic_reaches_each_broker_after_its_lag() -> None:
    s, clock = make("kafka")
    s.create_topic("t", 2, 3)
    for b in (1, 2, 3):  # nobody has applied the record yet (the lag is at least 1 ms)
        t = metadata(s, b, "t")
        assert (t["error_code"], t["partitions"]) == (E.UNKNOWN_TOPIC_OR_PARTITION, [])
        assert "t" not in metadata(s, b)
    leader = s.topics["t"].partitions[0].leader
    # the leader does not lead yet by its own metadata: it does not know the partition
    assert list_offsets(s, leader, "t") == E.UNKNOWN_TOPIC_OR_PARTITION
    clock.advance(LAG_MAX)
    for b in (1, 2, 3):
        t = metadata(s, b, "t")
        assert t["error_code"] == E.NONE and len(t["partitions"]) == 2
        assert all(p["leader_id"] >= 0 for p in t["partitions"])
    assert list_offsets(s, leader, "t") == E.NONE
    assert s.metadata_views.caught_up()


def test_kafka_a_topic_id_is_unknown_until_the_broker_learns_it() -> None:
    s, clock = make("kafka")
    created = s.create_topic("byid", 1, 3)
    assert created is not None
    tid = created.id
    req = {"topics": [{"name": None, "topic_id": tid}], "allow_auto_topic_creation": False,
           "include_topic_authorized_operations": False}
    t = api_003_metadata.handle(ctx(s, 2), req, 12)["topics"][0]
    assert (t["error_code"], t["topic_id"]) == (E.UNKNOWN_TOPIC_ID, tid)
    clock.advance(LAG_MAX)
    t = api_003_metadata.handle(ctx(s, 2), req, 12)["topics"][0]
    assert (t["error_code"], t["name"]) == (E.NONE, "byid")


def test_kafka_a_deleted_topic_stays_visible_until_the_broker_learns_it() -> None:
    s, clock = make("kafka")
    s.create_topic("gone", 1, 3)
    clock.advance(LAG_MAX)
    s.delete_topic("gone")
    for b in (1, 2, 3):
        assert metadata(s, b, "gone")["error_code"] == E.NONE
        assert "gone" in metadata(s, b)
    clock.advance(LAG_MAX)
    for b in (1, 2, 3):
        assert metadata(s, b, "gone")["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
        assert "gone" not in metadata(s, b)


def test_kafka_a_new_leader_answers_not_leader_until_it_learns_it_leads() -> None:
    s, clock = make("kafka")
    s.create_topic("lead", 1, 3)
    clock.advance(LAG_MAX)
    p = s.topics["lead"].partitions[0]
    old, old_epoch = p.leader, p.leader_epoch
    controller.controlled_shutdown(s, old)  # the controller moves the leadership away
    new = p.leader
    assert new not in (old, -1)
    others = [b for b in (1, 2, 3) if b != old]
    for b in others:  # the brokers still name the old leader and epoch
        part = metadata(s, b, "lead")["partitions"][0]
        assert (part["leader_id"], part["leader_epoch"]) == (old, old_epoch)
    assert list_offsets(s, new, "lead") == E.NOT_LEADER_OR_FOLLOWER
    # a client that learned the new epoch elsewhere is ahead of this broker
    assert list_offsets(s, new, "lead", p.leader_epoch) == E.UNKNOWN_LEADER_EPOCH
    clock.advance(LAG_MAX)
    assert metadata(s, others[0], "lead")["partitions"][0]["leader_id"] == new
    assert list_offsets(s, new, "lead") == E.NONE


def test_kafka_new_partitions_and_configs_arrive_late() -> None:
    s, clock = make("kafka")
    s.create_topic("grow", 1, 3)
    clock.advance(LAG_MAX)
    s.create_partitions("grow", 3, None, False)
    config_ops.incremental_alter(s, 2, "grow", [("retention.ms", 0, "1234")], False, 1)
    req = {"resources": [{"resource_type": 2, "resource_name": "grow",
                          "configuration_keys": ["retention.ms"]}],
           "include_synonyms": False, "include_documentation": False}
    for b in (1, 2, 3):
        assert len(metadata(s, b, "grow")["partitions"]) == 1
        out = api_032_describe_configs.handle(ctx(s, b, 32), req, 4)
        assert out["results"][0]["configs"][0]["value"] != "1234"
    clock.advance(LAG_MAX)
    for b in (1, 2, 3):
        assert len(metadata(s, b, "grow")["partitions"]) == 3
        out = api_032_describe_configs.handle(ctx(s, b, 32), req, 4)
        assert out["results"][0]["configs"][0]["value"] == "1234"


def test_set_lag_makes_one_broker_much_staler() -> None:
    s, clock = make("fast")
    s.metadata_views.set_lag(3, 10_000)  # turns the views on, even in fast
    assert s.metadata_views.active
    s.create_topic("slow", 1, 3)
    clock.advance(LAG_MAX)
    assert metadata(s, 1, "slow")["error_code"] == E.NONE
    assert metadata(s, 3, "slow")["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
    assert not s.metadata_views.caught_up(3) and s.metadata_views.caught_up(1)
    req = {"topics": [{"name": "slow"}], "response_partition_limit": 100, "cursor": None}
    out = api_075_describe_topic_partitions.handle(ctx(s, 3, 75), req, 0)
    assert out["topics"][0]["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
    clock.advance(10_000)
    assert metadata(s, 3, "slow")["error_code"] == E.NONE
    assert s.metadata_views.view(3, "slow") is CURRENT


def test_changes_reach_a_broker_in_commit_order() -> None:
    """A broker applies the metadata log in order: it never sees a later change before
    an earlier one, whatever lags were drawn."""
    s, clock = make("kafka")
    for i in range(30):
        s.create_topic(f"o{i}", 1, 1)
        clock.advance(1)
    for _ in range(LAG_MAX + 1):
        for b in (1, 2, 3):
            known = metadata(s, b)
            seen = [i for i in range(30) if f"o{i}" in known]
            assert seen == list(range(len(seen))), (b, seen)
        clock.advance(1)


@pytest.mark.parametrize("bad", [(-1, 0), (5, -1)])
def test_set_lag_refuses_negative_times(bad: tuple[int, int]) -> None:
    s, _ = make("kafka")
    with pytest.raises(ValueError):
        s.metadata_views.set_lag(1, *bad)
