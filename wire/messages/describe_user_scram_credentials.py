"""DescribeUserScramCredentials (key 50)."""

from wire.messages.common import error_fields, response_head
from wire.schema import INT8, INT32, STRING, Array, Field, message

DESCRIBE_USER_SCRAM_CREDENTIALS_REQUEST = message(
    "DescribeUserScramCredentialsRequest", 50, "0", "0+", [
        Field("users", Array, nullable="0+", fields=[Field("name", STRING)])])

DESCRIBE_USER_SCRAM_CREDENTIALS_RESPONSE = message(
    "DescribeUserScramCredentialsResponse", 50, "0", "0+", [
        *response_head(null_message=False),
        Field("results", Array, fields=[
            Field("user", STRING),
            *error_fields(null_message=False),
            Field("credential_infos", Array,
                  fields=[Field("mechanism", INT8), Field("iterations", INT32)]),
        ]),
    ])
