"""Differential codec test: our wire/ codec against Kafka's generated message classes.

For every registered message (request and response), every version both we and Kafka's
definitions have, and ``n`` random messages per version and direction:

- Kafka -> ours: a random message drawn from *Kafka's* definition (so the randomness
  does not share our schema's blind spots) is built from JSON by Kafka's
  ``XxxDataJsonConverter`` and serialized by Kafka's ``XxxData``; our decoder must read
  every byte and find every field's value, and our encoder must give the same bytes back.
- ours -> Kafka: a random message drawn from *our* schema is serialized by our encoder;
  Kafka's class must read every byte and find every field's value (its JSON converter
  says), and Kafka's serializer must give the same bytes back.

Tagged fields are drawn at their default about half the time (then they are left out
on the wire) and at random values otherwise. The Java side is client_tests/java/src/
CodecDiff.java, compiled by scripts/setup.d/30-java.sh against the kafka-clients of
client_tests/java/pom.xml (Kafka 4.4.0). One JVM runs a whole batch from a file.

    python -m conformance.codec_diff [--per-version N] [--seed S] [--keys 0,1,3]
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from client_tests.kafka_cluster import DEFAULT_VERSION
from conformance.kafka_messages import KafkaMessage, Slot, load_definitions, our_slots
from wire.codec import DecodeError
from wire.messages import REQUESTS, RESPONSES

ROOT = Path(__file__).resolve().parent.parent
JAVA_DIR = ROOT / "client_tests" / "java"
CLASSPATH = f"{JAVA_DIR / '.classes'}:{JAVA_DIR / '.jars'}/*"
TEXT = "abcxyzABC019-_.é日本😀"
BATCH = 100_000  # cases per JVM run
INT_RANGES = {"int8": 8, "int16": 16, "int32": 32, "int64": 64}


# ---- random values ----------------------------------------------------------------------
class Gen:
    """Random field values of every wire type, edge values included."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def value(self, s: Slot, depth: int = 0) -> Any:
        r = self.rng
        if s.tag is not None and r.random() < 0.5:
            return tagged_default(s)
        if s.nullable and r.random() < 0.15:
            return None
        t = s.type
        if t.startswith("[]"):
            n = r.choice((0, 1, 1, 2, 3)) if depth < 3 else r.choice((0, 1))
            if t == "[]struct":
                return [self.struct(s.children, depth + 1) for _ in range(n)]
            return [self.scalar(t[2:]) for _ in range(n)]
        if t == "struct":
            return self.struct(s.children, depth + 1)
        return self.scalar(t)

    def struct(self, slots: list[Slot], depth: int) -> dict:
        return {s.name: self.value(s, depth) for s in slots}

    def scalar(self, t: str) -> Any:
        r = self.rng
        if t in INT_RANGES:
            bits = INT_RANGES[t]
            lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
            return r.choice((lo, hi, -1, 0, 1, r.randint(max(lo, -300), min(hi, 300)),
                             r.randint(lo, hi)))
        if t == "uint16":
            return r.choice((0, 65535, r.randint(0, 65535)))
        if t == "uint32":
            return r.choice((0, (1 << 32) - 1, r.randint(0, (1 << 32) - 1)))
        if t == "float64":
            return r.choice((0.0, -1.5, r.uniform(-1e12, 1e12), r.random()))
        if t == "bool":
            return r.random() < 0.5
        if t == "string":
            return "".join(r.choice(TEXT) for _ in range(r.choice((0, 1, 5, 12))))
        if t in ("bytes", "records"):
            return bytes(r.getrandbits(8) for _ in range(r.choice((0, 1, 7, 33))))
        if t == "uuid":
            return b"\x00" * 16 if r.random() < 0.2 else r.randbytes(16)
        raise ValueError(f"no generator for type {t}")


def tagged_default(s: Slot) -> Any:
    """The value a tagged field has when it is left out (the declared default)."""
    d = s.default
    if s.type.startswith("[]"):
        return None if d is None else []
    if s.type == "struct":  # a struct of defaults, as Kafka's ``new Xxx()``
        return None if d is None else {c.name: tagged_default(c) for c in s.children}
    if s.type == "uuid":
        return b"\x00" * 16 if d == "zero" else d
    return d


# ---- JSON in Kafka's converter spelling, and back ----------------------------------------
def to_kafka_json(value: dict, slots: list[Slot]) -> dict:
    return {s.kname: _to_json(value[s.name], s) for s in slots}


def _to_json(v: Any, s: Slot) -> Any:
    if v is None:
        return None
    if s.type == "[]struct":
        return [to_kafka_json(x, s.children) for x in v]
    if s.type == "struct":
        return to_kafka_json(v, s.children)
    if s.type.startswith("[]"):
        return [_scalar_json(x, s.type[2:]) for x in v]
    return _scalar_json(v, s.type)


def _scalar_json(v: Any, t: str) -> Any:
    if t in ("bytes", "records"):
        return base64.b64encode(bytes(v)).decode()
    if t == "uuid":
        return base64.urlsafe_b64encode(bytes(v)).decode().rstrip("=")
    return v


def from_kafka_json(node: dict, slots: list[Slot]) -> dict:
    """Kafka's converters leave out a tagged field at its default: put the default back."""
    return {s.name: _from_json(node[s.kname], s) if s.kname in node else tagged_default(s)
            for s in slots}


def _from_json(v: Any, s: Slot) -> Any:
    if v is None:
        return None
    if s.type == "[]struct":
        return [from_kafka_json(x, s.children) for x in v]
    if s.type == "struct":
        return from_kafka_json(v, s.children)
    if s.type.startswith("[]"):
        return [_scalar_from(x, s.type[2:]) for x in v]
    return _scalar_from(v, s.type)


def _scalar_from(v: Any, t: str) -> Any:
    if t in ("bytes", "records"):
        return base64.b64decode(v)
    if t == "uuid":
        return base64.urlsafe_b64decode(v + "==")
    if t == "float64":
        return float(v)
    return v


def present(value: dict, slots: list[Slot], mask_records: bool = False) -> dict:
    """Only the fields on the wire at this version, bytes-like values as bytes.

    ``mask_records``: Kafka's JSON converters write a records field's content as an empty
    string, so from Kafka's side only null / not null is compared (the bytes are compared
    whole anyway)."""
    out = {}
    for s in slots:
        v = value.get(s.name)
        if v is not None and s.type == "[]struct":
            v = [present(x, s.children, mask_records) for x in v]
        elif v is not None and s.type == "struct":
            # ours leaves an absent struct as {}; Kafka's is a struct of defaults
            v = present(v or tagged_default(s), s.children, mask_records)
        elif v is not None and s.type == "records" and mask_records:
            v = "<records>"
        elif isinstance(v, bytes | bytearray | memoryview):
            v = bytes(v)
        elif isinstance(v, list):
            v = [bytes(x) if isinstance(x, bytes | bytearray | memoryview) else x for x in v]
        out[s.name] = v
    return out


def first_difference(a: Any, b: Any, path: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a.keys() | b.keys():
            if a.get(k, ...) != b.get(k, ...):
                return first_difference(a.get(k), b.get(k), f"{path}.{k}")
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if x != y:
                return first_difference(x, y, f"{path}[{i}]")
    return f"{path or '.'}: {a!r} != {b!r}"


# ---- the run ----------------------------------------------------------------------------
@dataclass
class Case:
    direction: str  # "kafka->ours" or "ours->kafka"
    msg_name: str
    key: int
    kind: str
    version: int
    value: dict  # what was drawn, our field names
    our_bytes: bytes = b""  # ours->kafka: what our encoder wrote
    codec: Any = None  # our CompiledMessage


@dataclass
class Result:
    cases: Counter = field(default_factory=Counter)  # (key, kind) -> messages compared
    versions: Counter = field(default_factory=Counter)  # (key, kind) -> versions covered
    failures: list[str] = field(default_factory=list)  # one example per kind of failure
    failed: int = 0  # messages that differed
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.cases.values())


def run(per_version: int = 100, seed: int = 1, keys: list[int] | None = None,
        release: str = DEFAULT_VERSION, max_failures: int = 50,
        tables: tuple[dict, dict] = (REQUESTS, RESPONSES)) -> Result:
    """Draw, exchange with Kafka's classes, compare; return counts and failures.

    ``tables`` replaces the registered codecs (requests, responses): the test of this
    test hands in a deliberately wrong one."""
    t0 = time.monotonic()
    if not (JAVA_DIR / ".classes" / "CodecDiff.class").exists():
        raise RuntimeError("client_tests/java/.classes/CodecDiff.class is missing: run "
                           "scripts/setup.d/30-java.sh (needs a JDK and Maven)")
    rng = random.Random(seed)
    gen = Gen(rng)
    defs = load_definitions(release)
    res = Result()
    cases: list[Case] = []
    lines: list[str] = []
    slots_cache: dict[tuple[int, str, int], list[Slot]] = {}
    seen_kinds: set[tuple] = set()

    def flush() -> None:
        """One JVM per batch keeps memory bounded on long runs."""
        for case, out in zip(cases, _java(lines), strict=True):
            k = (case.key, case.kind, case.version)
            if k not in slots_cache:
                slots_cache[k] = KafkaMessage(defs[(case.key, case.kind)]).slots(case.version)
            problem = _check(case, out, slots_cache[k])
            res.cases[(case.key, case.kind)] += 1
            if problem:
                res.failed += 1
                kind = (case.direction, case.msg_name, case.version, problem.split(":", 1)[0])
                if kind not in seen_kinds and len(res.failures) < max_failures:
                    seen_kinds.add(kind)  # the first example of each kind of failure
                    res.failures.append(f"{case.direction} {case.msg_name} v{case.version}: "
                                        f"{problem[:600]}")
        cases.clear()
        lines.clear()

    for table, kind in zip(tables, ("request", "response"), strict=True):
        for key in sorted(table if keys is None else [k for k in keys if k in table]):
            msg = table[key].msg
            km = KafkaMessage(defs[(key, kind)])
            lo, hi = max(msg.versions[0], km.valid[0]), min(msg.versions[1], km.valid[1])
            for v in range(lo, hi + 1):
                res.versions[(key, kind)] += 1
                kslots, oslots = km.slots(v), our_slots(msg, v)
                for _ in range(per_version):
                    value = gen.struct(kslots, 0)
                    cases.append(Case("kafka->ours", msg.name, key, kind, v, value,
                                      codec=table[key]))
                    lines.append(json.dumps({"op": "build", "name": msg.name, "v": v,
                                             "json": to_kafka_json(value, kslots)}))
                    value = gen.struct(oslots, 0)
                    data = table[key].encode(value, v)
                    cases.append(Case("ours->kafka", msg.name, key, kind, v, value, data,
                                      table[key]))
                    lines.append(json.dumps({"op": "parse", "name": msg.name, "v": v,
                                             "b64": base64.b64encode(data).decode()}))
            if len(cases) >= BATCH:
                flush()
    if cases:
        flush()
    res.seconds = time.monotonic() - t0
    return res


def _check(case: Case, out: dict, slots: list[Slot]) -> str | None:
    codec = case.codec
    if not out.get("ok"):
        return f"Kafka refused it: {out.get('error')}"
    kafka_bytes = base64.b64decode(out["b64"])
    expected = present(case.value, slots)
    if case.direction == "kafka->ours":
        try:
            decoded, end = codec.decode(kafka_bytes, case.version)
        except (DecodeError, ValueError, IndexError) as e:
            return f"our decoder failed on Kafka's bytes: {e}"
        if end != len(kafka_bytes):
            return f"our decoder stopped at {end} of {len(kafka_bytes)} bytes"
        got = present(decoded, slots)
        if got != expected:
            return f"our decoder read {first_difference(got, expected)}"
        again = codec.encode(decoded, case.version)
        if again != kafka_bytes:
            return f"our encoding differs from Kafka's: {again.hex()} != {kafka_bytes.hex()}"
        return None
    seen = present(from_kafka_json(out["json"], slots), slots, mask_records=True)
    expected = present(case.value, slots, mask_records=True)
    if seen != expected:
        return f"Kafka read {first_difference(seen, expected)}"
    if kafka_bytes != case.our_bytes:
        return (f"Kafka's encoding differs from ours: {kafka_bytes.hex()} != "
                f"{case.our_bytes.hex()}")
    return None


def _java(lines: list[str]) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="codec-diff-") as d:
        cases, results = Path(d) / "cases.jsonl", Path(d) / "results.jsonl"
        cases.write_text("\n".join(lines) + "\n")
        r = subprocess.run(["java", "-XX:+UseSerialGC", "-Xshare:auto", "-Xmx1g", "-cp",
                            CLASSPATH, "CodecDiff", str(cases), str(results)],
                           capture_output=True, text=True, timeout=1800)
        if r.returncode != 0:
            raise RuntimeError(f"CodecDiff exited {r.returncode}: {r.stderr[-2000:]}")
        return [json.loads(x) for x in results.read_text().splitlines()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per-version", type=int, default=1000,
                    help="random messages per key, kind, version and direction")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keys", help="comma-separated API keys (default: every registered)")
    args = ap.parse_args()
    keys = [int(k) for k in args.keys.split(",")] if args.keys else None
    res = run(args.per_version, args.seed, keys, max_failures=200)
    print(f"{res.total} messages compared in {res.seconds:.1f} s "
          f"({args.per_version} per key, kind, version and direction; seed {args.seed})")
    for (key, kind), n in sorted(res.cases.items()):
        print(f"  key {key:3} {kind:8} {res.versions[(key, kind)]:3} versions  {n:7} messages")
    print(f"{res.failed} messages differed; one example of each kind:")
    for f in res.failures:
        print(f"  {f}")
    raise SystemExit(1 if res.failures else 0)


if __name__ == "__main__":
    main()
