"""ISR bookkeeping, pure-Python twin of the compiled functions in ``_core.pyx``
(written in _core_isr.pxi).

The leader's view of each follower and the rules Kafka applies to it
(``kafka.cluster.Replica`` and ``Partition``): a fetch at or past the leader's log
end offset (LEO) means the follower is caught up now; a fetch at or past the LEO the
leader had at the follower's previous fetch means it was caught up then. The high
watermark is the minimum LEO over the ISR, leader included. A follower joins the
ISR once its LEO reaches the high watermark and the start of the leader's current
epoch, and is out of sync after ``replica.lag.time.max.ms`` without catching up.

Import these from ``emulator.log``, which picks the compiled or the pure twin.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

_FIELDS = ("log_end_offset", "last_caught_up_ms", "last_fetch_leader_leo", "last_fetch_ms")


class FollowerState:
    """The leader's view of one follower (Kafka's ``Replica``)."""

    __slots__ = _FIELDS
    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __init__(
        self,
        log_end_offset: int = 0,
        last_caught_up_ms: int = 0,
        last_fetch_leader_leo: int = 0,
        last_fetch_ms: int = 0,
    ) -> None:
        self.log_end_offset = log_end_offset
        self.last_caught_up_ms = last_caught_up_ms
        self.last_fetch_leader_leo = last_fetch_leader_leo
        self.last_fetch_ms = last_fetch_ms

    def _values(self) -> tuple[int, int, int, int]:
        return (self.log_end_offset, self.last_caught_up_ms, self.last_fetch_leader_leo,
                self.last_fetch_ms)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FollowerState):
            return NotImplemented
        return self._values() == other._values()

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v}" for k, v in zip(_FIELDS, self._values(), strict=True))
        return f"FollowerState({inner})"


def update_fetch_state(st: FollowerState, fetch_offset: int, leader_leo: int,
                       now_ms: int) -> None:
    """Kafka's Replica.updateFetchState: advance lastCaughtUpTime by its rules."""
    if fetch_offset >= leader_leo:
        if now_ms > st.last_caught_up_ms:
            st.last_caught_up_ms = now_ms
    elif fetch_offset >= st.last_fetch_leader_leo:
        if st.last_fetch_ms > st.last_caught_up_ms:
            st.last_caught_up_ms = st.last_fetch_ms
    st.log_end_offset = fetch_offset
    st.last_fetch_leader_leo = leader_leo
    st.last_fetch_ms = now_ms


def isr_high_watermark(leader: int, leader_leo: int, isr: Sequence[int],
                       followers: Mapping[int, FollowerState]) -> int:
    """The minimum LEO over the ISR, leader included; a follower without state counts 0."""
    hw = leader_leo
    for b in isr:
        if b == leader:
            continue
        st = followers.get(b)
        leo = st.log_end_offset if st is not None else 0
        if leo < hw:
            hw = leo
    return hw


def can_join_isr(broker_id: int, st: FollowerState | None, isr: Sequence[int],
                 replicas: Sequence[int], high_watermark: int, epoch_start: int) -> bool:
    """A replica outside the ISR joins once its LEO >= the HW and the epoch's start."""
    if st is None or broker_id in isr or broker_id not in replicas:
        return False
    return st.log_end_offset >= high_watermark and st.log_end_offset >= epoch_start


def out_of_sync_replicas(leader: int, isr: Sequence[int],
                         followers: Mapping[int, FollowerState], now_ms: int,
                         lag_max_ms: int) -> list[int]:
    """Followers in the ISR that have not caught up within ``lag_max_ms``."""
    out = []
    for b in isr:
        if b == leader:
            continue
        st = followers.get(b)
        if st is None or now_ms - st.last_caught_up_ms > lag_max_ms:
            out.append(b)
    return out


__all__ = [
    "FollowerState", "can_join_isr", "isr_high_watermark", "out_of_sync_replicas",
    "update_fetch_state",
]
