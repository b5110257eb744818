#!/usr/bin/env bash
# Kafka's Java Admin client and tools (kafka-reassign-partitions, kafka-topics) for
# client_tests/test_reassign_java.py: jars from Maven Central through
# client_tests/java/pom.xml (the Kafka version lives there, once) into a gitignored
# cache, then the small Java driver compiled against them.
set -euo pipefail
cd "$(dirname "$0")/../../client_tests/java"
for tool in java javac mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "30-java.sh: $tool is not installed; install a JDK (>= 17) and Maven" >&2
    exit 1
  fi
done
stamp=.jars/.pom.sha1
want=$(sha1sum pom.xml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  rm -rf .jars
  mvn -q -f pom.xml dependency:copy-dependencies -DoutputDirectory=.jars
  echo "$want" > "$stamp"
fi
mkdir -p .classes
if [ ! -f .classes/ReassignClient.class ] || [ -n "$(find src -newer .classes/ReassignClient.class)" ]; then
  javac -nowarn -d .classes -cp '.jars/*' src/*.java
fi
echo "java helper: client_tests/java/.classes ($(ls .jars | grep -c '\.jar$') jars)"
