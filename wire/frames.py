"""Request and response headers, and which header version each API version uses.

Request header v0: api_key, api_version, correlation_id. v1 adds client_id, a
nullable string that keeps its INT16 length even in v2 (flexible), which adds a
tagged-field section. Response header v0 is the correlation id; v1 adds tagged
fields, except that ApiVersions responses always use v0 so that a client can read
the error of a version the broker does not know.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from wire.codec import DecodeError, read_uvarint
from wire.messages import REQUESTS, RESPONSES

API_VERSIONS_KEY = 18
_HDR = struct.Struct(">hhih")
_CORR = struct.Struct(">i")
_SIZE = struct.Struct(">i")


@dataclass(slots=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body_offset: int  # where the request body starts in the frame
    # 0 (no client id), 1, or 2 (flexible: tagged fields follow the client id)
    header_version: int = 1
    tagged_fields: dict[int, bytes] | None = None  # by tag; None when there are none


def is_flexible(api_key: int, api_version: int, response: bool = False) -> bool:
    table = RESPONSES if response else REQUESTS
    c = table.get(api_key)
    return c is not None and c.msg.is_flexible(api_version)


def read_request_header(frame: bytes) -> RequestHeader:
    """Parse a request header; the header version follows the API's flexibility.

    For an unknown API key or version we still return the v1 part so the caller
    can answer (UNSUPPORTED_VERSION) with the right correlation id. DecodeError when
    the frame is too short for its header.
    """
    if len(frame) < 8:
        raise DecodeError("request frame shorter than a request header")
    if len(frame) < 10:
        api_key, api_version, corr = struct.unpack_from(">hhi", frame, 0)
        return RequestHeader(api_key, api_version, corr, None, 8, 0)
    api_key, api_version, corr, n = _HDR.unpack_from(frame, 0)
    pos = 10
    client_id = None
    if n >= 0:
        if pos + n > len(frame):
            raise DecodeError("client_id overruns the frame")
        client_id = str(frame[pos : pos + n], "utf-8", "replace")
        pos += n
    req = REQUESTS.get(api_key)
    # An ApiVersions newer than ours is still read with the header of a flexible
    # version (v2, tagged fields), as Kafka's ApiMessageType.requestHeaderVersion does
    # (v3+), so that its error answer can be sent; a frame without them is malformed.
    newer_api_versions = req is not None and api_key == API_VERSIONS_KEY \
        and api_version > req.msg.versions[1]
    if req is not None and (req.msg.versions[0] <= api_version <= req.msg.versions[1]
                            or newer_api_versions):
        if newer_api_versions or req.msg.is_flexible(api_version):
            tags, pos = _read_tagged_fields(frame, pos)
            return RequestHeader(api_key, api_version, corr, client_id, pos, 2, tags)
    return RequestHeader(api_key, api_version, corr, client_id, pos)


def _read_tagged_fields(frame: bytes, pos: int) -> tuple[dict[int, bytes] | None, int]:
    """A header's tagged-field section: {tag: raw value} (None when empty), and the
    position after it."""
    try:
        ntag, pos = read_uvarint(frame, pos)
        if ntag == 0:
            return None, pos
        tags: dict[int, bytes] = {}
        for _ in range(ntag):
            tag, pos = read_uvarint(frame, pos)
            size, pos = read_uvarint(frame, pos)
            if pos + size > len(frame):
                raise DecodeError("a header tagged field overruns the frame")
            tags[tag] = bytes(frame[pos : pos + size])
            pos += size
    except IndexError as e:
        raise DecodeError("the header's tagged fields overrun the frame") from e
    return tags, pos


def response_header(api_key: int, api_version: int, correlation_id: int) -> bytes:
    """Encode the response header of the right version."""
    if api_key != API_VERSIONS_KEY and is_flexible(api_key, api_version, response=True):
        return _CORR.pack(correlation_id) + b"\x00"
    return _CORR.pack(correlation_id)


def encode_request(
    api_key: int, api_version: int, correlation_id: int, client_id: str | None,
    body: dict[str, Any],
) -> bytes:
    """Encode a whole request frame (size prefix included); clients go through
    wire.connection.ClientConnection, which assigns the correlation ids."""
    cid = b"" if client_id is None else client_id.encode()
    head = struct.pack(">hhih", api_key, api_version, correlation_id, -1 if client_id is None else len(cid)) + cid
    if is_flexible(api_key, api_version):
        head += b"\x00"
    payload = head + REQUESTS[api_key].encode(body, api_version)
    return _SIZE.pack(len(payload)) + payload


def decode_response(api_key: int, api_version: int,
                    frame: bytes) -> tuple[int, dict[str, Any]]:
    """Decode a response frame (without size prefix): (correlation id, body)."""
    corr: int = _CORR.unpack_from(frame, 0)[0]
    pos = 4
    if api_key != API_VERSIONS_KEY and is_flexible(api_key, api_version, response=True):
        _tags, pos = _read_tagged_fields(frame, pos)
    body, _ = RESPONSES[api_key].decode(frame, api_version, pos)
    return corr, body
