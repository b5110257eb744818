"""Golden bytes captured from real clients (tests/golden/capture.py).

Each captured request frame must decode with our schemas and re-encode to the
very same bytes: the strongest check that field order, types, nullability,
compact encodings and tagged fields match what real clients send.
"""

from __future__ import annotations

import json
import pathlib

import pytest

from wire.connection import ServerConnection
from wire.messages import REQUESTS

FRAMES = pathlib.Path(__file__).parent / "golden" / "frames.json"


def _entries() -> list[dict]:
    assert FRAMES.exists(), f"{FRAMES} is missing: run python tests/golden/capture.py"
    return json.loads(FRAMES.read_text())


def test_golden_set_covers_several_clients_and_apis() -> None:
    entries = _entries()
    assert {e["client"] for e in entries} >= {"confluent-kafka", "kafka-python", "aiokafka"}
    assert {e["api_key"] for e in entries} >= {0, 1, 2, 3, 18}


@pytest.mark.parametrize("entry", _entries(),
                         ids=lambda e: f"{e['client']}-key{e['api_key']}-v{e['api_version']}")
def test_decode_and_reencode_identically(entry: dict) -> None:
    frame = bytes.fromhex(entry["frame"])
    hdr = ServerConnection.read_header(frame)
    assert (hdr.api_key, hdr.api_version) == (entry["api_key"], entry["api_version"])
    codec = REQUESTS[hdr.api_key]
    body, end = codec.decode(frame, hdr.api_version, hdr.body_offset)
    assert end == len(frame), "trailing bytes after the body"
    assert codec.encode(body, hdr.api_version) == frame[hdr.body_offset:]
