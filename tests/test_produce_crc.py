"""A produced batch's CRC-32C is computed once, and a wrong one is still refused.

The produce validator (emulator/log/validator.py) checks the CRC of the bytes the client
sent; the leader's log append then leaves it out (``crc_checked``) rather than computing
it a second time over the same bytes. Where the validator did not read these bytes (an
outcome computed by the check worker, emulator/server/offload.py) or the bytes are new
(a batch recompressed into the topic's codec), the log checks the CRC itself, as before.
Runs on whichever twin ``emulator.log`` selected (scripts/test runs both).
"""

from __future__ import annotations

from typing import Any

import pytest
from cluster_sim import new_cluster

from emulator.cluster.clock import ManualClock
from emulator.cluster.state import ClusterState
from emulator.log.validator import Checked, check_outcome
from wire.errors import ErrorCode as E
from wire.records import build_batch

NOW = 1_000_000


class _Spy:
    """The leader's log, recording what each append_as_leader was told."""

    def __init__(self, log: Any) -> None:
        self._log = log
        self.calls: list[bool] = []

    def append_as_leader(self, data: Any, epoch: int, append_time: int = -1,
                         crc_checked: bool = False) -> tuple[int, int, int]:
        self.calls.append(crc_checked)
        return self._log.append_as_leader(data, epoch, append_time, crc_checked)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._log, name)


def cluster(mode: str = "fast", **configs: str) -> tuple[ClusterState, _Spy]:
    s = new_cluster(1, ManualClock(NOW), fidelity=mode).state
    s.create_topic("t", 1, 1, configs=configs)
    p = s.get_partition("t", 0)
    spy = _Spy(p.logs[p.leader])
    p.logs[p.leader] = spy
    return s, spy


def good() -> bytes:
    return build_batch([(b"k", b"v" * 100)], timestamp=NOW)


def corrupt() -> bytes:
    raw = bytearray(good())
    raw[-1] ^= 0xFF  # inside the CRC's span: only the CRC is wrong
    return bytes(raw)


def test_the_validators_crc_check_is_the_only_one() -> None:
    s, spy = cluster()
    r = s.append(1, "t", 0, good(), -1)
    assert (r.error, r.base_offset) == (E.NONE, 0)
    assert spy.calls == [True]


def test_a_wrong_crc_is_corrupt_message_and_nothing_is_stored() -> None:
    s, spy = cluster()
    r = s.append(1, "t", 0, corrupt(), -1)
    assert r.error == E.CORRUPT_MESSAGE
    assert spy.calls == []  # refused by the validator, before the log
    assert s.get_partition("t", 0).log_end_offset == 0


def test_an_outcome_from_elsewhere_leaves_the_crc_to_the_log() -> None:
    """The check worker read other bytes than these (a copy, in another process): an
    "ok" that does not describe them must not let a wrong CRC through."""
    s, spy = cluster()
    outcome = check_outcome(good(), s.produce_configs(s.topics["t"]).rules, NOW, "t-0")
    r = s.append(1, "t", 0, corrupt(), -1, Checked(outcome=outcome))
    assert r.error == E.CORRUPT_MESSAGE
    assert spy.calls == [False]
    assert s.get_partition("t", 0).log_end_offset == 0


@pytest.mark.parametrize("compression", ["gzip", "uncompressed"])
def test_a_recompressed_batch_is_checked_by_the_log(compression: str) -> None:
    """Rewritten into the topic's codec (--fidelity kafka): new bytes, checked again."""
    s, spy = cluster("kafka", **{"compression.type": compression})
    r = s.append(1, "t", 0, good(), -1)
    assert r.error == E.NONE
    assert spy.calls == [compression == "uncompressed"]
