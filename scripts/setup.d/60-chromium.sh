#!/usr/bin/env bash
# Headless Chromium and its chromedriver from Debian, for the web console's browser test
# (tests/test_console_browser.py drives them with selenium, from the test extra).
set -euo pipefail
. "$(dirname "$0")/../lib/progress.sh"
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  progress "apt: update" $SUDO apt-get update -qq
  progress "apt: chromium and chromium-driver" \
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver
fi
chromium --version
chromedriver --version
