"""Compile message schemas into straight-line encode/decode functions.

For every (message, version) we generate Python source with one function per
nested struct, merge runs of adjacent fixed-width fields into one precompiled
``struct.Struct``, and ``exec`` it once. The generated code does no per-field
interpretation at run time, which is what makes it as fast as hand-written struct
code (docs/architecture.md, "Decisions that carry the performance").
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from typing import Any

from wire.schema import BYTES, RECORDS, STRING, Array, Field, Message, Struct, Type

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class EncodedList(list[Any]):
    """An array of structs whose encodings are kept, one per message version and field.

    For a part that many responses share and that changes rarely (Metadata's
    partitions of a topic: 100,000 of them in a whole-cluster answer), so that each is
    encoded once per change rather than once per response. Read only once built: the
    kept bytes would not see a change to it or to its items; build a new one instead.
    """

    __slots__ = ("encoded",)

    def __init__(self, items: Any = ()) -> None:
        super().__init__(items)
        self.encoded: dict[object, bytes] = {}


class Row(tuple[Any, ...]):
    """A struct given as the values of its leading fixed-width fields, in schema order
    (the run of INT/BOOL fields it starts with); every other field is at its default.

    For the items a response carries by the hundred and whose other fields are
    nearly always defaults (a Produce answer's appended partition: index, error code,
    base offset, log append time, log start offset): the encoder packs the values at
    once and appends the defaults' encoding, computed once per message version,
    instead of looking up every field in a dict. A struct that does not start with
    fixed-width fields takes only dicts."""

    __slots__ = ()


class DecodeError(ValueError):
    """The bytes do not form a valid message of the requested version."""


def read_uvarint(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """Read an unsigned LEB128 varint; returns (value, new position)."""
    b = buf[pos]
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    shift = 7
    pos += 1
    while True:
        b = buf[pos]
        result |= (b & 0x7F) << shift
        pos += 1
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:  # varlong: at most 10 bytes
            raise DecodeError("varint too long")


def write_uvarint(n: int) -> bytes:
    """Encode an unsigned LEB128 varint."""
    if n < 0x80:
        return bytes((n,))
    if n < 0x4000:  # two bytes: a record batch's length in every Fetch answer
        return bytes(((n & 0x7F) | 0x80, n >> 7))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def read_varint(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """Read a zigzag-encoded signed varint (record fields)."""
    n, pos = read_uvarint(buf, pos)
    return (n >> 1) ^ -(n & 1), pos


def write_varint(n: int) -> bytes:
    """Encode a zigzag signed varint."""
    return write_uvarint((n << 1) ^ (n >> 63))


class _Gen:
    """Source emitter for one (message, version)."""

    def __init__(self, version: int, flexible: bool) -> None:
        self.v = version
        self.flex = flexible
        self.lines: list[str] = []
        self.consts: dict[str, Any] = {}
        self.n = 0
        # (encoder, name of its Row tail constant, name of its leading fields' Struct)
        self.tails: list[tuple[str, str, str]] = []

    def name(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n}"

    def const(self, value: Any, prefix: str = "_K") -> str:
        nm = self.name(prefix)
        self.consts[nm] = value
        return nm

    # ---- decode -------------------------------------------------------------
    def decode_struct(self, st: Struct) -> str:
        fn = self.name("_dec")
        body: list[str] = []
        absent = {f.name: f.default for f in st.fields if not f.present(self.v) or f.is_tagged(self.v)}
        if absent:
            items = ", ".join(f"{k!r}: {self._literal(v)}" for k, v in absent.items())
            body.append(f"    d = {{{items}}}")
        else:
            body.append("    d = {}")
        run: list[Field] = []

        def flush() -> None:
            if not run:
                return
            fmt = ">" + "".join(f.type.fmt for f in run)
            s = self.const(struct.Struct(fmt), "_S")
            names = ", ".join(f"_v{i}" for i in range(len(run)))
            body.append(f"    {names}, = {s}.unpack_from(buf, pos)")
            body.append(f"    pos += {struct.calcsize(fmt)}")
            for i, f in enumerate(run):
                body.append(f"    d[{f.name!r}] = _v{i}")
            run.clear()

        for f in st.fields:
            if not f.present(self.v) or f.is_tagged(self.v):
                continue
            if isinstance(f.type, Type) and f.type.fmt:
                run.append(f)
                continue
            flush()
            body.extend(self.decode_value(f, "    ", f"d[{f.name!r}]"))
        flush()
        tagged = [f for f in st.fields if f.present(self.v) and f.is_tagged(self.v)]
        if self.flex:
            body.append("    ntag, pos = _uv(buf, pos)")
            body.append("    for _ in range(ntag):")
            body.append("        tag, pos = _uv(buf, pos)")
            body.append("        size, pos = _uv(buf, pos)")
            body.append("        end = pos + size")
            for f in tagged:
                body.append(f"        if tag == {f.tag}:")
                body.extend(self.decode_value(f, "            ", f"d[{f.name!r}]"))
            body.append("        if end > len(buf): raise _DE('tagged field overruns the frame')")
            body.append("        pos = end")
        body.append("    return d, pos")
        self.lines.append(f"def {fn}(buf, pos):")
        self.lines.extend(body)
        return fn

    @staticmethod
    def _literal(v: Any) -> str:
        return repr(v)

    def _read_len(self, ind: str, var: str, wide: bool) -> list[str]:
        if self.flex:
            return [f"{ind}{var}, pos = _uv(buf, pos)", f"{ind}{var} -= 1"]
        s = "_I32" if wide else "_I16"
        size = 4 if wide else 2
        return [f"{ind}{var}, = {s}.unpack_from(buf, pos)", f"{ind}pos += {size}"]

    def decode_value(self, f: Field, ind: str, target: str) -> list[str]:
        t = f.type
        out: list[str] = []
        nullable = f.is_nullable(self.v)
        if isinstance(t, Type) and t.fmt:
            s = self.const(struct.Struct(">" + t.fmt), "_S")
            return [f"{ind}{target}, = {s}.unpack_from(buf, pos)", f"{ind}pos += {s}.size"]
        if t is STRING:
            out += self._read_len(ind, "n", wide=False)
            out.append(f"{ind}if n < 0:")
            if nullable:
                out.append(f"{ind}    {target} = None")
            else:
                out.append(f"{ind}    raise _DE('non-nullable field {f.name} was serialized as null')")
            out.append(f"{ind}else:")
            out.append(f"{ind}    if pos + n > len(buf): raise _DE('string {f.name} overruns the frame')")
            out.append(f"{ind}    {target} = str(buf[pos:pos + n], 'utf-8')")
            out.append(f"{ind}    pos += n")
            return out
        if t is BYTES or t is RECORDS:
            out += self._read_len(ind, "n", wide=True)
            out.append(f"{ind}if n < 0:")
            if nullable or t is RECORDS:  # RECORDS: Kafka reads a null record set as empty
                out.append(f"{ind}    {target} = None")
            else:
                out.append(f"{ind}    raise _DE('non-nullable field {f.name} was serialized as null')")
            out.append(f"{ind}else:")
            out.append(f"{ind}    if pos + n > len(buf): raise _DE('bytes field {f.name} overruns the frame')")
            out.append(f"{ind}    {target} = buf[pos:pos + n]")
            out.append(f"{ind}    pos += n")
            return out
        if isinstance(t, Struct):
            fn = self.decode_struct(t)
            if nullable:  # a nullable struct is prefixed by int8: -1 null, 1 present
                return [f"{ind}if buf[pos] == 0xFF:", f"{ind}    pos += 1",
                        f"{ind}    {target} = None", f"{ind}else:",
                        f"{ind}    {target}, pos = {fn}(buf, pos + 1)"]
            return [f"{ind}{target}, pos = {fn}(buf, pos)"]
        if isinstance(t, Array):
            cnt = self.name("c")
            out += self._read_len(ind, cnt, wide=True)
            out.append(f"{ind}if {cnt} < 0:")
            if nullable:
                out.append(f"{ind}    {target} = None")
            else:  # Kafka's generated readers refuse it; None would reach the handler
                out.append(f"{ind}    raise _DE('non-nullable field {f.name} was serialized as null')")
            out.append(f"{ind}else:")
            out.append(f"{ind}    if {cnt} > len(buf): raise _DE('array {f.name} longer than the frame')")
            item = t.item
            if isinstance(item, Type) and item.fmt:
                out.append(f"{ind}    _fmt = '>%d{item.fmt}' % {cnt}")
                out.append(f"{ind}    {target} = list(_struct.unpack_from(_fmt, buf, pos))")
                out.append(f"{ind}    pos += _struct.calcsize(_fmt)")
                return out
            if isinstance(item, Struct):
                fn = self.decode_struct(item)
                lst = self.name("l")
                out.append(f"{ind}    {lst} = []")
                out.append(f"{ind}    for _ in range({cnt}):")
                out.append(f"{ind}        _x, pos = {fn}(buf, pos)")
                out.append(f"{ind}        {lst}.append(_x)")
                out.append(f"{ind}    {target} = {lst}")
                return out
            lst = self.name("l")
            sub = Field("_item", item)
            out.append(f"{ind}    {lst} = []")
            out.append(f"{ind}    for _ in range({cnt}):")
            out.extend(self.decode_value(sub, ind + "        ", "_x"))
            out.append(f"{ind}        {lst}.append(_x)")
            out.append(f"{ind}    {target} = {lst}")
            return out
        raise TypeError(f"unknown type {t!r}")

    # ---- encode -------------------------------------------------------------
    def encode_struct(self, st: Struct) -> str:
        fn = self.name("_enc")
        body: list[str] = ["    g = d.get"]
        if strict_fields():
            known = self.const(frozenset(f.name for f in st.fields), "_KN")
            body += ["    if d.__class__ is not _ROW:",
                     "        for _k in d:",
                     f"            if _k not in {known}:",
                     f"                _unknown_field(_k, {known})"]
        run: list[Field] = []
        lead: list[Field] = []  # the leading fixed-width fields (a Row's values)
        for f in st.fields:
            if not f.present(self.v) or f.is_tagged(self.v):
                continue
            if not (isinstance(f.type, Type) and f.type.fmt):
                break
            lead.append(f)
        if lead:
            # A Row: the leading fields packed, then the other fields' defaults, whose
            # encoding compile_message fills in (``_TAIL``) once the functions exist.
            s = self.const(struct.Struct(">" + "".join(f.type.fmt for f in lead)), "_S")
            tail = self.name("_TAIL")
            self.tails.append((fn, tail, s))
            body[:0] = ["    if d.__class__ is _ROW:",
                        f"        out.append({s}.pack(*d))",
                        f"        out.append({tail})",
                        "        return"]

        def flush() -> None:
            if not run:
                return
            fmt = ">" + "".join(f.type.fmt for f in run)
            s = self.const(struct.Struct(fmt), "_S")
            args = ", ".join(f"g({f.name!r}, {self._literal(f.default)})" for f in run)
            body.append(f"    out.append({s}.pack({args}))")
            run.clear()

        for f in st.fields:
            if not f.present(self.v) or f.is_tagged(self.v):
                continue
            if isinstance(f.type, Type) and f.type.fmt:
                run.append(f)
                continue
            flush()
            body.append(f"    x = g({f.name!r}, {self._literal(f.default)})")
            body.extend(self.encode_value(f, "    ", "x"))
        flush()
        if self.flex:
            tagged = [f for f in st.fields if f.present(self.v) and f.is_tagged(self.v)]
            if not tagged:
                body.append("    out.append(b'\\x00')")
            else:
                body.append("    tags = []")
                for f in tagged:
                    if isinstance(f.type, Struct) and f.default is not None \
                            and isinstance(f.default, dict) \
                            and _struct_is_default(f.default, f.type):
                        # Kafka leaves out a tagged struct equal to a new (all-default)
                        # one; absent or empty is that without a call (the common case:
                        # every partition of a Fetch or Produce answer has three or one)
                        st_const = self.const(f.type, "_ST")
                        body.append(f"    x = g({f.name!r}, _MISSING)")
                        body.append(f"    if x is not _MISSING and (x is None or (x and not "
                                    f"_struct_is_default(x, {st_const}))):")
                    elif isinstance(f.type, Struct) and f.default is not None:
                        body.append(f"    x = g({f.name!r}, {self._literal(f.default)})")
                        st_const = self.const(f.type, "_ST")
                        body.append(f"    if x is None or not _struct_is_default(x, {st_const}):")
                    else:
                        body.append(f"    x = g({f.name!r}, {self._literal(f.default)})")
                        body.append(f"    if x != {self._literal(f.default)}:")
                    body.append("        sub = []")
                    body.extend(self.encode_value(f, "        ", "x", out="sub"))
                    body.append("        data = b''.join(sub)")
                    body.append(f"        tags.append(_uvw({f.tag}) + _uvw(len(data)) + data)")
                body.append("    if tags:")
                body.append("        out.append(_uvw(len(tags)))")
                body.append("        out.extend(tags)")
                body.append("    else:")
                body.append("        out.append(b'\\x00')")
        self.lines.append(f"def {fn}(d, out):")
        self.lines.extend(body)
        return fn

    def _write_len(self, expr: str, wide: bool) -> str:
        if self.flex:
            return f"_uvw({expr} + 1)"
        return f"{'_I32' if wide else '_I16'}.pack({expr})"

    def _write_null(self, wide: bool) -> str:
        if self.flex:
            return "b'\\x00'"
        return "b'\\xff\\xff\\xff\\xff'" if wide else "b'\\xff\\xff'"

    def encode_value(self, f: Field, ind: str, var: str, out: str = "out") -> list[str]:
        t = f.type
        lines: list[str] = []
        if isinstance(t, Type) and t.fmt:
            s = self.const(struct.Struct(">" + t.fmt), "_S")
            return [f"{ind}{out}.append({s}.pack({var}))"]
        if t is STRING:
            lines.append(f"{ind}if {var} is None:")
            lines.append(f"{ind}    {out}.append({self._write_null(False)})")
            lines.append(f"{ind}else:")
            lines.append(f"{ind}    _b = {var}.encode()")
            lines.append(f"{ind}    {out}.append({self._write_len('len(_b)', False)})")
            lines.append(f"{ind}    {out}.append(_b)")
            return lines
        if t is BYTES or t is RECORDS:
            lines.append(f"{ind}if {var} is None:")
            lines.append(f"{ind}    {out}.append({self._write_null(True)})")
            lines.append(f"{ind}else:")
            lines.append(f"{ind}    {out}.append({self._write_len('len(' + var + ')', True)})")
            lines.append(f"{ind}    {out}.append({var})")
            return lines
        if isinstance(t, Struct):
            fn = self.encode_struct(t)
            if f.is_nullable(self.v):
                return [f"{ind}if {var} is None:", f"{ind}    {out}.append(b'\\xff')",
                        f"{ind}else:", f"{ind}    {out}.append(b'\\x01')",
                        f"{ind}    {fn}({var}, {out})"]
            return [f"{ind}{fn}({var}, {out})"]
        if isinstance(t, Array):
            lines.append(f"{ind}if {var} is None:")
            lines.append(f"{ind}    {out}.append({self._write_null(True)})")
            lines.append(f"{ind}else:")
            lines.append(f"{ind}    {out}.append({self._write_len('len(' + var + ')', True)})")
            item = t.item
            if isinstance(item, Type) and item.fmt:
                lines.append(f"{ind}    {out}.append(_struct.pack('>%d{item.fmt}' % len({var}), *{var}))")
                return lines
            if isinstance(item, Struct):
                fn = self.encode_struct(item)
                # An EncodedList keeps its encoding at this site (one key per message
                # version and field): written once, appended as is afterwards.
                key = self.const(object(), "_EK")
                lines[-2:] = [
                    f"{ind}elif {var}.__class__ is _EL:",
                    f"{ind}    _e = {var}.encoded.get({key})",
                    f"{ind}    if _e is None:",
                    f"{ind}        _sub = [{self._write_len('len(' + var + ')', True)}]",
                    f"{ind}        for _y in {var}:",
                    f"{ind}            {fn}(_y, _sub)",
                    f"{ind}        _e = {var}.encoded[{key}] = b''.join(_sub)",
                    f"{ind}    {out}.append(_e)",
                    f"{ind}else:",
                    f"{ind}    {out}.append({self._write_len('len(' + var + ')', True)})",
                    f"{ind}    for _y in {var}:",
                    f"{ind}        {fn}(_y, {out})",
                ]
                return lines
            lines.append(f"{ind}    for _y in {var}:")
            lines.extend(self.encode_value(Field("_item", item), ind + "        ", "_y", out))
            return lines
        raise TypeError(f"unknown type {t!r}")


def _unknown_field(key: object, known: frozenset[str]) -> None:
    raise TypeError(f"no field {key!r} in any version of this struct (its fields: "
                    f"{', '.join(sorted(known))})")


STRICT_FIELDS_ENV = "KAFKA_WIRE_STRICT_FIELDS"


def strict_fields() -> bool:
    """KAFKA_WIRE_STRICT_FIELDS=1: the encoders compiled from now on refuse a dict key
    that names no field of its struct in any version (TypeError). An encoder reads the
    fields it knows, each with its default, so a misspelt key would otherwise go out as
    that field's default, unseen by any test. The test suite sets it (conftest.py); it
    is off by default, as it costs a loop over the keys of every struct encoded."""
    return os.environ.get(STRICT_FIELDS_ENV) == "1"

_NAMESPACE = {
    "_unknown_field": _unknown_field,
    "_struct": struct,
    "_I16": _I16,
    "_I32": _I32,
    "_uv": read_uvarint,
    "_uvw": write_uvarint,
    "_DE": DecodeError,
    "_EL": EncodedList,
    "_ROW": Row,
    "_MISSING": object(),  # a field the dict leaves out (see encode_struct's tagged fields)
}

Decoder = Callable[[bytes, int], tuple[dict[str, Any], int]]
Encoder = Callable[[dict[str, Any], list[bytes]], None]


def _struct_is_default(x: dict[str, Any], st: Struct) -> bool:
    """True when every field of ``x`` is at its default (absent ones count as default)."""
    if not x:
        return True  # nothing given (a tagged struct left out: the common case)
    for f in st.fields:
        v = x.get(f.name, f.default)
        if isinstance(f.type, Struct) and isinstance(v, dict):
            if not _struct_is_default(v, f.type):
                return False
        elif v != f.default:
            return False
    return True


def compile_message(msg: Message, version: int) -> tuple[Decoder, Encoder, str]:
    """Generate (decode, encode, source) for one message version."""
    dec, enc, src = _compile(msg, version, decode=True, encode=True)
    assert dec is not None and enc is not None
    return dec, enc, src


def _compile(msg: Message, version: int, *, decode: bool,
             encode: bool) -> tuple[Decoder | None, Encoder | None, str]:
    """The decoder, the encoder or both of one message version (a server only decodes
    requests and only encodes responses: compiling the other half too would double the
    first request's cost of each API version, which a client meets when it connects)."""
    gen = _Gen(version, msg.is_flexible(version))
    dec = gen.decode_struct(msg.struct) if decode else None
    enc = gen.encode_struct(msg.struct) if encode else None
    src = "\n".join(gen.lines) + "\n"
    ns: dict[str, Any] = dict(_NAMESPACE, _struct_is_default=_struct_is_default)
    ns.update(gen.consts)
    for _fn, tail, _s in gen.tails:
        ns[tail] = b""
    exec(compile(src, f"<wire:{msg.name}v{version}>", "exec"), ns)  # noqa: S102
    # A Row's tail: the encoding of an all-default struct past its leading fields (the
    # inner structs' tails are filled first: encoders are generated inner first).
    for fn, tail, s in gen.tails:
        whole: list[bytes] = []
        ns[fn]({}, whole)
        ns[tail] = b"".join(whole)[ns[s].size:]
    return (ns[dec] if dec else None), (ns[enc] if enc else None), src


class CompiledMessage:
    """Lazily compiled codec for every version of one message: each version's decoder
    and encoder are compiled apart, when first used."""

    def __init__(self, msg: Message | None = None, *,
                 load: Callable[[], Message] | None = None) -> None:
        """``msg``, or ``load`` to give it at its first use (wire.messages declares each
        module's messages when a key of it is first used)."""
        if msg is None and load is None:
            raise TypeError("CompiledMessage needs msg or load")
        self._msg = msg
        self._load = load
        self._decoders: dict[int, Decoder] = {}
        self._encoders: dict[int, Encoder] = {}

    @property
    def msg(self) -> Message:
        m = self._msg
        if m is None:
            assert self._load is not None
            m = self._msg = self._load()
        return m

    def _check(self, version: int) -> None:
        lo, hi = self.msg.versions
        if not lo <= version <= hi:
            raise DecodeError(f"{self.msg.name} has no version {version}")

    def _decoder(self, version: int) -> Decoder:
        d = self._decoders.get(version)
        if d is None:
            self._check(version)
            d = _compile(self.msg, version, decode=True, encode=False)[0]
            assert d is not None
            self._decoders[version] = d
        return d

    def _encoder(self, version: int) -> Encoder:
        e = self._encoders.get(version)
        if e is None:
            self._check(version)
            e = _compile(self.msg, version, decode=False, encode=True)[1]
            assert e is not None
            self._encoders[version] = e
        return e

    def decode(self, buf: bytes, version: int, pos: int = 0) -> tuple[dict[str, Any], int]:
        try:
            return self._decoder(version)(buf, pos)
        except (IndexError, struct.error, UnicodeDecodeError) as e:
            raise DecodeError(f"{self.msg.name} v{version}: {e}") from e

    def encode(self, obj: dict[str, Any], version: int) -> bytes:
        out: list[bytes] = []
        self._encoder(version)(obj, out)
        return b"".join(out)

    def encode_into(self, obj: dict[str, Any], version: int, out: list[bytes]) -> None:
        self._encoder(version)(obj, out)

    def source(self, version: int) -> str:
        """The generated source of both halves (for reading and tests)."""
        self._check(version)
        return compile_message(self.msg, version)[2]
