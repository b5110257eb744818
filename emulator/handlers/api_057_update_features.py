"""UpdateFeatures (key 57), v0-2: finalize feature levels, as the KRaft controller does.

Checked against a real 4.4 broker (every message below measured): a feature the cluster
does not support, a level above its supported range, a downgrade without a safe (2) or
unsafe (3) upgrade type, an unknown upgrade type, or any metadata.version downgrade
fail the whole request with INVALID_UPDATE_VERSION and "The update failed for all
features since the following feature had an error: ..."; v0-1 answer per-feature
results on success (message "NONE"), v2 only the top-level error. v0's allow_downgrade
does not make a downgrade pass (as measured). validate_only checks without changing.
A level of 0 removes the finalized feature; every change bumps the features epoch that
ApiVersions reports, and takes effect at once (transaction.version 2 -> 1 turns
transactions v2 off for the next requests). kraft.version is accepted but, as in
Kafka's ApiVersions, not listed among the finalized features.
"""

from __future__ import annotations

from emulator.handlers.authz import ClusterOp, Op
from emulator.handlers.base import RequestContext
from emulator.versions import FeatureLevels
from wire.errors import ErrorCode as E

API_KEY = 57
VERSIONS = (0, 2)
AUTHORIZE = (ClusterOp(Op.ALTER),)
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
PREFIX = "The update failed for all features since the following feature had an error: "


def _check(ctx: RequestContext, levels: FeatureLevels, update: dict, version: int
           ) -> str | None:
    name, level = update["feature"], update["max_version_level"]
    kind = update["upgrade_type"] if version >= 1 else UPGRADE
    head = f"Invalid update version {level} for feature {name}."
    controller = ctx.cluster.controller_id
    if kind not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        return f"{head} The controller does not support the given upgrade type."
    if name not in levels.supported:
        return f"{head} Local controller {controller} does not support this feature."
    lo, hi = levels.supported[name]
    if level > hi or (level < lo and level != 0):
        return f"{head} Local controller {controller} only supports versions {lo}-{hi}"
    current = levels.finalized.get(name, 0)
    if name == "metadata.version" and level < current:
        return (f"Unsupported metadata.version downgrade from {current} to {level}. Refusing "
                "to perform the requested downgrade because it might delete metadata "
                "information.")
    if level < current and kind == UPGRADE:
        return (f"{head} Can't downgrade the version of this feature without setting the "
                "upgrade type to either safe or unsafe downgrade.")
    return None


def handle(ctx: RequestContext, req: dict, version: int) -> dict:
    levels = ctx.services.features or FeatureLevels()
    updates = req["feature_updates"]
    for update in updates:
        problem = _check(ctx, levels, update, version)
        if problem is not None:
            return {"throttle_time_ms": 0, "error_code": E.INVALID_UPDATE_VERSION,
                    "error_message": PREFIX + problem, "results": []}
    if not (version >= 1 and req["validate_only"]) and updates:
        for update in updates:
            name, level = update["feature"], update["max_version_level"]
            if name == "kraft.version":
                continue
            if level == 0:
                levels.finalized.pop(name, None)
            else:
                levels.finalized[name] = level
        levels.epoch += 1
    return {"throttle_time_ms": 0, "error_code": E.NONE, "error_message": None,
            "results": [{"feature": u["feature"], "error_code": E.NONE, "error_message": "NONE"}
                        for u in updates]}
