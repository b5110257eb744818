"""StreamsGroupHeartbeat (88), StreamsGroupDescribe (89) and
StreamsGroupTopologyDescriptionUpdate (93) on the wire, against either target: the
statuses a first member gets (internal topics missing and created, assignment delayed,
source topics missing), Kafka's error codes and messages for bad requests (unknown
member, fenced epoch, invalid topologies, a topology naming an internal topic), leave,
describe, ListGroups' type, and a consumer group heartbeat on a streams group.
Every expectation holds on real Kafka 4.4 (``--target kafka``).
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator

import pytest

from client_tests.kafka_cluster import request
from emulator.testing import wait_for
from wire.errors import ErrorCode as E
from wire.messages import REQUESTS


def body(key: int, **fields) -> dict:
    out = {f.name: f.default for f in REQUESTS[key].msg.fields}
    out.update(fields)
    return out


def topic_info(name: str, partitions: int = 0) -> dict:
    return {"name": name, "partitions": partitions, "replication_factor": 0,
            "topic_configs": []}


def topology(app: str, source: str, changelog_partitions: int = 0) -> dict:
    repart = f"{app}-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition"
    return {"epoch": 0, "subtopologies": [
        {"subtopology_id": "0", "source_topics": [source], "source_topic_regex": [],
         "state_changelog_topics": [], "repartition_sink_topics": [repart],
         "repartition_source_topics": [], "copartition_groups": []},
        {"subtopology_id": "1", "source_topics": [], "source_topic_regex": [],
         "state_changelog_topics": [topic_info(f"{app}-store-changelog",
                                               changelog_partitions)],
         "repartition_sink_topics": [], "repartition_source_topics": [topic_info(repart)],
         "copartition_groups": []},
    ]}


def join(group: str, member: str, topo: dict | None, **fields) -> dict:
    req = body(88, group_id=group, member_id=member, member_epoch=0,
               endpoint_information_epoch=-1, rebalance_timeout_ms=30000, topology=topo,
               active_tasks=[], standby_tasks=[], warmup_tasks=[], process_id=member)
    req.update(fields)
    return req


class Coordinator:
    """A connection to a group's coordinator once it is ready for the group: FindCoordinator
    v4 retried while the offsets topic comes up, then StreamsGroupDescribe (which creates
    nothing) retried while the coordinator still loads its __consumer_offsets partition
    (COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE), as a
    client retries. Without the second wait a test run first on a fresh Kafka met the
    loading answers instead of the one it checks."""

    NOT_READY = (E.COORDINATOR_LOAD_IN_PROGRESS, E.NOT_COORDINATOR,
                 E.COORDINATOR_NOT_AVAILABLE)

    def __init__(self, bootstrap: str, group: str) -> None:
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        self.cid = 0

        def ready() -> bool:
            with socket.create_connection((host, int(port)), timeout=10) as s:
                r = request(s, 10, 4, body(10, key_type=0, coordinator_keys=[group]))
            [c] = r["coordinators"]
            if c["error_code"] != E.NONE:
                return False
            self.sock = socket.create_connection((c["host"], c["port"]), timeout=30)
            [d] = self(89, 1, body(89, group_ids=[group]))["groups"]
            if d["error_code"] not in self.NOT_READY:
                return True
            self.sock.close()
            return False

        wait_for(ready, f"the coordinator of {group}, ready", timeout=60, interval=0.2)

    def __call__(self, key: int, version: int, req: dict) -> dict:
        self.cid += 1
        return request(self.sock, key, version, req, correlation_id=self.cid)

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def names(cluster) -> Iterator[tuple[str, str]]:
    tag = uuid.uuid4().hex[:8]
    source = f"src-{tag}"
    cluster.create_topic(source, 2, 1)
    yield f"app-{tag}", source


def codes(r: dict) -> set[int]:
    return {s["status_code"] for s in r["status"] or []}


def test_first_member_gets_internal_topics_created_then_tasks(cluster, names) -> None:
    app, source = names
    co = Coordinator(cluster.bootstrap_servers, app)
    try:
        r = co(88, 1, join(app, "m1", topology(app, source)))
        assert r["error_code"] == E.NONE, r
        assert r["member_epoch"] == 1 and r["member_id"] == "m1"
        assert {3, 5} <= codes(r)  # MISSING_INTERNAL_TOPICS, ASSIGNMENT_DELAYED
        missing = [s for s in r["status"] if s["status_code"] == 3][0]["status_detail"]
        assert missing.startswith("Internal topics are missing: ")
        assert r["heartbeat_interval_ms"] > 0 and r["active_tasks"] == []

        def heartbeat() -> tuple[dict, dict] | None:
            nonlocal r
            hb = body(88, group_id=app, member_id="m1", member_epoch=r["member_epoch"],
                      endpoint_information_epoch=r["endpoint_information_epoch"],
                      active_tasks=r["active_tasks"] or [], standby_tasks=[],
                      warmup_tasks=[])
            r2 = co(88, 1, hb)
            assert r2["error_code"] == E.NONE, r2
            r = dict(r, **{k: v for k, v in r2.items() if v is not None})
            return (r2, hb) if r2["active_tasks"] else None

        # The broker creates the internal topics; the assignment delay (3 s) passes.
        r2, hb = wait_for(heartbeat, "active tasks", timeout=60, interval=0.5)
        tasks = {(t["subtopology_id"], p) for t in r2["active_tasks"] for p in t["partitions"]}
        assert tasks == {(s, p) for s in "01" for p in range(2)}
        assert 3 not in codes(r2) and r2["member_epoch"] > 1
        [d] = co(89, 1, body(89, group_ids=[app], include_topology_description=True))["groups"]
        assert d["error_code"] == E.NONE and d["group_state"] in ("Stable", "Reconciling")
        assert (d["topology_description_status"], d["topology_description"]) == (1, None)
        assert d["assignor_name"] == "sticky"
        assert [m["member_id"] for m in d["members"]] == ["m1"]
        assert d["topology"]["epoch"] == 0 and len(d["topology"]["subtopologies"]) == 2
        listed = co(16, 5, body(16, types_filter=["streams"]))["groups"]
        assert {"group_id": app, "protocol_type": "streams", "group_state": d["group_state"],
                "group_type": "streams"} in listed
        [dg] = co(15, 6, body(15, groups=[app]))["groups"]
        assert (dg["error_code"], dg["error_message"], dg["group_state"]) == (
            E.GROUP_ID_NOT_FOUND, f"Group {app} is not a classic group.", "Dead")
        # a consumer group heartbeat for a streams group
        cg = co(68, 1, body(68, group_id=app, member_id=uuid.uuid4().hex, member_epoch=0,
                            rebalance_timeout_ms=1000, subscribed_topic_names=[source],
                            topic_partitions=[]))
        assert (cg["error_code"], cg["error_message"]) == (
            E.GROUP_ID_NOT_FOUND, f"Group {app} is not a consumer group.")
        # epochs: newer than known, and an unknown member
        bad = dict(hb, member_epoch=r2["member_epoch"] + 5, active_tasks=None,
                   standby_tasks=None, warmup_tasks=None)
        f = co(88, 1, bad)
        assert f["error_code"] == E.FENCED_MEMBER_EPOCH
        assert f["error_message"].startswith("The streams group member has a greater member "
                                             "epoch")
        u = co(88, 1, dict(bad, member_id="ghost", member_epoch=1))
        assert (u["error_code"], u["error_message"]) == (
            E.UNKNOWN_MEMBER_ID, f"Member ghost is not a member of group {app}.")
        # leaving
        bye = co(88, 1, dict(bad, member_epoch=-1))
        assert (bye["error_code"], bye["member_epoch"]) == (E.NONE, -1)
        [d] = co(89, 1, body(89, group_ids=[app]))["groups"]
        assert d["group_state"] == "Empty" and d["members"] == []
    finally:
        co.close()


def test_missing_source_topic_status(cluster, names) -> None:
    app, _ = names
    co = Coordinator(cluster.bootstrap_servers, app)
    try:
        r = co(88, 1, join(app, "m1", topology(app, f"absent-{app}")))
        assert r["error_code"] == E.NONE
        detail = [s for s in r["status"] if s["status_code"] == 1]
        assert detail and detail[0]["status_detail"] == \
            f"Source topics absent-{app} are missing."
    finally:
        co.close()


@pytest.mark.parametrize("case", ["internal", "changelog", "no_timeout", "epoch", "regex"])
def test_bad_requests(cluster, names, case: str) -> None:
    app, source = names
    co = Coordinator(cluster.bootstrap_servers, app)
    try:
        if case == "internal":
            r = co(88, 1, join(app, "m1", topology(app, "__consumer_offsets")))
            want = (E.STREAMS_INVALID_TOPOLOGY, "Use of Kafka internal topics "
                    "__consumer_offsets in a Kafka Streams topology is prohibited.")
        elif case == "changelog":
            r = co(88, 1, join(app, "m1", topology(app, source, changelog_partitions=3)))
            want = (E.STREAMS_INVALID_TOPOLOGY, f"Changelog topic {app}-store-changelog must "
                    "have an undefined partition count, but it is set to 3.")
        elif case == "no_timeout":
            r = co(88, 1, join(app, "m1", topology(app, source), rebalance_timeout_ms=-1))
            want = (E.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request.")
        elif case == "epoch":
            r = co(88, 1, join(app, "m1", None, member_epoch=-3))
            want = (E.INVALID_REQUEST,
                    "MemberEpoch is -3, but must be greater than or equal to -2.")
        else:
            topo = topology(app, source)
            topo["subtopologies"][0]["source_topic_regex"] = ["x.*"]
            r = co(88, 1, join(app, "m1", topo))
            want = (E.INVALID_REQUEST,
                    "Regular expressions for source topics are not supported yet.")
        assert (r["error_code"], r["error_message"]) == want
    finally:
        co.close()


def test_describe_unknown_and_topology_description_update(cluster, names) -> None:
    app, _ = names
    co = Coordinator(cluster.bootstrap_servers, app)
    try:
        [d] = co(89, 1, body(89, group_ids=[app]))["groups"]
        assert d["error_code"] == E.GROUP_ID_NOT_FOUND
        r = co(93, 0, body(93, group_id=app, member_id="m1", topology_epoch=0,
                           topology_description={"subtopologies": [], "global_stores": []}))
        assert (r["error_code"], r["error_message"]) == (
            E.UNSUPPORTED_VERSION,
            "The broker has no streams group topology description plugin configured.")
    finally:
        co.close()
