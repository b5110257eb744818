"""Request rules: the faults that pick requests (inject_error, drop_response) and the
observe-only rule that only counts them, with their hits.

A rule selects requests by API, broker, client id, group, transactional id, topic and
partition, and by a predicate of the match language (emulator.faults.match) over the
request's key fields and decoded body (emulator.faults.facts). ``after`` lets that many
matching requests through first, so "the third OffsetCommit of group billing" is one
rule. A rule naming a group, a transactional id or a topic and no broker fires only on
the broker that owns it for the APIs that go to that owner (the group or transaction
coordinator, the partition leader), as a real failure would: a request that went to a
stale coordinator is answered NOT_COORDINATOR by the broker itself and does not use up
the rule.

Each rule counts the requests it matched and the ones it fired on (``hits``), and stays
listed once used up, so a test can wait until a rule has fired N times (the server's
waits, emulator.server.watch) and read the counts afterwards. Sans I/O: the server asks
``inject_error`` and ``drop_response`` per request; ``on_hit`` tells it news.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from emulator.cluster.state import ClusterState
from emulator.coordinators.runtime.placement import partition_for
from emulator.faults.facts import KEY_FIELDS, Facts, request_facts
from emulator.faults.match import MatchError, Predicate, parse
from emulator.faults.model import FaultModel, Injection
from emulator.faults.ops import FaultError
from wire.errors import ErrorCode
from wire.messages import NAMES

ERROR, DROP, OBSERVE = "inject_error", "drop_response", "observe"
RULE_OPS = (ERROR, DROP, OBSERVE)
GROUPS_TOPIC, TXN_TOPIC = "__consumer_offsets", "__transaction_state"

# The APIs a client sends to the owner of what they name (Kafka's routing): only there
# does a rule naming that owner's entity fire, unless the rule names a broker.
_API = {name: key for key, name in NAMES.items()}
GROUP_COORDINATOR_APIS = frozenset(_API[n] for n in (
    "JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup", "OffsetCommit", "OffsetFetch",
    "TxnOffsetCommit", "OffsetDelete", "DescribeGroups", "DeleteGroups",
    "ConsumerGroupHeartbeat", "ConsumerGroupDescribe", "ShareGroupHeartbeat",
    "ShareGroupDescribe", "StreamsGroupHeartbeat", "StreamsGroupDescribe") if n in _API)
TXN_COORDINATOR_APIS = frozenset(_API[n] for n in (
    "InitProducerId", "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn",
    "DescribeTransactions") if n in _API)
LEADER_APIS = frozenset(_API[n] for n in (
    "Produce", "Fetch", "ListOffsets", "OffsetForLeaderEpoch", "DeleteRecords",
    "ShareFetch", "ShareAcknowledge") if n in _API)


@dataclass(frozen=True)
class RuleInjection(Injection):
    """An injected error, and the rule that answered it (the journal names it)."""

    rule: str = ""


@dataclass
class RequestRule:
    """One rule: what it selects, what it does, how often it did."""

    id: str
    op: str  # inject_error, drop_response or observe
    api: int | None = None
    error: int | None = None
    count: int | None = None  # failures asked for (observe: None, counts for ever)
    broker: int | None = None
    client_id: str | None = None
    topic: str | None = None
    partition: int | None = None
    group: str | None = None
    transactional_id: str | None = None
    match: Predicate | None = None
    after: int = 0
    matched: int = 0
    hits: int = 0

    @property
    def remaining(self) -> int | None:
        return None if self.count is None else max(0, self.count - self.hits)

    @property
    def active(self) -> bool:
        return self.count is None or self.hits < self.count

    def selects(self, f: Facts, owner: Callable[[RequestRule, Facts], bool]) -> bool:
        if self.api is not None and self.api != f.api_key:
            return False
        if self.broker is not None and self.broker != f.broker:
            return False
        if self.client_id is not None and self.client_id != f.client_id:
            return False
        if self.group is not None and self.group not in f.groups:
            return False
        if self.transactional_id is not None and self.transactional_id not in f.transactional_ids:
            return False
        if self.topic is not None:
            if self.partition is not None:
                if (self.topic, self.partition) not in f.partitions:
                    return False
            elif self.topic not in f.topics:
                return False
        if self.match is not None and not self.match(f.lookup):
            return False
        return self.broker is not None or owner(self, f)

    def view(self) -> dict:
        """The rule as JSON (GET /rules, docs/faults.md)."""
        out: dict[str, object] = {
            "id": self.id, "op": self.op, "api": self.api,
            "api_name": NAMES.get(self.api) if self.api is not None else None}
        if self.op == ERROR and self.error is not None:
            out["error"] = self.error
            out["error_name"] = ErrorCode(self.error).name
        out.update({
            "group": self.group, "transactional_id": self.transactional_id,
            "topic": self.topic, "partition": self.partition, "client_id": self.client_id,
            "broker": self.broker, "match": self.match.text if self.match else None,
            "after": self.after, "count": self.count, "remaining": self.remaining,
            "matched": self.matched, "hits": self.hits, "active": self.active})
        return out


def parse_match(text: object, allowed: tuple[str, ...] | None = None) -> Predicate:
    """A ``match`` field parsed, or FaultError (400) saying what is wrong."""
    if not isinstance(text, str):
        raise FaultError(f"match must be a string, got {text!r}")
    try:
        pred = parse(text)
    except MatchError as e:
        raise FaultError(f"match: {e}") from None
    if allowed is not None:
        unknown = sorted(pred.names() - set(allowed))
        if unknown:
            raise FaultError(f"match: unknown name(s) {', '.join(unknown)}; names are "
                             f"{', '.join(allowed)}")
    return pred


@dataclass
class RuleBook:
    """Every request rule, in the order they were made (the first matching error or
    drop rule fires; every matching observe rule counts)."""

    state: ClusterState | None = None
    rules: dict[str, RequestRule] = field(default_factory=dict)
    next_id: int = 1
    on_hit: list[Callable[[RequestRule], None]] = field(default_factory=list)

    # ---- changes ----------------------------------------------------------------------
    def add(self, op: dict) -> RequestRule:
        """A validated inject_error, drop_response or observe operation as a rule; its
        ``id`` is set in ``op`` when it had none (the applied operation shows it)."""
        rid = op.get("id")
        if rid is None:
            while f"r{self.next_id}" in self.rules:
                self.next_id += 1
            rid = f"r{self.next_id}"
            self.next_id += 1
            op["id"] = rid
        if rid in self.rules:
            raise FaultError(f"a rule {rid!r} exists already; remove it first or name "
                             "this one otherwise", 409)
        kind = op["op"]
        rule = RequestRule(
            rid, kind, op.get("api"), op.get("error"),
            None if kind == OBSERVE else op.get("count", 1), op.get("broker"),
            op.get("client_id"), op.get("topic"), op.get("partition"), op.get("group"),
            op.get("transactional_id"),
            parse_match(op["match"]) if op.get("match") is not None else None,
            op.get("after") or 0)
        self.rules[rid] = rule
        return rule

    def remove(self, rid: str) -> RequestRule:
        rule = self.rules.pop(rid, None)
        if rule is None:
            raise FaultError(f"unknown rule {rid!r}; rules are {', '.join(self.rules) or 'none'}",
                             404)
        return rule

    def get(self, rid: str) -> RequestRule:
        rule = self.rules.get(rid)
        if rule is None:
            raise FaultError(f"unknown rule {rid!r}; rules are {', '.join(self.rules) or 'none'}",
                             404)
        return rule

    def clear(self) -> None:
        self.rules.clear()
        self.next_id = 1

    def describe(self) -> list[dict]:
        return [r.view() for r in self.rules.values()]

    # ---- the server's hooks ------------------------------------------------------------
    def inject_error(self, broker: int, api_key: int, request: dict,
                     client_id: str | None = None, version: int = 0) -> Injection | None:
        """The error to answer this request with, if an error rule fires on it; every
        observe rule it matches counts it."""
        if not self.rules:
            return None
        # the request is read (request_facts) only when a rule could want it
        candidates = [r for r in self.rules.values() if r.op != DROP and r.active
                      and (r.api is None or r.api == api_key)]
        if not candidates:
            return None
        facts = request_facts(self.state, broker, api_key, version, client_id, request)
        fired: RequestRule | None = None
        for rule in candidates:
            if not rule.selects(facts, self.at_owner):
                continue
            if rule.op == OBSERVE:
                self._hit(rule, count=True)
            elif fired is None:
                rule.matched += 1
                if rule.matched > rule.after:
                    fired = rule
                    self._hit(rule)
        if fired is None or fired.error is None:
            return None
        return RuleInjection(fired.error, fired.topic, fired.partition, fired.id)

    def drop_response(self, broker: int, api_key: int, client_id: str | None = None,
                      request: dict | None = None, version: int = 0) -> bool:
        """Is this request's response to be dropped (the request applied)?"""
        if not self.rules:
            return False
        drops = [r for r in self.rules.values() if r.op == DROP and r.active
                 and (r.api is None or r.api == api_key)]
        if not drops:
            return False
        facts = request_facts(self.state, broker, api_key, version, client_id, request or {})
        for rule in drops:
            if rule.selects(facts, self.at_owner):
                rule.matched += 1
                if rule.matched > rule.after:
                    self._hit(rule)
                    return True
        return False

    def _hit(self, rule: RequestRule, count: bool = False) -> None:
        if count:
            rule.matched += 1
        rule.hits += 1
        for listener in self.on_hit:
            listener(rule)

    # ---- owners ---------------------------------------------------------------------------
    def at_owner(self, rule: RequestRule, f: Facts) -> bool:
        """Did the request reach the broker owning what the rule names (for the APIs
        routed to that owner)? True when the owner is unknown or the API goes anywhere."""
        if rule.group is not None and f.api_key in GROUP_COORDINATOR_APIS:
            return self._coordinator(GROUPS_TOPIC, rule.group) in (None, f.broker)
        if rule.transactional_id is not None and f.api_key in TXN_COORDINATOR_APIS:
            return self._coordinator(TXN_TOPIC, rule.transactional_id) in (None, f.broker)
        if rule.topic is not None and f.api_key in LEADER_APIS and self.state is not None:
            t = self.state.topics.get(rule.topic)
            if t is None:
                return True
            named = [p for topic, p in f.partitions if topic == rule.topic
                     and (rule.partition is None or p == rule.partition)]
            return any(0 <= p < len(t.partitions) and t.partitions[p].leader == f.broker
                       for p in named) or not named
        return True

    def _coordinator(self, topic: str, key: str) -> int | None:
        """The leader of ``key``'s partition of the internal topic, as the coordinators
        place it (emulator.coordinators.runtime.placement); None before the topic exists."""
        t = self.state.topics.get(topic) if self.state is not None else None
        if t is None or not t.partitions:
            return None
        leader = t.partitions[partition_for(key, len(t.partitions))].leader
        return leader if leader >= 0 else None




@dataclass
class RuledFaultModel(FaultModel):
    """The fault model with its request rules: the server's request hooks
    (``inject_error``, ``drop_response``) ask the rule book, which keeps each rule's
    hits; ``clear`` and ``describe`` include the rules."""

    rules: RuleBook = field(default_factory=RuleBook)

    def __post_init__(self) -> None:
        self.rules.state = self.state

    def inject_error(self, broker: int, api_key: int, request: dict,
                     client_id: str | None = None, version: int = 0) -> Injection | None:
        return self.rules.inject_error(broker, api_key, request, client_id, version)

    def drop_response(self, broker: int, api_key: int, client_id: str | None = None,
                      request: dict | None = None, version: int = 0) -> bool:
        return self.rules.drop_response(broker, api_key, client_id, request, version)

    def clear(self) -> None:
        super().clear()
        self.rules.clear()

    def describe(self) -> dict:
        out = super().describe()
        views = self.rules.describe()
        fields = ("api", "error", "count", "broker", "topic", "partition", "client_id",
                  "group", "transactional_id", "match", "after", "id")
        # the older keys list the rules still in force, as they did
        out["errors"] = [{k: v[k] for k in fields if v.get(k) is not None} | {
            "count": v["remaining"]} for v in views if v["op"] == ERROR and v["active"]]
        out["drops"] = [{k: v[k] for k in fields if v.get(k) is not None} | {
            "count": v["remaining"]} for v in views if v["op"] == DROP and v["active"]]
        out["rules"] = views
        return out


__all__ = ["KEY_FIELDS", "RULE_OPS", "RequestRule", "RuleBook", "RuleInjection",
           "RuledFaultModel", "parse_match"]
