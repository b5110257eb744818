"""A Confluent-compatible schema registry built into the emulator (docs/schema-registry.md).

``model`` is the registry (subjects, versions, ids, configs, modes) as the records of
the ``_schemas`` topic say; ``store`` reads and appends those records on the emulated
cluster; ``avro``, ``json_schema`` and ``protobuf`` parse each format and check
compatibility by its rules. The HTTP API is served by emulator.server.schema_registry.
"""
