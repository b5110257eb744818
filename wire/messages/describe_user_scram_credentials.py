"""DescribeUserScramCredentials (key 50)."""

from wire.schema import INT8, INT16, INT32, STRING, Array, Field, message

DESCRIBE_USER_SCRAM_CREDENTIALS_REQUEST = message(
    "DescribeUserScramCredentialsRequest",
    50,
    "0",
    "0+",
    [
        Field("users", Array, nullable="0+", fields=[
            Field("name", STRING),
        ]),
    ],
)

DESCRIBE_USER_SCRAM_CREDENTIALS_RESPONSE = message(
    "DescribeUserScramCredentialsResponse",
    50,
    "0",
    "0+",
    [
        Field("throttle_time_ms", INT32),
        Field("error_code", INT16),
        Field("error_message", STRING, nullable="0+"),
        Field("results", Array, fields=[
            Field("user", STRING),
            Field("error_code", INT16),
            Field("error_message", STRING, nullable="0+"),
            Field("credential_infos", Array, fields=[
                Field("mechanism", INT8),
                Field("iterations", INT32),
            ]),
        ]),
    ],
)
