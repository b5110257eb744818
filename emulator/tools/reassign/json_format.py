"""The reassignment JSON files of kafka-reassign-partitions, read and written as Kafka's
ReassignPartitionsCommand does (Java's iteration orders, Jackson's compact output and
its error messages), and the tool's errors and constants."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

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


def java_list(items: Sequence[Any]) -> str:
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
            raise ToolError(f"Size of replicas list {java_list(replicas)} is different from "
                            f"size of log dirs list {java_list(dirs)} for partition "
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

