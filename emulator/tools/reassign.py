"""``kafka-emulator reassign``: kafka-reassign-partitions, speaking only the protocol.

The same actions, options, JSON files, output lines and exit codes as Kafka 4.1's
ReassignPartitionsCommand (specs/reassignment.md, section 6):

    --generate --topics-to-move-json-file F --broker-list 1,2,3 [--disable-rack-aware]
    --execute  --reassignment-json-file F [--additional] [--throttle B/s]
               [--replica-alter-log-dirs-throttle B/s] [--timeout MS]
               [--disallow-replication-factor-change]
    --verify   --reassignment-json-file F [--preserve-throttles]
    --cancel   --reassignment-json-file F [--preserve-throttles] [--timeout MS]
    --list

with ``--bootstrap-server`` (or ``--bootstrap-controller`` for --cancel and
--list) and ``--command-config``. It uses our wire codec over a socket
(``emulator.tools.kafka_admin``), so it works against real Kafka as well.

Added to Kafka's output: --verify and --list end with the bytes each adding
replica has caught up (from DescribeLogDirs), with a progress bar, for reassignments in
flight. Added to Kafka's options: ``--progress`` (with --execute, --verify or --list)
keeps redrawing those bars every second until the partitions' reassignments are done
(then --verify verifies once more, clearing throttles as Kafka's would).
Differs from Kafka: errors print ``Error: <message>`` without a Java stack trace;
--generate places replicas with Kafka 4.1's StripedReplicaPlacer, which is random
in Kafka too, so proposals differ from run to run as there.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from emulator.tools.kafka_admin import (
    BROKER,
    DELETE,
    SET,
    TOPIC,
    AdminError,
    KafkaAdmin,
    error_message,
)
from emulator.tools.top import CLEAR, progress_bar

ANY_LOG_DIR = "any"
ACTIONS = ("generate", "execute", "verify", "cancel", "list")
BROKER_LEVEL_THROTTLES = ("leader.replication.throttled.rate",
                          "follower.replication.throttled.rate",
                          "replica.alter.log.dirs.io.max.bytes.per.second")
TOPIC_LEVEL_THROTTLES = ("leader.replication.throttled.replicas",
                         "follower.replication.throttled.replicas")
CANNOT_EXECUTE = ("Cannot execute because there is an existing partition assignment.  Use "
                  "--additional to override this and create a new partition assignment in "
                  "addition to the existing one. The --additional flag can also be used to "
                  "change the throttle by resubmitting the current reassignment.")
RUN_VERIFY = ("Warning: You must run --verify periodically, until the reassignment "
              "completes, to ensure the throttle is removed.")
UNKNOWN_TOPIC_EXC = "org.apache.kafka.common.errors.UnknownTopicOrPartitionException"


class TerseError(Exception):
    """Kafka's TerseException: only the message is printed."""


class ToolError(Exception):
    """Any other failure: printed as ``Error: <message>``."""


class UsageError(Exception):
    """CommandLineUtils.printUsageAndExit: the message and the usage, on stderr."""


Part = tuple[str, int]


def tp(part: Part) -> str:
    return f"{part[0]}-{part[1]}"


def plural(n: int) -> str:
    return "" if n == 1 else "s"


# ---- Java's iteration orders and JSON --------------------------------------------------------
def java_hash(x: Any) -> int:
    """hashCode of an Integer, String or TopicPartition, as an unsigned 32-bit value."""
    if isinstance(x, int):
        return x & 0xFFFFFFFF
    if isinstance(x, str):
        h = 0
        data = x.encode("utf-16-be")  # String.hashCode runs over UTF-16 code units
        for i in range(0, len(data), 2):
            h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
        return h
    topic, partition = x  # TopicPartition.hashCode
    return (31 * (31 + partition) + java_hash(topic)) & 0xFFFFFFFF


def java_set_order(items: Iterable[Any]) -> list[Any]:
    """The iteration order of a java.util.HashSet filled with ``items`` in order."""
    uniq = list(dict.fromkeys(items))
    cap = 16
    while len(uniq) > cap * 3 // 4:
        cap *= 2

    def bucket(x: Any) -> int:
        h = java_hash(x)
        return (h ^ (h >> 16)) & (cap - 1)

    return sorted(uniq, key=bucket)


def jnode(v: Any) -> str:
    """A Jackson JsonNode's toString (compact JSON)."""
    return json.dumps(v, separators=(",", ":"))


def _obj(v: Any) -> dict:
    if not isinstance(v, dict):
        raise ToolError(f"Expected JSON object, received {jnode(v)}")
    return v


def _field(o: dict, name: str) -> Any:
    if name not in o:
        raise ToolError(f"No such field exists: `{name}`")
    return o[name]


def _int(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not -(2**31) <= v < 2**31:
        raise ToolError(f"Expected `Integer` value, received {jnode(v)}")
    return v


def _str(v: Any) -> str:
    if not isinstance(v, str):
        raise ToolError(f"Expected `String` value, received {jnode(v)}")
    return v


def _list(v: Any, item) -> list:
    if not isinstance(v, list):
        raise ToolError(f"Expected `JSON array` value, received {jnode(v)}")
    return [item(x) for x in v]


def _java_list(items: Sequence[Any]) -> str:
    return "[" + ", ".join(str(x) for x in items) + "]"


def parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ToolError(f"Unable to parse the JSON: {e.msg} at line {e.lineno} column "
                        f"{e.colno}") from None


def parse_topics_data(text: str) -> list[str]:
    """parseTopicsData: {"version":1,"topics":[{"topic":"foo"}]}."""
    try:
        js = json.loads(text)
    except json.JSONDecodeError:
        raise ToolError("The input string is not a valid JSON") from None
    o = _obj(js)
    version = _int(o["version"]) if "version" in o else 1
    if version != 1:
        raise ToolError(f"Not supported version field value {version}")
    if "topics" not in o:
        return []
    return [_str(_field(_obj(t), "topic")) for t in _list(o["topics"], lambda x: x)]


@dataclass
class ReassignmentData:
    parts: list[tuple[Part, list[int]]]  # in file order, duplicates kept
    log_dirs: dict[tuple[str, int, int], str]  # explicit (non-"any") replica log dirs


def parse_reassignment_data(text: str) -> ReassignmentData:
    """parsePartitionReassignmentData (version 1)."""
    o = _obj(parse_json(text))
    version = _int(o["version"]) if "version" in o else 1
    if version != 1:
        raise ToolError(f"Not supported version field value {version}")
    out = ReassignmentData([], {})
    for item in _list(o.get("partitions", []), lambda x: x):
        f = _obj(item)
        topic = _str(_field(f, "topic"))
        partition = _int(_field(f, "partition"))
        replicas = _list(_field(f, "replicas"), _int)
        dirs = _list(f["log_dirs"], _str) if "log_dirs" in f else [ANY_LOG_DIR] * len(replicas)
        if len(replicas) != len(dirs):
            raise ToolError(f"Size of replicas list {_java_list(replicas)} is different from "
                            f"size of log dirs list {_java_list(dirs)} for partition "
                            f"{topic}-{partition}")
        out.parts.append(((topic, partition), replicas))
        for b, d in zip(replicas, dirs, strict=True):
            if d != ANY_LOG_DIR:
                out.log_dirs[(topic, partition, b)] = d
    return out


def duplicates(items: Iterable[Any]) -> list[Any]:
    seen, dups = set(), []
    for x in items:
        if x in seen and x not in dups:
            dups.append(x)
        seen.add(x)
    return java_set_order(dups)


def parse_execute_data(text: str) -> tuple[dict[Part, list[int]], dict[tuple[str, int, int], str]]:
    """parseExecuteAssignmentArgs: the checks before anything is sent."""
    data = parse_reassignment_data(text)
    if not data.parts:
        raise ToolError("Partition reassignment list cannot be empty")
    if any(not replicas for _, replicas in data.parts):
        raise ToolError("Partition replica list cannot be empty")
    dup_parts = duplicates(p for p, _ in data.parts)
    if dup_parts:
        raise ToolError("Partition reassignment contains duplicate topic partitions: "
                        + ",".join(tp(p) for p in dup_parts))
    dup_replicas = [(p, duplicates(r)) for p, r in data.parts if duplicates(r)]
    if dup_replicas:
        raise ToolError("Partition replica lists may not contain duplicate entries: " + ". ".join(
            f"{tp(p)} contains multiple entries for {','.join(map(str, d))}"
            for p, d in dup_replicas))
    return dict(data.parts), data.log_dirs


def format_reassignment_json(parts: dict[Part, list[int]],
                             log_dirs: dict[tuple[str, int, int], str] | None = None) -> str:
    """formatAsReassignmentJson: sorted by topic then partition, always with log_dirs."""
    log_dirs = log_dirs or {}
    out = {"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": parts[(t, p)],
         "log_dirs": [log_dirs.get((t, p, b), ANY_LOG_DIR) for b in parts[(t, p)]]}
        for t, p in sorted(parts)]}
    return jnode(out)


# ---- placement for --generate (Kafka 4.1's StripedReplicaPlacer) ------------------------------
class _BrokerList:
    def __init__(self) -> None:
        self.brokers: list[int] = []
        self.index = self.offset = self.epoch = 0

    def initialize(self, rnd: random.Random) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = rnd.randrange(len(self.brokers))

    def next(self, epoch: int) -> int:
        if not self.brokers:
            return -1
        if self.epoch != epoch:
            self.epoch, self.index = epoch, 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        b = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return b


def striped_placement(brokers: dict[int, str | None], partitions: int, rf: int,
                      rnd: random.Random) -> list[list[int]]:
    """StripedReplicaPlacer.place for ``partitions`` partitions on unfenced brokers."""
    if rf <= 0:
        raise ToolError(f"Invalid replication factor {rf}: the replication factor must be "
                        "positive.")
    if not brokers:
        raise ToolError("All brokers are currently fenced.")
    if rf > len(brokers):
        raise ToolError(f"The target replication factor of {rf} cannot be reached because "
                        f"only {len(brokers)} broker(s) are registered.")
    racks: dict[str | None, _BrokerList] = {}
    for b, rack in brokers.items():
        racks.setdefault(rack, _BrokerList()).brokers.append(b)
    for r in racks.values():
        r.initialize(rnd)
    names = sorted(racks, key=lambda r: (r is not None, r or ""))
    offset = rnd.randrange(len(names))
    epoch = 0
    out = []
    for _ in range(partitions):
        if epoch == len(brokers) and len(brokers) > 1:
            rnd.shuffle(names)
            for r in racks.values():
                rnd.shuffle(r.brokers)
            epoch = 0
        if offset == len(names):
            offset = 0
        replicas = []
        first = offset
        while True:
            b = racks[names[first]].next(epoch)
            if b >= 0:
                replicas.append(b)
                break
            first = (first + 1) % len(names)
        idx = offset
        for _ in range(1, rf):
            b = -1
            while b < 0:
                if idx == first:
                    first = -1
                else:
                    b = racks[names[idx]].next(epoch)
                idx = (idx + 1) % len(names)
            replicas.append(b)
        epoch += 1
        offset += 1
        out.append(replicas)
    return out


# ---- the actions -------------------------------------------------------------------------------
class Tool:
    def __init__(self, admin: KafkaAdmin, out: TextIO) -> None:
        self.admin = admin
        self.out = out

    def println(self, text: str = "") -> None:
        self.out.write(text + "\n")
        self.out.flush()

    # -- shared lookups --
    def current_assignment(self, parts: Iterable[Part]) -> dict[Part, list[int]]:
        """getReplicaAssignmentForPartitions: every partition must exist."""
        parts = list(parts)
        topics = self.admin.describe_topics(sorted({t for t, _ in parts}))
        for t in java_set_order(t for t, _ in parts):
            if not isinstance(topics.get(t), list):
                raise ToolError(f"{UNKNOWN_TOPIC_EXC}: Topic {t} not found.")
        res = {}
        for t, p in parts:
            info = next((x for x in topics[t] if x.index == p), None)
            if info is not None:
                res[(t, p)] = info.replicas
        missing = [x for x in parts if x not in res]
        if missing:
            raise ToolError(f"{UNKNOWN_TOPIC_EXC}: Unable to find partition: "
                            + ", ".join(tp(x) for x in java_set_order(missing)))
        return res

    def throttle_targets(self, current: dict[Part, tuple[list[int], list[int], list[int]]],
                         proposed: dict[Part, list[int]],
                         current_parts: dict[Part, list[int]]
                         ) -> dict[str, dict[int, tuple[set[int], set[int]]]]:
        """calculateProposedMoveMap: sources and destinations of every move."""
        moves: dict[str, dict[int, tuple[set[int], set[int]]]] = {}
        for (t, p), (replicas, adding, _) in current.items():
            moves.setdefault(t, {})[p] = (set(replicas) - set(adding), set(adding))
        for (t, p), replicas in proposed.items():
            parts = moves.setdefault(t, {})
            sources = set(parts[p][0]) if p in parts else set(current_parts[(t, p)])
            parts[p] = (sources, set(replicas) - sources)
        return moves

    def set_throttles(self, moves: dict[str, dict[int, tuple[set[int], set[int]]]],
                      rate: int) -> None:
        """modifyReassignmentThrottle: topic lists, then both rates on every broker involved."""
        changes: dict[tuple[int, str], list[tuple[str, int, str | None]]] = {}
        for topic, parts in moves.items():
            leader = sorted({f"{p}:{b}" for p, (src, _) in parts.items() for b in src})
            follower = sorted({f"{p}:{b}" for p, (src, dst) in parts.items()
                               for b in dst if b not in src})
            changes[(TOPIC, topic)] = [(TOPIC_LEVEL_THROTTLES[0], SET, ",".join(leader)),
                                       (TOPIC_LEVEL_THROTTLES[1], SET, ",".join(follower))]
        self.admin.incremental_alter_configs(changes)
        brokers = sorted({b for parts in moves.values() for src, dst in parts.values()
                          for b in src | dst})
        if rate >= 0:
            self.admin.incremental_alter_configs({
                (BROKER, str(b)): [(BROKER_LEVEL_THROTTLES[0], SET, str(rate)),
                                   (BROKER_LEVEL_THROTTLES[1], SET, str(rate))]
                for b in brokers})
            self.println(f"The inter-broker throttle limit was set to {rate} B/s")

    def clear_throttles(self, parts: Sequence[tuple[Part, list[int]]]) -> None:
        """clearAllThrottles: every live broker and every broker in the file; the topics
        in the file."""
        brokers = java_set_order(list(self.admin.broker_nodes())
                                 + [b for _, r in parts for b in r])
        self.out.write(f"Clearing broker-level throttles on broker{plural(len(brokers))} "
                       f"{','.join(map(str, brokers))}\n")
        self.admin.incremental_alter_configs({
            (BROKER, str(b)): [(k, DELETE, None) for k in BROKER_LEVEL_THROTTLES]
            for b in brokers})
        topics = java_set_order(t for (t, _), _ in parts)
        self.out.write(f"Clearing topic-level throttles on topic{plural(len(topics))} "
                       f"{','.join(topics)}\n")
        self.admin.incremental_alter_configs({
            (TOPIC, t): [(k, DELETE, None) for k in TOPIC_LEVEL_THROTTLES] for t in topics})
        self.out.flush()

    def progress_lines(self, running: dict[Part, tuple[list[int], list[int], list[int]]]
                       ) -> list[str]:
        """Bytes each adding replica holds against its leader (DescribeLogDirs)."""
        moving = {p: r for p, r in running.items() if r[1]}
        if not moving:
            return []
        topics = self.admin.describe_topics(sorted({t for t, _ in moving}))
        leaders = {}
        for (t, p) in moving:
            infos = topics.get(t)
            if isinstance(infos, list):
                leaders[(t, p)] = next((i.leader for i in infos if i.index == p), -1)
        sizes: dict[tuple[str, int, int], int] = {}
        per_broker: dict[int, list[Part]] = {}
        for part, (_, adding, _) in moving.items():
            for b in [leaders.get(part, -1), *adding]:
                if b >= 0:
                    per_broker.setdefault(b, []).append(part)
        for b, parts in per_broker.items():
            try:
                found = self.admin.describe_log_dirs(b, parts)
            except AdminError:
                continue  # a broker that is down reports nothing
            for (t, p), r in found.items():
                if r.current is not None:
                    sizes[(t, p, b)] = r.size
        lines = ["Progress of the replicas being added (bytes caught up):"]
        for part in sorted(moving):
            total = sizes.get((*part, leaders.get(part, -1)))
            for b in moving[part][1]:
                have = sizes.get((*part, b))
                if have is None:
                    lines.append(f"{tp(part)}: replica {b}: not started (broker {b} is not "
                                 "hosting it yet)")
                elif total:
                    lines.append(f"{tp(part)}: replica {b}: {progress_bar(have / total)} "
                                 f"{have} of {total} bytes")
                else:
                    lines.append(f"{tp(part)}: replica {b}: {have} bytes")
        return lines

    # -- actions --
    def generate(self, topics_json: str, broker_list: str, rack_aware: bool) -> None:
        brokers = []
        for x in broker_list.split(","):
            try:
                brokers.append(int(x))
            except ValueError:
                raise ToolError(f'For input string: "{x}"') from None
        dup = duplicates(brokers)
        if dup:
            raise ToolError(f"Broker list contains duplicate entries: {_java_list(dup)}")
        topics = parse_topics_data(topics_json)
        dup_topics = duplicates(topics)
        if dup_topics:
            raise ToolError("List of topics to reassign contains duplicate entries: "
                            f"{_java_list(dup_topics)}")
        described = self.admin.describe_topics(topics)
        for t in java_set_order(topics):
            if not isinstance(described.get(t), list):
                raise ToolError(f"{UNKNOWN_TOPIC_EXC}: Topic {t} not found.")
        current = {(t, i.index): i.replicas for t in set(topics) for i in described[t]}
        nodes = {b: (r if rack_aware else None) for b, r in self.admin.broker_nodes().items()
                 if b in set(brokers)}
        rackless = sum(1 for r in nodes.values() if r is None)
        if rack_aware and rackless not in (0, len(nodes)):
            raise ToolError("Not all brokers have rack information. Add --disable-rack-aware "
                            "in command line to make replica assignment without rack "
                            "information.")
        proposed: dict[Part, list[int]] = {}
        rnd = random.Random()
        for t in sorted(set(topics)):
            parts = [i for i in described[t]]
            for i, replicas in enumerate(striped_placement(nodes, len(parts),
                                                           len(parts[0].replicas), rnd)):
                proposed[(t, i)] = replicas
        self.out.write(f"Current partition replica assignment\n"
                       f"{format_reassignment_json(current)}\n\n")
        self.out.write(f"Proposed partition reassignment configuration\n"
                       f"{format_reassignment_json(proposed)}\n")
        self.out.flush()

    def execute(self, text: str, additional: bool, throttle: int, log_dir_throttle: int,
                timeout_ms: int, disallow_rf_change: bool) -> None:
        proposed, proposed_dirs = parse_execute_data(text)
        current = self.admin.list_partition_reassignments()
        if not additional and current:
            raise TerseError(CANNOT_EXECUTE)
        nodes = set(self.admin.broker_nodes())
        wanted = java_set_order(b for r in proposed.values() for b in r)
        unknown = next((b for b in wanted if b not in nodes), None)
        if unknown is not None:
            raise ToolError(f"Unknown broker id {unknown}")
        current_parts = self.current_assignment(proposed)
        self.println("Current partition replica assignment\n\n"
                     f"{format_reassignment_json(current_parts)}\n\n"
                     "Save this to use as the --reassignment-json-file option during rollback")
        if throttle >= 0 or log_dir_throttle >= 0:
            self.println(RUN_VERIFY)
            if throttle >= 0:
                self.set_throttles(self.throttle_targets(current, proposed, current_parts),
                                   throttle)
            if log_dir_throttle >= 0:
                movers = java_set_order(b for _, _, b in proposed_dirs)
                self.admin.incremental_alter_configs({
                    (BROKER, str(b)): [(BROKER_LEVEL_THROTTLES[2], SET, str(log_dir_throttle))]
                    for b in movers})
                self.println(f"The replica-alter-dir throttle limit was set to "
                             f"{log_dir_throttle} B/s")
        results = self.admin.alter_partition_reassignments(
            dict(proposed), allow_rf_change=not disallow_rf_change)
        errors = {p: r for p, r in results.items() if r[0]}
        missing = [p for p in proposed if p not in results]
        if errors or missing:
            lines = [f"{tp(p)}: {error_message(*errors[p])}" if p in errors else
                     f"{tp(p)}: The server did not answer for this partition."
                     for p in sorted(set(errors) | set(missing))]
            raise TerseError("Error reassigning partition(s):\n" + "\n".join(lines))
        self.println(f"Successfully started partition reassignment{plural(len(proposed))} for "
                     + ",".join(tp(p) for p in sorted(proposed)))
        if proposed_dirs:
            self.execute_moves(proposed_dirs, timeout_ms)

    def execute_moves(self, moves: dict[tuple[str, int, int], str], timeout_ms: int) -> None:
        """executeMoves: AlterReplicaLogDirs every 100 ms until every move has started."""
        start = time.monotonic()
        pending = dict(moves)
        while pending:
            results = self.admin.alter_replica_log_dirs(pending)
            done = []
            for key, code in results.items():
                if code == 0:
                    done.append(key)
                elif code != 9:  # REPLICA_NOT_AVAILABLE: the replica is not there yet
                    raise ToolError(f"Failed to alter dir for {key[0]}-{key[1]}-{key[2]}")
            for t, p, b in sorted(done, key=lambda k: (k[2], k[0], k[1])):
                self.println(f"Successfully started moving log directory to "
                             f"{pending[(t, p, b)]} for replica {t}-{p} with broker {b} ")
            for key in done:
                pending.pop(key)
            if not pending:
                return
            if (time.monotonic() - start) * 1000 >= timeout_ms:
                keys = sorted(pending, key=lambda k: (k[2], k[0], k[1]))
                raise TerseError(f"Timed out before log directory move{plural(len(keys))} could be "
                                 "started for: " + ",".join(f"{t}-{p}-{b}" for t, p, b in keys))
            time.sleep(0.1)

    def move_states(self, log_dirs: dict[tuple[str, int, int], str]
                    ) -> dict[tuple[str, int, int], tuple[str, str | None, str | None]]:
        """findLogDirMoveStates: (state, current dir, future dir) per replica, where state
        is missing, missing_dir, active, cancelled or completed."""
        found: dict[tuple[str, int, int], object] = {}
        for b in sorted({b for _, _, b in log_dirs}):
            parts = [(t, p) for t, p, bb in log_dirs if bb == b]
            try:
                for (t, p), r in self.admin.describe_log_dirs(b, parts).items():
                    found[(t, p, b)] = r
            except AdminError:
                continue
        states = {}
        for key, target in log_dirs.items():
            r = found.get(key)
            if r is None:
                states[key] = ("missing", None, None)
            elif r.current is None:
                states[key] = ("missing_dir", None, r.future)
            elif r.future is None:
                states[key] = ("completed" if r.current == target else "cancelled", r.current,
                               None)
            else:
                states[key] = ("active", r.current, r.future)
        return states

    @staticmethod
    def move_lines(log_dirs: dict[tuple[str, int, int], str], states: dict) -> list[str]:
        """replicaMoveStatesToString."""
        lines = []
        for key in sorted(states, key=lambda k: (k[2], k[0], k[1])):
            t, p, b = key
            state, current, future = states[key]
            target = log_dirs[key]
            if state == "missing_dir":
                lines.append(f"Partition {t}-{p} is not found in any live log dir on broker {b}."
                             " There is likely an offline log directory on the broker.")
            elif state == "missing":
                lines.append(f"Partition {t}-{p} cannot be found in any live log directory on "
                             f"broker {b}.")
            elif state == "active" and future == target:
                lines.append(f"Reassignment of replica {t}-{p}-{b} is still in progress.")
            elif state == "active":
                lines.append(f"Partition {t}-{p} on broker {b} is being moved to log dir "
                             f"{future} instead of {target}.")
            elif state == "cancelled":
                lines.append(f"Partition {t}-{p} on broker {b} is not being moved from log dir "
                             f"{current} to {target}.")
            else:
                lines.append(f"Reassignment of replica {t}-{p}-{b} completed successfully.")
        return lines

    def verify(self, text: str, preserve_throttles: bool) -> None:
        data = parse_reassignment_data(text)
        current = self.admin.list_partition_reassignments()
        states: dict[Part, tuple[list[int], list[int], bool]] = {}
        lookup = [p for p, _ in data.parts if p not in current]
        described = self.admin.describe_topics(sorted({t for t, _ in lookup}))
        for part, target in data.parts:
            if part in current:
                states[part] = (current[part][0], target, False)
                continue
            infos = described.get(part[0])
            info = next((i for i in infos if i.index == part[1]), None) \
                if isinstance(infos, list) else None
            states[part] = (info.replicas if info else [], target, True)
        lines = ["Status of partition reassignment:"]
        for part in sorted(states):
            cur, target, done = states[part]
            if not done:
                lines.append(f"Reassignment of partition {tp(part)} is still in progress.")
            elif cur == target:
                lines.append(f"Reassignment of partition {tp(part)} is completed.")
            else:
                lines.append(f"There is no active reassignment of partition {tp(part)}, but "
                             f"replica set is {','.join(map(str, cur))} rather than "
                             f"{','.join(map(str, target))}.")
        self.println("\n".join(lines))
        moves = self.move_states(data.log_dirs)
        self.println("\n".join(self.move_lines(data.log_dirs, moves)))
        moves_running = any(state == "active" for state, _, _ in moves.values())
        progress = self.progress_lines({p: current[p] for p in states if p in current})
        if progress:
            self.println("\n".join(progress))
        if not current and not moves_running and not preserve_throttles:
            self.clear_throttles(data.parts)

    def cancel(self, text: str, preserve_throttles: bool, timeout_ms: int) -> None:
        data = parse_reassignment_data(text)
        targets = list(dict.fromkeys(p for p, _ in data.parts))
        running = self.admin.list_partition_reassignments(targets) if targets else {}
        cancelling = [p for p, (_, adding, removing) in running.items() if adding or removing]
        if cancelling:
            results = self.admin.alter_partition_reassignments({p: None for p in cancelling})
            errors = {p: r for p, r in results.items() if r[0]}
            if errors:
                raise TerseError(
                    f"Error cancelling partition reassignment{plural(len(errors))} for:\n"
                    + "\n".join(f"{tp(p)}: {error_message(*errors[p])}" for p in sorted(errors)))
            self.println(f"Successfully cancelled partition reassignment{plural(len(cancelling))} "
                         "for: " + ",".join(tp(p) for p in sorted(cancelling)))
        else:
            self.println("None of the specified partition reassignments are active.")
        active = {k: cur for k, (state, cur, _) in self.move_states(data.log_dirs).items()
                  if state == "active" and cur is not None}
        if active:
            self.execute_moves(active, timeout_ms)
        else:
            self.out.write("None of the specified partition moves are active.")
            self.out.flush()
        if not preserve_throttles:
            self.clear_throttles(data.parts)

    def watch(self, parts: Sequence[Part] | None, interval_s: float = 1.0) -> None:
        """--progress: redraw the bars of the partitions still moving (all of them when
        ``parts`` is None) until none is; a terminal gets the frame redrawn in place."""
        tty = self.out.isatty()
        while True:
            running = self.admin.list_partition_reassignments(list(parts) if parts else None)
            running = {p: r for p, r in running.items() if r[1] or r[2]}
            if not running:
                self.println("All partition reassignments are complete.")
                return
            frame = self.progress_lines(running) or [
                f"{tp(p)}: waiting for the adding replicas to start" for p in sorted(running)]
            self.out.write((CLEAR if tty else "") + "\n".join(frame) + "\n")
            self.out.flush()
            time.sleep(interval_s)

    def list(self) -> None:
        current = self.admin.list_partition_reassignments()
        lines = []
        for part in sorted(current):
            replicas, adding, removing = current[part]
            line = f"{tp(part)}: replicas: {','.join(map(str, replicas))}."
            if adding:
                line += f" adding: {','.join(map(str, adding))}."
            if removing:
                line += f" removing: {','.join(map(str, removing))}."
            lines.append(line)
        if not lines:
            self.println("No partition reassignments found.")
            return
        self.println("Current partition reassignments:\n" + "\n".join(lines))
        progress = self.progress_lines(current)
        if progress:
            self.println("\n".join(progress))


# ---- arguments ------------------------------------------------------------------------------
OPTIONS: dict[str, str | None] = {  # option -> its argument's name (None: a flag)
    "generate": None, "execute": None, "verify": None, "cancel": None, "list": None,
    "bootstrap-server": "Server(s) to use for bootstrapping",
    "bootstrap-controller": "bootstrap controller to connect to",
    "command-config": "Admin client property file",
    "reassignment-json-file": "manual assignment json file path",
    "topics-to-move-json-file": "topics to reassign json file path",
    "broker-list": "brokerlist", "disable-rack-aware": None,
    "throttle": "throttle", "replica-alter-log-dirs-throttle": "replicaAlterLogDirsThrottle",
    "timeout": "timeout", "additional": None, "preserve-throttles": None,
    "disallow-replication-factor-change": None, "progress": None,
}
REQUIRED = {"verify": ["reassignment-json-file"],
            "generate": ["topics-to-move-json-file", "broker-list"],
            "execute": ["reassignment-json-file"], "cancel": ["reassignment-json-file"],
            "list": []}
PERMITTED = {
    "verify": ["bootstrap-server", "command-config", "preserve-throttles", "progress"],
    "generate": ["bootstrap-server", "broker-list", "command-config", "disable-rack-aware"],
    "execute": ["additional", "bootstrap-server", "command-config", "throttle",
                "replica-alter-log-dirs-throttle", "timeout",
                "disallow-replication-factor-change", "progress"],
    "cancel": ["command-config", "preserve-throttles", "timeout"],
    "list": ["command-config", "progress"],
}
LONG_OPTIONS = {"throttle": -1, "replica-alter-log-dirs-throttle": -1, "timeout": 10000}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="kafka-emulator reassign", allow_abbrev=False, add_help=True,
        description="This tool helps to move topic partitions between replicas "
        "(kafka-reassign-partitions, over the Kafka protocol).")
    for name, meta in OPTIONS.items():
        if meta is None:
            p.add_argument(f"--{name}", action="store_true")
        else:
            p.add_argument(f"--{name}", metavar=meta)
    return p


@dataclass
class Options:
    action: str
    values: dict[str, Any]

    def get(self, name: str) -> Any:
        return self.values.get(name)


def parse_args(argv: Sequence[str]) -> Options:
    """validateAndParseArgs: one action, one bootstrap kind, required and permitted options."""
    ns = build_parser().parse_args(list(argv))
    given = {k.replace("_", "-"): v for k, v in vars(ns).items() if v not in (None, False)}
    actions = [a for a in ACTIONS if a in given]
    if len(actions) != 1:
        raise UsageError("Command must include exactly one action: "
                         + ", ".join(f"--{a}" for a in ACTIONS))
    action = actions[0]
    if "bootstrap-server" in given and "bootstrap-controller" in given:
        raise UsageError("Please don't specify both --bootstrap-server and "
                         "--bootstrap-controller")
    if "bootstrap-server" not in given and "bootstrap-controller" not in given:
        raise UsageError("Please specify either --bootstrap-server or --bootstrap-controller")
    bootstrap_kind = "bootstrap-server" if "bootstrap-server" in given else "bootstrap-controller"
    for req in REQUIRED[action]:
        if req not in given:
            raise UsageError(f'Missing required argument "[{req}]"')
    permitted = set(PERMITTED[action]) | set(REQUIRED[action]) | {action}
    if action in ("cancel", "list"):
        permitted.add(bootstrap_kind)
    for opt in given:
        if opt not in permitted:
            raise UsageError(f'Option "[{opt}]" can\'t be used with action "[{action}]"')
    values = dict(given)
    for name, default in LONG_OPTIONS.items():
        raw = given.get(name)
        if raw is None:
            values[name] = default
            continue
        try:
            values[name] = int(raw)
        except ValueError:
            raise UsageError(f"Cannot parse argument '{raw}' of option {name}") from None
    return Options(action, values)


def read_file(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise ToolError(f"{path} ({e.strerror})") from None


def load_properties(path: str | None) -> dict[str, str]:
    props: dict[str, str] = {}
    if path is None:
        return props
    for line in read_file(path).splitlines():
        line = line.strip()
        if not line or line[0] in "#!":
            continue
        sep = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        if sep > 0:
            props[line[:sep].strip()] = line[sep + 1:].strip()
    return props


def run(opts: Options, out: TextIO) -> None:
    """handleAction: files are read and parsed before anything is sent."""
    a = opts.action
    inputs: dict[str, str] = {}
    if a in ("verify", "execute", "cancel"):
        inputs["json"] = read_file(opts.get("reassignment-json-file"))
    if a == "generate":
        inputs["json"] = read_file(opts.get("topics-to-move-json-file"))
    props = load_properties(opts.get("command-config"))
    if a == "execute":
        parse_execute_data(inputs["json"])
    elif a in ("verify", "cancel"):
        parse_reassignment_data(inputs["json"])
    elif a == "generate":
        parse_topics_data(inputs["json"])
    bootstrap = opts.get("bootstrap-server") or opts.get("bootstrap-controller")
    admin = KafkaAdmin(bootstrap, client_id=props.get("client.id", "reassign-partitions-tool"))
    try:
        tool = Tool(admin, out)
        if opts.get("progress"):
            parts = (None if a == "list" else list(dict.fromkeys(
                p for p, _ in parse_reassignment_data(inputs["json"]).parts)))
            if a == "execute":
                tool.execute(inputs["json"], bool(opts.get("additional")), opts.get("throttle"),
                             opts.get("replica-alter-log-dirs-throttle"), opts.get("timeout"),
                             bool(opts.get("disallow-replication-factor-change")))
            tool.watch(parts)
            if a == "verify":
                tool.verify(inputs["json"], bool(opts.get("preserve-throttles")))
        elif a == "verify":
            tool.verify(inputs["json"], bool(opts.get("preserve-throttles")))
        elif a == "generate":
            tool.generate(inputs["json"], opts.get("broker-list"),
                          not opts.get("disable-rack-aware"))
        elif a == "execute":
            tool.execute(inputs["json"], bool(opts.get("additional")), opts.get("throttle"),
                         opts.get("replica-alter-log-dirs-throttle"), opts.get("timeout"),
                         bool(opts.get("disallow-replication-factor-change")))
        elif a == "cancel":
            tool.cancel(inputs["json"], bool(opts.get("preserve-throttles")),
                        opts.get("timeout"))
        else:
            tool.list()
    finally:
        admin.close()


def main(argv: Sequence[str] | None = None, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        err.write("This tool helps to move topic partitions between replicas.\n")
        build_parser().print_usage(err)
        return 1
    try:
        opts = parse_args(argv)
    except UsageError as e:
        err.write(f"{e}\n")
        build_parser().print_usage(err)
        return 1
    try:
        run(opts, out)
        return 0
    except TerseError as e:
        out.write(f"{e}\n")
    except (ToolError, AdminError) as e:
        out.write(f"Error: {e}\n")
    except OSError as e:
        out.write(f"Error: {e}\n")
    out.flush()
    return 1


if __name__ == "__main__":
    sys.exit(main())
