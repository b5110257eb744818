"""Injected errors reach the client where Kafka puts them, on every API and version.

Over TCP with our codec (a real client would hide the code behind its retries): for
every API key and version the cluster serves, inject an error, send a request naming
one item of each kind (a topic, a partition, a group...), decode the response and find
the code at the place Kafka puts that API's errors (``WHERE``, written from Kafka's
message definitions and KafkaApis, not from our builder). Then the same for a handler
that raises (UNKNOWN_SERVER_ERROR), faults on one partition only, and per client id.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from client_tests.rawkafka import Conn
from emulator import Cluster
from emulator.handlers import HANDLERS
from wire.errors import ErrorCode as E
from wire.messages import REQUESTS
from wire.records import build_batch
from wire.schema import BOOL, BYTES, FLOAT64, RECORDS, STRING, UUID, Array, Struct

# Not run with --target kafka: the emulator's fault injection.
pytestmark = pytest.mark.emulator_only

TOPIC_ID = bytes(range(1, 17))
# Where Kafka answers an item-level error (NOT_LEADER_OR_FOLLOWER) for a request naming
# one of each item: api key -> [(first version, dotted path of the error field)].
WHERE: dict[int, list[tuple[int, str]]] = {
    0: [(0, "responses.partition_responses.error_code")],
    1: [(0, "responses.partitions.error_code")],
    2: [(0, "topics.partitions.error_code")],
    3: [(0, "topics.error_code")],
    8: [(0, "topics.partitions.error_code")],
    9: [(0, "topics.partitions.error_code"), (8, "groups.topics.partitions.error_code")],
    10: [(0, "error_code"), (4, "coordinators.error_code")],
    11: [(0, "error_code")],
    12: [(0, "error_code")],
    13: [(0, "error_code"), (3, "members.error_code")],
    14: [(0, "error_code")],
    15: [(0, "groups.error_code")],
    16: [(0, "error_code")],
    17: [(0, "error_code")],
    18: [(0, "error_code")],
    19: [(0, "topics.error_code")],
    20: [(0, "responses.error_code")],
    21: [(0, "topics.partitions.error_code")],
    22: [(0, "error_code")],
    23: [(0, "topics.partitions.error_code")],
    24: [(0, "results_by_topic_v3_and_below.results_by_partition.partition_error_code"),
         (4, "results_by_transaction.topic_results.results_by_partition.partition_error_code")],
    25: [(0, "error_code")],
    26: [(0, "error_code")],
    28: [(0, "topics.partitions.error_code")],
    32: [(0, "results.error_code")],
    33: [(0, "responses.error_code")],
    34: [(0, "results.partitions.error_code")],
    35: [(0, "results.error_code")],
    36: [(0, "error_code")],
    37: [(0, "results.error_code")],
    42: [(0, "results.error_code")],
    43: [(0, "replica_election_results.partition_result.error_code")],
    44: [(0, "responses.error_code")],
    45: [(0, "responses.partitions.error_code")],
    46: [(0, "error_code")],
    47: [(0, "topics.partitions.error_code")],
    50: [(0, "results.error_code")],
    51: [(0, "results.error_code")],
    60: [(0, "error_code")],
    65: [(0, "transaction_states.error_code")],
    66: [(0, "error_code")],
    68: [(0, "error_code")],
    69: [(0, "groups.error_code")],
    75: [(0, "topics.error_code")],
    27: [(0, "markers.topics.partitions.error_code")],
    29: [(0, "error_code")],
    30: [(0, "results.error_code")],
    31: [(0, "filter_results.error_code")],
    38: [(0, "error_code")],
    39: [(0, "error_code")],
    40: [(0, "error_code")],
    41: [(0, "error_code")],
    48: [(0, "error_code")],
    49: [(0, "entries.error_code")],
    55: [(0, "topics.partitions.error_code")],
    57: [(0, "results.error_code"), (2, "error_code")],  # v2+: no per-feature results
    61: [(0, "topics.partitions.error_code")],
    64: [(0, "error_code")],
    74: [(0, "error_code")],
    76: [(0, "error_code")],
    77: [(0, "groups.error_code")],
    78: [(0, "responses.partitions.error_code")],
    79: [(0, "responses.partitions.error_code")],
    80: [(0, "error_code")],
    81: [(0, "error_code")],
    83: [(0, "results.partitions.error_code")],
    84: [(0, "results.partitions.error_code")],
    85: [(0, "results.partitions.error_code")],
    86: [(0, "results.partitions.error_code")],
    87: [(0, "results.partitions.error_code")],
    88: [(0, "error_code")],
    89: [(0, "groups.error_code")],
    90: [(0, "groups.topics.partitions.error_code")],
    91: [(0, "responses.partitions.error_code")],
    92: [(0, "responses.error_code")],
    93: [(0, "error_code")],
    94: [(0, "error_code")],
}
# A coordinator error is about the group, not its partitions: Kafka answers it at the
# shallowest level with an error field (a Java consumer fails on one per partition).
WHERE_COORDINATOR: dict[int, list[tuple[int, str]]] = {
    8: [(0, "topics.partitions.error_code")],  # OffsetCommit has nothing above
    9: [(0, "topics.partitions.error_code"), (2, "error_code"), (8, "groups.error_code")],
    13: [(0, "error_code")],
    47: [(0, "error_code")],
    1: [(0, "responses.partitions.error_code")],  # not a Fetch session error
}
# Every served key has a row in WHERE: a key served without one fails (add the row
# that says where Kafka puts it).


def expected(table: dict[int, list[tuple[int, str]]], key: int, version: int) -> str | None:
    rows = [path for first, path in table.get(key, []) if version >= first]
    return rows[-1] if rows else None


def sample(struct: Struct, v: int) -> dict:
    """A request naming one item of every kind (topic "t", partition 3, group "t"...)."""
    out: dict[str, Any] = {}
    for f in struct.fields:
        if not f.present(v):
            continue
        t = f.type
        if isinstance(t, Array):
            out[f.name] = [sample(t.item, v) if isinstance(t.item, Struct) else value(t.item)]
        elif isinstance(t, Struct):
            out[f.name] = sample(t, v)
        else:
            out[f.name] = value(t)
    return out


def value(t: Any) -> Any:
    if t is STRING:
        return "t"
    if t is UUID:
        return TOPIC_ID
    if t is BOOL:
        return False
    if t is BYTES:
        return b""
    if t is RECORDS:
        return None
    if t is FLOAT64:
        return 0.0
    return 3


def where(resp: Any, code: int, path: str = "") -> set[str]:
    """Every dotted path at which an error field holds ``code``."""
    out: set[str] = set()
    if isinstance(resp, dict):
        for k, x in resp.items():
            if k in ("error_code", "partition_error_code") and x == code:
                out.add(path + k)
            out |= where(x, code, f"{path}{k}.")
    elif isinstance(resp, list):
        for x in resp:
            out |= where(x, code, path)
    return out


def served(cluster: Cluster) -> list[tuple[int, int]]:
    out = []
    for key, info in sorted(HANDLERS.items()):
        adv = cluster.server.advertised.get(key)
        if adv is None:
            continue
        lo, hi = max(info.accepted[0], adv[0]), min(info.accepted[1], adv[1])
        out += [(key, v) for v in range(lo, hi + 1)]
    return out


def call(conn: Conn, key: int, version: int, body: dict, client_id: str = "errors-test") -> dict:
    conn.client_id = client_id
    try:
        return conn.call(key, version, body)
    except AssertionError as e:
        raise AssertionError(f"key {key} v{version}: the connection closed") from e


def request(key: int, version: int) -> dict:
    body = sample(REQUESTS[key].msg.struct, version)
    if key == 0:
        body["acks"] = 1  # acks=0 gets no answer (an error closes the connection)
    return body


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    with Cluster(brokers=1, port=0) as c:
        yield c


def test_an_injected_error_lands_where_kafka_puts_it_on_every_api_and_version(
        cluster: Cluster) -> None:
    conn = Conn(cluster)
    missing, wrong = [], []
    for key, version in served(cluster):
        for code, table in ((E.NOT_LEADER_OR_FOLLOWER, WHERE),
                            (E.COORDINATOR_NOT_AVAILABLE, WHERE_COORDINATOR)):
            if table is WHERE_COORDINATOR and key not in table:
                continue
            cluster.inject_error(key, code)
            resp = call(conn, key, version, request(key, version))
            found = where(resp, code)
            want = expected(table, key, version)
            if want is None:
                missing.append((key, version, code))
            elif found != {want}:
                wrong.append((key, version, int(code), sorted(found), want))
    assert not missing, f"served without a row in WHERE (where does Kafka put it?): {missing}"
    assert not wrong, "(key, version, code, found at, Kafka puts it at):\n" + "\n".join(
        map(str, wrong))
    assert not any(r.active for r in cluster.faults.model.rules.rules.values())  # all used


def test_the_error_items_name_what_the_request_asked_for(cluster: Cluster) -> None:
    cluster.create_topic("orders", 1, 1)
    conn = Conn(cluster)
    checks = {
        3: (12, {"topics": [{"name": "orders", "topic_id": bytes(16)}]},
            lambda r: [(t["name"], t["error_code"]) for t in r["topics"]]
            == [("orders", 6)] and r["brokers"] == []),
        23: (4, {"topics": [{"topic": "orders", "partitions": [
            {"partition": 0, "current_leader_epoch": 0, "leader_epoch": 0}]}]},
             lambda r: r["topics"][0]["topic"] == "orders" and r["topics"][0]["partitions"]
             == [{"partition": 0, "error_code": 6, "leader_epoch": -1, "end_offset": -1}]),
        21: (2, {"topics": [{"name": "orders", "partitions": [
            {"partition_index": 0, "offset": 1}]}], "timeout_ms": 1000},
             lambda r: r["topics"][0]["partitions"][0] == {
                 "partition_index": 0, "low_watermark": -1, "error_code": 6}),
    }
    for key, (version, body, ok) in checks.items():
        cluster.inject_error(key, E.NOT_LEADER_OR_FOLLOWER)
        resp = call(conn, key, version, body)
        assert ok(resp), (key, resp)


@pytest.mark.kafka_emulator_allow_exceptions  # it makes every handler raise, on purpose
def test_a_handler_that_raises_answers_unknown_server_error_on_every_api(
        cluster: Cluster, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
        ) -> None:
    """Our own bug: every API answers UNKNOWN_SERVER_ERROR where it carries errors, the
    bug is logged with its traceback, and the connection keeps serving."""
    def broken(ctx: Any, req: dict, version: int) -> dict:
        raise RuntimeError("a bug in a handler")

    for info in HANDLERS.values():
        monkeypatch.setattr(info.module, "handle", broken)
    conn = Conn(cluster)
    missing = []
    for key, version in served(cluster):
        resp = call(conn, key, version, request(key, version))
        found = where(resp, E.UNKNOWN_SERVER_ERROR)
        want = expected(WHERE, key, version)
        if not found or (want is not None and found != {want}):
            missing.append((key, version, sorted(found), want))
    assert not missing, missing
    bugs = [r for r in caplog.records if r.exc_info and "failed" in r.getMessage()]
    assert len(bugs) == len(served(cluster))
    assert "RuntimeError: a bug in a handler" in caplog.text


def test_only_partition_3_answers_not_leader(cluster: Cluster) -> None:
    """A fault on one partition: that partition's items get the error and are not
    applied; the other partitions of the same request are served as usual."""
    cluster.create_topic("orders", 4, 1)
    cluster.inject_error("Produce", "NOT_LEADER_OR_FOLLOWER", count=2, topic="orders",
                         partition=3)
    conn = Conn(cluster)
    body = {"acks": -1, "timeout_ms": 5000, "topic_data": [{"name": "orders", "partition_data": [
        {"index": p, "records": build_batch([(None, b"v%d" % p)])} for p in range(4)]}]}
    for round_ in range(3):
        resp = call(conn, 0, 9, body)
        got = {p["index"]: (p["error_code"], p["base_offset"])
               for p in resp["responses"][0]["partition_responses"]}
        if round_ < 2:
            assert got == {0: (0, round_), 1: (0, round_), 2: (0, round_), 3: (6, -1)}
        else:  # count=2: used up
            assert got == {0: (0, 2), 1: (0, 2), 2: (0, 2), 3: (0, 0)}
    ends = cluster.call(lambda: [cluster.state.get_partition("orders", p).high_watermark
                                 for p in range(4)])
    assert ends == [3, 3, 3, 1]
    # Fetch and ListOffsets the same way; another topic in the request is untouched.
    cluster.create_topic("other", 1, 1)
    cluster.inject_error("ListOffsets", "NOT_LEADER_OR_FOLLOWER", topic="orders", partition=3)
    resp = call(conn, 2, 7, {"replica_id": -1, "topics": [
        {"name": "orders", "partitions": [{"partition_index": p, "timestamp": -1}
                                          for p in (0, 3)]},
        {"name": "other", "partitions": [{"partition_index": 0, "timestamp": -1}]}]})
    got = {(t["name"], p["partition_index"]): (p["error_code"], p["offset"])
           for t in resp["topics"] for p in t["partitions"]}
    assert got == {("orders", 0): (0, 3), ("orders", 3): (6, -1), ("other", 0): (0, 0)}


def test_a_fault_for_one_client_id(cluster: Cluster) -> None:
    cluster.inject_error("Metadata", "LEADER_NOT_AVAILABLE", client_id="app-1", count=5)
    conn = Conn(cluster)
    body = {"topics": [{"name": "x", "topic_id": bytes(16)}],
            "allow_auto_topic_creation": False}
    other = call(conn, 3, 12, body, client_id="app-2")
    assert other["topics"][0]["error_code"] == E.UNKNOWN_TOPIC_OR_PARTITION
    assert len(other["brokers"]) == 1
    hit = call(conn, 3, 12, body, client_id="app-1")
    assert hit["topics"][0]["error_code"] == E.LEADER_NOT_AVAILABLE


def test_an_acks_0_produce_that_meets_an_error_closes_the_connection(cluster: Cluster) -> None:
    cluster.create_topic("zero", 1, 1)
    cluster.inject_error("Produce", "NOT_LEADER_OR_FOLLOWER")
    conn = Conn(cluster)
    conn.client_id = "c"
    conn.send(0, 9, {"acks": 0, "timeout_ms": 100, "topic_data": [
        {"name": "zero", "partition_data": [{"index": 0, "records": build_batch(
            [(None, b"v")])}]}]}, expect_response=False)
    assert conn.closed()
