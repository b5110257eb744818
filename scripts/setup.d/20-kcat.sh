#!/usr/bin/env bash
# kcat from Debian, for the kcat client tests.
set -euo pipefail
. "$(dirname "$0")/../lib/progress.sh"
if ! command -v kcat >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  progress "apt: kcat" $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kcat
fi
kcat -V | head -1
