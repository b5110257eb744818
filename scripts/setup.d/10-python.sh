#!/usr/bin/env bash
# The package itself (compiling the Cython core) with its test extras.
set -euo pipefail
python3 -m pip install -q -e '.[test,fast]'
