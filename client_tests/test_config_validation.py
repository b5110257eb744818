"""Config values checked as Kafka's ConfigDef checks them, on either target.

A value must parse as its key's type (Java's parsing: a 32-bit INT, no underscores) and
pass the key's validator; the answer is ConfigException's message. segment.bytes has
been at least 1 MB since Kafka 4.0; the internal topic config internal.segment.bytes,
which DescribeConfigs lists only where it is set, is how tests get smaller segments. A
topic's config is refused with INVALID_CONFIG, a broker's dynamic one (checked by the
broker) with INVALID_REQUEST.
"""

from __future__ import annotations

import uuid

from client_tests.rawkafka import Conn
from client_tests.targets import KafkaTarget
from emulator import Cluster
from emulator.testing import wait_for
from wire.errors import ErrorCode as E

Target = Cluster | KafkaTarget


def create(conn: Conn, name: str, configs: dict[str, str], validate_only: bool = True
           ) -> tuple[int, str | None]:
    r = conn.call(19, 5, {"topics": [{
        "name": name, "num_partitions": 1, "replication_factor": 1, "assignments": [],
        "configs": [{"name": k, "value": v} for k, v in configs.items()]}],
        "timeout_ms": 30000, "validate_only": validate_only})
    t = r["topics"][0]
    return t["error_code"], t["error_message"]


def test_topic_config_values_are_parsed_and_validated_as_kafka_does(cluster: Target) -> None:
    conn = Conn(cluster)
    name = f"cfg-{uuid.uuid4().hex[:8]}"
    try:
        def refused(key: str, value: str, why: str) -> tuple[int, str]:
            return E.INVALID_CONFIG, f"Invalid value {value} for configuration {key}: {why}"

        assert create(conn, name, {"segment.bytes": "600"}) == refused(
            "segment.bytes", "600", "Value must be at least 1048576")
        assert create(conn, name, {"segment.bytes": "1048575"}) == refused(
            "segment.bytes", "1048575", "Value must be at least 1048576")
        assert create(conn, name, {"segment.bytes": "2147483648"}) == refused(
            "segment.bytes", "2147483648", "Not a number of type INT")
        assert create(conn, name, {"retention.ms": "abc"}) == refused(
            "retention.ms", "abc", "Not a number of type LONG")
        assert create(conn, name, {"min.cleanable.dirty.ratio": "x"}) == refused(
            "min.cleanable.dirty.ratio", "x", "Not a number of type DOUBLE")
        assert create(conn, name, {"preallocate": "maybe"}) == refused(
            "preallocate", "maybe", "Expected value to be either true or false")
        assert create(conn, name, {"segment.bytes": " 1048576 "}) == (E.NONE, None)
        assert create(conn, name, {"internal.segment.bytes": "600"}, False) == (E.NONE, None)
        # Kafka's broker learns the topic from the metadata log a moment after
        # CreateTopics returns (UNKNOWN_TOPIC_OR_PARTITION until then; the emulator at once)
        wait_for(lambda: conn.call(32, 4, {"resources": [
            {"resource_type": 2, "resource_name": name, "configuration_keys": []}],
            "include_synonyms": False, "include_documentation": False}
        )["results"][0]["error_code"] == E.NONE, f"{name} known to the broker")

        def described(keys: list[str] | None) -> dict[str, tuple[str, int]]:
            r = conn.call(32, 4, {"resources": [{"resource_type": 2, "resource_name": name,
                                                 "configuration_keys": keys}],
                                  "include_synonyms": False, "include_documentation": False})
            res = r["results"][0]
            assert (res["error_code"], res["error_message"]) == (E.NONE, ""), res
            return {c["name"]: (c["value"], c["config_source"]) for c in res["configs"]}

        # Kafka's metadata reaches the broker a moment after CreateTopics answers
        wait_for(lambda: described(["internal.segment.bytes"]) == {
            "internal.segment.bytes": ("600", 1)}, "internal.segment.bytes described")
        assert described(None)["internal.segment.bytes"] == ("600", 1)
        r = conn.call(44, 1, {"resources": [{"resource_type": 2, "resource_name": name,
                                             "configs": [{"name": "segment.bytes",
                                                          "config_operation": 0,
                                                          "value": "600"}]}],
                              "validate_only": True})
        assert (r["responses"][0]["error_code"], r["responses"][0]["error_message"]) == \
            refused("segment.bytes", "600", "Value must be at least 1048576")
        r = conn.call(44, 1, {"resources": [{"resource_type": 2, "resource_name": name,
                                             "configs": [{"name": "internal.segment.bytes",
                                                          "config_operation": 1,
                                                          "value": None}]}],
                              "validate_only": False})
        assert r["responses"][0]["error_code"] == E.NONE  # DELETE: unset, then unlisted
        wait_for(lambda: "internal.segment.bytes" not in described(None),
                 "internal.segment.bytes gone")
    finally:
        conn.close()


def test_a_broker_config_value_is_refused_as_an_invalid_request(cluster: Target) -> None:
    conn = Conn(cluster)
    try:
        for resource, value, why in (("", "600", "Value must be at least 1048576"),
                                     (str(cluster.broker_ids[0]), "x",
                                      "Not a number of type INT")):
            r = conn.call(44, 1, {"resources": [{"resource_type": 4, "resource_name": resource,
                                                 "configs": [{"name": "log.segment.bytes",
                                                              "config_operation": 0,
                                                              "value": value}]}],
                                  "validate_only": True})
            assert (r["responses"][0]["error_code"], r["responses"][0]["error_message"]) == (
                E.INVALID_REQUEST,
                f"Invalid value {value} for configuration log.segment.bytes: {why}")
    finally:
        conn.close()
