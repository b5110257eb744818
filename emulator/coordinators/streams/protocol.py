"""The KIP-1071 streams group protocol's operations (StreamsGroupHeartbeat,
StreamsGroupDescribe, leaving and fencing, timers, commit validation), as a part of the
group coordinator.

The groups and members are in ``streams.group``, the topology in ``streams.topology``,
the task assignor in ``streams.assignment``; member lookup, static members and epoch
fencing are the runtime's (``runtime.members``).
"""

from __future__ import annotations

from emulator.cluster.group_configs import GROUP_CONFIGS, group_value
from emulator.coordinators.groups.base import GroupPart, OffsetCheck
from emulator.coordinators.runtime import members as membership
from emulator.coordinators.runtime.members import LEAVE_EPOCH, STATIC_LEAVE_EPOCH
from emulator.coordinators.streams import assignment as sa
from emulator.coordinators.streams import messages as sm
from emulator.coordinators.streams import topology as st
from emulator.coordinators.streams.group import (
    _BROKER_ONLY,
    FENCED,
    StreamsGroup,
    StreamsMember,
)
from wire.errors import ErrorCode as E
from wire.errors import KafkaError


class StreamsProtocol(GroupPart):
    """StreamsGroupHeartbeat and friends; a part of ``GroupCoordinator``."""

    # ---- configs -----------------------------------------------------------------------
    def streams_cfg(self, group_id: str, key: str) -> int:
        """group.streams.<key>, or the group's streams.<key> override (GROUP resource)."""
        if f"streams.{key}" in GROUP_CONFIGS:
            overrides = self.state.group_configs.get(group_id, {})
            return int(group_value(self.state.config, overrides, f"streams.{key}"))
        name = f"group.streams.{key}"
        return self.gc.cfg(name, _BROKER_ONLY[name])

    def _assignment_configs(self, group_id: str) -> dict[str, str]:
        """What the assignor is given; a change of these starts a new assignment."""
        out = {"num.standby.replicas": str(self.streams_cfg(group_id, "num.standby.replicas"))}
        overrides = self.state.group_configs.get(group_id, {})
        tags = [t.strip() for t in group_value(self.state.config, overrides,
                                               "streams.rack.aware.assignment.tags").split(",")]
        if any(tags):
            out["rack.aware.assignment.tags"] = ",".join(tags)
        return out

    def _partition_count(self, topic: str) -> int | None:
        t = self.state.topics.get(topic)
        return len(t.partitions) if t is not None else None

    # ---- heartbeat ----------------------------------------------------------------------
    def streams_group_heartbeat(self, req: sm.StreamsGroupHeartbeatRequest, *, client_id: str = "",
                                client_host: str = "", version: int = 1
                                ) -> tuple[sm.StreamsGroupHeartbeatResponse, st.ToCreate]:
        """StreamsGroupHeartbeat. Returns the response and the internal topics to create
        (name -> (partitions, replication factor, configs))."""
        try:
            _validate(req)
            create: st.ToCreate
            if req["member_epoch"] in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
                out, create = self._streams_leave(req), {}
            else:
                out, create = self._streams_heartbeat(req, client_id, client_host, version)
        except KafkaError as e:
            return _error(e.code, e.message), {}
        self.gc.mark_changed()
        return out, create

    def _streams_group(self, group_id: str, create: bool) -> StreamsGroup:
        typed: StreamsGroup = self.gc.typed_group(group_id, create, StreamsGroup,
                                                  "Streams group")
        return typed

    def _streams_heartbeat(self, req: sm.StreamsGroupHeartbeatRequest, client_id: str, client_host: str,
                           version: int) -> tuple[sm.StreamsGroupHeartbeatResponse, st.ToCreate]:
        now = self.gc.now()
        gid, member_id, epoch = req["group_id"], req["member_id"], req["member_epoch"]
        instance_id = req["instance_id"]
        joining = epoch == 0
        group = self._streams_group(gid, joining)
        was_empty = group.is_empty
        if joining:
            max_size = self.streams_cfg(gid, "max.size")
            if (instance_id is None or instance_id not in group.static_members) \
                    and member_id not in group.members and len(group.members) >= max_size:
                raise KafkaError(E.GROUP_MAX_SIZE_REACHED, "The streams group has reached its "
                                 f"maximum capacity of {max_size} members.")
        owned = sa.owned_from_wire(req["active_tasks"], req["standby_tasks"],
                                   req["warmup_tasks"])
        member, is_new = self._streams_member(group, member_id, epoch, instance_id, owned)
        before = None if is_new else member.assignment_inputs()
        self._update_member(member, req, joining, client_id, client_host)
        if is_new:
            group.members[member.member_id] = member
            if member.instance_id is not None:
                group.static_members[member.instance_id] = member.member_id
        recompute = is_new or before != member.assignment_inputs()
        statuses: list[sm.Status] = []
        topology = self._maybe_update_topology(group, req["topology"])
        if group.topology is not None and member.topology_epoch < group.topology.epoch:
            statuses.append(_status(st.STALE_TOPOLOGY, f"The member's topology epoch "
                                    f"{member.topology_epoch} is behind the group's topology "
                                    f"epoch {group.topology.epoch}."))
        configured = group.configured
        key = st.metadata_key(topology, self._partition_count)
        if configured is None or configured.metadata_key != key \
                or configured.epoch != topology.epoch:
            configured = group.configured = st.configure(topology, self._partition_count)
            recompute = True
        validated = -1
        if configured.is_ready:
            validated = topology.epoch
            for tasks in (req["active_tasks"], req["standby_tasks"], req["warmup_tasks"]):
                _check_tasks(configured, tasks)
        for reported, kept in ((req["task_offsets"], member.task_offsets),
                               (req["task_end_offsets"], member.task_end_offsets)):
            if reported is not None:
                kept.update({(o["subtopology_id"], o["partition"]): o["offset"] for o in reported})
        if validated != group.validated_topology_epoch:
            recompute = True
        configs = self._assignment_configs(gid)
        if configs != group.last_assignment_configs:
            recompute = True
        if recompute:
            group.group_epoch += 1
            group.validated_topology_epoch = validated
            group.last_assignment_configs = configs
        if was_empty and group.initial_delay_deadline is None:
            delay = self.streams_cfg(gid, "initial.rebalance.delay.ms")
            if delay > 0:
                group.initial_delay_deadline = now + delay
        self._maybe_update_target(group, now, statuses)
        old = member.assigned.copy()
        self._reconcile_streams(group, member, owned, now)
        member.hb_deadline = now + self.streams_cfg(gid, "session.timeout.ms")
        if req["shutdown_application"]:
            group.shutdown_requested_by = member.member_id
        changed = not member.assigned.same_tasks(old)
        if changed and member.user_endpoint is not None:
            group.endpoint_information_epoch += 1
        out: sm.StreamsGroupHeartbeatResponse = {
            "error_code": E.NONE, "error_message": None, "member_id": member.member_id,
            "member_epoch": member.member_epoch,
            "heartbeat_interval_ms": self.streams_cfg(gid, "heartbeat.interval.ms"),
            "task_offset_interval_ms": self.streams_cfg(gid, "task.offset.interval.ms"),
            "acceptable_recovery_lag": self.streams_cfg(gid, "acceptable.recovery.lag"),
            # v0's field: Kafka 4.4's coordinator never sets it, so v0 members read 0
            "acceptable_recovery_lag_legacy": 0,
            "active_tasks": None, "standby_tasks": None, "warmup_tasks": None,
            "endpoint_information_epoch": group.endpoint_information_epoch,
            "partitions_by_user_endpoint": None, "status": statuses,
        }
        if joining or changed:
            out["active_tasks"] = sa.task_ids(member.assigned.active)
            out["standby_tasks"] = sa.task_ids(member.assigned.standby)
            out["warmup_tasks"] = sa.task_ids(member.assigned.warmup)
        if group.endpoint_information_epoch != req["endpoint_information_epoch"]:
            out["partitions_by_user_endpoint"] = self._endpoints(group, member)
        create: st.ToCreate = {}
        if configured.status is not None:
            create = dict(configured.to_create)
            statuses.append(_status(*configured.status))
        if group.shutdown_requested_by is not None:
            statuses.append(_status(st.SHUTDOWN_APPLICATION, f"Streams group member "
                                    f"{group.shutdown_requested_by} encountered a fatal error "
                                    "and requested a shutdown for the entire application."))
        tags = configs.get("rack.aware.assignment.tags")
        if version >= 1 and tags:
            missing = [t for t in tags.split(",") if t not in member.client_tags]
            if missing:
                statuses.append(_status(st.MISSING_CLIENT_TAGS, "Missing required client tags "
                                        f"for rack-aware standby assignment: [{', '.join(missing)}]. "
                                        "Configure them via 'client.tag.<tagKey>' in your "
                                        "Streams config."))
        return out, create

    def _update_member(self, m: StreamsMember, req: sm.StreamsGroupHeartbeatRequest, joining: bool,
                       client_id: str, client_host: str) -> None:
        if req["instance_id"] is not None:
            m.instance_id = req["instance_id"]
        if req["rack_id"] is not None:
            m.rack_id = req["rack_id"]
        if req["rebalance_timeout_ms"] != -1:
            m.rebalance_timeout_ms = req["rebalance_timeout_ms"]
        topology = req["topology"]
        if topology is not None:
            m.topology_epoch = topology["epoch"]
        m.client_id, m.client_host = client_id, client_host
        if req["process_id"] is not None:
            m.process_id = req["process_id"]
        tags = req["client_tags"]
        if tags is not None:
            m.client_tags = {kv["key"]: kv["value"] for kv in tags}
        ep = req["user_endpoint"]
        if joining or ep is not None:
            m.user_endpoint = (ep["host"], ep["port"]) if ep is not None else None

    def _streams_member(self, group: StreamsGroup, member_id: str, epoch: int,
                        instance_id: str | None, owned: sa.Tasks | None
                        ) -> tuple[StreamsMember, bool]:
        joining = epoch == 0
        if instance_id is None:
            m = group.members.get(member_id)
            if m is None:
                if not joining:
                    raise membership.unknown_member(group.group_id, member_id)
                return StreamsMember(member_id), True
            _check_epoch(m, epoch, owned)
            return m, False
        old_id = group.static_members.get(instance_id)
        old = group.members.get(old_id) if old_id is not None else None
        if joining:
            if old is None:
                m = group.members.get(member_id)
                return (m, False) if m is not None else (StreamsMember(member_id), True)
            if old.member_epoch != STATIC_LEAVE_EPOCH:
                raise membership.unreleased_instance(member_id, instance_id, old.member_id)
            # The static member comes back under a new member id with its tasks.
            membership.replace_static(group, old, member_id, instance_id)
            return old, False
        m = membership.static_member(group, member_id, instance_id, FENCED)
        _check_epoch(m, epoch, owned)
        return m, False

    @staticmethod
    def _maybe_update_topology(group: StreamsGroup, wire: sm.TopologyWire | None
                               ) -> st.StreamsTopology:
        if wire is not None:
            topo = st.StreamsTopology.from_wire(wire)
            if group.topology is None:
                group.topology = topo
                return topo
            if group.topology.epoch > topo.epoch:
                return group.topology
            if group.topology != topo:
                raise KafkaError(E.INVALID_REQUEST, "Topology updates are not supported yet.")
            return group.topology
        if group.topology is None:
            raise KafkaError(E.UNKNOWN_SERVER_ERROR, "The topology is null and the group "
                             "topology is also null.")
        return group.topology

    def _maybe_update_target(self, group: StreamsGroup, now: int,
                             statuses: list[sm.Status] | None) -> None:
        if group.initial_delay_deadline is not None:
            if statuses is not None:
                statuses.append(_status(st.ASSIGNMENT_DELAYED, "Assignment delayed due to the "
                                        "configured initial rebalance delay."))
            return
        if group.assignment_epoch >= group.group_epoch:
            return
        interval = self.streams_cfg(group.group_id, "assignment.interval.ms")
        if group.assignment_ts is not None and now < group.assignment_ts + interval:
            if statuses is not None:
                statuses.append(_status(st.ASSIGNMENT_DELAYED, "Assignment delayed due to the "
                                        "configured assignment interval."))
            return
        configured = group.configured
        tasks: dict[str, int] = {}
        stateful: set[str] = set()
        if configured is not None and configured.is_ready and configured.subtopologies:
            tasks = {sid: s.num_tasks for sid, s in configured.subtopologies.items()}
            stateful = {sid for sid, s in configured.subtopologies.items()
                        if s.state_changelog_topics}
        members = [sa.AssignMember(m.member_id, m.process_id,
                                   group.target.get(m.member_id, m.assigned))
                   for m in group.members.values()]
        standby = int(group.last_assignment_configs.get("num.standby.replicas", "0"))
        group.target = sa.assign(members, tasks, standby, stateful)
        group.assignment_epoch = group.group_epoch
        group.assignment_ts = now

    def _reconcile_streams(self, group: StreamsGroup, m: StreamsMember,
                           owned: sa.Tasks | None, now: int) -> None:
        if m.member_epoch == STATIC_LEAVE_EPOCH:
            return
        target = group.target.get(m.member_id, sa.Tasks())
        try:
            step = sa.reconcile(m.state, m.member_epoch, m.process_id, m.assigned,
                                m.pending_revocation, group.assignment_epoch, target,
                                group.holders(exclude=m.member_id), owned)
        except sa.UnknownState as e:
            raise KafkaError(E.FENCED_MEMBER_EPOCH, "The streams group member is in a unknown "
                             "state. The member must abandon all its tasks and rejoin.") from e
        if step is None:
            return
        m.transition(step.state)
        if step.member_epoch != m.member_epoch:
            m.previous_member_epoch, m.member_epoch = m.member_epoch, step.member_epoch
        m.assigned, m.pending_revocation = step.assigned, step.pending_revocation
        if m.state == sa.UNREVOKED:
            if m.revocation_deadline is None:
                m.revocation_deadline = now + max(m.rebalance_timeout_ms, 0)
        else:
            m.revocation_deadline = None

    def _endpoints(self, group: StreamsGroup, member: StreamsMember
                   ) -> list[sm.EndpointToPartitions]:
        """Kafka's EndpointToPartitionsManager: one entry per member with an endpoint,
        the asking member last."""
        subs = (group.configured.subtopologies if group.configured is not None else None) or {}
        out: list[sm.EndpointToPartitions] = []
        order = [m for m in group.members.values() if m is not member] + [member]
        for m in order:
            if m.user_endpoint is None:
                continue
            standby = {s: set(ps) for s, ps in m.assigned.standby.items()}
            for s, ps in m.assigned.warmup.items():
                standby.setdefault(s, set()).update(ps)
            out.append({
                "user_endpoint": {"host": m.user_endpoint[0], "port": m.user_endpoint[1]},
                "active_partitions": self._topic_partitions(
                    {s: set(ps) for s, ps in m.assigned.active.items()}, subs),
                "standby_partitions": self._topic_partitions(standby, subs),
            })
        return out

    def _topic_partitions(self, tasks: dict[str, set[int]],
                          subs: dict[str, st.ConfiguredSubtopology]) -> list[sm.TopicPartitions]:
        out: list[sm.TopicPartitions] = []
        for sid, parts in sorted(tasks.items()):
            s = subs.get(sid)
            if s is None or not parts:
                continue
            for topic in sorted(s.source_topics | set(s.repartition_source_topics)):
                n = self._partition_count(topic) or 0
                ps = sorted(p for p in parts if p < n)
                if ps:
                    out.append({"topic": topic, "partitions": ps})
        return out

    # ---- leaving and fencing ---------------------------------------------------------------
    def _streams_leave(self, req: sm.StreamsGroupHeartbeatRequest) -> sm.StreamsGroupHeartbeatResponse:
        gid, member_id, epoch = req["group_id"], req["member_id"], req["member_epoch"]
        instance_id = req["instance_id"]
        group = self._streams_group(gid, False)
        if req["shutdown_application"]:
            group.shutdown_requested_by = member_id
        out = _error(E.NONE, None)
        out["member_id"], out["member_epoch"], out["status"] = member_id, epoch, []
        m = membership.leaving_member(group, member_id, instance_id, FENCED)
        if instance_id is not None and epoch == STATIC_LEAVE_EPOCH:
            m.member_epoch = STATIC_LEAVE_EPOCH
            m.pending_revocation = sa.Tasks()
            return out
        self._fence_streams_member(group, m)
        return out

    def _fence_streams_member(self, group: StreamsGroup, m: StreamsMember) -> None:
        """Remove a member, free its tasks and bump the group epoch (a new assignment)."""
        membership.remove(group, m)
        if m.user_endpoint is not None:
            group.endpoint_information_epoch += 1
        group.group_epoch += 1
        if not group.members:
            group.shutdown_requested_by = None
            group.initial_delay_deadline = None
            group.target = {}
            group.assignment_epoch = group.group_epoch
            return
        self._maybe_update_target(group, self.gc.now(), None)

    def tick_streams(self, group: StreamsGroup, now: int) -> bool:
        changed = False
        if group.initial_delay_deadline is not None and now >= group.initial_delay_deadline:
            group.initial_delay_deadline = None
            if group.members and group.configured is not None:
                self._maybe_update_target(group, now, None)
            changed = True
        elif group.members and group.assignment_epoch < group.group_epoch \
                and group.initial_delay_deadline is None:
            before = group.assignment_epoch
            self._maybe_update_target(group, now, None)
            changed = group.assignment_epoch != before
        for m in list(group.members.values()):
            if group.members.get(m.member_id) is not m:
                continue
            stuck = m.revocation_deadline is not None and now >= m.revocation_deadline \
                and m.state == sa.UNREVOKED
            if now >= m.hb_deadline or stuck:
                self._fence_streams_member(group, m)
                changed = True
        return changed

    # ---- describe ---------------------------------------------------------------------------
    def describe_streams_groups(self, group_ids: list[str], version: int = 1
                                ) -> list[sm.DescribedStreamsGroup]:
        out: list[sm.DescribedStreamsGroup] = []
        for gid in group_ids:
            group = self.groups.get(gid)
            if group is None or group.type != "streams":
                msg = f"Group {gid} not found." if group is None else \
                    f"Group {gid} is not a streams group."
                out.append({"group_id": gid, "error_code": E.GROUP_ID_NOT_FOUND,
                            "error_message": msg, "group_state": "", "topology": None,
                            "members": []})
                continue
            out.append(self._describe_streams(group))
        return out

    def _describe_streams(self, g: StreamsGroup) -> sm.DescribedStreamsGroup:
        if g.configured is not None and g.configured.is_ready:
            topology = g.configured.describe()
        else:
            assert g.topology is not None
            topology = g.topology.describe()

        def assignment(t: sa.Tasks | None) -> sm.Assignment:
            t = t or sa.Tasks()
            return {"active_tasks": sa.task_ids(t.active),
                    "standby_tasks": sa.task_ids(t.standby),
                    "warmup_tasks": sa.task_ids(t.warmup)}

        def offsets(d: dict[tuple[str, int], int]) -> list[sm.TaskOffset]:
            return [{"subtopology_id": s, "partition": p, "offset": o}
                    for (s, p), o in sorted(d.items())]

        return {
            "error_code": E.NONE, "error_message": None, "group_id": g.group_id,
            "group_state": g.state, "group_epoch": g.group_epoch,
            "assignment_epoch": g.assignment_epoch, "topology": topology,
            "members": [{
                "member_id": m.member_id, "member_epoch": m.member_epoch,
                "instance_id": m.instance_id, "rack_id": m.rack_id, "client_id": m.client_id,
                "client_host": m.client_host, "topology_epoch": m.topology_epoch,
                "process_id": m.process_id,
                "user_endpoint": None if m.user_endpoint is None else
                {"host": m.user_endpoint[0], "port": m.user_endpoint[1]},
                "client_tags": [{"key": k, "value": v} for k, v in sorted(m.client_tags.items())],
                "task_offsets": offsets(m.task_offsets),
                "task_end_offsets": offsets(m.task_end_offsets),
                "assignment": assignment(m.assigned),
                "target_assignment": assignment(g.target.get(m.member_id)),
                "is_classic": False,
            } for m in g.members.values()],
            "topology_description": None, "topology_description_status": 0,
            "assignor_name": "sticky",
        }

    # ---- offsets --------------------------------------------------------------------------
    @staticmethod
    def validate_streams_commit(group: StreamsGroup, member_id: str, epoch: int,
                                transactional: bool, version: int,
                                instance_id: str | None = None) -> OffsetCheck | None:
        """Kafka 4.4's StreamsGroup.validateOffsetCommit: None (commit anything) or a
        per-partition check for an older member epoch; raises for the whole request."""
        m = membership.committing_member(group, member_id, epoch, transactional,
                                         membership.unknown_member(group.group_id, member_id),
                                         instance_id)
        if m is None:
            return None
        if not transactional and version < 9:
            raise KafkaError(E.UNSUPPORTED_VERSION, "OffsetCommit version 9 or above must be "
                             "used by members using the streams group protocol")
        if epoch == m.member_epoch:
            return None
        if epoch > m.member_epoch:
            raise KafkaError(E.STALE_MEMBER_EPOCH, f"Received member epoch {epoch} is newer "
                             f"than current member epoch {m.member_epoch}.")
        if group.topology is None:
            raise KafkaError(E.STALE_MEMBER_EPOCH, "Topology is not available for offset "
                             "commit validation.")
        by_topic = {t: s.subtopology_id for s in group.topology.subtopologies
                    for t in s.all_sources()}

        def check(topic: str, partition: int) -> int:
            """An older epoch commits a task's partition it held since then (Kafka's
            assignment epoch validator)."""
            sid = by_topic.get(topic)
            if sid is None:
                return E.STALE_MEMBER_EPOCH
            held = m.assigned.active.get(sid, {}).get(partition)
            if held is None:
                held = m.pending_revocation.active.get(sid, {}).get(partition)
            if held is None or epoch < held:
                return E.STALE_MEMBER_EPOCH
            return E.NONE

        return check


def _validate(req: sm.StreamsGroupHeartbeatRequest) -> None:
    """Kafka's GroupCoordinatorService checks of a StreamsGroupHeartbeat request."""
    def bad(msg: str) -> KafkaError:
        return KafkaError(E.INVALID_REQUEST, msg)

    topo = req["topology"]
    if topo is not None and any(s["source_topic_regex"] for s in topo["subtopologies"]):
        raise bad("Regular expressions for source topics are not supported yet.")
    if req["member_id"] == "":
        raise bad("MemberId can't be empty.")
    if req["group_id"] == "":
        raise bad("GroupId can't be empty.")
    if req["instance_id"] == "":
        raise bad("InstanceId can't be empty.")
    if req["rack_id"] == "":
        raise bad("RackId can't be empty.")
    epoch = req["member_epoch"]
    tasks = (req["active_tasks"], req["standby_tasks"], req["warmup_tasks"])
    if epoch == 0:
        if req["rebalance_timeout_ms"] == -1:
            raise bad("RebalanceTimeoutMs must be provided in first request.")
        for name, t in zip(("ActiveTasks", "StandbyTasks", "WarmupTasks"), tasks, strict=True):
            if t:
                raise bad(f"{name} must be empty when (re-)joining.")
        if topo is None:
            raise bad("Topology must be non-null when (re-)joining.")
        for s in topo["subtopologies"]:
            for info in s["state_changelog_topics"]:
                if info["partitions"] != 0:
                    raise KafkaError(E.STREAMS_INVALID_TOPOLOGY, f"Changelog topic "
                                     f"{info['name']} must have an undefined partition count, "
                                     f"but it is set to {info['partitions']}.")
    elif epoch == STATIC_LEAVE_EPOCH:
        if req["instance_id"] is None:
            raise bad("InstanceId can't be null.")
    elif epoch < STATIC_LEAVE_EPOCH:
        raise bad(f"MemberEpoch is {epoch}, but must be greater than or equal to -2.")
    if any(t is not None for t in tasks) and any(t is None for t in tasks):
        raise bad("If one task-type is non-null, all must be non-null.")
    if epoch != 0 and topo is not None:
        raise bad("Topology can only be provided when (re-)joining.")


def _check_epoch(m: StreamsMember, epoch: int, owned: sa.Tasks | None) -> None:
    """Kafka's throwIfStreamsGroupMemberEpochIsInvalid."""
    if epoch == 0 or epoch == m.member_epoch:
        return
    subset = owned is not None and owned.active_set() <= m.assigned.active_set() \
        and owned.standby_set() <= m.assigned.standby_set() \
        and owned.warmup_set() <= m.assigned.warmup_set()
    membership.check_member_epoch("streams", m, epoch, subset)


def _check_tasks(configured: st.ConfiguredTopology, tasks: list[sm.TaskIds] | None) -> None:
    """Kafka's throwIfRequestContainsInvalidTasks."""
    subs = configured.subtopologies or {}
    for t in tasks or ():
        s = subs.get(t["subtopology_id"])
        if s is None:
            raise KafkaError(E.INVALID_REQUEST, f"Subtopology {t['subtopology_id']} does not "
                             "exist in the topology.")
        for p in t["partitions"]:
            if not 0 <= p < s.num_tasks:
                raise KafkaError(E.INVALID_REQUEST, f"Task {p} for subtopology "
                                 f"{t['subtopology_id']} is invalid. Number of tasks for this "
                                 f"subtopology: {s.num_tasks}")


def _status(code: int, detail: str) -> sm.Status:
    return {"status_code": code, "status_detail": detail}


def _error(code: int, message: str | None) -> sm.StreamsGroupHeartbeatResponse:
    return {"error_code": code, "error_message": message, "member_id": "", "member_epoch": 0,
            "heartbeat_interval_ms": 0, "task_offset_interval_ms": 0,
            "acceptable_recovery_lag": -1, "acceptable_recovery_lag_legacy": 0, "status": None,
            "active_tasks": None, "standby_tasks": None, "warmup_tasks": None,
            "endpoint_information_epoch": 0, "partitions_by_user_endpoint": None}
