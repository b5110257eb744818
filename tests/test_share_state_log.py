"""Share-partition state in ``__share_group_state`` (Kafka's share coordinator records),
its reload, initialization by the group coordinator, and read_committed archiving
aborted records - pure state on a manual clock."""

from __future__ import annotations

from cluster_sim import new_cluster

from emulator.coordinators.groups.coordinator import GroupCoordinator
from emulator.coordinators.share import group_offsets
from emulator.coordinators.share.coordinator import SharePartitionManager
from emulator.coordinators.share.partition import AcknowledgeType as A
from emulator.coordinators.share.partition import RecordState as S
from emulator.coordinators.share.state import SHARE_STATE_TOPIC
from emulator.coordinators.share.state_log import ShareStateLog, replay
from wire.errors import ErrorCode as E
from wire.errors import KafkaError
from wire.records import build_batch, control_batch, decode_records, read_header
from wire.share_state_records import SNAPSHOT, UPDATE, decode_key, decode_value

G = "sg"


class Harness:
    def __init__(self, partitions: int = 2, **config: str) -> None:
        cfg = {"offsets.topic.num.partitions": "3",
               "share.coordinator.state.topic.num.partitions": "3"}
        cfg.update(config)
        self.state = new_cluster(3, **cfg).state
        self.gc = GroupCoordinator(self.state)
        self.sc = SharePartitionManager(self.state, self.gc)
        self.log = ShareStateLog(self.state, self.sc)
        self.topic = self.state.create_topic("t", partitions, 1)
        self.tid = self.topic.id

    def join(self, member: str = "m", epoch: int = 0, topics=("t",)) -> dict:
        r = self.sc.share_group_heartbeat(G, member, epoch, rack_id=None,
                                          subscribed_topic_names=list(topics))
        assert r["error_code"] == E.NONE, r
        return r

    def produce(self, n: int, index: int = 0) -> None:
        p = self.topic.partitions[index]
        for _ in range(n):
            assert self.state.append(p.leader, "t", index, build_batch([(None, b"v")]),
                                     -1).error == E.NONE
        self.state.tick()

    def acquire(self, member: str = "m", index: int = 0, max_records: int = 500):
        p = self.topic.partitions[index]
        return self.sc.acquire(p.leader, G, member, self.tid, index, max_records, 1 << 20)[1]

    def ack(self, first: int, last: int, *types: int, member: str = "m", index: int = 0):
        p = self.topic.partitions[index]
        self.sc.acknowledge(p.leader, G, member, self.tid, index,
                            [(first, last, list(types))], False)

    def records(self) -> list[tuple[int, dict, dict | None]]:
        """(record type, key, value) of every __share_group_state record, in order."""
        out = []
        for p in self.state.topics[SHARE_STATE_TOPIC].partitions:
            for data, *_ in p.leader_log.batches_from(-1, 1 << 62):
                if read_header(data).is_control:
                    continue
                for r in decode_records(data):
                    kind, key = decode_key(r.key)
                    value = decode_value(kind, r.value) if r.value is not None else None
                    out.append((kind, key, value))
        return out

    def reloaded(self) -> SharePartitionManager:
        """A new share coordinator rebuilt from the records (a restart with --data-dir)."""
        sc = SharePartitionManager(self.state, self.gc)
        n, skipped = replay(self.state, sc, ShareStateLog(self.state, sc))
        assert skipped == 0 and n == len(self.sc.partitions)
        return sc


def test_heartbeat_initializes_every_subscribed_partition_at_the_group_epoch() -> None:
    h = Harness()
    r = h.join()
    for i in range(2):
        sp = h.sc.partitions[(G, h.tid, i)]
        assert sp.state_epoch == r["member_epoch"] and sp.start_offset == -1
    snaps = [(k, v) for kind, k, v in h.records() if kind == SNAPSHOT]
    assert sorted(k["partition"] for k, _ in snaps) == [0, 1]
    assert all(v["start_offset"] == -1 and v["snapshot_epoch"] == 0 for _, v in snaps)
    # a partition added later to a topic the group knows starts at 0 (nothing is missed)
    h.state.create_partitions("t", 3, None, False)
    h.produce(2, index=2)
    h.join(epoch=h.sc.groups[G].members["m"].member_epoch)
    assert h.sc.partitions[(G, h.tid, 2)].start_offset == 0


def test_fetch_of_a_partition_without_state_is_unknown_topic_or_partition() -> None:
    h = Harness()
    h.produce(1)
    try:
        h.acquire()
    except KafkaError as e:
        assert e.code == E.UNKNOWN_TOPIC_OR_PARTITION
    else:
        raise AssertionError("acquired without share coordinator state")


def test_changes_become_update_records_and_snapshots_every_n_updates() -> None:
    h = Harness(**{"share.coordinator.snapshot.update.records.per.snapshot": "3"})
    h.join()
    h.produce(6)
    h.acquire(max_records=6)  # latest: resolved to 6 at first load -> nothing to take
    h.produce(4)
    got = h.acquire()
    assert got.ranges == [(6, 9, 1)]
    h.ack(6, 7, A.ACCEPT)
    h.ack(8, 8, A.REJECT)
    ours = [(kind, v) for kind, k, v in h.records() if k["partition"] == 0]
    kinds = [kind for kind, _ in ours]
    assert kinds[0] == SNAPSHOT and UPDATE in kinds
    # no more than 2 updates follow a snapshot (the 3rd write is a new snapshot)
    run = 0
    for kind in kinds:
        run = 0 if kind == SNAPSHOT else run + 1
        assert run <= 2
    last_snapshot = max(v["snapshot_epoch"] for kind, v in ours if kind == SNAPSHOT)
    assert last_snapshot >= 1
    # an update carries only the batches that changed
    last = ours[-1]
    if last[0] == UPDATE:
        assert all(b["first_offset"] >= 8 for b in last[1]["state_batches"])


def test_state_survives_a_reload_from_the_records() -> None:
    h = Harness()
    h.sc.set_group_config(G, "share.auto.offset.reset", "earliest")
    h.join()
    h.produce(10)
    h.acquire(max_records=10)
    h.ack(0, 2, A.ACCEPT)
    h.ack(3, 3, A.RELEASE)
    h.ack(4, 4, A.REJECT)
    h.acquire("m")  # takes 3 again: delivery count 2
    before = h.sc.partitions[(G, h.tid, 0)]
    sc = h.reloaded()
    after = sc.partitions[(G, h.tid, 0)]
    assert after.start_offset == before.start_offset == 3
    assert after.state_epoch == before.state_epoch
    assert after.state_batches() == before.state_batches()
    assert after.records[3].delivery_count == 2 and after.records[4].state == S.ARCHIVED
    assert G in sc.groups and sc.groups[G].is_empty  # the group comes back, empty
    # the reloaded leader hands out what was in flight (locks are not persisted)
    p = h.topic.partitions[0]
    got = sc.acquire(p.leader, G, "n", h.tid, 0, 500, 1 << 20)[1]
    assert [r[0] for r in got.ranges] == [3, 5]
    assert got.ranges[0] == (3, 3, 3)


def test_deleted_state_writes_tombstones_and_stays_deleted() -> None:
    h = Harness()
    h.join()
    h.sc.share_group_heartbeat(G, "m", -1, rack_id=None, subscribed_topic_names=None)
    group_offsets.delete_offsets(h.sc, G, ["t"])
    tombstones = [(kind, k["partition"]) for kind, k, v in h.records() if v is None]
    assert sorted(tombstones) == [(SNAPSHOT, 0), (SNAPSHOT, 1), (UPDATE, 0), (UPDATE, 1)]
    sc = SharePartitionManager(h.state, h.gc)
    assert replay(h.state, sc, ShareStateLog(h.state, sc)) == (0, 0)


def test_read_committed_archives_aborted_records() -> None:
    h = Harness(partitions=1)
    h.sc.set_group_config(G, "share.auto.offset.reset", "earliest")
    h.sc.set_group_config(G, "share.isolation.level", "read_committed")
    h.join()
    p = h.topic.partitions[0]
    h.produce(1)  # offset 0
    txn = build_batch([(None, b"a"), (None, b"b")], producer_id=7, producer_epoch=0,
                      base_sequence=0, transactional=True)
    assert h.state.append(p.leader, "t", 0, txn, -1).error == E.NONE  # offsets 1-2
    marker = h.state.append_control(p, control_batch(False, 7, 0, h.state.now()))
    p.complete_txn(7, 0, marker, False)  # offset 3: ABORT
    h.produce(1)  # offset 4
    got = h.acquire()
    assert [(a, b) for a, b, _ in got.ranges] == [(0, 0), (4, 4)]
    sp = h.sc.partitions[(G, h.tid, 0)]
    assert all(sp.records[o].state == S.ARCHIVED for o in (1, 2, 3))
    h.ack(0, 0, A.ACCEPT)
    h.ack(4, 4, A.ACCEPT)
    assert sp.start_offset == 5
