"""Kafka's own message definitions, read from a kafka-clients jar, held against wire/.

Every Kafka release carries its protocol as data: ``common/message/*.json`` inside
kafka-clients-<version>.jar (JSON with ``//`` comment lines). This module reads them at
run time from the jars client_tests/kafka_cluster.py fetches from Maven Central (nothing
of them is copied into the repository) and compares every registered wire/ schema with
them, version by version: which fields exist and in what order, their names (Kafka's
CamelCase as our snake_case), types, nullability, tagged fields and their tags, defaults,
and the message's valid and flexible versions.

The comparison is of what goes over the wire: for each version a schema has, the list of
fields present in it, so two declarations that write the same bytes compare equal however
their version ranges are spelled.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from client_tests.kafka_cluster import DEFAULT_VERSION, SUPPORTED_VERSIONS, ensure_jars
from wire.messages import REQUESTS, RESPONSES
from wire.schema import INF, Array, Field, Message, Struct, Type, parse_versions

_COMMENT = re.compile(r"^\s*//.*$", re.M)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def snake(name: str) -> str:
    """Kafka's field name in our spelling: ThrottleTimeMs -> throttle_time_ms."""
    return _CAMEL.sub("_", name).lower()


def clients_jar(version: str = DEFAULT_VERSION) -> Path:
    jars = ensure_jars(version, quiet=True)
    found = sorted(jars.glob(f"kafka-clients-{version}.jar"))
    if not found:
        raise FileNotFoundError(f"kafka-clients-{version}.jar is not in {jars}")
    return found[0]


def load_definitions(version: str = DEFAULT_VERSION) -> dict[tuple[int, str], dict]:
    """{(api key, "request"|"response"): definition} of Kafka ``version``'s API messages."""
    out: dict[tuple[int, str], dict] = {}
    with zipfile.ZipFile(clients_jar(version)) as jar:
        for name in jar.namelist():
            if not (name.startswith("common/message/") and name.endswith(".json")):
                continue
            doc = json.loads(_COMMENT.sub("", jar.read(name).decode()))
            if doc.get("type") in ("request", "response") and "apiKey" in doc:
                out[(doc["apiKey"], doc["type"])] = doc
    return out


# ---- one shape for both sides ------------------------------------------------------
@dataclass
class Slot:
    """A field as it appears on the wire at one version."""

    name: str
    type: str  # "int32", "[]int32", "struct", "[]struct", ...
    nullable: bool
    tag: int | None  # None: not tagged at this version
    default: Any
    children: list[Slot] = field(default_factory=list)
    kname: str = ""  # Kafka's side: the key its JSON converters use (lower camel case)


def _norm_default(type_name: str, nullable_anywhere: bool, raw: Any) -> Any:
    """Kafka's default (a JSON string, or absent) as a Python value comparable with ours."""
    base = type_name
    if base.startswith("[]") or base == "struct":
        return None if raw == "null" else ("[]" if base.startswith("[]") else "{}")
    if raw == "null":
        return None
    if base in ("int8", "int16", "int32", "int64", "uint16", "uint32"):
        if raw in (None, ""):
            return 0
        text = str(raw)
        return int(text, 16) if text.lower().startswith(("0x", "-0x")) else int(text)
    if base == "float64":
        return float(raw) if raw not in (None, "") else 0.0
    if base == "bool":
        return str(raw).lower() == "true" if raw is not None else False
    if base == "string":
        return "" if raw is None else str(raw)
    if base == "uuid":
        return "zero" if raw in (None, "", "AAAAAAAAAAAAAAAAAAAAAA") else str(raw)
    if base == "bytes":
        return None if raw is None and nullable_anywhere else b""
    if base == "records":
        return None
    return raw


def _our_default(f: Field, type_name: str) -> Any:
    d = f.default
    if type_name.startswith("[]"):
        return None if d is None else "[]"
    if type_name == "struct":
        return None if d is None else "{}"
    if type_name == "uuid":
        return "zero" if d in (b"\x00" * 16, None) else d
    if type_name == "bytes" and d == b"":
        return b""
    return d


def _in(rng: tuple[int, int] | None, v: int) -> bool:
    return rng is not None and rng[0] <= v <= rng[1]


class KafkaMessage:
    """One of Kafka's message definitions, able to say what is on the wire at a version."""

    def __init__(self, doc: dict) -> None:
        self.doc = doc
        self.name: str = doc["name"]
        self.valid = parse_versions(doc["validVersions"])
        self.flexible = parse_versions(doc.get("flexibleVersions", "none"))
        self.unstable_latest = bool(doc.get("latestVersionUnstable", False))
        self.common = {s["name"]: s for s in doc.get("commonStructs", [])}

    @property
    def stable(self) -> tuple[int, int] | None:
        """The valid versions a broker would advertise (an unstable latest one left out)."""
        if self.valid is None:
            return None
        lo, hi = self.valid
        return (lo, hi - 1) if self.unstable_latest and hi > lo else self.valid

    def slots(self, v: int) -> list[Slot]:
        return self._slots(self.doc["fields"], v, _in(self.flexible, v))

    def _slots(self, fields: list[dict], v: int, flex: bool) -> list[Slot]:
        out = []
        for f in fields:
            if not _in(parse_versions(f.get("versions", "none")), v):
                continue
            t = f["type"]
            is_array = t.startswith("[]")
            item = t[2:] if is_array else t
            sub = f.get("fields")
            if sub is None and item in self.common:
                sub = self.common[item]["fields"]
            type_name = ("[]" if is_array else "") + ("struct" if sub is not None else item)
            nullable_rng = parse_versions(f.get("nullableVersions", "none"))
            tagged = f.get("taggedVersions")
            tag = f.get("tag") if tagged is not None and flex and _in(
                parse_versions(tagged), v) else None
            out.append(Slot(snake(f["name"]), type_name, _in(nullable_rng, v), tag,
                            _norm_default(type_name, nullable_rng is not None, f.get("default")),
                            self._slots(sub, v, flex) if sub is not None else [],
                            f["name"][:1].lower() + f["name"][1:]))
        return out


def our_slots(msg: Message, v: int) -> list[Slot]:
    return _our_slots(msg.fields, v, msg.is_flexible(v))


def _type_name(t: Any) -> tuple[str, list[Field] | None]:
    if isinstance(t, Array):
        inner, sub = _type_name(t.item)
        return "[]" + inner, sub
    if isinstance(t, Struct):
        return "struct", t.fields
    if isinstance(t, Type):
        return t.name, None
    raise TypeError(f"unknown schema type {t!r}")


def _our_slots(fields: list[Field], v: int, flex: bool) -> list[Slot]:
    out = []
    for f in fields:
        if not f.present(v):
            continue
        type_name, sub = _type_name(f.type)
        tag = f.tag if flex and f.is_tagged(v) else None
        out.append(Slot(f.name, type_name, f.is_nullable(v), tag, _our_default(f, type_name),
                        _our_slots(sub, v, flex) if sub is not None else []))
    return out


# ---- the comparison -------------------------------------------------------------------
@dataclass
class Report:
    release: str
    mismatches: list[str] = field(default_factory=list)
    fields_checked: int = 0  # (message, version, field) triples compared
    declarations_checked: int = 0  # distinct field declarations of ours compared
    messages_checked: int = 0
    versions_checked: int = 0
    notes: list[str] = field(default_factory=list)  # version ranges we do not cover, etc.
    newer_than_release: int = 0  # our messages of APIs this (older) release did not have


def _fmt_range(r: tuple[int, int] | None) -> str:
    if r is None:
        return "none"
    return f"{r[0]}+" if r[1] >= INF else f"{r[0]}-{r[1]}"


Finding = tuple[str, str]  # (field path without version, what differs)
NAME = "renamed"  # a name differs, nothing on the wire: strict only for the newest release


def compare_slots(ours: list[Slot], theirs: list[Slot], where: str,
                  out: list[Finding]) -> int:
    """Append a finding per difference; return how many fields were compared."""
    checked = 0
    plain_o = [s for s in ours if s.tag is None]
    plain_k = [s for s in theirs if s.tag is None]
    if len(plain_o) != len(plain_k):
        out.append((where, f"fields {[s.name for s in plain_o]} != Kafka's "
                           f"{[s.name for s in plain_k]}"))
    for so, sk in zip(plain_o, plain_k, strict=False):
        if so.name != sk.name:  # same place on the wire, another name
            out.append((f"{where}.{sk.name}", f"{NAME}: ours is {so.name!r}"))
        checked += 1 + _compare_one(so, sk, f"{where}.{so.name}", out)
    tags_o = {s.tag: s for s in ours if s.tag is not None}
    tags_k = {s.tag: s for s in theirs if s.tag is not None}
    if sorted(tags_o) != sorted(tags_k):
        out.append((where, f"tagged fields {sorted((t, s.name) for t, s in tags_o.items())} "
                           f"!= Kafka's {sorted((t, s.name) for t, s in tags_k.items())}"))
    for t in sorted(set(tags_o) & set(tags_k)):
        so, sk = tags_o[t], tags_k[t]
        if so.name != sk.name:
            out.append((f"{where}.{sk.name}", f"{NAME}: ours is {so.name!r} (tag {t})"))
        checked += 1 + _compare_one(so, sk, f"{where}.{so.name}", out)
    return checked


def _compare_one(so: Slot, sk: Slot, where: str, out: list[Finding]) -> int:
    if so.type != sk.type:
        out.append((where, f"type {so.type} != Kafka's {sk.type}"))
    if so.nullable != sk.nullable:
        out.append((where, f"nullable {so.nullable} != Kafka's {sk.nullable}"))
    if so.default != sk.default:
        out.append((where, f"default {so.default!r} != Kafka's {sk.default!r}"))
    if so.children or sk.children:
        return compare_slots(so.children, sk.children, where, out)
    return 0


def _versions_text(vs: list[int]) -> str:
    runs: list[list[int]] = []
    for v in sorted(vs):
        if runs and v == runs[-1][1] + 1:
            runs[-1][1] = v
        else:
            runs.append([v, v])
    return ",".join(f"v{a}" if a == b else f"v{a}-{b}" for a, b in runs)


def check_release(release: str = DEFAULT_VERSION, keys: list[int] | None = None) -> Report:
    """Compare every registered schema (or ``keys``) with Kafka ``release``'s definitions.

    Versions compared: the ones both sides have. Against the default (newest) release a
    version Kafka has and we lack, and a renamed field, are mismatches; against older
    releases they are expected (we follow the newest) and only noted, as are versions we
    keep below Kafka 4's floor for older clients.
    """
    defs = load_definitions(release)
    rep = Report(release)
    for table, kind in ((REQUESTS, "request"), (RESPONSES, "response")):
        for key in sorted(table if keys is None else [k for k in keys if k in table]):
            msg = table[key].msg
            doc = defs.get((key, kind))
            if doc is None:
                line = f"{msg.name} (key {key}): Kafka {release} has no such {kind}"
                if release == DEFAULT_VERSION:
                    rep.mismatches.append(line)
                else:  # an API added after this older release: we follow the newest
                    rep.notes.append(line)
                    rep.newer_than_release += 1
                continue
            check_message(msg, KafkaMessage(doc), rep, strict=release == DEFAULT_VERSION)
    return rep


def check_message(msg: Message, km: KafkaMessage, rep: Report, strict: bool = True) -> None:
    """Compare one schema of ours with one of Kafka's definitions, into ``rep``."""
    rep.messages_checked += 1
    if km.name != msg.name:
        rep.mismatches.append(f"key {msg.api_key} {msg.kind}: named {msg.name}, Kafka's "
                              f"{km.name}")
    theirs_flex = km.flexible[0] if km.flexible else None
    if msg.flexible != theirs_flex:
        rep.mismatches.append(f"{msg.name}: flexible from {msg.flexible}, Kafka's "
                              f"{theirs_flex}")
    if msg.versions != km.valid:
        line = (f"{msg.name}: versions {_fmt_range(msg.versions)}, Kafka {rep.release}'s "
                f"{_fmt_range(km.valid)}")
        # Versions below Kafka 4's floor are kept for older clients (Kafka 4.0 removed
        # them from its definitions): a note. Versions we lack are a mismatch.
        missing = km.valid[0] < msg.versions[0] or km.valid[1] > msg.versions[1]
        (rep.mismatches if strict and missing else rep.notes).append(line)
    by_finding: dict[Finding, list[int]] = {}
    for v in range(max(msg.versions[0], km.valid[0]), min(msg.versions[1], km.valid[1]) + 1):
        rep.versions_checked += 1
        found: list[Finding] = []
        rep.fields_checked += compare_slots(our_slots(msg, v), km.slots(v), msg.name, found)
        for f in dict.fromkeys(found):
            by_finding.setdefault(f, []).append(v)
    for (where, what), vs in by_finding.items():
        line = f"{where} ({_versions_text(vs)}): {what}"
        renamed = what.startswith(NAME)
        (rep.mismatches if strict or not renamed else rep.notes).append(line)
    rep.declarations_checked += _count_fields(msg.fields)


def _count_fields(fields: list[Field]) -> int:
    n = 0
    for f in fields:
        n += 1
        _t, sub = _type_name(f.type)
        if sub:
            n += _count_fields(sub)
    return n


def main() -> None:
    """``python -m conformance.kafka_messages [release ...]``: print the comparison."""
    import sys

    releases = sys.argv[1:] or list(SUPPORTED_VERSIONS)
    for release in releases:
        rep = check_release(release)
        print(f"Kafka {release}: {rep.messages_checked} messages, {rep.versions_checked} "
              f"message versions, {rep.fields_checked} fields compared "
              f"({rep.declarations_checked} field declarations); "
              f"{len(rep.mismatches)} mismatches")
        for line in rep.mismatches:
            print(f"  MISMATCH {line}")
        for line in rep.notes:
            print(f"  note {line}")


if __name__ == "__main__":
    main()
