"""Which of the configs Kafka 4.4 knows the emulator acts on, and where: the one declaration.

Every broker, topic and group key of emulator/cluster/kafka_configs.py is listed by
DescribeConfigs and accepted by AlterConfigs (emulator/cluster/configs.py); only the keys
below change what the emulator does. :data:`ACTED_ON` names each with the modules that
read it; :func:`acted_on` adds the keys that act through another (a topic key's broker
default, a group key's broker default and its min/max bounds); every other key is
accepted without effect (:func:`without_effect`). docs/configs.md is generated from this
module (``python -m conformance.fidelity_doc``), and tests/test_config_effects.py fails
when code reads a key not declared here, when a declared key is no longer read, or when
a Kafka key is in neither set. A key that is read is declared here in the same change.
"""

from __future__ import annotations

from emulator.cluster import kafka_configs as _kafka
from emulator.cluster.configs import BROKER_CONFIGS, TOPIC_CONFIGS
from emulator.cluster.group_configs import GROUP_CONFIGS

# key -> where the emulator reads it (the modules; a phrase where the path says little).
ACTED_ON: dict[str, str] = {
    "advertised.listeners": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "authorizer.class.name": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "auto.create.topics.enable": "emulator/cluster/topics.py, emulator/handlers/api_003_metadata.py",
    "auto.leader.rebalance.enable": "emulator/cluster/controller.py",
    "broker.id": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "broker.session.timeout.ms": "emulator/cluster/controller.py",
    "cleanup.policy": "emulator/cluster/compaction.py, emulator/cluster/metadata.py",
    "connections.max.idle.ms": "emulator/server/limits.py",
    "connections.max.reauth.ms": "emulator/cli.py",
    "consumer.heartbeat.interval.ms": "emulator/coordinators/consumer/protocol.py",
    "consumer.session.timeout.ms": "emulator/coordinators/consumer/protocol.py, emulator/coordinators/groups/coordinator.py",
    "controller.listener.names": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "controller.quorum.bootstrap.servers": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "controller.quorum.voters": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "default.replication.factor": "emulator/cluster/topics.py, emulator/handlers/api_019_create_topics.py",
    "delete.retention.ms": "emulator/cluster/compaction.py",
    "delete.topic.enable": "emulator/handlers/api_020_delete_topics.py",
    "flush.messages": "emulator/storage/store.py",
    "flush.ms": "emulator/storage/store.py",
    "follower.replication.throttled.rate": "emulator/cluster/throttle.py",
    "follower.replication.throttled.replicas": "emulator/cluster/throttle.py",
    "group.consumer.heartbeat.interval.ms": "emulator/coordinators/consumer/protocol.py",
    "group.consumer.max.size": "emulator/coordinators/consumer/migration.py, emulator/coordinators/consumer/protocol.py",
    "group.consumer.migration.policy": "emulator/coordinators/consumer/migration.py",
    "group.consumer.session.timeout.ms": "emulator/coordinators/consumer/protocol.py, emulator/coordinators/groups/coordinator.py",
    "group.initial.rebalance.delay.ms": "emulator/coordinators/classic/protocol.py",
    "group.max.session.timeout.ms": "emulator/coordinators/classic/protocol.py",
    "group.max.size": "emulator/coordinators/classic/protocol.py, emulator/coordinators/consumer/migration.py",
    "group.min.session.timeout.ms": "emulator/coordinators/classic/protocol.py",
    "group.share.max.share.sessions": "emulator/coordinators/share/coordinator.py",
    "group.share.max.size": "emulator/coordinators/share/groups.py",
    "group.streams.assignment.interval.ms": "emulator/coordinators/streams/protocol.py",
    "group.streams.heartbeat.interval.ms": "emulator/coordinators/streams/protocol.py",
    "group.streams.initial.rebalance.delay.ms": "emulator/coordinators/streams/protocol.py",
    "group.streams.max.size": "emulator/coordinators/streams/protocol.py",
    "group.streams.num.standby.replicas": "emulator/coordinators/streams/protocol.py",
    "group.streams.session.timeout.ms": "emulator/coordinators/groups/coordinator.py, emulator/coordinators/streams/protocol.py",
    "inter.broker.listener.name": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "internal.segment.bytes": "emulator/cluster/metadata.py",
    "leader.imbalance.check.interval.seconds": "emulator/cluster/controller.py",
    "leader.imbalance.per.broker.percentage": "emulator/cluster/controller.py",
    "leader.replication.throttled.rate": "emulator/cluster/throttle.py",
    "leader.replication.throttled.replicas": "emulator/cluster/throttle.py",
    "listener.security.protocol.map": "emulator/cli.py, emulator/official_image.py (official image)",
    "listeners": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "log.cleaner.backoff.ms": "emulator/server/purgatory.py",
    "log.dir": "emulator/cluster/log_dirs.py",
    "log.dirs": "emulator/cluster/log_dirs.py",
    "log.retention.hours": "emulator/cluster/metadata.py",
    "log.retention.ms": "emulator/cluster/metadata.py",
    "max.compaction.lag.ms": "emulator/cluster/compaction.py",
    "max.connection.creation.rate": "emulator/server/limits.py",
    "max.connections": "emulator/server/limits.py",
    "max.connections.per.ip": "emulator/server/limits.py",
    "max.connections.per.ip.overrides": "emulator/server/limits.py",
    "max.incremental.fetch.session.cache.slots": "emulator/cluster/fetch_sessions.py",
    "max.message.bytes": "emulator/cluster/metadata.py",
    "message.timestamp.after.max.ms": "emulator/cluster/metadata.py",
    "message.timestamp.before.max.ms": "emulator/cluster/metadata.py",
    "message.timestamp.type": "emulator/cluster/metadata.py",
    "min.cleanable.dirty.ratio": "emulator/cluster/compaction.py",
    "min.compaction.lag.ms": "emulator/cluster/compaction.py",
    "min.incremental.fetch.session.eviction.ms": "emulator/cluster/fetch_sessions.py",
    "min.insync.replicas": "emulator/cluster/metadata.py",
    "node.id": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "num.partitions": "emulator/cluster/topics.py, emulator/handlers/api_019_create_topics.py",
    "offsets.retention.check.interval.ms": "emulator/coordinators/coordinator_log.py",
    "offsets.retention.minutes": "emulator/coordinators/coordinator_log.py",
    "offsets.topic.num.partitions": "emulator/coordinators/groups/base.py",
    "offsets.topic.replication.factor": "emulator/coordinators/groups/base.py, emulator/runtime.py",
    "process.roles": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "queued.max.request.bytes": "emulator/server/limits.py",
    "quota.window.num": "emulator/server/limits.py",
    "quota.window.size.seconds": "emulator/server/limits.py",
    "replica.fetch.max.bytes": "emulator/cluster/replication.py, emulator/cluster/throttle.py",
    "replica.lag.time.max.ms": "emulator/cluster/replication.py",
    "replication.quota.window.num": "emulator/cluster/throttle.py",
    "replication.quota.window.size.seconds": "emulator/cluster/throttle.py",
    "retention.bytes": "emulator/cluster/metadata.py",
    "retention.ms": "emulator/cluster/metadata.py",
    "sasl.enabled.mechanisms": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "sasl.jaas.config": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "sasl.mechanism.controller.protocol": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "sasl.mechanism.inter.broker.protocol": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "segment.bytes": "emulator/cluster/metadata.py",
    "segment.ms": "emulator/cluster/metadata.py",
    "share.assignment.interval.ms": "emulator/coordinators/share/groups.py",
    "share.auto.offset.reset": "emulator/coordinators/share/coordinator.py",
    "share.coordinator.snapshot.update.records.per.snapshot": "emulator/coordinators/share/state_log.py",
    "share.coordinator.state.topic.num.partitions": "emulator/coordinators/share/state.py",
    "share.coordinator.state.topic.replication.factor": "emulator/coordinators/share/state.py",
    "share.coordinator.state.topic.segment.bytes": "emulator/coordinators/share/state.py",
    "share.delivery.count.limit": "emulator/coordinators/share/coordinator.py",
    "share.heartbeat.interval.ms": "emulator/coordinators/share/groups.py",
    "share.isolation.level": "emulator/coordinators/share/coordinator.py",
    "share.partition.max.record.locks": "emulator/coordinators/share/coordinator.py",
    "share.record.lock.duration.ms": "emulator/coordinators/share/coordinator.py, emulator/handlers/api_078_share_fetch.py, emulator/handlers/api_079_share_acknowledge.py",
    "share.renew.acknowledge.enable": "emulator/coordinators/share/coordinator.py",
    "share.session.timeout.ms": "emulator/coordinators/share/groups.py",
    "socket.request.max.bytes": "emulator/server/app.py, emulator/server/limits.py",
    "ssl.client.auth": "emulator/cli.py, emulator/official_image.py (official image)",
    "ssl.endpoint.identification.algorithm": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "ssl.key.password": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "ssl.keystore.certificate.chain": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "ssl.keystore.key": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "ssl.keystore.location": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "ssl.keystore.password": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "ssl.keystore.type": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "ssl.truststore.certificates": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "ssl.truststore.location": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "ssl.truststore.password": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "ssl.truststore.type": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "streams.assignment.interval.ms": "emulator/coordinators/streams/protocol.py",
    "streams.heartbeat.interval.ms": "emulator/coordinators/streams/protocol.py",
    "streams.initial.rebalance.delay.ms": "emulator/coordinators/streams/protocol.py",
    "streams.num.standby.replicas": "emulator/coordinators/streams/protocol.py",
    "streams.rack.aware.assignment.tags": "emulator/coordinators/streams/protocol.py",
    "streams.session.timeout.ms": "emulator/coordinators/groups/coordinator.py, emulator/coordinators/streams/protocol.py",
    "transaction.max.timeout.ms": "emulator/coordinators/transactions/coordinator.py",
    "transaction.state.log.num.partitions": "emulator/coordinators/transactions/coordinator.py",
    "transaction.state.log.replication.factor": "emulator/coordinators/transactions/coordinator.py, emulator/runtime.py",
    "transactional.id.expiration.ms": "emulator/coordinators/transactions/coordinator.py",
    "unclean.leader.election.enable": "emulator/cluster/leadership.py, emulator/cluster/reassignment.py",
}


def kafka_keys() -> dict[str, str]:
    """Every key Kafka 4.4 knows -> its resource kinds ("broker", "topic", "group")."""
    kinds: dict[str, list[str]] = {}
    for kind, rows in (("broker", _kafka.BROKER), ("topic", _kafka.TOPIC),
                       ("group", _kafka.GROUP)):
        for row in rows:
            kinds.setdefault(row[0], []).append(kind)
    return {k: ", ".join(v) for k, v in kinds.items()}


def known_keys() -> frozenset[str]:
    """Kafka's keys plus the broker keys Kafka changes only dynamically (its throttle
    rates, which DescribeConfigs lists only once set) and the emulator's internal ones."""
    return frozenset(kafka_keys()) | frozenset(BROKER_CONFIGS) | frozenset(TOPIC_CONFIGS)


def acted_on() -> dict[str, str]:
    """:data:`ACTED_ON` plus the keys that act through one of them: the broker default
    (synonym) of an acted-on topic key, and the broker default and min/max bounds of an
    acted-on group key (AlterConfigs refuses a group value outside them)."""
    out = dict(ACTED_ON)
    for key in ACTED_ON:
        topic = TOPIC_CONFIGS.get(key)
        if topic is not None and topic.broker_synonym and topic.broker_synonym != key:
            out.setdefault(topic.broker_synonym, f"as the broker default of topic key {key}")
        group = GROUP_CONFIGS.get(key)
        if group is not None and group.broker_synonym:
            syn = group.broker_synonym
            out.setdefault(syn, f"as the broker default of group key {key}")
            kind, _, suffix = syn.removeprefix("group.").partition(".")
            for bound in (f"group.{kind}.min.{suffix}", f"group.{kind}.max.{suffix}"):
                if bound in known_keys():
                    out.setdefault(bound, f"bounds group key {key} (AlterConfigs)")
    return out


def without_effect() -> list[str]:
    """Every Kafka key the emulator accepts and lists but does not act on, sorted."""
    acted = acted_on()
    return sorted(k for k in kafka_keys() if k not in acted)
