"""The records of the ``_schemas`` topic and the entity a version is, as Confluent's
registry writes and serves them.

Record layouts (keys, then values; a tombstone deletes):

    {"keytype":"SCHEMA","subject":S,"version":V,"magic":1}
        {"subject":S,"version":V,"id":N,"schemaType":T,"references":[..],"schema":"..",
         "deleted":false}
    {"keytype":"CONFIG","subject":S|null,"magic":0}   {"compatibilityLevel":"BACKWARD"}
    {"keytype":"MODE","subject":S|null,"magic":0}     {"mode":"READONLY"}
    {"keytype":"DELETE_SUBJECT","subject":S,"magic":0} {"subject":S,"version":V}
    {"keytype":"NOOP","magic":0}                       (none)
    {"keytype":"MAX_ID","magic":0}                     {"maxId":N}   (ours: see
                                                       Registry._max_id_record)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL",
          "FULL_TRANSITIVE")
MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")
TYPES = ("JSON", "PROTOBUF", "AVRO")  # GET /schemas/types, in Confluent's order
DEFAULT_LEVEL = "BACKWARD"
DEFAULT_MODE = "READWRITE"
MAX_VERSION = (1 << 31) - 1

Record = tuple[dict, "dict | None"]


@dataclass
class Version:
    subject: str
    version: int
    id: int
    schema_type: str
    schema: str
    references: list[dict] = field(default_factory=list)
    deleted: bool = False

    def value(self) -> dict:
        out: dict[str, Any] = {"subject": self.subject, "version": self.version,
                               "id": self.id}
        if self.schema_type != "AVRO":
            out["schemaType"] = self.schema_type
        out["references"] = self.references
        out["schema"] = self.schema
        out["deleted"] = self.deleted
        return out

    def view(self) -> dict:
        """GET /subjects/{s}/versions/{v}: no ``schemaType`` for Avro, no empty
        ``references``, as Confluent's Schema entity serializes."""
        out: dict[str, Any] = {"subject": self.subject, "version": self.version,
                               "id": self.id}
        if self.schema_type != "AVRO":
            out["schemaType"] = self.schema_type
        if self.references:
            out["references"] = self.references
        out["schema"] = self.schema
        return out


def schema_key(subject: str, version: int) -> dict:
    return {"keytype": "SCHEMA", "subject": subject, "version": version, "magic": 1}


def refs_key(refs: list[dict]) -> str:
    return json.dumps([[r.get("name"), r.get("subject"), r.get("version")]
                       if isinstance(r, dict) else r for r in refs])
