"""Client quotas (KIP-546 admin, byte-rate enforcement) on a manual clock."""

from __future__ import annotations

import pytest

from emulator.cluster.quotas import ClientQuotas, QuotaError, entity_of
from wire.errors import ErrorCode as E


def _entity(**names: str | None) -> list[dict]:
    return [{"entity_type": t.replace("_", "-"), "entity_name": n} for t, n in names.items()]


def _set(q: ClientQuotas, key: str, value: float, **names: str | None) -> None:
    q.alter(entity_of(_entity(**names)), [{"key": key, "value": value, "remove": False}], False)


def test_alter_validates_as_kafka_does() -> None:
    q = ClientQuotas()
    with pytest.raises(QuotaError) as e:
        entity_of(_entity(ip="1.2.3.4", user="u"))
    assert e.value.code == E.INVALID_REQUEST
    with pytest.raises(QuotaError) as e:
        entity_of([{"entity_type": "tenant", "entity_name": "x"}])
    assert e.value.code == E.UNSUPPORTED_VERSION
    with pytest.raises(QuotaError) as e:
        _set(q, "connection_creation_rate", 5, user="u")
    assert e.value.code == E.INVALID_REQUEST
    q.alter(entity_of(_entity(user="u")), [{"key": "producer_byte_rate", "value": 10,
                                           "remove": False}], validate_only=True)
    assert q.quotas == {}


def test_describe_filters_exact_default_any_and_strict() -> None:
    q = ClientQuotas()
    _set(q, "producer_byte_rate", 100, user="alice")
    _set(q, "consumer_byte_rate", 200, user=None)
    _set(q, "producer_byte_rate", 300, user="alice", client_id="app")
    exact = q.describe([{"entity_type": "user", "match_type": 0, "match": "alice"}], False)
    assert sorted(len(e) for e, _ in exact) == [1, 2]
    strict = q.describe([{"entity_type": "user", "match_type": 0, "match": "alice"}], True)
    assert [v for _, v in strict] == [{"producer_byte_rate": 100}]
    default = q.describe([{"entity_type": "user", "match_type": 1, "match": None}], False)
    assert [v for _, v in default] == [{"consumer_byte_rate": 200}]
    assert len(q.describe([{"entity_type": "user", "match_type": 2, "match": None}], False)) == 3


def test_most_specific_quota_applies_and_throttle_follows_the_rate() -> None:
    q = ClientQuotas()
    _set(q, "producer_byte_rate", 1000, user=None)
    _set(q, "producer_byte_rate", 100_000, user="alice", client_id="fast")
    assert q.quota_for("producer_byte_rate", "alice", "fast") == 100_000
    assert q.quota_for("producer_byte_rate", "alice", "other") == 1000
    assert q.quota_for("consumer_byte_rate", "alice", "fast") is None
    # 10 windows' worth of quota in one go: rate 1000 B/s over the 10 s minimum -> no throttle
    assert q.record("producer_byte_rate", "bob", "c", 10_000, now=0) == 0
    # twice the quota: throttled by (2000 - 1000) / 1000 * 10 s
    assert q.record("producer_byte_rate", "bob", "c", 10_000, now=0) == 10_000
    # the fast client under its own quota is not
    assert q.record("producer_byte_rate", "alice", "fast", 10_000, now=0) == 0
    # once the samples age out of the 11 windows the client is free again
    assert q.record("producer_byte_rate", "bob", "c", 100, now=20_000) == 0


def test_request_percentage_throttles_by_handler_time_bounded_by_one_window() -> None:
    """KIP-124: request time as a percentage of one thread over the quota windows."""
    q = ClientQuotas()
    _set(q, "request_percentage", 10, client_id="busy")  # a tenth of a thread
    assert q.enforces("request_percentage") and not q.enforces("controller_mutation_rate")
    # 1 s of handler time in the 10 s minimum window is 10 %: at the quota, no throttle
    assert q.record_request_time("u", "busy", 1_000_000_000, now=0) == 0
    # 1.05 s -> 10.5 %: (10.5 - 10) / 10 * 10 s = 500 ms
    assert q.record_request_time("u", "busy", 50_000_000, now=0) == 500
    # far above: bounded by one quota window (ClientRequestQuotaManager's maxThrottleTimeMs)
    assert q.record_request_time("u", "busy", 5_000_000_000, now=0) == 1000
    # another client id has no quota; and once the windows have passed, none is due
    assert q.record_request_time("u", "idle", 5_000_000_000, now=0) == 0
    assert q.record_request_time("u", "busy", 1_000, now=60_000) == 0
