"""A small blocking Kafka admin client over our wire codec, for the command-line tools.

It speaks only the protocol, so the tools work against real Kafka too: it
bootstraps from a list of brokers, negotiates each API's version with ApiVersions
(the highest both sides know), and sends each call where Kafka's Admin client
would: reassignment and election calls to the controller named in Metadata (a
KRaft broker forwards them), broker configs and log-dir calls to that broker,
the rest to any broker. NOT_CONTROLLER refreshes the metadata and retries.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from emulator.blocking_client import BlockingConnection, ConnectionClosed
from wire.connection import FramingError
from wire.errors import ErrorCode as E
from wire.messages import REQUESTS

API_VERSIONS, METADATA = 18, 3
ALTER_REASSIGNMENTS, LIST_REASSIGNMENTS, ELECT_LEADERS = 45, 46, 43
INCREMENTAL_ALTER_CONFIGS, DESCRIBE_LOG_DIRS, ALTER_REPLICA_LOG_DIRS = 44, 35, 34
TOPIC, BROKER = 2, 4  # ConfigResource types
SET, DELETE = 0, 1  # AlterConfigOp types


class AdminError(Exception):
    """A Kafka error code with its message (or a transport failure, code -1)."""

    def __init__(self, code: int, message: str | None = None) -> None:
        self.code = code
        self.message = message
        super().__init__(message or _name(code))


def _name(code: int) -> str:
    try:
        return E(code).name
    except ValueError:
        return f"error code {code}"


V = TypeVar("V")


def _by_topic(items: Iterable[tuple[str, V]]) -> dict[str, list[V]]:
    """(topic, x) pairs grouped by topic, in first-seen order: requests list partitions
    topic by topic."""
    out: dict[str, list[V]] = {}
    for t, x in items:
        out.setdefault(t, []).append(x)
    return out


class Connection(BlockingConnection):
    """One socket to one broker, with the API versions it supports."""

    def __init__(self, host: str, port: int, client_id: str, timeout_s: float) -> None:
        self.addr = (host, port)
        super().__init__(socket.create_connection(self.addr, timeout=timeout_s), client_id)
        self.versions: dict[int, tuple[int, int]] = {}
        self._negotiate()

    def _negotiate(self) -> None:
        for v in (3, 0):
            body = self.request(API_VERSIONS, v, {"client_software_name": "kafka-emulator",
                                                  "client_software_version": "1"})
            if body["error_code"] == 0:
                self.versions = {k["api_key"]: (k["min_version"], k["max_version"])
                                 for k in body["api_keys"]}
                return
        raise AdminError(body["error_code"], "ApiVersions failed")

    def version(self, key: int) -> int:
        ours = REQUESTS[key].msg.versions
        theirs = self.versions.get(key)
        if theirs is None or theirs[1] < ours[0] or theirs[0] > ours[1]:
            raise AdminError(E.UNSUPPORTED_VERSION,
                             f"The broker at {self.addr[0]}:{self.addr[1]} does not support "
                             f"API key {key}")
        return min(ours[1], theirs[1])

    def request(self, key: int, version: int, body: dict) -> dict:
        try:
            return self.call(key, version, body)
        except ConnectionClosed as e:
            raise ConnectionError(f"connection to {self.addr[0]}:{self.addr[1]} closed") from e
        except FramingError as e:  # an answer to another request
            raise AdminError(-1, str(e)) from e


@dataclass
class PartitionInfo:
    index: int
    leader: int
    replicas: list[int]
    isr: list[int]


@dataclass
class ReplicaDir:
    """One replica's log directory (and the one it is moving to), as DescribeLogDirs says."""

    current: str | None = None
    future: str | None = None
    size: int = 0
    offset_lag: int = 0


@dataclass
class ClusterInfo:
    brokers: dict[int, tuple[str, int, str | None]] = field(default_factory=dict)
    controller_id: int = -1
    topics: dict[str, list[PartitionInfo] | int] = field(default_factory=dict)  # or error code


class KafkaAdmin:
    def __init__(self, bootstrap: str, client_id: str = "kafka-emulator-admin",
                 timeout_s: float = 30.0) -> None:
        self.bootstrap = [_host_port(x) for x in bootstrap.split(",") if x.strip()]
        if not self.bootstrap:
            raise AdminError(-1, "no bootstrap servers given")
        self.client_id = client_id
        self.timeout_s = timeout_s
        self.conns: dict[tuple[str, int], Connection] = {}
        self.cluster = ClusterInfo()
        self.metadata()

    # ---- plumbing ---------------------------------------------------------------------
    def _connect(self, addr: tuple[str, int]) -> Connection:
        c = self.conns.get(addr)
        if c is None:
            c = self.conns[addr] = Connection(addr[0], addr[1], self.client_id, self.timeout_s)
        return c

    def _any(self) -> Connection:
        addrs = list(self.conns) + [(h, p) for h, p, _ in self.cluster.brokers.values()] \
            + self.bootstrap
        errors = []
        for addr in dict.fromkeys(addrs):
            try:
                return self._connect(addr)
            except OSError as e:
                self.conns.pop(addr, None)
                errors.append(f"{addr[0]}:{addr[1]}: {e}")
        raise AdminError(-1, "cannot reach any broker (" + "; ".join(errors) + ")")

    def _node(self, node_id: int) -> Connection:
        b = self.cluster.brokers.get(node_id)
        if b is None:
            return self._any()
        try:
            return self._connect((b[0], b[1]))
        except OSError:
            self.conns.pop((b[0], b[1]), None)
            return self._any()

    def call(self, key: int, body: dict, node: int | None = None) -> tuple[dict, int]:
        """Send one request; returns (response, version used)."""
        last: Exception | None = None
        for _ in range(3):
            conn = self._any() if node is None else self._node(node)
            try:
                v = conn.version(key)
                return conn.request(key, v, body), v
            except (OSError, ConnectionError) as e:
                self.conns.pop(conn.addr, None)
                conn.close()
                last = e
                time.sleep(0.1)
        raise AdminError(-1, str(last))

    def controller_call(self, key: int, body: dict) -> tuple[dict, int]:
        """ControllerNodeProvider: to the controller, again after NOT_CONTROLLER."""
        for _ in range(5):
            resp, v = self.call(key, body, self.cluster.controller_id)
            if resp.get("error_code") != E.NOT_CONTROLLER:
                return resp, v
            self.metadata()
            time.sleep(0.1)
        return resp, v

    def close(self) -> None:
        for c in self.conns.values():
            c.close()
        self.conns.clear()

    # ---- Metadata ---------------------------------------------------------------------------
    def metadata(self, topics: list[str] | None = None) -> ClusterInfo:
        """Brokers, controller and (named or all) topics' partitions."""
        body = {"topics": None if topics is None else [{"name": t} for t in topics],
                "allow_auto_topic_creation": False}
        resp, _ = self.call(METADATA, body)
        info = ClusterInfo({b["node_id"]: (b["host"], b["port"], b["rack"])
                            for b in resp["brokers"]}, resp["controller_id"])
        for t in resp["topics"]:
            if t["error_code"]:
                info.topics[t["name"]] = t["error_code"]
                continue
            info.topics[t["name"]] = sorted(
                (PartitionInfo(p["partition_index"], p["leader_id"], list(p["replica_nodes"]),
                               list(p["isr_nodes"])) for p in t["partitions"]),
                key=lambda p: p.index)
        self.cluster.brokers, self.cluster.controller_id = info.brokers, info.controller_id
        return info

    def describe_topics(self, names: list[str]) -> dict[str, list[PartitionInfo] | int]:
        if not names:
            return {}
        return self.metadata(sorted(set(names))).topics

    def broker_nodes(self) -> dict[int, str | None]:
        """describeCluster: live broker ids and racks."""
        return {b: r for b, (_, _, r) in self.metadata([]).brokers.items()}

    # ---- reassignments ------------------------------------------------------------------------
    def list_partition_reassignments(
        self, partitions: list[tuple[str, int]] | None = None, timeout_ms: int = 60000,
    ) -> dict[tuple[str, int], tuple[list[int], list[int], list[int]]]:
        topics = None if partitions is None else [
            {"name": t, "partition_indexes": ps} for t, ps in _by_topic(partitions).items()]
        resp, _ = self.controller_call(LIST_REASSIGNMENTS,
                                       {"timeout_ms": timeout_ms, "topics": topics})
        if resp["error_code"]:
            raise AdminError(resp["error_code"], resp["error_message"])
        return {(t["name"], p["partition_index"]):
                (list(p["replicas"]), list(p["adding_replicas"]), list(p["removing_replicas"]))
                for t in resp["topics"] for p in t["partitions"]}

    def alter_partition_reassignments(
        self, targets: dict[tuple[str, int], list[int] | None], allow_rf_change: bool = True,
        timeout_ms: int = 60000,
    ) -> dict[tuple[str, int], tuple[int, str | None]]:
        by_topic = _by_topic((t, {"partition_index": p, "replicas": replicas})
                             for (t, p), replicas in targets.items())
        body = {"timeout_ms": timeout_ms, "allow_replication_factor_change": allow_rf_change,
                "topics": [{"name": t, "partitions": ps} for t, ps in by_topic.items()]}
        resp, v = self.controller_call(ALTER_REASSIGNMENTS, body)
        if not allow_rf_change and v < 1:
            raise AdminError(E.UNSUPPORTED_VERSION, "The broker does not support "
                             "ALTER_PARTITION_REASSIGNMENTS with version in range [1,1]. The "
                             "supported range is [0,0].")
        out = {}
        for t in resp["responses"]:
            for p in t["partitions"]:
                out[(t["name"], p["partition_index"])] = (p["error_code"], p["error_message"])
        if resp["error_code"]:
            for key in targets:
                out.setdefault(key, (resp["error_code"], resp["error_message"]))
        return out

    def elect_leaders(self, election_type: int, partitions: list[tuple[str, int]] | None,
                      timeout_ms: int = 60000) -> dict[tuple[str, int], tuple[int, str | None]]:
        tps = None if partitions is None else [
            {"topic": t, "partitions": ps} for t, ps in _by_topic(partitions).items()]
        resp, _ = self.controller_call(ELECT_LEADERS, {"election_type": election_type,
                                                       "topic_partitions": tps,
                                                       "timeout_ms": timeout_ms})
        return {(r["topic"], p["partition_id"]): (p["error_code"], p["error_message"])
                for r in resp["replica_election_results"] for p in r["partition_result"]}

    # ---- configs and log dirs -----------------------------------------------------------------
    def incremental_alter_configs(
        self, changes: dict[tuple[int, str], list[tuple[str, int, str | None]]],
    ) -> None:
        """Broker resources go to that broker, topics to any; raises the first error."""
        groups: dict[int | None, list[dict]] = {}
        for (rtype, name), ops in changes.items():
            node = int(name) if rtype == BROKER and name else None
            groups.setdefault(node, []).append({
                "resource_type": rtype, "resource_name": name,
                "configs": [{"name": k, "config_operation": op, "value": v}
                            for k, op, v in ops]})
        for node, resources in groups.items():
            resp, _ = self.call(INCREMENTAL_ALTER_CONFIGS,
                                {"resources": resources, "validate_only": False}, node)
            for r in resp["responses"]:
                if r["error_code"]:
                    raise AdminError(r["error_code"], r["error_message"])

    def describe_log_dirs(self, broker: int, partitions: list[tuple[str, int]] | None = None
                          ) -> dict[tuple[str, int], ReplicaDir]:
        """Where each (or each named) replica on one broker lives, and its size."""
        topics = None if partitions is None else [
            {"topic": t, "partitions": ps} for t, ps in _by_topic(partitions).items()]
        resp, _ = self.call(DESCRIBE_LOG_DIRS, {"topics": topics}, broker)
        out: dict[tuple[str, int], ReplicaDir] = {}
        for d in resp["results"]:
            if d["error_code"]:
                continue
            for t in d["topics"]:
                for p in t["partitions"]:
                    r = out.setdefault((t["name"], p["partition_index"]), ReplicaDir())
                    if p["is_future_key"]:
                        r.future = d["log_dir"]
                    else:
                        r.current, r.size, r.offset_lag = (d["log_dir"], p["partition_size"],
                                                           p["offset_lag"])
        return out

    def alter_replica_log_dirs(self, moves: dict[tuple[str, int, int], str]
                               ) -> dict[tuple[str, int, int], int]:
        by_broker: dict[int, dict[str, dict[str, list[int]]]] = {}
        for (t, p, b), path in moves.items():
            by_broker.setdefault(b, {}).setdefault(path, {}).setdefault(t, []).append(p)
        out = {}
        for b, dirs in by_broker.items():
            body = {"dirs": [{"path": path, "topics": [{"name": t, "partitions": ps}
                                                        for t, ps in topics.items()]}
                             for path, topics in dirs.items()]}
            resp, _ = self.call(ALTER_REPLICA_LOG_DIRS, body, b)
            for r in resp["results"]:
                for p in r["partitions"]:
                    out[(r["topic_name"], p["partition_index"], b)] = p["error_code"]
        return out


def _host_port(s: str) -> tuple[str, int]:
    s = s.strip()
    host, _, port = s.rpartition(":")
    if not host or not port.isdigit():
        raise AdminError(-1, f"Invalid url in bootstrap.servers: {s}")
    return host.strip("[]"), int(port)


def error_message(code: int, message: str | None) -> str:
    """What Java's exception for a code would say: the broker's message, else the default."""
    from wire.errors import MESSAGES

    if message:
        return message
    try:
        return MESSAGES.get(E(code), _name(code))
    except ValueError:
        return _name(code)


__all__ = ["AdminError", "ClusterInfo", "KafkaAdmin", "PartitionInfo", "ReplicaDir", "error_message"]
