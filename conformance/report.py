"""Regenerate docs/conformance.md: how the emulator measures up against Apache Kafka.

    python -m conformance.report            # runs everything (about 20 minutes)

It runs the client tests on the emulator and on a real Kafka cluster (--target kafka),
the schema check against Kafka's message definitions of every supported release, the
differential codec test against Kafka's classes and the response differential, and
writes one page: each client test with its result on both targets, the figures of each
check, and every difference we know of (DIFFERENCES below, kept by hand, plus whatever
the response differential finds on the day).

Every figure on the page comes from this one run: results of an earlier run cannot be
fed in, and the page names the commit it ran on (and says so when the work tree had
changes not committed).
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from client_tests.kafka_cluster import DEFAULT_VERSION, SUPPORTED_VERSIONS
from conformance import codec_diff, kafka_messages, response_diff

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "conformance.md"

# Where the emulator knowingly differs from Kafka 4.4, and what a client sees of it.
DIFFERENCES = [
    ("Crashed brokers are fenced at once by default",
     "A stopped emulated broker leaves Metadata immediately; Kafka keeps a crashed broker "
     "registered until broker.session.timeout.ms (9 s) passes. `--fidelity kafka` (or "
     "`Cluster(fidelity=\"kafka\")`) takes Kafka's 9 s; clients then see the dead broker "
     "as a leader until it is fenced, as on Kafka."),
    ("No initial rebalance delay by default",
     "group.initial.rebalance.delay.ms is 0 (Kafka: 3000) so group tests run fast; "
     "`--fidelity kafka` restores 3000."),
    ("Metadata is never stale",
     "Every emulated broker reads one cluster state, so a topic is known everywhere the "
     "moment CreateTopics returns and gone the moment DeleteTopics returns; Kafka's "
     "brokers learn it from the metadata log a little later. Tests that pass on Kafka "
     "wait for propagation (client_tests/targets.py wait_for_leaders)."),
    ("The controller is a broker",
     "The emulator's controller role lives on one of its brokers (combined mode); Kafka "
     "4.4 here runs a dedicated controller. Clients never see the difference: both report "
     "a random live broker as controller id in Metadata and DescribeCluster, as KRaft "
     "brokers do; DescribeCluster with endpoint type 2 (controllers) is refused by both "
     "on a broker listener."),
    ("Fetch stops at whole batches",
     "At a byte limit Kafka cuts the record data mid-batch (clients drop the partial "
     "trailing batch); the emulator sends only whole batches."),
    ("Pipelined answers leave together",
     "Both serve a connection's requests one at a time, in order; Kafka reads the next "
     "request only after the last answer is sent, while the emulator, when the next "
     "requests are already in its buffer, whole, writes their answers in one send "
     "(client_tests/test_pipelining.py: the same answers in the same order on both, none "
     "held behind a waiting request). Only the TCP segmentation differs: a client that "
     "pipelines (librdkafka: one ProduceRequest per partition) reads several answers per "
     "wake-up."),
    ("Configs known but without effect",
     "Every broker (350), topic (37) and group (21) config Kafka 4.4 knows is listed by "
     "DescribeConfigs with Kafka's type and default and accepted by AlterConfigs and "
     "IncrementalAlterConfigs (emulator/cluster/kafka_configs.py, generated from a real "
     "broker); most have no effect in the emulator (e.g. sasl.kerberos.*, "
     "num.network.threads). The GROUP keys act as in Kafka (consumer.session.timeout.ms "
     "and consumer.heartbeat.interval.ms on consumer groups, share.* on share groups, "
     "streams.* on streams groups) except consumer.assignment.interval.ms (those "
     "assignments are computed at once) and the dead-letter-queue keys, which are "
     "stored."),
    ("UnregisterBroker of a running broker",
     "Both answer NONE; Kafka 4.4 then leaves the running broker out of the cluster until "
     "it restarts (measured: still absent after 20 s, and a second UnregisterBroker "
     "answers BROKER_ID_NOT_REGISTERED), while the emulator's broker registers again at "
     "once."),
    ("Transactions complete at once",
     "After EndTxn the emulator's coordinator is in CompleteCommit/CompleteAbort at once; "
     "Kafka's passes through PrepareCommit/PrepareAbort until the markers are written, so "
     "DescribeTransactions right after EndTxn may show Prepare* there."),
    ("DescribeProducers on a follower",
     "Both answer from any replica (Kafka's Partition.activeProducerState reads the local "
     "log); the emulator's follower answers with the leader's producer state, Kafka's "
     "with its own, which is the same once it has fetched the leader's batches."),
    ("Share-group state records",
     "The emulator's __share_group_state records carry a share-partition's current start "
     "offset; Kafka 4.4's carry the one from before the acknowledgement or release they "
     "write. DescribeShareGroupOffsets and ReadShareGroupStateSummary report the latter "
     "on both."),
    ("Consumer group epochs (KIP-848)",
     "Kafka 4.4 answers a new consumer group's first member epoch 2 and a second joiner "
     "the assignment epoch before its target is computed (the response differential's "
     "KIP-848 case: 2, 2, then 3 once both reconciled); the emulator answers 1, 2 and 2. "
     "Assignments, states and every other field agree; clients only echo epochs."),
    ("Share sessions outlive their connection",
     "Kafka 4.4 closes a share session when the connection that opened it closes and "
     "releases the member's acquired records (delivered again, delivery count 2); the "
     "emulator keeps the session until the member's final-epoch request or its leaving "
     "the group, so the records stay acquired until their lock runs out. Clients that "
     "reconnect open a new session (epoch 0) either way."),
    ("Config documentation",
     "DescribeConfigs with IncludeDocumentation: Kafka sends each config's documentation "
     "text, the emulator null (Kafka's prose is not copied into the emulator's config "
     "table, which holds facts only)."),
    ("Java tools at 4.3.1",
     "kafka-tools 4.4.0 is not on Maven Central, so kafka-reassign-partitions and "
     "kafka-topics in the Java client tests are 4.3.1's, on their own classpath."),
]


# Tests that check Kafka's behaviour on a real Kafka of their own (a cluster the
# target-neutral fixture cannot provide: here StandardAuthorizer over SASL), each the
# Kafka side of an emulator test of the same module family. Their results fill that
# emulator test's Kafka column instead of standing as emulator-only rows.
# {module on a Kafka of its own: (what that Kafka is, the module of the emulator twins)}
OWN_KAFKA_MODULES = {
    "test_security_acls_kafka.py": ("own Kafka with StandardAuthorizer, SASL_PLAINTEXT",
                                    "test_security_acls.py"),
    "test_share_groups_authz_kafka.py": ("own Kafka with StandardAuthorizer, SASL_PLAINTEXT, "
                                         "SHARE_TEST_CONFIG", "test_share_groups_authz.py"),
    "test_connection_limits_kafka.py": ("own Kafka, one broker per connection limit",
                                        "test_connection_limits.py"),
}
OWN_KAFKA_RENAMED = {
    "test_acl_operations_over_10000_records_on_real_kafka":
        "test_security_acls.py::test_acl_operations_over_10000_records_are_refused_as_kafka",
    "test_delegation_tokens_over_sasl_on_real_kafka":
        "test_security_acls.py::test_delegation_tokens_over_sasl_answer_as_kafka_without_a_secret",
    "test_metadata_lists_only_described_topics_and_fills_operations_on_real_kafka":
        "test_security_acls.py::test_metadata_lists_only_described_topics_and_fills_operations",
    "test_fetch_session_reauthorization_on_real_kafka":
        "test_security_acls.py::test_fetch_session_partitions_are_reauthorized",
    "test_requests_before_authentication_on_real_kafka":
        "test_security_sasl.py::test_requests_before_authentication_close_the_connection",
    "test_sasl_on_a_plaintext_listener_on_real_kafka":
        "test_security_sasl.py::test_sasl_on_a_plaintext_listener_is_illegal_sasl_state",
    "test_unsupported_mechanism_on_real_kafka":
        "test_security_sasl.py::test_unsupported_mechanism_then_close",
    "test_no_reauthentication_by_default_on_real_kafka":
        "test_security_sasl.py::test_handshake_v1_plain_then_no_reauthentication_by_default",
    "test_handshake_v0_on_real_kafka": "test_security_sasl.py::test_handshake_v0_raw_tokens",
    "test_reauthentication_with_connections_max_reauth_ms_on_real_kafka":
        "test_security_sasl.py::test_reauthentication_with_connections_max_reauth_ms",
}


def own_kafka_results(emu: dict[str, str]) -> dict[str, tuple[str, str]]:
    """{emulator test: (result of its counterpart on a Kafka of its own, what Kafka)}.

    A counterpart is named in OWN_KAFKA_RENAMED, else it is the twin module's test of the
    same name without "_on_real_kafka" (parameters kept)."""
    out = {}
    for key, state in emu.items():
        module, _, name = key.partition("::")
        if module not in OWN_KAFKA_MODULES:
            continue
        what, twin_module = OWN_KAFKA_MODULES[module]
        base, bracket, params = name.partition("[")
        twin = OWN_KAFKA_RENAMED.get(
            base, f"{twin_module}::{base.removesuffix('_on_real_kafka')}")
        target = f"{twin}{bracket}{params}"
        if target in emu:
            out[target] = (state, what)
    return out


def run_pytest(target: str, junit: Path) -> float:
    args = [sys.executable, "-m", "pytest", "client_tests", "-q", "-p", "no:cacheprovider",
            f"--junitxml={junit}", "--target", target]
    if target == "emulator":
        args += ["-n", "2"]
    t0 = datetime.datetime.now()
    subprocess.run(args, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return (datetime.datetime.now() - t0).total_seconds()


def read_junit(path: Path) -> dict[str, str]:
    """{module::test: passed|failed|error|skipped}."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        module = case.get("classname", "").replace(".", "/") + ".py"
        name = f"{module.split('/', 1)[-1] if module.startswith('client_tests') else module}"
        key = f"{name}::{case.get('name')}"
        state = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                state = {"failure": "failed"}.get(child.tag, child.tag)
        out[key] = state
    return out


def commit() -> str:
    """The commit this run is on, and whether the work tree differs from it."""
    def git(*a: str) -> str:
        return subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    head = git("rev-parse", "--short=12", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return f"{head} (with changes not committed)" if dirty else head


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--codec-per-version", type=int, default=250)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="conformance-"))
    timings = {}
    ran_on = commit()
    emu_xml, kafka_xml = tmp / "emulator.xml", tmp / "kafka.xml"
    timings["client tests on the emulator"] = run_pytest("emulator", emu_xml)
    timings[f"client tests on Kafka {DEFAULT_VERSION}"] = run_pytest("kafka", kafka_xml)
    emu, kafka = read_junit(emu_xml), read_junit(kafka_xml)
    schema = [kafka_messages.check_release(v) for v in SUPPORTED_VERSIONS]
    codec = codec_diff.run(per_version=args.codec_per_version, seed=20261123)
    t0 = datetime.datetime.now()
    battery = response_diff.run_battery()
    timings["response differential"] = (datetime.datetime.now() - t0).total_seconds()
    if commit() != ran_on:
        raise SystemExit(f"the work tree changed during the run ({ran_on} -> {commit()}): "
                         "no page written")
    lines = write(emu, kafka, schema, codec, battery, timings, ran_on)
    OUT.write_text("\n".join(lines) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


def write(emu: dict, kafka: dict, schema: list, codec: codec_diff.Result,
          battery: list[response_diff.Outcome], timings: dict, ran_on: str) -> list[str]:
    today = datetime.date.today().isoformat()
    passed = lambda d: sum(1 for v in d.values() if v == "passed")  # noqa: E731
    own = own_kafka_results(emu)
    emu = {k: v for k, v in emu.items() if k.partition("::")[0] not in OWN_KAFKA_MODULES}
    both = [k for k in emu if k in kafka or k in own]
    lines = [
        "# Conformance: the emulator against Apache Kafka",
        "",
        f"Generated by `python -m conformance.report` on {today} at commit {ran_on}, "
        f"every figure from that one run; Apache Kafka {DEFAULT_VERSION} (KRaft, one "
        "controller and three brokers, client_tests/kafka_cluster.py). Do not edit by "
        "hand: change conformance/report.py.",
        "",
        "## Summary",
        "",
        f"- Client tests: {passed(emu)} of {len(emu)} pass on the emulator; {len(kafka)} "
        f"are about Kafka's behaviour and run on Kafka {DEFAULT_VERSION} too, where "
        f"{passed(kafka)} pass; {len(own)} more run on a Kafka {DEFAULT_VERSION} of their "
        "own, configured as the shared one cannot be ("
        + "; ".join(f"{m}: {what}, twins of {twin}"
                    for m, (what, twin) in OWN_KAFKA_MODULES.items())
        + f"), where {sum(1 for st, _ in own.values() if st == 'passed')} pass; "
        f"the other {len(emu) - len(both)} test the emulator itself (marked "
        "`emulator_only`).",
    ]
    for rep in schema:
        lines.append(f"- Schemas vs Kafka {rep.release}'s message definitions: "
                     f"{rep.messages_checked} messages, {rep.versions_checked} message "
                     f"versions, {rep.fields_checked} fields compared, "
                     f"{len(rep.mismatches)} mismatches.")
    lines.append(f"- Codec vs Kafka {DEFAULT_VERSION}'s generated classes: {codec.total} random "
                 f"messages both ways over {sum(codec.versions.values())} message versions, "
                 f"{codec.failed} differing.")
    differing = [o for o in battery if o.differences]
    lines.append(f"- Response differential: {len(battery)} cases sent to both, "
                 f"{sum(o.fields for o in battery):,} fields compared, {len(differing)} "
                 f"answered differently ({sum(1 for o in differing if not o.unexplained)} "
                 f"only in known ways), {sum(1 for o in battery if o.failed)} failed "
                 "(below).")
    for what, secs in timings.items():
        lines.append(f"- Time: {what} {secs:.0f} s.")
    lines += ["", "## Client tests on both targets", "",
              "`pytest client_tests --target kafka` (or KAFKA_EMULATOR_TARGET=kafka) runs the "
              "right-hand column.", "",
              f"| test | emulator | Kafka {DEFAULT_VERSION} |", "|---|---|---|"]
    for k in sorted(emu.keys() | kafka.keys()):
        theirs = (kafka[k] if k in kafka else f"{own[k][0]} ({own[k][1]})" if k in own
                  else "emulator only")
        lines.append(f"| `{k}` | {emu.get(k, '-')} | {theirs} |")
    lines += ["", "## Known differences", ""]
    for title, text in DIFFERENCES:
        lines.append(f"- **{title}.** {text}")
    lines += ["", "## Response differential", "",
              "`python -m conformance.response_diff`: the same requests to both systems, "
              "every field a client can read compared; values that legitimately differ "
              "(placement, generated ids, times) normalized by their relation to what both "
              "agree on (conformance/response_diff.py). Fields compared per case:", ""]
    for o in battery:
        state = ("**fails**" if o.failed else "**differs** (known: " + str(o.known) + ")"
                 if o.differences else "same")
        lines.append(f"- {state}, {o.fields} fields: {o.name}")
        lines += [f"  - `{d}`" for d in o.differences]
    lines += ["", "## Codec: messages compared per key", "",
              "| key | kind | versions | messages |", "|---|---|---|---|"]
    for (key, kind), n in sorted(codec.cases.items()):
        lines.append(f"| {key} | {kind} | {codec.versions[(key, kind)]} | {n} |")
    return lines


if __name__ == "__main__":
    main()
