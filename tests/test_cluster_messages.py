"""The cluster's typed shapes of wire messages match the wire's declarations.

emulator/cluster names the fields it reads of a decoded request, and writes of a
response, as ``TypedDict``s (the fetch sessions' request and answers, the client
quotas' request parts, the configs' refusals, Produce's record errors), so that mypy
checks each field; the handler hands the codec's dict over with a ``cast``. Nothing in
mypy ties those shapes to the schema the codec decodes by (wire/messages/): this test
does, with the check the coordinators' shapes share (tests/wire_shapes.py): every key
must be a field of its wire struct, of the matching type, admitting None exactly where
the wire may carry it.
"""

from __future__ import annotations

from wire_shapes import Shape, mismatches, shape_test, struct_at

from emulator.cluster import config_ops, fetch_sessions, quotas, replication
from wire.messages import (
    alter_client_quotas,
    alter_configs,
    describe_client_quotas,
    fetch,
    incremental_alter_configs,
    produce,
)

SHAPES: list[Shape] = [
    (fetch_sessions.FetchRequest, fetch.FETCH_REQUEST, ()),
    (fetch_sessions.ForgottenTopic, fetch.FETCH_REQUEST, ("forgotten_topics_data",)),
    (quotas.EntityPart, alter_client_quotas.ALTER_CLIENT_QUOTAS_REQUEST, ("entries", "entity")),
    (quotas.QuotaOp, alter_client_quotas.ALTER_CLIENT_QUOTAS_REQUEST, ("entries", "ops")),
    (
        quotas.FilterComponent,
        describe_client_quotas.DESCRIBE_CLIENT_QUOTAS_REQUEST,
        ("components",),
    ),
    (config_ops.ResourceRef, alter_configs.ALTER_CONFIGS_REQUEST, ("resources",)),
    (
        config_ops.ResourceRef,
        incremental_alter_configs.INCREMENTAL_ALTER_CONFIGS_REQUEST,
        ("resources",),
    ),
    (config_ops.ResourceAnswer, alter_configs.ALTER_CONFIGS_RESPONSE, ("responses",)),
    (
        config_ops.ResourceAnswer,
        incremental_alter_configs.INCREMENTAL_ALTER_CONFIGS_RESPONSE,
        ("responses",),
    ),
    (
        replication.RecordError,
        produce.PRODUCE_RESPONSE,
        ("responses", "partition_responses", "record_errors"),
    ),
]


test_shape_matches_the_wire = shape_test(SHAPES)


def test_a_fetch_answer_matches_the_wire_but_for_its_records() -> None:
    """``records`` is the wire's RECORDS type (bytes here), which the check has no
    scalar for; every other field of the answer a session reads must match."""
    struct = struct_at(fetch.FETCH_RESPONSE, ("responses", "partitions"))
    assert mismatches(fetch_sessions.PartitionAnswer, struct, "p", read=False) == [
        "p.records: <class 'bytes'> for records"
    ]
