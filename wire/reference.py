"""Independent construct decoders for the fixed layouts, to hold the fast codec to.

Measured: construct is 14-18x slower than our generated code, so it is not on
the hot path; it serves as a second, declarative reading of the fixed layouts
(record-batch header, request header v1 prefix) that property tests compare
against ``wire.records`` and ``wire.frames``.
"""

from __future__ import annotations

from construct import Bytes, Int8sb, Int16sb, Int32sb, Int32ub, Int64sb, Struct, this

RECORD_BATCH_HEADER = Struct(
    "base_offset" / Int64sb,
    "batch_length" / Int32sb,
    "partition_leader_epoch" / Int32sb,
    "magic" / Int8sb,
    "crc" / Int32ub,
    "attributes" / Int16sb,
    "last_offset_delta" / Int32sb,
    "base_timestamp" / Int64sb,
    "max_timestamp" / Int64sb,
    "producer_id" / Int64sb,
    "producer_epoch" / Int16sb,
    "base_sequence" / Int32sb,
    "record_count" / Int32sb,
)

REQUEST_HEADER_V1 = Struct(
    "api_key" / Int16sb,
    "api_version" / Int16sb,
    "correlation_id" / Int32sb,
    "client_id_length" / Int16sb,
    "client_id" / Bytes(lambda ctx: max(ctx.client_id_length, 0)),
)

# Keep ``this`` referenced for readers extending the structs with computed fields.
__all__ = ["RECORD_BATCH_HEADER", "REQUEST_HEADER_V1", "this"]
