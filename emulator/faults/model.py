"""The faults in force, and the hooks the cluster and the server ask as they run.

The cluster's replication asks ``follower_can_fetch`` and ``fetch_budget``; the server
asks ``inject_error``, ``latency_s``, ``drop_response`` and ``client_allowed``.
The injector (emulator.faults.injector, ``EFFECTS``) changes the model as each
validated operation says; broker stops and starts are not the model's: the injector
sends them to the controller.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from emulator.cluster.log_dirs import is_offline, log_dirs, metadata_log_dir, replica_log_dir
from emulator.cluster.partition import Partition
from emulator.cluster.ports import LogDirFailure
from emulator.cluster.state import ClusterState


@dataclass
class FollowerFault:
    broker: int
    topic: str | None = None
    partition: int | None = None
    paused: bool = False
    delay_ms: int = 0
    max_bytes: int | None = None
    # The fault ends by itself then (the adversary's follower lag); None: until resumed.
    until_ms: int | None = None

    def matches(self, p: Partition, broker: int) -> bool:
        return (broker == self.broker and (self.topic is None or self.topic == p.topic)
                and (self.partition is None or self.partition == p.index))


# What a failing storage fault makes of a write: the IOException Kafka's log gets
STORAGE_ERRORS = {"disk_full": "No space left on device", "fail_writes": "Input/output error",
                  "fail_fsyncs": "Input/output error (fsync)"}


@dataclass
class StorageFault:
    """A storage fault on a broker's log dir (``log_dir`` None: every one of its dirs).

    ``disk_full`` and ``fail_writes`` fail the next write to the directory (an append
    as leader or as follower); ``fail_fsyncs`` only the next flush. Kafka also writes
    a checkpoint to every directory each replica.high.watermark.checkpoint.interval.ms
    (fsynced), so an idle directory fails by then too (``checkpoint_due``).
    ``slow_writes`` makes each write take ``delay_ms``, one after another
    (``busy_until``): the acknowledgement waits, nothing blocks."""

    broker: int
    log_dir: str | None
    kind: str
    delay_ms: int = 0
    checkpoint_due: int | None = None
    busy_until: dict[str, int] = field(default_factory=dict)

    def covers(self, broker: int, path: str) -> bool:
        return broker == self.broker and (self.log_dir is None or self.log_dir == path)


@dataclass
class ErrorRule:
    api: int
    error: int
    count: int
    broker: int | None = None
    topic: str | None = None
    partition: int | None = None
    client_id: str | None = None


@dataclass
class DropRule:
    api: int
    count: int
    broker: int | None = None
    client_id: str | None = None


@dataclass(frozen=True)
class Injection:
    """An error to answer: for the whole request, or (``topic``, ``partition``) for
    the items of the request that name them while the others are served."""

    error: int
    topic: str | None = None
    partition: int | None = None


_PARTITION_KEYS = ("partition_index", "partition", "index", "partition_id")


# The fields a topic entry names its topic by, across the APIs and their versions: ``name``
# (most), ``topic`` (Fetch up to v12, OffsetForLeaderEpoch, ElectLeaders), ``topic_name``
# (DescribeQuorum, the share groups' offsets admin APIs, DescribeTopicPartitions).
TOPIC_NAME_KEYS = ("name", "topic", "topic_name")


def topic_name(state: ClusterState | None, entry: dict) -> str | None:
    """The topic a request's or an answer's topic entry is about: its name (a non-empty
    ``TOPIC_NAME_KEYS`` field), else, where an API names topics by id (Fetch v13+,
    Produce v13+, the share APIs), the topic of that id in ``state``; None for an entry
    naming no topic, or an id the cluster does not know (deleted, or never created).
    The one reading the fault rules, the request facts, the adversary and its soundness
    check share, so that they agree on what an entry is about."""
    for k in TOPIC_NAME_KEYS:
        if isinstance(entry.get(k), str) and entry[k]:
            return entry[k]
    tid = entry.get("topic_id")
    if state is not None and isinstance(tid, bytes | bytearray):
        t = state.topics_by_id.get(bytes(tid))
        return t.name if t is not None else None
    return None


def _is_partition(x: object, partition: int) -> bool:
    if isinstance(x, int) and not isinstance(x, bool):
        return x == partition
    return isinstance(x, dict) and any(x.get(k) == partition for k in _PARTITION_KEYS)


def _split_partitions(entry: dict, partition: int) -> tuple[dict | None, dict | None]:
    """A topic entry split into (the given partition, the others); None for no items."""
    hit, left = dict(entry), dict(entry)
    found = remaining = False
    for k, v in entry.items():
        if isinstance(v, list):
            hit[k] = [x for x in v if _is_partition(x, partition)]
            left[k] = [x for x in v if not _is_partition(x, partition)]
            found = found or bool(hit[k])
            remaining = remaining or bool(left[k])
    return (hit if found else None), (left if remaining or not found else None)


def _split(state: ClusterState | None, obj: dict, topic: str, partition: int | None,
           top: bool) -> tuple[dict | None, dict | None]:
    if not top:
        name = topic_name(state, obj)
        if name is not None:
            if name != topic:
                return None, obj
            return (obj, None) if partition is None else _split_partitions(obj, partition)
    hit, left = dict(obj), dict(obj)
    found = False
    for k, v in obj.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            parts = [_split(state, x, topic, partition, False) for x in v]
            hit[k] = [h for h, _ in parts if h is not None]
            left[k] = [r for _, r in parts if r is not None]
            found = found or bool(hit[k])
    return (hit if found else None), left


def _names_topics(state: ClusterState | None, obj: dict) -> bool:
    for v in obj.values():
        if isinstance(v, list):
            for x in v:
                if isinstance(x, dict) and (topic_name(state, x) is not None
                                            or _names_topics(state, x)):
                    return True
    return False


def split_request(state: ClusterState | None, req: dict, topic: str,
                  partition: int | None) -> tuple[dict | None, dict, bool]:
    """Split a decoded request, any API's shape, into (the items naming ``topic`` and
    ``partition`` or None if none do, the request without them, whether that still
    names any topic). The server answers the first with an error and serves the rest."""
    hit, left = _split(state, req, topic, partition, True)
    assert left is not None
    return hit, left, _names_topics(state, left)


def request_items(state: ClusterState | None, req: dict) -> list[tuple[str, int]]:
    """Every (topic, partition) a decoded request names, in request order; any API's
    shape (the same walk as ``split_request``)."""
    out: list[tuple[str, int]] = []

    def walk(obj: dict, top: bool) -> None:
        name = None if top else topic_name(state, obj)
        for k, v in obj.items():
            if not isinstance(v, list) or k == "forgotten_topics_data":
                continue
            for x in v:
                if isinstance(x, dict):
                    if name is not None:
                        idx = next((x[k] for k in _PARTITION_KEYS if isinstance(
                            x.get(k), int) and not isinstance(x.get(k), bool)), None)
                        if idx is not None:
                            out.append((name, idx))
                    else:
                        walk(x, False)
                elif name is not None and isinstance(x, int) and not isinstance(x, bool):
                    out.append((name, x))

    walk(req, True)
    return out


def request_mentions(state: ClusterState | None, req: dict, topic: str,
                     partition: int | None) -> bool:
    """Does a decoded request name this topic (and partition)? Any API's shape."""
    return split_request(state, req, topic, partition)[0] is not None


@dataclass
class FaultModel:
    """Every fault in force; the hooks the cluster and the server call."""

    state: ClusterState | None = None
    followers: list[FollowerFault] = field(default_factory=list)
    broker_cuts: set[frozenset[int]] = field(default_factory=set)
    client_cuts: dict[int, str | None] = field(default_factory=dict)  # broker -> host/None
    errors: list[ErrorRule] = field(default_factory=list)
    latency_ms: dict[tuple[int, int | None], int] = field(default_factory=dict)
    drops: list[DropRule] = field(default_factory=list)
    storage: list[StorageFault] = field(default_factory=list)
    # Log dirs a fetch or append check (or the checkpoint, ``tick``) found failing, for
    # its caller in the cluster to take and tell the controller (ports.WriteChecks): the
    # model never calls it itself.
    log_dir_failures: list[LogDirFailure] = field(default_factory=list)

    # ---- cluster hooks (replication) ------------------------------------------------
    @property
    def affects_fetching(self) -> bool:
        """Is any follower, broker-link or storage fault in force? (When none is,
        replication asks nothing per fetch: it runs for every follower of every
        produced batch.)"""
        return bool(self.followers or self.broker_cuts or self.storage)

    def follower_can_fetch(self, p: Partition, follower: int, now: int) -> bool:
        if frozenset((follower, p.leader)) in self.broker_cuts:
            return False
        delay = 0
        if self.storage and not self._follower_write(p, follower, now):
            return False
        if any(f.until_ms is not None and now >= f.until_ms for f in self.followers):
            self.followers = [f for f in self.followers
                              if f.until_ms is None or now < f.until_ms]
        for f in self.followers:
            if f.matches(p, follower):
                if f.paused:
                    return False
                delay = max(delay, f.delay_ms)
        if delay:
            if now < p.next_fetch_ms.get(follower, 0):
                return False
            p.next_fetch_ms[follower] = now + delay
        return True

    def fetch_budget(self, p: Partition, follower: int, budget: int) -> int:
        for f in self.followers:
            if f.max_bytes is not None and f.matches(p, follower):
                budget = min(budget, f.max_bytes)
        return budget

    def tick(self, now: int) -> bool:
        """Storage faults: the checkpoint each failing one's directories are due. The
        directories found failing are left to take (``take_log_dir_failures``): the
        cluster's tick tells the controller once this returns."""
        if not self.storage or self.state is None:
            return False
        changed = False
        interval = self.state.config_int("replica.high.watermark.checkpoint.interval.ms")
        for f in list(self.storage):
            if f.kind not in STORAGE_ERRORS or not self.state.is_running(f.broker):
                continue
            live = [d for d in self._dirs(f) if not is_offline(self.state, f.broker, d)]
            meta = metadata_log_dir(self.state, f.broker)
            if meta in live:
                # the cluster metadata log is appended (and flushed) all the time, from
                # the controller's records: its failure halts the broker at once, as
                # Kafka's raft IO thread does (measured: conformance/storage_faults.py)
                self.log_dir_failures.append(LogDirFailure(
                    f.broker, meta, f"{STORAGE_ERRORS[f.kind]} while appending to the "
                    f"metadata log in {meta}"))
                changed = True
                continue
            if not live:
                f.checkpoint_due = None
            elif f.checkpoint_due is None:
                f.checkpoint_due = now + interval
            elif now >= f.checkpoint_due:
                f.checkpoint_due = None
                for d in live:
                    self.log_dir_failures.append(LogDirFailure(
                        f.broker, d, f"{STORAGE_ERRORS[f.kind]} while writing the high "
                        f"watermark checkpoint of {d}"))
                changed = True
        return changed

    # ---- storage hooks (the leader's append, the followers' fetches) --------------------
    def _dirs(self, f: StorageFault) -> list[str]:
        assert self.state is not None
        return log_dirs(self.state, f.broker) if f.log_dir is None else [f.log_dir]

    def storage_write(self, p: Partition, broker: int, now: int) -> tuple[str | None, int]:
        """A write of ``p``'s batch on ``broker``: (the error that fails it, or None;
        the time the write is done, for slow writes, else 0). A failed write fails its
        directory first (LogDirFailureChannel), as Kafka's appendAsLeader does."""
        st = self.state
        assert st is not None
        path = replica_log_dir(st, broker, p.topic, p.index)
        done = 0
        for f in self.storage:
            if not f.covers(broker, path):
                continue
            if f.kind in ("disk_full", "fail_writes") or (
                    f.kind == "fail_fsyncs" and self._flushes_every_append(p)):
                why = f"{STORAGE_ERRORS[f.kind]} while appending to {p.topic}-{p.index} in {path}"
                self.log_dir_failures.append(LogDirFailure(broker, path, why))
                return why, 0
            if f.kind == "slow_writes" and f.delay_ms:
                done = max(done, max(now, f.busy_until.get(path, 0)) + f.delay_ms)
                f.busy_until[path] = done
        return None, done

    def take_log_dir_failures(self) -> list[LogDirFailure]:
        failures, self.log_dir_failures = self.log_dir_failures, []
        return failures

    def _flushes_every_append(self, p: Partition) -> bool:
        """flush.messages=1: Kafka's append flushes (fsyncs) the log at once, so a
        failing fsync fails that produce (else only the next checkpoint notices)."""
        st = self.state
        t = st.topics.get(p.topic) if st is not None else None
        return t is not None and st is not None and \
            int(st.topic_config(t, "flush.messages")) <= 1

    def _follower_write(self, p: Partition, follower: int, now: int) -> bool:
        """Can the follower write what it is about to fetch? A failing directory fails
        at the first batch it would write; a slow one fetches once per write time."""
        st = self.state
        if st is None or follower not in p.logs or p.leader < 0:
            return True
        if p.logs[follower].log_end_offset >= p.leader_log.log_end_offset:
            return True  # nothing to write
        path = replica_log_dir(st, follower, p.topic, p.index)
        for f in self.storage:
            if not f.covers(follower, path):
                continue
            if f.kind in ("disk_full", "fail_writes"):
                self.log_dir_failures.append(LogDirFailure(
                    follower, path, f"{STORAGE_ERRORS[f.kind]} while appending to "
                    f"{p.topic}-{p.index} in {path} as a follower"))
                return False
            if f.kind == "slow_writes" and f.delay_ms:
                key = f"{path}\0{p.topic}\0{p.index}"
                if now < f.busy_until.get(key, 0):
                    return False
                f.busy_until[key] = now + f.delay_ms
        return True

    # ---- server hooks (requests) ----------------------------------------------------
    def inject_error(self, broker: int, api_key: int, request: dict,
                     client_id: str | None = None) -> Injection | None:
        """The error to answer this request with, if a rule matches (one use of it)."""
        for rule in self.errors:
            if rule.api != api_key or (rule.broker is not None and rule.broker != broker):
                continue
            if rule.client_id is not None and rule.client_id != client_id:
                continue
            if rule.topic is not None and not request_mentions(self.state, request,
                                                               rule.topic, rule.partition):
                continue
            rule.count -= 1
            if rule.count <= 0:
                self.errors.remove(rule)
            return Injection(rule.error, rule.topic, rule.partition)
        return None

    def latency_s(self, broker: int, api_key: int) -> float:
        ms = max(self.latency_ms.get((api_key, broker), 0),
                 self.latency_ms.get((api_key, None), 0))
        return ms / 1000

    def drop_response(self, broker: int, api_key: int, client_id: str | None = None) -> bool:
        for rule in self.drops:
            if rule.api == api_key and (rule.broker is None or rule.broker == broker) and (
                    rule.client_id is None or rule.client_id == client_id):
                rule.count -= 1
                if rule.count <= 0:
                    self.drops.remove(rule)
                return True
        return False

    def client_allowed(self, broker: int, host: str) -> bool:
        if broker not in self.client_cuts:
            return True
        h = self.client_cuts[broker]
        return h is not None and h != host

    # ---- changes (what each operation does: emulator.faults.injector.EFFECTS) ------
    def clear(self) -> None:
        self.followers.clear()
        self.broker_cuts.clear()
        self.client_cuts.clear()
        self.errors.clear()
        self.latency_ms.clear()
        self.drops.clear()
        self.storage.clear()

    def describe(self) -> dict:
        """The faults in force, as JSON (GET /faults)."""
        return {
            "followers": [
                {k: v for k, v in vars(f).items() if v is not None} for f in self.followers],
            "broker_cuts": sorted(sorted(c) for c in self.broker_cuts),
            "client_cuts": [{"broker": b, **({"host": h} if h else {})}
                            for b, h in sorted(self.client_cuts.items())],
            "errors": [{k: v for k, v in vars(r).items() if v is not None}
                       for r in self.errors],
            "latency": [{"api": a, "ms": ms, **({"broker": b} if b is not None else {})}
                        for (a, b), ms in sorted(self.latency_ms.items(),
                                                 key=lambda kv: (kv[0][0], kv[0][1] or -1))],
            "drops": [{k: v for k, v in vars(r).items() if v is not None} for r in self.drops],
            "storage": [{"op": f.kind, "broker": f.broker,
                         **({"log_dir": f.log_dir} if f.log_dir else {}),
                         **({"delay_ms": f.delay_ms} if f.kind == "slow_writes" else {})}
                        for f in self.storage],
            "offline_log_dirs": [{"broker": b, "log_dirs": sorted(ds)} for b, ds in sorted(
                (self.state.offline_log_dirs if self.state is not None else {}).items())
                if ds],
        }
