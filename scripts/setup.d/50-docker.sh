#!/usr/bin/env bash
# A Docker engine and the kafka-emulator images, for client_tests/test_container.py.
#  1. docker.io (dockerd), debootstrap and docker-compose from Debian when missing;
#  2. dockerd --storage-driver=vfs in the background when no engine answers (root only;
#     log in /var/log/kafka-emulator-dockerd.log; it is left running);
#  3. kafka-emulator-base:bookworm via debootstrap + docker import when absent (no
#     registry can be reached here, so python:3.11-slim cannot be pulled);
#  4. kafka-emulator:latest and kafka-emulator-client:latest from this tree; layers are
#     cached, so a rerun with unchanged sources takes seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/progress.sh
BASE=${KAFKA_EMULATOR_BASE_IMAGE:-kafka-emulator-base:bookworm}
IMAGE=${KAFKA_EMULATOR_IMAGE:-kafka-emulator:latest}
CLIENT_IMAGE=${KAFKA_EMULATOR_CLIENT_IMAGE:-kafka-emulator-client:latest}
DOCKERD_LOG=/var/log/kafka-emulator-dockerd.log
if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v docker-compose >/dev/null 2>&1 || docker compose version >/dev/null 2>&1 \
  || missing+=(docker-compose)
if [ "${#missing[@]}" -gt 0 ]; then
  echo "installing ${missing[*]} from Debian"
  $SUDO apt-get update -qq
  progress "apt: ${missing[*]}" \
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

if ! docker info >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ]; then
    echo "50-docker: no Docker engine answers and only root may start one here" >&2
    exit 1
  fi
  echo "starting dockerd --storage-driver=vfs (log: $DOCKERD_LOG)"
  setsid nohup dockerd --storage-driver=vfs >>"$DOCKERD_LOG" 2>&1 </dev/null &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 1
  done
  if ! docker info >/dev/null 2>&1; then
    echo "50-docker: dockerd did not come up within 60 s; its log ends:" >&2
    tail -20 "$DOCKERD_LOG" >&2
    exit 1
  fi
fi
echo "docker engine $(docker version --format '{{.Server.Version}}'), storage $(docker info --format '{{.Driver}}')"

# The Compose examples publish Kafka's fixed host ports; those in the kernel's ephemeral
# range (32768-60999) could be lent to any test's outgoing connection as its source port,
# and docker-proxy then cannot bind them. Reserved, the kernel never lends them.
RESERVED=29092-29094,39092-39094,49092-49094
if [ "$(cat /proc/sys/net/ipv4/ip_local_reserved_ports 2>/dev/null)" != "$RESERVED" ]; then
  $SUDO sysctl -qw net.ipv4.ip_local_reserved_ports="$RESERVED" 2>/dev/null \
    || echo "50-docker: could not reserve the Compose examples' host ports ($RESERVED):" \
      "a test's outgoing connection may take one of them"
fi

if ! docker image inspect "$BASE" >/dev/null 2>&1; then
  progress "building $BASE (debootstrap + docker import)" \
    $SUDO bash docker/build-base-image.sh "$BASE"
fi

# BuildKit needs the buildx plugin in recent clients; the classic builder does not.
docker buildx version >/dev/null 2>&1 || export DOCKER_BUILDKIT=0
build() {  # tag dockerfile context [docker build options...]
  local tag=$1 file=$2 ctx=$3; shift 3
  progress "docker build $tag" docker build --network host --build-arg BASE_IMAGE="$BASE" \
    -f "$file" -t "$tag" "$@" "$ctx"
}
SECONDS=0
# The builder stage gets a tag of its own so its cached layers survive the prune below.
build "${IMAGE%%:*}-builder:latest" docker/Dockerfile . --target builder
build "$IMAGE" docker/Dockerfile .
build "$CLIENT_IMAGE" docker/client/Dockerfile docker/client
# Layers of earlier builds, untagged now: on the vfs driver each one is a full copy.
docker image prune -f --filter label=org.kafka-emulator.image >/dev/null
echo "images $IMAGE, $CLIENT_IMAGE built in ${SECONDS}s"
