# Part of _core.pyx (included there, one module): the ISR bookkeeping, isr.py's twin.


# ---- ISR bookkeeping -----------------------------------------------------------------
cdef class FollowerState:
    """The leader's view of one follower (Kafka's ``Replica``)."""

    __hash__ = None

    def __init__(self, int64_t log_end_offset=0, int64_t last_caught_up_ms=0,
                 int64_t last_fetch_leader_leo=0, int64_t last_fetch_ms=0):
        self.log_end_offset = log_end_offset
        self.last_caught_up_ms = last_caught_up_ms
        self.last_fetch_leader_leo = last_fetch_leader_leo
        self.last_fetch_ms = last_fetch_ms

    def __eq__(self, other):
        cdef FollowerState o
        if not isinstance(other, FollowerState):
            return NotImplemented
        o = <FollowerState>other
        return (self.log_end_offset == o.log_end_offset
                and self.last_caught_up_ms == o.last_caught_up_ms
                and self.last_fetch_leader_leo == o.last_fetch_leader_leo
                and self.last_fetch_ms == o.last_fetch_ms)

    def __repr__(self):
        return (f"FollowerState(log_end_offset={self.log_end_offset}, "
                f"last_caught_up_ms={self.last_caught_up_ms}, "
                f"last_fetch_leader_leo={self.last_fetch_leader_leo}, "
                f"last_fetch_ms={self.last_fetch_ms})")


def update_fetch_state(FollowerState st not None, int64_t fetch_offset, int64_t leader_leo,
                       int64_t now_ms):
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


cdef inline bint _has(object seq, long x) except -1:
    """``x in seq`` with a C loop over a list of broker ids."""
    cdef Py_ssize_t k
    if type(seq) is list:
        for k in range(PyList_GET_SIZE(seq)):
            if PyLong_AsLong(<object>PyList_GET_ITEM(seq, k)) == x:
                return True
        return False
    return x in seq


def isr_high_watermark(long leader, int64_t leader_leo, isr, dict followers):
    """The minimum LEO over the ISR, leader included; a follower without state counts 0."""
    cdef int64_t hw = leader_leo, leo
    cdef object b
    cdef PyObject* st
    for b in isr:
        if PyLong_AsLong(b) == leader:
            continue
        st = PyDict_GetItem(followers, b)
        leo = (<FollowerState>st).log_end_offset if st != NULL else 0
        if leo < hw:
            hw = leo
    return hw


def can_join_isr(long broker_id, FollowerState st, isr, replicas, int64_t high_watermark,
                 int64_t epoch_start):
    """A replica outside the ISR joins once its LEO >= the HW and the epoch's start."""
    if st is None or _has(isr, broker_id) or not _has(replicas, broker_id):
        return False
    return st.log_end_offset >= high_watermark and st.log_end_offset >= epoch_start


def out_of_sync_replicas(long leader, isr, dict followers, int64_t now_ms,
                         int64_t lag_max_ms):
    """Followers in the ISR that have not caught up within ``lag_max_ms``."""
    cdef list out = []
    cdef object b
    cdef PyObject* st
    for b in isr:
        if PyLong_AsLong(b) == leader:
            continue
        st = PyDict_GetItem(followers, b)
        if st == NULL or now_ms - (<FollowerState>st).last_caught_up_ms > lag_max_ms:
            out.append(b)
    return out
