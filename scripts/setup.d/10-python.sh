#!/usr/bin/env bash
# The package itself (compiling the Cython core) with its test extras.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/progress.sh
progress "pip: the package (compiling the Cython core) and its test extras" \
  python3 -m pip install --progress-bar off -e '.[test,fast]'
