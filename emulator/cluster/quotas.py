"""Client quotas (KIP-546 admin, KIP-13/KIP-219 enforcement), as Kafka's quota managers.

Quotas are set on entities: a user, a client id, both, or their defaults (a null name),
or an ip. ``alter``/``describe`` follow Kafka's AlterClientQuotas and DescribeClientQuotas
rules; ``throttle_ms`` enforces producer_byte_rate and consumer_byte_rate the way
Kafka's ClientQuotaManager does: the bytes of each (user, client id) are measured over
``quota.window.num`` windows of ``quota.window.size.seconds`` (11 of 1 s), and a client
above its quota gets ``throttle_time_ms = (rate - quota) / quota * window``, which
clients honour by waiting (KIP-219); a ShareFetch reads at most ``max_in_window`` and
a throttled one answers without its records, whose bytes are taken back (``unrecord``),
as Kafka 4.4 does. The quota that applies is the most specific one in
Kafka's order (user+client, user+default client, user, default user+client, ...).

request_percentage is enforced as Kafka's ClientRequestQuotaManager (KIP-124) does: the
time the broker spent on each request of the (user, client id) is recorded as a
percentage of one thread over the same windows (``nanos * 100 / 1e9`` per request, so
request_percentage=50 allows half a thread), and a client above it gets
``(rate - quota) / quota * window``, at most one quota window
(quota.window.size.seconds), as throttle_time_ms on every throttleable response
(Produce and Fetch answer the larger of their byte-rate and request throttles). The
server measures the time; this module only does the arithmetic.

controller_mutation_rate (KIP-599) is enforced under --fidelity kafka as Kafka's
ControllerMutationQuotaManager does (``controller_mutation``): a token bucket per
(user, client id) of quota * quota.window.num * window seconds tokens, refilled at the
quota per second, from which CreateTopics, CreatePartitions and DeleteTopics take one
token per partition created or deleted. From CreateTopics v6, CreatePartitions v3 and
DeleteTopics v5 it is strict: a topic is refused THROTTLING_QUOTA_EXCEEDED while the
bucket is below zero (a topic that finds it at zero or above passes, even one that takes
it far below); older versions pass and answer the throttle time. The throttle time is
the time the bucket needs to come back to zero. Under --fidelity kafka the server then
mutes a throttled connection for throttle_time_ms, as Kafka's (KIP-219) does, for every
quota (emulator/server/connections.py). fast stores controller_mutation_rate without
enforcing it and never mutes (docs/fidelity.md, controller-mutation-quota).

Differs from Kafka: the controller's own quota windows (controller.quota.window.*) are
the client quotas' (quota.window.*; both 11 of 1 s by default); the time measured is the
handler's (Kafka adds its network threads' time).
"""

from __future__ import annotations

from collections import deque
from typing import TypedDict

from wire.errors import ErrorCode as E

USER, CLIENT_ID, IP = "user", "client-id", "ip"
CLIENT_KEYS = {"producer_byte_rate", "consumer_byte_rate", "request_percentage",
               "controller_mutation_rate"}
IP_KEYS = {"connection_creation_rate"}
MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY = 0, 1, 2
NANOS_TO_PERCENTAGE_PER_SECOND = 100.0 / 1e9  # ClientRequestQuotaManager's unit
# Broker-to-broker (cluster action) requests are exempt from request quotas in Kafka:
# WriteTxnMarkers and the share coordinator's state APIs.
REQUEST_QUOTA_EXEMPT = frozenset({27, 83, 84, 85, 86, 87})

Entity = tuple[tuple[str, str | None], ...]  # sorted (type, name); name None: default


# The request parts this module reads, as the handlers decode them (wire/messages/
# alter_client_quotas.py, describe_client_quotas.py): typed so a misspelt field fails
# the type check rather than a request.
class EntityPart(TypedDict):
    """One (type, name) of an AlterClientQuotas entity; name None: the default."""

    entity_type: str
    entity_name: str | None


class QuotaOp(TypedDict):
    """One change of an AlterClientQuotas entry: set ``key`` to ``value``, or remove it."""

    key: str
    value: float
    remove: bool


class FilterComponent(TypedDict):
    """One component of a DescribeClientQuotas filter (``match`` None: no name)."""

    entity_type: str
    match_type: int
    match: str | None


class QuotaError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def entity_of(pairs: list[EntityPart]) -> Entity:
    """An entity from request pairs, validated as Kafka's ClientQuotaEntity is."""
    types = [p["entity_type"] for p in pairs]
    if not types:
        raise QuotaError(E.INVALID_REQUEST, "Invalid empty client quota entity")
    if len(set(types)) != len(types):
        raise QuotaError(E.INVALID_REQUEST, f"Duplicate entity type in {types}")
    for t in types:
        if t not in (USER, CLIENT_ID, IP):
            raise QuotaError(E.UNSUPPORTED_VERSION, f"Unhandled client quota entity type: {t}")
    if IP in types and len(types) > 1:
        raise QuotaError(E.INVALID_REQUEST,
                         "Invalid quota entity combination, IP entity should not be "
                         "combined with User or ClientId entities.")
    return tuple(sorted((p["entity_type"], p["entity_name"]) for p in pairs))


class ClientQuotas:
    """Every quota of the cluster and the byte rates they are enforced against."""

    def __init__(self, window_num: int = 11, window_ms: int = 1000) -> None:
        self.quotas: dict[Entity, dict[str, float]] = {}
        self.window_num = window_num
        self.window_ms = window_ms
        # (kind, user, client id) -> deque of (time ms, bytes)
        self.samples: dict[tuple[str, str, str], deque[tuple[int, float]]] = {}
        # (user, client id) -> (tokens, when counted): controller_mutation_rate buckets
        self.buckets: dict[tuple[str, str], tuple[float, int]] = {}

    # ---- AlterClientQuotas / DescribeClientQuotas ---------------------------------------
    def alter(self, entity: Entity, ops: list[QuotaOp], validate_only: bool) -> None:
        keys = IP_KEYS if entity[0][0] == IP else CLIENT_KEYS
        for op in ops:
            if op["key"] not in keys:
                raise QuotaError(E.INVALID_REQUEST,
                                 f"Invalid configuration key {op['key']}")
            if not op["remove"] and op["value"] <= 0:
                raise QuotaError(E.INVALID_REQUEST,
                                 f"Invalid value {op['value']} for {op['key']}: must be positive")
        if validate_only:
            return
        values = self.quotas.setdefault(entity, {})
        for op in ops:
            if op["remove"]:
                values.pop(op["key"], None)
            else:
                values[op["key"]] = op["value"]
        if not values:
            del self.quotas[entity]

    def describe(self, components: list[FilterComponent], strict: bool
                 ) -> list[tuple[Entity, dict[str, float]]]:
        wanted: dict[str, tuple[int, str | None]] = {}
        for c in components:
            t, match_type = c["entity_type"], c["match_type"]
            if t in wanted:
                raise QuotaError(E.INVALID_REQUEST, f"Duplicate entity type: {t}")
            if t not in (USER, CLIENT_ID, IP):
                raise QuotaError(E.UNSUPPORTED_VERSION, f"Custom entity type '{t}' not supported")
            if match_type not in (MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY):
                raise QuotaError(E.INVALID_REQUEST, f"Unknown match type {match_type}")
            if match_type == MATCH_EXACT and c["match"] is None:
                raise QuotaError(E.INVALID_REQUEST, "Exact match requires a name")
            wanted[t] = (match_type, c["match"])
        if IP in wanted and len(wanted) > 1:
            raise QuotaError(E.INVALID_REQUEST,
                             "Invalid entity filter component combination, IP filter component "
                             "should not be used with User or clientId filter component.")
        out = []
        for entity, values in sorted(self.quotas.items(), key=lambda kv: str(kv[0])):
            names = dict(entity)
            if strict and set(names) != set(wanted):
                continue
            if not all(t in names and _matches(names[t], m) for t, m in wanted.items()):
                continue
            out.append((entity, dict(values)))
        return out

    # ---- enforcement ----------------------------------------------------------------------
    def quota_for(self, key: str, user: str, client_id: str) -> float | None:
        """Kafka's DefaultQuotaCallback order, most specific first."""
        for entity in (((CLIENT_ID, client_id), (USER, user)), ((CLIENT_ID, None), (USER, user)),
                       ((USER, user),), ((CLIENT_ID, client_id), (USER, None)),
                       ((CLIENT_ID, None), (USER, None)), ((USER, None),),
                       ((CLIENT_ID, client_id),), ((CLIENT_ID, None),)):
            value = self.quotas.get(entity, {}).get(key)
            if value is not None:
                return value
        return None

    def controller_mutation(self, user: str, client_id: str, permits: int, now: int,
                            strict: bool) -> tuple[bool, int]:
        """Take ``permits`` partition mutations from the client's controller_mutation_rate
        bucket: (accepted, throttle ms). Strict (CreateTopics v6+, CreatePartitions v3+,
        DeleteTopics v5+): refused with the time until the bucket is back to zero while it
        is below zero, else taken whatever it leaves; permissive: always taken, with that
        time when it leaves the bucket below zero. No quota: (True, 0)."""
        quota = self.quota_for("controller_mutation_rate", user, client_id)
        if quota is None:
            return True, 0
        burst = quota * self.window_num * self.window_ms / 1000
        tokens, last = self.buckets.get((user, client_id), (burst, now))
        tokens = min(burst, tokens + quota * max(0, now - last) / 1000)
        accepted = not strict or tokens >= 0
        if accepted:
            tokens -= permits
        self.buckets[(user, client_id)] = (tokens, now)
        if tokens >= 0 or (strict and accepted):  # Kafka's strict quota: no throttle
            return accepted, 0                     # for what it let through
        return accepted, round(-tokens / quota * 1000)

    def ip_connection_rate(self, ip: str) -> int | None:
        """connection_creation_rate of an address (KIP-612): its own quota, else the
        default ip entity's; None when neither is set (Kafka's Int.MaxValue: off)."""
        for entity in (((IP, ip),), ((IP, None),)):
            value = self.quotas.get(entity, {}).get("connection_creation_rate")
            if value is not None:
                return int(value)
        return None

    def enforces(self, key: str) -> bool:
        """Some quota of this kind is set (the request path's cheap check)."""
        return any(key in values for values in self.quotas.values())

    def record_request_time(self, user: str, client_id: str, nanos: int, now: int) -> int:
        """ClientRequestQuotaManager: the request's handler time against the client's
        request_percentage; the throttle time, bounded by one quota window."""
        throttle = self.record("request_percentage", user, client_id,
                               nanos * NANOS_TO_PERCENTAGE_PER_SECOND, now)
        return min(throttle, self.window_ms)

    def max_in_window(self, key: str, user: str, client_id: str) -> float | None:
        """Kafka's getMaxValueInQuotaWindow: what the client may take in the quota
        window without being throttled (quota * (windows - 1) * window size); None
        without a quota. A consumer's fetch reads at most this much."""
        quota = self.quota_for(key, user, client_id)
        if quota is None:
            return None
        return quota * (self.window_num - 1) * self.window_ms / 1000

    def unrecord(self, key: str, user: str, client_id: str, size: float, now: int) -> None:
        """Take back ``size`` recorded at ``now`` (Kafka's unrecordQuotaSensor: a
        throttled answer carries no records, so its bytes do not count)."""
        samples = self.samples.get((key, user, client_id))
        if samples:
            samples.append((now, -size))

    def record(self, key: str, user: str, client_id: str, size: float, now: int) -> int:
        """Record ``size`` (bytes, or percent-seconds for request_percentage) for the
        client; the throttle time its quota asks for."""
        quota = self.quota_for(key, user, client_id)
        if quota is None:
            return 0
        span = self.window_num * self.window_ms
        samples = self.samples.setdefault((key, user, client_id), deque())
        samples.append((now, size))
        while samples and samples[0][0] <= now - span:
            samples.popleft()
        elapsed = max(now - samples[0][0] + self.window_ms,
                      (self.window_num - 1) * self.window_ms)
        elapsed = min(elapsed, span)
        rate = sum(b for _, b in samples) * 1000 / elapsed
        if rate <= quota:
            return 0
        throttle: int = round((rate - quota) / quota * elapsed)  # QuotaUtils.throttleTime
        return throttle


def _matches(name: str | None, match: tuple[int, str | None]) -> bool:
    match_type, value = match
    if match_type == MATCH_EXACT:
        return name == value
    if match_type == MATCH_DEFAULT:
        return name is None
    return True
