"""SaslAuthenticate (key 36)."""

from wire.schema import BYTES, INT16, INT64, STRING, Field, message

SASL_AUTHENTICATE_REQUEST = message(
    "SaslAuthenticateRequest",
    36,
    "0-2",
    "2+",
    [
        Field("auth_bytes", BYTES),
    ],
)

SASL_AUTHENTICATE_RESPONSE = message(
    "SaslAuthenticateResponse",
    36,
    "0-2",
    "2+",
    [
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("auth_bytes", BYTES),
        Field("session_lifetime_ms", INT64, "1+"),
    ],
)
