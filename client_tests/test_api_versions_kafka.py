"""ApiVersions per --kafka-version against what a real broker of that release answered.

The real answers are recorded in tests/data/kafka-api-versions/<release>.json by
``python scripts/kafka_api_versions.py`` (it starts each release once with Kafka's jars
from Maven Central), so this test needs no JVM. For every measured release the emulator,
posing as it, must advertise exactly the broker's ranges for every key it serves, no key
the broker did not, and the broker's features, except for the gaps declared below
(keys another part of the emulator does not serve yet; a feature level not reached yet).
A new gap fails, and so does a declared one that has closed: the declaration is then
stale and must go.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rawkafka import Conn

from emulator import Cluster
from emulator.handlers import HANDLERS

# Not run with --target kafka: compares the emulator's ApiVersions with Kafka's itself.
pytestmark = pytest.mark.emulator_only

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "kafka-api-versions"
RELEASES = {"4.4": "4.4.0", "4.3": "4.3.1", "4.2": "4.2.2", "4.1": "4.1.0", "4.0": "4.0.0"}
# Keys a 4.x broker serves that the emulator does not (yet); never advertised. Empty:
# every key of every measured release is served.
KNOWN_GAPS: set[int] = set()
# Feature levels the emulator does not reach yet: name -> highest level it offers.
FEATURE_GAPS: dict[str, int] = {}
# A group protocol's feature is offered only while its keys are served.
FEATURE_KEYS = {"group.version": {68, 69}, "share.version": {76, 77, 78, 79},
                "streams.version": {88, 89}}


def _ask(release: str, version: int = 4) -> dict:
    with Cluster(brokers=1, port=0, kafka_version=release) as cluster:
        conn = Conn(cluster)
        try:
            return conn.call(18, version, {"client_software_name": "api-versions-test",
                                           "client_software_version": "1"})
        finally:
            conn.close()


def _cap(name: str) -> int:
    if name in FEATURE_KEYS and not FEATURE_KEYS[name] <= HANDLERS.keys():
        return 0
    return FEATURE_GAPS.get(name, 1 << 15)


@pytest.mark.parametrize("release", sorted(RELEASES))
def test_api_versions_match_the_real_broker(release: str) -> None:
    kafka = json.loads((DATA / f"{RELEASES[release]}.json").read_text())
    body = _ask(release)
    assert body["error_code"] == 0
    ours = {k["api_key"]: (k["min_version"], k["max_version"]) for k in body["api_keys"]}
    theirs = {int(k): tuple(r) for k, r in kafka["api_keys"].items()}
    assert set(ours) <= set(theirs), f"advertised beyond Kafka {release}: {set(ours) - set(theirs)}"
    missing = set(theirs) - set(ours)
    assert missing <= KNOWN_GAPS, f"Kafka {release} serves {missing - KNOWN_GAPS}, we do not"
    stale = (KNOWN_GAPS & set(theirs)) - missing
    assert not stale, f"KNOWN_GAPS {sorted(stale)} are served now: remove them"
    assert missing == set(theirs) - set(HANDLERS), "a served key is left out"
    wrong = {k: (ours[k], theirs[k]) for k in ours if ours[k] != theirs[k]}
    assert not wrong, f"ranges differ from Kafka {release} (ours, Kafka's): {wrong}"

    supported = {f["name"]: (f["min_version"], f["max_version"])
                 for f in body["supported_features"]}
    want = {n: (lo, max(lo, min(hi, _cap(n)))) for n, (lo, hi)
            in kafka["supported_features"].items()}
    assert supported == want
    finalized = {f["name"]: f["max_version_level"] for f in body["finalized_features"]}
    want_final = {n: min(lvl, _cap(n)) for n, lvl in kafka["finalized_features"].items()
                  if min(lvl, _cap(n)) > 0}
    assert finalized == want_final
    assert body["finalized_features_epoch"] >= 0


def test_default_release_is_4_4() -> None:
    with Cluster(brokers=1, port=0) as cluster:
        assert cluster.kafka_version == "4.4"


def test_v3_leaves_out_features_with_minimum_zero() -> None:
    """KAFKA-17011: as a real 4.4 broker answers a v3 request (measured)."""
    body = _ask("4.4", version=3)
    assert [f["name"] for f in body["supported_features"]] == ["metadata.version"]


def test_v5_cluster_and_node_checks(cluster: Cluster) -> None:
    """KIP-1242, as a real 4.4 broker answers (measured): both or neither of cluster id
    and node id, and a mismatch asks the client to rebootstrap."""
    conn = Conn(cluster)
    broker = min(cluster.state.brokers)
    base = {"client_software_name": "t", "client_software_version": "1"}
    try:
        for cid, nid, code in [(None, -1, 0), ("other", -1, 42), (None, broker, 42),
                               (cluster.state.cluster_id, broker, 0),
                               (cluster.state.cluster_id, broker + 1, 129),
                               ("other", broker, 129)]:
            body = conn.call(18, 5, {**base, "cluster_id": cid, "node_id": nid})
            assert body["error_code"] == code, (cid, nid)
        assert conn.call(18, 3, {"client_software_name": "a b",
                                 "client_software_version": "1"})["error_code"] == 42
    finally:
        conn.close()
