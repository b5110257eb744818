"""Coordinator loading and the transaction prepare window under ``--fidelity kafka``,
and their absence under ``fast`` (the default), on a manual clock.

Kafka 4.4 (conformance/coordinator_timing.py): a broker that became the leader of a
coordinator partition answers NOT_COORDINATOR until it learns of it, then
COORDINATOR_LOAD_IN_PROGRESS while it loads; after EndTxn the transaction shows
PrepareCommit/PrepareAbort until its markers are written, the last stable offset waits
for them, and the same transactional id gets CONCURRENT_TRANSACTIONS meanwhile.
"""

from __future__ import annotations

import pytest
from cluster_sim import new_cluster

from emulator.cluster.clock import ManualClock
from emulator.cluster.leadership import change_leader
from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.runtime.placement import (
    CREATE_MS,
    FIRST_LEARN_MS,
    FIRST_LOAD_MS,
    LEARN_MS,
    LOAD_MS,
)
from emulator.coordinators.transactions.coordinator import TXN_TOPIC, TransactionCoordinator
from emulator.coordinators.transactions.markers import MARKER_DELAY_MS
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import build_batch

TID = "txn-fid"
GROUP = "group-fid"


class Harness:
    def __init__(self, mode: str) -> None:
        self.clock = ManualClock()
        self.state = new_cluster(3, self.clock, fidelity=mode,
                                 **{"transaction.state.log.num.partitions": "4",
                                    "offsets.topic.num.partitions": "4"}).state
        self.state.create_topic("t", 1, 3)
        self.gc = GroupCoordinator(self.state)
        self.tc = TransactionCoordinator(self.state, self.gc)
        # both coordinator topics, past their first election
        self.gc.ensure_offsets_topic()
        self.tc.ensure_txn_topic()
        self.clock.advance(CREATE_MS + FIRST_LEARN_MS + FIRST_LOAD_MS)

    def move(self, topic: str, key: str, coordinator: object) -> int:
        """Move ``key``'s coordinator partition to another in-sync replica."""
        p = self.state.topics[topic].partitions[coordinator.topic.partition_for(key)]
        new = next(r for r in p.isr if r != p.leader)
        assert change_leader(self.state, p, new)
        return new

    def transaction(self, records: int = 1) -> tuple[int, int, int]:
        """An Ongoing transaction with records in t-0: (pid, epoch, last offset)."""
        broker = self.tc.coordinator_for(TID)
        err, pid, epoch = self.tc.init_producer_id(TID, 60_000, broker_id=broker)
        assert err == E.NONE
        assert self.tc.add_partitions(TID, pid, epoch, [("t", 0)]) == {("t", 0): E.NONE}
        p = self.state.get_partition("t", 0)
        batch = build_batch([(None, b"x")] * records, producer_id=pid, producer_epoch=epoch,
                            base_sequence=0, transactional=True)
        r = self.state.append(p.leader, "t", 0, batch, -1)
        assert r.error == E.NONE
        self.state.tick()
        return pid, epoch, r.base_offset + records - 1

    def lso(self) -> int:
        return int(self.state.get_partition("t", 0).last_stable_offset())


# ---- coordinator loading ---------------------------------------------------------------
def test_group_coordinator_loads_after_a_move_under_kafka_timing() -> None:
    h = Harness("kafka")
    h.gc.coordinator_for(GROUP)
    new = h.move("__consumer_offsets", GROUP, h.gc)
    assert h.gc.coordinator_error(new, GROUP) == E.NOT_COORDINATOR  # not learnt yet
    h.clock.advance(LEARN_MS)
    assert h.gc.coordinator_error(new, GROUP) == E.COORDINATOR_LOAD_IN_PROGRESS
    h.clock.advance(LOAD_MS - 1)
    assert h.gc.coordinator_error(new, GROUP) == E.COORDINATOR_LOAD_IN_PROGRESS
    h.clock.advance(1)
    assert h.gc.coordinator_error(new, GROUP) == E.NONE


def test_group_coordinator_serves_at_once_after_a_move_under_fast() -> None:
    h = Harness("fast")
    h.gc.coordinator_for(GROUP)
    new = h.move("__consumer_offsets", GROUP, h.gc)
    assert h.gc.coordinator_error(new, GROUP) == E.NONE


@pytest.mark.parametrize("mode", ["kafka", "fast"])
def test_transaction_coordinator_loads_after_a_move(mode: str) -> None:
    h = Harness(mode)
    pid, epoch, _ = h.transaction()
    new = h.move(TXN_TOPIC, TID, h.tc)
    h.clock.advance(LEARN_MS)
    add = h.tc.add_partitions(TID, pid, epoch, [("t", 0)], broker_id=new)[("t", 0)]
    desc = h.tc.describe(TID, broker_id=new)["error_code"]
    if mode == "kafka":
        init = h.tc.init_producer_id(TID, 60_000, broker_id=new)[0]
        end = h.tc.end_txn(TID, pid, epoch, True, broker_id=new)[0]
        assert (init, add, end, desc) == (E.COORDINATOR_LOAD_IN_PROGRESS,) * 4
        h.clock.advance(LOAD_MS)
    else:
        assert (add, desc) == (E.NONE, E.NONE)
    assert h.tc.end_txn(TID, pid, epoch, True, broker_id=new)[0] == E.NONE


def test_list_transactions_while_loading() -> None:
    """Kafka: ListTransactions on a broker loading any __transaction_state partition
    answers COORDINATOR_LOAD_IN_PROGRESS; not before it learns of the election, not
    after the load."""
    h = Harness("kafka")
    h.transaction()
    new = h.move(TXN_TOPIC, TID, h.tc)
    assert h.tc.list_transactions(broker_id=new)[0] == E.NONE  # not learnt yet
    h.clock.advance(LEARN_MS)
    assert h.tc.list_transactions(broker_id=new) == (E.COORDINATOR_LOAD_IN_PROGRESS, [], [])
    h.clock.advance(LOAD_MS)
    err, _, listed = h.tc.list_transactions(broker_id=new)
    assert err == E.NONE and [t["transactional_id"] for t in listed] == [TID]


def test_share_state_coordinator_loads_after_a_move() -> None:
    h = Harness("kafka")
    topic = h.gc.topic  # the share group's own coordinator is the group coordinator
    h.gc.coordinator_for(GROUP)
    new = h.move("__consumer_offsets", GROUP, h.gc)
    h.clock.advance(LEARN_MS)
    assert topic.error(new, GROUP) == E.COORDINATOR_LOAD_IN_PROGRESS
    assert topic.loading_until(topic.partition_for(GROUP)) == h.state.now() + LOAD_MS


def test_load_time_is_an_attribute() -> None:
    """Adversarial mode (and tests) make loads longer through ``load_ms``/``learn_ms``."""
    h = Harness("kafka")
    h.gc.coordinator_for(GROUP)
    h.gc.topic.learn_ms, h.gc.topic.load_ms = 0, 5000
    new = h.move("__consumer_offsets", GROUP, h.gc)
    h.clock.advance(4999)
    assert h.gc.coordinator_error(new, GROUP) == E.COORDINATOR_LOAD_IN_PROGRESS
    h.clock.advance(1)
    assert h.gc.coordinator_error(new, GROUP) == E.NONE


# ---- the prepare window --------------------------------------------------------------------
def test_end_txn_leaves_the_transaction_preparing_under_kafka_timing() -> None:
    h = Harness("kafka")
    pid, epoch, last = h.transaction(3)
    before = h.lso()
    assert before <= last
    assert h.tc.end_txn(TID, pid, epoch, True)[0] == E.NONE
    assert h.tc.describe(TID)["transaction_state"] == "PrepareCommit"
    # the same transactional id meanwhile, as Kafka answers it
    assert h.tc.end_txn(TID, pid, epoch, True)[0] == E.CONCURRENT_TRANSACTIONS
    assert h.tc.end_txn(TID, pid, epoch, False)[0] == E.INVALID_TXN_STATE
    assert h.tc.add_partitions(TID, pid, epoch, [("t", 0)]) == \
        {("t", 0): E.CONCURRENT_TRANSACTIONS}
    assert h.tc.init_producer_id(TID, 60_000)[0] == E.CONCURRENT_TRANSACTIONS
    h.clock.advance(MARKER_DELAY_MS - 1)
    h.state.tick()
    assert h.tc.describe(TID)["transaction_state"] == "PrepareCommit"
    assert h.lso() == before  # read_committed sees nothing yet
    assert h.tc.next_deadline() == h.state.now() + 1  # the server's wake-up
    h.clock.advance(1)
    h.state.tick()
    assert h.tc.describe(TID)["transaction_state"] == "CompleteCommit"
    h.state.tick()
    assert h.lso() == last + 2  # past the records and the marker
    assert h.tc.init_producer_id(TID, 60_000)[0] == E.NONE


def test_end_txn_completes_at_once_under_fast() -> None:
    h = Harness("fast")
    pid, epoch, last = h.transaction(3)
    assert h.tc.end_txn(TID, pid, epoch, True)[0] == E.NONE
    assert h.tc.describe(TID)["transaction_state"] == "CompleteCommit"
    h.state.tick()
    assert h.lso() == last + 2


def test_abort_and_fencing_wait_for_their_markers_too() -> None:
    h = Harness("kafka")
    pid, epoch, _ = h.transaction()
    # a new producer fences the ongoing transaction: it is aborted with markers later
    assert h.tc.init_producer_id(TID, 60_000)[0] == E.CONCURRENT_TRANSACTIONS
    assert h.tc.describe(TID)["transaction_state"] == "PrepareAbort"
    assert h.tc.init_producer_id(TID, 60_000)[0] == E.CONCURRENT_TRANSACTIONS
    h.clock.advance(MARKER_DELAY_MS)
    h.state.tick()
    assert h.tc.describe(TID)["transaction_state"] == "CompleteAbort"
    assert h.tc.init_producer_id(TID, 60_000)[0] == E.NONE


def test_v2_retry_during_the_prepare_window() -> None:
    """EndTxn v5 bumps the epoch when it prepares: a retry (the old epoch) gets
    CONCURRENT_TRANSACTIONS, the other outcome INVALID_TXN_STATE, the new epoch
    PRODUCER_FENCED (Kafka's TransactionCoordinator.endTransaction, TV2)."""
    h = Harness("kafka")
    pid, epoch, _ = h.transaction()
    err, _, new_epoch = h.tc.end_txn(TID, pid, epoch, True, tv2=True)
    assert (err, new_epoch) == (E.NONE, epoch + 1)
    assert h.tc.end_txn(TID, pid, epoch, True, tv2=True)[0] == E.CONCURRENT_TRANSACTIONS
    assert h.tc.end_txn(TID, pid, epoch, False, tv2=True)[0] == E.INVALID_TXN_STATE
    assert h.tc.end_txn(TID, pid, new_epoch, True, tv2=True)[0] == E.PRODUCER_FENCED
    h.clock.advance(MARKER_DELAY_MS)
    h.state.tick()
    assert h.tc.end_txn(TID, pid, epoch, True, tv2=True)[:1] == (E.NONE,)


def test_marker_delay_is_an_attribute() -> None:
    """Adversarial mode makes markers slow through ``marker_delay_ms``."""
    h = Harness("kafka")
    h.tc.marker_delay_ms = 2000
    pid, epoch, _ = h.transaction()
    h.tc.end_txn(TID, pid, epoch, True)
    h.clock.advance(1999)
    h.state.tick()
    assert h.tc.describe(TID)["transaction_state"] == "PrepareCommit"
    h.clock.advance(1)
    h.state.tick()
    assert h.tc.describe(TID)["transaction_state"] == "CompleteCommit"


# ---- over the wire -------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["kafka", "fast"])
def test_loading_coordinator_over_the_wire(mode: str) -> None:
    """A served cluster: after a move, under Kafka's timing, JoinGroup and OffsetFetch get
    COORDINATOR_LOAD_IN_PROGRESS from the new coordinator, classic Heartbeat NONE (Kafka:
    'the group is still loading, so blindly respond'); under fast all are served."""
    from emulator.blocking_client import BlockingConnection
    from emulator.runtime import Cluster

    with Cluster(brokers=3, port=0, fidelity=mode,
                 config={"group.initial.rebalance.delay.ms": "0"}) as c:
        gc = c.server.services.groups
        gc.topic.learn_ms, gc.topic.load_ms = 0, 60_000  # a long load, so no race
        gc.topic.create_ms = gc.topic.first_learn_ms = gc.topic.first_load_ms = 0

        def conn(node: int) -> BlockingConnection:
            return BlockingConnection.connect("127.0.0.1", c.state.brokers[node].port)

        old = c.call(lambda: gc.coordinator_for(GROUP))
        with conn(old) as k:
            join = k.call(11, 3, {"group_id": GROUP, "session_timeout_ms": 30000,
                                  "rebalance_timeout_ms": 30000, "member_id": "",
                                  "protocol_type": "consumer",
                                  "protocols": [{"name": "range", "metadata": b""}]})
        assert join["error_code"] == E.NONE
        member, generation = join["member_id"], join["generation_id"]
        p = c.state.topics["__consumer_offsets"].partitions[gc.topic.partition_for(GROUP)]
        new = next(r for r in p.isr if r != p.leader)
        c.call(lambda: change_leader(c.state, p, new))
        with conn(new) as k:
            hb = k.call(12, 2, {"group_id": GROUP, "generation_id": generation,
                                "member_id": member})
            fetch = k.call(9, 9, {"groups": [{"group_id": GROUP, "topics": None}]})
            listed = k.call(16, 4, {"states_filter": []})
            rejoin = k.call(11, 3, {"group_id": GROUP, "session_timeout_ms": 30000,
                                    "rebalance_timeout_ms": 30000, "member_id": member,
                                    "protocol_type": "consumer",
                                    "protocols": [{"name": "range", "metadata": b""}]})
        codes = (hb["error_code"], fetch["groups"][0]["error_code"], rejoin["error_code"],
                 listed["error_code"])
        if mode == "kafka":
            assert codes == (E.NONE, E.COORDINATOR_LOAD_IN_PROGRESS,
                             E.COORDINATOR_LOAD_IN_PROGRESS, E.COORDINATOR_LOAD_IN_PROGRESS)
        else:
            assert codes == (E.NONE, E.NONE, E.NONE, E.NONE)


def test_first_election_under_kafka_timing() -> None:
    """FindCoordinator creating the topic answers COORDINATOR_NOT_AVAILABLE for a while,
    then the first leader answers NOT_COORDINATOR, then loads, as on Kafka 4.4."""
    clock = ManualClock()
    state = new_cluster(3, clock, fidelity="kafka", **{"offsets.topic.num.partitions": "4"}).state
    gc = GroupCoordinator(state)
    with pytest.raises(KafkaError) as e:
        gc.coordinator_for(GROUP)
    assert e.value.code == E.COORDINATOR_NOT_AVAILABLE
    clock.advance(CREATE_MS)
    node = gc.coordinator_for(GROUP)
    assert gc.coordinator_error(node, GROUP) == E.NOT_COORDINATOR
    clock.advance(FIRST_LEARN_MS)
    assert gc.coordinator_error(node, GROUP) == E.COORDINATOR_LOAD_IN_PROGRESS
    clock.advance(FIRST_LOAD_MS)
    assert gc.coordinator_error(node, GROUP) == E.NONE


def test_first_election_under_fast() -> None:
    state = new_cluster(3, **{"offsets.topic.num.partitions": "4"}).state
    gc = GroupCoordinator(state)
    assert gc.coordinator_error(gc.coordinator_for(GROUP), GROUP) == E.NONE


@pytest.mark.parametrize("delay_ms, code", [(50, E.NONE), (1000, E.CONCURRENT_TRANSACTIONS)])
def test_produce_adding_its_partition_waits_for_the_markers(delay_ms: int, code: int) -> None:
    """Transaction version 2: the next transaction's first Produce (v12) during the
    prepare window waits for the markers, as Kafka's leader retries the coordinator
    (answered NONE 36-89 ms later on Kafka 4.4), up to 100 ms
    (add.partitions.to.txn.retry.backoff.max.ms); then CONCURRENT_TRANSACTIONS."""
    import time

    from emulator.blocking_client import BlockingConnection
    from emulator.runtime import Cluster

    with Cluster(brokers=3, port=0, fidelity="kafka") as c:
        tc = c.server.services.transactions
        tc.marker_delay_ms = delay_ms
        c.create_topic("t", 1, 3)
        for topic in (tc.topic, c.server.services.groups.topic):
            topic.create_ms = topic.first_learn_ms = topic.first_load_ms = 0
        node = c.call(lambda: tc.coordinator_for(TID))
        leader = c.state.get_partition("t", 0).leader
        with BlockingConnection.connect("127.0.0.1", c.state.brokers[node].port) as k, \
                BlockingConnection.connect("127.0.0.1", c.state.brokers[leader].port) as p:
            r = k.call(22, 5, {"transactional_id": TID, "transaction_timeout_ms": 60000})
            pid, epoch = r["producer_id"], r["producer_epoch"]

            def produce(e: int) -> tuple[int, float]:
                batch = build_batch([(None, b"x")], producer_id=pid, producer_epoch=e,
                                    base_sequence=0, transactional=True)
                t0 = time.monotonic()
                out = p.call(0, 12, {"transactional_id": TID, "acks": -1, "timeout_ms": 5000,
                                     "topic_data": [{"name": "t", "partition_data": [
                                         {"index": 0, "records": batch}]}]})
                return (out["responses"][0]["partition_responses"][0]["error_code"],
                        (time.monotonic() - t0) * 1000)

            assert produce(epoch)[0] == E.NONE  # begins the transaction (implicit add)
            end = k.call(26, 5, {"transactional_id": TID, "producer_id": pid,
                                 "producer_epoch": epoch, "committed": True})
            assert end["error_code"] == E.NONE
            err, took = produce(end["producer_epoch"])
            assert err == code
            assert took >= min(delay_ms, 100) * 0.5
