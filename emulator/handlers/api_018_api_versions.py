"""ApiVersions (key 18), v0-4.

Lists what the handler registry implements, clamped to the release we pose as.
An unknown version gets UNSUPPORTED_VERSION with a v0 body listing our ranges
(the server encodes it at v0), exactly as Kafka does so a client can retry lower.
"""

from __future__ import annotations

from emulator.handlers.base import RequestContext
from wire.errors import ErrorCode as E

API_KEY = 18
VERSIONS = (0, 4)


def api_keys(ctx: RequestContext) -> list[dict]:
    ranges = ctx.services["advertised"]
    return [
        {"api_key": k, "min_version": lo, "max_version": hi}
        for k, (lo, hi) in sorted(ranges.items())
    ]


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    return {"error_code": E.NONE, "api_keys": api_keys(ctx), "throttle_time_ms": 0,
            "finalized_features_epoch": -1}


def unsupported(ctx: RequestContext) -> dict:
    return {"error_code": E.UNSUPPORTED_VERSION, "api_keys": api_keys(ctx)}
