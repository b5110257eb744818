#!/usr/bin/env bash
# The emulator's own client modules in clients/ (client_tests/test_emulator_clients.py runs
# their tests against the image): Java's KafkaEmulatorContainer with its test dependencies
# and JUnit's console launcher from Maven Central (clients/java/pom.xml, -P console) into
# clients/java/.jars, main and test classes compiled into .classes, and its Spring Boot
# @ServiceConnection test against 52-testcontainers.sh's Spring Boot jars; the Go module's test
# binary from the Go module proxy (versions pinned by clients/go/go.sum) into
# clients/go/.bin; the Node package's dependencies from npm (package-lock.json). Idempotent:
# each part is redone only when its inputs changed. The image itself is 50-docker.sh's.
set -euo pipefail
. "$(dirname "$0")/../lib/progress.sh"
cd "$(dirname "$0")/../../clients"
for tool in java javac mvn go node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "54-emulator-clients.sh: $tool is not installed (Java >= 17 with Maven, Go, Node >= 20 with npm)" >&2
    exit 1
  fi
done

cd java
want=$(sha1sum pom.xml | cut -d' ' -f1)
if [ ! -f .jars/.pom.sha1 ] || [ "$(cat .jars/.pom.sha1)" != "$want" ]; then
  rm -rf .jars .classes
  progress "54-emulator-clients.sh: the Java module's dependencies from Maven Central" \
    mvn -B -f pom.xml -P console dependency:copy-dependencies -DoutputDirectory=.jars
  echo "$want" > .jars/.pom.sha1
fi
stamp=.classes/test/io/github/kafkaemulator/testcontainers/KafkaEmulatorContainerTest.class
if [ ! -f "$stamp" ] || [ -n "$(find src -newer "$stamp")" ]; then
  rm -rf .classes
  mkdir -p .classes/main .classes/test
  javac -Xlint:all,-processing -Werror -d .classes/main -cp '.jars/*' $(find src/main -name '*.java')
  javac -nowarn -d .classes/test -cp ".classes/main:.jars/*" $(find src/test -name '*.java')
fi
spring=../../client_tests/testcontainers_spring/.jars
if [ ! -d "$spring" ]; then
  echo "54-emulator-clients.sh: $spring is missing; run scripts/setup.d/52-testcontainers.sh first" >&2
  exit 1
fi
stamp=.classes/spring/io/github/kafkaemulator/testcontainers/SpringServiceConnectionTest.class
if [ ! -f "$stamp" ] || [ -n "$(find src .classes/main -newer "$stamp")" ]; then
  rm -rf .classes/spring
  mkdir -p .classes/spring
  javac -nowarn -d .classes/spring -cp ".classes/main:$spring/*" $(find src/spring -name '*.java')
fi
cd ..

cd go
progress "54-emulator-clients.sh: the Go module's test" \
  go test -c -o .bin/kafkaemulator.test .
go vet .
cd ..

cd node
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  progress "54-emulator-clients.sh: the Node package's dependencies from npm" npm ci --no-audit --no-fund
fi
cd ..
echo "emulator clients: Java clients/java/.classes ($(ls java/.jars | grep -c '\.jar$') jars)," \
  "Go clients/go/.bin/kafkaemulator.test," \
  "Node testcontainers $(node -p 'require("./node/node_modules/testcontainers/package.json").version')"
