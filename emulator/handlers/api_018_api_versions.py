"""ApiVersions (key 18), v0-5.

Lists what the handler registry implements, clamped to the release we pose as
(emulator/versions.py), with that release's supported and finalized features (v3+).
As Kafka does:
- an unknown version gets UNSUPPORTED_VERSION with a v0 body listing our ranges (the
  server encodes it at v0), so a client can retry lower;
- v3+ requests whose client software name or version is not of Kafka's form get
  INVALID_REQUEST;
- v3 answers leave out supported features whose minimum is 0 (KAFKA-17011: v3 clients
  cannot parse them; v4 lifted that);
- v5 (KIP-1242): a request naming another cluster id or node id gets
  REBOOTSTRAP_REQUIRED, telling the client its bootstrap address now reaches a
  different cluster or broker; naming only one of the two is INVALID_REQUEST
  (both checked against a real 4.4 broker).
"""

from __future__ import annotations

import re

from emulator.handlers.base import RequestContext
from emulator.versions import FeatureLevels
from wire.errors import ErrorCode as E

API_KEY = 18
VERSIONS = (0, 5)
AUTHORIZE = ()  # answered before authentication, as Kafka does

# Kafka's ApiVersionsRequest.isValid() pattern for client software name and version.
_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")


def api_keys(ctx: RequestContext) -> list[dict]:
    ranges = ctx.services.advertised
    return [
        {"api_key": k, "min_version": lo, "max_version": hi}
        for k, (lo, hi) in sorted(ranges.items())
    ]


def _features(ctx: RequestContext, version: int) -> dict:
    levels = ctx.services.features or FeatureLevels()
    supported, finalized = levels.supported, levels.finalized
    return {
        "supported_features": [
            {"name": n, "min_version": lo, "max_version": hi}
            for n, (lo, hi) in supported.items() if version >= 4 or lo > 0],
        "finalized_features_epoch": levels.epoch if finalized else -1,
        "finalized_features": [
            {"name": n, "max_version_level": level, "min_version_level": level}
            for n, level in finalized.items()],
    }


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    if version >= 3 and not (_SOFTWARE.fullmatch(req["client_software_name"])
                             and _SOFTWARE.fullmatch(req["client_software_version"])):
        return {"error_code": E.INVALID_REQUEST, "api_keys": [], "throttle_time_ms": 0}
    if version >= 5 and (code := _target_error(ctx, req)) != E.NONE:
        return {"error_code": code, "api_keys": [], "throttle_time_ms": 0}
    return {"error_code": E.NONE, "api_keys": api_keys(ctx), "throttle_time_ms": 0,
            **_features(ctx, version)}


def _target_error(ctx: RequestContext, req: dict) -> int:
    cluster_id, node_id = req["cluster_id"], req["node_id"]
    if cluster_id is None and node_id < 0:
        return E.NONE
    if cluster_id is None or node_id < 0:
        return E.INVALID_REQUEST
    if cluster_id != ctx.cluster.cluster_id or node_id != ctx.broker_id:
        return E.REBOOTSTRAP_REQUIRED
    return E.NONE


def unsupported(ctx: RequestContext) -> dict:
    return {"error_code": E.UNSUPPORTED_VERSION, "api_keys": api_keys(ctx)}
