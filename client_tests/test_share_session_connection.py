"""A share session lives as long as the connection that opened it, on both targets
(``--target kafka``): when that connection closes, Kafka 4.4 closes the session and
releases its member's acquired records, which another member then gets with delivery
count 2 (measured at once, 0.5 s and 2 s after the close), and an acknowledgement with
the old session's epoch meets SHARE_SESSION_NOT_FOUND. The emulator kept the session and
the records until their lock ran out (a difference of the fidelity table until it was
closed; the response differential's case "Share group: a session ends with its
connection" now answers the same on both).
"""

from __future__ import annotations

from client_tests.targets import KafkaTarget
from client_tests.test_share_groups_raw import (
    WAIT,
    assigned,
    conn_to,
    coordinator,
    fetch,
    heartbeat,
    setup,
)
from emulator import Cluster
from wire.errors import ErrorCode as E

Target = Cluster | KafkaTarget


def test_a_closed_session_connection_releases_its_records(cluster: Target,
                                                          topic_name: str) -> None:
    c, g = cluster, "sess-" + topic_name
    tid, leader = setup(c, topic_name, g, 2)
    gconn = conn_to(c, coordinator(c, g))
    try:
        for m in ("a", "b"):
            assigned(gconn, g, m, heartbeat(gconn, g, m, 0, [topic_name]), tid, [0])
    finally:
        gconn.close()
    first = conn_to(c, leader)
    try:
        r = fetch(first, g, "a", 0, tid, wait=WAIT)
        assert r["responses"][0]["partitions"][0]["acquired_records"] == [
            {"first_offset": 0, "last_offset": 1, "delivery_count": 1}]
    finally:
        first.close()  # the session's connection: the session closes with it
    other = conn_to(c, leader)
    try:
        # the records were released: another member gets them, delivered a second time.
        # Asked first, with a wait: Kafka closes the session when its network thread has
        # seen the disconnect, after the close returned here, so this waits that out
        # (an acknowledgement sent first could still find the session open on Kafka)
        r = fetch(other, g, "b", 0, tid, wait=WAIT)
        assert r["responses"][0]["partitions"][0]["acquired_records"] == [
            {"first_offset": 0, "last_offset": 1, "delivery_count": 2}]
        # "a" acknowledges on another connection with its old session's next epoch
        r = other.call(79, 1, {"group_id": g, "member_id": "a", "share_session_epoch": 1,
                               "topics": [{"topic_id": tid, "partitions": [{
                                   "partition_index": 0, "acknowledgement_batches": [{
                                       "first_offset": 0, "last_offset": 1,
                                       "acknowledge_types": [1]}]}]}]})
        assert r["error_code"] == E.SHARE_SESSION_NOT_FOUND, r
    finally:
        other.close()
