"""SaslAuthenticate (key 36)."""

from wire.messages.common import error_fields
from wire.schema import BYTES, INT64, Field, message

SASL_AUTHENTICATE_REQUEST = message("SaslAuthenticateRequest", 36, "0-2", "2+", [
    Field("auth_bytes", BYTES)])

SASL_AUTHENTICATE_RESPONSE = message("SaslAuthenticateResponse", 36, "0-2", "2+", [
    *error_fields(null_message=False),
    Field("auth_bytes", BYTES),
    Field("session_lifetime_ms", INT64, "1+"),
])
