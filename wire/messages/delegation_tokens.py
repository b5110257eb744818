"""Delegation tokens (KIP-48): CreateDelegationToken (38), RenewDelegationToken (39),
ExpireDelegationToken (40), DescribeDelegationToken (41)."""

from wire.schema import BYTES, INT16, INT32, INT64, STRING, Array, Field, message

_PRINCIPAL = [Field("principal_type", STRING), Field("principal_name", STRING)]


def _token(timestamp_suffix: str) -> list[Field]:
    """A token as CreateDelegationToken and DescribeDelegationToken answer it: owner,
    requester, times (their names end in "Ms" in the one, not the other), id and HMAC."""
    return [
        *_PRINCIPAL,
        Field("token_requester_principal_type", STRING, "3+"),
        Field("token_requester_principal_name", STRING, "3+"),
        *(Field(f"{t}_timestamp{timestamp_suffix}", INT64) for t in ("issue", "expiry", "max")),
        Field("token_id", STRING),
        Field("hmac", BYTES),
    ]


def _by_hmac(period: str) -> list[Field]:
    """RenewDelegationToken and ExpireDelegationToken name the token by its HMAC, with a
    period (``period``) to add to now; both answer the new expiry time."""
    return [Field("hmac", BYTES), Field(period, INT64)]


def _new_expiry() -> list[Field]:
    return [Field("error_code", INT16), Field("expiry_timestamp_ms", INT64),
            Field("throttle_time_ms", INT32)]


CREATE_DELEGATION_TOKEN_REQUEST = message("CreateDelegationTokenRequest", 38, "1-3", "2+", [
    Field("owner_principal_type", STRING, "3+", nullable="3+"),
    Field("owner_principal_name", STRING, "3+", nullable="3+"),
    Field("renewers", Array, fields=list(_PRINCIPAL)),
    Field("max_lifetime_ms", INT64),
])

CREATE_DELEGATION_TOKEN_RESPONSE = message("CreateDelegationTokenResponse", 38, "1-3", "2+", [
    Field("error_code", INT16),
    *_token("_ms"),
    Field("throttle_time_ms", INT32),
])

RENEW_DELEGATION_TOKEN_REQUEST = message(
    "RenewDelegationTokenRequest", 39, "1-2", "2+", _by_hmac("renew_period_ms"))
RENEW_DELEGATION_TOKEN_RESPONSE = message(
    "RenewDelegationTokenResponse", 39, "1-2", "2+", _new_expiry())

EXPIRE_DELEGATION_TOKEN_REQUEST = message(
    "ExpireDelegationTokenRequest", 40, "1-2", "2+", _by_hmac("expiry_time_period_ms"))
EXPIRE_DELEGATION_TOKEN_RESPONSE = message(
    "ExpireDelegationTokenResponse", 40, "1-2", "2+", _new_expiry())

DESCRIBE_DELEGATION_TOKEN_REQUEST = message("DescribeDelegationTokenRequest", 41, "1-3", "2+", [
    Field("owners", Array, nullable="0+", fields=list(_PRINCIPAL)),
])

DESCRIBE_DELEGATION_TOKEN_RESPONSE = message("DescribeDelegationTokenResponse", 41, "1-3",
                                             "2+", [
    Field("error_code", INT16),
    Field("tokens", Array, fields=[
        *_token(""),
        Field("renewers", Array, fields=list(_PRINCIPAL)),
    ]),
    Field("throttle_time_ms", INT32),
])
