"""SaslHandshake (key 17)."""

from wire.schema import INT16, STRING, Array, Field, message

SASL_HANDSHAKE_REQUEST = message("SaslHandshakeRequest", 17, "0-1", "none", [
    Field("mechanism", STRING)])

SASL_HANDSHAKE_RESPONSE = message("SaslHandshakeResponse", 17, "0-1", "none", [
    Field("error_code", INT16), Field("mechanisms", Array(STRING))])
