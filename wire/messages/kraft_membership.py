"""KRaft membership: AddRaftVoter (80) and RemoveRaftVoter (81), KIP-853;
UnregisterBroker (64), KIP-500; UnregisterController (94)."""

from wire.messages.common import response_head
from wire.schema import BOOL, INT32, STRING, UINT16, UUID, Array, Field, message


def _result() -> list[Field]:
    """What all four answer: throttle time, error code and message."""
    return response_head(null_message=False)


ADD_RAFT_VOTER_REQUEST = message("AddRaftVoterRequest", 80, "0-1", "0+", [
    Field("cluster_id", STRING, nullable="0+"),
    Field("timeout_ms", INT32),
    Field("voter_id", INT32),
    Field("voter_directory_id", UUID),
    Field("listeners", Array, fields=[
        Field("name", STRING),
        Field("host", STRING),
        Field("port", UINT16),
    ]),
    Field("ack_when_committed", BOOL, "1+", default=True),
])
ADD_RAFT_VOTER_RESPONSE = message("AddRaftVoterResponse", 80, "0-1", "0+", _result())

REMOVE_RAFT_VOTER_REQUEST = message("RemoveRaftVoterRequest", 81, "0", "0+", [
    Field("cluster_id", STRING, nullable="0+"),
    Field("voter_id", INT32),
    Field("voter_directory_id", UUID),
])
REMOVE_RAFT_VOTER_RESPONSE = message("RemoveRaftVoterResponse", 81, "0", "0+", _result())

UNREGISTER_BROKER_REQUEST = message("UnregisterBrokerRequest", 64, "0", "0+", [
    Field("broker_id", INT32),
])
UNREGISTER_BROKER_RESPONSE = message("UnregisterBrokerResponse", 64, "0", "0+", _result())

UNREGISTER_CONTROLLER_REQUEST = message("UnregisterControllerRequest", 94, "0", "0+", [
    Field("controller_id", INT32),
])
UNREGISTER_CONTROLLER_RESPONSE = message(
    "UnregisterControllerResponse", 94, "0", "0+", _result())
