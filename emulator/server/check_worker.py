"""The produce validation worker process (emulator/server/offload.py starts it).

Reads jobs from stdin and writes outcomes to stdout, each a 4-byte big-endian length
and a pickle (the emulator's own process on both ends): a job is (batch, TopicRules,
now, "topic-partition"), an outcome what emulator.log.validator.check_outcome returns.
Ends at end of input. Run as ``python -m emulator.server.check_worker``: a module of
its own, so that nothing of the program that embeds the emulator runs again here.
"""

from __future__ import annotations

import pickle
import signal
import struct
import sys

from emulator.log.validator import check_outcome

_LEN = struct.Struct(">I")


def _read(stream, n: int) -> bytes | None:  # noqa: ANN001 - a binary stream
    buf = bytearray()
    while len(buf) < n:
        chunk = stream.read(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the process group
    inp, out = sys.stdin.buffer, sys.stdout.buffer
    while True:
        head = _read(inp, 4)
        if head is None:
            return
        job = _read(inp, _LEN.unpack(head)[0])
        if job is None:
            return
        batch, rules, now, tp = pickle.loads(job)
        result = pickle.dumps(check_outcome(batch, rules, now, tp), protocol=5)
        out.write(_LEN.pack(len(result)) + result)
        out.flush()


if __name__ == "__main__":
    main()
