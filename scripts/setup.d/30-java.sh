#!/usr/bin/env bash
# Kafka's Java clients and tools (kafka-reassign-partitions, kafka-topics, kafka-configs) for the Java
# client tests: jars from Maven Central through client_tests/java/pom.xml (the Kafka
# version lives there, once) into gitignored caches - the clients in .jars, the tools on
# their own classpath in .tools-jars (see the pom for why) - then the small Java driver
# compiled against the clients.
set -euo pipefail
. "$(dirname "$0")/../lib/progress.sh"
cd "$(dirname "$0")/../../client_tests/java"
for tool in java javac mvn; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "30-java.sh: $tool is not installed; install a JDK (>= 17) and Maven" >&2
    exit 1
  fi
done
want=$(sha1sum pom.xml | cut -d' ' -f1)
fetch() {  # fetch DIR [maven args]: copy the pom's dependencies into DIR unless current
  local dir=$1
  shift
  if [ ! -f "$dir/.pom.sha1" ] || [ "$(cat "$dir/.pom.sha1")" != "$want" ]; then
    rm -rf "$dir" .classes
    progress "30-java.sh: resolving $dir from Maven Central" \
      mvn -B -f pom.xml "$@" dependency:copy-dependencies -DoutputDirectory="$dir"
    echo "$want" > "$dir/.pom.sha1"
  fi
}
fetch .jars
fetch .tools-jars -Ptools
mkdir -p .classes
if [ ! -f .classes/ReassignClient.class ] || [ -n "$(find src -newer .classes/ReassignClient.class)" ]; then
  javac -nowarn -d .classes -cp '.jars/*' src/*.java
fi
echo "java helper: client_tests/java/.classes ($(ls .jars | grep -c '\.jar$') client jars," \
  "$(ls .tools-jars | grep -c '\.jar$') tool jars)"
