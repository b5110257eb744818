"""Which API version ranges and features we advertise, posing as one Kafka release.

``--kafka-version`` picks the release. For 4.0-4.4 the tables below are what a real
broker of that release (KRaft, process.roles=broker, default configs) answered to
ApiVersions, measured by scripts/kafka_api_versions.py into tests/data/kafka-api-versions/
(tests/test_api_versions_kafka.py holds this module to those answers). For the 3.x and
2.8 releases, which predate that recording, 4.0's table is clamped by hand-written maxima.

The handler registry says what we implement; ``advertised`` is the intersection of the
release's table with it, so a key the release serves but we do not (yet) is left out
rather than answered with a canned success. Minima of pre-4.0 releases stay at what we
serve: those releases also accepted the versions KIP-896 removed (message formats v0/v1),
which the emulator does not implement.

Features (ApiVersions v3+ supported_features / finalized_features) follow the same rule:
the release's levels, capped by what the emulator implements (``FEATURE_KEYS``: a group
protocol's feature needs its API keys served; ``IMPLEMENTED_FEATURE_LEVELS`` caps the rest).
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass, field

Ranges = dict[int, tuple[int, int]]

# What Apache Kafka 4.4.0's broker advertised (tests/data/kafka-api-versions/4.4.0.json).
_KAFKA_4_4: Ranges = {
    0: (0, 13), 1: (4, 18), 2: (1, 11), 3: (0, 13), 8: (2, 10), 9: (1, 10), 10: (0, 6),
    11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 17: (0, 1),
    18: (0, 5), 19: (2, 7), 20: (1, 6), 21: (0, 2), 22: (0, 5), 23: (2, 4), 24: (0, 5),
    25: (0, 4), 26: (0, 5), 27: (1, 2), 28: (0, 6), 29: (1, 3), 30: (1, 3), 31: (1, 3),
    32: (1, 4), 33: (0, 2), 34: (1, 2), 35: (1, 5), 36: (0, 2), 37: (0, 3), 38: (1, 3),
    39: (1, 2), 40: (1, 2), 41: (1, 3), 42: (0, 3), 43: (0, 2), 44: (0, 1), 45: (0, 1),
    46: (0, 0), 47: (0, 0), 48: (0, 1), 49: (0, 1), 50: (0, 0), 51: (0, 0), 55: (0, 2),
    57: (0, 2), 60: (0, 2), 61: (0, 0), 64: (0, 0), 65: (0, 0), 66: (0, 2), 68: (0, 1),
    69: (0, 1), 74: (0, 1), 75: (0, 0), 76: (1, 1), 77: (1, 1), 78: (1, 2), 79: (1, 2),
    80: (0, 1), 81: (0, 0), 83: (0, 0), 84: (0, 0), 85: (0, 1), 86: (0, 0), 87: (0, 1),
    88: (0, 1), 89: (0, 1), 90: (0, 1), 91: (0, 0), 92: (0, 0), 93: (0, 0), 94: (0, 0),
}


def _step_back(newer: Ranges, changed: Ranges, absent: Set[int] = frozenset()) -> Ranges:
    """An older release's table: ``newer`` with the ranges that differed and without
    the keys it did not serve yet."""
    return {k: changed.get(k, r) for k, r in newer.items() if k not in absent}


# Each measured release as its difference from the next newer one.
_KAFKA_4_3 = _step_back(_KAFKA_4_4, {18: (0, 4), 28: (0, 5), 42: (0, 2), 88: (0, 0),
                                     89: (0, 0)}, {93, 94})
_KAFKA_4_2 = _step_back(_KAFKA_4_3, {35: (1, 4)})
_KAFKA_4_1 = _step_back(_KAFKA_4_2, {2: (1, 10), 8: (2, 9), 9: (1, 9), 27: (1, 1),
                                     78: (1, 1), 79: (1, 1), 80: (0, 0), 85: (0, 0),
                                     87: (0, 0), 90: (0, 0)}, {88, 89})
_KAFKA_4_0 = _step_back(_KAFKA_4_1, {0: (0, 12), 1: (4, 17), 11: (2, 9), 45: (0, 0),
                                     66: (0, 1), 74: (0, 0)},
                        {76, 77, 78, 79, 83, 84, 85, 86, 87, 90, 91, 92})

# Pre-4.0 releases: 4.0's table with these maxima, without the keys in _OLD_ABSENT.
# (Not measured from brokers; written from Kafka's release notes and message JSON.)
_OLD_MAXIMA: dict[str, dict[int, int]] = {
    "3.9": {0: 11, 1: 17, 2: 9, 3: 12, 8: 9, 9: 9, 10: 6, 11: 9, 22: 5, 45: 0, 66: 1,
            60: 1, 68: 0, 69: 0},
    "3.7": {0: 10, 1: 16, 2: 8, 3: 12, 8: 9, 9: 9, 10: 4, 11: 9, 22: 4, 45: 0, 60: 1,
            66: 0, 68: 0, 69: 0},
    "3.5": {0: 9, 1: 15, 2: 8, 3: 12, 8: 8, 9: 8, 10: 4, 11: 9, 22: 4, 24: 4, 45: 0,
            60: 0, 66: 0},
    "3.0": {0: 9, 1: 13, 2: 7, 3: 11, 8: 8, 9: 8, 10: 4, 11: 7, 12: 4, 13: 4, 14: 5,
            15: 5, 16: 4, 19: 7, 20: 6, 22: 4, 24: 3, 25: 3, 26: 3, 28: 3, 32: 4, 45: 0,
            60: 0},
    "2.8": {0: 9, 1: 12, 2: 6, 3: 11, 8: 8, 9: 7, 10: 3, 11: 7, 12: 4, 13: 4, 14: 5,
            15: 5, 16: 4, 19: 7, 20: 6, 22: 4, 24: 3, 25: 3, 26: 3, 28: 3, 32: 4, 45: 0,
            60: 0},
}
_OLD_ABSENT: dict[str, set[int]] = {
    "3.9": {74},
    "3.7": {74, 75},
    "3.5": {68, 69, 74, 75},
    "3.0": {61, 65, 66, 68, 69, 74, 75},
    "2.8": {61, 65, 66, 68, 69, 74, 75},
}


def _old(release: str) -> Ranges:
    maxima = _OLD_MAXIMA[release]
    return {k: (0, min(hi, maxima.get(k, hi))) for k, (_lo, hi) in _KAFKA_4_0.items()
            if k not in _OLD_ABSENT[release]}


_RELEASES: dict[str, Ranges] = {
    "4.4": _KAFKA_4_4, "4.3": _KAFKA_4_3, "4.2": _KAFKA_4_2, "4.1": _KAFKA_4_1,
    "4.0": _KAFKA_4_0, **{r: _old(r) for r in _OLD_MAXIMA},
}
# Releases whose table is a broker's measured answer (minima included).
MEASURED_RELEASES = ("4.4", "4.3", "4.2", "4.1", "4.0")
SUPPORTED_RELEASES = tuple(_RELEASES)
DEFAULT_RELEASE = "4.4"

# Feature levels per release, as the brokers reported them: supported (min, max) and
# the finalized level a freshly formatted cluster of that release runs at.
_SUPPORTED_FEATURES: dict[str, dict[str, tuple[int, int]]] = {
    "4.4": {"group.version": (0, 1), "kraft.version": (0, 1), "metadata.version": (7, 33),
            "share.version": (0, 2), "streams.version": (0, 1),
            "transaction.version": (0, 2), "eligible.leader.replicas.version": (0, 1)},
    "4.3": {"group.version": (0, 1), "kraft.version": (0, 1), "metadata.version": (7, 30),
            "share.version": (0, 1), "streams.version": (0, 1),
            "transaction.version": (0, 2), "eligible.leader.replicas.version": (0, 1)},
    "4.2": {"group.version": (0, 1), "kraft.version": (0, 1), "metadata.version": (7, 29),
            "share.version": (0, 1), "streams.version": (0, 1),
            "transaction.version": (0, 2), "eligible.leader.replicas.version": (0, 1)},
    "4.1": {"group.version": (0, 1), "kraft.version": (0, 1), "metadata.version": (7, 27),
            "share.version": (0, 1), "transaction.version": (0, 2),
            "eligible.leader.replicas.version": (0, 1)},
    "4.0": {"group.version": (0, 1), "kraft.version": (0, 1), "metadata.version": (7, 25),
            "transaction.version": (0, 2), "eligible.leader.replicas.version": (0, 1)},
}
_FINALIZED_FEATURES: dict[str, dict[str, int]] = {
    "4.4": {"group.version": 1, "streams.version": 1, "transaction.version": 2,
            "eligible.leader.replicas.version": 1, "share.version": 2,
            "metadata.version": 33},
    "4.3": {"group.version": 1, "streams.version": 1, "transaction.version": 2,
            "eligible.leader.replicas.version": 1, "share.version": 1,
            "metadata.version": 30},
    "4.2": {"group.version": 1, "streams.version": 1, "transaction.version": 2,
            "eligible.leader.replicas.version": 1, "share.version": 1,
            "metadata.version": 29},
    "4.1": {"group.version": 1, "transaction.version": 2,
            "eligible.leader.replicas.version": 1, "metadata.version": 27},
    "4.0": {"group.version": 1, "transaction.version": 2, "metadata.version": 25},
}
# A group protocol's feature is only offered while its API keys are served.
FEATURE_KEYS: dict[str, set[int]] = {
    "group.version": {68, 69},
    "share.version": {76, 77, 78, 79},
    "streams.version": {88, 89},
}
# The highest level of these features the emulator implements (others: the release's).
IMPLEMENTED_FEATURE_LEVELS: dict[str, int] = {}


def _check(kafka_version: str) -> None:
    if kafka_version not in _RELEASES:
        raise ValueError(f"unknown Kafka version {kafka_version}; choose one of "
                         f"{', '.join(SUPPORTED_RELEASES)}")


def advertised(implemented: Ranges, kafka_version: str = DEFAULT_RELEASE) -> Ranges:
    """The (min, max) per API key that ApiVersions reports: the release's range
    within what we implement."""
    _check(kafka_version)
    out = {}
    for key, (lo, hi) in _RELEASES[kafka_version].items():
        if key not in implemented:
            continue
        ours_lo, ours_hi = implemented[key]
        lo, hi = max(lo, ours_lo), min(hi, ours_hi)
        if lo <= hi:
            out[key] = (lo, hi)
    return out


def _feature_cap(name: str, keys: Ranges) -> int:
    if name in FEATURE_KEYS and not FEATURE_KEYS[name] <= keys.keys():
        return 0
    return IMPLEMENTED_FEATURE_LEVELS.get(name, 1 << 15)


@dataclass
class FeatureLevels:
    """The cluster's features: what it supports, the finalized levels (UpdateFeatures
    changes them) and the epoch ApiVersions reports with them (bumped on each change)."""

    supported: dict[str, tuple[int, int]] = field(default_factory=dict)
    finalized: dict[str, int] = field(default_factory=dict)
    epoch: int = 1


def features(keys: Ranges, kafka_version: str = DEFAULT_RELEASE) -> FeatureLevels:
    """Supported and finalized features for ApiVersions, given the advertised keys.

    A feature capped at level 0 is still listed as supported (0-0) the way Kafka lists
    a feature it knows but does not enable; a finalized level 0 is left out, as Kafka
    leaves it out.
    """
    _check(kafka_version)
    supported = {}
    for name, (lo, hi) in _SUPPORTED_FEATURES.get(kafka_version, {}).items():
        supported[name] = (lo, max(lo, min(hi, _feature_cap(name, keys))))
    finalized = {}
    for name, level in _FINALIZED_FEATURES.get(kafka_version, {}).items():
        level = min(level, _feature_cap(name, keys))
        if level > 0:
            finalized[name] = level
    return FeatureLevels(supported, finalized)
