"""AlterUserScramCredentials (key 51)."""

from wire.messages.common import error_fields
from wire.schema import BYTES, INT8, INT32, STRING, Array, Field, message

ALTER_USER_SCRAM_CREDENTIALS_REQUEST = message(
    "AlterUserScramCredentialsRequest", 51, "0", "0+", [
        Field("deletions", Array, fields=[Field("name", STRING), Field("mechanism", INT8)]),
        Field("upsertions", Array, fields=[
            Field("name", STRING),
            Field("mechanism", INT8),
            Field("iterations", INT32),
            Field("salt", BYTES),
            Field("salted_password", BYTES),
        ]),
    ])

ALTER_USER_SCRAM_CREDENTIALS_RESPONSE = message(
    "AlterUserScramCredentialsResponse", 51, "0", "0+", [
        Field("throttle_time_ms", INT32),
        Field("results", Array,
              fields=[Field("user", STRING), *error_fields(null_message=False)]),
    ])
