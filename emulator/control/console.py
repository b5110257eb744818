"""The live view the web console (``/ui``) and ``kafka-emulator top`` show: one snapshot.

A pure function of the cluster's domain state (plus the fault model and the schedule
runner, which live beside it), so the same dict feeds the browser over server-sent
events, the terminal view and the tests, and building it does no I/O. It is built on
the cluster's loop once per refresh, incrementally: a ``ConsoleCache`` keeps each topic's
view (and its encoded JSON) and only topics whose partitions changed are rebuilt, and the
/events stream sends only those after its first event. bench/console.py measures what a
refresh costs with 1,000 and 10,000 partitions.

Throughput is counted in records: per broker, the sum of the log end offsets of the
partitions it leads (produced) and of the consumer groups' committed offsets on them
(consumed). The page turns successive snapshots into records/s; a view needs no
per-request counters in the brokers' hot path that way.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from typing import Any

from emulator.cluster.metadata import Topic
from emulator.cluster.reassignment import is_reassigning, progress
from emulator.cluster.state import ClusterState
from emulator.cluster.throttle import (
    FOLLOWER_RATE,
    FOLLOWER_REPLICAS,
    LEADER_RATE,
    LEADER_REPLICAS,
)

UNLIMITED = (1 << 63) - 1


def decode_consumer_assignment(data: bytes) -> list[tuple[str, list[int]]]:
    """A classic group member's assignment as the consumer protocol encodes it
    (ConsumerProtocolAssignment: version, [topic, [partition]], user data); [] when
    it is not that protocol's (connect, streams' extensions still decode this far)."""
    try:
        pos = 2
        (n,) = struct.unpack_from(">i", data, pos)
        pos += 4
        out = []
        for _ in range(max(n, 0)):
            (ln,) = struct.unpack_from(">h", data, pos)
            pos += 2
            topic = data[pos:pos + ln].decode()
            pos += ln
            (np,) = struct.unpack_from(">i", data, pos)
            pos += 4
            parts = list(struct.unpack_from(f">{max(np, 0)}i", data, pos))
            pos += 4 * max(np, 0)
            out.append((topic, parts))
        return out
    except (struct.error, UnicodeDecodeError, ValueError):
        return []


def _rate(value: str | None) -> int | None:
    try:
        v = int(value) if value is not None else UNLIMITED
    except ValueError:
        return None
    return None if v >= UNLIMITED else v


def _groups_view(state: ClusterState, groups: Any) -> tuple[list[dict], dict[tuple[str, int], int]]:
    """Groups with members, assignments and lag; and committed offsets summed by partition."""
    out: list[dict] = []
    committed: dict[tuple[str, int], int] = {}
    if groups is None:
        return out, committed
    for gid in sorted(set(groups.groups) | set(groups.offsets)):
        g = groups.groups.peek(gid)  # a read: no reschedule
        members = []
        if g is not None:
            for m in g.members.values():
                if getattr(g, "type", "") == "classic":
                    assigned = decode_consumer_assignment(m.assignment)
                    client, host = m.client_id, m.client_host
                else:
                    assigned = []
                    for tid, parts in m.assigned.items():
                        t = state.topics_by_id.get(tid)
                        assigned.append((t.name if t else tid.hex(), sorted(parts)))
                    client, host = m.client_id, m.client_host
                members.append({"member_id": m.member_id, "client_id": client, "host": host,
                                "assignment": [f"{t}-{p}" for t, ps in sorted(assigned)
                                               for p in ps]})
        lag = []
        total = 0
        for (topic, index), om in sorted(groups.offsets.get(gid, {}).items()):
            t = state.topics.get(topic)
            if t is None or not 0 <= index < len(t.partitions):
                continue
            hw = t.partitions[index].high_watermark
            behind = max(hw - om.offset, 0)
            total += behind
            committed[(topic, index)] = committed.get((topic, index), 0) + om.offset
            lag.append({"topic": topic, "partition": index, "committed": om.offset,
                        "high_watermark": hw, "lag": behind})
        out.append({"group_id": gid, "type": getattr(g, "type", "classic") if g else "offsets",
                    "state": str(g.state) if g is not None else "Empty",
                    "members": members, "lag": lag, "total_lag": total})
    return out, committed


@dataclass
class TopicView:
    """One topic's part of the snapshot, kept between snapshots (``ConsoleCache``).

    ``view`` is what the page gets (shared between snapshots: read only), ``json`` the
    same already encoded for the event stream, ``rev`` bumped whenever it is rebuilt so
    a stream can send only the topics whose rev it has not sent yet. The per-broker
    counts are this topic's share of the brokers' totals.
    """

    key: tuple | None  # None: rebuild next time (a reassignment in flight)
    rev: int
    view: dict
    json: str
    leaders: dict[int, int]
    replicas: dict[int, int]
    produced: dict[int, int]
    leader_of: list[int]  # partition index -> leader (for the consumed counts)
    reassignments: list[dict]


@dataclass
class ConsoleCache:
    """Per-topic views between snapshots, so a refresh re-renders only the topics whose
    partitions changed. What is read to tell: the topic's ``metadata_version`` (leader,
    epochs, replicas, ISR; bumped by the domain), the brokers' liveness, and each
    partition's high watermark and replicas' log end offsets. Reading those is a tuple
    of ints per partition; building, encoding and sending a topic's view is what costs
    (bench/console.py: 10,000 partitions)."""

    topics: dict[str, TopicView] = field(default_factory=dict)
    rebuilt: int = 0  # topic views rebuilt by the last snapshot
    _next_rev: int = 0

    def next_rev(self) -> int:
        self._next_rev += 1
        return self._next_rev


def _topic_key(t: Topic, brokers: tuple) -> tuple:
    offsets: list[int] = []
    add = offsets.append
    for p in t.partitions:
        add(p.high_watermark)
        for b, log in p.logs.items():
            add(b)
            add(log.log_end_offset)
        add(-1)
    return (t.metadata_version, len(t.partitions), brokers, tuple(offsets))


def _build_topic(state: ClusterState, name: str, t: Topic, key: tuple, rev: int) -> TopicView:
    parts = []
    under = offline = 0
    leaders: dict[int, int] = {}
    replicas: dict[int, int] = {}
    produced: dict[int, int] = {}
    leader_of: list[int] = []
    reassignments = []
    reassigning = False
    for p in t.partitions:
        leo = {str(b): log.log_end_offset for b, log in sorted(p.logs.items())}
        for b in p.replicas:
            replicas[b] = replicas.get(b, 0) + 1
        leader_of.append(p.leader)
        if p.leader >= 0:
            leaders[p.leader] = leaders.get(p.leader, 0) + 1
            produced[p.leader] = produced.get(p.leader, 0) + (
                p.leader_log.log_end_offset if p.leader in p.logs else 0)
        if p.leader < 0 or not state.is_alive(p.leader):
            offline += 1
        if len(p.isr) < len(p.replicas):
            under += 1
        parts.append([p.index, p.leader, list(p.replicas), list(p.isr),
                      p.high_watermark, leo])
        if is_reassigning(p):
            reassigning = True
            reassignments.append({
                "topic": name, "partition": p.index, "replicas": list(p.replicas),
                "adding": list(p.adding_replicas), "removing": list(p.removing_replicas),
                "progress": [{"broker": r.broker, "bytes": r.bytes,
                              "target_bytes": r.target_bytes,
                              "log_end_offset": r.log_end_offset,
                              "leader_log_end_offset": r.leader_log_end_offset,
                              "fraction": (min(r.bytes / r.target_bytes, 1.0)
                                           if r.target_bytes else 1.0)}
                             for r in progress(p)]})
    view = {"name": name, "internal": name.startswith("__"),
            "under_replicated": under, "offline": offline,
            # [index, leader, replicas, isr, high watermark, {broker: LEO}]
            "partitions": parts}
    # A moving replica's bytes are not in the key: its topic is rebuilt every time.
    return TopicView(None if reassigning else key, rev, view,
                     json.dumps(view, separators=(",", ":")), leaders, replicas, produced,
                     leader_of, reassignments)


def console_snapshot(state: ClusterState, groups: Any = None, faults: dict | None = None,
                     fault_log: list[dict] | None = None,
                     schedule: dict | None = None, cache: ConsoleCache | None = None) -> dict:
    """Everything the console shows, as JSON-ready data (no I/O).

    ``groups`` is the GroupCoordinator service, ``faults`` the fault model's describe(),
    ``fault_log`` the operations applied so far (the last 20 are kept), ``schedule`` a
    ScheduleRunner's status(); each may be None. With a ``cache`` (one per control
    plane), unchanged topics' views are reused from the last call, and the cache then
    holds exactly this snapshot's topics (their encoded JSON and revs, for the event
    stream's deltas). The topic views are shared with the cache: read only.
    """
    if cache is None:
        cache = ConsoleCache()
    group_views, committed = _groups_view(state, groups)
    produced: dict[int, int] = {b: 0 for b in state.brokers}
    consumed: dict[int, int] = {b: 0 for b in state.brokers}
    leaders: dict[int, int] = {b: 0 for b in state.brokers}
    replicas: dict[int, int] = {b: 0 for b in state.brokers}
    topics = []
    reassignments = []
    throttled_topics = []
    alive = tuple((b.id, b.alive, b.crashed) for b in state.brokers.values())
    kept: dict[str, TopicView] = {}
    rebuilt = 0
    for name, t in sorted(state.topics.items()):
        key = _topic_key(t, alive)
        tv = cache.topics.get(name)
        if tv is None or tv.key is None or tv.key != key:
            tv = _build_topic(state, name, t, key, cache.next_rev())
            rebuilt += 1
        kept[name] = tv
        for share, total in ((tv.leaders, leaders), (tv.replicas, replicas),
                             (tv.produced, produced)):
            for b, n in share.items():
                if b in total:
                    total[b] += n
        reassignments.extend(tv.reassignments)
        lr, fr = t.configs.get(LEADER_REPLICAS), t.configs.get(FOLLOWER_REPLICAS)
        if lr or fr:
            throttled_topics.append({"topic": name, "leader_replicas": lr or "",
                                     "follower_replicas": fr or ""})
        topics.append(tv.view)
    cache.topics = kept
    cache.rebuilt = rebuilt
    for (name, index), offset in committed.items():
        tv = kept.get(name)
        leader = tv.leader_of[index] if tv is not None and index < len(tv.leader_of) else -1
        if leader in consumed:
            consumed[leader] += offset
    brokers = []
    quotas = getattr(state, "replication_quotas", None)
    for br in sorted(state.brokers.values(), key=lambda br: br.id):
        rates = quotas.rates(br.id) if quotas is not None else {}
        brokers.append({
            "id": br.id, "host": br.host, "port": br.port, "rack": br.rack, "alive": br.alive,
            "crashed": br.crashed, "fenced": not br.alive,
            "shutting_down": br.id in state.shutting_down,
            "offline_log_dirs": sorted(getattr(state, "offline_log_dirs", {}).get(br.id, ())),
            "controller": br.id == state.controller_id, "leaders": leaders[br.id],
            "replicas": replicas[br.id], "produced": produced[br.id],
            "consumed": consumed[br.id],
            "throttle": {"leader_rate": _rate(_broker_config(state, LEADER_RATE, br.id)),
                         "follower_rate": _rate(_broker_config(state, FOLLOWER_RATE, br.id)),
                         "leader_measured": round(rates.get("leader", 0.0), 1),
                         "follower_measured": round(rates.get("follower", 0.0), 1)}})
    return {
        "time_ms": state.now(), "cluster_id": state.cluster_id,
        "controller": state.controller_id, "controller_epoch": state.controller_epoch,
        "brokers": brokers, "topics": topics,
        "partition_count": sum(len(t["partitions"]) for t in topics),
        "reassignments": reassignments, "throttled_topics": throttled_topics,
        "groups": group_views, "faults": faults or {},
        "fault_log": list(fault_log or [])[-20:], "schedule": schedule,
    }


def _broker_config(state: ClusterState, key: str, broker: int) -> str | None:
    try:
        return state.broker_config(key, broker)
    except KeyError:
        return None


__all__ = ["ConsoleCache", "TopicView", "console_snapshot", "decode_consumer_assignment"]
