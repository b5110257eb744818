"""The actions of kafka-reassign-partitions (``Tool``): generate, execute, verify,
cancel and list, over the Kafka protocol (emulator.tools.kafka_admin)."""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Sequence
from typing import TextIO

from emulator.tools.kafka_admin import (
    BROKER,
    DELETE,
    SET,
    TOPIC,
    AdminError,
    KafkaAdmin,
    PartitionInfo,
    ReplicaDir,
    error_message,
)
from emulator.tools.reassign.json_format import (
    BROKER_LEVEL_THROTTLES,
    CANNOT_EXECUTE,
    RUN_VERIFY,
    TOPIC_LEVEL_THROTTLES,
    UNKNOWN_TOPIC_EXC,
    Part,
    TerseError,
    ToolError,
    duplicates,
    format_reassignment_json,
    java_list,
    java_set_order,
    parse_execute_data,
    parse_reassignment_data,
    parse_topics_data,
    plural,
    tp,
)
from emulator.tools.reassign.placer import striped_placement
from emulator.tools.top import CLEAR, progress_bar


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
        described = self.admin.describe_topics(sorted({t for t, _ in parts}))
        topics: dict[str, list[PartitionInfo]] = {}
        for t in java_set_order(t for t, _ in parts):
            listed = described.get(t)
            if not isinstance(listed, list):
                raise ToolError(f"{UNKNOWN_TOPIC_EXC}: Topic {t} not found.")
            topics[t] = listed
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
            raise ToolError(f"Broker list contains duplicate entries: {java_list(dup)}")
        topics = parse_topics_data(topics_json)
        dup_topics = duplicates(topics)
        if dup_topics:
            raise ToolError("List of topics to reassign contains duplicate entries: "
                            f"{java_list(dup_topics)}")
        found = self.admin.describe_topics(topics)
        described: dict[str, list[PartitionInfo]] = {}
        for t in java_set_order(topics):
            info = found.get(t)
            if not isinstance(info, list):
                raise ToolError(f"{UNKNOWN_TOPIC_EXC}: Topic {t} not found.")
            described[t] = info
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
        found: dict[tuple[str, int, int], ReplicaDir] = {}
        for b in sorted({b for _, _, b in log_dirs}):
            parts = [(t, p) for t, p, bb in log_dirs if bb == b]
            try:
                for (t, p), rd in self.admin.describe_log_dirs(b, parts).items():
                    found[(t, p, b)] = rd
            except AdminError:
                continue
        states: dict[tuple[str, int, int], tuple[str, str | None, str | None]] = {}
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

