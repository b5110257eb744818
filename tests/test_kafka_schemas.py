"""Every wire/ schema against Kafka's own message definitions, field by field.

The oracle is the common/message/*.json inside the kafka-clients jar of each supported
release, fetched from Maven Central (scripts/setup.d/32-kafka-server.sh, or on first use)
and read at test time; nothing of it is in the repository. conformance/kafka_messages.py
does the comparison: per version, the fields on the wire in order with their names,
types, nullability, tags and defaults, and the valid and flexible versions.
"""

from __future__ import annotations

import copy

import pytest

from client_tests.kafka_cluster import DEFAULT_VERSION, SUPPORTED_VERSIONS
from conformance.kafka_messages import (
    KafkaMessage,
    Report,
    check_message,
    check_release,
    load_definitions,
)
from wire.messages import REQUESTS, RESPONSES

pytestmark = pytest.mark.kafka_oracle


@pytest.mark.parametrize("release", SUPPORTED_VERSIONS)
def test_every_schema_matches_kafka(release: str) -> None:
    rep = check_release(release)
    assert rep.messages_checked + rep.newer_than_release == len(REQUESTS) + len(RESPONSES)
    assert not rep.mismatches, (
        f"{len(rep.mismatches)} differences from Kafka {release}'s message definitions "
        f"({rep.fields_checked} fields compared):\n" + "\n".join(rep.mismatches))


def test_the_check_sees_a_difference() -> None:
    """The comparison is not vacuous: one flipped nullability, one wrong default, one
    missing tagged field and one renamed field in copies of our schemas are all found."""
    defs = load_definitions(DEFAULT_VERSION)
    meta = copy.deepcopy(RESPONSES[3].msg)
    broker = meta.fields[1].type.item.fields
    broker[3].nullable = None  # brokers[].rack
    meta.fields[3]._default = 0  # controller_id (Kafka: -1)
    meta.fields[0].name = "throttle_ms"
    api = copy.deepcopy(RESPONSES[18].msg)
    api.fields = [f for f in api.fields if f.name != "zk_migration_ready"]
    rep = Report(DEFAULT_VERSION)
    check_message(meta, KafkaMessage(defs[(3, "response")]), rep)
    check_message(api, KafkaMessage(defs[(18, "response")]), rep)
    text = "\n".join(rep.mismatches)
    assert "MetadataResponse.brokers.rack (v1-13): nullable False != Kafka's True" in text
    assert "MetadataResponse.controller_id (v1-13): default 0 != Kafka's -1" in text
    assert "MetadataResponse.throttle_time_ms (v3-13): renamed: ours is 'throttle_ms'" in text
    assert "ApiVersionsResponse (v3-5): tagged fields" in text
