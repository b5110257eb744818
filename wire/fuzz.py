"""Structure-aware fuzz cases driven by the message schemas (docs/hostile-input.md).

Every case is the bytes of one request frame (size prefix included) for a broker:

- ``valid``: a well-formed request of an API key and version, each field drawn from its
  schema type, with values that reach deep into handlers (names of existing topics,
  small partition indexes, -1s, boundaries) and hostile record batches in RECORDS
  fields;
- ``mutated``: a valid request with one field-sized region overwritten (counts and
  lengths become -1, 0x7fffffff or huge varints), bytes flipped, truncated or extended;
- ``random``: random bytes after a plausible header, or a random header.

Pure and seeded: the same seed gives the same cases, so any failure replays. Knows
nothing of the emulator: bench/fuzz.py and client_tests/test_fuzz.py drive a broker.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import cramjam

from wire.messages import REQUESTS
from wire.records import HEADER_SIZE, Record, build_batch, crc32c
from wire.schema import (
    BOOL,
    BYTES,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UINT16,
    UINT32,
    UUID,
    Array,
    Field,
    Struct,
)

_INTS = {
    INT8: (-128, 127), INT16: (-32768, 32767), INT32: (-(1 << 31), (1 << 31) - 1),
    INT64: (-(1 << 63), (1 << 63) - 1), UINT16: (0, 65535), UINT32: (0, (1 << 32) - 1),
}
_HOSTILE_COUNTS = (b"\xff\xff\xff\xff", b"\x7f\xff\xff\xff", b"\x80\x00\x00\x00",
                   b"\x00\x00\x00\x00", b"\xff\xff", b"\x7f\xff",
                   b"\xff\xff\xff\xff\xff\xff", b"\x00", b"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01")


@dataclass(frozen=True)
class Case:
    kind: str  # valid, mutated, random, batch
    api_key: int
    api_version: int
    frame: bytes

    def describe(self) -> str:
        return (f"{self.kind} key {self.api_key} v{self.api_version} "
                f"({len(self.frame)} bytes) {self.frame[:48].hex()}")


class Fuzzer:
    """Seeded case generator over ``served`` {api_key: (min_version, max_version)}."""

    def __init__(self, served: dict[int, tuple[int, int]], seed: int = 0,
                 topics: tuple[str, ...] = ("fuzz-0", "fuzz-1")) -> None:
        self.rng = random.Random(seed)
        self.served = {k: v for k, v in sorted(served.items()) if k in REQUESTS}
        self.topics = topics
        self.corr = 0

    # ---- values --------------------------------------------------------------------
    def _int(self, t: Any, name: str) -> int:
        lo, hi = _INTS[t]
        return min(hi, max(lo, self._pick_int(lo, hi, name)))

    def _pick_int(self, lo: int, hi: int, name: str) -> int:
        r = self.rng
        if "partition" in name or name in ("index", "replica_id", "broker_id", "node_id"):
            return r.choice((0, 0, 1, 2, -1, 3, hi))
        if "timeout" in name or name.endswith("_ms"):  # rarely a wait of days
            return hi if r.random() < 0.01 else r.choice((0, 1, 100, -1))
        return r.choice((0, 1, -1, 2, lo, hi, r.randint(lo, hi), r.randint(-3, 10)))

    def _string(self, name: str) -> str:
        r = self.rng
        if "topic" in name or name == "name":
            return r.choice((*self.topics, *self.topics, "", "x" * 300, "__consumer_offsets",
                             "bad/name", "t\u00e9"))
        return r.choice(("", "fuzz", "g-0", "x" * r.randint(0, 40), "\u2603"))

    def value(self, f: Field, version: int, depth: int = 0) -> Any:
        t = f.type
        r = self.rng
        if f.is_nullable(version) and r.random() < 0.08:
            return None
        if isinstance(t, Struct):
            return self.struct(t, version, depth + 1)
        if isinstance(t, Array):
            n = 0 if depth > 3 else r.choice((0, 1, 1, 1, 2, 3))
            item = t.item
            if isinstance(item, Struct):
                return [self.struct(item, version, depth + 1) for _ in range(n)]
            sub = Field(f.name, item)
            return [self.value(sub, version, depth + 1) for _ in range(n)]
        if t in _INTS:
            return self._int(t, f.name)
        if t is BOOL:
            return r.random() < 0.5
        if t is FLOAT64:
            return r.choice((0.0, 1.5, -1.0, 1e300))
        if t is UUID:
            return r.choice((bytes(16), bytes(r.randrange(256) for _ in range(16))))
        if t is STRING:
            return self._string(f.name)
        if t is BYTES:
            return bytes(r.randrange(256) for _ in range(r.choice((0, 1, 8, 40))))
        if t is RECORDS:
            return self.batch()
        return f.default

    def struct(self, st: Struct, version: int, depth: int = 0) -> dict[str, Any]:
        return {f.name: self.value(f, version, depth) for f in st.fields if f.present(version)}

    # ---- record batches ----------------------------------------------------------------
    def batch(self) -> bytes:
        """A record batch, valid or hostile in one of the ways Kafka's validator checks."""
        r = self.rng
        now = r.choice((0, 1_700_000_000_000, -1, (1 << 62)))
        recs = [Record(0, now + r.randint(-5, 5), r.choice((b"k", None)), b"v" * r.randint(0, 20))
                for _ in range(r.randint(1, 4))]
        valid = build_batch(recs, timestamp=now)
        body = valid[HEADER_SIZE:]
        count, attrs = len(recs), 0
        choice = r.randrange(10)
        if choice == 0:
            return valid
        if choice == 1:
            count = r.choice((0, -1, (1 << 31) - 1, count + 1, count - 1))
        elif choice == 2:
            attrs = r.randint(1, 7)
            body = r.choice((bytes(cramjam.gzip.compress(body)), b"garbage" * 3,
                             bytes(cramjam.zstd.compress(body))))
        elif choice == 3:
            attrs = 1
            body = bytes(cramjam.gzip.compress(build_batch(
                [(b"k", b"\0" * r.choice((1 << 16, 1 << 20)))], timestamp=now)[HEADER_SIZE:]))
        elif choice == 4 and body:
            flipped = bytearray(body)
            flipped[r.randrange(len(flipped))] = r.randrange(256)
            body = bytes(flipped)
        elif choice == 5:
            body = body + bytes(r.randint(1, 5))
        elif choice == 6:
            body = body[: r.randint(0, max(0, len(body) - 1))]
        elif choice == 7:
            attrs = r.choice((0x10, 0x20, 0x30, 0x08))
        elif choice == 8:  # a broken CRC or length
            data = bytearray(valid)
            data[r.randrange(8, len(data))] ^= 0xFF
            return bytes(data)
        else:
            return valid + valid  # two batches
        tail = struct.pack(">hiqqqhii", attrs, count - 1, now, now, -1, -1, -1, count) + body
        return struct.pack(">qiibI", 0, len(tail) + 9, -1, 2, crc32c(tail)) + tail

    # ---- frames ----------------------------------------------------------------------
    def _header(self, key: int, version: int, flexible: bool) -> bytes:
        self.corr = (self.corr + 1) & 0x7FFFFFFF
        head = struct.pack(">hhih", key, version, self.corr, 4) + b"fuzz"
        return head + (b"\x00" if flexible else b"")

    def valid(self) -> Case:
        key = self.rng.choice(list(self.served))
        lo, hi = self.served[key]
        version = self.rng.randint(lo, hi)
        codec = REQUESTS[key]
        body = codec.encode(self.struct(codec.msg.struct, version), version)
        head = self._header(key, version, codec.msg.is_flexible(version))
        payload = head + body
        return Case("valid", key, version, struct.pack(">i", len(payload)) + payload)

    def mutated(self) -> Case:
        base = self.valid()
        r = self.rng
        frame = bytearray(base.frame)
        start = 14 + len("fuzz")  # past the size, header and client id
        for _ in range(r.randint(1, 3)):
            op = r.randrange(5)
            pos = r.randrange(min(start, len(frame) - 1), len(frame)) if len(frame) > start \
                else len(frame) - 1
            if op == 0:  # a count or length becomes hostile
                patch = r.choice(_HOSTILE_COUNTS)
                frame[pos:pos + len(patch)] = patch
            elif op == 1:
                frame[pos] = r.randrange(256)
            elif op == 2:
                del frame[pos:]
            elif op == 3:
                frame[pos:pos] = bytes(r.randrange(256) for _ in range(r.randint(1, 16)))
            else:
                frame[pos] ^= 1 << r.randrange(8)
        struct.pack_into(">i", frame, 0, len(frame) - 4)  # the size stays consistent
        return Case("mutated", base.api_key, base.api_version, bytes(frame))

    def random(self) -> Case:
        r = self.rng
        if r.random() < 0.7:
            key = r.choice(list(self.served))
            lo, hi = self.served[key]
            version = r.randint(lo, hi)
            head = self._header(key, version, REQUESTS[key].msg.is_flexible(version))
        else:
            key, version = r.randint(-2, 100), r.randint(-2, 20)
            head = struct.pack(">hhi", key, version, 1) + bytes(
                r.randrange(256) for _ in range(r.randint(0, 6)))
        body = bytes(r.randrange(256) for _ in range(r.choice((0, 1, 4, 16, 64, 300))))
        payload = head + body
        return Case("random", key, version, struct.pack(">i", len(payload)) + payload)

    def cases(self, n: int) -> Iterator[Case]:
        """``n`` cases: half mutated, a third valid, the rest random."""
        for _ in range(n):
            x = self.rng.random()
            yield self.mutated() if x < 0.5 else self.valid() if x < 0.83 else self.random()
