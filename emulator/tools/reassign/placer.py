"""Kafka 4.1's StripedReplicaPlacer, for ``--generate``: random in Kafka too, so
proposals differ from run to run as there."""

from __future__ import annotations

import random

from emulator.tools.reassign.json_format import ToolError


# ---- placement for --generate (Kafka 4.1's StripedReplicaPlacer) ------------------------------
class _BrokerList:
    def __init__(self) -> None:
        self.brokers: list[int] = []
        self.index = self.offset = self.epoch = 0

    def initialize(self, rnd: random.Random) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = rnd.randrange(len(self.brokers))

    def next(self, epoch: int) -> int:
        if not self.brokers:
            return -1
        if self.epoch != epoch:
            self.epoch, self.index = epoch, 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        b = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return b


def striped_placement(brokers: dict[int, str | None], partitions: int, rf: int,
                      rnd: random.Random) -> list[list[int]]:
    """StripedReplicaPlacer.place for ``partitions`` partitions on unfenced brokers."""
    if rf <= 0:
        raise ToolError(f"Invalid replication factor {rf}: the replication factor must be "
                        "positive.")
    if not brokers:
        raise ToolError("All brokers are currently fenced.")
    if rf > len(brokers):
        raise ToolError(f"The target replication factor of {rf} cannot be reached because "
                        f"only {len(brokers)} broker(s) are registered.")
    racks: dict[str | None, _BrokerList] = {}
    for b, rack in brokers.items():
        racks.setdefault(rack, _BrokerList()).brokers.append(b)
    for r in racks.values():
        r.initialize(rnd)
    names = sorted(racks, key=lambda r: (r is not None, r or ""))
    offset = rnd.randrange(len(names))
    epoch = 0
    out = []
    for _ in range(partitions):
        if epoch == len(brokers) and len(brokers) > 1:
            rnd.shuffle(names)
            for r in racks.values():
                rnd.shuffle(r.brokers)
            epoch = 0
        if offset == len(names):
            offset = 0
        replicas = []
        first = offset
        while True:
            b = racks[names[first]].next(epoch)
            if b >= 0:
                replicas.append(b)
                break
            first = (first + 1) % len(names)
        idx = offset
        for _ in range(1, rf):
            b = -1
            while b < 0:
                if idx == first:
                    first = -1
                else:
                    b = racks[names[idx]].next(epoch)
                idx = (idx + 1) % len(names)
            replicas.append(b)
        epoch += 1
        offset += 1
        out.append(replicas)
    return out

