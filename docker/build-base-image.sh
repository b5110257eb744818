#!/usr/bin/env bash
# Build kafka-emulator-base:bookworm, a minimal Debian bookworm with python3 and venv,
# without any container registry: debootstrap a root file system from Debian's mirror
# and `docker import` it. Use it as the Dockerfile's BASE_IMAGE where python:3.11-slim
# cannot be pulled:
#   docker/build-base-image.sh [TAG]
#   docker build -f docker/Dockerfile --build-arg BASE_IMAGE=kafka-emulator-base:bookworm .
# Needs root (debootstrap, chroot), debootstrap and a Docker engine.
set -euo pipefail
TAG=${1:-kafka-emulator-base:bookworm}
SUITE=${DEBIAN_SUITE:-bookworm}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
ROOT=$(mktemp -d /var/tmp/kafka-emulator-rootfs.XXXXXX)
trap 'rm -rf "$ROOT"' EXIT
chmod 755 "$ROOT"  # it becomes the image's /: mktemp's 0700 would lock out non-root users

echo "debootstrap $SUITE into $ROOT"
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
  "$SUITE" "$ROOT" "$MIRROR" >"$ROOT.log" 2>&1 || { tail -20 "$ROOT.log"; exit 1; }
rm -f "$ROOT.log"
cat >"$ROOT/etc/apt/sources.list" <<SOURCES
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
SOURCES
# Trust the CAs this host trusts beyond Debian's (a TLS-inspecting proxy's, for
# example), so that pip inside builds reaches PyPI as the host does.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$ROOT/usr/local/share/ca-certificates/"
  chroot "$ROOT" update-ca-certificates >/dev/null 2>&1
fi
# Slim: package caches, lists, docs, man pages, translations.
chroot "$ROOT" apt-get clean
rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/usr/share/doc/* "$ROOT"/usr/share/man/* \
  "$ROOT"/usr/share/locale/* "$ROOT"/usr/share/info/* "$ROOT"/var/log/*.log \
  "$ROOT"/var/cache/debconf/*-old
tar --numeric-owner -C "$ROOT" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV PIP_CERT=/etc/ssl/certs/ca-certificates.crt' \
  --change 'CMD ["python3"]' \
  - "$TAG" >/dev/null
docker image ls "$TAG"
