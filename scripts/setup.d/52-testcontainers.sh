#!/usr/bin/env bash
# Testcontainers' own Kafka modules for client_tests/test_official_image.py, each in
# the way its users get it: Java's org.testcontainers:kafka with Kafka's clients from
# Maven Central (client_tests/testcontainers_java/pom.xml) and the driver compiled
# against them; a Spring Boot test using it through @ServiceConnection (Spring Boot's
# BOM, client_tests/testcontainers_spring/pom.xml), run on JUnit's console launcher; Go's modules/kafka from the Go module proxy (versions pinned by
# client_tests/testcontainers_go/go.sum) built into .bin/tckafka; Node's
# @testcontainers/kafka and kafkajs from npm (package-lock.json). Idempotent: each part
# is redone only when its inputs changed. The image itself is 50-docker.sh's.
set -euo pipefail
. "$(dirname "$0")/../lib/progress.sh"
cd "$(dirname "$0")/../../client_tests"
for tool in java javac mvn go node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "52-testcontainers.sh: $tool is not installed (Java >= 17 with Maven, Go, Node >= 20 with npm)" >&2
    exit 1
  fi
done

cd testcontainers_java
want=$(sha1sum pom.xml | cut -d' ' -f1)
if [ ! -f .jars/.pom.sha1 ] || [ "$(cat .jars/.pom.sha1)" != "$want" ]; then
  rm -rf .jars .classes
  progress "52-testcontainers.sh: Testcontainers for Java from Maven Central" \
    mvn -B -f pom.xml dependency:copy-dependencies -DoutputDirectory=.jars
  echo "$want" > .jars/.pom.sha1
fi
if [ ! -f .classes/TestcontainersKafka.class ] || [ -n "$(find src -newer .classes/TestcontainersKafka.class)" ]; then
  mkdir -p .classes
  javac -nowarn -d .classes -cp '.jars/*' src/*.java
fi
cd ..

cd testcontainers_spring
want=$(sha1sum pom.xml | cut -d' ' -f1)
if [ ! -f .jars/.pom.sha1 ] || [ "$(cat .jars/.pom.sha1)" != "$want" ]; then
  rm -rf .jars .classes
  progress "52-testcontainers.sh: Spring Boot with spring-kafka and spring-boot-testcontainers" \
    mvn -B -f pom.xml dependency:copy-dependencies -DoutputDirectory=.jars
  echo "$want" > .jars/.pom.sha1
fi
if [ ! -f .classes/ServiceConnectionTest.class ] || [ -n "$(find src -newer .classes/ServiceConnectionTest.class)" ]; then
  mkdir -p .classes
  javac -nowarn -d .classes -cp '.jars/*' src/*.java
fi
cd ..

cd testcontainers_go
progress "52-testcontainers.sh: testcontainers-go modules/kafka" go build -o .bin/tckafka .
cd ..

cd testcontainers_node
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  progress "52-testcontainers.sh: @testcontainers/kafka from npm" npm ci --no-audit --no-fund
fi
cd ..
echo "testcontainers modules: Java $(ls testcontainers_java/.jars | grep -c '\.jar$') jars," \
  "Go testcontainers_go/.bin/tckafka, Node $(node -p 'require("./testcontainers_node/node_modules/@testcontainers/kafka/package.json").version')"
