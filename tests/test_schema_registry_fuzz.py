"""Hostile input to the schema registry: whatever a body, a path part or a record of
``_schemas`` holds, the registry answers with one of Confluent's errors (RegistryError)
or succeeds; nothing else escapes (the HTTP layer would turn it into a 500)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator.schema_registry.errors import RegistryError
from emulator.schema_registry.model import Registry

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["type", "name", "fields", "schema", "schemaType", "references",
                         "id", "version", "items", "values", "symbols", "properties",
                         "compatibility", "mode", "default", "subject"]), inner,
        max_size=5),
    max_leaves=20)
schema_texts = st.one_of(
    st.text(max_size=40),
    json_values.map(json.dumps),
    st.sampled_from(['{"type":"record","name":"R","fields":[{"name":"a","type":"int"}]}',
                     '"string"', '["null","R"]', 'syntax = "proto3"; message M {',
                     'syntax = "proto3"; message M { int32 a = 1; }',
                     '{"type":"object","properties":{"a":{"type":"string"}}}']))
bodies = st.one_of(json_values, st.fixed_dictionaries(
    {"schema": schema_texts},
    optional={"schemaType": st.sampled_from(["AVRO", "JSON", "PROTOBUF", "avro", "X", 3]),
              "references": json_values, "id": json_values, "version": json_values}))
names = st.text(min_size=1, max_size=8)


def call(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except RegistryError as e:
        assert 400 <= e.status < 600 and isinstance(e.error_code, int)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 9), names, bodies, st.text(max_size=6)),
                max_size=8))
def test_operations_raise_only_registry_errors(ops: list[tuple[int, str, Any, str]]) -> None:
    reg = Registry()
    for op, subject, body, version in ops:
        fn, args = [
            (reg.register, (subject, body)),
            (reg.register, (subject, body, True)),
            (reg.lookup, (subject, body)),
            (reg.check_compatibility, (subject, None, body, False, True)),
            (reg.check_compatibility, (subject, version, body)),
            (reg.set_config, (subject, body)),
            (reg.set_mode, (None, body, True)),
            (reg.get_version, (subject, version, True, "serialized")),
            (reg.delete_version, (subject, version, version == "")),
            (reg.schema_by_id, (version,)),
        ][op]
        call(fn, *args)
        # the state stays readable
        reg.list_schemas(deleted=True)
        reg.list_subjects(deleted=True)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(json_values, st.one_of(st.none(), json_values)), max_size=6))
def test_foreign_records_do_not_break_the_registry(records: list[tuple[Any, Any]]) -> None:
    """Records a client produced to _schemas: what the store cannot apply it skips."""
    from emulator.schema_registry.store import SchemaStore

    class FakeState:  # the store's _apply needs no cluster
        pass

    store = SchemaStore.__new__(SchemaStore)
    store.registry = Registry()
    store.skipped = 0
    for key, value in records:
        store._apply(json.dumps(key).encode(),
                     None if value is None else json.dumps(value).encode())
    store._apply(json.dumps({"keytype": "SCHEMA", "subject": "s", "version": 1,
                             "magic": 1}).encode(),
                 json.dumps({"subject": "s", "version": 1, "id": 1,
                             "schema": 5}).encode())
    reg = store.registry
    call(reg.list_schemas, "", True)
    call(reg.register, "s", {"schema": '"string"'})
    call(reg.check_compatibility, "s", None, {"schema": '"int"'})
    call(reg.get_version, "s", "1", True)
