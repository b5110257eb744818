#!/usr/bin/env bash
# Kafka Streams for client_tests/test_data_dir.py: compiles client_tests/java/streams/
# against the tools classpath that 30-java.sh resolved (kafka-streams is on it, see
# client_tests/java/pom.xml) into client_tests/java/.classes-streams.
set -euo pipefail
cd "$(dirname "$0")/../../client_tests/java"
if ! ls .tools-jars/kafka-streams-*.jar >/dev/null 2>&1; then
  echo "34-java-streams.sh: no kafka-streams jar in client_tests/java/.tools-jars;" \
    "run scripts/setup.d/30-java.sh first" >&2
  exit 1
fi
mkdir -p .classes-streams
if [ ! -f .classes-streams/WordCount.class ] \
    || [ -n "$(find streams -newer .classes-streams/WordCount.class)" ]; then
  echo "34-java-streams.sh: compiling client_tests/java/streams ..."
  javac -nowarn -d .classes-streams -cp '.tools-jars/*' streams/*.java
fi
# The streams group protocol (KIP-1071) app: Kafka Streams 4.4.0 is not on Maven
# Central, so it runs on the tools' release (kafka-streams and kafka-clients 4.3.1).
mkdir -p .classes-streams-protocol
if [ ! -f .classes-streams-protocol/StreamsGroupWordCount.class ] \
    || [ -n "$(find streams-protocol -newer .classes-streams-protocol/StreamsGroupWordCount.class)" ]; then
  echo "34-java-streams.sh: compiling client_tests/java/streams-protocol ..."
  javac -nowarn -d .classes-streams-protocol -cp '.tools-jars/*' streams-protocol/*.java
fi
echo "java streams: client_tests/java/.classes-streams, .classes-streams-protocol"
