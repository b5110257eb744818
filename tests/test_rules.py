"""Request rules (emulator.faults.rules) and the key fields they select on
(emulator.faults.facts): groups, transactional ids and topics in every shape, the owner
a rule fires on, ``after``, observe-only counts, drops, and the views."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from emulator.coordinators.runtime.placement import partition_for
from emulator.faults import FaultError
from emulator.faults.facts import path_values, request_facts
from emulator.faults.rules import RequestRule, RuleBook, RuleInjection, parse_match
from wire.errors import ErrorCode as E

if TYPE_CHECKING:
    from tests.conftest import MakeCluster

OFFSET_COMMIT, JOIN_GROUP, FIND_COORDINATOR, END_TXN, PRODUCE, METADATA = 8, 11, 10, 26, 0, 3


def commit(group: str) -> dict:
    return {"group_id": group, "topics": [{"name": "t", "partitions": [
        {"partition_index": 0, "committed_offset": 1}]}]}


def test_facts_find_the_key_fields_in_every_shape() -> None:
    f = request_facts(None, 1, 9, 9, "c", {"groups": [
        {"group_id": "g1", "topics": [{"name": "t", "partitions": [0, 2]}]},
        {"group_id": "g2", "topics": None}]})  # OffsetFetch v8+
    assert (f.groups, f.topics, f.partitions) == (["g1", "g2"], ["t"], [("t", 0), ("t", 2)])
    f = request_facts(None, 1, FIND_COORDINATOR, 4, None,
                      {"key_type": 1, "coordinator_keys": ["tx-1", "tx-2"]})
    assert (f.groups, f.transactional_ids) == ([], ["tx-1", "tx-2"])
    f = request_facts(None, 1, FIND_COORDINATOR, 2, None, {"key_type": 0, "key": "g"})
    assert f.groups == ["g"]
    f = request_facts(None, 1, 24, 4, None, {"transactions": [  # AddPartitionsToTxn v4+
        {"transactional_id": "tx", "topics": [{"name": "t", "partitions": [1]}]}]})
    assert (f.transactional_ids, f.partitions) == (["tx"], [("t", 1)])
    f = request_facts(None, 1, JOIN_GROUP, 9, None, {"group_id": "g", "protocols": [
        {"name": "range", "metadata": b""}]})
    assert (f.groups, f.topics) == (["g"], [])  # a protocol's name is no topic
    f = request_facts(None, 2, METADATA, 12, "x", {"topics": [{"name": "a"}, {"name": "b"}]})
    assert f.topics == ["a", "b"]
    assert list(f.lookup("topic")) == ["a", "b"] and list(f.lookup("api")) == ["Metadata"]
    assert list(f.lookup("topics.name")) == ["a", "b"]  # a path into the request


def test_a_group_rule_fires_on_the_third_commit_at_the_coordinator_only(
        make_cluster: MakeCluster) -> None:
    s, _, f = make_cluster()
    s.create_topic("__consumer_offsets", 3, 3)
    t = s.topics["__consumer_offsets"]
    coordinator = t.partitions[partition_for("billing", 3)].leader
    other = next(b for b in s.brokers if b != coordinator)
    op = f.apply({"op": "inject_error", "api": "OffsetCommit", "error": "NOT_COORDINATOR",
                  "group": "billing", "after": 2})
    assert op["id"] == "r1"
    m = f.model
    assert m.inject_error(coordinator, OFFSET_COMMIT, commit("audit")) is None
    assert m.inject_error(other, OFFSET_COMMIT, commit("billing")) is None  # not the owner
    assert m.inject_error(coordinator, OFFSET_COMMIT, commit("billing")) is None
    assert m.inject_error(coordinator, OFFSET_COMMIT, commit("billing")) is None
    assert m.inject_error(coordinator, OFFSET_COMMIT, commit("billing")) == RuleInjection(
        E.NOT_COORDINATOR, rule="r1")
    assert m.inject_error(coordinator, OFFSET_COMMIT, commit("billing")) is None  # used up
    view = m.rules.get("r1").view()
    assert (view["matched"], view["hits"], view["remaining"], view["active"]) == (3, 1, 0, False)
    assert view["error_name"] == "NOT_COORDINATOR" and view["api_name"] == "OffsetCommit"
    # a used-up rule stays listed, out of the faults in force
    assert m.describe()["errors"] == [] and m.describe()["rules"][0]["id"] == "r1"
    # Metadata goes to any broker: a group there is not the coordinator's business
    f.apply({"op": "observe", "group": "billing", "id": "any"})
    m.inject_error(other, FIND_COORDINATOR, {"key_type": 0, "key": "billing"})
    assert m.rules.get("any").hits == 1


def test_transactional_id_and_broker_named_rules(make_cluster: MakeCluster) -> None:
    s, _, f = make_cluster()
    s.create_topic("__transaction_state", 3, 3)
    t = s.topics["__transaction_state"]
    coordinator = t.partitions[partition_for("tx", 3)].leader
    other = next(b for b in s.brokers if b != coordinator)
    f.apply({"op": "inject_error", "api": "EndTxn", "error": "CONCURRENT_TRANSACTIONS",
             "transactional_id": "tx", "count": 2, "id": "end"})
    f.apply({"op": "inject_error", "api": "EndTxn", "error": "PRODUCER_FENCED",
             "transactional_id": "tx", "broker": other, "id": "named"})
    m = f.model
    end = {"transactional_id": "tx", "producer_id": 1, "producer_epoch": 0, "committed": True}
    assert m.inject_error(other, END_TXN, end) == RuleInjection(E.PRODUCER_FENCED, rule="named")
    assert m.inject_error(coordinator, END_TXN, {**end, "transactional_id": "ty"}) is None
    assert m.inject_error(coordinator, END_TXN, end).error == E.CONCURRENT_TRANSACTIONS
    with pytest.raises(FaultError, match="exists already"):
        f.apply({"op": "observe", "id": "end"})
    f.apply({"op": "clear"})
    assert m.rules.rules == {} and m.inject_error(coordinator, END_TXN, end) is None


def test_observe_counts_every_match_and_drop_rules_select_too(
        make_cluster: MakeCluster) -> None:
    s, _, f = make_cluster()
    s.create_topic("t", 2, 3)
    leader = s.topics["t"].partitions[1].leader
    f.apply({"op": "observe", "api": "Produce", "match": "partition == 1 and acks == -1",
             "id": "w"})
    f.apply({"op": "drop_response", "api": "Produce", "topic": "t", "partition": 1,
             "after": 1, "id": "d"})
    m = f.model
    produce = {"acks": -1, "topic_data": [{"name": "t", "partition_data": [{"index": 1}]}]}
    for _ in range(3):
        assert m.inject_error(leader, PRODUCE, produce) is None  # observing fails nothing
    m.inject_error(leader, PRODUCE, {**produce, "acks": 1})
    assert m.rules.get("w").hits == 3
    assert not m.drop_response(leader, PRODUCE, None, produce)  # after 1
    assert m.drop_response(leader, PRODUCE, None, produce)
    assert not m.drop_response(leader, PRODUCE, None, produce)  # count 1, used
    with pytest.raises(FaultError, match="match: expected"):
        f.apply({"op": "observe", "match": "partition =="})


def test_lookup_answers_key_fields_where_the_request_has_no_such_field() -> None:
    """The match language's key fields come from the request's facts, not its body (an
    AddPartitionsToTxn v4 carries its transactional id inside ``transactions``, an
    OffsetFetch v8 its groups inside ``groups``); ``request.`` reads the body itself."""
    f = request_facts(None, 2, 24, 4, None, {"transactions": [
        {"transactional_id": "tx", "topics": [{"name": "t", "partitions": [1]}]}]})
    assert list(f.lookup("transactional_id")) == ["tx"]
    assert list(f.lookup("api_key")) == [24] and list(f.lookup("version")) == [4]
    assert list(f.lookup("broker")) == [2]
    assert list(f.lookup("client_id")) == [""]  # no client id: the empty string
    assert list(f.lookup("partition")) == [1]
    assert list(f.lookup("request.transactions.transactional_id")) == ["tx"]
    g = request_facts(None, 1, 9, 8, "c", {"groups": [{"group_id": "g1", "topics": None}],
                                          "require_stable": True})
    assert list(g.lookup("group")) == ["g1"]
    assert list(g.lookup("request.require_stable")) == [True]
    assert list(g.lookup("client_id")) == ["c"]
    assert g.key_field("require_stable") is None  # not a key field: a path


def test_path_values_enter_lists_skip_entries_without_the_name_and_show_bytes_as_hex(
        ) -> None:
    body = {"topics": [{"name": "a", "partitions": [{"index": 0}, {"index": 2}]},
                       {"topic_id": b"\x00\xff"}, "stray", 7],
            "ids": [3, 4]}
    assert path_values(body, "topics.name") == ["a"]  # the second topic has no name
    assert path_values(body, "topics.partitions.index") == [0, 2]
    assert path_values(body, "ids") == [3, 4]  # a list at the end is its elements
    assert path_values(body, "topics.topic_id") == ["00ff"]
    assert path_values(body, "nothing.here") == []


def test_a_rule_is_removed_by_its_id_and_an_unknown_id_is_a_404_naming_the_rules() -> None:
    book = RuleBook()
    book.add({"op": "observe", "id": "a"})
    book.add({"op": "inject_error", "api": PRODUCE, "error": E.NOT_LEADER_OR_FOLLOWER,
              "id": "b"})
    book.add({"op": "observe", "id": "c"})
    assert book.remove("b").id == "b" and list(book.rules) == ["a", "c"]
    for call in (book.remove, book.get):
        with pytest.raises(FaultError) as e:
            call("b")
        assert e.value.status == 404
        assert str(e.value) == "unknown rule 'b'; rules are a, c"
    book.remove("a")
    book.remove("c")
    for call in (book.remove, book.get):
        with pytest.raises(FaultError) as e:
            call("a")
        assert (e.value.status, str(e.value)) == (404, "unknown rule 'a'; rules are none")


def test_clear_starts_the_ids_again_and_a_book_without_a_cluster_fires_anywhere() -> None:
    """Without a cluster (a rule book on its own) no owner is known: a rule naming a
    group or a transactional id fires on whichever broker the request reached."""
    book = RuleBook()
    first = book.add({"op": "inject_error", "api": OFFSET_COMMIT, "group": "g",
                      "error": E.COORDINATOR_NOT_AVAILABLE})
    assert first.id == "r1"
    assert book.inject_error(7, OFFSET_COMMIT, commit("g")) == RuleInjection(
        E.COORDINATOR_NOT_AVAILABLE, rule="r1")
    book.add({"op": "drop_response", "api": END_TXN, "transactional_id": "tx"})
    assert book.drop_response(3, END_TXN, None, {"transactional_id": "tx"})
    book.clear()
    assert book.rules == {} and book.add({"op": "observe"}).id == "r1"
    assert book.add({"op": "observe"}).id == "r2"


def test_a_group_rule_finds_its_coordinator_on_broker_0_and_fires_anywhere_without_one(
        make_cluster: MakeCluster) -> None:
    """Broker ids start at 0 where the cluster says so (an image's KAFKA_NODE_ID=0): a
    coordinator there is an owner like any other. Before __consumer_offsets exists, and
    while the group's partition has no leader, the owner is unknown: the rule fires on
    whichever broker the request reached."""
    s, clock, f = make_cluster([0, 1, 2])
    f.apply({"op": "observe", "api": "OffsetCommit", "group": "g0", "id": "early"})
    m = f.model
    m.inject_error(2, OFFSET_COMMIT, commit("g0"))
    assert m.rules.get("early").hits == 1  # no __consumer_offsets yet
    s.create_topic("__consumer_offsets", 3, 1)
    leaders = s.topics["__consumer_offsets"].partitions
    group = next(g for g in (f"g{i}" for i in range(100))
                 if leaders[partition_for(g, 3)].leader == 0)
    f.apply({"op": "observe", "api": "OffsetCommit", "group": group, "id": "at0"})
    for broker in (1, 2, 0):
        m.inject_error(broker, OFFSET_COMMIT, commit(group))
    assert m.rules.get("at0").hits == 1  # at broker 0 only
    f.apply({"op": "stop_broker", "broker": 0})
    for _ in range(50):
        clock.advance(1_000)
        s.tick()
        if leaders[partition_for(group, 3)].leader < 0:
            break
    assert leaders[partition_for(group, 3)].leader == -1  # its only replica is down
    m.inject_error(1, OFFSET_COMMIT, commit(group))
    assert m.rules.get("at0").hits == 2


def test_a_rules_view_and_the_models_fault_lists_are_exact(make_cluster: MakeCluster) -> None:
    """GET /rules (RequestRule.view) and GET /faults' ``errors`` / ``drops`` (the rules
    in force, with ``count`` what is left of it and no empty field), key by key."""
    s, _, f = make_cluster()
    s.create_topic("t", 2, 3)
    leader = s.topics["t"].partitions[1].leader
    f.apply({"op": "inject_error", "api": "Produce", "error": "NOT_LEADER_OR_FOLLOWER",
             "topic": "t", "partition": 1, "count": 2, "after": 1, "match": "acks == -1",
             "client_id": "c", "broker": leader, "id": "e"})
    f.apply({"op": "drop_response", "api": "EndTxn", "transactional_id": "tx", "count": 3,
             "group": "g", "id": "d"})
    f.apply({"op": "observe", "id": "o"})
    m = f.model
    produce = {"acks": -1, "topic_data": [{"name": "t", "partition_data": [{"index": 1}]}]}
    assert m.inject_error(leader, PRODUCE, produce, "c") is None  # after 1
    assert m.inject_error(leader, PRODUCE, produce, "c") == RuleInjection(
        E.NOT_LEADER_OR_FOLLOWER, "t", 1, "e")
    assert m.rules.get("e").view() == {
        "id": "e", "op": "inject_error", "api": PRODUCE, "api_name": "Produce",
        "error": E.NOT_LEADER_OR_FOLLOWER, "error_name": "NOT_LEADER_OR_FOLLOWER",
        "group": None, "transactional_id": None, "topic": "t", "partition": 1,
        "client_id": "c", "broker": leader, "match": "acks == -1", "after": 1, "count": 2,
        "remaining": 1, "matched": 2, "hits": 1, "active": True}
    assert m.rules.get("o").view() == {
        "id": "o", "op": "observe", "api": None, "api_name": None, "group": None,
        "transactional_id": None, "topic": None, "partition": None, "client_id": None,
        "broker": None, "match": None, "after": 0, "count": None, "remaining": None,
        "matched": 2, "hits": 2, "active": True}
    described = m.describe()
    assert described["errors"] == [{
        "api": PRODUCE, "error": E.NOT_LEADER_OR_FOLLOWER, "count": 1, "broker": leader,
        "topic": "t", "partition": 1, "client_id": "c", "match": "acks == -1", "after": 1,
        "id": "e"}]
    assert described["drops"] == [{"api": END_TXN, "count": 3, "group": "g",
                                   "transactional_id": "tx", "after": 0, "id": "d"}]
    assert [v["id"] for v in described["rules"]] == ["e", "d", "o"]
    m.inject_error(leader, PRODUCE, produce, "c")  # its second and last failure
    assert m.describe()["errors"] == []


def test_a_topic_rule_fires_at_a_leader_of_a_partition_it_names(
        make_cluster: MakeCluster) -> None:
    """For the APIs sent to partition leaders, a topic rule fires on a broker leading one
    of the named partitions the request carries (the rule's partition, if it names one);
    a request naming only partitions the topic does not have fires nowhere; a topic the
    cluster no longer knows (deleted after the rule was made), or an API that goes
    anywhere, fires on any broker."""
    s, _, f = make_cluster()
    s.create_topic("t", 3, 1)
    s.create_topic("gone", 1, 1)
    leaders = [p.leader for p in s.topics["t"].partitions]
    assert len(set(leaders)) == 3  # one partition led by each broker

    def produce(*parts: int, topic: str = "t") -> dict:
        return {"acks": -1, "topic_data": [{"name": topic, "partition_data": [
            {"index": p} for p in parts]}]}

    f.apply({"op": "observe", "api": "Produce", "topic": "t", "id": "any"})
    f.apply({"op": "observe", "api": "Produce", "topic": "t", "partition": 2, "id": "p2"})
    f.apply({"op": "observe", "api": "Produce", "topic": "gone", "id": "gone"})
    f.apply({"op": "observe", "api": "Metadata", "topic": "t", "id": "meta"})
    s.delete_topic("gone")
    m = f.model
    for broker in s.brokers:
        m.inject_error(broker, PRODUCE, produce(0, 2))
        m.inject_error(broker, PRODUCE, produce(99))  # no such partition
        m.inject_error(broker, PRODUCE, produce())  # the topic, no partition: anywhere
        m.inject_error(broker, PRODUCE, produce(0, topic="gone"))
        m.inject_error(broker, METADATA, {"topics": [{"name": "t"}]})
    hits = {r: m.rules.get(r).hits for r in ("any", "p2", "gone", "meta")}
    assert hits == {"any": 2 + 3, "p2": 1, "gone": 3, "meta": 3}
    m.inject_error(leaders[1], PRODUCE, produce(0, 2))
    m.inject_error(leaders[2], PRODUCE, produce(1, 2))
    assert (m.rules.get("any").hits, m.rules.get("p2").hits) == (6, 2)
    for broker in s.brokers:  # the first index past the last partition: no partition
        m.inject_error(broker, PRODUCE, produce(3))
    assert m.rules.get("any").hits == 6


def test_parse_match_says_what_is_wrong() -> None:
    """A ``match`` field's errors (HTTP 400): not a string, not the language, or names
    outside those allowed (the journal's waits allow only the entry's fields)."""
    with pytest.raises(FaultError) as e:
        parse_match(5)
    assert (e.value.status, str(e.value)) == (400, "match must be a string, got 5")
    with pytest.raises(FaultError) as e:
        parse_match("partition ==")
    assert str(e.value).startswith("match: expected")
    with pytest.raises(FaultError) as e:
        parse_match("foo == 1 and bar == 2 and a == 3", allowed=("a", "b"))
    assert str(e.value) == "match: unknown name(s) bar, foo; names are a, b"
    assert parse_match("a == 3", allowed=("a", "b")).text == "a == 3"


def test_rules_naming_no_owner_fire_anywhere(make_cluster: MakeCluster) -> None:
    """A rule on a transaction API that names no transactional id, or on a group API
    naming a topic and no group, is no coordinator's: it fires on every broker; a topic
    rule in a rule book without a cluster too."""
    s, _, f = make_cluster()
    s.create_topic("__transaction_state", 3, 3)
    s.create_topic("__consumer_offsets", 3, 3)
    s.create_topic("t", 1, 1)
    f.apply({"op": "observe", "api": "EndTxn", "id": "end"})
    f.apply({"op": "observe", "api": "OffsetCommit", "topic": "t", "id": "commit"})
    m = f.model
    for broker in s.brokers:
        m.inject_error(broker, END_TXN, {"transactional_id": "tx", "producer_id": 1,
                                         "producer_epoch": 0, "committed": True})
        m.inject_error(broker, OFFSET_COMMIT, commit("g"))
    assert (m.rules.get("end").hits, m.rules.get("commit").hits) == (3, 3)
    book = RuleBook()
    book.add({"op": "observe", "api": PRODUCE, "topic": "t", "id": "p"})
    book.inject_error(1, PRODUCE, {"topic_data": [{"name": "t", "partition_data": [
        {"index": 0}]}]})
    assert book.get("p").hits == 1


def test_facts_read_every_list_shape_and_leave_out_names_that_are_no_topics(
        make_cluster: MakeCluster) -> None:
    """The group, transactional id and topic lists of the admin APIs (empty strings and
    repeats dropped), topics by id where a request names them so, and the APIs whose
    entries' ``name`` is a user's or a protocol's, not a topic's."""
    s, _, _ = make_cluster()
    tid = s.create_topic("t", 2, 1).id

    def facts(api: int, request: dict):  # type: ignore[no-untyped-def]
        return request_facts(s, 1, api, 5, None, request)

    assert facts(42, {"groups_names": ["a", "", "b", "a"]}).groups == ["a", "b"]
    assert facts(15, {"groups": ["a"], "include_authorized_operations": True}).groups == ["a"]
    assert facts(65, {"transactional_ids": ["x", "", 7, "x"]}).transactional_ids == ["x"]
    assert facts(20, {"topic_names": ["t", "", 7], "timeout_ms": 1}).topics == ["t"]
    assert facts(20, {"topics": [{"name": None, "topic_id": tid}]}).topics == ["t"]
    assert facts(20, {"topics": [{"name": None, "topic_id": b"\1" * 16}]}).topics == []
    assert facts(19, {"topics": [{"name": "new", "num_partitions": 1}]}).topics == ["new"]
    f = facts(1, {"topics": [{"topic_id": tid, "partitions": [{"partition": 1}]}]})
    assert (f.topics, f.partitions) == (["t"], [("t", 1)])  # Fetch v13+: by id
    assert facts(50, {"users": [{"name": "alice"}]}).topics == []
    assert facts(51, {"deletions": [{"name": "alice", "mechanism": 1}]}).topics == []
    assert facts(32, {"resources": [{"resource_type": 2, "resource_name": "t",
                                     "configuration_keys": None}]}).topics == []
    assert facts(11, {"group_id": "", "protocols": [{"name": "t"}]}).groups == []
    f = request_facts(None, 1, FIND_COORDINATOR, 4, None,
                      {"key_type": 0, "coordinator_keys": ["g", "", "g"]})
    assert (f.groups, f.transactional_ids) == (["g"], [])
    f = request_facts(None, 1, FIND_COORDINATOR, 0, None, {"key": None})
    assert (f.groups, f.transactional_ids) == ([], [])
    f = request_facts(None, 1, FIND_COORDINATOR, 4, None,  # v4+ has no key field
                      {"key_type": 0, "coordinator_keys": []})
    assert (f.groups, f.transactional_ids) == ([], [])
    f = request_facts(None, 1, FIND_COORDINATOR, 2, None, {"key_type": 1, "key": "tx"})
    assert (f.groups, f.transactional_ids) == ([], ["tx"])


def test_each_selector_of_a_rule_lets_through_only_what_it_names(
        make_cluster: MakeCluster) -> None:
    """One observe rule per selector, named on broker 1 (so no owner is asked), and
    requests differing in that one thing: each rule counts exactly the requests its
    selector names."""
    s, _, f = make_cluster()
    s.create_topic("t", 2, 3)
    s.create_topic("u", 1, 3)
    rules = {"api": {"api": "Produce"}, "client": {"client_id": "c1"},
             "group": {"group": "g1"}, "txn": {"transactional_id": "x1"},
             "topic": {"topic": "t"}, "part": {"topic": "t", "partition": 1},
             "match": {"match": "acks == 1"}, "b2": {}}
    for rid, fields in rules.items():
        f.apply({"op": "observe", "broker": 2 if rid == "b2" else 1, "id": rid, **fields})
    m = f.model

    def produce(topic: str, part: int, acks: int = -1, txn: str | None = None) -> dict:
        return {"acks": acks, "transactional_id": txn, "topic_data": [
            {"name": topic, "partition_data": [{"index": part}]}]}

    m.inject_error(1, PRODUCE, produce("t", 1, 1, "x1"), "c1")  # every selector but b2
    m.inject_error(1, PRODUCE, produce("t", 0), "c2")  # api, topic
    m.inject_error(1, PRODUCE, produce("u", 1, txn="x2"), "c2")  # api
    m.inject_error(1, OFFSET_COMMIT, commit("g1"), "c1")  # client, group, topic
    m.inject_error(1, OFFSET_COMMIT, commit("g2"))  # topic
    m.inject_error(2, METADATA, {"topics": [{"name": "u"}]}, "c1")  # b2 (c1: on broker 2)
    hits = {rid: m.rules.get(rid).hits for rid in rules}
    assert hits == {"api": 3, "client": 2, "group": 1, "txn": 1, "topic": 4, "part": 1,
                    "match": 1, "b2": 1}


def test_the_first_matching_error_rule_fires_and_every_observe_rule_counts() -> None:
    """Rules in the order they were made: the first active error rule that selects a
    request fires (the ones after it do not even count it as matched); every observe
    rule counts it; an exhausted rule steps aside for the next; drop rules are asked
    only by drop_response, error rules only by inject_error."""
    book = RuleBook()
    book.add({"op": "observe", "id": "o1"})
    book.add({"op": "inject_error", "api": PRODUCE, "error": E.NOT_LEADER_OR_FOLLOWER,
              "id": "e1"})
    book.add({"op": "inject_error", "error": E.REQUEST_TIMED_OUT, "count": 2, "id": "e2"})
    book.add({"op": "drop_response", "api": PRODUCE, "after": 1, "id": "d"})
    book.add({"op": "observe", "api": PRODUCE, "id": "o2"})
    req = {"acks": 1, "topic_data": []}
    assert book.inject_error(1, PRODUCE, req) == RuleInjection(
        E.NOT_LEADER_OR_FOLLOWER, rule="e1")
    assert (book.get("e2").matched, book.get("d").matched) == (0, 0)
    assert book.inject_error(1, PRODUCE, req) == RuleInjection(E.REQUEST_TIMED_OUT, rule="e2")
    assert book.inject_error(1, METADATA, {}) == RuleInjection(E.REQUEST_TIMED_OUT, rule="e2")
    assert book.inject_error(1, PRODUCE, req) is None  # both used up
    assert {r: book.get(r).hits for r in ("o1", "e1", "e2", "o2")} == {
        "o1": 4, "e1": 1, "e2": 2, "o2": 3}
    assert not book.drop_response(1, METADATA)
    assert not book.drop_response(1, PRODUCE, None, req)  # after 1
    assert book.drop_response(1, PRODUCE, None, req)
    assert not book.drop_response(1, PRODUCE, None, req)  # its one drop done
    assert (book.get("d").matched, book.get("d").hits, book.get("o2").hits) == (2, 1, 3)
    assert book.get("e1").view()["active"] is False and book.get("o1").active


def test_a_rule_selects_only_its_api() -> None:
    """RequestRule.selects on its own (the rule book asks it only of rules of the
    request's API, but its answer must not depend on that)."""
    facts = request_facts(None, 1, METADATA, 12, None, {"topics": None})
    anywhere = lambda rule, f: True  # noqa: E731
    assert not RequestRule("r", "observe", api=PRODUCE).selects(facts, anywhere)
    assert RequestRule("r", "observe", api=METADATA).selects(facts, anywhere)
    assert RequestRule("r", "observe").selects(facts, anywhere)


def test_add_makes_the_rule_the_operation_describes() -> None:
    """RuleBook.add: every field of a validated operation in its rule, the defaults (one
    failure, no ``after``; an observe rule counts for ever), ids r1, r2... skipping the
    ones taken, and a taken id refused (409)."""
    book = RuleBook()
    named = {"op": "inject_error", "id": "r1", "api": PRODUCE, "error": E.NOT_CONTROLLER,
             "count": 4, "broker": 2, "client_id": "c", "topic": "t", "partition": 1,
             "group": "g", "transactional_id": "x", "match": "acks == 1", "after": 3}
    r = book.add(named)
    assert (r.id, r.op, r.api, r.error, r.count, r.broker, r.client_id, r.topic,
            r.partition, r.group, r.transactional_id, r.match and r.match.text,
            r.after) == ("r1", "inject_error", PRODUCE, E.NOT_CONTROLLER, 4, 2, "c", "t",
                         1, "g", "x", "acks == 1", 3)
    op = {"op": "drop_response", "api": END_TXN, "after": None}
    r = book.add(op)
    assert (r.id, op["id"], r.count, r.after, r.match, r.error) == ("r2", "r2", 1, 0, None,
                                                                    None)
    r = book.add({"op": "observe", "count": 5})
    assert (r.id, r.count, r.remaining, r.active) == ("r3", None, None, True)
    with pytest.raises(FaultError) as e:
        book.add({"op": "observe", "id": "r2"})
    assert (e.value.status, str(e.value)) == (
        409, "a rule 'r2' exists already; remove it first or name this one otherwise")
    book.add({"op": "observe", "id": "r5"})
    assert [book.add({"op": "observe"}).id for _ in range(2)] == ["r4", "r6"]
    book.remove("r2")  # an id once given is not given again (until clear)
    assert book.add({"op": "observe"}).id == "r7"


def test_the_fault_model_hands_the_rules_the_client_id_and_version(
        make_cluster: MakeCluster) -> None:
    """RuledFaultModel's request hooks pass the request's client id and version on, so
    that rules selecting on them see them."""
    _, _, f = make_cluster()
    f.apply({"op": "inject_error", "api": "Metadata", "error": "REQUEST_TIMED_OUT",
             "client_id": "c", "match": "version == 7", "broker": 1, "id": "e"})
    f.apply({"op": "drop_response", "api": "Metadata", "client_id": "c",
             "match": "version == 7", "broker": 1, "id": "d"})
    m = f.model
    req = {"topics": None}
    assert m.inject_error(1, METADATA, req, "c", 6) is None
    assert m.inject_error(1, METADATA, req, "other", 7) is None
    assert m.inject_error(1, METADATA, req, "c", 7) == RuleInjection(
        E.REQUEST_TIMED_OUT, rule="e")
    assert not m.drop_response(1, METADATA, "c", req, 6)
    assert not m.drop_response(1, METADATA, "other", req, 7)
    assert m.drop_response(1, METADATA, "c", req, 7)


def test_each_hit_is_news_to_the_listeners_with_its_rule() -> None:
    """RuleBook.on_hit: the server's waits (emulator.server.watch) learn of every hit,
    observe counts included, with the rule that hit."""
    book = RuleBook()
    seen: list[object] = []
    book.on_hit.append(seen.append)
    error = book.add({"op": "inject_error", "error": E.REQUEST_TIMED_OUT, "count": 2})
    observe = book.add({"op": "observe"})
    book.inject_error(1, METADATA, {})
    assert seen == [error, observe]  # in the order of the rules


def test_drop_rules_read_topic_ids_and_default_to_version_0(make_cluster: MakeCluster) -> None:
    """drop_response reads a request as inject_error does: topics named by id (Fetch
    v13+) resolved against the cluster; a call that gives no version is version 0, for
    both hooks."""
    s, _, f = make_cluster()
    t = s.create_topic("t", 1, 1)
    leader = t.partitions[0].leader
    f.apply({"op": "drop_response", "api": "Fetch", "topic": "t", "count": 5, "id": "d"})
    f.apply({"op": "drop_response", "api": "Metadata", "match": "version == 0",
             "broker": leader, "id": "v0"})
    m = f.model
    fetch = {"topics": [{"topic_id": t.id, "partitions": [{"partition": 0}]}]}
    assert m.drop_response(leader, 1, None, fetch, 13)
    assert not m.drop_response(leader, 1, None, {"topics": []}, 13)
    assert m.drop_response(leader, METADATA, None, {"topics": None})
    f.apply({"op": "inject_error", "api": "Metadata", "match": "version == 0",
             "error": "REQUEST_TIMED_OUT", "broker": leader, "id": "e0"})
    assert m.inject_error(leader, METADATA, {"topics": None}) is not None
    book = RuleBook()
    book.add({"op": "drop_response", "api": METADATA, "match": "version == 0"})
    book.add({"op": "inject_error", "api": METADATA, "match": "version == 0",
              "error": E.REQUEST_TIMED_OUT})
    assert book.drop_response(1, METADATA)
    assert book.inject_error(1, METADATA, {}) is not None
