"""Regenerate docs/conformance.md: how the emulator measures up against Apache Kafka.

    python -m conformance.report            # runs everything (about 20 minutes)

It runs the client tests on the emulator and on a real Kafka cluster (--target kafka),
the schema check against Kafka's message definitions of every supported release, the
differential codec test against Kafka's classes and the response differential, and
writes one page: each client test with its result on both targets, the figures of each
check, and every difference we know of (emulator/fidelity/differences.py's DIFFERENCES,
rendered by conformance/fidelity_doc.py, which also rewrites that section alone without this run,
plus whatever the response differential finds on the day).

Every figure on the page comes from this one run: results of an earlier run cannot be
fed in, and the page names the commit it ran on (and says so when the work tree had
changes not committed). The scheduled job .ci/conformance-nightly runs it every night;
the exit status is 1 when a response-differential case failed (the page is written).
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
from conformance.fidelity_doc import known_differences

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "conformance.md"

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
    failed = [o.name for o in battery if o.failed]
    if failed:  # the page is written, marking them; the scheduled job fails (.ci/)
        raise SystemExit(f"response differential: {len(failed)} case(s) failed: {failed}")


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
    lines += ["", *known_differences()]
    lines += ["", "## Response differential", "",
              "`python -m conformance.response_diff`: the same requests to both systems, "
              "every field a client can read compared; values that legitimately differ "
              "(placement, generated ids, times) normalized by their relation to what both "
              "agree on (conformance/response_diff.py). Fields compared per case:", ""]
    for o in battery:
        state = ("**fails**" if o.failed else "**differs** (known: " + str(o.known) + ")"
                 if o.differences else "same")
        few = f" (few fields: {o.few_fields})" if o.few_fields and o.fields < \
            response_diff.MIN_FIELDS else ""
        lines.append(f"- {state}, {o.fields} fields: {o.name}{few}")
        lines += [f"  - `{d}`" for d in o.differences]
    lines += ["", "## Codec: messages compared per key", "",
              "| key | kind | versions | messages |", "|---|---|---|---|"]
    for (key, kind), n in sorted(codec.cases.items()):
        lines.append(f"| {key} | {kind} | {codec.versions[(key, kind)]} | {n} |")
    return lines


if __name__ == "__main__":
    main()
