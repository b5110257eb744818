"""wire.connection without sockets: a client and a server connection talking through
bytes handed from one to the other, byte by byte where the framing is the point."""

from __future__ import annotations

import pytest

from wire.codec import write_uvarint
from wire.connection import ClientConnection, FramingError, ServerConnection, frame_complete
from wire.frames import encode_request

API_VERSIONS = {"client_software_name": "t", "client_software_version": "1"}
METADATA = {"topics": None, "allow_auto_topic_creation": False,
            "include_cluster_authorized_operations": False,
            "include_topic_authorized_operations": False}


def test_requests_cross_byte_by_byte_and_responses_match_their_requests() -> None:
    client, server = ClientConnection("cid", first_correlation_id=41), ServerConnection()
    data = client.send_request(18, 3, API_VERSIONS) + client.send_request(3, 12, METADATA)
    assert [p.correlation_id for p in client.pending] == [41, 42]
    seen = []
    for i in range(len(data)):
        server.receive_data(data[i:i + 1])
        got = server.next_request()
        if got is not None:
            seen.append(got)
    assert [(h.api_key, h.api_version, h.correlation_id, h.client_id, h.header_version)
            for h, _ in seen] == [(18, 3, 41, "cid", 2), (3, 12, 42, "cid", 2)]
    assert seen[0][1]["client_software_name"] == "t"
    answers = [server.send_response(h, {"error_code": 0, "api_keys": []} if h.api_key == 18
                                    else {"brokers": [], "topics": []}) for h, _ in seen]
    stream = b"".join(answers)
    client.receive_data(stream[:-1])
    first = client.next_response()
    assert first is not None and (first.api_key, first.correlation_id) == (18, 41)
    assert client.next_response() is None  # the last byte is missing
    client.receive_data(stream[-1:])
    second = client.next_response()
    assert second is not None and (second.api_key, second.body["topics"]) == (3, [])
    assert client.pending == []


def test_a_response_out_of_order_or_unasked_closes_the_connection() -> None:
    client = ClientConnection()
    client.send_request(18, 3, API_VERSIONS)
    client.send_request(18, 3, API_VERSIONS)
    client.receive_data(ServerConnection.encode_response(18, 3, 2, {"error_code": 0}))
    with pytest.raises(FramingError, match="correlation id 2"):
        client.next_response()
    lone = ClientConnection()
    lone.receive_data(ServerConnection.encode_response(18, 3, 9, {"error_code": 0}))
    with pytest.raises(FramingError, match="to no request"):
        lone.next_response()


def test_an_acks0_produce_expects_no_answer_and_ids_can_be_chosen() -> None:
    client = ClientConnection(None)
    body = {"transactional_id": None, "acks": 0, "timeout_ms": 1, "topic_data": []}
    client.send_request(0, 9, body, expect_response=False)
    client.send_request(18, 0, {}, correlation_id=1234)
    assert [p.correlation_id for p in client.pending] == [1234]
    assert client.last_correlation_id == 1234
    hdr = ServerConnection.read_header(encode_request(18, 0, 5, None, {})[4:])
    assert (hdr.client_id, hdr.header_version) == (None, 1)


def test_header_tagged_fields_are_read_and_the_body_follows_them() -> None:
    frame = bytearray(encode_request(18, 3, 7, "c", API_VERSIONS)[4:])
    at = 2 + 2 + 4 + 2 + 1  # the empty tagged-field section after client id "c"
    assert frame[at] == 0
    frame[at:at + 1] = write_uvarint(1) + write_uvarint(5) + write_uvarint(2) + b"xy"
    hdr = ServerConnection.read_header(bytes(frame))
    assert hdr.tagged_fields == {5: b"xy"} and hdr.header_version == 2
    assert ServerConnection.read_body(hdr, bytes(frame))["client_software_version"] == "1"


def test_frame_sizes_outside_the_limit_are_refused() -> None:
    server = ServerConnection(max_frame_bytes=100)
    assert server.size_allowed(100) and not server.size_allowed(101)
    assert not server.size_allowed(-1)
    server.receive_data((-5).to_bytes(4, "big", signed=True))
    with pytest.raises(FramingError):
        server.next_frame()
    assert not frame_complete(b"\x00\x00\x00\x02\x00")
    assert frame_complete(b"\x00\x00\x00\x02\x00\x00\x01")
