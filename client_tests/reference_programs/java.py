"""The reference programs with Kafka's Java client: client_tests/java/src/
ReferencePrograms.java (kafka-clients of client_tests/java/pom.xml, compiled by
scripts/setup.d/30-java.sh), one JVM per run, its lines parsed into a ProgramLog."""

from __future__ import annotations

import subprocess
from pathlib import Path

from client_tests.reference_programs.log import ProgramLog, parse_java

JAVA_DIR = Path(__file__).resolve().parent.parent / "java"
JVM = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
       "-cp", f"{JAVA_DIR / '.classes'}:{JAVA_DIR / '.jars'}/*", "ReferencePrograms"]


def _run(args: list[str], timeout: float) -> ProgramLog:
    if not (JAVA_DIR / ".classes" / "ReferencePrograms.class").exists():
        raise AssertionError("client_tests/java/.classes/ReferencePrograms.class is missing: "
                             "run scripts/setup.d/30-java.sh (needs a JDK and Maven)")
    out = subprocess.run(JVM + args, capture_output=True, text=True, timeout=timeout)
    lines = out.stdout.splitlines()
    if out.returncode != 0 or "done" not in lines:
        raise AssertionError(f"ReferencePrograms {args[0]} exited {out.returncode}: "
                             f"{out.stderr[-3000:]}")
    return parse_java(lines)


def producer(bootstrap: str, topic: str, values: list[str], partitions: int) -> ProgramLog:
    prefix = values[0][:-5]
    assert values == [f"{prefix}{i:05d}" for i in range(len(values))], "values: PREFIX%05d"
    return _run(["producer", bootstrap, topic, str(len(values)), str(partitions), prefix], 240)


def consumer(bootstrap: str, topic: str, group: str, expected: int,
             members: int = 2) -> ProgramLog:
    return _run(["consumer", bootstrap, topic, group, str(expected), str(members)], 240)


def ctp(bootstrap: str, src: str, dst: str, group: str, expected: int,
        out_partitions: int, instances: int = 2) -> ProgramLog:
    return _run(["ctp", bootstrap, src, dst, group, str(expected), str(out_partitions),
                 str(instances)], 300)
