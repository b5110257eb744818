"""The error-response builder (emulator.handlers.errors) on requests it cannot expect.

The UNKNOWN_SERVER_ERROR path answers whatever request made a handler fail, so building
an error response must not fail itself, for any API and version: an empty request, one
whose arrays hold the wrong things, one whose fields are all missing. Where the builder
places codes for well-formed requests is client_tests/test_injected_errors.py's job.
"""

from __future__ import annotations

import pytest

from emulator.handlers import HANDLERS
from emulator.handlers.errors import error_response, merge, safe_error_response
from wire.messages import RESPONSES

SERVED = [(k, v) for k, info in sorted(HANDLERS.items())
          for v in range(info.versions[0], info.versions[1] + 1)]
ODD_REQUESTS = [{}, {"topics": None, "topic_data": None}, {"topics": [1, None, "x", [2]]},
                {"topics": [{"name": None, "partitions": "nope"}], "groups": [{}]}]


@pytest.mark.parametrize(("key", "version"), SERVED)
def test_every_api_builds_an_encodable_error_response_from_odd_requests(
        key: int, version: int) -> None:
    for req in ODD_REQUESTS:
        body = safe_error_response(key, version, req, -1, "boom")
        parts: list[bytes] = []
        RESPONSES[key].encode_into(body, version, parts)  # must not raise
        assert isinstance(body, dict)


def test_an_error_response_is_the_top_level_code_when_the_request_names_no_item() -> None:
    assert error_response(11, 5, {}, 15) == {"error_code": 15}  # generation_id: -1 by default
    assert error_response(3, 13, {"topics": None}, 6)["error_code"] == 6


def test_merge_folds_error_items_into_the_served_response() -> None:
    served = {"responses": [{"name": "a", "partition_responses": [
        {"index": 0, "error_code": 0, "base_offset": 7}]}]}
    errors = {"responses": [{"name": "a", "partition_responses": [
        {"index": 3, "error_code": 6, "base_offset": -1}]}, {"name": "b",
                                                             "partition_responses": []}]}
    assert merge(served, errors) == {"responses": [
        {"name": "a", "partition_responses": [{"index": 0, "error_code": 0, "base_offset": 7},
                                              {"index": 3, "error_code": 6, "base_offset": -1}]},
        {"name": "b", "partition_responses": []}]}
