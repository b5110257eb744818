"""A topic's compression.type under each fidelity (docs/fidelity.md, topic-compression-type).

Kafka's LogValidator rewrites a produced batch into the topic's codec when it is not
``producer`` and differs from the batch's; ``--fidelity kafka`` does the same on the
leader's append, ``fast`` (the default) stores the producer's batch as sent.
client_tests/test_topic_compression.py checks the behaviour on both targets.
"""

from __future__ import annotations

import pytest
from cluster_sim import new_cluster

from emulator.cluster.state import ClusterState
from wire.errors import ErrorCode as E
from wire.records import (
    GZIP,
    LZ4,
    NONE,
    ZSTD,
    Record,
    build_batch,
    decode_records,
    read_header,
    recompress,
    validate_batch,
)

SENT = [Record(0, 1000 + i, b"k%d" % i, b"v%d" % i * 50, [("h", b"x")]) for i in range(4)]


def cluster(mode: str, compression: str, **configs: str) -> ClusterState:
    s = new_cluster(3, fidelity=mode).state
    s.create_topic("t", 1, 3, configs={"compression.type": compression, **configs})
    return s


def stored(s: ClusterState, codec: int, **batch_args: int) -> bytes:
    """Append SENT in ``codec`` and return the leader's stored batch."""
    p = s.get_partition("t", 0)
    r = s.append(p.leader, "t", 0, recompress(build_batch(SENT, timestamp=1000, **batch_args),
                                               codec), 1)
    assert r.error == E.NONE, r
    (batch,) = p.leader_log.read(r.base_offset, 1 << 20, r.last_offset + 1)
    return bytes(batch)


@pytest.mark.parametrize(("compression", "sent", "kept"), [
    ("gzip", NONE, GZIP), ("zstd", LZ4, ZSTD), ("uncompressed", GZIP, NONE),
    ("producer", LZ4, LZ4), ("lz4", LZ4, LZ4)])
def test_kafka_fidelity_stores_the_topic_codec(compression: str, sent: int, kept: int) -> None:
    batch = stored(cluster("kafka", compression), sent)
    h = validate_batch(batch)
    assert h.compression == kept
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in decode_records(batch)] \
        == [(i, r.timestamp, r.key, r.value, r.headers) for i, r in enumerate(SENT)]


@pytest.mark.parametrize(("compression", "sent"), [("gzip", NONE), ("uncompressed", GZIP)])
def test_fast_stores_the_producers_codec(compression: str, sent: int) -> None:
    assert read_header(stored(cluster("fast", compression), sent)).compression == sent


def test_recompression_keeps_the_producer_fields_and_the_sequence_check() -> None:
    """An idempotent batch keeps its producer id, epoch and sequence; its retry is still
    recognised as a duplicate (the check reads the producer's header, as Kafka's does)."""
    s = cluster("kafka", "gzip")
    batch = stored(s, NONE, producer_id=7, producer_epoch=0, base_sequence=0)
    h = validate_batch(batch)
    assert (h.compression, h.producer_id, h.producer_epoch, h.base_sequence) == (GZIP, 7, 0, 0)
    p = s.get_partition("t", 0)
    again = s.append(p.leader, "t", 0, build_batch(SENT, timestamp=1000, producer_id=7,
                                                   producer_epoch=0, base_sequence=0), 1)
    assert (again.error, again.base_offset) == (E.NONE, 0)
    assert p.log_end_offset == len(SENT)


def test_a_batch_too_large_once_recompressed_is_refused() -> None:
    """UnifiedLog checks max.message.bytes again on the rewritten batch: records that
    zstd packs small but that are large uncompressed do not fit."""
    s = cluster("kafka", "uncompressed", **{"max.message.bytes": "1000"})
    p = s.get_partition("t", 0)
    big = [Record(0, 1000, None, b"a" * 5000, [])]
    r = s.append(p.leader, "t", 0, recompress(build_batch(big, timestamp=1000), ZSTD), 1)
    assert r.error == E.MESSAGE_TOO_LARGE
    assert p.log_end_offset == 0


def test_a_batch_exactly_max_message_bytes_once_recompressed_is_appended() -> None:
    """The second check refuses only a rewritten batch larger than max.message.bytes
    (UnifiedLog.append: ``batch.sizeInBytes > config.maxMessageSize``): one exactly that
    size is appended, one byte less of room refuses it."""
    big = [Record(0, 1000, None, b"a" * 5000, [])]
    sent = recompress(build_batch(big, timestamp=1000), ZSTD)
    size = len(recompress(sent, NONE))
    assert len(sent) < size - 1
    for room, code in ((size, E.NONE), (size - 1, E.MESSAGE_TOO_LARGE)):
        s = cluster("kafka", "uncompressed", **{"max.message.bytes": str(room)})
        p = s.get_partition("t", 0)
        assert s.append(p.leader, "t", 0, sent, 1).error == code
        assert p.log_end_offset == (1 if code == E.NONE else 0)
