"""Keys in the order they come due: what a coordinator's ``tick`` asks instead of scanning.

Cost follows what changed (docs/architecture.md): a tick must cost what is
due, not the number of groups or transactions. ``Deadlines`` is a heap of (due, seq,
key) with lazy invalidation: ``set`` records the key's one live due time and pushes an
entry; an entry whose time is no longer the key's live one is stale and dropped when
it surfaces. ``pop_due(now)`` hands back only the keys whose live time has come, each
once; the caller visits them and ``set``s their next time. The heap is rebuilt when
stale entries outnumber live ones (heartbeats push one each), so memory stays bounded.

``TouchedTable`` is the other half: a coordinator's table of groups that notes which
keys operations looked up, so that ``tick`` reschedules exactly those.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from typing import TypeVar, overload


class Deadlines:
    """Keys by the time each is next due."""

    __slots__ = ("_heap", "_due", "_seq")

    def __init__(self) -> None:
        self._heap: list[tuple[int, int, Hashable]] = []
        self._due: dict[Hashable, int] = {}  # key -> its live due time
        self._seq = 0  # ties break in push order (keys need not be comparable)

    def set(self, key: Hashable, due: int | None) -> None:
        """``key`` is next due at ``due`` (None: nothing to do until it is set again)."""
        if due is None:
            self._due.pop(key, None)
            return
        if self._due.get(key) == due:
            return  # its entry is in the heap already
        self._due[key] = due
        self._seq += 1
        heapq.heappush(self._heap, (due, self._seq, key))
        if len(self._heap) > 4 * len(self._due) + 64:
            self._compact()

    def due_at(self, key: Hashable) -> int | None:
        return self._due.get(key)

    def pop_due(self, now: int) -> list[Hashable]:
        """The keys due at ``now`` (earliest first), unscheduled: ``set`` them again."""
        heap, live, out = self._heap, self._due, []
        while heap and heap[0][0] <= now:
            due, _, key = heapq.heappop(heap)
            if live.get(key) == due:
                del live[key]
                out.append(key)
        return out

    def next_due(self) -> int | None:
        """The earliest live due time, or None."""
        heap, live = self._heap, self._due
        while heap and live.get(heap[0][2]) != heap[0][0]:
            heapq.heappop(heap)
        return heap[0][0] if heap else None

    def clear(self) -> None:
        self._heap.clear()
        self._due.clear()

    def __len__(self) -> int:
        return len(self._due)

    def _compact(self) -> None:
        self._heap = [(due, i, key) for i, (key, due) in enumerate(self._due.items())]
        heapq.heapify(self._heap)
        self._seq = len(self._heap)


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
D = TypeVar("D")


class TouchedTable(dict[K, V]):
    """A coordinator's groups by id, noting which ids operations reached (``touched``).

    Why: every operation that can move a group's timers (a join, a heartbeat, a leave, a
    commit, a conversion) first looks the group up here. Noting the lookups (``get``,
    ``[]``, assignment, deletion, ``pop``) tells ``tick`` which groups need their next due
    time recomputed, with no call to forget in each of the many operations. ``peek``,
    ``in`` and iteration note nothing (the coordinator's own bookkeeping, listings). A
    lookup that changed nothing costs one needless recomputation of that group's time.
    Generic in the key (a group id, a share-partition's key) and the value (the
    coordinator's group kinds), so a lookup is typed as what the table holds.
    """

    __slots__ = ("touched",)

    def __init__(self) -> None:
        super().__init__()
        self.touched: set[K] = set()

    def _note(self, key: K) -> None:
        self.touched.add(key)

    @overload
    def get(self, key: K, default: None = None, /) -> V | None: ...

    @overload
    def get(self, key: K, default: V | D, /) -> V | D: ...

    def get(self, key: K, default: V | D | None = None, /) -> V | D | None:
        self._note(key)
        return dict.get(self, key, default)

    def peek(self, key: K) -> V | None:
        return dict.get(self, key)

    def __getitem__(self, key: K) -> V:
        self._note(key)
        return dict.__getitem__(self, key)

    def __setitem__(self, key: K, value: V) -> None:
        self._note(key)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: K) -> None:
        self._note(key)
        dict.__delitem__(self, key)

    @overload
    def pop(self, key: K, /) -> V: ...

    @overload
    def pop(self, key: K, default: V | D, /) -> V | D: ...

    def pop(self, key: K, /, *default: V | D) -> V | D:
        self._note(key)
        return dict.pop(self, key, *default)
