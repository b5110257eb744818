"""A failed log directory, on both targets: the same test against the emulator (a
``disk_full`` storage fault) and, with ``--target kafka``, a real Kafka broker whose
second log dir is a 16 MiB tmpfs filled to the last block (needs root to mount it).

Broker 1 has two log dirs and leads four partitions replicated on [1, 2]; one of its
dirs fails. Then, as Kafka 4.4 answers (docs/storage.md, "Storage faults"): the dir is
offline in DescribeLogDirs (KAFKA_STORAGE_ERROR, no partitions), produce and fetch to
broker 1 for its partitions there answer KAFKA_STORAGE_ERROR, their leadership moved to
broker 2 (ISR [2], broker 1 offline), broker 1 still leads the partitions of its other
dir, a client producing with acks=all loses nothing, and once the dir is usable again a
restart of broker 1 brings the dir and the ISR back with every acknowledged record.
"""

from __future__ import annotations

import pytest

from client_tests.log_dir_targets import (
    TOPIC,
    Side,
    deliver,
    fetch,
    log_dirs,
    partitions,
    produce,
)
from client_tests.log_dir_targets import create as create_topic
from client_tests.reading import end_offsets
from emulator.testing import wait_for
from wire.errors import ErrorCode as E


@pytest.mark.kafka_slow
def test_a_failed_log_dir_moves_its_leaders_and_loses_nothing(log_dir_cluster: Side) -> None:
    side = log_dir_cluster
    create_topic(side)
    dirs = log_dirs(side, 1)
    assert set(dirs) >= {side.failing_dir} and len(dirs) == 2
    failing = dirs[side.failing_dir][1]
    other = next(v[1] for d, v in dirs.items() if d != side.failing_dir)
    assert len(failing) == 2 and sorted(failing + other) == [0, 1, 2, 3]
    acked = deliver(side, 3)
    assert acked == {0: 3, 1: 3, 2: 3, 3: 3}

    side.fail()
    # Kafka notices at its next write needing a block or its checkpoint (5 s at most);
    # a produce meanwhile may still be taken (and is counted if answered NONE)
    for p in failing:
        if produce(side, 1, p) == E.NONE:
            acked[p] += 1
    wait_for(lambda: log_dirs(side, 1)[side.failing_dir] == (E.KAFKA_STORAGE_ERROR, []),
             "the log dir offline in DescribeLogDirs", timeout=15)
    wait_for(lambda: all(partitions(side, 2)[p] == (2, [2], [1]) for p in failing),
             "its partitions led by broker 2, broker 1 offline", timeout=15)
    for p in failing:
        assert produce(side, 1, p) == E.KAFKA_STORAGE_ERROR
        assert fetch(side, 1, p) == E.KAFKA_STORAGE_ERROR
    for p in other:
        assert partitions(side, 2)[p] == (1, [1, 2], [])
        assert produce(side, 1, p) == E.NONE  # the other dir still serves
        acked[p] += 1
    assert side.broker_up(1)
    more = deliver(side, 2)
    assert more == {0: 2, 1: 2, 2: 2, 3: 2}

    side.heal_and_restart()
    wait_for(lambda: all(v[1] == [1, 2] for v in partitions(side, 2).values()),
             "broker 1 back in every ISR", timeout=60)
    assert {d: e for d, (e, _) in log_dirs(side, 1).items()} == {d: E.NONE for d in dirs}
    assert end_offsets(side.bootstrap, TOPIC, 4) == {p: acked[p] + 2 for p in range(4)}
