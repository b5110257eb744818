"""Our codec against Kafka's generated message classes, both ways, byte for byte.

conformance/codec_diff.py draws random requests and responses for every registered key
and every version both sides know (tagged fields at random or default values), has
Kafka 4.4's own classes (client_tests/java/src/CodecDiff.java over kafka-clients from
Maven Central, compiled by scripts/setup.d/30-java.sh) serialize or parse them, and holds
our decoder and encoder to the same bytes and values. CI runs 250 messages per key,
kind, version and direction (1,000 per key and version); ``python -m
conformance.codec_diff --per-version 5000`` is the long run.
"""

from __future__ import annotations

import copy

import pytest

from conformance.codec_diff import run
from wire.codec import CompiledMessage
from wire.messages import REQUESTS, RESPONSES
from wire.schema import Array, Message, Struct

PER_VERSION = 250

pytestmark = pytest.mark.kafka_oracle


def test_every_message_round_trips_through_kafkas_classes() -> None:
    res = run(per_version=PER_VERSION, seed=20261123)
    assert res.total >= PER_VERSION * 2 * (len(REQUESTS) + len(RESPONSES))
    assert not res.failed, (f"{res.failed} of {res.total} messages differ from Kafka's "
                            "classes; one of each kind:\n" + "\n".join(res.failures))


def test_the_differential_sees_a_wrong_codec() -> None:
    """Two int32 fields swapped (MetadataResponse brokers: node_id and port) keep the
    layout but not the meaning: the value comparison must catch it both ways."""
    orig = RESPONSES[3].msg
    brokers = copy.copy(orig.fields[1])
    items = list(brokers.type.item.fields)
    items[0], items[2] = items[2], items[0]
    brokers.type = Array(Struct(items))
    fields = [brokers if f is orig.fields[1] else f for f in orig.fields]
    msg = Message(orig.name, orig.api_key, orig.versions, orig.flexible, fields, orig.kind)
    wrong = {3: CompiledMessage(msg)}
    res = run(per_version=20, seed=5, keys=[3], tables=({}, wrong))
    assert res.failed > 0
    kinds = {f.split(" ", 1)[0] for f in res.failures}
    assert kinds == {"kafka->ours", "ours->kafka"}, res.failures
