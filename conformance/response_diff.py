"""Response differential: the same requests to Apache Kafka and to the emulator, compared.

A battery of requests (conformance/response_cases.py) - the successful paths of groups,
offsets, transactions, share groups, reassignments and configs, and the error answers of
bad requests - is sent with our codec to a real Kafka cluster (client_tests/
kafka_cluster.py, 3 brokers) and to an emulator of 3 brokers with the same broker config.
Every field a client can read is compared. Values that legitimately differ between two
clusters are normalized by their relation to something both sides agree on, never
dropped:

- a partition's replicas by position: ``replica_nodes`` become "replica 0..n" (checked
  distinct and live brokers), the leader, ISR, offline and ELR replicas the positions
  they hold in that list; other node ids by the role the case gave them ("leader of
  t-0", "coordinator of g"), else "a broker" when they name a live one; a port as "the
  listener of broker N" when it is that broker's;
- generated identifiers by role: a member id, producer id or transactional producer the
  case named (``Side.alias``) by that name, an unnamed one by its shape (a classic
  ``client-id-UUID`` or a 22-character KIP-848 id); topic ids as "the id of T", checked
  consistent within the case; cluster ids by shape;
- timestamps as "within the case" when they fall inside the wall-clock window of the
  case's requests;
- record data decoded: every batch header field and record (the CRC as "valid" when it
  checks), under the same rules;
- lists Kafka fills from a hash map (``UNORDERED``: configs, a group's members) in a
  sorted order, every item still compared.

Everything else - error codes, error messages, epochs and generations (each case starts
from fresh names, so a value is the increment from the initial state), offsets, configs
with their synonyms and documentation, throttle times, list order - is compared as it is.
A case fails when the answers differ, when either side fails to answer (both failing is
a failure too), or when it compares fewer than MIN_FIELDS fields without saying why that
is the whole answer (``Case.few_fields``); each prints how many fields it compared.
Differences known and not yet fixed are listed in KNOWN, each as its exact field path and
the values on both sides (or a Relation they must meet): a difference at another path, or
at a known path with other values, fails the case, and a KNOWN entry that no longer
differs fails the run too (it is stale).

    python -m conformance.response_diff            # exit status 1 on any failure
"""

from __future__ import annotations

import dataclasses
import re
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from client_tests.kafka_cluster import (
    DEFAULT_VERSION,
    KafkaCluster,
    request,
    small_cluster_config,
)
from client_tests.targets import KAFKA_TEST_CONFIG, SHARE_TEST_CONFIG
from emulator import Cluster
from wire.records import decode_records as _decode_records
from wire.records import iter_batches, read_header, validate_batch

# COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: a coordinator
# still loading its partition (clients retry these).
RETRIABLE = {14, 15, 16}

# Node-id fields outside a partition's replica list.
NODE_KEYS = {"node_id", "leader_id", "coordinator_id", "controller_id", "leader",
             "preferred_read_replica", "broker_id"}
# Member ids (a classic JoinGroup's ``leader`` is one: it is a string there).
MEMBER_KEYS = {"member_id", "leader", "memberid"}
TIME_KEYS = {"timestamp", "log_append_time_ms", "base_timestamp", "max_timestamp",
             "last_timestamp", "transaction_start_time_ms", "commit_timestamp"}
# Lists Kafka builds from hash maps, so their order means nothing (a topic's configs,
# a group's members): compared sorted, each item by its normalized self.
UNORDERED = {"configs", "members"}
REPLICA_SET_KEYS = ("isr_nodes", "offline_replicas", "eligible_leader_replicas",
                    "last_known_elr")
CLASSIC_MEMBER = re.compile(r".+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
B64_UUID = re.compile(r"[A-Za-z0-9_-]{22}$")
# A timestamp written during a case may lag or lead the client's clock by this much.
CLOCK_SLACK_MS = 2000


class Side:
    """One system under comparison: its brokers by id, a way to ask them, and what the
    current case named (roles of brokers, aliases of generated ids, its time window)."""

    def __init__(self, name: str, ports: dict[int, int]) -> None:
        self.name = name
        self.ports = ports
        self.begin_case()

    def begin_case(self) -> None:
        self.roles: dict[int, str] = {}
        self.aliases: dict[Any, str] = {}
        self.topic_ids: dict[bytes, str] = {}
        self.t0 = int(time.time() * 1000)
        self.t1 = self.t0

    def alias(self, value: Any, role: str) -> Any:
        """Name a generated value (member id, producer id) by its role in the case."""
        self.aliases[value] = role
        return value

    def call(self, key: int, version: int, body: dict, broker: int | None = None) -> dict:
        port = self.ports[broker if broker is not None else min(self.ports)]
        with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
            resp = request(s, key, version, body, "response-diff", 11)
        self.t1 = int(time.time() * 1000)
        return resp

    def connect(self, broker: int) -> Connection:
        """A connection kept open across requests, as a client keeps one (share sessions
        live as long as the connection that opened them)."""
        return Connection(self, broker)

    def metadata(self, topic: str) -> dict:
        return self.call(3, 12, {"topics": [{"topic_id": b"\0" * 16, "name": topic}],
                                 "allow_auto_topic_creation": False})["topics"][0]

    def leader(self, topic: str, partition: int = 0, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while True:
            for p in self.metadata(topic)["partitions"]:
                if p["partition_index"] == partition and p["leader_id"] >= 0:
                    self.roles[p["leader_id"]] = f"leader of {topic}-{partition}"
                    return p["leader_id"]
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: no leader for {topic}-{partition}")
            time.sleep(0.1)

    def ready(self, topic: str, partitions: int = 1, timeout: float = 30) -> None:
        """Wait until every partition's leader serves it (Kafka's brokers learn a new
        topic from the metadata log after CreateTopics answers; the emulator's at once)."""
        deadline = time.monotonic() + timeout
        for p in range(partitions):
            while True:
                leader = self.leader(topic, p)
                r = self.call(2, 7, {"replica_id": -1, "isolation_level": 0, "topics": [
                    {"name": topic, "partitions": [{"partition_index": p, "timestamp": -1}]}]},
                    leader)
                if r["topics"][0]["partitions"][0]["error_code"] == 0 and all(
                        self._knows(b, topic) for b in self.ports):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{self.name}: {topic}-{p} not served")
                time.sleep(0.1)

    def _knows(self, broker: int, topic: str) -> bool:
        md = self.call(3, 12, {"topics": [{"topic_id": b"\0" * 16, "name": topic}],
                               "allow_auto_topic_creation": False}, broker)
        t = md["topics"][0]
        return t["error_code"] == 0 and all(p["leader_id"] >= 0 for p in t["partitions"])

    def _group_loaded(self, group: str, node: int) -> bool:
        """Whether the group's coordinator has loaded its partition: while it loads,
        Kafka answers some requests as if all were well (a Heartbeat gets NONE, "blindly",
        GroupCoordinatorService), which is start-up, not behaviour to compare."""
        r = self.call(15, 5, {"groups": [group], "include_authorized_operations": False}, node)
        return r["groups"][0]["error_code"] not in RETRIABLE

    def coordinator(self, key: str, key_type: int = 0) -> int:
        """The coordinator of a group (key_type 0) or a transactional id (1), named by
        that role for the comparison."""
        deadline = time.monotonic() + 60
        while True:
            r = self.call(10, 4, {"key_type": key_type, "coordinator_keys": [key]})
            c = r["coordinators"][0]
            if c["error_code"] == 0 and (key_type != 0 or self._group_loaded(key, c["node_id"])):
                self.roles.setdefault(c["node_id"], f"coordinator of {key}")
                return c["node_id"]
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.name}: no coordinator for {key}")
            time.sleep(0.2)


class Connection:
    """One open connection to one broker of a side."""

    def __init__(self, side: Side, broker: int) -> None:
        self.side = side
        self.sock = socket.create_connection(("127.0.0.1", side.ports[broker]), timeout=60)
        self.correlation = 0

    def call(self, key: int, version: int, body: dict) -> dict:
        self.correlation += 1
        resp = request(self.sock, key, version, body, "response-diff", self.correlation)
        self.side.t1 = int(time.time() * 1000)
        return resp

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# A case that compares fewer fields than this means little (an error code and the
# throttle time) unless it says why that is all there is to compare (Case.few_fields).
MIN_FIELDS = 3


@dataclass
class Case:
    """One case: ``run`` sends its requests to a side and returns what came back.
    ``few_fields`` says why a case compares fewer than MIN_FIELDS fields (the whole
    answer is that small); without it such a case fails."""

    name: str
    run: Callable[[Side], dict]
    few_fields: str = ""


@dataclass
class Outcome:
    """One case's comparison: the differences found, how many fields were compared, and
    which differences are known (KNOWN) and which are not."""

    name: str
    differences: list[str]
    fields: int
    known: str | None = None
    unexplained: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    few_fields: str = ""  # the case's reason for comparing fewer than MIN_FIELDS

    @property
    def too_few(self) -> bool:
        return self.fields < MIN_FIELDS and not (self.fields and self.few_fields)

    @property
    def failed(self) -> bool:
        return bool(self.unexplained) or bool(self.stale) or self.too_few


class Diff(str):
    """One difference compare() found: printed as "path: Kafka a, emulator b", and
    carrying the path and both normalized values, which KNOWN entries are held to."""

    path: str
    kafka: Any
    emulator: Any

    def __new__(cls, path: str, kafka: Any, emulator: Any) -> Diff:
        d = super().__new__(cls, f"{path or '.'}: Kafka {kafka!r}, emulator {emulator!r}")
        d.path, d.kafka, d.emulator = path or ".", kafka, emulator
        return d


@dataclass(frozen=True)
class Relation:
    """What a known difference's value must be when it cannot be one exact value (Kafka's
    prose, say): ``says`` is printed, ``holds`` decides."""

    says: str
    holds: Callable[[Any], bool]

    def __repr__(self) -> str:
        return self.says


@dataclass(frozen=True)
class Known:
    """One known difference: the exact field path compare() reports, and the values on
    both sides that make it known (a value, compared by equality, or a Relation). A
    difference at that path with any other value is not known: it fails the case."""

    path: str
    kafka: Any
    emulator: Any

    def explains(self, d: str) -> bool:
        return (isinstance(d, Diff) and d.path == self.path
                and _holds(self.kafka, d.kafka) and _holds(self.emulator, d.emulator))


def _holds(want: Any, got: Any) -> bool:
    if isinstance(want, Relation):
        return want.holds(got)
    return type(want) is type(got) and want == got


KAFKAS_PROSE = Relation("Kafka's documentation text (a non-empty string)",
                        lambda v: isinstance(v, str) and len(v) > 20)


# Differences the strict comparison finds that are not fixed: {case: (why, each one as
# its exact path and the values on both sides)}. Every other difference of the case
# fails it - at another path, or at a listed path with other values - and so does a
# listed one that no longer differs (the entry is stale). Each is an entry of
# emulator/fidelity/differences.py too (its key in ``why``; tests/test_fidelity_table.py
# holds the two to each other).
KNOWN: dict[str, tuple[str, tuple[Known, ...]]] = {
    "Consumer group (KIP-848): two members reconcile, describe, commit, leave": (
        "consumer-group-epochs: Kafka 4.4 answers a new group's first member epoch 2 (the "
        "emulator 1) and the second joiner the assignment epoch 2 before its target is "
        "computed; reconciled, Kafka's members are at 3, the emulator's at 2",
        (Known(".A joins.member_epoch", 2, 1),
         Known(".A reconciled.member_epoch", 2, 1),
         Known(".both reconciled.A.member_epoch", 3, 2),
         Known(".both reconciled.B.member_epoch", 3, 2),
         Known(".described.groups[0].assignment_epoch", 3, 2),
         Known(".described.groups[0].group_epoch", 3, 2),
         Known(".described.groups[0].members[0].member_epoch", 3, 2),
         Known(".described.groups[0].members[1].member_epoch", 3, 2))),
    "DescribeConfigs: with documentation": (
        "config-documentation: the emulator does not carry Kafka's documentation text "
        "(Kafka's prose, not a fact to generate from): documentation is null",
        (Known(".results[0].configs[0].documentation", KAFKAS_PROSE, None),
         Known(".results[0].configs[1].documentation", KAFKAS_PROSE, None))),
}


def explain(name: str, diffs: list[str], fields: int) -> Outcome:
    """The outcome of a case: its differences split into known and unexplained."""
    known = KNOWN.get(name)
    if known is None:
        return Outcome(name, diffs, fields, None, list(diffs))
    why, entries = known
    unexplained = [d for d in diffs if not any(k.explains(d) for k in entries)]
    stale = [f"{k.path}: Kafka {k.kafka!r}, emulator {k.emulator!r}" for k in entries
             if not any(k.explains(d) for d in diffs)]
    return Outcome(name, diffs, fields, why, unexplained, stale)


# ---- normalization ----------------------------------------------------------------------

def normalize(v: Any, side: Side, key: str = "", parent: dict | None = None) -> Any:
    """``v`` with every legitimately differing value replaced by its relation (see the
    module docstring); nothing is removed."""
    if isinstance(v, dict):
        if "replica_nodes" in v and isinstance(v["replica_nodes"], list):
            return _partition(v, side)
        return {k: normalize(x, side, k, v) for k, x in v.items()}
    if isinstance(v, list):
        items = [normalize(x, side, key, parent) for x in v]
        return sorted(items, key=repr) if key in UNORDERED else items
    k = key.lower()
    if k == "records" and isinstance(v, bytes | bytearray | memoryview):
        return _records(bytes(v), side)
    if k == "topic_id" and isinstance(v, bytes | bytearray) and len(v) == 16:
        return _topic_id(bytes(v), side, parent)
    if isinstance(v, bytes | bytearray | memoryview):
        return bytes(v).hex()
    if k == "cluster_id" and isinstance(v, str):
        return "a cluster id" if B64_UUID.match(v) else v
    if k in MEMBER_KEYS and isinstance(v, str):
        return _member(v, side)
    if k in NODE_KEYS and isinstance(v, int) and not isinstance(v, bool):
        return _node(v, side)
    if k == "port" and isinstance(v, int) and parent is not None:
        node = next((parent[n] for n in ("node_id", "broker_id") if n in parent), None)
        return "the listener of the broker named beside it" if side.ports.get(node) == v \
            else v
    if k == "producer_id" and isinstance(v, int):
        return side.aliases.get(("producer", v), "a producer id" if v >= 0 else v)
    if k in TIME_KEYS and isinstance(v, int) and v >= 0:
        return "within the case" if side.t0 - CLOCK_SLACK_MS <= v <= side.t1 + CLOCK_SLACK_MS \
            else v
    return v


def _node(v: int, side: Side) -> Any:
    if v in side.roles:
        return side.roles[v]
    if v in side.ports:
        return "a broker"
    return v


def _member(v: str, side: Side) -> str:
    if v in side.aliases:
        return side.aliases[v]
    if CLASSIC_MEMBER.match(v):
        return "a generated classic member id"
    if B64_UUID.match(v):
        return "a generated member id"
    return v


def _topic_id(v: bytes, side: Side, parent: dict | None) -> str:
    if v == b"\0" * 16:
        return "the zero uuid"
    name = None
    if parent is not None:
        name = parent.get("name", parent.get("topic", parent.get("topic_name")))
    if v in side.topic_ids:
        label = side.topic_ids[v]
        return label if name is None or label == f"the id of {name}" else \
            f"{label}, given for {name}"
    label = f"the id of {name}" if name is not None else f"topic id #{len(side.topic_ids)}"
    if name is not None and label in side.topic_ids.values():
        label = f"a second id of {name}"
    side.topic_ids[v] = label
    return label


def _partition(p: dict, side: Side) -> dict:
    """A partition with a replica list: its replicas by position."""
    reps = p["replica_nodes"]
    pos = {b: i for i, b in enumerate(reps)}
    sound = len(pos) == len(reps) and all(b in side.ports for b in reps)
    out = {}
    for k, x in p.items():
        if k == "replica_nodes":
            out[k] = [f"replica {i}" for i in range(len(reps))] if sound else x
        elif k == "leader_id":
            out[k] = f"replica {pos[x]}" if x in pos else x
        elif k in REPLICA_SET_KEYS and isinstance(x, list):
            out[k] = sorted(f"replica {pos[b]}" if b in pos else f"not a replica: {b}"
                            for b in x)
        else:
            out[k] = normalize(x, side, k, p)
    return out


def _records(data: bytes, side: Side) -> Any:
    """A records field as a client reads it: each batch's header and records."""
    if not data:
        return []
    try:
        batches = iter_batches(data)
    except Exception as e:  # noqa: BLE001 - undecodable data is compared as such
        return f"undecodable records: {e}"
    out = []
    for b in batches:
        h = read_header(b)
        try:
            validate_batch(b)
            crc = "valid"
        except Exception as e:  # noqa: BLE001
            crc = f"invalid: {e}"
        head = {f.name: getattr(h, f.name) for f in dataclasses.fields(h) if f.name != "crc"}
        head["crc"] = crc
        head["records"] = [{"offset": r.offset, "timestamp": r.timestamp,
                            "key": r.key, "value": r.value,
                            "headers": [[hk, hv] for hk, hv in r.headers]}
                           for r in _decode_records(b)]
        out.append(normalize(head, side))
    return out


# ---- comparison -------------------------------------------------------------------------

def compare(a: Any, b: Any, path: str = "") -> tuple[list[str], int]:
    """(differences, number of fields compared): every leaf value is one field; a list
    of another length or a dict key on one side only is one difference."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[str] = []
        n = 0
        for k in sorted(a.keys() | b.keys()):
            d, c = compare(a.get(k, "<absent>"), b.get(k, "<absent>"), f"{path}.{k}")
            out += d
            n += c
        return out, n
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [Diff(path, a, b)], 1
        out, n = [], 0
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            d, c = compare(x, y, f"{path}[{i}]")
            out += d
            n += c
        return out, n
    return ([] if a == b and type(a) is type(b) else [Diff(path, a, b)]), 1


def _error_codes(v: Any) -> set[int]:
    if isinstance(v, dict):
        out = {v["error_code"]} if isinstance(v.get("error_code"), int) else set()
        for x in v.values():
            out |= _error_codes(x)
        return out
    if isinstance(v, list):
        return set().union(*map(_error_codes, v)) if v else set()
    return set()


def _settled(case: Case, side: Side, timeout: float = 30.0) -> Any:
    """The case's answer, normalized, once the cluster is past start-up (a freshly
    started Kafka answers some requests COORDINATOR_LOAD_IN_PROGRESS for a while)."""
    deadline = time.monotonic() + timeout
    while True:
        side.begin_case()
        resp = case.run(side)
        if not _error_codes(resp) & RETRIABLE or time.monotonic() > deadline:
            return normalize(resp, side)
        time.sleep(0.5)


def run_case(case: Case, kafka: Side, emulator: Side) -> Outcome:
    got = []
    failures = []
    for side in (kafka, emulator):
        try:
            got.append(_settled(case, side))
        except Exception as e:  # noqa: BLE001 - a side that cannot answer fails the case
            got.append(None)
            failures.append(f"{side.name} failed: {type(e).__name__}: {e}")
    if failures:
        return explain(case.name, failures, 0)
    diffs, n = compare(got[0], got[1])
    return dataclasses.replace(explain(case.name, diffs, n), few_fields=case.few_fields)


# The controller of the Kafka side validates GROUP configs against the group minimums,
# so it has the brokers' test minimums too (the emulator has one config for both roles).
KAFKA_CONTROLLER_CONFIG = {**SHARE_TEST_CONFIG, **{
    k: v for k, v in KAFKA_TEST_CONFIG.items() if k.startswith("group.")}}


def emulator_config() -> dict[str, str]:
    """The emulator's broker config: the Kafka side's (small_cluster_config and
    KAFKA_TEST_CONFIG), so that described configs can be compared as they are."""
    return {**small_cluster_config(3), **KAFKA_TEST_CONFIG}


def run_battery(kafka_ports: dict[int, int] | None = None,
                version: str = DEFAULT_VERSION,
                progress: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Every case of the battery against a Kafka (``kafka_ports``: a running one's broker
    listeners; None: a fresh cluster of 3 brokers) and a fresh emulator of 3;
    ``progress`` sees each outcome as it comes."""
    from conformance.response_cases import cases

    if kafka_ports is None:
        # A Kafka JVM that dies under the battery (one broker did once, in a full run
        # under load: every later case "connection refused") leaves the rest of it
        # without an oracle, which is no verdict on the emulator: its exit and log are
        # printed, and the battery runs once more on a new cluster, whose answers decide.
        for attempt in (1, 2):
            with KafkaCluster(brokers=3, version=version, broker_config=KAFKA_TEST_CONFIG,
                              controller_config=KAFKA_CONTROLLER_CONFIG) as k:
                dead: list[int] = []
                try:
                    results = run_battery({i: k.listener_port(i) for i in k.broker_ids},
                                          version, progress)
                finally:
                    # before its work dir goes with the cluster
                    dead = report_dead_nodes(k)
                    # nothing of it needs a clean shutdown (brokers SIGTERMed with their
                    # controller wait out its absence first)
                    for bid in k.broker_ids:
                        k.kill_broker(bid)
            if not dead or attempt == 2:
                return results
            print(f"== Kafka node(s) {dead} died under the battery (above), so its answers "
                  "after that are no verdict: the battery runs again on a new Kafka cluster",
                  flush=True)
    out = []
    with Cluster(brokers=3, port=0, config=emulator_config()) as emu:
        kafka = Side(f"Kafka {version}", kafka_ports)
        emulator = Side("emulator", {b.id: b.port for b in emu.state.brokers.values()})
        for case in cases():
            out.append(run_case(case, kafka, emulator))
            if progress is not None:
                progress(out[-1])
    return out


def report_dead_nodes(k: KafkaCluster, out: Any = sys.stdout, tail: int = 60) -> list[int]:
    """Each of the cluster's JVMs that exited, printed with its exit code and its log's
    last lines; their node ids."""
    nodes = [*k.brokers.values(), *([k.controller] if k.controller else [])]
    dead = []
    for node in nodes:
        if node.proc is None or node.alive:
            continue
        dead.append(node.node_id)
        lines = node.log_path.read_text(errors="replace").splitlines()[-tail:]
        print(f"Kafka node {node.node_id} ({node.role}) exited with {node.proc.returncode} "
              f"during the battery; the last {len(lines)} lines of its log:", file=out)
        for line in lines:
            print(f"    {line}", file=out)
    out.flush()
    return dead


def print_outcome(o: Outcome, out: Any = sys.stdout) -> None:
    """One case: same / known / FAIL (why), the fields it compared, its differences."""
    if o.fields == 0 and not o.differences:
        state = "FAIL (compared nothing)"
    elif o.too_few:
        state = f"FAIL (compared {o.fields} < {MIN_FIELDS} fields and says not why)"
    elif o.stale:
        state = f"FAIL (KNOWN paths no longer differ: {', '.join(o.stale)})"
    elif o.failed:
        state = "FAIL"
    else:
        state = "known" if o.differences else "same"
    print(f"{state:5} {o.fields:5} fields  {o.name}", file=out)
    if o.few_fields and o.fields < MIN_FIELDS:
        print(f"        few fields: {o.few_fields}", file=out)
    if o.known is not None and o.differences:
        print(f"        known: {o.known}", file=out)
    for d in o.differences:
        mark = "" if d in o.unexplained else "(known) "
        print(f"        {mark}{d}", file=out)
    out.flush()


def print_outcomes(results: list[Outcome], out: Any = sys.stdout,
                   each: bool = True) -> None:
    if each:
        for o in results:
            print_outcome(o, out)
    failed = [o for o in results if o.failed]
    print(f"{len(results)} cases, {sum(o.fields for o in results)} fields compared, "
          f"{sum(1 for o in results if o.differences)} differing "
          f"({sum(1 for o in results if o.differences and not o.unexplained)} only in "
          f"known ways), {len(failed)} failed", file=out)


def main() -> None:
    t0 = time.monotonic()
    results = run_battery(progress=print_outcome)
    print_outcomes(results, each=False)
    print(f"({time.monotonic() - t0:.0f} s)")
    sys.exit(1 if any(o.failed for o in results) else 0)


if __name__ == "__main__":
    main()
