#!/usr/bin/env bash
# The Go helpers of the client tests, from the Go module proxy (versions pinned by
# client_tests/go/go.sum): the reassignment helper for client_tests/test_reassign_go.py
# (franz-go's kadm) and segmentio/kafka-go's group reader for client_tests/test_kafka_go.py.
set -euo pipefail
cd "$(dirname "$0")/../../client_tests/go"
if ! command -v go >/dev/null 2>&1; then
  echo "35-go.sh: the Go toolchain (go) is not installed; install Go >= 1.26 (go.mod)" >&2
  exit 1
fi
go build -o .bin/reassign ./reassign
go build -o .bin/kafkago ./kafkago
echo "go helpers: client_tests/go/.bin/reassign, client_tests/go/.bin/kafkago"
