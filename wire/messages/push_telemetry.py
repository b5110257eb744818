"""PushTelemetry (key 72)."""

from wire.schema import BOOL, BYTES, INT8, INT16, INT32, UUID, Field, message

PUSH_TELEMETRY_REQUEST = message("PushTelemetryRequest", 72, "0", "0+", [
    Field("client_instance_id", UUID),
    Field("subscription_id", INT32),
    Field("terminating", BOOL),
    Field("compression_type", INT8),
    Field("metrics", BYTES),
])

PUSH_TELEMETRY_RESPONSE = message("PushTelemetryResponse", 72, "0", "0+", [
    Field("throttle_time_ms", INT32), Field("error_code", INT16)])
