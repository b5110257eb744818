"""KIP-1071 streams groups (StreamsGroupHeartbeat): Kafka Streams' own group protocol.

Modelled on the streams half of Kafka 4.4's GroupMetadataManager and its StreamsGroup.
Like a KIP-848 consumer group there is no join/sync barrier: members heartbeat, the
coordinator keeps a group epoch, computes a target assignment of *tasks* (subtopology,
partition) with the sticky task assignor and moves every member towards it one
heartbeat at a time (emulator.coordinators.streams.assignment). What is particular:

- The first member to join brings the topology (emulator.coordinators.streams.topology); the
  coordinator configures it against the cluster's topics and reports what stops it
  as statuses in the response: MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED_TOPICS,
  MISSING_INTERNAL_TOPICS (the handler then creates the repartition and changelog
  topics, as Kafka's broker does). Tasks are assigned only once the topology is ready.
- A new group waits group.streams.initial.rebalance.delay.ms (3 s) before its first
  assignment, and assignments are at most one per group.streams.assignment.interval.ms
  (1 s); both answer ASSIGNMENT_DELAYED.
- Members report their endpoint for interactive queries; every member gets the
  partitions of every endpoint whenever the endpoint information epoch it sends is
  not the group's.
- A member may ask the whole application to shut down (SHUTDOWN_APPLICATION status to
  everyone until the group empties).

Group states: Empty, NotReady (topology not validated), Assigning, Reconciling, Stable.
Timers (``tick_streams``): the session timeout fences a silent member, the rebalance
timeout one that does not revoke in time, and the initial delay computes the first
assignment.

As Kafka 4.4: no warm-up tasks are planned (its AssignmentRefiner returns the target
unchanged) and standbys are placed without looking at client tags (the
rack.aware.assignment.tags config only makes heartbeats v1+ report MISSING_CLIENT_TAGS),
and a topology update (a joining member's different topology) is refused.
Differs from Kafka: no topology description plugin (KIP-1331) can be configured, so
TopologyDescriptionRequired is never set; group records are not written to
__consumer_offsets (offsets are).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

from emulator.coordinators.streams import assignment as sa
from emulator.coordinators.streams import topology as st

# How a static member's FENCED_INSTANCE_ID names the member holding its instance id.
FENCED = "was fenced by member {}."

# group.streams.* broker defaults that are not per-group configs (Kafka 4.4's
# GroupCoordinatorConfig).
_BROKER_ONLY = {"group.streams.task.offset.interval.ms": 60000,
                "group.streams.acceptable.recovery.lag": 10000,
                "group.streams.max.size": 0x7FFFFFFF}


@dataclass(eq=False)
class StreamsMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    topology_epoch: int = -1
    process_id: str = ""
    user_endpoint: tuple[str, int] | None = None
    client_tags: dict[str, str] = field(default_factory=dict)
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: str = sa.STABLE
    assigned: sa.Tasks = field(default_factory=sa.Tasks)
    pending_revocation: sa.Tasks = field(default_factory=sa.Tasks)
    task_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    task_end_offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    hb_deadline: int = 0
    revocation_deadline: int | None = None

    def transition(self, target: str) -> None:
        sa.MEMBER_TRANSITIONS.check(self.member_id, self.state, target)
        self.state = target

    def assignment_inputs(self) -> tuple[object, ...]:
        """What, changed, makes the group recompute its assignment (not a member's
        metadata in Kafka's sense, the bytes a classic member's protocol carries)."""
        return (self.instance_id, self.rack_id, self.rebalance_timeout_ms, self.topology_epoch,
                self.process_id, self.user_endpoint, tuple(sorted(self.client_tags.items())),
                self.client_id, self.client_host)

    def is_reconciled_to(self, epoch: int) -> bool:
        return self.state == sa.STABLE and self.member_epoch == epoch


@dataclass(eq=False)
class StreamsGroup:
    group_id: str
    group_epoch: int = 1  # Kafka starts a streams group at epoch 1, assigned at 1
    assignment_epoch: int = 1
    assignment_ts: int | None = None
    members: dict[str, StreamsMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)
    target: dict[str, sa.Tasks] = field(default_factory=dict)
    topology: st.StreamsTopology | None = None
    configured: st.ConfiguredTopology | None = None
    validated_topology_epoch: int = -1
    last_assignment_configs: dict[str, str] = field(default_factory=dict)
    endpoint_information_epoch: int = 0
    shutdown_requested_by: str | None = None
    initial_delay_deadline: int | None = None
    loaded_epoch: tuple[int, int] | None = None

    type: ClassVar[Literal["streams"]] = "streams"
    protocol_type = "streams"

    @property
    def is_empty(self) -> bool:
        return not self.members

    @property
    def state(self) -> str:
        if not self.members:
            return "Empty"
        if self.topology is None or self.topology.epoch != self.validated_topology_epoch:
            return "NotReady"
        if self.group_epoch > self.assignment_epoch:
            return "Assigning"
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in self.members.values()):
            return "Reconciling"
        return "Stable"

    def is_subscribed_to(self, topic: str) -> bool:
        if not self.members or self.topology is None:
            return False
        return topic in self.topology.source_topics()

    def holders(self, exclude: str | None = None) -> sa.Holders:
        h = sa.Holders({}, {}, {})
        for m in self.members.values():
            if m.member_id == exclude:
                continue
            for tasks in (m.assigned, m.pending_revocation):
                for t in tasks.active_set():
                    h.active_process[t] = m.process_id
                for t in tasks.standby_set():
                    h.standby_processes.setdefault(t, set()).add(m.process_id)
                for t in tasks.warmup_set():
                    h.warmup_processes.setdefault(t, set()).add(m.process_id)
        return h


def streams_due(group: StreamsGroup, now: int) -> int | None:
    """When ``tick_streams`` next has something to do for ``group``: the initial
    rebalance delay, a member's session or revocation deadline, or ``now`` while a new
    target assignment waits (for assignment.interval.ms: unfinished work, looked at
    every tick until made, as before)."""
    times = []
    if group.initial_delay_deadline is not None:
        times.append(group.initial_delay_deadline)
    elif group.members and group.assignment_epoch < group.group_epoch:
        times.append(now)
    for m in group.members.values():
        times.append(m.hb_deadline)
        if m.revocation_deadline is not None and m.state == sa.UNREVOKED:
            times.append(m.revocation_deadline)
    return min(times) if times else None
