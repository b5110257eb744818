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
    assert ErrorCode(87).name == "INVALID_RECORD"  # not PREFERRED_LEADER_NOT_AVAILABLE (80)
    assert ErrorCode(90).name == "PRODUCER_FENCED"
    assert ErrorCode(-1).name == "UNKNOWN_SERVER_ERROR"
    assert ErrorCode(0).name == "NONE"


def test_codes_are_unique_and_contiguous_from_minus_one() -> None:
    # An IntEnum silently turns a repeated value into an alias: count the names too.
    assert len(ErrorCode.__members__) == len(ErrorCode)
    codes = sorted(int(c) for c in ErrorCode)
    assert codes == list(range(-1, codes[-1] + 1))
    assert codes[-1] == 136  # CONTROLLER_ID_NOT_REGISTERED, the highest in Kafka 4.4
    assert ErrorCode(133).name == "SHARE_SESSION_LIMIT_REACHED"
    assert ErrorCode(136).name == "CONTROLLER_ID_NOT_REGISTERED"


def test_retriable_and_messages() -> None:
    assert ErrorCode.NOT_LEADER_OR_FOLLOWER in RETRIABLE
    assert ErrorCode.NOT_ENOUGH_REPLICAS in RETRIABLE
    assert ErrorCode.INVALID_REPLICA_ASSIGNMENT not in RETRIABLE
    assert ErrorCode.UNSUPPORTED_VERSION not in RETRIABLE
    assert ErrorCode.NONE not in MESSAGES
    assert set(MESSAGES) == set(ErrorCode) - {ErrorCode.NONE}
    assert describe(35) == "UNSUPPORTED_VERSION (35): The version of API is not supported."
    assert describe(0) == "NONE (0)"
    assert describe(3).startswith("UNKNOWN_TOPIC_OR_PARTITION (3): ")
    assert describe(12345) == "UNKNOWN_ERROR_CODE (12345)"
