"""Which of the configs Kafka 4.4 knows the emulator acts on, and where: the one declaration.

Every broker, topic and group key of emulator/cluster/kafka_configs.py is listed by
DescribeConfigs and accepted by AlterConfigs (emulator/cluster/configs.py); only the keys
below change what the emulator does. :data:`ACTED_ON` names each with the modules that
read it; :func:`acted_on` adds the keys that act through another (a topic key's broker
default, a group key's broker default and its min/max bounds); :data:`WITHOUT_EFFECT`
says, by family, why each other key is accepted without effect. docs/configs.md is generated from this
module (``python -m conformance.fidelity_doc``), and tests/test_config_effects.py fails
when code reads a key not declared here, when a declared key is no longer read, when a
key is in both sets, or when a Kafka key is in neither. A key that is read is declared here in the same change.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from emulator.cluster import kafka_configs as _kafka
from emulator.cluster.configs import BROKER_CONFIGS, TOPIC_CONFIGS
from emulator.cluster.group_configs import GROUP_CONFIGS

# key -> where the emulator reads it (the modules; a phrase where the path says little).
ACTED_ON: dict[str, str] = {
    "advertised.listeners": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "authorizer.class.name": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "auto.create.topics.enable": "emulator/cluster/topics.py, emulator/handlers/api_003_metadata.py",
    "add.partitions.to.txn.retry.backoff.max.ms": "emulator/handlers/api_000_produce.py (--fidelity kafka: how long a transaction version 2 produce waits for its transaction's markers)",
    "auto.leader.rebalance.enable": "emulator/cluster/controller.py",
    "broker.id": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "broker.session.timeout.ms": "emulator/cluster/controller.py",
    "cleanup.policy": "emulator/cluster/compaction.py, emulator/cluster/metadata.py",
    "compression.type": "emulator/cluster/metadata.py, emulator/cluster/replication.py (--fidelity kafka: docs/fidelity.md, topic-compression-type)",
    "connections.max.idle.ms": "emulator/server/limits.py",
    "connections.max.reauth.ms": "emulator/cli.py",
    "consumer.assignment.interval.ms": "emulator/coordinators/consumer/protocol.py (--fidelity kafka: docs/fidelity.md, consumer-assignment-interval)",
    "consumer.heartbeat.interval.ms": "emulator/coordinators/consumer/protocol.py",
    "consumer.session.timeout.ms": "emulator/coordinators/consumer/protocol.py, emulator/coordinators/groups/coordinator.py",
    "controller.listener.names": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "controller.quorum.bootstrap.servers": "official image: several voters make the nodes one cluster (emulator/official_cluster.py)",
    "controller.quorum.voters": "official image: several voters make the nodes one cluster (emulator/official_cluster.py)",
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
    "metadata.log.dir": "emulator/cluster/log_dirs.py (a failed one halts the broker)",
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
    "offsets.topic.replication.factor": "emulator/coordinators/groups/base.py, emulator/runtime/cluster.py",
    "process.roles": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "queued.max.request.bytes": "emulator/server/limits.py",
    "quota.window.num": "emulator/server/limits.py",
    "quota.window.size.seconds": "emulator/server/limits.py",
    "replica.high.watermark.checkpoint.interval.ms": "emulator/faults/model.py",
    "replica.fetch.max.bytes": "emulator/cluster/followers.py, emulator/cluster/throttle.py",
    "replica.lag.time.max.ms": "emulator/cluster/followers.py",
    "replication.quota.window.num": "emulator/cluster/throttle.py",
    "replication.quota.window.size.seconds": "emulator/cluster/throttle.py",
    "retention.bytes": "emulator/cluster/metadata.py",
    "retention.ms": "emulator/cluster/metadata.py",
    "sasl.enabled.mechanisms": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "sasl.jaas.config": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "sasl.mechanism.controller.protocol": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "sasl.mechanism.inter.broker.protocol": "official image: KAFKA_* variables and server.properties (emulator/official_image.py)",
    "segment.bytes": "emulator/cluster/metadata.py",
    "offsets.topic.segment.bytes": "emulator/coordinators/groups/base.py (__consumer_offsets' segment.bytes: the cleaner compacts only rolled segments)",
    "transaction.state.log.segment.bytes": "emulator/coordinators/transactions/coordinator.py (__transaction_state's segment.bytes)",
    "transaction.state.log.min.isr": "emulator/coordinators/transactions/coordinator.py (__transaction_state's min.insync.replicas; the coordinator's own writes are not held to it: docs/fidelity.md)",
    "segment.ms": "emulator/cluster/metadata.py",
    "share.assignment.interval.ms": "emulator/coordinators/share/groups.py",
    "share.auto.offset.reset": "emulator/coordinators/share/coordinator.py",
    "share.coordinator.snapshot.update.records.per.snapshot": "emulator/coordinators/share/state_log.py",
    "share.coordinator.state.topic.num.partitions": "emulator/coordinators/share/state.py",
    "share.coordinator.state.topic.replication.factor": "emulator/coordinators/share/state.py",
    "share.coordinator.state.topic.segment.bytes": "emulator/coordinators/share/state.py",
    "share.coordinator.state.topic.min.isr": "emulator/coordinators/share/state.py (__share_group_state's min.insync.replicas; the coordinator's own writes are not held to it: docs/fidelity.md)",
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
    "transaction.state.log.replication.factor": "emulator/coordinators/transactions/coordinator.py, emulator/runtime/cluster.py",
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


# Why each key Kafka knows has no effect here, by family (fnmatch patterns). Declared, not
# derived: a key Kafka adds (a new kafka_configs.py) is in neither set until someone says
# whether it acts, and tests/test_config_effects.py fails meanwhile.
WITHOUT_EFFECT: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("threads, buffers, sweep intervals and I/O tuning: one event loop serves every "
     "broker, with nothing to size, and timers fire at their own deadlines", (
        "background.threads", "num.io.threads", "num.network.threads",
        "num.recovery.threads.per.data.dir", "num.replica.alter.log.dirs.threads",
        "num.replica.fetchers", "group.coordinator.threads",
        "group.coordinator.background.threads", "share.coordinator.threads",
        "log.cleaner.threads", "log.cleaner.dedupe.buffer.size",
        "log.cleaner.io.buffer.load.factor", "log.cleaner.io.buffer.size",
        "log.cleaner.io.max.bytes.per.second", "socket.receive.buffer.bytes",
        "socket.send.buffer.bytes", "socket.listen.backlog.size",
        "replica.socket.receive.buffer.bytes", "replica.socket.timeout.ms",
        "queued.max.requests", "offsets.load.buffer.size",
        "transaction.state.log.load.buffer.size", "share.coordinator.load.buffer.size",
        "group.coordinator.cached.buffer.max.bytes",
        "share.coordinator.cached.buffer.max.bytes", "group.coordinator.append.linger.ms",
        "share.coordinator.append.linger.ms", "*.purgatory.purge.interval.requests",
        "replica.fetch.backoff.ms", "replica.fetch.min.bytes",
        "replica.fetch.response.max.bytes", "replica.fetch.wait.max.ms",
        "socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms",
        "add.partitions.to.txn.retry.backoff.ms", "request.timeout.ms",
        "share.coordinator.write.timeout.ms", "offsets.commit.timeout.ms",
        "alter.log.dirs.replication.quota.window.*",
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        "transaction.remove.expired.transaction.cleanup.interval.ms")),
    ("the KRaft quorum, its metadata log and broker registration: the controller is "
     "in-process (docs/fidelity.md, controller-is-a-broker)", (
        "controller.quorum.append.linger.ms", "controller.quorum.auto.join.enable",
        "controller.quorum.election.*", "controller.quorum.fetch.*",
        "controller.quorum.request.timeout.ms", "controller.quorum.retry.backoff.ms",
        "controller.quota.window.*", "controller.socket.timeout.ms",
        "metadata.log.max.*", "metadata.log.segment.*", "metadata.max.*", "broker.heartbeat.interval.ms",
        "initial.broker.registration.timeout.ms", "early.start.listeners",
        "controlled.shutdown.enable")),
    ("segment files, indexes, flushing and checkpoints: the log keeps its batches in "
     "memory or in its own files (docs/storage.md)", (
        "segment.index.bytes", "segment.jitter.ms", "index.interval.bytes", "preallocate",
        "file.delete.delay.ms", "log.index.*", "log.preallocate", "log.roll.hours",
        "log.roll.jitter.*", "log.segment.delete.delay.ms", "log.flush.interval.ms",
        "log.flush.offset.checkpoint.interval.ms", "log.flush.scheduler.interval.ms",
        "log.flush.start.offset.checkpoint.interval.ms",
        "offsets.topic.compression.codec",
        "share.coordinator.state.topic.compression.codec", "log.cleaner.enable",
        "log.retention.check.interval.ms", "log.dir.failure.timeout.ms",
        "cordoned.log.dirs")),
    ("tiered storage: not offered", (
        "remote.*", "log.remote.*", "local.retention.*", "log.local.retention.*",
        "follower.fetch.last.tiered.offset.enable")),
    ("security not offered: Kerberos, OAuth token validation, delegation tokens, "
     "pluggable SSL engines and principal rules (docs/security.md)", (
        "sasl.kerberos.*", "sasl.oauthbearer.*", "sasl.login.*",
        "sasl.client.callback.handler.class", "sasl.server.callback.handler.class",
        "sasl.server.max.receive.size", "principal.builder.class", "security.providers",
        "ssl.engine.factory.class", "ssl.principal.mapping.rules", "ssl.cipher.suites",
        "ssl.enabled.protocols", "ssl.protocol", "ssl.provider", "ssl.keymanager.algorithm",
        "ssl.trustmanager.algorithm", "ssl.secure.random.implementation", "ssl.allow.*",
        "security.inter.broker.protocol", "connection.failed.authentication.delay.ms",
        "delegation.token.*")),
    ("two-phase commit: not offered (InitProducerId enable_2pc is refused)", (
        "transaction.two.phase.commit.enable",)),
    ("pluggable classes, policies and metrics reporters: Java plug-ins have nothing to "
     "run in", (
        "alter.config.policy.class.name", "create.topic.policy.class.name",
        "client.quota.callback.class", "replica.selector.class", "config.providers",
        "kafka.metrics.*", "metric.reporters", "metrics.*", "telemetry.max.bytes",
        "group.consumer.assignors", "group.share.assignors", "group.streams.assignors",
        "streams.assignor.name", "group.streams.topology.description.plugin.class",
        "group.coordinator.rebalance.protocols")),
    ("stored only (Kafka 4.4's share-group dead-letter queue)", (
        "errors.deadletterqueue.*",)),
    ("Kafka's default is built in: the emulator behaves as that default, and a changed "
     "value has no effect", (
        "offset.metadata.max.bytes", "broker.rack")),
    ("not acted on yet although Kafka acts on them (those that can make a test falsely "
     "green at Kafka's defaults are entries of docs/fidelity.md)", (
        "compression.*.level", "log.retention.minutes",
        "fetch.max.bytes", "max.request.partition.size.limit",
        "max.decompressed.message.bytes", "producer.id.expiration.ms",
        "transaction.partition.verification.enable", "group.streams.max.standby.replicas")),
)


def without_effect() -> dict[str, str]:
    """Every Kafka key a WITHOUT_EFFECT family names -> why it has no effect (the first
    family that names it), sorted by key."""
    out: dict[str, str] = {}
    for key in sorted(kafka_keys()):
        for why, patterns in WITHOUT_EFFECT:
            if any(fnmatchcase(key, p) for p in patterns):
                out[key] = why
                break
    return out


def dead_patterns() -> list[str]:
    """WITHOUT_EFFECT patterns that name no Kafka key (a typo, or a key Kafka dropped)."""
    keys = kafka_keys()
    return [p for _, ps in WITHOUT_EFFECT for p in ps
            if not any(fnmatchcase(k, p) for k in keys)]
