"""How long coordinators load and transactions prepare, measured over the wire.

The envelope behind ``--fidelity kafka``'s coordinator loading and transaction markers
(emulator/fidelity/differences.py DIFFERENCES: ``coordinator-loading``,
``transaction-markers``).
Raw requests (emulator/blocking_client.py), because Kafka's clients hide the error codes
and retry; every timing is over many trials and printed as min / median / p99 / max.

Coordinator moves: the leader of the internal partition that coordinates a group id
(``__consumer_offsets``) or a transactional id (``__transaction_state``) is moved to
another replica (AlterPartitionReassignments reorders the replicas, ElectLeaders
PREFERRED elects the new first one), then the new coordinator is asked in a loop:
OffsetFetch, JoinGroup and ConsumerGroupHeartbeat for groups, InitProducerId and
AddPartitionsToTxn for transactions. Per trial: until when the new leader answered
NOT_COORDINATOR, how long it answered COORDINATOR_LOAD_IN_PROGRESS (first to last), and
when each API first got a real answer, all from the moment ElectLeaders returned.
``--kills N`` adds N crashes of the coordinator (SIGKILL, Kafka only): the new
coordinator is the one FindCoordinator names after the controller fences the dead one.

Prepare window: a transaction (InitProducerId, AddPartitionsToTxn, one transactional
record, EndTxn commit), then in a loop DescribeTransactions (how long PrepareCommit is
shown), ListOffsets read_committed at the partition leader (when the LSO passes the
record) and, by turns per trial, a second EndTxn, an AddPartitionsToTxn or an
InitProducerId for the same transactional id (what each gets during the window).

    PYTHONPATH=$PWD python -m conformance.coordinator_timing --target kafka --trials 30
    PYTHONPATH=$PWD python -m conformance.coordinator_timing --target emulator \
        --fidelity kafka --trials 30
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from typing import Any

from emulator.blocking_client import BlockingConnection
from emulator.coordinators.runtime.placement import partition_for
from wire.errors import ErrorCode as E
from wire.records import build_batch

PARTITIONS = 5  # offsets/transaction state partitions of both test clusters
DATA_TOPIC = "timing-data"
LIP, NC, CNA = E.COORDINATOR_LOAD_IN_PROGRESS, E.NOT_COORDINATOR, E.COORDINATOR_NOT_AVAILABLE
NOT_READY = {LIP, NC, CNA}


def ms_since(t0: float) -> float:
    return (time.monotonic() - t0) * 1000


class Brokers:
    """One connection per broker id, reopened when it breaks."""

    def __init__(self, ports: Callable[[], dict[int, int]]) -> None:
        self.ports = ports
        self.conns: dict[int, BlockingConnection] = {}

    def call(self, node: int, key: int, version: int, body: dict) -> dict[str, Any]:
        conn = self.conns.get(node)
        if conn is None:
            conn = self.conns[node] = BlockingConnection.connect(
                "127.0.0.1", self.ports()[node], "coordinator-timing", timeout=15)
        try:
            return conn.call(key, version, body)
        except (OSError, ConnectionError):
            self.drop(node)
            raise

    def any_call(self, key: int, version: int, body: dict, avoid: int = -1) -> dict[str, Any]:
        for node in sorted(self.ports()):
            if node == avoid:
                continue
            with contextlib.suppress(OSError, ConnectionError):
                return self.call(node, key, version, body)
        raise ConnectionError("no broker answered")

    def drop(self, node: int) -> None:
        conn = self.conns.pop(node, None)
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.close()


def summary(values: list[float]) -> str:
    if not values:
        return "(no samples)"
    v = sorted(values)
    p99 = v[min(len(v) - 1, max(0, int(round(0.99 * len(v) + 0.5)) - 1))]
    return (f"min {v[0]:8.1f}  median {statistics.median(v):8.1f}  p99 {p99:8.1f}  "
            f"max {v[-1]:8.1f} ms  (n={len(v)})")


def keys_on(partition: int, prefix: str, n: int) -> list[str]:
    """``n`` keys that Kafka places on ``partition`` of a PARTITIONS-partition topic."""
    out, i = [], 0
    while len(out) < n:
        k = f"{prefix}-{i}"
        if partition_for(k, PARTITIONS) == partition:
            out.append(k)
        i += 1
    return out


# ---- cluster views ---------------------------------------------------------------------
def partition_info(b: Brokers, topic: str, index: int) -> dict[str, Any]:
    md = b.any_call(3, 12, {"topics": [{"name": topic}], "allow_auto_topic_creation": False})
    for t in md["topics"]:
        if t["name"] == topic:
            for p in t["partitions"]:
                if p["partition_index"] == index:
                    return dict(p)
    raise RuntimeError(f"{topic}-{index} not in metadata")


def find_coordinator(b: Brokers, key: str, key_type: int, avoid: int = -1) -> tuple[int, int]:
    r = b.any_call(10, 4, {"key_type": key_type, "coordinator_keys": [key]}, avoid=avoid)
    c = r["coordinators"][0]
    return c["error_code"], c["node_id"]


def wait_coordinator(b: Brokers, key: str, key_type: int, timeout: float = 60) -> int:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with contextlib.suppress(OSError, ConnectionError):
            err, node = find_coordinator(b, key, key_type)
            if not err:
                return node
        time.sleep(0.05)
    raise TimeoutError(f"no coordinator for {key}")


def move_leader(b: Brokers, topic: str, index: int) -> tuple[int, int]:
    """Make another in-sync replica the leader; returns (old, new) leader."""
    info = partition_info(b, topic, index)
    old = info["leader_id"]
    isr = [r for r in info["isr_nodes"] if r != old]
    if not isr:
        raise RuntimeError(f"{topic}-{index}: no other in-sync replica")
    new = isr[0]
    order = [new] + [r for r in info["replica_nodes"] if r != new]
    r = b.any_call(45, 0, {"timeout_ms": 30000, "topics": [
        {"name": topic, "partitions": [{"partition_index": index, "replicas": order}]}]})
    err = r["error_code"] or r["responses"][0]["partitions"][0]["error_code"]
    if err:
        raise RuntimeError(f"reassignment of {topic}-{index}: {E(err).name}")
    end = time.monotonic() + 30
    while partition_info(b, topic, index)["replica_nodes"] != order:
        if time.monotonic() > end:
            raise TimeoutError("reassignment did not complete")
        time.sleep(0.02)
    return old, new


def elect_preferred(b: Brokers, topic: str, index: int) -> None:
    r = b.any_call(43, 2, {"election_type": 0, "timeout_ms": 30000, "topic_partitions": [
        {"topic": topic, "partitions": [index]}]})
    err = r["error_code"] or r["replica_election_results"][0]["partition_result"][0][
        "error_code"]
    if err not in (E.NONE, E.ELECTION_NOT_NEEDED):
        raise RuntimeError(f"election of {topic}-{index}: {E(err).name}")


# ---- probes ----------------------------------------------------------------------------
Probe = Callable[[Brokers, int], int]  # (brokers, node) -> error code


def group_probes(part: int, run: str) -> dict[str, Probe]:
    g_fetch, g_join, g_cg = keys_on(part, f"timing-{run}-g", 3)

    def offset_fetch(b: Brokers, node: int) -> int:
        r = b.call(node, 9, 9, {"groups": [{"group_id": g_fetch, "topics": None}]})
        return int(r["groups"][0]["error_code"])

    def join_group(b: Brokers, node: int) -> int:
        r = b.call(node, 11, 9, {
            "group_id": g_join, "session_timeout_ms": 30000, "rebalance_timeout_ms": 30000,
            "member_id": "", "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}], "reason": None})
        err = int(r["error_code"])
        return E.NONE if err == E.MEMBER_ID_REQUIRED else err

    def consumer_heartbeat(b: Brokers, node: int) -> int:
        r = b.call(node, 68, 0, {
            "group_id": g_cg, "member_id": "", "member_epoch": 0,
            "rebalance_timeout_ms": 30000, "subscribed_topic_names": [DATA_TOPIC],
            "server_assignor": None, "topic_partitions": []})
        return int(r["error_code"])

    return {"OffsetFetch v9": offset_fetch, "JoinGroup v9": join_group,
            "ConsumerGroupHeartbeat v0": consumer_heartbeat}


class TxnIds:
    """Transactional ids on one __transaction_state partition, and the current producer
    id and epoch of the one AddPartitionsToTxn is probed with."""

    def __init__(self, part: int, run: str) -> None:
        self.add_id, self.init_id = keys_on(part, f"timing-{run}-t", 2)
        self.pid = self.epoch = -1

    def init(self, b: Brokers, node: int) -> int:
        r = b.call(node, 22, 5, {"transactional_id": self.add_id,
                                 "transaction_timeout_ms": 900000})
        if not r["error_code"]:
            self.pid, self.epoch = r["producer_id"], r["producer_epoch"]
        return int(r["error_code"])

    def probes(self) -> dict[str, Probe]:
        def init_producer_id(b: Brokers, node: int) -> int:
            r = b.call(node, 22, 5, {"transactional_id": self.init_id,
                                     "transaction_timeout_ms": 900000})
            return int(r["error_code"])

        def add_partitions(b: Brokers, node: int) -> int:
            return add_partitions_v3(b, node, self.add_id, self.pid, self.epoch)

        return {"InitProducerId v5": init_producer_id, "AddPartitionsToTxn v3": add_partitions}


def add_partitions_v3(b: Brokers, node: int, tid: str, pid: int, epoch: int,
                      topic: str = DATA_TOPIC) -> int:
    r = b.call(node, 24, 3, {
        "v3_and_below_transactional_id": tid, "v3_and_below_producer_id": pid,
        "v3_and_below_producer_epoch": epoch,
        "v3_and_below_topics": [{"name": topic, "partitions": [0]}]})
    return int(r["results_by_topic_v3_and_below"][0]["results_by_partition"][0][
        "partition_error_code"])


def probe_until_ready(b: Brokers, node: int, probes: dict[str, Probe], t0: float,
                      timeout_s: float = 60) -> dict[str, Any]:
    """Ask ``node`` with each probe in a loop of its own (a thread, a connection of its
    own, so that one slow answer does not delay the others) until each got a real one."""
    seen: dict[str, list[tuple[float, int]]] = defaultdict(list)  # (sent at, error)
    ready: dict[str, float] = {}  # when the first real answer was sent
    latency: dict[str, float] = {}  # and how long it took to come
    end = time.monotonic() + timeout_s

    def run(name: str, probe: Probe) -> None:
        own = Brokers(b.ports)
        try:
            while time.monotonic() < end:
                at = ms_since(t0)
                try:
                    err = probe(own, node)
                except (OSError, ConnectionError):
                    err = -1
                    time.sleep(0.01)
                seen[name].append((at, err))
                if err not in NOT_READY and err != -1:
                    ready[name] = at
                    latency[name] = ms_since(t0) - at
                    return
        finally:
            for n in list(own.conns):
                own.drop(n)

    threads = [threading.Thread(target=run, args=item, daemon=True) for item in probes.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"seen": seen, "ready": ready, "latency": latency}


def window(seen: list[tuple[float, int]], code: int) -> tuple[float, float] | None:
    times = [t for t, e in seen if e == code]
    return (times[0], times[-1]) if times else None


# ---- experiments -----------------------------------------------------------------------
class Results:
    def __init__(self) -> None:
        self.values: dict[str, list[float]] = defaultdict(list)
        self.codes: dict[str, Counter[str]] = defaultdict(Counter)

    def add(self, name: str, value: float) -> None:
        self.values[name].append(value)

    def code(self, name: str, err: int) -> None:
        self.codes[name][E(err).name if err >= 0 else "disconnected"] += 1

    def print(self, title: str) -> None:
        print(f"\n== {title}")
        for name, vals in self.values.items():
            print(f"  {name:<58} {summary(vals)}")
        for name, counter in self.codes.items():
            print(f"  {name:<58} " + ", ".join(f"{k} x{v}" for k, v in counter.most_common()))
        sys.stdout.flush()


def record_move(res: Results, label: str, out: dict[str, Any]) -> None:
    for name, seen in out["seen"].items():
        nc = window(seen, NC)
        lip = window(seen, LIP)
        ready = out["ready"].get(name)
        # NOT_COORDINATOR: until the last request that got it was sent; loading: from the
        # first request answered COORDINATOR_LOAD_IN_PROGRESS to the first one served
        # (both sent times: the answer of a served request may wait for a write).
        res.add(f"{label} {name}: NOT_COORDINATOR until (sent)", nc[1] if nc else 0.0)
        if lip and ready is not None:
            res.add(f"{label} {name}: COORDINATOR_LOAD_IN_PROGRESS window (when seen)",
                    ready - lip[0])
        res.add(f"{label} {name}: trials with LOAD_IN_PROGRESS (1) or not (0)",
                1.0 if lip else 0.0)
        if ready is not None:
            res.add(f"{label} {name}: first served request sent at", ready)
            res.add(f"{label} {name}: ... and answered after", out["latency"][name])
        for _, err in seen:
            res.code(f"{label} {name}: answers", err)


def coordinator_moves(b: Brokers, trials: int, run: str) -> Results:
    res = Results()
    for kind, topic, key_type in (("group", "__consumer_offsets", 0),
                                  ("transaction", "__transaction_state", 1)):
        part = trials % PARTITIONS
        txn = TxnIds(part, run)
        probes = group_probes(part, run) if kind == "group" else txn.probes()
        key = next(iter(keys_on(part, f"timing-{run}-{'g' if kind == 'group' else 't'}", 1)))
        node = wait_coordinator(b, key, key_type)
        # the coordinator and some state in its partition before the first move
        deadline = time.monotonic() + 60
        while True:
            ok = probe_until_ready(b, node, probes, time.monotonic(), 30)["ready"]
            if kind == "transaction":
                ok = ok if not txn.init(b, node) else {}
            if len(ok) == len(probes) or time.monotonic() > deadline:
                break
            node = wait_coordinator(b, key, key_type)
        for i in range(trials):
            old, new = move_leader(b, topic, part)
            t0 = time.monotonic()
            elect_preferred(b, topic, part)
            res.add(f"{kind}: ElectLeaders answered after", ms_since(t0))
            out = probe_until_ready(b, new, probes, t0)
            record_move(res, kind, out)
            print(f"  {kind} move {i + 1}/{trials}: {old} -> {new}, ready "
                  + ", ".join(f"{n} {t:.0f} ms" for n, t in out["ready"].items()), flush=True)
    return res


def coordinator_kills(b: Brokers, cluster: Any, kills: int, run: str) -> Results:
    res = Results()
    for kind, key_type in (("group", 0), ("transaction", 1)):
        for i in range(kills):
            part = i % PARTITIONS
            txn = TxnIds(part, run + f"k{i}")
            probes = group_probes(part, run + f"k{i}") if kind == "group" else txn.probes()
            key = keys_on(part, f"timing-{run}k{i}-{'g' if kind == 'group' else 't'}", 1)[0]
            node = wait_coordinator(b, key, key_type)
            probe_until_ready(b, node, probes, time.monotonic(), 30)
            if kind == "transaction":
                txn.init(b, node)
            t0 = time.monotonic()
            cluster.kill_broker(node)
            b.drop(node)
            while True:  # FindCoordinator names a live broker once the dead one is fenced
                with contextlib.suppress(OSError, ConnectionError):
                    err, new = find_coordinator(b, key, key_type, avoid=node)
                    if not err and new != node:
                        break
                time.sleep(0.02)
            res.add(f"{kind} kill: FindCoordinator names the new one after", ms_since(t0))
            t1 = time.monotonic()
            out = probe_until_ready(b, new, probes, t1)
            record_move(res, f"{kind} kill", out)
            print(f"  {kind} kill {i + 1}/{kills}: {node} -> {new}, ready "
                  + ", ".join(f"{n} {t:.0f} ms" for n, t in out["ready"].items()), flush=True)
            cluster.start_broker(node)
            time.sleep(2)
    return res


def first_elections(make_target: Callable[[], Any], trials: int, run: str) -> Results:
    """A fresh cluster per trial: FindCoordinator creates the internal topic; from its
    first answer naming a coordinator, what that coordinator answers until it serves."""
    res = Results()
    for i in range(trials):
        with make_target() as (b, _):
            for kind, key_type in (("group", 0), ("transaction", 1)):
                key = f"timing-{run}-first-{i}-{kind}"
                t0 = time.monotonic()
                codes: Counter[str] = Counter()
                while True:
                    with contextlib.suppress(OSError, ConnectionError):
                        err, node = find_coordinator(b, key, key_type)
                        if not err:
                            break
                        codes[E(err).name] += 1
                    time.sleep(0.01)
                res.add(f"first {kind}: FindCoordinator named one after", ms_since(t0))
                for name, count in codes.items():
                    res.codes[f"first {kind}: FindCoordinator answers before"][name] += count
                t1 = time.monotonic()
                if kind == "group":
                    probes = {"OffsetFetch v9": lambda bb, n, g=key: int(bb.call(
                        n, 9, 9, {"groups": [{"group_id": g, "topics": None}]}
                    )["groups"][0]["error_code"])}
                else:
                    probes = {"InitProducerId v5": lambda bb, n, t=key: int(bb.call(
                        n, 22, 5, {"transactional_id": t, "transaction_timeout_ms": 60000}
                    )["error_code"])}
                out = probe_until_ready(b, node, probes, t1, 30)
                record_move(res, f"first {kind}", out)
            print(f"  first election {i + 1}/{trials} done", flush=True)
    return res


def prepare_window(b: Brokers, trials: int, run: str, end_txn_version: int) -> Results:
    res = Results()
    tid = f"timing-{run}-prepare"
    seq = 0
    for i in range(trials):
        node = wait_coordinator(b, tid, 1)
        while True:  # a fresh epoch (the last trial may have left one Ongoing)
            r = b.call(node, 22, 5, {"transactional_id": tid, "transaction_timeout_ms": 60000})
            if not r["error_code"]:
                break
            time.sleep(0.02)
        pid, epoch, seq = r["producer_id"], r["producer_epoch"], 0
        if add_partitions_v3(b, node, tid, pid, epoch):
            raise RuntimeError("AddPartitionsToTxn failed")
        leader = partition_info(b, DATA_TOPIC, 0)["leader_id"]
        batch = build_batch([(b"k", b"v")], timestamp=int(time.time() * 1000), producer_id=pid,
                            producer_epoch=epoch, base_sequence=seq, transactional=True)
        pr = b.call(leader, 0, 11, {"transactional_id": tid, "acks": -1, "timeout_ms": 30000,
                                    "topic_data": [{"name": DATA_TOPIC, "partition_data": [
                                        {"index": 0, "records": batch}]}]})
        part = pr["responses"][0]["partition_responses"][0]
        if part["error_code"]:
            raise RuntimeError(f"transactional produce: {E(part['error_code']).name}")
        record_offset = part["base_offset"]
        kinds = ("EndTxn again", "AddPartitionsToTxn", "InitProducerId") + (
            ("Produce v12",) if end_txn_version >= 5 else ())
        probe = kinds[i % len(kinds)]
        t0 = time.monotonic()
        er = b.call(node, 26, end_txn_version, {"transactional_id": tid, "producer_id": pid,
                                               "producer_epoch": epoch, "committed": True})
        res.add("EndTxn answered after", ms_since(t0))
        if er["error_code"]:
            raise RuntimeError(f"EndTxn: {E(er['error_code']).name}")
        new_epoch = er["producer_epoch"] if end_txn_version >= 5 else epoch
        last_prepare = first_complete = lso_at = None
        probe_done = False
        end = time.monotonic() + 30
        while time.monotonic() < end and (first_complete is None or lso_at is None
                                          or not probe_done):
            d = b.call(node, 65, 0, {"transactional_ids": [tid]})["transaction_states"][0]
            at = ms_since(t0)
            state = d["transaction_state"]
            if state in ("PrepareCommit", "PrepareAbort"):
                last_prepare = at
            elif first_complete is None and state in ("CompleteCommit", "CompleteAbort",
                                                      "Ongoing", "Empty"):
                first_complete = at
            if lso_at is None:
                lo = b.call(leader, 2, 9, {"replica_id": -1, "isolation_level": 1, "topics": [
                    {"name": DATA_TOPIC, "partitions": [
                        {"partition_index": 0, "timestamp": -1}]}]})
                lso = lo["topics"][0]["partitions"][0]["offset"]
                if lso > record_offset:
                    lso_at = ms_since(t0)
            if not probe_done:
                in_window = first_complete is None
                sent = time.monotonic()
                err = second_request(b, node, probe, tid, pid, new_epoch, end_txn_version,
                                     leader)
                if probe == "Produce v12":
                    res.add(f"Produce v12 {'sent during PrepareCommit' if in_window else 'after'}"
                            f", answered after", ms_since(sent))
                label = f"{probe} {'during PrepareCommit' if in_window else 'after'}"
                res.code(label, err)
                if err not in (E.CONCURRENT_TRANSACTIONS,):
                    probe_done = True
        res.add("DescribeTransactions showed PrepareCommit until",
                last_prepare if last_prepare is not None else 0.0)
        res.add("PrepareCommit seen (1) or not (0)", 1.0 if last_prepare is not None else 0.0)
        if first_complete is not None:
            res.add("DescribeTransactions first showed it complete at", first_complete)
        if lso_at is not None:
            res.add("read_committed LSO passed the record at", lso_at)
        print(f"  prepare trial {i + 1}/{trials}: prepare until {last_prepare} ms, "
              f"complete at {first_complete}, LSO at {lso_at}", flush=True)
    return res


def second_request(b: Brokers, node: int, probe: str, tid: str, pid: int, epoch: int,
                   end_txn_version: int, leader: int) -> int:
    if probe == "EndTxn again":
        # a retry of the same EndTxn: v5 retries with the epoch it sent (the old one)
        old = epoch - 1 if end_txn_version >= 5 else epoch
        return int(b.call(node, 26, end_txn_version, {
            "transactional_id": tid, "producer_id": pid, "producer_epoch": old,
            "committed": True})["error_code"])
    if probe == "AddPartitionsToTxn":
        return add_partitions_v3(b, node, tid, pid, epoch)
    if probe == "Produce v12":
        # transaction version 2: the next transaction's first record adds its partition
        # itself (the leader asks the coordinator), with the epoch EndTxn v5 answered
        batch = build_batch([(b"k", b"next")], timestamp=int(time.time() * 1000),
                            producer_id=pid, producer_epoch=epoch, base_sequence=0,
                            transactional=True)
        r = b.call(leader, 0, 12, {"transactional_id": tid, "acks": -1, "timeout_ms": 30000,
                                   "topic_data": [{"name": DATA_TOPIC, "partition_data": [
                                       {"index": 0, "records": batch}]}]})
        return int(r["responses"][0]["partition_responses"][0]["error_code"])
    return int(b.call(node, 22, 5, {"transactional_id": tid, "transaction_timeout_ms": 60000,
                                    "producer_id": pid, "producer_epoch": epoch})["error_code"])


# ---- targets -----------------------------------------------------------------------------
@contextlib.contextmanager
def kafka_target(brokers: int) -> Iterator[tuple[Brokers, Any]]:
    from client_tests.kafka_cluster import KafkaCluster

    with KafkaCluster(brokers=brokers) as kafka:
        yield Brokers(lambda: {n: kafka.listener_port(n) for n in kafka.broker_ids}), kafka


@contextlib.contextmanager
def emulator_target(brokers: int, fidelity: str) -> Iterator[tuple[Brokers, Any]]:
    from emulator.runtime import Cluster

    cfg = {"offsets.topic.num.partitions": str(PARTITIONS),
           "transaction.state.log.num.partitions": str(PARTITIONS)}
    with Cluster(brokers=brokers, port=0, fidelity=fidelity, config=cfg) as c:
        ports = {b.id: b.port for b in c.state.brokers.values()}
        yield Brokers(lambda: ports), c


def setup_topics(b: Brokers) -> None:
    r = b.any_call(19, 7, {"topics": [{"name": DATA_TOPIC, "num_partitions": 1,
                                       "replication_factor": 3, "assignments": [],
                                       "configs": []}], "timeout_ms": 30000})
    err = r["topics"][0]["error_code"]
    if err not in (E.NONE, E.TOPIC_ALREADY_EXISTS):
        raise RuntimeError(f"CreateTopics: {E(err).name}")
    end = time.monotonic() + 30
    while time.monotonic() < end:
        with contextlib.suppress(RuntimeError):
            if partition_info(b, DATA_TOPIC, 0)["leader_id"] >= 0:
                return
        time.sleep(0.1)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--target", choices=("kafka", "emulator"), default="kafka")
    ap.add_argument("--fidelity", default="kafka", help="the emulator's (--target emulator)")
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--kills", type=int, default=0, help="coordinator crashes (Kafka only)")
    ap.add_argument("--end-txn-version", type=int, default=4, choices=(4, 5))
    ap.add_argument("--skip", default="", help="comma list of: moves,prepare")
    ap.add_argument("--first", type=int, default=0,
                    help="fresh clusters: the coordinators' first election")
    args = ap.parse_args(argv)
    skip = set(filter(None, args.skip.split(",")))
    run = f"{int(time.time()) % 100000}"
    if args.first:
        def make() -> Any:
            return kafka_target(3) if args.target == "kafka" else \
                emulator_target(3, args.fidelity)
        first_elections(make, args.first, run).print(
            "first election (a fresh cluster; FindCoordinator creates the topic); loading "
            "times from FindCoordinator's first answer naming a coordinator")
        return
    target = kafka_target(3) if args.target == "kafka" else emulator_target(3, args.fidelity)
    started = time.monotonic()
    with target as (b, cluster):
        print(f"target {args.target}"
              f"{'' if args.target == 'kafka' else ' fidelity ' + args.fidelity}: 3 brokers, "
              f"{PARTITIONS} partitions per coordinator topic, {args.trials} trials "
              f"(started in {time.monotonic() - started:.0f} s)", flush=True)
        setup_topics(b)
        if "moves" not in skip:
            coordinator_moves(b, args.trials, run).print(
                "coordinator moved (AlterPartitionReassignments + ElectLeaders PREFERRED); "
                "times from ElectLeaders' answer")
        if "prepare" not in skip:
            prepare_window(b, args.trials, run, args.end_txn_version).print(
                f"prepare window (EndTxn v{args.end_txn_version} commit; times from EndTxn "
                "sent)")
        if args.kills and args.target == "kafka":
            coordinator_kills(b, cluster, args.kills, run).print(
                "coordinator killed (SIGKILL); load times from FindCoordinator naming the "
                "new one")
    print(f"\ntotal {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        main()
