#!/usr/bin/env bash
# kcat from Debian, for the kcat client tests.
set -euo pipefail
if ! command -v kcat >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq kcat >/dev/null
fi
kcat -V | head -1
