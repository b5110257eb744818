"""What a reference program did, written down as it ran, in one shape for every client
(the Java program prints the same entries as lines: ``parse_java``)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from emulator.history import Attempt


@dataclass
class ProgramLog:
    """A producer's acknowledgements and failures; a consumer's processing and commit
    intents in one sequence; a pipeline's transactions with their outcomes."""

    t0: float = field(default_factory=time.monotonic)
    acked: list[tuple[str, int, int]] = field(default_factory=list)  # value, partition, offset
    failed: list[tuple[str, str]] = field(default_factory=list)  # value, error
    # ("p", member, partition, offset, value): processed; ("c", member, partition,
    # offset): a commit of ``offset`` about to be sent (logged before it is sent, so a
    # commit that lands although its answer is lost is checked too)
    events: list[tuple] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # errors the program met, for a report
    lock: threading.Lock = field(default_factory=threading.Lock)

    def now(self) -> float:
        return (time.monotonic() - self.t0) * 1000

    def processed(self, member: str, partition: int, offset: int, value: str) -> None:
        with self.lock:
            self.events.append(("p", member, partition, offset, value))

    def commit(self, member: str, offsets: dict[int, int]) -> None:
        with self.lock:
            self.events.extend(("c", member, p, o) for p, o in sorted(offsets.items()))

    def attempt(self, a: Attempt) -> None:
        with self.lock:
            self.attempts.append(a)

    def note(self, what: str) -> None:
        with self.lock:
            if len(self.notes) < 200:
                self.notes.append(f"{self.now():.0f} ms: {what}")


def parse_java(lines: list[str]) -> ProgramLog:
    """The Java program's lines: ``acked V P O``, ``failed V ERR``, ``p M P O V``,
    ``c M P O``, ``attempt ID OUTCOME START END IDS NOTE``, ``note TEXT``."""
    log = ProgramLog()
    for line in lines:
        parts = line.split(" ")
        kind = parts[0]
        if kind == "acked":
            log.acked.append((parts[1], int(parts[2]), int(parts[3])))
        elif kind == "failed":
            log.failed.append((parts[1], " ".join(parts[2:])))
        elif kind == "p":
            log.events.append(("p", parts[1], int(parts[2]), int(parts[3]), parts[4]))
        elif kind == "c":
            log.events.append(("c", parts[1], int(parts[2]), int(parts[3])))
        elif kind == "attempt":
            ids = tuple(x for x in parts[5].split(",") if x and x != "-")
            log.attempts.append(Attempt(parts[1], parts[2], ids,  # type: ignore[arg-type]
                                        float(parts[3]), float(parts[4]),
                                        " ".join(parts[6:])))
        elif kind == "note":
            log.notes.append(" ".join(parts[1:]))
    return log
