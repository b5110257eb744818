"""The one table of differences from Kafka 4.4 (:data:`DIFFERENCES`): what Kafka does, and
what each fidelity mode (emulator/fidelity/modes.py) does instead.

docs/fidelity.md and docs/conformance.md's list of known differences are generated from
it (``python -m conformance.fidelity_doc``); tests/test_fidelity_table.py holds every
entry to its rules.

This module is a pure table: data and the one lookup (:func:`difference`), no behaviour.
What makes an entry true is checked, not trusted, by tests/test_fidelity_table.py: every
test it names exists, those in ``tests`` are collected under ``--target kafka`` (they run
on both targets), those in ``emulator_tests`` are not, each names what the difference is
about (``exercises``), and ``false_green`` agrees with the evidence (the response
differential's known differences, conformance/response_diff.py KNOWN, name the entries
they are, which must be false green; a reproduced false green names a test on both
targets).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Difference:
    """One way the emulator's ``fast`` mode differs from Kafka 4.4, and what each mode does.

    docs/conformance.md's list of known differences and docs/fidelity.md are generated
    from :data:`DIFFERENCES` (``python -m conformance.fidelity_doc``), so the docs cannot
    contradict each other or the code. ``false_green`` marks a difference that could make a
    client test pass here and fail on Kafka: each of those must be reproduced by ``kafka``
    (``kafka_mode`` says how, within the envelope ``envelope`` measured on a real 4.4
    cluster) and named by a test that runs on both targets (``tests``), or its kafka_mode
    begins with NOT_YET.

    Tests are pytest node ids. ``tests``: client tests that run on both targets (the
    emulator and ``--target kafka``) and unit tests (tests/...) of the modes;
    ``emulator_tests``: client tests that run on the emulator alone (marked
    ``emulator_only``, or needing the emulator's faults or the adversary). ``exercises``:
    words one of which every named test's source (or its module's docstring) contains,
    besides the key, the configs, "adversar" for an entry with an adversarial part and a
    kafka-fidelity emulator for one reproduced by ``kafka``: what the difference is about.
    ``differential``: the response differential's cases that show it (each such entry is
    false green: a client reads a different value)."""

    key: str  # a stable identifier, e.g. "metadata-propagation"
    title: str
    kafka: str  # what Kafka 4.4 does
    fast: str  # what --fidelity fast (the default) does
    kafka_mode: str  # what --fidelity kafka does
    adversarial: str = ""  # what --fidelity adversarial adds ("" = as kafka)
    false_green: bool = False
    envelope: str = ""  # the timing measured on Kafka 4.4, and how it was measured
    tests: tuple[str, ...] = ()
    configs: tuple[str, ...] = ()  # config keys whose fast default differs from Kafka's
    emulator_tests: tuple[str, ...] = ()
    exercises: tuple[str, ...] = ()
    differential: tuple[str, ...] = ()  # conformance/response_cases.py case names


NOT_YET = "not yet reproduced"  # kafka_mode of a difference still open (honest marker)

# The races --fidelity adversarial makes happen (emulator/faults/adversary.py): Kafka
# permits each, a healthy cluster shows each rarely (with the event behind it), fast and
# kafka only when a fault is asked for (docs/faults.md). Not false greens of the timing
# kind (kafka reproduces Kafka's timing, not its bad days): adversarial is the answer.
_ADVERSARY_TESTS = (
    "client_tests/test_adversarial.py::"
    "test_idempotent_kafka_python_producer_and_group_consumer_finish",
    "client_tests/test_adversarial.py::test_same_seed_replays_the_same_faults_for_the_same_requests",
    "client_tests/test_adversarial.py::test_every_kind_of_fault_is_met",
    "tests/test_adversary.py::test_a_clients_faults_replay_whatever_the_other_clients_do",
)
_AS_ASKED = ("Only when a fault asks for it (inject_error, drop_response, stop_broker, "
             "move_leader...: docs/faults.md).")


# Every known difference, one entry each (see Difference). Append; keep keys stable.
# ``false_green`` is judged from the client's side: True when the emulator's fast mode is
# more lenient than Kafka (something is there sooner, or stays), so a test can pass here
# and fail on Kafka, and whenever the response differential shows it (a value a client
# reads differs: a test asserting the emulator's value passes here and fails on Kafka);
# False when it is stricter or invisible to clients (a false red at worst). A false_green entry's ``kafka_mode`` either says how ``kafka`` reproduces it
# (and ``tests`` names the tests) or begins with NOT_YET: tests/test_fidelity_table.py
# holds every entry to that, and docs/fidelity.md lists the open ones first.
DIFFERENCES: list[Difference] = [
    Difference(
        key="broker-fencing",
        title="Crashed brokers are fenced at once by default",
        kafka="A crashed broker stays registered, and the leader of its partitions in "
              "Metadata, until broker.session.timeout.ms (9000) passes without a heartbeat; "
              "then the controller fences it and elects new leaders.",
        fast="A stopped emulated broker leaves Metadata and loses its leaderships at once "
             "(unless the crash gives fence_after_ms: docs/faults.md).",
        kafka_mode="broker.session.timeout.ms 9000: clients see the dead broker as a leader "
                   "until it is fenced, as on Kafka (`config` overrides it).",
        false_green=True,
        envelope="Kafka's default broker.session.timeout.ms (9000 ms), the window the "
                 "controller waits (client_tests/kafka_cluster.py kills a broker's JVM).",
        tests=("client_tests/test_leader_crash.py::"
               "test_idempotent_producer_through_a_leader_crash",
               "tests/test_controller.py::"
               "test_a_crashed_leader_stays_leader_until_its_session_times_out",
               "tests/test_fidelity_table.py::test_kafka_mode_takes_kafkas_timing_defaults"),
        configs=("broker.session.timeout.ms",),
        exercises=("broker_crashed", "stop_broker", "crash"),
    ),
    Difference(
        key="initial-rebalance-delay",
        title="No initial rebalance delay by default",
        kafka="The first rebalance of a new classic group waits "
              "group.initial.rebalance.delay.ms (3000) for more members to join.",
        fast="group.initial.rebalance.delay.ms is 0 (as in testcontainers' Kafka) so group "
             "tests do not wait 3 s per new group.",
        kafka_mode="group.initial.rebalance.delay.ms 3000, Kafka's default.",
        false_green=True,
        envelope="Kafka's default group.initial.rebalance.delay.ms (3000 ms); a new group's "
                 "first JoinGroup answered 3 s later on Kafka 4.4.0 with its defaults "
                 "(client_tests/test_kafka_defaults.py, its own one-broker Kafka).",
        tests=("client_tests/test_kafka_defaults.py::"
               "test_the_first_join_of_a_new_group_waits_the_initial_rebalance_delay",
               "tests/test_fidelity_table.py::test_kafka_mode_takes_kafkas_timing_defaults"),
        configs=("group.initial.rebalance.delay.ms",),
    ),
    Difference(
        key="metadata-propagation",
        title="Metadata is never stale",
        kafka="Brokers learn the controller's changes (topic creation and deletion, leader "
              "and ISR changes, new partitions, configs) from the metadata log, each a "
              "little later: a request to another broker right after an admin call can "
              "miss it. Tests that pass on Kafka wait for propagation "
              "(client_tests/targets.py wait_for_leaders).",
        fast="Every emulated broker reads one cluster state, so a topic is known everywhere "
             "the moment CreateTopics returns and gone the moment DeleteTopics returns.",
        kafka_mode="Each broker answers from its own view of the topics "
                   "(emulator/cluster/metadata_views.py), which learns each change of the "
                   "controller (topic created or deleted, partitions added, leader, ISR or "
                   "replicas moved, topic configs) 1-30 ms after it (uniform, seeded, in commit "
                   "order; the broker the admin call went to lags too, as on Kafka). Until "
                   "then that broker answers Metadata, DescribeTopicPartitions and "
                   "DescribeConfigs of topics from what it knew, and Produce, Fetch, "
                   "ListOffsets, OffsetForLeaderEpoch and DeleteRecords check its view first, "
                   "as ReplicaManager does: UNKNOWN_TOPIC_OR_PARTITION for a partition it does "
                   "not know (UNKNOWN_TOPIC_ID for an id in Metadata, Produce and Fetch v13), "
                   "NOT_LEADER_OR_FOLLOWER with the leader it knows as the hint where it does "
                   "not know it leads, FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH against its "
                   "epoch. Not modelled: broker registration and fencing (Metadata's broker "
                   "list), a deposed leader accepting writes before it learns (refused at "
                   "once here), the coordinators' own reads (a KIP-848 assignment, "
                   "AddPartitionsToTxn and OffsetCommit topic checks use the controller's "
                   "state), and a broker's metadata cache taking a change before its "
                   "ReplicaManager does (on Kafka the leader every Metadata answer names can "
                   "still answer NOT_LEADER_OR_FOLLOWER to a Produce for a moment: seen once "
                   "in CI right after CreatePartitions; here a broker's view serves both at "
                   "once, and adversarial's retriable Produce errors catch a client that "
                   "does not retry).",
        adversarial="One broker, chosen by the seed, learns every change 200-1000 ms (plus "
                    "up to 200 ms) late (emulator/faults/adversary.py start: the hook "
                    "state.metadata_views.set_lag(broker_id, ms, jitter_ms), usable in any "
                    "mode; set_lag(broker_id, None) restores 1-30 ms).",
        false_green=True,
        envelope="conformance/metadata_envelope.py, 40 trials per change, two runs on Kafka "
                 "4.4.0 (3 brokers + KRaft controller on the shared 2-core machine, load "
                 "average 10 and 18; docs/metadata-envelope.md has both outputs). The first "
                 "request right after the admin answer missed the change in 25-78% of trials, "
                 "on the broker asked as on the others. When a broker applied it, ms after "
                 "the answer (lower bound: last request that missed; upper: first answer that "
                 "showed it), other brokers, run 1 / run 2: CreateTopics min 0 / 0, median "
                 "8.4-36.3 / 23.3-64.4, p99 275-311 / 413-498, max 291-312 / 488-599; "
                 "DeleteTopics median 0-13.2 / 0.1-14.2, max 24-274 / 260-409; "
                 "CreatePartitions median 0.1-18.3 / 18.6-46.4, max 194-248 / 530-610; "
                 "leader change (ElectLeaders) median 0-8.9 / 0-12.4, max 134-141 / 257-419; "
                 "topic config (DescribeConfigs) median 0-11.2 / 0-10.5, max 28-291 / "
                 "49-177. kafka's 1-30 ms is the quiet end of that envelope; set_lag reaches "
                 "its tail.",
        tests=("client_tests/test_metadata_propagation.py::"
               "test_a_client_that_waits_for_every_broker_works",
               "tests/test_metadata_views.py::"
               "test_kafka_a_new_topic_reaches_each_broker_after_its_lag",
               "tests/test_metadata_views.py::"
               "test_kafka_a_deleted_topic_stays_visible_until_the_broker_learns_it",
               "tests/test_metadata_views.py::"
               "test_kafka_a_new_leader_answers_not_leader_until_it_learns_it_leads",
               "tests/test_metadata_views.py::test_kafka_new_partitions_and_configs_arrive_late",
               "tests/test_metadata_views.py::test_set_lag_makes_one_broker_much_staler"),
        emulator_tests=("client_tests/test_metadata_propagation.py::"
                        "test_a_client_that_waits_works_under_kafka_fidelity",
                        "client_tests/test_metadata_propagation.py::"
                        "test_a_request_right_after_create_topics_to_another_broker",
                        "client_tests/test_metadata_propagation.py::"
                        "test_a_request_right_after_delete_topics_to_another_broker",
                        "client_tests/test_metadata_propagation.py::"
                        "test_a_produce_right_after_a_leader_change_to_the_new_leader",
                        "client_tests/test_metadata_propagation.py::"
                        "test_reads_right_after_create_topics_on_the_leader"),
        exercises=("propagat", "metadata_views", "set_lag"),
    ),
    Difference(
        key="coordinator-loading",
        title="Coordinators are never loading",
        kafka="A group, transaction or share coordinator that moves to a new broker (a "
              "reassignment, a preferred election, a crash and failover, a restart) is not "
              "serving at once: the new leader of the internal partition answers "
              "NOT_COORDINATOR until the controller's change reaches it, then "
              "COORDINATOR_LOAD_IN_PROGRESS while it loads the partition (classic "
              "Heartbeat answers NONE meanwhile: 'the group is still loading').",
        fast="A coordinator serves at once after a move.",
        kafka_mode="The new leader of a __consumer_offsets, __transaction_state or "
                   "__share_group_state partition answers NOT_COORDINATOR for 60 ms after "
                   "the election, then COORDINATOR_LOAD_IN_PROGRESS for 20 ms, to every API "
                   "of that coordinator (OffsetFetch, OffsetCommit, JoinGroup, SyncGroup, "
                   "LeaveGroup, DescribeGroups, ConsumerGroupHeartbeat, "
                   "ShareGroupHeartbeat, StreamsGroupHeartbeat, TxnOffsetCommit, "
                   "InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, "
                   "DescribeTransactions, the share-state APIs); classic Heartbeat answers "
                   "NONE while loading; ListGroups and ListTransactions on a broker loading "
                   "any partition answer COORDINATOR_LOAD_IN_PROGRESS. The first election, when FindCoordinator creates "
                   "the topic: FindCoordinator answers COORDINATOR_NOT_AVAILABLE for "
                   "150 ms, then the first leader answers NOT_COORDINATOR for 300 ms and "
                   "COORDINATOR_LOAD_IN_PROGRESS for 200 ms "
                   "(emulator/coordinators/runtime/placement.py: learn_ms, load_ms, "
                   "create_ms, first_learn_ms, first_load_ms).",
        adversarial="Coordinators load 400 ms after a move (InternalTopic.load_ms, which a "
                    "test may set too), and coordinators move often (races-coordinator-moves).",
        false_green=True,
        envelope="Kafka 4.4, 3 brokers, 40 moves of the coordinator partition's leader "
                 "(AlterPartitionReassignments + ElectLeaders PREFERRED; "
                 "python -m conformance.coordinator_timing --target kafka), times from "
                 "ElectLeaders' answer, min/median/p99/max: groups NOT_COORDINATOR until "
                 "0/85/326/326 ms, then COORDINATOR_LOAD_IN_PROGRESS for 1.2/30/242/242 ms "
                 "(seen in 34 of 40 moves); transactions NOT_COORDINATOR until "
                 "0/56/167/167 ms, loading 0.5/5/78/78 ms (seen in 32 of 40). After a "
                 "SIGKILL of the coordinator (8 kills) FindCoordinator names the new one "
                 "after 8.0-9.8 s (broker.session.timeout.ms), which then answers "
                 "NOT_COORDINATOR for 38-348 ms (median 102 groups, 159 transactions) and "
                 "loads for 5-680 ms (median 24 groups, 68 transactions). 5 fresh "
                 "clusters (--first 5), from FindCoordinator's first call: it answers "
                 "COORDINATOR_NOT_AVAILABLE until 45-1124 ms (median 198 groups, 85 "
                 "transactions); the coordinator it names answers NOT_COORDINATOR until "
                 "58-1512 ms after that (median 477 / 148), then loads for 25-550 ms "
                 "(median 119 / 249), in every trial; served from 261-2070 ms. docs/"
                 "coordinator-timing.md has the runs' output. The emulator under "
                 "--fidelity kafka (same script, --target emulator, 30 moves): "
                 "NOT_COORDINATOR until 0/58/64/64 ms, loading 7/20/34/34 ms; first "
                 "election: COORDINATOR_NOT_AVAILABLE 154-158 ms, NOT_COORDINATOR until "
                 "290-299 ms, loading 191-201 ms, served from 488-500 ms.",
        tests=("client_tests/test_coordinator_timing_clients.py::"
               "test_consumer_group_commits_through_a_coordinator_move",
               "tests/test_coordinator_fidelity.py::"
               "test_group_coordinator_loads_after_a_move_under_kafka_timing",
               "tests/test_coordinator_fidelity.py::"
               "test_group_coordinator_serves_at_once_after_a_move_under_fast",
               "tests/test_coordinator_fidelity.py::"
               "test_transaction_coordinator_loads_after_a_move",
               "tests/test_coordinator_fidelity.py::"
               "test_share_state_coordinator_loads_after_a_move",
               "tests/test_coordinator_fidelity.py::test_first_election_under_kafka_timing",
               "tests/test_coordinator_fidelity.py::test_list_transactions_while_loading",
               "tests/test_coordinator_fidelity.py::test_loading_coordinator_over_the_wire"),
        exercises=("coordinator",),
    ),
    Difference(
        key="transaction-markers",
        title="Transactions complete at once",
        kafka="EndTxn answers once PrepareCommit/PrepareAbort is written; the markers reach "
              "the partitions a little later, then the transaction is CompleteCommit/"
              "CompleteAbort. Meanwhile DescribeTransactions shows Prepare*, "
              "read_committed consumers do not see the records (the LSO waits for the "
              "marker), and the same transactional id gets CONCURRENT_TRANSACTIONS from "
              "InitProducerId, AddPartitionsToTxn and a retried EndTxn (the other outcome: "
              "INVALID_TXN_STATE; EndTxn v5 with the bumped epoch: PRODUCER_FENCED).",
        fast="After EndTxn the coordinator is in CompleteCommit/CompleteAbort at once and "
             "the markers are written.",
        kafka_mode="EndTxn leaves the transaction in PrepareCommit/PrepareAbort and the "
                   "markers are written 15 ms later (a deadline the server's loop acts "
                   "on), also for aborts by timeout or fencing; meanwhile the LSO stays "
                   "and the answers to the same transactional id are Kafka's "
                   "(emulator/coordinators/transactions/coordinator.py: marker_delay_ms); "
                   "a Produce v12+ (transaction version 2) adding its partition during "
                   "the window waits for the markers (up to "
                   "add.partitions.to.txn.retry.backoff.max.ms, 100 ms, then "
                   "CONCURRENT_TRANSACTIONS), as Kafka's leader retries the coordinator.",
        adversarial="20% of transactions, chosen by the seed per transactional id and "
                    "its n-th transaction, have their markers written 100-1000 ms after EndTxn "
                    "(TransactionCoordinator.marker_delay replaced; marker_delay_ms sets "
                    "kafka's 15 ms).",
        false_green=True,
        envelope="Kafka 4.4, 3 brokers, 70 transactions of one record (30 with EndTxn v4, "
                 "40 with v5; python -m conformance.coordinator_timing --target kafka), "
                 "times from EndTxn sent, min/median/p99/max: EndTxn answered 1.9/4.1/"
                 "34/34 ms; DescribeTransactions showed PrepareCommit until 6.7/15/184/184 "
                 "ms (in 70 of 70) and CompleteCommit from 9.7/20/186/186 ms; the "
                 "read_committed LSO passed the record at 7.7/13/163/163 ms; during the "
                 "window a second EndTxn, AddPartitionsToTxn and InitProducerId got "
                 "CONCURRENT_TRANSACTIONS every time (NONE once complete); a Produce v12 "
                 "adding its partition was answered NONE 36/65/89/89 ms later (6 of 24 "
                 "transactions). The emulator "
                 "under --fidelity kafka (30 transactions): PrepareCommit until "
                 "2.4/14/28/28 ms, CompleteCommit from 14.7/19/61/61 ms, LSO past the "
                 "record at 14.8/19/68/68 ms.",
        tests=("client_tests/test_coordinator_timing_clients.py::"
               "test_back_to_back_transactions_through_the_prepare_window",
               "client_tests/test_coordinator_timing_clients.py::"
               "test_end_txn_answers_before_the_markers",
               "tests/test_coordinator_fidelity.py::"
               "test_end_txn_leaves_the_transaction_preparing_under_kafka_timing",
               "tests/test_coordinator_fidelity.py::test_end_txn_completes_at_once_under_fast",
               "tests/test_coordinator_fidelity.py::"
               "test_abort_and_fencing_wait_for_their_markers_too",
               "tests/test_coordinator_fidelity.py::test_v2_retry_during_the_prepare_window",
               "tests/test_coordinator_fidelity.py::"
               "test_produce_adding_its_partition_waits_for_the_markers"),
        exercises=("EndTxn", "end_txn", "marker"),
    ),
    Difference(
        key="log-cleaner-backoff",
        title="The log cleaner looks for work every second",
        kafka="The cleaner checks for logs to compact every log.cleaner.backoff.ms (15000) "
              "when idle, so a compacted topic is cleaned tens of seconds after it becomes "
              "dirty enough.",
        fast="log.cleaner.backoff.ms is 1000, so compaction comes within about a second.",
        kafka_mode="log.cleaner.backoff.ms 15000, Kafka's default.",
        false_green=True,
        envelope="Kafka's default log.cleaner.backoff.ms (15000 ms); on Kafka 4.4.0 with "
                 "its defaults a topic made cleanable right after the cleaner's pass over "
                 "another was compacted 5-25 s later (client_tests/test_kafka_defaults.py).",
        tests=("client_tests/test_kafka_defaults.py::test_an_idle_cleaner_waits_its_backoff",
               "tests/test_fidelity_table.py::test_kafka_mode_takes_kafkas_timing_defaults"),
        configs=("log.cleaner.backoff.ms",),
    ),
    Difference(
        key="fetch-partial-batches",
        title="Fetch stops at whole batches",
        kafka="At a byte limit Kafka cuts the record data mid-batch (the first batch always "
              "whole, KIP-74); clients drop the partial trailing batch.",
        fast="Only whole batches are sent, so a client that mishandles a partial trailing "
             "batch is not put to the test.",
        kafka_mode="The bytes left under partition_max_bytes / max_bytes carry the start of "
                   "the next batch below the high watermark (or LSO), cut at the limit "
                   "(emulator/handlers/api_001_fetch.py).",
        false_green=True,
        envelope="Measured on Kafka 4.4.0 (--target kafka): the answer is exactly the limit "
                 "long, whole batches then the next batch's first bytes; nothing trails at "
                 "the end of the log.",
        tests=("client_tests/test_fetch_semantics.py::"
               "test_the_byte_limit_cuts_the_next_batch_mid_way",
               "client_tests/test_fetch_semantics.py::test_partition_and_response_byte_limits"),
        exercises=("part_max", "partition_max_bytes", "max_bytes"),
    ),
    Difference(
        key="unregister-running-broker",
        title="UnregisterBroker of a running broker",
        kafka="Answers NONE, then leaves the running broker out of the cluster until it "
              "restarts (a second UnregisterBroker answers BROKER_ID_NOT_REGISTERED).",
        fast="Answers NONE; the running broker registers again at once.",
        kafka_mode="Answers NONE and fences the running broker as a stopped one "
                   "(emulator/cluster/controller.py broker_unregistered): out of "
                   "Metadata's brokers and every ISR, the partitions it led elect others, "
                   "replica sets keep it; its listener keeps answering (its Metadata "
                   "without itself); a second UnregisterBroker answers "
                   "BROKER_ID_NOT_REGISTERED; a restart registers it again.",
        false_green=True,
        envelope="Measured on Kafka 4.4.0 (3 brokers, a 3-partition topic with 3 "
                 "replicas): 0.5 s after the answer the broker was out of Metadata's "
                 "brokers and every ISR and led nothing, still in the replica sets, and "
                 "still out after 3 s (another run: 20 s); it answered Metadata without "
                 "itself; a second request answered BROKER_ID_NOT_REGISTERED.",
        tests=("client_tests/test_unregister_running_broker.py::"
               "test_an_unregistered_running_broker_is_fenced_until_it_restarts",
               "client_tests/test_admin_keys.py::"
               "test_unregister_broker_as_the_kraft_controller_answers",
               "tests/test_unregister_broker_fidelity.py::"
               "test_kafka_fidelity_fences_the_running_broker_until_it_restarts",
               "tests/test_unregister_broker_fidelity.py::"
               "test_fast_lets_the_running_broker_register_again"),
        exercises=("UnregisterBroker", "unregister"),
    ),
    Difference(
        key="describe-producers-follower",
        title="DescribeProducers on a follower",
        kafka="Any replica answers from its own log (Partition.activeProducerState), so a "
              "follower that has not yet fetched the leader's latest batches reports an "
              "older producer state.",
        fast="A follower answers with the leader's producer state, which is Kafka's once "
             "the follower has caught up (the coordinator epoch after a marker is 0, as "
             "a fresh Kafka's markers carry).",
        kafka_mode="A follower behind the leader answers from the batches of its own log "
                   "(emulator/cluster/partition.py replica_producers): a producer it has "
                   "not fetched is not listed, last sequence, timestamp and open "
                   "transaction are those of its last fetched batch, a fetched marker ends "
                   "the transaction with the marker's coordinator epoch; caught up, it "
                   "answers the leader's state. Not modelled: producers whose batches "
                   "retention deleted from a lagging follower's log (Kafka keeps them in "
                   "its producer snapshot).",
        false_green=True,
        envelope="Measured on Kafka 4.4.0 (--target kafka): a replica added by a "
                 "reassignment under follower.replication.throttled.rate 1, 1 MB behind "
                 "after its first fetch of a 3 MB log, did not list an idempotent producer "
                 "the leader listed (acks=1) 1 s later, and listed it once the throttle "
                 "was lifted. Not a timing: the window is the follower's fetch lag.",
        tests=("client_tests/test_describe_producers_follower.py::"
               "test_a_throttled_new_replica_does_not_list_a_producer_it_has_not_fetched",
               "client_tests/test_admin_keys.py::"
               "test_describe_producers_lists_idempotent_and_transactional_producers",
               "tests/test_describe_producers_fidelity.py::"
               "test_a_follower_behind_answers_from_its_own_log_under_kafka",
               "tests/test_describe_producers_fidelity.py::"
               "test_a_lagging_follower_sees_the_open_transaction_and_its_marker"),
        exercises=("DescribeProducers", "describe_producers"),
    ),
    Difference(
        key="controller-is-a-broker",
        title="The controller is a broker",
        kafka="Kafka 4.4 here runs a dedicated controller (KRaft).",
        fast="The controller role lives on one of the emulated brokers (combined mode). "
             "Clients never see the difference: both report a random live broker as "
             "controller id in Metadata and DescribeCluster, as KRaft brokers do; "
             "DescribeCluster with endpoint type 2 (controllers) is refused by both on a "
             "broker listener. The role moves to the lowest live broker id on failover; "
             "DescribeQuorum names it as the one voter, directory ids zero.",
        kafka_mode="as fast",
        tests=("client_tests/test_admin_keys.py::"
               "test_describe_quorum_names_the_controller_as_the_voter",),
        exercises=("DescribeQuorum", "describe_quorum"),
    ),
    Difference(
        key="official-nodes-one-state",
        title="A Compose file's nodes keep one copy of the state",
        kafka="Three combined-mode nodes (KAFKA_CONTROLLER_QUORUM_VOTERS naming each other), "
              "or three controllers and three brokers (isolated mode), each keep the "
              "metadata log (and the brokers their replicas): any one node stopped is a "
              "broker crashed or a controller gone, the quorum and the data live on.",
        fast="The nodes are one cluster whose state lives in the lowest voter's process, "
             "the others forwarding their listeners to it (docs/official-images.md, "
             "\"Several nodes, one cluster\"): another node stopped is its broker crashed, "
             "or in isolated mode another controller stopped changes nothing, as on Kafka, "
             "but the state node stopped is the whole cluster gone (the other nodes close "
             "every connection until it is back, and it comes back empty). Combined and "
             "dedicated nodes mixed, SSL listeners, isolated-mode broker nodes whose JAAS "
             "files give different SASL users (each sends its users with its registration) "
             "and dynamic quorums among several nodes are refused in one line naming the "
             "variable (stricter: a test that passes here passes on Kafka).",
        kafka_mode="as fast",
        emulator_tests=("client_tests/test_official_nodes.py::"
                        "test_the_state_nodes_stop_is_the_clusters_end",
                        "client_tests/test_official_nodes.py::"
                        "test_an_isolated_controller_that_holds_no_state_stops_unseen",
                        "client_tests/test_official_nodes.py::"
                        "test_a_node_the_cluster_cannot_take_is_refused_in_one_line"),
        exercises=("cluster's state", "KAFKA_PROCESS_ROLES"),
    ),
    Difference(
        key="pipelined-answers",
        title="Pipelined answers leave together",
        kafka="Serves a connection's requests one at a time, in order, and reads the next "
              "request only after the last answer is sent.",
        fast="Also one at a time, in order; when the next requests are already in its "
             "buffer, whole, their answers go out in one send. Only the TCP segmentation "
             "differs: a client that pipelines (librdkafka: one ProduceRequest per "
             "partition) reads several answers per wake-up (stricter, not more lenient).",
        kafka_mode="as fast",
        tests=("client_tests/test_pipelining.py::"
               "test_pipelined_requests_are_all_answered_in_order",),
        exercises=("pipelin",),
    ),
    Difference(
        key="configs-without-effect",
        title="Configs known but without effect",
        kafka="Every broker, topic and group config acts.",
        fast="Every broker, topic and group config Kafka 4.4 knows is listed by "
             "DescribeConfigs with Kafka's type and default and accepted by AlterConfigs "
             "and IncrementalAlterConfigs; the ones the emulator acts on, and where, and "
             "the ones it accepts without effect (e.g. sasl.kerberos.*, "
             "num.network.threads) are listed in docs/configs.md, generated from "
             "emulator/cluster/config_effects.py. Keys whose missing effect makes a client "
             "faster than on Kafka are differences of their own here.",
        kafka_mode="as fast",
    ),
    Difference(
        key="share-state-records",
        title="Share-group state records",
        kafka="__share_group_state records carry the share-partition's start offset from "
              "before the acknowledgement or release they write.",
        fast="They carry the current start offset. DescribeShareGroupOffsets and "
             "ReadShareGroupStateSummary report Kafka's value on both.",
        kafka_mode="as fast",
    ),
    Difference(
        key="consumer-group-epochs",
        title="Consumer group epochs (KIP-848)",
        kafka="A new consumer group's first member gets epoch 2 and a second joiner the "
              "assignment epoch before its target is computed (the response differential's "
              "KIP-848 case: 2, 2, then 3 once both reconciled).",
        fast="1, 2 and 2. Assignments, states and every other field agree; clients only "
             "echo epochs (a test asserting an epoch's value passes on one only).",
        kafka_mode=NOT_YET + ": as fast.",
        false_green=True,
        differential=("Consumer group (KIP-848): two members reconcile, describe, commit, "
                      "leave",),
    ),
    Difference(
        key="config-documentation",
        title="Config documentation",
        kafka="DescribeConfigs with IncludeDocumentation sends each config's documentation.",
        fast="Sends null (Kafka's prose is not copied into the emulator's config table, "
             "which holds facts only): a test asserting it is null passes here only.",
        kafka_mode=NOT_YET + ": as fast (not to be reproduced: Kafka's text is not ours "
                   "to copy).",
        false_green=True,
        differential=("DescribeConfigs: with documentation",),
    ),
    Difference(
        key="topic-compression-type",
        title="Topic compression.type is not applied",
        kafka="A topic (or broker) compression.type other than producer makes the broker "
              "recompress produced batches to that codec (at compression.*.level), so "
              "consumers must decode it whatever the producer used.",
        fast="Batches are stored as produced: a consumer that cannot decode the topic's "
             "codec reads the producer's instead and passes (docs/configs.md).",
        kafka_mode="The leader rewrites a batch whose codec is not the topic's (or the "
                   "broker's) compression.type into that codec before appending it, as "
                   "LogValidator does (emulator/cluster/replication.py): records, offsets, "
                   "timestamps and producer fields kept, length and CRC recomputed; "
                   "uncompressed inflates a compressed batch; producer keeps it; the "
                   "rewritten batch is held to max.message.bytes again "
                   "(MESSAGE_TOO_LARGE). Not modelled: compression.*.level (the bytes "
                   "differ, the codec a consumer decodes does not).",
        false_green=True,
        envelope="Measured on Kafka 4.4.0 (--target kafka, 3 brokers): none -> gzip, "
                 "lz4 -> zstd, gzip -> uncompressed, zstd -> snappy rewritten, producer "
                 "and same codec kept, records and producer id/epoch/sequence unchanged; a "
                 "zstd batch under max.message.bytes that inflates past it into an "
                 "uncompressed topic is refused with MESSAGE_TOO_LARGE. Not a timing.",
        tests=("client_tests/test_topic_compression.py::"
               "test_consumers_read_the_topic_codec_not_the_producers",
               "client_tests/test_topic_compression.py::"
               "test_an_idempotent_producer_reads_back_in_the_topic_codec",
               "client_tests/test_topic_compression.py::"
               "test_a_batch_too_large_once_recompressed_is_refused",
               "tests/test_compression_type.py::test_kafka_fidelity_stores_the_topic_codec",
               "tests/test_compression_type.py::test_fast_stores_the_producers_codec",
               "tests/test_compression_type.py::"
               "test_recompression_keeps_the_producer_fields_and_the_sequence_check"),
    ),
    Difference(
        key="consumer-assignment-interval",
        title="Consumer group assignments are computed at once",
        kafka="A KIP-848 consumer group's target assignment is recomputed at most every "
              "group.consumer.assignment.interval.ms (1000) (consumer.assignment.interval.ms "
              "per group), so a joining member may wait for its partitions.",
        fast="The target assignment is computed in the heartbeat that changes the group "
             "(the key is accepted without effect).",
        kafka_mode="A new group epoch gets its target at once only when the last target "
                   "was computed consumer.assignment.interval.ms ago or more (or never); "
                   "otherwise the coordinator's timer computes it when the interval runs "
                   "out (emulator/coordinators/consumer/protocol.py maybe_update_target). "
                   "Meanwhile the group is Assigning, members reconcile towards the last "
                   "target, a newcomer gets the assignment epoch and nothing, and a leaver's "
                   "partitions wait. The group's override and the broker key are read per "
                   "change; 0 computes at once.",
        false_green=True,
        envelope="Measured on Kafka 4.4.0 (--target kafka, raw ConsumerGroupHeartbeat every "
                 "~55 ms, 4 partitions, 5 runs): a member joining ~50 ms after the first "
                 "member's assignment got the assignment epoch and nothing; the first "
                 "member was told to give up 2 partitions 0.92-1.00 s after the join (1 s "
                 "after its own assignment) and the newcomer got them 1.04-1.11 s after. "
                 "The emulator under --fidelity kafka, same test, 5 runs: 1.00-1.05 s and "
                 "1.05-1.10 s; fast: in the next heartbeats.",
        tests=("client_tests/test_consumer_assignment_interval.py::"
               "test_a_joining_member_waits_for_the_assignment_interval",
               "tests/test_consumer_assignment_timing.py::"
               "test_kafka_fidelity_waits_for_the_interval",
               "tests/test_consumer_assignment_timing.py::"
               "test_fast_assigns_in_the_next_heartbeats",
               "tests/test_consumer_assignment_timing.py::"
               "test_the_groups_override_and_zero_assign_at_once",
               "tests/test_consumer_assignment_timing.py::"
               "test_a_leaving_member_s_partitions_wait_for_the_interval_too"),
    ),
    Difference(
        key="controller-mutation-quota",
        title="Controller mutation quotas and muting",
        kafka="controller_mutation_rate quotas throttle CreateTopics, CreatePartitions and "
              "DeleteTopics (THROTTLING_QUOTA_EXCEEDED, throttle_time_ms), and a broker "
              "mutes a throttled client's connection for throttle_time_ms.",
        fast="Producer and consumer byte rates and request_percentage answer "
             "throttle_time_ms as Kafka's do; controller_mutation_rate is stored but not "
             "enforced, and the connection is not muted (a client that ignores "
             "throttle_time_ms is not held back).",
        kafka_mode="controller_mutation_rate is a token bucket per (user, client id) of "
                   "quota x 11 windows x 1 s, refilled at the quota per second; each topic "
                   "of CreateTopics, CreatePartitions and DeleteTopics takes its partitions "
                   "created or deleted. Strict from CreateTopics v6, CreatePartitions v3, "
                   "DeleteTopics v5: a topic that finds the bucket below zero is refused "
                   "THROTTLING_QUOTA_EXCEEDED (no message) with the time until it is back "
                   "at zero, one that finds it at zero or above passes with no throttle "
                   "whatever it takes; older versions always pass and answer that time "
                   "(emulator/cluster/quotas.py controller_mutation). Every response with "
                   "throttle_time_ms > 0 (any quota) mutes its connection for that long: "
                   "the next request is read after it (emulator/server/connections.py). "
                   "Not modelled: controller.quota.window.* (the client quotas' windows "
                   "are used; both 11 x 1 s by default).",
        false_green=True,
        envelope="Measured on Kafka 4.4.0 (--target kafka, quota 2/s on a client id): 20 "
                 "then 20 partitions created with throttle 0; the next topic refused 89 "
                 "with 8633 ms and the next request on that connection answered 8.6 s "
                 "later; CreateTopics v5 then passed with 407 ms (muted 0.45 s); "
                 "DeleteTopics v6 refused with 282 ms; CreatePartitions v3 after that "
                 "mute passed. The emulator under --fidelity kafka, same probe: 8983 ms / "
                 "8.99 s, 485 ms / 0.49 s, 492 ms, passed.",
        tests=("client_tests/test_controller_mutation_quota.py::"
               "test_a_strict_quota_refuses_topics_once_exhausted_and_mutes",
               "client_tests/test_controller_mutation_quota.py::"
               "test_older_versions_pass_and_answer_the_throttle",
               "tests/test_controller_mutation_quota_fidelity.py::"
               "test_the_bucket_holds_eleven_windows_and_refills_at_the_rate",
               "tests/test_controller_mutation_quota_fidelity.py::"
               "test_only_kafka_fidelity_enforces_the_quota_and_mutes"),
    ),
    Difference(
        key="leader-imbalance",
        title="Automatic leader rebalance by percentage",
        kafka="The KRaft controller moves leadership back to the preferred replica for any "
              "imbalance when auto.leader.rebalance.enable is on.",
        fast="leader.imbalance.per.broker.percentage (10) is honoured as ZooKeeper's "
             "controller did: a broker's partitions are rebalanced only above it (0 acts "
             "as KRaft does). Leaders stay off their preferred replica longer, not shorter.",
        kafka_mode="as fast",
        tests=("tests/test_controller.py::test_auto_rebalance_respects_the_imbalance_percentage",),
        exercises=("leader.imbalance",),
    ),
    Difference(
        key="group-metadata-after-restart",
        title="Group membership after a restart",
        kafka="Group metadata (members, assignments, generation) is a record of "
              "__consumer_offsets and is loaded back after a restart.",
        fast="With --data-dir, committed offsets and transaction state come back, but "
             "groups come back Empty: members rejoin (their heartbeats get "
             "UNKNOWN_MEMBER_ID). Stricter than Kafka, not more lenient.",
        kafka_mode="as fast",
    ),
    Difference(
        key="not-offered",
        title="Features not offered",
        kafka="Delegation tokens with delegation.token.secret.key, Kerberos (GSSAPI), "
              "two-phase commit (InitProducerId enable_2pc), message formats v0/v1.",
        fast="None of these: the broker answers as a Kafka broker without them does "
             "(DELEGATION_TOKEN_AUTH_DISABLED, no GSSAPI mechanism, 2PC refused); clients "
             "that need them fail here, never pass falsely.",
        kafka_mode="as fast",
    ),
    Difference(
        key="describe-log-dirs-sizes",
        title="DescribeLogDirs sizes",
        kafka="DescribeLogDirs v4 reports each directory's total and usable bytes; v5 "
              "whether it is cordoned.",
        fast="Total and usable bytes are unknown (-1); no directory is ever cordoned.",
        kafka_mode="as fast",
    ),
    Difference(
        key="older-release-api-versions",
        title="API versions of releases before 4.0",
        kafka="Each release advertises its own API version ranges.",
        fast="--kafka-version 4.0-4.4 advertise exactly a real broker's ranges (recorded by "
             "scripts/kafka_api_versions.py) for every key served; for 3.x and 2.8 the "
             "maxima are clamped and the minima stay at what the emulator serves (no "
             "message formats v0/v1) (docs/kafka-versions.md).",
        kafka_mode="as fast",
    ),
    Difference(
        key="java-tools-version",
        title="Java tools at 4.3.1",
        kafka="(the test suite, not the broker) kafka-tools 4.4.0 is not on Maven Central.",
        fast="kafka-reassign-partitions and kafka-topics in the Java client tests are "
             "4.3.1's, on their own classpath.",
        kafka_mode="as fast",
    ),
    Difference(
        key="storage-fault-first-write",
        title="A full log dir fails at its first write",
        kafka="When a log directory's file system fills up, an append that fits in the "
              "segment's already-allocated page still succeeds; the directory fails at the "
              "first write that needs a block, at the latest the high-watermark checkpoint "
              "(every replica.high.watermark.checkpoint.interval.ms, 5000): then "
              "KAFKA_STORAGE_ERROR, the dir offline, leadership moved. Replicas are spread "
              "over log.dirs by the fewest logs per dir.",
        fast="disk_full (and fail_writes) fail the first write to the directory, an append "
             "as leader (KAFKA_STORAGE_ERROR) or as follower; an idle one fails at the "
             "checkpoint as on Kafka. Partition i lives in the (i mod n)-th dir. With "
             "--data-dir the dirs are names over one directory for the cluster.",
        kafka_mode="as fast (stricter than Kafka: a produce that Kafka might still accept "
                   "fails, never the reverse)",
        envelope="conformance/storage_faults.py on Kafka 4.4.0, a 16 MiB tmpfs filled: the "
                 "produce right after filling succeeded (3 runs of 3), the dir failed 3.5, "
                 "0.5 and 3.9 s later (its checkpoint, every 5 s), a broker whose only dir "
                 "filled exited at once (metadata log) and was fenced 9.1, 9.9 and 8.3 s "
                 "later; docs/storage.md, Storage faults.",
        tests=("client_tests/test_log_dir_failure.py::"
               "test_a_failed_log_dir_moves_its_leaders_and_loses_nothing",),
        emulator_tests=("client_tests/test_storage_faults.py::"
                        "test_disk_full_takes_one_dir_offline_and_leadership_moves",
                        "client_tests/test_storage_faults.py::"
                        "test_failed_fsyncs_take_the_dir_offline_at_its_next_checkpoint"),
        exercises=("disk_full", "storage"),
    ),
    # The races --fidelity adversarial makes happen, the races-* entries (said above
    # _ADVERSARY_TESTS).
    Difference(
        key="races-retriable-errors",
        title="Retriable errors happen only when injected",
        kafka="Any request may meet a retriable error while the cluster changes: "
              "NOT_LEADER_OR_FOLLOWER and UNKNOWN_TOPIC_OR_PARTITION on Produce, Fetch and "
              "ListOffsets (leader elections, metadata not yet on that broker), "
              "NOT_ENOUGH_REPLICAS while the ISR is short, NOT_COORDINATOR and "
              "COORDINATOR_LOAD_IN_PROGRESS on the group and transaction APIs, "
              "CONCURRENT_TRANSACTIONS while markers are written, COORDINATOR_NOT_AVAILABLE "
              "on FindCoordinator.",
        fast=_AS_ASKED,
        kafka_mode="as fast",
        adversarial="Makes the events that give them, and the handlers answer from the "
                    "state: a leader moved just before the request (NOT_LEADER_OR_FOLLOWER), "
                    "followers lagging (acks=all waits; past replica.lag.time.max.ms the "
                    "ISR shrinks and NOT_ENOUGH_REPLICAS follows), a coordinator moved and "
                    "loading (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS), slow markers "
                    "(CONCURRENT_TRANSACTIONS), a broker with stale metadata "
                    "(UNKNOWN_TOPIC_OR_PARTITION); never a code drawn beside the state, "
                    "checked answer by answer (docs/adversary.md: kinds, rates, the "
                    "soundness invariants).",
        emulator_tests=(*_ADVERSARY_TESTS,
                        "client_tests/test_adversary_kinds.py::"
                        "test_leader_move_before_a_produce_is_answered_from_the_new_state",
                        "client_tests/test_adversary_kinds.py::"
                        "test_follower_lag_holds_the_high_watermark_back",
                        "client_tests/test_adversary_kinds.py::"
                        "test_coordinator_move_before_a_request_answers_not_coordinator",
                        "tests/test_adversary.py::"
                        "test_soundness_names_a_not_leader_answer_from_the_leader"),
    ),
    Difference(
        key="races-lost-responses",
        title="A write's answer is never lost",
        kafka="A Produce can be appended and its answer lost (the connection drops) or be "
              "REQUEST_TIMED_OUT after the leader appended (acks=all, replicas slow): a "
              "producer that retries without idempotence writes the records twice.",
        fast=_AS_ASKED,
        kafka_mode="as fast",
        adversarial="About 5% of Produce requests are applied and their connection closed "
                    "before the answer; 5% of acks=all ones are appended and replicated, "
                    "then their leader moves before answering (NOT_LEADER_OR_FOLLOWER for a "
                    "write that stays); 5% of acks=1 answers are followed by a leader move "
                    "to an in-sync follower that has not fetched them (the acknowledged "
                    "records truncated, as acks=1 permits); 2-3% of OffsetCommits and "
                    "transaction requests (InitProducerId, AddPartitionsToTxn, "
                    "AddOffsetsToTxn, EndTxn) applied and their answer lost.",
        emulator_tests=("client_tests/test_adversarial.py::"
                        "test_idempotent_confluent_producer_writes_each_record_once",
                        "client_tests/test_adversarial.py::"
                        "test_transactional_producer_commits_each_record_once",
                        "tests/test_adversary.py::test_rates_scale_per_kind_and_acks_decide_what_applies",
                        "client_tests/test_adversary_kinds.py::"
                        "test_lost_response_closes_the_connection_after_the_write",
                        "client_tests/test_adversary_kinds.py::"
                        "test_leader_move_after_append_refuses_a_write_that_stays",
                        "client_tests/test_adversary_kinds.py::"
                        "test_unreplicated_leader_move_loses_an_acknowledged_acks_1_write"),
    ),
    Difference(
        key="races-leader-moves",
        title="Leaders move only when asked",
        kafka="A leader can move between a client's Metadata and its Produce or Fetch "
              "(preferred-replica election, a broker restarting): the request meets "
              "NOT_LEADER_OR_FOLLOWER and the client must refresh its metadata.",
        fast=_AS_ASKED,
        kafka_mode="as fast (and the periodic preferred-leader rebalance)",
        adversarial="About one Metadata answer in 8 is followed at once by a leader move of "
                    "one of its partitions, and 3-5% of Produce, Fetch and ListOffsets "
                    "requests meet one just before they reach the leader (to the preferred "
                    "replica if it is not leading, else the next in-sync one: the "
                    "move_leader fault; one client's requests move a partition at most once per 25 of them). The new "
                    "leader's log is the follower's: what the old leader held above the "
                    "high watermark is truncated (KIP-101).",
        emulator_tests=("tests/test_adversary.py::"
                        "test_move_leader_goes_to_the_preferred_replica_then_the_next_in_sync",
                        *_ADVERSARY_TESTS[:1]),
    ),
    Difference(
        key="races-coordinator-moves",
        title="Coordinators move only when asked",
        kafka="A group or transaction coordinator moves with the leader of its "
              "__consumer_offsets / __transaction_state partition, mid-rebalance or "
              "mid-transaction: the next request meets NOT_COORDINATOR, and the new "
              "coordinator loads first.",
        fast=_AS_ASKED,
        kafka_mode="as fast; after a move the coordinator loads (coordinator-loading)",
        adversarial="2-5% of JoinGroup, SyncGroup, Heartbeat, OffsetCommit, OffsetFetch, "
                    "TxnOffsetCommit, ConsumerGroupHeartbeat and transaction requests meet a "
                    "move of their coordinator just before they reach it (NOT_COORDINATOR "
                    "from the state) or right after their answer; a coordinator's partition "
                    "moves at most once per 50 of a client's requests.",
        emulator_tests=_ADVERSARY_TESTS[2:3],
    ),
    Difference(
        key="races-rebalances",
        title="Rebalances happen only when members come and go",
        kafka="A classic group rebalances whenever a member joins, leaves or misses its "
              "session (a GC pause, a slow poll loop): a member is told "
              "REBALANCE_IN_PROGRESS in the middle of its poll loop, or UNKNOWN_MEMBER_ID "
              "once removed, and must give up its partitions.",
        fast="Only when members really join, leave or time out.",
        kafka_mode="as fast",
        adversarial="8% of Heartbeats (3% of SyncGroups and OffsetCommits) start a "
                    "rebalance of the group first; 2% of Heartbeats are held in the network "
                    "until the coordinator's own session timer expires their member (when "
                    "the session is at most 12 s), then answered UNKNOWN_MEMBER_ID.",
        emulator_tests=_ADVERSARY_TESTS[2:3],
    ),
    Difference(
        key="races-fetch-session-eviction",
        title="Fetch sessions are evicted only when the cache is full",
        kafka="A broker's fetch session cache (max.incremental.fetch.session.cache.slots) "
              "evicts sessions under pressure from other clients: the next incremental "
              "Fetch meets FETCH_SESSION_ID_NOT_FOUND and the client starts a full one.",
        fast="Sessions are evicted only when the cache is full, as on Kafka; with few "
             "clients, never.",
        kafka_mode="as fast",
        adversarial="6% of incremental Fetches find their session evicted.",
        emulator_tests=_ADVERSARY_TESTS[2:3],
    ),
    Difference(
        key="internal-topic-segments",
        title="Internal topics roll 100 KiB segments",
        kafka="__consumer_offsets, __transaction_state and __share_group_state are created "
              "with segment.bytes from offsets.topic.segment.bytes, "
              "transaction.state.log.segment.bytes and "
              "share.coordinator.state.topic.segment.bytes (104857600 each). The cleaner "
              "never touches the active segment, so every offset commit stays until 100 MiB "
              "of them roll the segment (on disk, on Kafka).",
        fast="The three are 102400 (100 KiB; Kafka 4 holds a topic's segment.bytes to at "
             "least 1 MiB, the emulator does not hold its internal topics to it): under one "
             "group committing every second __consumer_offsets rolls every few minutes and "
             "the cleaner compacts what rolled, so a long-running emulator's memory stays "
             "flat (bench/soak.py: at 1 MiB the first roll came after ~40 minutes; the "
             "active segment is in memory here, with --data-dir too).",
        kafka_mode="Kafka's 104857600 for all three (`config` overrides it).",
        envelope="Kafka's defaults for the three keys (104857600).",
        tests=("tests/test_coordinator_log.py::"
               "test_offset_commits_are_compacted_under_fast_segments",
               "tests/test_coordinator_log.py::"
               "test_kafka_fidelity_keeps_kafkas_internal_segments"),
        configs=("offsets.topic.segment.bytes", "transaction.state.log.segment.bytes",
                 "share.coordinator.state.topic.segment.bytes"),
    ),
    Difference(
        key="auto-create-visibility",
        title="A topic Metadata auto-created is shown 30 ms later",
        kafka="The broker a Metadata request auto-creates a topic through answers it "
              "UNKNOWN_TOPIC_OR_PARTITION and forwards the creation to the controller, "
              "which takes the name at once; the brokers show the topic once they learn "
              "it from the metadata log.",
        fast="Every broker shows it AUTO_CREATE_SHOWN_MS (30 ms, emulator/cluster/"
             "topics.py) after the request that created it: unknown until then by name, "
             "by id and in an all-topics answer; the name is taken at once. (It used to "
             "be shown at once: kafka-go's partition watcher, started right after its "
             "group leader's Metadata created the topic, saw it, and the reader kept its "
             "empty assignment; kafka-go v0.4.50's TestConsumerGroupWithTopic and "
             "TestConsumerGroupWithGroupTopicsSingle failed 3 of 3.) A deleted topic that "
             "a producer still refreshes is auto-created again on both (librdkafka's "
             "producer asks with allow_auto_topic_creation), about 0.5 s after the "
             "deletion.",
        kafka_mode="The same 30 ms, then each broker's view learns the topic 1-30 ms later "
                   "(metadata-propagation).",
        false_green=True,
        envelope="Measured on Kafka 4.4.0 (3 brokers, a busy 2-core machine, Metadata v12 "
                 "polled on the broker that auto-created it, 20 trials): shown after "
                 "29-245 ms, median 31 (and once, in a Kafka pass at a load average of 19, "
                 "7 ms or less: kafka-go's watcher saw it at its first look); a CreateTopics sent to another broker right after "
                 "the auto-creating Metadata answered TOPIC_ALREADY_EXISTS in 19 of 20. "
                 "kafka-go's two tests on Kafka (group.initial.rebalance.delay.ms 0, as the "
                 "--target kafka cluster): 5 of 16 runs read their message (a race in the "
                 "test: the topic shown between the leader's look and the watcher's first "
                 "look leaves the reader unassigned); on the emulator 26 of 32. "
                 "confluent-kafka-python's share-consumer recreate test's steps (delete, "
                 "list_topics until gone, create, an old producer refreshing every 500 ms), "
                 "15 times: CreateTopics answered TOPIC_ALREADY_EXISTS 3 times on Kafka "
                 "(list_topics still named the topic, the test slept, the producer's refresh "
                 "created it again), 0 times on the emulator (1 of 3 under heavy load).",
        tests=("client_tests/test_metadata_auto_create.py::"
               "test_a_topic_just_auto_created_is_still_unknown_to_the_next_request",
               "client_tests/test_metadata_auto_create.py::"
               "test_auto_created_topic_answers_its_error_first",
               "client_tests/test_kafka_go.py::"
               "test_a_group_reader_whose_topic_is_auto_created_by_its_leader",
               "client_tests/test_topic_recreate_clients.py::"
               "test_an_old_producer_s_refresh_brings_a_deleted_topic_back",
               "client_tests/test_topic_recreate_clients.py::"
               "test_a_recreated_topic_is_new_to_a_share_consumer"),
        exercises=("auto_topic_creation", "auto-creat"),
    ),
    Difference(
        key="internal-topic-min-isr",
        title="The coordinators' own writes ignore min.insync.replicas",
        kafka="__transaction_state is created with min.insync.replicas = "
              "transaction.state.log.min.isr (2) and __share_group_state with "
              "share.coordinator.state.topic.min.isr (2); the coordinators write their "
              "records with acks=all, so with fewer in-sync replicas than that (two of three "
              "brokers down) the write fails NOT_ENOUGH_REPLICAS and the transaction "
              "coordinator answers COORDINATOR_NOT_AVAILABLE (TransactionStateManager), "
              "the share coordinator fails its state writes. (Kafka's source and config "
              "documentation; not measured here.)",
        fast="The topics carry Kafka's configs (client_tests/test_internal_topic_configs.py"
             ", on both targets: __transaction_state used to have no min.insync.replicas, "
             "__share_group_state min(2, its replicas)), but a coordinator's write to its "
             "internal topic (emulator/coordinators/runtime/placement.py append) is not held "
             "to the ISR: transactions and share state keep working with one replica in "
             "sync, where Kafka refuses.",
        kafka_mode=NOT_YET + ": as fast.",
        false_green=True,
        tests=("client_tests/test_internal_topic_configs.py::"
               "test_internal_topics_carry_kafkas_topic_configs",),
        exercises=("min.isr", "min.insync.replicas"),
    ),
    Difference(
        key="transaction-timeout-sweep",
        title="Timed-out transactions are aborted at their timeout",
        kafka="The transaction coordinator looks for transactions past "
              "transaction.timeout.ms every transaction.abort.timed.out.transaction."
              "cleanup.interval.ms (10000) and aborts them then, and for expired "
              "transactional ids every transaction.remove.expired.transaction.cleanup."
              "interval.ms (3600000): a transaction is aborted 0-10 s after its timeout, an "
              "idle transactional id removed up to an hour after transactional.id."
              "expiration.ms.",
        fast="At the moment each is due (a deadline per transactional id, emulator/"
             "coordinators/transactions/coordinator.py schedule): a test that expects the "
             "abort (or the id gone) right after the timeout passes here and may fail on "
             "Kafka; a producer that commits a few seconds after its timeout succeeds on "
             "Kafka and is fenced here.",
        kafka_mode=NOT_YET + ": as fast (the two intervals are accepted without effect).",
        false_green=True,
    ),
    Difference(
        key="producer-id-expiration",
        title="Idempotent producer ids never expire",
        kafka="A producer id with no write for producer.id.expiration.ms (86400000, a day) "
              "is dropped from each partition's producer state: its next write with an old "
              "sequence is refused (OUT_OF_ORDER_SEQUENCE_NUMBER / UNKNOWN_PRODUCER_ID) and "
              "DescribeProducers no longer lists it.",
        fast="Producer state is kept for as long as the partition's log holds the "
             "producer's batches (the key is accepted without effect): a producer idle "
             "longer than the expiration (or a test that sets it low) keeps its sequence "
             "here.",
        kafka_mode=NOT_YET + ": as fast.",
        false_green=True,
    ),
    Difference(
        key="internal-topic-replication",
        title="Internal topics' replication factor fits the brokers",
        kafka="__consumer_offsets, __transaction_state and __share_group_state are created "
              "with offsets.topic.replication.factor, transaction.state.log.replication."
              "factor and share.coordinator.state.topic.replication.factor (3 each); while "
              "fewer brokers are alive FindCoordinator answers COORDINATOR_NOT_AVAILABLE, so "
              "a cluster of one or two brokers must set them lower (client_tests/"
              "kafka_cluster.py small_cluster_config does, as do the usual one-broker "
              "images).",
        fast="The first two default to min(3, brokers) when the emulator starts "
             "(emulator/runtime/cluster.py; DescribeConfigs shows that value, as on a small Kafka "
             "configured so): a one-broker emulator needs no setting. __share_group_state "
             "takes min(its factor, the brokers alive when it is created) "
             "(emulator/coordinators/share/state.py): with a broker of three down it is "
             "created with two replicas where Kafka answers COORDINATOR_NOT_AVAILABLE until "
             "the broker is back.",
        kafka_mode=NOT_YET + ": as fast.",
        false_green=True,
    ),
    Difference(
        key="unclean-election-lost-marker",
        title="A transaction marker an unclean leader lacks",
        kafka="The transaction coordinator sends a COMMIT or ABORT marker again only while "
              "its WriteTxnMarkers has not completed (acks=-1: the high watermark is below "
              "the marker), and then to whichever broker leads (the emulator does that "
              "too, emulator/cluster/leadership.py markers_sent_again). A replica out of "
              "the ISR that missed a marker whose write completed, then elected "
              "uncleanly, never gets it: the transaction hangs open there, holding the "
              "last stable offset (read_committed consumers stop at it), until an "
              "administrator aborts it (kafka-transactions.sh abort).",
        fast="An ABORT marker the unclean leader lacks is written again, so its data stays "
             "aborted and read_committed readers go on; a COMMIT marker it lacks is not, "
             "and the transaction's data reads as committed with no marker after it. A "
             "test whose read_committed consumer goes on after an unclean election passes "
             "here and may hang on Kafka.",
        kafka_mode=NOT_YET + ": as fast.",
        false_green=True,
        tests=("tests/test_marker_leader_move.py::"
               "test_an_abort_marker_an_unclean_leader_lacked_is_written_though_its_write_"
               "completed",),
        exercises=("unclean",),
    ),
]


def difference(key: str) -> Difference:
    """The entry of ``key`` (KeyError names it): for the code and tests that cite one."""
    for d in DIFFERENCES:
        if d.key == key:
            return d
    raise KeyError(key)
