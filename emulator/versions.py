"""Which API version ranges we advertise, and posing as an older Kafka.

The handler registry says what we implement; ``advertised`` clamps that to the
maxima of the Kafka release we pose as (``--kafka-version``), so a client sees
the maxima such a broker would send. APIs a release did not have are left out.
Minima stay at what we serve: releases before 4.0 also accepted the versions that
KIP-896 removed (message formats v0/v1), which the emulator does not implement.
"""

from __future__ import annotations

# Maxima that differ from Kafka 4.1 (the handlers' own ranges) in older releases.
# Keys missing from an older release's table keep 4.1's maximum; keys listed in
# ABSENT were not served by that release at all.
_MAXIMA: dict[str, dict[int, int]] = {
    "4.1": {},
    "4.0": {0: 12, 1: 17, 8: 9, 9: 9, 22: 5, 45: 0, 66: 1},
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
_ABSENT: dict[str, set[int]] = {
    "4.1": set(),
    "4.0": set(),
    "3.9": {74},
    "3.7": {74, 75},
    "3.5": {68, 69, 74, 75},
    "3.0": {61, 65, 66, 68, 69, 74, 75},
    "2.8": {61, 65, 66, 68, 69, 74, 75},
}
SUPPORTED_RELEASES = tuple(_MAXIMA)


def advertised(
    implemented: dict[int, tuple[int, int]], kafka_version: str = "4.1"
) -> dict[int, tuple[int, int]]:
    """The (min, max) per API key that ApiVersions reports."""
    if kafka_version not in _MAXIMA:
        raise ValueError(
            f"unknown Kafka version {kafka_version}; choose one of {', '.join(SUPPORTED_RELEASES)}"
        )
    maxima = _MAXIMA[kafka_version]
    out = {}
    for key, (lo, hi) in implemented.items():
        if key in _ABSENT[kafka_version]:
            continue
        top = min(hi, maxima.get(key, hi))
        if top < lo:
            continue
        out[key] = (lo, top)
    return out
