"""KIP-1071 streams groups (StreamsGroupHeartbeat) as a pure state machine, manual clock.

Topology configuration (missing source / internal topics, repartition and changelog
partition counts, copartitioning), the initial rebalance delay, the sticky task
assignor with standbys, the revoke-before-reassign handshake over two processes,
leave and session timeout, endpoints for interactive queries, offset commits with
member epochs, and the request errors Kafka 4.4 answers.
"""

from __future__ import annotations

import pytest
from cluster_sim import new_cluster

from emulator.cluster import controller
from emulator.cluster.clock import ManualClock
from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.streams import assignment as sa
from emulator.coordinators.streams import topology as st
from wire.errors import ErrorCode as E
from wire.messages import REQUESTS

G = "app"
DELAY = 3000  # group.streams.initial.rebalance.delay.ms


def topic_info(name: str, partitions: int = 0) -> dict:
    return {"name": name, "partitions": partitions, "replication_factor": 0,
            "topic_configs": []}


def word_count_topology(epoch: int = 0) -> dict:
    """Kafka Streams' word count: split + repartition, then count into a store."""
    return {"epoch": epoch, "subtopologies": [
        {"subtopology_id": "0", "source_topics": ["input"], "source_topic_regex": [],
         "state_changelog_topics": [], "repartition_sink_topics": ["app-counts-repartition"],
         "repartition_source_topics": [], "copartition_groups": []},
        {"subtopology_id": "1", "source_topics": [], "source_topic_regex": [],
         "state_changelog_topics": [topic_info("app-counts-changelog")],
         "repartition_sink_topics": [],
         "repartition_source_topics": [topic_info("app-counts-repartition")],
         "copartition_groups": []},
    ]}


class Harness:
    def __init__(self, partitions: int = 4, **config: str) -> None:
        cfg = {"offsets.topic.num.partitions": "3", **config}
        self.state = new_cluster(3, **cfg).state
        self.gc = GroupCoordinator(self.state)
        self.state.create_topic("input", partitions, 1)
        self.epochs: dict[str, int] = {}
        self.owned: dict[str, sa.Tasks] = {}
        self.endpoint_epoch: dict[str, int] = {}
        self.endpoints: dict[str, tuple[str, int]] = {}

    @property
    def clock(self) -> ManualClock:
        return self.state.clock

    def request(self, member: str, epoch: int, **fields) -> dict:
        req = REQUESTS[88].msg  # every field at its default, as the decoder gives them
        out = {f.name: f.default for f in req.fields}
        out.update(group_id=G, member_id=member, member_epoch=epoch)
        out.update(fields)
        return out

    def hb(self, member: str, epoch: int | None = None, *, process: str | None = None,
           topology: dict | None = None, endpoint: tuple[str, int] | None = None,
           instance: str | None = None, report: bool = True, **fields) -> dict:
        """One heartbeat; applies the returned tasks like a Streams client."""
        if epoch is None:
            epoch = self.epochs.get(member, 0)
        joining = epoch == 0
        if endpoint is not None:
            self.endpoints[member] = endpoint
        endpoint = self.endpoints.get(member) if joining else endpoint  # as a client resends
        owned = self.owned.get(member, sa.Tasks())
        req = self.request(
            member, epoch, instance_id=instance,
            endpoint_information_epoch=self.endpoint_epoch.get(member, -1),
            rebalance_timeout_ms=60_000 if joining else -1,
            topology=(topology or word_count_topology()) if joining else None,
            process_id=(process or member) if joining else None,
            user_endpoint={"host": endpoint[0], "port": endpoint[1]} if endpoint else None,
            active_tasks=[] if joining else (sa.task_ids(owned.active) if report else None),
            standby_tasks=[] if joining else (sa.task_ids(owned.standby) if report else None),
            warmup_tasks=[] if joining else (sa.task_ids(owned.warmup) if report else None),
        )
        req.update(fields)
        self.gc.tick()
        r, create = self.gc.streams_group_heartbeat(req, client_id="c", client_host="/h")
        for name, (parts, rf, configs) in create.items():
            self.state.create_topic(name, parts, rf, configs=configs)
        r["created"] = sorted(create)
        if r["error_code"] == E.NONE:
            self.epochs[member] = r["member_epoch"]
            self.endpoint_epoch[member] = r["endpoint_information_epoch"]
            if r["active_tasks"] is not None:
                t = sa.Tasks()
                for ti in r["active_tasks"]:
                    t.active[ti["subtopology_id"]] = dict.fromkeys(ti["partitions"], 0)
                for ti in r["standby_tasks"]:
                    t.standby[ti["subtopology_id"]] = set(ti["partitions"])
                self.owned[member] = t
        return r

    def active(self, member: str) -> set[tuple[str, int]]:
        return self.owned.get(member, sa.Tasks()).active_set()

    def settle(self, members: list[str], rounds: int = 8) -> None:
        for _ in range(rounds):
            for m in members:
                self.hb(m)

    def group(self):
        return self.gc.groups[G]


def statuses(r: dict) -> dict[int, str]:
    return {s["status_code"]: s["status_detail"] for s in r["status"] or []}


def test_first_member_configures_topology_creates_internal_topics_and_waits_delay() -> None:
    h = Harness()
    r = h.hb("m1")
    assert r["error_code"] == E.NONE and r["member_epoch"] == 1  # the initial assignment
    st_ = statuses(r)
    assert st_[st.MISSING_INTERNAL_TOPICS].startswith("Internal topics are missing: ")
    assert st.ASSIGNMENT_DELAYED in st_
    assert r["created"] == ["app-counts-changelog", "app-counts-repartition"]
    # repartition topic: the writer's source count; changelog: its subtopology's tasks
    assert len(h.state.topics["app-counts-repartition"].partitions) == 4
    assert len(h.state.topics["app-counts-changelog"].partitions) == 4
    assert h.group().state == "NotReady"
    r = h.hb("m1")  # topics exist now: topology validated, still within the delay
    assert st.MISSING_INTERNAL_TOPICS not in statuses(r)
    assert st.ASSIGNMENT_DELAYED in statuses(r)
    assert r["active_tasks"] is None and h.group().state == "Assigning"
    h.clock.advance(DELAY)
    r = h.hb("m1")
    assert r["member_epoch"] == h.group().group_epoch > 0
    assert h.active("m1") == {(s, p) for s in "01" for p in range(4)}
    assert h.group().state == "Stable"
    assert r["heartbeat_interval_ms"] == 5000 and r["task_offset_interval_ms"] == 60000


def test_missing_source_topic_status_and_no_tasks() -> None:
    h = Harness()
    topo = word_count_topology()
    topo["subtopologies"][0]["source_topics"] = ["nope"]
    r = h.hb("m1", topology=topo)
    assert statuses(r)[st.MISSING_SOURCE_TOPICS] == "Source topics nope are missing."
    assert r["created"] == []
    h.clock.advance(DELAY)
    r = h.hb("m1")
    assert h.active("m1") == set() and h.group().state == "NotReady"


def test_incorrectly_partitioned_changelog() -> None:
    h = Harness()
    h.state.create_topic("app-counts-changelog", 2, 1)
    r = h.hb("m1")
    assert statuses(r)[st.INCORRECTLY_PARTITIONED_TOPICS] == (
        "Existing topic app-counts-changelog has different number of partitions: "
        "expected 4, found 2")


def test_two_processes_share_tasks_with_revocation_first_then_leave_moves_them() -> None:
    h = Harness()
    h.hb("m1")
    h.hb("m1")
    h.clock.advance(DELAY)
    h.settle(["m1"], 2)
    assert len(h.active("m1")) == 8
    h.hb("m2")
    # m1 must give up tasks before m2 gets them: never held by both
    for _ in range(8):
        for m in ("m1", "m2"):
            h.hb(m)
            assert not h.active("m1") & h.active("m2")
        h.clock.advance(1000)  # group.streams.assignment.interval.ms
    assert len(h.active("m1")) == len(h.active("m2")) == 4
    assert h.group().state == "Stable"
    kept = set(h.active("m1"))
    r = h.hb("m2", -1)
    assert r["error_code"] == E.NONE and r["member_epoch"] == -1
    h.settle(["m1"], 3)
    assert len(h.active("m1")) == 8 and kept <= h.active("m1")  # sticky


def test_session_timeout_fences_member() -> None:
    h = Harness()
    h.hb("m1")
    h.hb("m1")
    h.clock.advance(DELAY)
    h.hb("m1")
    h.hb("m2")
    h.clock.advance(30_000)
    h.hb("m1")
    h.clock.advance(20_000)  # m2 silent for 50 s > 45 s
    h.gc.tick()
    assert set(h.group().members) == {"m1"}
    r = h.hb("m2")
    assert r["error_code"] == E.UNKNOWN_MEMBER_ID


def test_standby_tasks_on_other_process() -> None:
    h = Harness(partitions=2, **{"group.streams.num.standby.replicas": "1"})
    for m in ("m1", "m2"):
        h.hb(m)
    h.clock.advance(DELAY)
    for _ in range(8):
        h.settle(["m1", "m2"], 1)
        h.clock.advance(1000)
    standby = {m: h.owned[m].standby_set() for m in ("m1", "m2")}
    assert standby["m1"] and standby["m2"]
    assert not standby["m1"] & h.active("m1") and not standby["m2"] & h.active("m2")
    # standbys only for the stateful subtopology (the one with a changelog)
    assert standby["m1"] | standby["m2"] == {("1", 0), ("1", 1)}


def test_sticky_assignor_like_kafkas() -> None:
    """Kafka's StickyTaskAssignor: a new member takes whole partitions (0_x with 1_x, as
    a real 4.4 broker was seen to do), a moved task's previous owner becomes its
    standby, and a member on a second thread of a process shares that process's load."""
    none = sa.Tasks()
    first = sa.assign([sa.AssignMember("a", "p1", none)], {"0": 4, "1": 4}, 0)
    assert len(first["a"].active_set()) == 8
    two = sa.assign([sa.AssignMember("a", "p1", first["a"]),
                     sa.AssignMember("b", "p2", none)], {"0": 4, "1": 4}, 1, {"1"})
    assert two["a"].active_set() == {(s, p) for s in "01" for p in (0, 1)}
    assert two["b"].active_set() == {(s, p) for s in "01" for p in (2, 3)}
    assert two["a"].standby_set() == {("1", 2), ("1", 3)}  # it ran them before
    assert two["b"].standby_set() == {("1", 0), ("1", 1)}
    three = sa.assign([sa.AssignMember("a", "p1", two["a"]),
                       sa.AssignMember("b", "p2", two["b"]),
                       sa.AssignMember("c", "p2", none)], {"0": 6}, 0)
    assert sorted(len(three[m].active_set()) for m in "abc") == [2, 2, 2]


def test_endpoints_for_interactive_queries() -> None:
    h = Harness()
    h.hb("m1", endpoint=("host1", 7001))
    h.hb("m1")
    h.clock.advance(DELAY)
    r = h.hb("m1")
    assert r["endpoint_information_epoch"] > 0
    [ep] = r["partitions_by_user_endpoint"]
    assert ep["user_endpoint"] == {"host": "host1", "port": 7001}
    topics = {tp["topic"]: tp["partitions"] for tp in ep["active_partitions"]}
    assert topics == {"input": [0, 1, 2, 3], "app-counts-repartition": [0, 1, 2, 3]}
    # an up-to-date member gets nothing
    r = h.hb("m1")
    assert r["partitions_by_user_endpoint"] is None


def test_member_epoch_errors() -> None:
    h = Harness()
    h.hb("m1")
    h.hb("m1")
    h.clock.advance(DELAY)
    h.hb("m1")
    epoch = h.epochs["m1"]
    assert h.hb("m1", epoch + 1)["error_code"] == E.FENCED_MEMBER_EPOCH
    assert h.hb("ghost", 3)["error_code"] == E.UNKNOWN_MEMBER_ID
    r = h.hb("m1", -1, member_id="ghost")
    assert r["error_code"] == E.UNKNOWN_MEMBER_ID


@pytest.mark.parametrize("change, code, message", [
    ({"member_id": ""}, E.INVALID_REQUEST, "MemberId can't be empty."),
    ({"rebalance_timeout_ms": -1}, E.INVALID_REQUEST,
     "RebalanceTimeoutMs must be provided in first request."),
    ({"topology": None}, E.INVALID_REQUEST, "Topology must be non-null when (re-)joining."),
    ({"active_tasks": [{"subtopology_id": "0", "partitions": [0]}]}, E.INVALID_REQUEST,
     "ActiveTasks must be empty when (re-)joining."),
    ({"member_epoch": -3}, E.INVALID_REQUEST,
     "MemberEpoch is -3, but must be greater than or equal to -2."),
])
def test_request_errors(change: dict, code: int, message: str) -> None:
    h = Harness()
    req = h.request("m1", 0, rebalance_timeout_ms=1000, topology=word_count_topology(),
                    active_tasks=[], standby_tasks=[], warmup_tasks=[])
    req.update(change)
    r, _ = h.gc.streams_group_heartbeat(req)
    assert (r["error_code"], r["error_message"]) == (code, message)


def test_invalid_topologies() -> None:
    h = Harness()
    topo = word_count_topology()
    topo["subtopologies"][1]["state_changelog_topics"][0]["partitions"] = 3
    r = h.hb("m1", topology=topo)
    assert r["error_code"] == E.STREAMS_INVALID_TOPOLOGY
    assert "must have an undefined partition count" in r["error_message"]
    topo = word_count_topology()
    topo["subtopologies"][0]["repartition_sink_topics"] = []  # a source nobody writes
    r = h.hb("m1", topology=topo)
    assert r["error_code"] == E.STREAMS_INVALID_TOPOLOGY
    assert "never used as a sink topic" in r["error_message"]
    h.hb("m1")
    r = h.hb("m2", topology=dict(word_count_topology(), subtopologies=[]))
    assert (r["error_code"], r["error_message"]) == (
        E.INVALID_REQUEST, "Topology updates are not supported yet.")


def test_offset_commit_with_member_epochs_and_delete() -> None:
    h = Harness()
    h.hb("m1")
    h.hb("m1")
    h.clock.advance(DELAY)
    h.hb("m1")
    epoch = h.epochs["m1"]
    ok = h.gc.commit_offsets(G, "m1", epoch, [("input", [(0, 5, -1, None)])], version=9)
    assert ok == [("input", [(0, E.NONE)])]
    stale = h.gc.commit_offsets(G, "m1", epoch + 1, [("input", [(0, 6, -1, None)])],
                                version=9)
    assert stale == [("input", [(0, E.STALE_MEMBER_EPOCH)])]
    old = h.gc.commit_offsets(G, "m1", epoch, [("input", [(0, 6, -1, None)])], version=8)
    assert old == [("input", [(0, E.UNSUPPORTED_VERSION)])]
    assert h.gc.delete_group(G) == E.NON_EMPTY_GROUP
    h.hb("m1", -1)
    assert h.group().state == "Empty"
    assert [g["group_type"] for g in h.gc.list_groups(types=["streams"])] == ["streams"]
    assert h.gc.delete_group(G) == E.NONE


def test_txn_offset_commit_to_a_streams_group() -> None:
    """TxnOffsetCommit to a streams group with a member (Kafka 4.4's
    StreamsGroup.validateOffsetCommit): a producer outside group management (no member
    id, generation -1, no instance id) commits; naming an instance id without a member
    id has the member checked (unknown); a member's own transactional commit is not
    held to OffsetCommit's version 9."""
    h = Harness()
    h.hb("m1")
    h.hb("m1")
    h.clock.advance(DELAY)
    h.hb("m1")
    epoch = h.epochs["m1"]

    def txn(member: str, gen: int, instance: str | None = None) -> int:
        [(_, [(_, err)])] = h.gc.txn_offset_commit(G, 7, member, gen,
                                                   [("input", [(0, 5, -1, None)])],
                                                   group_instance_id=instance)
        return err

    assert txn("", -1) == E.NONE
    assert txn("", -1, instance="i") == E.UNKNOWN_MEMBER_ID
    assert txn("m1", epoch) == E.NONE


def test_describe() -> None:
    h = Harness()
    h.hb("m1", endpoint=("h1", 1))
    h.hb("m1")
    h.clock.advance(DELAY)
    h.hb("m1")
    [d] = h.gc.describe_streams_groups([G])
    assert d["group_state"] == "Stable" and d["topology"]["epoch"] == 0
    sub1 = d["topology"]["subtopologies"][1]
    assert sub1["state_changelog_topics"][0]["partitions"] == 4
    [m] = d["members"]
    assert m["process_id"] == "m1" and m["user_endpoint"] == {"host": "h1", "port": 1}
    assert m["assignment"]["active_tasks"] == m["target_assignment"]["active_tasks"]
    [nf] = h.gc.describe_streams_groups(["nope"])
    assert nf["error_code"] == E.GROUP_ID_NOT_FOUND


def test_configure_copartitioned_repartition_topics() -> None:
    topo = st.StreamsTopology.from_wire({"epoch": 1, "subtopologies": [
        {"subtopology_id": "0", "source_topics": ["a"], "source_topic_regex": [],
         "state_changelog_topics": [], "repartition_sink_topics": ["r1"],
         "repartition_source_topics": [], "copartition_groups": []},
        {"subtopology_id": "1", "source_topics": ["b"], "source_topic_regex": [],
         "state_changelog_topics": [], "repartition_sink_topics": ["r2"],
         "repartition_source_topics": [], "copartition_groups": []},
        {"subtopology_id": "2", "source_topics": [], "source_topic_regex": [],
         "state_changelog_topics": [topic_info("cl")], "repartition_sink_topics": [],
         "repartition_source_topics": [topic_info("r1"), topic_info("r2")],
         "copartition_groups": [{"source_topics": [], "source_topic_regex": [],
                                 "repartition_source_topics": [0, 1]}]},
    ]})
    counts = {"a": 3, "b": 5}
    c = st.configure(topo, counts.get)
    assert c.to_create["r1"][0] == c.to_create["r2"][0] == 5
    assert c.subtopologies["2"].num_tasks == 5 and c.to_create["cl"][0] == 5


def test_static_member_leaves_for_a_while_and_comes_back_with_its_tasks() -> None:
    h = Harness()
    h.hb("s1", instance="i1")
    h.hb("s1", instance="i1")
    h.clock.advance(DELAY)
    h.hb("s1", instance="i1")
    tasks = h.active("s1")
    assert len(tasks) == 8
    r = h.hb("x", instance="i1")  # another member claims the instance id
    assert r["error_code"] == E.UNRELEASED_INSTANCE_ID
    r = h.hb("s1", -2, instance="i1")
    assert (r["error_code"], r["member_epoch"]) == (E.NONE, -2)
    assert h.group().members["s1"].member_epoch == -2  # still there, tasks kept
    h.owned.pop("s2", None)
    r = h.hb("s2", 0, instance="i1", process="s1")
    assert r["error_code"] == E.NONE and set(h.group().members) == {"s2"}
    h.settle(["s2"], 2)
    assert h.active("s2") == tasks
    r = h.hb("s1", h.epochs["s1"], instance="i1")
    assert r["error_code"] == E.FENCED_INSTANCE_ID


def test_shutdown_application_reaches_every_member() -> None:
    h = Harness()
    h.hb("m1")
    h.hb("m2")
    r = h.hb("m1", shutdown_application=True)
    assert st.SHUTDOWN_APPLICATION in statuses(r)
    r = h.hb("m2")
    assert statuses(r)[st.SHUTDOWN_APPLICATION] == (
        "Streams group member m1 encountered a fatal error and requested a shutdown for the "
        "entire application.")
    h.hb("m1", -1)
    h.hb("m2", -1)
    assert h.group().state == "Empty" and h.group().shutdown_requested_by is None


def test_missing_client_tags_status_from_v1() -> None:
    h = Harness(**{"group.streams.rack.aware.assignment.tags": "zone, rack"})
    r = h.hb("m1", client_tags=[{"key": "zone", "value": "a"}])
    assert statuses(r)[st.MISSING_CLIENT_TAGS] == (
        "Missing required client tags for rack-aware standby assignment: [rack]. Configure "
        "them via 'client.tag.<tagKey>' in your Streams config.")
    req = h.request("m2", 0, rebalance_timeout_ms=1000, topology=word_count_topology(),
                    active_tasks=[], standby_tasks=[], warmup_tasks=[], process_id="m2")
    r, _ = h.gc.streams_group_heartbeat(req, version=0)
    assert st.MISSING_CLIENT_TAGS not in statuses(r)  # v0 clients do not know the code


def test_an_older_member_epoch_commits_only_tasks_held_since_then() -> None:
    """Kafka 4.4's assignment epoch validator: per partition, by the task's epoch."""
    h = Harness()
    h.hb("m1")
    h.hb("m1")
    h.clock.advance(DELAY)
    h.hb("m1")
    old = h.epochs["m1"]
    h.hb("m2")
    for _ in range(8):
        h.settle(["m1", "m2"], 1)
        h.clock.advance(1000)
    assert h.epochs["m1"] > old
    kept = {p for s, p in h.active("m1") if s == "0"}
    gone = {p for s, p in h.active("m2") if s == "0"}
    assert kept and gone
    parts = [(p, 1, -1, None) for p in sorted(kept | gone)]
    [(_, res)] = h.gc.commit_offsets(G, "m1", old, [("input", parts)], version=9)
    assert dict(res) == {**dict.fromkeys(kept, E.NONE), **dict.fromkeys(gone,
                                                                         E.STALE_MEMBER_EPOCH)}
    [(_, res)] = h.gc.commit_offsets(G, "m1", old, [("other", [(0, 1, -1, None)])], version=9)
    assert res == [(0, E.UNKNOWN_TOPIC_OR_PARTITION)]


def test_a_coordinator_move_keeps_the_group_and_restarts_sessions() -> None:
    """The __consumer_offsets partition's leader moves: members keep epochs and tasks,
    their session timers restart from the move."""
    h = Harness()
    h.hb("m1")
    h.hb("m1")
    h.clock.advance(DELAY)
    h.hb("m1")
    epoch, tasks = h.epochs["m1"], h.active("m1")
    h.clock.advance(40_000)
    coordinator = h.gc.coordinator_for(G)
    controller.broker_stopped(h.state, coordinator)
    assert h.gc.coordinator_for(G) != coordinator
    h.gc.tick()
    h.clock.advance(40_000)  # 80 s after the last heartbeat, 40 s after the move
    h.gc.tick()
    assert set(h.group().members) == {"m1"}
    r = h.hb("m1")
    assert r["error_code"] == E.NONE and r["member_epoch"] == epoch
    assert h.active("m1") == tasks
