"""The schema registry itself, sans I/O: subjects, versions, ids, configs and modes, as
the records of the ``_schemas`` topic say, and the API's operations on them.

Confluent's registry keeps no state but its topic: every change is a record (key and
value JSON, as ``SchemaRegistryKey`` / ``SchemaValue`` serialize them) appended to the
compacted ``_schemas`` topic, and the in-memory view is what a reader of that topic
builds. The same here: an operation computes the records it needs and hands them to
``write`` (emulator.schema_registry.store appends them and feeds them back through
``apply``), so a registry started on a restored data directory, or after a leader move,
rebuilds the same view from the same records.

The records' layouts and the version entity are in emulator.schema_registry.records.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from emulator.schema_registry import errors as E
from emulator.schema_registry.errors import RegistryError
from emulator.schema_registry.records import (
    DEFAULT_LEVEL,
    DEFAULT_MODE,
    LEVELS,
    MAX_VERSION,
    MODES,
    TYPES,
    Record,
    Version,
    refs_key,
    schema_key,
)

__all__ = ["LEVELS", "MODES", "TYPES", "Record", "Registry", "Version", "differences",
           "parse_version", "schema_key"]


class Registry:
    """The registry's view and its operations (domain: no I/O, no asyncio)."""

    def __init__(self, write: Callable[[list[Record]], None] | None = None) -> None:
        self.subjects: dict[str, dict[int, Version]] = {}
        self.config: dict[str | None, str] = {}
        self.mode: dict[str | None, str] = {}
        self.max_id = 0
        self.write = write or self._apply_all
        self._parsed: dict[tuple[str, str, str], Any] = {}

    # ---- the records ------------------------------------------------------------------
    def _apply_all(self, records: list[Record]) -> None:
        for key, value in records:
            self.apply(key, value)

    def apply(self, key: dict, value: dict | None) -> None:
        """One record of ``_schemas`` (read back, replayed, or written by a client)."""
        kt = key.get("keytype")
        subject = key.get("subject")
        if kt == "SCHEMA" and isinstance(subject, str):
            version = int(key.get("version", 0))
            versions = self.subjects.setdefault(subject, {})
            if value is None:
                versions.pop(version, None)
                if not versions:
                    del self.subjects[subject]
                return
            schema, refs = value["schema"], value.get("references") or []
            schema_type = value.get("schemaType") or "AVRO"
            if not isinstance(schema, str) or not isinstance(schema_type, str) or not (
                    isinstance(refs, list) and all(isinstance(r, dict) for r in refs)):
                raise ValueError(f"not a schema record: {value!r:.200}")
            v = Version(subject, version, int(value["id"]), schema_type, schema, list(refs),
                        bool(value.get("deleted", False)))
            versions[version] = v
            self.max_id = max(self.max_id, v.id)
        elif kt == "MAX_ID" and value is not None:
            self.max_id = max(self.max_id, int(value["maxId"]))
        elif kt == "CONFIG":
            if value is None:
                self.config.pop(subject, None)
            else:
                self.config[subject] = value.get("compatibilityLevel") or DEFAULT_LEVEL
        elif kt == "MODE":
            if value is None:
                self.mode.pop(subject, None)
            else:
                self.mode[subject] = value.get("mode") or DEFAULT_MODE
        elif kt == "DELETE_SUBJECT" and isinstance(subject, str) and value is not None:
            upto = int(value.get("version", MAX_VERSION))
            for v in self.subjects.get(subject, {}).values():
                if v.version <= upto:
                    v.deleted = True
        elif kt == "CLEAR_SUBJECT" and isinstance(subject, str) and value is not None:
            upto = int(value.get("version", MAX_VERSION))
            versions = self.subjects.get(subject, {})
            for n in [n for n, v in versions.items() if v.deleted and n <= upto]:
                del versions[n]
            if subject in self.subjects and not versions:
                del self.subjects[subject]

    # ---- lookups ------------------------------------------------------------------------
    def _all_versions(self) -> list[Version]:
        return [v for vs in self.subjects.values() for v in vs.values()]

    def by_id(self, schema_id: int) -> Version | None:
        found = None
        for v in self._all_versions():
            if v.id == schema_id and (found is None or (found.deleted and not v.deleted)):
                found = v
        return found

    def live(self, subject: str, deleted: bool = False) -> list[Version]:
        vs = self.subjects.get(subject, {})
        return [vs[n] for n in sorted(vs) if deleted or not vs[n].deleted]

    def _version(self, subject: str, version: str, deleted: bool = False) -> Version:
        n = parse_version(version)
        if subject not in self.subjects or not self.live(subject, deleted=True):
            raise E.subject_not_found(subject)
        vs = self.live(subject, deleted)
        if not vs:
            raise E.subject_not_found(subject)
        if n == -1:
            return vs[-1]
        for v in vs:
            if v.version == n:
                return v
        raise E.version_not_found(n)

    def level(self, subject: str | None) -> str:
        return self.config.get(subject) or self.config.get(None) or DEFAULT_LEVEL

    def effective_mode(self, subject: str | None) -> str:
        return self.mode.get(subject) or self.mode.get(None) or DEFAULT_MODE

    # ---- parsing ------------------------------------------------------------------------
    def parse(self, schema_type: str, text: str, refs: list[dict]) -> Any:
        """The parsed schema (cached: a schema is parsed once however often asked)."""
        if schema_type not in TYPES:
            raise E.invalid_schema(f"type {schema_type!r}: unknown; the types are "
                                   f"{', '.join(TYPES)}")
        key = (schema_type, text, refs_key(refs))
        hit = self._parsed.get(key)
        if hit is not None:
            return hit
        resolved = []
        for r in refs:
            if not isinstance(r, dict) or not all(k in r for k in ("name", "subject",
                                                                    "version")):
                raise E.invalid_schema("references need name, subject and version")
            try:
                ref = self._version(str(r["subject"]), str(r["version"]), deleted=True)
            except RegistryError:
                raise E.invalid_schema(f"reference {r['name']!r}: subject "
                                       f"{r['subject']!r} version {r['version']} not found"
                                       ) from None
            resolved.append((str(r["name"]), self.parse(ref.schema_type, ref.schema,
                                                         ref.references)))
        if schema_type == "AVRO":
            from emulator.schema_registry.avro import AvroSchema

            parsed: Any = AvroSchema(text, [p for _, p in resolved])
        elif schema_type == "JSON":
            from emulator.schema_registry.json_schema import JsonSchema

            parsed = JsonSchema(text, resolved)
        else:
            from emulator.schema_registry.protobuf import ProtobufSchema

            parsed = ProtobufSchema(text, resolved)
        self._parsed[key] = parsed
        if len(self._parsed) > 10_000:
            self._parsed.pop(next(iter(self._parsed)))
        return parsed

    def _request_schema(self, body: Any, normalize: bool) -> tuple[str, str, list[dict], Any]:
        if not isinstance(body, dict):
            raise E.bad_request("the body must be a JSON object with a \"schema\"")
        text = body.get("schema")
        if not isinstance(text, str):
            raise E.invalid_schema("null: the body has no \"schema\" string")
        schema_type = body.get("schemaType") or "AVRO"
        if not isinstance(schema_type, str):
            raise E.invalid_schema(f"type {schema_type!r}")
        schema_type = schema_type.upper()
        refs = body.get("references") or []
        if not isinstance(refs, list) or not all(
                isinstance(r, dict) and isinstance(r.get("name"), str)
                and isinstance(r.get("subject"), str)
                and isinstance(r.get("version"), int) and not isinstance(r["version"], bool)
                for r in refs):
            raise E.invalid_schema("references must be a list of {\"name\": string, "
                                   "\"subject\": string, \"version\": integer}")
        parsed = self.parse(schema_type, text, refs)
        canonical = parsed.normalized() if normalize else parsed.canonical
        return schema_type, canonical, refs, parsed

    # ---- compatibility ----------------------------------------------------------------
    def check(self, subject: str, parsed: Any, level: str, against: list[Version]
              ) -> list[str]:
        """Confluent's messages for every earlier version ``parsed`` breaks under
        ``level`` (empty: compatible)."""
        if level == "NONE" or not against:
            return []
        if not level.endswith("_TRANSITIVE"):
            against = against[-1:]
        base = level.removesuffix("_TRANSITIVE")
        messages: list[str] = []
        for old in reversed(against):
            try:
                old_parsed = self.parse(old.schema_type, old.schema, old.references)
            except RegistryError:
                continue  # an earlier schema we cannot read: nothing to compare
            diffs = differences(parsed, old_parsed, base)
            if diffs:
                messages += [_format_diff(d) for d in diffs]
                messages.append(f"{{oldSchemaVersion: {old.version}}}")
                messages.append(f"{{oldSchema: '{old.schema}'}}")
                messages.append(f"{{compatibility: '{level}'}}")
        return messages

    # ---- operations (the REST API's, named after it) ----------------------------------
    def register(self, subject: str, body: Any, normalize: bool = False) -> dict:
        mode = self.effective_mode(subject)
        if mode.startswith("READONLY"):
            raise E.not_permitted(f"Subject {subject} is in read-only mode")
        schema_type, canonical, refs, parsed = self._request_schema(body, normalize)
        want_id, want_version = body.get("id"), body.get("version")
        if want_id is not None and (not isinstance(want_id, int) or isinstance(want_id, bool)
                                    or want_id < 0):
            raise E.bad_request("id must be a non-negative integer")
        if want_version is not None and (not isinstance(want_version, int) or
                                         isinstance(want_version, bool)):
            raise E.invalid_version(want_version)
        if want_id is not None and want_id >= 0 and mode != "IMPORT":
            existing = self.by_id(want_id)
            if existing is None or existing.schema != canonical:
                raise E.not_permitted(f"Overwrite new schema with id {want_id} is not "
                                      "permitted.")
        live = self.live(subject)
        rk = refs_key(refs)
        def same(v: Version) -> bool:
            return (v.schema_type == schema_type and refs_key(v.references) == rk and (
                v.schema == canonical or (normalize and self._normalized(v) == canonical)))

        for v in live:
            if same(v):
                if want_id is not None and want_id != v.id and mode == "IMPORT":
                    raise RegistryError(422, E.ID_DOES_NOT_MATCH,
                                        f"Schema already registered with id {v.id} instead "
                                        f"of input id {want_id}")
                return {"id": v.id}
        if mode != "IMPORT":
            messages = self.check(subject, parsed, self.level(subject), live)
            if messages:
                raise RegistryError(409, E.INCOMPATIBLE_SCHEMA,
                                    "Schema being registered is incompatible with an earlier "
                                    f"schema for subject \"{subject}\", details: "
                                    f"[{', '.join(messages)}]")
        schema_id = None
        for v in self._all_versions():
            if same(v):
                schema_id = v.id
                break
        if want_id is not None and want_id >= 0:
            other = self.by_id(want_id)
            if other is not None and (other.schema != canonical
                                      or other.schema_type != schema_type):
                raise RegistryError(422, E.ID_DOES_NOT_MATCH,
                                    f"Overwrite new schema with id {want_id} is not permitted.")
            schema_id = want_id
        if schema_id is None:
            schema_id = self.max_id + 1
        everything = self.subjects.get(subject, {})
        version = want_version if want_version is not None and mode == "IMPORT" else (
            max(everything, default=0) + 1)
        if version < 1 or version > MAX_VERSION:
            raise E.invalid_version(version)
        v = Version(subject, version, schema_id, schema_type, canonical, refs)
        self.write([(schema_key(subject, version), v.value())])
        return {"id": schema_id}

    def lookup(self, subject: str, body: Any, normalize: bool = False,
               deleted: bool = False) -> dict:
        if not self.live(subject, deleted):
            raise E.subject_not_found(subject)
        schema_type, canonical, refs, _ = self._request_schema(body, normalize)
        rk = refs_key(refs)
        for v in reversed(self.live(subject, deleted)):
            if (v.schema_type == schema_type and refs_key(v.references) == rk and (
                    v.schema == canonical or (normalize and self._normalized(v) == canonical))):
                return v.view()
        raise E.schema_not_found()

    def _normalized(self, v: Version) -> str | None:
        try:
            return self.parse(v.schema_type, v.schema, v.references).normalized()
        except RegistryError:
            return None

    def schema_by_id(self, schema_id: str, fmt: str | None = None,
                     fetch_max_id: bool = False) -> dict:
        v = self.by_id(_int(schema_id, E.schema_not_found(schema_id)))
        if v is None:
            raise E.schema_not_found(schema_id)
        out: dict[str, Any] = {}
        if v.schema_type != "AVRO":
            out["schemaType"] = v.schema_type
        if v.references:
            out["references"] = v.references
        out["schema"] = self.formatted(v, fmt)
        if fetch_max_id:
            out["maxId"] = self.max_id
        return out

    def formatted(self, v: Version, fmt: str | None) -> str:
        if fmt == "serialized" and v.schema_type == "PROTOBUF":
            return self.parse(v.schema_type, v.schema, v.references).serialized()
        return v.schema

    def subjects_of_id(self, schema_id: str, deleted: bool = False) -> list[str]:
        n = _int(schema_id, E.schema_not_found(schema_id))
        vs = [v for v in self._all_versions() if v.id == n]
        if not vs:
            raise E.schema_not_found(schema_id)
        return sorted({v.subject for v in vs if deleted or not v.deleted})

    def versions_of_id(self, schema_id: str, deleted: bool = False) -> list[dict]:
        n = _int(schema_id, E.schema_not_found(schema_id))
        vs = [v for v in self._all_versions() if v.id == n]
        if not vs:
            raise E.schema_not_found(schema_id)
        return [{"subject": v.subject, "version": v.version}
                for v in sorted(vs, key=lambda v: (v.subject, v.version))
                if deleted or not v.deleted]

    def list_subjects(self, deleted: bool = False, prefix: str = "") -> list[str]:
        return sorted(s for s in self.subjects
                      if s.startswith(prefix) and self.live(s, deleted))

    def list_schemas(self, prefix: str = "", deleted: bool = False,
                     latest_only: bool = False) -> list[dict]:
        out = []
        for s in sorted(self.subjects):
            if not s.startswith(prefix):
                continue
            vs = self.live(s, deleted)
            out += [v.view() for v in (vs[-1:] if latest_only else vs)]
        return out

    def list_versions(self, subject: str, deleted: bool = False) -> list[int]:
        vs = self.live(subject, deleted)
        if not vs:
            raise E.subject_not_found(subject)
        return [v.version for v in vs]

    def get_version(self, subject: str, version: str, deleted: bool = False,
                    fmt: str | None = None) -> dict:
        v = self._version(subject, version, deleted)
        out = v.view()
        out["schema"] = self.formatted(v, fmt)
        return out

    def referenced_by(self, subject: str, version: str) -> list[int]:
        v = self._version(subject, version, deleted=True)
        return sorted({o.id for o in self._all_versions() if not o.deleted and any(
            r.get("subject") == subject and r.get("version") == v.version
            for r in o.references)})

    def _check_writable(self, subject: str) -> None:
        if self.effective_mode(subject).startswith("READONLY"):
            raise E.not_permitted(f"Subject {subject} is in read-only mode")

    def delete_subject(self, subject: str, permanent: bool = False) -> list[int]:
        self._check_writable(subject)
        everything = self.live(subject, deleted=True)
        if not everything:
            raise E.subject_not_found(subject)
        live = [v for v in everything if not v.deleted]
        for v in everything:
            if self.referenced_by(subject, str(v.version)):
                raise E.reference_exists(f"One or more references exist to the schema "
                                         f"{{subject={subject},version={v.version}}}.")
        if permanent:
            if live:
                raise E.subject_not_soft_deleted(subject)
            self.write([(schema_key(subject, v.version), None) for v in everything]
                       + [self._max_id_record()])
            return [v.version for v in everything]
        if not live:
            raise E.subject_soft_deleted(subject)
        records: list[Record] = [(schema_key(subject, v.version),
                                  {**v.value(), "deleted": True}) for v in live]
        records.append(({"keytype": "DELETE_SUBJECT", "subject": subject, "magic": 0},
                        {"subject": subject, "version": live[-1].version}))
        self.write(records)
        return [v.version for v in live]

    def delete_version(self, subject: str, version: str, permanent: bool = False) -> int:
        self._check_writable(subject)
        n = parse_version(version)
        everything = self.live(subject, deleted=True)
        if not everything:
            raise E.subject_not_found(subject)
        if n == -1:
            live = [v for v in everything if not v.deleted]
            if not live:
                raise E.subject_soft_deleted(subject) if not permanent else \
                    E.version_not_found(version)
            target = live[-1]
        else:
            found = [v for v in everything if v.version == n]
            if not found:
                raise E.version_not_found(n)
            target = found[0]
        if self.referenced_by(subject, str(target.version)):
            raise E.reference_exists(f"One or more references exist to the schema "
                                     f"{{subject={subject},version={target.version}}}.")
        if permanent:
            if not target.deleted:
                raise E.version_not_soft_deleted(subject, target.version)
            self.write([(schema_key(subject, target.version), None), self._max_id_record()])
        else:
            if target.deleted:
                raise E.version_soft_deleted(subject, target.version)
            self.write([(schema_key(subject, target.version),
                         {**target.value(), "deleted": True})])
        return target.version

    def _max_id_record(self) -> Record:
        """Ids are never reused: a permanent delete tombstones the SCHEMA records, and
        once the cleaner drops the records under them no reader could tell the largest
        id again, so the largest id goes into a record of its own (a key type
        Confluent's reader skips)."""
        return ({"keytype": "MAX_ID", "magic": 0}, {"maxId": self.max_id})

    def check_compatibility(self, subject: str, version: str | None, body: Any,
                            normalize: bool = False, verbose: bool = False) -> dict:
        _, _, _, parsed = self._request_schema(body, normalize)
        level = self.level(subject)
        if version is None:
            against = self.live(subject)
        else:
            against = [self._version(subject, version)]
            level = level.removesuffix("_TRANSITIVE")
        messages = self.check(subject, parsed, level, against)
        out: dict[str, Any] = {"is_compatible": not messages}
        if verbose:
            out["messages"] = messages
        return out

    # ---- config and mode ----------------------------------------------------------------
    def get_config(self, subject: str | None, default_to_global: bool = False) -> dict:
        if subject is None:
            return {"compatibilityLevel": self.level(None)}
        if subject in self.config:
            return {"compatibilityLevel": self.config[subject]}
        if default_to_global:
            return {"compatibilityLevel": self.level(None)}
        raise E.compatibility_not_configured(subject)

    def set_config(self, subject: str | None, body: Any) -> dict:
        if not isinstance(body, dict):
            raise E.bad_request("the body must be a JSON object")
        level = body.get("compatibility", body.get("compatibilityLevel"))
        if not isinstance(level, str) or level.upper() not in LEVELS:
            raise E.invalid_compatibility(level)
        level = level.upper()
        self.write([({"keytype": "CONFIG", "subject": subject, "magic": 0},
                     {"compatibilityLevel": level})])
        return {"compatibility": level}

    def delete_config(self, subject: str | None) -> dict:
        if subject is not None and subject not in self.config:
            if not self.live(subject, deleted=True):
                raise E.subject_not_found(subject)
        previous = self.level(subject)
        self.write([({"keytype": "CONFIG", "subject": subject, "magic": 0}, None)])
        return {"compatibilityLevel": previous}

    def get_mode(self, subject: str | None, default_to_global: bool = False) -> dict:
        if subject is None:
            return {"mode": self.effective_mode(None)}
        if subject in self.mode:
            return {"mode": self.mode[subject]}
        if default_to_global:
            return {"mode": self.effective_mode(None)}
        raise E.mode_not_configured(subject)

    def set_mode(self, subject: str | None, body: Any, force: bool = False) -> dict:
        if not isinstance(body, dict):
            raise E.bad_request("the body must be a JSON object")
        mode = body.get("mode")
        if not isinstance(mode, str) or mode.upper() not in MODES:
            raise E.invalid_mode(mode)
        mode = mode.upper()
        if mode == "IMPORT" and not force:
            has = self.live(subject, deleted=True) if subject is not None else \
                self.list_subjects(deleted=True)
            if has:
                raise E.not_permitted("Cannot import since found existing subjects")
        self.write([({"keytype": "MODE", "subject": subject, "magic": 0}, {"mode": mode})])
        return {"mode": mode}

    def delete_mode(self, subject: str) -> dict:
        if subject not in self.mode:
            raise E.subject_not_found(subject)
        previous = self.mode[subject]
        self.write([({"keytype": "MODE", "subject": subject, "magic": 0}, None)])
        return {"mode": previous}


def differences(new: Any, old: Any, level: str) -> list[dict]:
    """What stops ``new`` following ``old`` under ``level`` (BACKWARD: new reads old's
    data; FORWARD: old reads new's; FULL: both; NONE: nothing), without _TRANSITIVE."""
    level = level.removesuffix("_TRANSITIVE")
    if level == "NONE":
        return []
    if old.schema_type != new.schema_type:
        return [{"errorType": "SCHEMA_TYPE_CHANGED",
                 "message": "Incompatible because of different schema type"}]
    diffs = []
    if level in ("BACKWARD", "FULL"):
        diffs += new.check(new, old, True)
    if level in ("FORWARD", "FULL"):
        diffs += new.check(old, new, False)
    return diffs


def parse_version(text: str) -> int:
    """A version of the URL: 1..2^31-1, ``latest`` or -1 (both: the latest)."""
    if text == "latest":
        return -1
    try:
        n = int(text)
    except (TypeError, ValueError):
        raise E.invalid_version(text) from None
    if n == -1:
        return -1
    if n < 1 or n > MAX_VERSION:
        raise E.invalid_version(text)
    return n


def _int(text: str, error: RegistryError) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        raise error from None


def _format_diff(d: dict) -> str:
    if "message" in d:
        return str(d["message"])  # Confluent's own words, as they are
    parts = [f"errorType:'{d['errorType']}'", f"description:'{d['description']}'"]
    if "additionalInfo" in d:
        parts.append(f"additionalInfo:'{d['additionalInfo']}'")
    return "{" + ", ".join(parts) + "}"
