"""Record what a real Apache Kafka broker answers to ApiVersions, per release.

    python scripts/kafka_api_versions.py [--version 4.4.0 ...]

starts each release once (client_tests/kafka_cluster.py: one KRaft controller and one
broker, Kafka's own jars from Maven Central), sends ApiVersions v4 to the broker's
PLAINTEXT listener and writes the answer (API key ranges, supported and finalized
features) to tests/data/kafka-api-versions/<version>.json. tests/test_api_versions_kafka.py
holds every ``--kafka-version`` of the emulator against these files, so CI needs no JVM;
rerun this script when a supported release changes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from client_tests.kafka_cluster import SUPPORTED_VERSIONS, KafkaCluster  # noqa: E402
from emulator.blocking_client import BlockingConnection  # noqa: E402

OUT = ROOT / "tests" / "data" / "kafka-api-versions"
REQUEST_VERSION = 4


def api_versions(port: int) -> dict:
    """The broker's ApiVersions answer as plain data."""
    with BlockingConnection.connect("127.0.0.1", port, "kafka-api-versions", 10) as c:
        body = c.call(18, REQUEST_VERSION, {"client_software_name": "kafka-emulator-recorder",
                                            "client_software_version": "1"})
    if body["error_code"] != 0:
        raise RuntimeError(f"ApiVersions error {body['error_code']}")
    return {
        "api_keys": {str(k["api_key"]): [k["min_version"], k["max_version"]]
                     for k in body["api_keys"]},
        "supported_features": {f["name"]: [f["min_version"], f["max_version"]]
                               for f in body["supported_features"]},
        "finalized_features": {f["name"]: f["max_version_level"]
                               for f in body["finalized_features"]},
    }


def record(version: str) -> Path:
    with KafkaCluster(brokers=1, version=version) as kafka:
        answer = api_versions(kafka.listener_port(1))
    doc = {
        "kafka_version": version,
        "measured": "ApiVersions v4 to a KRaft broker (process.roles=broker) on PLAINTEXT, "
                    "Kafka's default configs",
        "regenerate": f"python scripts/kafka_api_versions.py --version {version}",
        **answer,
    }
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{version}.json"
    path.write_text(json.dumps(doc, indent=1, sort_keys=False) + "\n")
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--version", action="append",
                    help=f"Kafka release (repeatable); default: {', '.join(SUPPORTED_VERSIONS)}")
    args = ap.parse_args()
    for version in args.version or SUPPORTED_VERSIONS:
        print(f"Apache Kafka {version}: starting ...", flush=True)
        path = record(version)
        data = json.loads(path.read_text())
        print(f"  {len(data['api_keys'])} API keys, finalized features "
              f"{data['finalized_features']} -> {path.relative_to(ROOT)}", flush=True)


if __name__ == "__main__":
    main()
