"""Java's JKS keystore format, read: the private keys and certificates of a keystore
or truststore that Kafka's Docker examples mount (``kafka01.keystore.jks``).

The layout, as the JDK writes it: the magic 0xFEEDFEED, version 2, an entry count,
then per entry a tag (1: a private key with its certificate chain, 2: a trusted
certificate), the alias and a timestamp; a private key is an EncryptedPrivateKeyInfo
whose data is the JDK's key protector: a 20-byte salt, the PKCS#8 key XORed with a
stream of SHA-1 digests of the password (UTF-16BE) chained from the salt, and a SHA-1
check of password and key. Only computation: the caller reads the file.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field

MAGIC = 0xFEEDFEED


class JksError(ValueError):
    """Not a JKS store, a damaged one, or the wrong password."""


@dataclass
class JksEntry:
    alias: str
    key_der: bytes | None = None  # PKCS#8, decrypted
    certs_der: list[bytes] = field(default_factory=list)  # the chain, leaf first


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise JksError("truncated keystore")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u16(self) -> int:
        return int(struct.unpack(">H", self.take(2))[0])

    def u32(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def utf(self) -> str:
        return self.take(self.u16()).decode("utf-8", "replace")


def _der(data: bytes, pos: int) -> tuple[int, int, int]:
    """(tag, content start, content end) of the DER element at ``pos``."""
    if pos + 2 > len(data):
        raise JksError("truncated key")
    tag, length = data[pos], data[pos + 1]
    pos += 2
    if length & 0x80:
        n = length & 0x7F
        length = int.from_bytes(data[pos:pos + n], "big")
        pos += n
    return tag, pos, pos + length


def _unprotect(epki: bytes, password: str) -> bytes:
    tag, start, _ = _der(epki, 0)  # EncryptedPrivateKeyInfo SEQUENCE
    if tag != 0x30:
        raise JksError("not an EncryptedPrivateKeyInfo")
    _, _, alg_end = _der(epki, start)  # AlgorithmIdentifier
    tag, start, end = _der(epki, alg_end)  # OCTET STRING
    if tag != 0x04:
        raise JksError("not an EncryptedPrivateKeyInfo")
    blob = epki[start:end]
    salt, encrypted, check = blob[:20], blob[20:-20], blob[-20:]
    pw = password.encode("utf-16-be")
    stream = bytearray()
    digest = salt
    while len(stream) < len(encrypted):
        digest = hashlib.sha1(pw + digest).digest()
        stream += digest
    key = bytes(a ^ b for a, b in zip(encrypted, stream, strict=False))
    if hashlib.sha1(pw + key).digest() != check:
        raise JksError("wrong key password")
    return key


def load(data: bytes, key_password: str | None = None) -> list[JksEntry]:
    """The entries of a JKS store; private keys decrypted with ``key_password``."""
    r = _Reader(data)
    if r.u32() != MAGIC:
        raise JksError("not a JKS keystore")
    if r.u32() not in (1, 2):
        raise JksError("unknown JKS version")
    version = 2
    entries = []
    for _ in range(r.u32()):
        tag = r.u32()
        entry = JksEntry(r.utf())
        r.take(8)  # timestamp
        if tag == 1:
            epki = r.take(r.u32())
            for _ in range(r.u32()):
                if version == 2:
                    r.utf()  # certificate type, X.509
                entry.certs_der.append(r.take(r.u32()))
            if key_password is None:
                raise JksError("a password is needed for the private key")
            entry.key_der = _unprotect(epki, key_password)
        elif tag == 2:
            r.utf()
            entry.certs_der.append(r.take(r.u32()))
        else:
            raise JksError(f"unknown JKS entry tag {tag}")
        entries.append(entry)
    return entries
