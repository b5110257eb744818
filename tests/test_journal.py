"""The request journal and barriers as data (emulator.control.journal,
emulator.control.barriers): a bounded ring in answer order, its filters, and barriers
that hold what they select and release it oldest first."""

from __future__ import annotations

from emulator.control.barriers import Barrier, Barriers
from emulator.control.journal import Journal, Query, error_names
from emulator.faults.facts import Facts, request_facts
from emulator.faults.match import parse


def facts(api: int, client: str, group: str | None = None, broker: int = 1) -> Facts:
    req: dict = {"group_id": group} if group else {}
    return request_facts(None, broker, api, 3, client, req)


def test_error_names_are_every_distinct_nonzero_code() -> None:
    resp = {"error_code": 0, "topics": [{"partitions": [
        {"error_code": 6}, {"error_code": 0}, {"error_code": 6}]}, {"error_code": 27}]}
    assert error_names(resp) == ["NOT_LEADER_OR_FOLLOWER", "REBALANCE_IN_PROGRESS"]
    assert error_names(None) == [] and error_names({"error_code": 30000}) == ["30000"]


def test_the_journal_is_a_bounded_ring_that_filters() -> None:
    j = Journal()
    j.configure(True, capacity=3)
    for n, (api, client, group, errors) in enumerate([
            (8, "a", "g", []), (11, "b", "g", []), (8, "a", "g", ["NOT_COORDINATOR"]),
            (8, "c", "h", []), (3, "a", None, [])]):
        j.record(100 + n, facts(api, client, group), n, errors, "answered",
                 "r1" if errors else None, 0)
    out = j.query(Query())
    assert (out["size"], out["dropped"], out["next_seq"]) == (3, 2, 5)
    assert [e["seq"] for e in out["entries"]] == [2, 3, 4]  # the oldest fell out
    assert [e["seq"] for e in j.query(Query(api=8))["entries"]] == [2, 3]
    assert [e["seq"] for e in j.query(Query(error="NOT_COORDINATOR"))["entries"]] == [2]
    assert [e["seq"] for e in j.query(Query(error="NONE"))["entries"]] == [3, 4]
    assert [e["seq"] for e in j.query(Query(group="h"))["entries"]] == [3]
    assert [e["seq"] for e in j.query(Query(since=4))["entries"]] == [4]
    assert [e["seq"] for e in j.query(Query(limit=1))["entries"]] == [2]
    m = parse('error == "NONE" and client_id in ["a", "c"] and seq < 4')
    assert [e["seq"] for e in j.query(Query(match=m))["entries"]] == [3]
    e = j.query(Query(since=2, limit=1))["entries"][0]
    assert (e["api"], e["groups"], e["injected"], e["errors"]) == (
        "OffsetCommit", ["g"], "r1", ["NOT_COORDINATOR"])
    j.configure(True, capacity=1)
    assert j.status()["size"] == 1 and j.status()["dropped"] == 4
    j.configure(False)
    assert j.status() == {"enabled": False, "capacity": 1, "size": 0, "dropped": 4,
                          "next_seq": 5}


def test_barriers_hold_what_they_select_and_release_oldest_first() -> None:
    released: list[str] = []
    bs = Barriers()
    b = bs.add(Barrier("", api=11, client_id="b", count=2))
    assert b.id == "b1"
    assert bs.arrive(facts(11, "a"), 0, lambda: released.append("a")) is None
    for n in range(3):
        caught = bs.arrive(facts(11, "b"), n, lambda n=n: released.append(f"b{n}"))
        assert (caught is b) is (n < 2)  # only the first two
    assert (len(b.holding), b.caught, b.active) == (2, 2, False)
    assert b.release_some(1) == 1 and released == ["b0"]
    view = b.view(10)
    assert (view["held"], view["released"], view["holding"][0]["held_ms"]) == (1, 1, 9)
    g = bs.add(Barrier("gb", group="g", match=parse('client_id == "z"')))
    assert bs.arrive(facts(8, "z", "g"), 0, lambda: released.append("z")) is g
    bs.remove("b1")
    assert released == ["b0", "b1"] and list(bs.barriers) == ["gb"]
    bs.release_all()
    assert released[-1] == "z" and bs.barriers == {}
