"""emulator.testing's waits: the value that ended the wait comes back, a timeout says
what was awaited and the last value seen."""

from __future__ import annotations

import asyncio

import pytest

from emulator.testing import wait_for, wait_for_async


def test_wait_for_returns_the_first_truthy_value() -> None:
    values = iter([0, None, "", [3]])
    assert wait_for(lambda: next(values), "a list", interval=0) == [3]


def test_wait_for_times_out_naming_what_and_the_last_value() -> None:
    with pytest.raises(AssertionError, match=r"waiting for the moon \(last: 0\)"):
        wait_for(lambda: 0, "the moon", timeout=0.05, interval=0.01)


def test_wait_for_async_awaits_and_lets_the_loop_run() -> None:
    async def main() -> int:
        ticks: list[int] = []

        async def ticker() -> None:
            for i in range(3):
                ticks.append(i)
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())

        async def three() -> int:
            return len(ticks) if len(ticks) == 3 else 0

        got = await wait_for_async(three, "three ticks", timeout=5, interval=0)
        await task
        return got

    assert asyncio.run(main()) == 3


def test_wait_for_async_times_out() -> None:
    async def never() -> bool:
        return False

    with pytest.raises(AssertionError, match="waiting for nothing"):
        asyncio.run(wait_for_async(never, "nothing", timeout=0.05, interval=0.01))
