"""Protobuf schemas: parsing with protoc (grpcio-tools bundles it), the canonical
``.proto`` text, the serialized form, and compatibility by Confluent's rules.

A schema arrives as ``.proto`` text (the Java clients, REST users) or as a base64
FileDescriptorProto (confluent-kafka's Python serializer). Both become one
FileDescriptorProto; the canonical text is rendered from it, so one schema gets one id
however it was sent, and ``?format=serialized`` answers with the descriptor again.

Compatibility compares the descriptors as Confluent's registry compares its parsed
files: messages by full name (a package change is one PACKAGE_CHANGED, the messages
keep their local names), fields by number. A message gone is MESSAGE_REMOVED; a field
whose kind changed between scalar, message and map is FIELD_KIND_CHANGED; a scalar
outside its wire group ({int32, int64, uint32, uint64, bool, enum}, {sint32, sint64},
{string, bytes}, {fixed32, sfixed32}, {fixed64, sfixed64}, float, double) is
FIELD_SCALAR_KIND_CHANGED; a message field of another message is
FIELD_NAMED_TYPE_CHANGED; maps compare their key and value types so. A proto2 required
field added or removed, a field removed from a oneof that stays (ONEOF_FIELD_REMOVED),
several existing fields moved into one oneof (MULTIPLE_FIELDS_MOVED_TO_ONEOF) or one
moved into a oneof holding fields of an earlier oneof (FIELD_MOVED_TO_EXISTING_ONEOF)
break too. Adding, removing and renaming fields, enum changes, whole oneofs removed
and labels of fields kept in place are not compared, as on Confluent.
"""

from __future__ import annotations

import base64
import binascii
import os
import tempfile
from typing import Any

from emulator.schema_registry.errors import invalid_schema

_TYPE_NAMES = {1: "double", 2: "float", 3: "int64", 4: "uint64", 5: "int32", 6: "fixed64",
               7: "fixed32", 8: "bool", 9: "string", 10: "group", 11: "message", 12: "bytes",
               13: "uint32", 14: "enum", 15: "sfixed32", 16: "sfixed64", 17: "sint32",
               18: "sint64"}
_LABELS = {1: "optional", 2: "required", 3: "repeated"}


def _protoc(text: str, references: list[tuple[str, str]]) -> Any:
    """The FileDescriptorProto of ``.proto`` text, its imports given as (name, text)."""
    import grpc_tools  # type: ignore[import-untyped]
    import grpc_tools._protoc_compiler as compiler  # type: ignore[import-untyped]
    from google.protobuf import descriptor_pb2  # type: ignore[import-untyped]
    from grpc_tools import protoc  # type: ignore[import-untyped]

    well_known = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    with tempfile.TemporaryDirectory(prefix="schema-registry-") as tmp:
        for name, ref_text in references:
            path = os.path.join(tmp, name)
            if os.path.commonpath([tmp, os.path.abspath(path)]) != tmp:
                raise invalid_schema(f"reference name {name!r} leaves the schema's directory")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(ref_text)
        main = os.path.join(tmp, "default.proto")
        with open(main, "w", encoding="utf-8") as f:
            f.write(text)
        includes = [tmp.encode(), well_known.encode()]
        try:
            compiler.get_protos(b"default.proto", includes)  # errors as text, no stderr
        except Exception as e:  # noqa: BLE001 - ProtocErrors and friends
            raise invalid_schema(f"{str(e).replace(tmp + os.sep, '')}") from None
        out = os.path.join(tmp, "out.pb")
        code = protoc.main(["protoc", f"-I{tmp}", f"-I{well_known}",
                            f"--descriptor_set_out={out}", "default.proto"])
        if code != 0:
            raise invalid_schema("protoc could not compile the schema")
        fds = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as f:
            fds.ParseFromString(f.read())
    return fds.file[-1]


def _from_base64(text: str) -> Any | None:
    from google.protobuf import descriptor_pb2  # type: ignore[import-untyped]
    from google.protobuf.message import DecodeError  # type: ignore[import-untyped]

    try:
        raw = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        return None
    fdp = descriptor_pb2.FileDescriptorProto()
    try:
        fdp.ParseFromString(raw)
    except DecodeError:
        return None
    return fdp if fdp.message_type or fdp.enum_type or fdp.name else None


class ProtobufSchema:
    schema_type = "PROTOBUF"

    def __init__(self, text: str, references: list[tuple[str, ProtobufSchema]] | None = None
                 ) -> None:
        self.references = references or []
        refs = _transitive(self.references)
        fdp = _from_base64(text) if not _looks_like_proto(text) else None
        if fdp is None:
            fdp = _protoc(text, refs)
            fdp.name = "default"
        else:
            # Check it the way a text schema is checked: rendered, then compiled.
            _protoc(render(fdp), refs)
        self.descriptor = fdp
        self.canonical = render(fdp)

    def normalized(self) -> str:
        return self.canonical

    def serialized(self) -> str:
        return base64.b64encode(self.descriptor.SerializeToString()).decode("ascii")

    def check(self, reader: ProtobufSchema, writer: ProtobufSchema, new_is_reader: bool
              ) -> list[dict]:
        # Confluent diffs the schema the data was written with against the reader's:
        # BACKWARD (old writes, new reads) and FORWARD (the other way) see the same
        # rules from opposite sides.
        return _compare(writer.descriptor, reader.descriptor)


def _transitive(refs: list[tuple[str, ProtobufSchema]]) -> list[tuple[str, str]]:
    """Every import's text by its file name, the imports of imports too."""
    out: dict[str, str] = {}

    def add(name: str, ref: ProtobufSchema) -> None:
        for inner_name, inner in ref.references:
            add(inner_name, inner)
        out.setdefault(name, ref.canonical)

    for name, ref in refs:
        add(name, ref)
    return list(out.items())


def _looks_like_proto(text: str) -> bool:
    return any(w in text for w in ("message ", "syntax", "enum ", "package ", ";"))


# ---- rendering --------------------------------------------------------------------------
def _type_of(f: Any, package: str) -> str:
    if f.type in (11, 14, 10):
        name = f.type_name
        return name[1:] if name.startswith(".") else name
    return _TYPE_NAMES[f.type]


def _render_field(f: Any, nested: dict[str, Any], package: str, proto3: bool,
                  indent: str) -> str:
    entry = nested.get(f.type_name) if f.type == 11 else None
    if entry is not None and entry.options.map_entry:
        k, v = entry.field[0], entry.field[1]
        return (f"{indent}map<{_type_of(k, package)}, {_type_of(v, package)}> {f.name} = "
                f"{f.number};")
    label = _LABELS.get(f.label, "optional")
    if proto3 and label == "optional" and not f.proto3_optional:
        label = ""
    if f.HasField("oneof_index") and not f.proto3_optional:
        label = ""
    opts = []
    if f.HasField("default_value"):
        dv = f.default_value
        opts.append(f"default = {json_str(dv) if f.type in (9, 12) else dv}")
    if f.options.HasField("packed"):
        opts.append(f"packed = {'true' if f.options.packed else 'false'}")
    if f.options.deprecated:
        opts.append("deprecated = true")
    if f.json_name and f.json_name != _camel(f.name):
        opts.append(f"json_name = {json_str(f.json_name)}")
    tail = f" [{', '.join(opts)}]" if opts else ""
    return f"{indent}{label + ' ' if label else ''}{_type_of(f, package)} {f.name} = " \
           f"{f.number}{tail};"


def _camel(name: str) -> str:
    parts = name.split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def json_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _render_enum(e: Any, indent: str) -> list[str]:
    lines = [f"{indent}enum {e.name} {{"]
    if e.options.allow_alias:
        lines.append(f"{indent}  option allow_alias = true;")
    lines += [f"{indent}  {v.name} = {v.number};" for v in e.value]
    for r in e.reserved_range:
        lines.append(f"{indent}  reserved {_range(r.start, r.end, inclusive=True)};")
    if e.reserved_name:
        lines.append(f"{indent}  reserved {', '.join(json_str(n) for n in e.reserved_name)};")
    return [*lines, f"{indent}}}"]


def _range(start: int, end: int, inclusive: bool = False) -> str:
    last = end if inclusive else end - 1
    if last >= 536870911:
        return f"{start} to max"
    return str(start) if last == start else f"{start} to {last}"


def _render_message(m: Any, scope: str, package: str, proto3: bool, indent: str) -> list[str]:
    full = f"{scope}.{m.name}"
    nested = {f"{full}.{n.name}": n for n in m.nested_type}
    lines: list[Any] = [f"{indent}message {m.name} {{"]
    inner = indent + "  "
    oneofs: dict[int, list[Any]] = {}
    for f in m.field:
        if f.HasField("oneof_index") and not f.proto3_optional:
            if f.oneof_index not in oneofs:
                oneofs[f.oneof_index] = []
                lines.append(("ONEOF", f.oneof_index))  # placeholder, kept in field order
            oneofs[f.oneof_index].append(f)
        else:
            lines.append(_render_field(f, nested, package, proto3, inner))
    out: list[str] = []
    for line in lines:
        if isinstance(line, tuple):
            i = line[1]
            out.append(f"{inner}oneof {m.oneof_decl[i].name} {{")
            out += [_render_field(f, nested, package, proto3, inner + "  ") for f in oneofs[i]]
            out.append(f"{inner}}}")
        else:
            out.append(line)
    for r in m.reserved_range:
        out.append(f"{inner}reserved {_range(r.start, r.end)};")
    if m.reserved_name:
        out.append(f"{inner}reserved {', '.join(json_str(n) for n in m.reserved_name)};")
    for n in m.nested_type:
        if not n.options.map_entry:
            out += _render_message(n, full, package, proto3, inner)
    for e in m.enum_type:
        out += _render_enum(e, inner)
    return [*out, f"{indent}}}"]


def render(fdp: Any) -> str:
    """The ``.proto`` text of a FileDescriptorProto (what GET returns, what is stored)."""
    syntax = fdp.syntax or "proto2"
    proto3 = syntax == "proto3"
    lines = [f'syntax = "{syntax}";']
    if fdp.package:
        lines.append(f"package {fdp.package};")
    lines.append("")
    for i, dep in enumerate(fdp.dependency):
        public = " public" if i in fdp.public_dependency else ""
        lines.append(f"import{public} {json_str(dep)};")
    opts = fdp.options
    for name in ("java_package", "java_outer_classname", "go_package", "csharp_namespace",
                 "objc_class_prefix", "php_namespace", "ruby_package", "swift_prefix"):
        if opts.HasField(name):
            lines.append(f"option {name} = {json_str(getattr(opts, name))};")
    if opts.HasField("java_multiple_files"):
        lines.append(f"option java_multiple_files = "
                     f"{'true' if opts.java_multiple_files else 'false'};")
    if len(lines) > 2 and lines[-1] != "":
        lines.append("")
    scope = f".{fdp.package}" if fdp.package else ""
    for m in fdp.message_type:
        lines += _render_message(m, scope, fdp.package, proto3, "")
    for e in fdp.enum_type:
        lines += _render_enum(e, "")
    for s in fdp.service:
        lines.append(f"service {s.name} {{")
        for rpc in s.method:
            cs = "stream " if rpc.client_streaming else ""
            ss = "stream " if rpc.server_streaming else ""
            lines.append(f"  rpc {rpc.name}({cs}{rpc.input_type.lstrip('.')}) returns "
                         f"({ss}{rpc.output_type.lstrip('.')});")
        lines.append("}")
    return "\n".join(lines) + "\n"


# ---- compatibility ------------------------------------------------------------------------
def _messages(fdp: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}

    def walk(m: Any, scope: str) -> None:
        full = f"{scope}.{m.name}" if scope else m.name
        out[full] = m
        for n in m.nested_type:
            walk(n, full)

    for m in fdp.message_type:
        walk(m, fdp.package)
    return out


# The scalar groups whose wire encodings read one another; an enum is a varint, so
# it is a GENERAL_NUMBER too.
SCALAR_GROUPS = {"int32": "GENERAL_NUMBER", "int64": "GENERAL_NUMBER",
                 "uint32": "GENERAL_NUMBER", "uint64": "GENERAL_NUMBER",
                 "bool": "GENERAL_NUMBER", "enum": "GENERAL_NUMBER",
                 "sint32": "SIGNED_NUMBER", "sint64": "SIGNED_NUMBER",
                 "string": "STRING_OR_BYTES", "bytes": "STRING_OR_BYTES",
                 "fixed32": "FIXED32", "sfixed32": "FIXED32", "fixed64": "FIXED64",
                 "sfixed64": "FIXED64", "float": "FLOAT", "double": "DOUBLE"}


class _Side:
    """One schema's messages by full name, and its package (names compare local)."""

    def __init__(self, fdp: Any) -> None:
        self.package = fdp.package
        self.messages = _messages(fdp)

    def local(self, type_name: str) -> str:
        name = type_name.lstrip(".")
        prefix = f"{self.package}." if self.package else ""
        return name[len(prefix):] if prefix and name.startswith(prefix) else name

    def kind(self, f: Any) -> tuple[str, Any]:
        if f.type in (11, 10):
            entry = self.messages.get(f.type_name.lstrip("."))
            if entry is not None and entry.options.map_entry:
                return "map", entry
            return "message", self.local(f.type_name)
        return "scalar", SCALAR_GROUPS[_TYPE_NAMES[f.type]]


def _diff(kind: str, path: str) -> dict:
    return {"errorType": kind, "description": f"{kind} at path '{path}'", "path": path}


def _compare_types(old: _Side, f: Any, new: _Side, g: Any, path: str,
                   out: list[dict]) -> None:
    """A field's type, as Confluent compares it: the kind (scalar, message, map), then
    the scalar group, the message's local name, or a map's key and value types."""
    (ok, od), (nk, nd) = old.kind(f), new.kind(g)
    if ok != nk:
        out.append(_diff("FIELD_KIND_CHANGED", path))
    elif ok == "scalar" and od != nd:
        out.append(_diff("FIELD_SCALAR_KIND_CHANGED", path))
    elif ok == "message" and od != nd:
        out.append(_diff("FIELD_NAMED_TYPE_CHANGED", path))
    elif ok == "map":
        for a, b in zip(od.field, nd.field, strict=False):
            _compare_types(old, a, new, b, path, out)


def _real_oneof(f: Any) -> bool:
    return f.HasField("oneof_index") and not f.proto3_optional


def _compare(old_fdp: Any, new_fdp: Any) -> list[dict]:
    """Differences from the schema data was written with (``old_fdp``) to the reader's."""
    out: list[dict] = []
    if old_fdp.package != new_fdp.package:
        out.append(_diff("PACKAGE_CHANGED", "#/"))
    old, new = _Side(old_fdp), _Side(new_fdp)
    for name, m in old.messages.items():
        if m.options.map_entry:
            continue
        path = f"#/{name}"
        n = new.messages.get(name) or new.messages.get(
            _renamed(name, old.package, new.package))
        if n is None:
            out.append(_diff("MESSAGE_REMOVED", path))
            continue
        of, nf = {f.number: f for f in m.field}, {f.number: f for f in n.field}
        # Fields moving into a oneof: real oneofs only (not proto3 optional's one).
        for i, decl in enumerate(n.oneof_decl):
            members = [g for g in n.field if _real_oneof(g) and g.oneof_index == i]
            moved = [g for g in members if g.number in of and not _real_oneof(of[g.number])]
            existing = [g for g in members if g.number in of and _real_oneof(of[g.number])]
            if len(moved) > 1:
                out.append(_diff("MULTIPLE_FIELDS_MOVED_TO_ONEOF", f"{path}/{decl.name}"))
            elif len(moved) == 1 and existing:
                out.append(_diff("FIELD_MOVED_TO_EXISTING_ONEOF", f"{path}/{decl.name}"))
        new_oneofs = {d.name: i for i, d in enumerate(n.oneof_decl)}
        for num, f in of.items():
            fpath = f"{path}/{num}"
            g = nf.get(num)
            if g is None:
                if f.label == 2:
                    out.append(_diff("REQUIRED_FIELD_REMOVED", fpath))
                elif _real_oneof(f) and m.oneof_decl[f.oneof_index].name in new_oneofs:
                    out.append(_diff("ONEOF_FIELD_REMOVED", fpath))
                continue
            _compare_types(old, f, new, g, fpath, out)
        for num, g in nf.items():
            if num not in of and g.label == 2:
                out.append(_diff("REQUIRED_FIELD_ADDED", f"{path}/{num}"))
    return out


def _renamed(name: str, old_package: str, new_package: str) -> str:
    """A message's full name under the new package (a package change keeps messages)."""
    if old_package and name.startswith(old_package + "."):
        local = name[len(old_package) + 1:]
        return f"{new_package}.{local}" if new_package else local
    return name
