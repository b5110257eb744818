"""The error table: Kafka's codes and names, contiguous, with retriability."""

from __future__ import annotations

from wire.errors import MESSAGES, RETRIABLE, ErrorCode, describe


def test_known_codes_have_kafkas_names() -> None:
    assert ErrorCode(6).name == "NOT_LEADER_OR_FOLLOWER"
    assert ErrorCode(35).name == "UNSUPPORTED_VERSION"
    assert ErrorCode(39).name == "INVALID_REPLICA_ASSIGNMENT"
    assert ErrorCode(80).name == "PREFERRED_LEADER_NOT_AVAILABLE"
    assert ErrorCode(83).name == "ELIGIBLE_LEADERS_NOT_AVAILABLE"
    assert ErrorCode(84).name == "ELECTION_NOT_NEEDED"
    assert ErrorCode(85).name == "NO_REASSIGNMENT_IN_PROGRESS"
    assert ErrorCode(90).name == "PRODUCER_FENCED"


def test_codes_are_contiguous_from_minus_one() -> None:
    codes = sorted(int(c) for c in ErrorCode)
    assert codes == list(range(-1, codes[-1] + 1))


def test_retriable_and_messages() -> None:
    assert ErrorCode.NOT_LEADER_OR_FOLLOWER in RETRIABLE
    assert ErrorCode.NOT_ENOUGH_REPLICAS in RETRIABLE
    assert ErrorCode.INVALID_REPLICA_ASSIGNMENT not in RETRIABLE
    assert ErrorCode.NONE not in MESSAGES
    assert describe(3).startswith("UNKNOWN_TOPIC_OR_PARTITION (3): ")
    assert describe(12345) == "UNKNOWN_ERROR_CODE (12345)"
