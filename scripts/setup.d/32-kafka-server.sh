#!/usr/bin/env bash
# Apache Kafka's broker jars from Maven Central for the real-Kafka target of the client
# tests, the schema and codec checks and bench/compare.py: the default release and the
# older ones the checks compare against, through client_tests/kafka-server/pom.xml into
# the gitignored .cache/kafka/<version> (client_tests/kafka_cluster.py; idempotent).
set -euo pipefail
cd "$(dirname "$0")/../.."
for tool in java mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "32-kafka-server.sh: $tool is not installed; install a JDK (>= 17) and Maven" >&2
    exit 1
  fi
done
python3 -m client_tests.kafka_cluster --fetch-only --all-versions
