"""max.connection.creation.rate's sensor (emulator/server/limits.py CreationRate), with
Kafka's Rate arithmetic: 11 windows of 1 s and at least 10 s of elapsed time."""

from __future__ import annotations

from emulator.server.limits import CreationRate


def test_a_burst_is_measured_over_ten_seconds_and_delayed_past_the_quota() -> None:
    r = CreationRate(quota=5, window_num=11, window_ms=1000)
    assert [r.record(0) for _ in range(50)] == [0] * 50  # 50 / 10 s = 5/s: within
    assert r.record(0) == 200  # 51 / 10 s = 5.1/s: (5.1 - 5) / 5 * 10 s
    assert r.record(0) == 400
    assert r.record(0) == 600
    for _ in range(100):
        r.record(0)
    assert r.record(0) == 1000  # capped at one window (quota.window.size.seconds)


def test_old_windows_expire() -> None:
    r = CreationRate(quota=1, window_num=2, window_ms=1000)
    assert r.record(0) == 0
    assert r.record(10) == 990  # 2 over max(10 ms, 1 window) = 2/s: (2 - 1) / 1 * 990 ms
    assert r.record(2500) == 0  # the first window is gone: 1 over 1 s
    assert CreationRate(quota=0, window_num=11, window_ms=1000).record(0) == 1000
