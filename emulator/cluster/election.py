"""ElectLeaders (key 43) as the KRaft controller answers it (RCM.electLeaders).

Per partition, in this order (Kafka's, with its messages):

- UNKNOWN_TOPIC_OR_PARTITION, ``No such topic as X`` / ``No such partition as X-P``;
- ELECTION_NOT_NEEDED when PREFERRED finds replicas[0] already leading, or UNCLEAN
  finds any leader;
- otherwise a PartitionChangeBuilder election (PREFERRED: replicas[0] if in the ISR
  and acceptable, else keep a valid leader, else the next valid replica; UNCLEAN:
  keep or elect from the ISR, else the first acceptable replica with the ISR reset
  to it, ignoring the topic's unclean.leader.election.enable). A PREFERRED election
  never falls back to an unclean one. Like every build, it first completes a running
  reassignment whose ISR allows it, and then elects among the target replicas only
  (that change alone answers NONE, even if no leader was found).
- When that changes nothing: PREFERRED_LEADER_NOT_AVAILABLE (preferred) or
  ELIGIBLE_LEADERS_NOT_AVAILABLE (unclean).

Errors built from the code alone carry Kafka's default message for it (ApiError's
one-argument constructor); success carries none. With null TopicPartitions every
partition of every topic is tried, ELECTION_NOT_NEEDED results are left out, and
each topic still gets an entry, possibly empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from emulator.cluster import leadership, reassignment
from emulator.cluster.leadership import Election
from wire.errors import MESSAGES, KafkaError
from wire.errors import ErrorCode as E

if TYPE_CHECKING:
    from emulator.cluster.state import ClusterState

# ElectLeaders' ElectionType: the controller's own election kinds (0 and 1 on the wire)
PREFERRED, UNCLEAN = Election.PREFERRED, Election.UNCLEAN


def _default_error(code: int) -> tuple[int, str | None]:
    return code, (MESSAGES.get(E(code)) if code else None)


def elect_leader(state: ClusterState, topic: str, index: int,
                 election_type: int) -> tuple[int, str | None]:
    """RCM.electLeader for one partition: (error code, message)."""
    t = state.topics.get(topic)
    if t is None:
        return E.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic}"
    if not 0 <= index < len(t.partitions):
        return E.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic}-{index}"
    p = t.partitions[index]
    if election_type == PREFERRED:
        if p.replicas and p.leader == p.replicas[0]:
            return _default_error(E.ELECTION_NOT_NEEDED)
        changed = reassignment.partition_change(state, p, leadership.PREFERRED)
        if not changed:
            return _default_error(E.PREFERRED_LEADER_NOT_AVAILABLE)
    else:
        if p.leader >= 0:
            return _default_error(E.ELECTION_NOT_NEEDED)
        changed = reassignment.partition_change(state, p, leadership.UNCLEAN)
        if not changed:
            return _default_error(E.ELIGIBLE_LEADERS_NOT_AVAILABLE)
    state.changed()
    return E.NONE, None


def check_election_type(election_type: int) -> None:
    if election_type not in (PREFERRED, UNCLEAN):
        raise KafkaError(E.INVALID_REQUEST, f"Unknown election type {election_type}")


def elect_leaders(
    state: ClusterState, election_type: int,
    topic_partitions: Sequence[tuple[str, Sequence[int]]] | None,
) -> list[tuple[str, list[tuple[int, int, str | None]]]]:
    """RCM.electLeaders: [(topic, [(partition, error code, message)])]."""
    check_election_type(election_type)
    out: list[tuple[str, list[tuple[int, int, str | None]]]] = []
    if topic_partitions is None:
        for name, t in list(state.topics.items()):
            results = []
            for index in range(len(t.partitions)):
                code, msg = elect_leader(state, name, index, election_type)
                if code != E.ELECTION_NOT_NEEDED:
                    results.append((index, code, msg))
            out.append((name, results))
        return out
    for name, indexes in topic_partitions:
        out.append((name, [(i, *elect_leader(state, name, i, election_type)) for i in indexes]))
    return out
