"""Tasks of streams group members, the sticky task assignor, and reconciliation (KIP-1071).

A task is (subtopology id, partition). A member holds active tasks (each with the
assignment epoch it got it in, which OffsetCommit checks), standby tasks and warm-up
tasks. Modelled on Kafka's TasksTuple, StickyTaskAssignor and streams
CurrentAssignmentBuilder:

- ``assign``: active tasks stay with their previous owner while it is under its fair
  share, the rest go to the least loaded process (load per member of the process),
  then to that process's least loaded member; each active task gets
  ``num_standby`` standby tasks on other processes, preferring previous holders.
- ``reconcile``: one step of a member towards its target. A task is handed over only
  once its previous owner no longer holds it (an active task held by anyone else, a
  standby the member's process already runs); a member that still owns tasks it must
  give up waits in ``unrevoked_tasks`` with its epoch unchanged.

As in Kafka 4.4, no warm-up tasks are planned (its AssignmentRefiner returns the target
assignment unchanged) and standby placement does not look at client tags.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from emulator.cluster.state_machines import TransitionTable
from emulator.coordinators.streams.messages import TaskIds
from wire.errors import ErrorCode as E

Task = tuple[str, int]

STABLE = "stable"
UNREVOKED = "unrevoked_tasks"
UNRELEASED = "unreleased_tasks"
UNKNOWN = "unknown"
_STATES = frozenset({STABLE, UNREVOKED, UNRELEASED, UNKNOWN})
# target -> states it may be entered from (Kafka's streams MemberState, moved by
# CurrentAssignmentBuilder: any known state may move to any other).
MEMBER_TRANSITIONS = TransitionTable("streams group member", {
    STABLE: _STATES, UNREVOKED: _STATES, UNRELEASED: _STATES,
}, E.UNKNOWN_SERVER_ERROR)


@dataclass
class Tasks:
    """Kafka's TasksTupleWithEpochs: active tasks with the epoch they were assigned in."""

    active: dict[str, dict[int, int]] = field(default_factory=dict)
    standby: dict[str, set[int]] = field(default_factory=dict)
    warmup: dict[str, set[int]] = field(default_factory=dict)

    def is_empty(self) -> bool:
        return not (any(self.active.values()) or any(self.standby.values())
                    or any(self.warmup.values()))

    def copy(self) -> Tasks:
        return Tasks({s: dict(p) for s, p in self.active.items() if p},
                     {s: set(p) for s, p in self.standby.items() if p},
                     {s: set(p) for s, p in self.warmup.items() if p})

    def same_tasks(self, other: Tasks) -> bool:
        return (_keys(self.active) == _keys(other.active)
                and _clean(self.standby) == _clean(other.standby)
                and _clean(self.warmup) == _clean(other.warmup))

    def active_set(self) -> set[Task]:
        return {(s, p) for s, ps in self.active.items() for p in ps}

    def standby_set(self) -> set[Task]:
        return {(s, p) for s, ps in self.standby.items() for p in ps}

    def warmup_set(self) -> set[Task]:
        return {(s, p) for s, ps in self.warmup.items() for p in ps}

    def contains_any(self, other: Tasks) -> bool:
        return bool(self.active_set() & other.active_set()
                    or self.standby_set() & other.standby_set()
                    or self.warmup_set() & other.warmup_set())

    @classmethod
    def target(cls, active: set[Task], standby: AbstractSet[Task] = frozenset(),
               warmup: AbstractSet[Task] = frozenset()) -> Tasks:
        t = cls()
        for s, p in active:
            t.active.setdefault(s, {})[p] = 0
        for s, p in standby:
            t.standby.setdefault(s, set()).add(p)
        for s, p in warmup:
            t.warmup.setdefault(s, set()).add(p)
        return t


def _keys(a: dict[str, dict[int, int]]) -> dict[str, set[int]]:
    return {s: set(ps) for s, ps in a.items() if ps}


def _clean(a: dict[str, set[int]]) -> dict[str, set[int]]:
    return {s: set(ps) for s, ps in a.items() if ps}


def task_ids(a: Mapping[str, Collection[int]]) -> list[TaskIds]:
    """Tasks as the wire's TaskIds list, sorted."""
    return [{"subtopology_id": s, "partitions": sorted(ps)} for s, ps in sorted(a.items()) if ps]


def owned_from_wire(active: list[TaskIds] | None, standby: list[TaskIds] | None,
                    warmup: list[TaskIds] | None) -> Tasks | None:
    """The tasks a heartbeat reports owning; None when it did not say (all three null)."""
    if active is None or standby is None or warmup is None:
        return None
    t = Tasks()
    for ti in active:
        t.active.setdefault(ti["subtopology_id"], {}).update(dict.fromkeys(ti["partitions"], 0))
    for ti in standby:
        t.standby.setdefault(ti["subtopology_id"], set()).update(ti["partitions"])
    for ti in warmup:
        t.warmup.setdefault(ti["subtopology_id"], set()).update(ti["partitions"])
    return t


# ---- the sticky task assignor -----------------------------------------------------------
@dataclass
class AssignMember:
    member_id: str
    process_id: str
    previous: Tasks


def _ceil_div(n: int, d: int) -> int:
    return -(-n // d) if d else 0


class _Sticky:
    """The bookkeeping of Kafka's StickyTaskAssignor (LocalState and ProcessState)."""

    def __init__(self, members: list[AssignMember], n_active: int, n_total: int) -> None:
        self.procs: dict[str, list[str]] = {}
        for m in sorted(members, key=lambda m: m.member_id):
            self.procs.setdefault(m.process_id, []).append(m.member_id)
        self.process_of = {m.member_id: m.process_id for m in members}
        self.count = {m.member_id: 0 for m in members}
        self.active: dict[str, set[Task]] = {m.member_id: set() for m in members}
        self.standby: dict[str, set[Task]] = {m.member_id: set() for m in members}
        self.active_left, self.active_cap = n_active, len(members)
        self.active_quota = _ceil_div(n_active, len(members))
        self.total_left, self.total_cap = n_total, len(members)
        self.total_quota = _ceil_div(n_total, len(members))

    def load(self, pid: str) -> float:
        return sum(self.count[m] for m in self.procs[pid]) / len(self.procs[pid])

    def has_task(self, pid: str, t: Task) -> bool:
        return any(t in self.active[m] or t in self.standby[m] for m in self.procs[pid])

    def add(self, mid: str, t: Task, active: bool) -> None:
        (self.active if active else self.standby)[mid].add(t)
        self.count[mid] += 1
        n = self.count[mid]
        if active and n == self.active_quota:
            self.active_cap -= 1
            self.active_left -= n
            self.active_quota = _ceil_div(self.active_left, self.active_cap)
        if n == self.total_quota:
            self.total_cap -= 1
            self.total_left -= n
            self.total_quota = _ceil_div(self.total_left, self.total_cap)

    def least_loaded_prev(self, cands: list[str], standby_of: Task | None) -> str | None:
        """Kafka's findPrevMemberWithLeastLoad."""
        best, best_p, best_m = None, float("inf"), float("inf")
        for mid in cands:
            pid = self.process_of[mid]
            if standby_of is not None and self.has_task(pid, standby_of):
                continue
            pl, ml = self.load(pid), self.count[mid]
            if best is None or (pl < best_p and ml < best_m):
                best, best_p, best_m = mid, pl, ml
        return best

    def to_least_loaded(self, t: Task, active: bool) -> bool:
        for pid in sorted(self.procs, key=lambda p: (self.load(p), p)):
            if active or not self.has_task(pid, t):
                mid = min(self.procs[pid], key=lambda x: (self.count[x], x))
                self.add(mid, t, active)
                return True
        return False


def assign(members: list[AssignMember], tasks_per_subtopology: dict[str, int],
           num_standby: int, stateful: AbstractSet[str] = frozenset()) -> dict[str, Tasks]:
    """Kafka's StickyTaskAssignor: actives stay with their previous owner (then a previous
    standby) up to a balanced quota, the rest go to the least loaded process and its
    least loaded member; standbys (stateful subtopologies only) go to the previous active
    owner, a previous standby, or the least loaded process without the task."""
    if not members:
        return {}
    tasks = [(s, p) for s, n in sorted(tasks_per_subtopology.items()) for p in range(n)]
    stateful_tasks = [t for t in tasks if t[0] in stateful] if num_standby > 0 else []
    st = _Sticky(members, len(tasks), len(tasks) + len(stateful_tasks) * num_standby)
    valid = set(tasks)
    prev_active: dict[Task, str] = {}
    prev_standby: dict[Task, list[str]] = {}
    for m in sorted(members, key=lambda m: m.member_id):
        for t in m.previous.active_set() & valid:
            prev_active[t] = m.member_id
        for t in m.previous.standby_set() & valid:
            prev_standby.setdefault(t, []).append(m.member_id)
    todo = sorted(tasks, key=lambda t: (t[1], t[0]))
    for t in list(todo):
        mid = prev_active.get(t)
        if mid is not None and st.count[mid] < st.active_quota:
            st.add(mid, t, True)
            todo.remove(t)
    for t in list(todo):
        mid = st.least_loaded_prev(prev_standby.get(t, []), None)
        if mid is not None and st.count[mid] < st.active_quota:
            st.add(mid, t, True)
            todo.remove(t)
    for t in sorted(todo):
        st.to_least_loaded(t, True)
    leftovers: list[tuple[Task, int]] = []
    for t in sorted(stateful_tasks, key=lambda t: (t[1], t[0]), reverse=True):
        for i in range(num_standby):
            prev = prev_active.get(t)
            if prev is not None and not st.has_task(st.process_of[prev], t) \
                    and st.count[prev] < st.total_quota:
                st.add(prev, t, False)
                continue
            mid = st.least_loaded_prev(prev_standby.get(t, []), t)
            if mid is not None and st.count[mid] < st.total_quota:
                st.add(mid, t, False)
                continue
            leftovers.append((t, num_standby - i))
            break
    for t, remaining in sorted(leftovers, reverse=True):
        for _ in range(remaining):
            if not st.to_least_loaded(t, False):
                break  # not enough processes for the requested standby replicas
    return {mid: Tasks.target(st.active[mid], st.standby[mid]) for mid in st.active}


# ---- reconciliation (Kafka's streams CurrentAssignmentBuilder) -----------------------------
@dataclass
class Holders:
    """Who holds what across the group right now (assigned or pending revocation)."""

    active_process: dict[Task, str]  # task -> process id of its active holder
    standby_processes: dict[Task, set[str]]
    warmup_processes: dict[Task, set[str]]


@dataclass
class Step:
    state: str
    member_epoch: int
    assigned: Tasks
    pending_revocation: Tasks


def reconcile(state: str, member_epoch: int, process_id: str, assigned: Tasks,
              pending: Tasks, target_epoch: int, target: Tasks, holders: Holders,
              owned: Tasks | None) -> Step | None:
    """One step towards ``target``; None when nothing changes. Raises FENCED_MEMBER_EPOCH
    (as KafkaError, by the caller) via ``UnknownState`` for a member in an unknown state."""

    def not_released(revoking: Tasks) -> bool:
        return owned is None or owned.contains_any(revoking)

    if state == STABLE:
        if member_epoch == target_epoch:
            return None
        return _next(member_epoch, process_id, assigned, target_epoch, target, holders,
                     not_released)
    if state == UNREVOKED:
        if not_released(pending):
            return None
        return _next(member_epoch + 1, process_id, assigned, target_epoch, target, holders,
                     not_released)
    if state == UNRELEASED:
        return _next(member_epoch, process_id, assigned, target_epoch, target, holders,
                     not_released)
    raise UnknownState()


class UnknownState(Exception):
    """Kafka fences a member whose state is unknown (FENCED_MEMBER_EPOCH)."""


def _next(epoch: int, process_id: str, current: Tasks, target_epoch: int, target: Tasks,
          holders: Holders, not_released: Callable[[Tasks], bool]) -> Step:
    new = Tasks()
    revoking = Tasks()
    pending_assign = Tasks()
    unreleased = False
    mine_active = current.active_set()
    mine_standby = current.standby_set()
    # active tasks
    tgt_active = target.active_set()
    for (s, p), e in ((t, current.active[t[0]][t[1]]) for t in sorted(mine_active)):
        if (s, p) in tgt_active:
            new.active.setdefault(s, {})[p] = e
        else:
            revoking.active.setdefault(s, {})[p] = e
    for s, p in sorted(tgt_active - mine_active):
        held = (holders.active_process.get((s, p)) is not None
                or (process_id in holders.standby_processes.get((s, p), ())
                    and (s, p) not in mine_standby)
                or (process_id in holders.warmup_processes.get((s, p), ())
                    and (s, p) not in current.warmup_set()))
        if held:
            unreleased = True
        else:
            pending_assign.active.setdefault(s, {})[p] = target_epoch
    # standby tasks
    tgt_standby = target.standby_set()
    for s, p in sorted(mine_standby):
        if (s, p) in tgt_standby:
            new.standby.setdefault(s, set()).add(p)
        elif (s, p) not in tgt_active:  # a standby promoted to active is not revoked
            revoking.standby.setdefault(s, set()).add(p)
    for s, p in sorted(tgt_standby - mine_standby):
        if (s, p) in mine_active:  # an active task demoted to standby: granted at once
            new.standby.setdefault(s, set()).add(p)
            continue
        held = (holders.active_process.get((s, p)) == process_id
                or process_id in holders.standby_processes.get((s, p), ()))
        if held:
            unreleased = True
        else:
            pending_assign.standby.setdefault(s, set()).add(p)
    # warm-up tasks
    tgt_warmup = target.warmup_set()
    for s, p in sorted(current.warmup_set()):
        if (s, p) in tgt_warmup:
            new.warmup.setdefault(s, set()).add(p)
        elif (s, p) not in tgt_active:
            revoking.warmup.setdefault(s, set()).add(p)
    for s, p in sorted(tgt_warmup - current.warmup_set()):
        if holders.active_process.get((s, p)) == process_id \
                or process_id in holders.warmup_processes.get((s, p), ()):
            unreleased = True
        else:
            pending_assign.warmup.setdefault(s, set()).add(p)
    to_revoke = not revoking.is_empty() and not_released(revoking)
    # A standby/warm-up about to become active is kept until the active task is granted.
    for s, p in sorted((mine_standby | current.warmup_set()) & tgt_active):
        granted = not to_revoke and p in pending_assign.active.get(s, {})
        if not granted:
            kind = new.standby if (s, p) in mine_standby else new.warmup
            kind.setdefault(s, set()).add(p)
    if to_revoke:
        return Step(UNREVOKED, epoch, new, revoking)
    for s, ps in pending_assign.active.items():
        new.active.setdefault(s, {}).update(ps)
    for s, parts in pending_assign.standby.items():
        new.standby.setdefault(s, set()).update(parts)
    for s, parts in pending_assign.warmup.items():
        new.warmup.setdefault(s, set()).update(parts)
    return Step(UNRELEASED if unreleased else STABLE, target_epoch, new.copy(), Tasks())
