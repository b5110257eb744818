"""One Kafka connection without I/O: bytes in, messages out; messages in, bytes out.

Every Kafka connection carries size-prefixed frames (an INT32 length, then that many
bytes). A client numbers its requests with correlation ids, a broker answers them in
order echoing each id, and which header version a request or response uses follows the
API's flexible versions (wire/frames.py). This module keeps that bookkeeping in one
place and does no I/O: the caller owns the socket (the server's asyncio streams in
emulator/server, a blocking socket in emulator/blocking_client.py, a selector loop in a benchmark)
and hands bytes in and out, so that the server, the tools, the tests and the benchmarks
frame and match requests the same way.

``ServerConnection``: frames (or raw bytes) in, decoded request headers and bodies out;
response bodies in, frames out. ``ClientConnection``: request bodies in, frames out
with correlation ids assigned; bytes in, decoded responses out, each matched to the
request it answers.
"""

from __future__ import annotations

import struct
from collections import deque
from dataclasses import dataclass
from typing import Any

from wire.codec import DecodeError
from wire.frames import (
    RequestHeader,
    decode_response,
    encode_request,
    read_request_header,
    response_header,
)
from wire.messages import REQUESTS, RESPONSES

SIZE = struct.Struct(">i")
_CORR = struct.Struct(">i")
Body = dict[str, Any]


class FramingError(DecodeError):
    """The byte stream is not a sequence of size-prefixed frames (a negative size, a
    size past the limit, a response nobody asked for): the connection must close."""


def frame_size(prefix: bytes | bytearray | memoryview) -> int:
    """The size a frame's four-byte prefix announces."""
    size: int = SIZE.unpack_from(prefix, 0)[0]
    return size


def frame_complete(buf: bytes | bytearray | memoryview) -> bool:
    """Does ``buf`` start with a whole frame, prefix and body?"""
    return len(buf) >= 4 and len(buf) >= 4 + SIZE.unpack_from(buf, 0)[0]


def size_prefixed(payload: bytes) -> bytes:
    """``payload`` as one frame (SASL v0 tokens travel so, without Kafka headers)."""
    return SIZE.pack(len(payload)) + payload


class FrameBuffer:
    """Bytes in, whole frames (without their size prefix) out."""

    __slots__ = ("_buf", "max_frame_bytes")

    def __init__(self, max_frame_bytes: int = 0x7FFFFFFF) -> None:
        self._buf = bytearray()
        self.max_frame_bytes = max_frame_bytes

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        self._buf += data

    def frame_waiting(self) -> bool:
        return frame_complete(self._buf)

    @property
    def buffered(self) -> int:
        """Bytes received and not yet returned as a frame."""
        return len(self._buf)

    def next_frame(self) -> bytes | None:
        """The next whole frame, or None until its last byte has arrived."""
        buf = self._buf
        if len(buf) < 4:
            return None
        size = frame_size(buf)
        if size < 0 or size > self.max_frame_bytes:
            raise FramingError(f"frame size {size} is outside 0..{self.max_frame_bytes}")
        end = 4 + size
        if len(buf) < end:
            return None
        frame = bytes(buf[4:end])
        del buf[:end]
        return frame


def _response_parts(api_key: int, api_version: int, correlation_id: int,
                    body: Body) -> tuple[list[bytes], int]:
    """(the parts of a response frame, size prefix first; the frame's size)."""
    parts = [b"", response_header(api_key, api_version, correlation_id)]
    RESPONSES[api_key].encode_into(body, api_version, parts)
    size = sum(map(len, parts))
    parts[0] = SIZE.pack(size)
    return parts, size + 4


def encode_response(api_key: int, api_version: int, correlation_id: int, body: Body) -> bytes:
    """A whole response frame, size prefix included, built with one copy (a Fetch
    answer may carry megabytes)."""
    return b"".join(_response_parts(api_key, api_version, correlation_id, body)[0])


# A frame at least this large is handed out in parts (``encode_response_frame``).
LARGE_FRAME = 1 << 20
# Parts shorter than this are joined to their neighbours (a writev of a few large buffers).
_SMALL_PART = 1 << 14
Frame = bytes | list[bytes]


def encode_response_frame(api_key: int, api_version: int, correlation_id: int,
                          body: Body) -> Frame:
    """``encode_response``, or for a frame of LARGE_FRAME bytes or more the same bytes as
    a list of parts to be written in order (one writev): the large parts (a Fetch
    answer's records) as they are, the small ones between them joined. Joining a 50 MiB
    Fetch answer would copy it into a fresh allocation, and one above glibc's largest
    mmap threshold (32 MiB) is page-faulted anew every time: ~5x the copy's own cost."""
    parts, size = _response_parts(api_key, api_version, correlation_id, body)
    if size < LARGE_FRAME:
        return b"".join(parts)
    out: list[bytes] = []
    run: list[bytes] = []
    for part in parts:
        if len(part) < _SMALL_PART:
            run.append(part)
            continue
        if run:
            out.append(run[0] if len(run) == 1 else b"".join(run))
            run = []
        out.append(part)
    if run:
        out.append(run[0] if len(run) == 1 else b"".join(run))
    return out


class ServerConnection:
    """A broker's side of one connection.

    A server that reads frames itself (emulator/server reserves the memory of a frame
    before reading its body) uses ``read_header``, ``read_body`` and
    ``encode_response`` per frame; one that has only bytes feeds ``receive_data`` and
    takes ``next_request``. Which versions to serve is the caller's business: an
    unknown key or version still has its header read (``read_header``), so that the
    caller can answer or close with the right correlation id.
    """

    __slots__ = ("_frames",)

    def __init__(self, max_frame_bytes: int = 0x7FFFFFFF) -> None:
        self._frames = FrameBuffer(max_frame_bytes)

    @property
    def max_frame_bytes(self) -> int:
        return self._frames.max_frame_bytes

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        self._frames.receive_data(data)

    def frame_waiting(self) -> bool:
        return self._frames.frame_waiting()

    def next_frame(self) -> bytes | None:
        return self._frames.next_frame()

    def next_request(self) -> tuple[RequestHeader, Body] | None:
        """The next whole request, header and body, or None until it has arrived."""
        frame = self._frames.next_frame()
        if frame is None:
            return None
        header = self.read_header(frame)
        return header, self.read_body(header, frame)

    def size_allowed(self, size: int) -> bool:
        """May a frame of ``size`` bytes be read (socket.request.max.bytes)?"""
        return 0 <= size <= self._frames.max_frame_bytes

    # The request header (wire/frames.py); DecodeError when the frame is too short.
    read_header = staticmethod(read_request_header)

    @staticmethod
    def read_body(header: RequestHeader, frame: bytes) -> Body:
        """The request body (every schema field, absent ones at their default);
        DecodeError when it does not decode at the header's version, KeyError for an
        API key without a schema."""
        body, _end = REQUESTS[header.api_key].decode(frame, header.api_version,
                                                     header.body_offset)
        return body

    encode_response = staticmethod(encode_response)

    def send_response(self, header: RequestHeader, body: Body) -> bytes:
        """The frame answering the request ``header`` read."""
        return encode_response(header.api_key, header.api_version, header.correlation_id,
                               body)


@dataclass(slots=True, frozen=True)
class PendingRequest:
    """A request sent and not yet answered."""

    correlation_id: int
    api_key: int
    api_version: int


@dataclass(slots=True)
class Response:
    """A decoded response and the request it answers."""

    correlation_id: int
    api_key: int
    api_version: int
    body: Body
    size: int  # the frame's bytes, its size prefix included


class ClientConnection:
    """A client's side of one connection.

    ``send_request`` assigns the next correlation id (``last_correlation_id`` says
    which) unless given one, and remembers the request when an answer is expected
    (an acks=0 Produce gets none). A broker answers in request order, so each response
    must carry the id of the oldest request pending; anything else is a FramingError.
    """

    __slots__ = ("client_id", "last_correlation_id", "_next_id", "_pending", "_frames")

    def __init__(self, client_id: str | None = "kafka-emulator",
                 first_correlation_id: int = 1, max_frame_bytes: int = 0x7FFFFFFF) -> None:
        self.client_id = client_id
        self.last_correlation_id = first_correlation_id - 1
        self._next_id = first_correlation_id
        self._pending: deque[PendingRequest] = deque()
        self._frames = FrameBuffer(max_frame_bytes)

    @property
    def pending(self) -> list[PendingRequest]:
        """The requests sent and not yet answered, oldest first."""
        return list(self._pending)

    def send_request(self, api_key: int, api_version: int, body: Body, *,
                     correlation_id: int | None = None,
                     expect_response: bool = True) -> bytes:
        """The frame of a request (size prefix included)."""
        if correlation_id is None:
            correlation_id = self._next_id
            self._next_id = (self._next_id + 1) & 0x7FFFFFFF
        self.last_correlation_id = correlation_id
        data = encode_request(api_key, api_version, correlation_id, self.client_id, body)
        if expect_response:
            self._pending.append(PendingRequest(correlation_id, api_key, api_version))
        return data

    def expect(self, api_key: int, api_version: int, correlation_id: int) -> None:
        """Await the answer to a request that left by other means: a frame encoded once
        and sent again as is (a benchmark's), or sent on the same socket earlier."""
        self._pending.append(PendingRequest(correlation_id, api_key, api_version))

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        self._frames.receive_data(data)

    def frame_waiting(self) -> bool:
        return self._frames.frame_waiting()

    @property
    def buffered(self) -> int:
        """Bytes received and not yet returned."""
        return self._frames.buffered

    def next_frame(self) -> bytes | None:
        """The next whole frame as it came (a SASL v0 token, or a response the caller
        decodes itself: it is no longer pending then)."""
        frame = self._frames.next_frame()
        if frame is not None and self._pending and len(frame) >= 4 and \
                _CORR.unpack_from(frame, 0)[0] == self._pending[0].correlation_id:
            self._pending.popleft()
        return frame

    def next_response(self) -> Response | None:
        """The next response, decoded, or None until it has arrived."""
        frame = self._frames.next_frame()
        if frame is None:
            return None
        if len(frame) < 4:
            raise FramingError(f"a response frame of {len(frame)} bytes")
        corr: int = _CORR.unpack_from(frame, 0)[0]
        if not self._pending:
            raise FramingError(f"a response with correlation id {corr} to no request")
        req = self._pending[0]
        if corr != req.correlation_id:
            raise FramingError(f"correlation id {corr} answers no pending request (the "
                               f"oldest is {req.correlation_id})")
        self._pending.popleft()
        _corr, body = decode_response(req.api_key, req.api_version, frame)
        return Response(corr, req.api_key, req.api_version, body, 4 + len(frame))
