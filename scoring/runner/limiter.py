"""The in-flight limit of one run's requests to an endpoint, adapted to its 429s."""

from __future__ import annotations

import asyncio
import math


class PauseTooLongError(Exception):
    """The limiter's wait (the pause after a 429, or a free slot) would pass a sample's budget."""

    def __init__(self, pause_s: float | None):
        super().__init__(pause_s)
        self.pause_s = pause_s  # the pause still to wait, None while waiting for a slot


class AdaptiveLimiter:
    """In-flight request limit: halved on 429 (at most once per cool-down window), raised by
    one after `limit` consecutive successes, never above the configured maximum."""

    def __init__(self, maximum: int, minimum: int = 1):
        self.maximum = max(1, maximum)
        self.minimum = max(1, min(minimum, self.maximum))
        self.limit = self.maximum
        self.in_flight = 0
        self.pause_until = 0.0
        self._successes = 0
        self._last_decrease = -1e18
        self._cond: asyncio.Condition | None = None
        self.decreases = 0

    def _condition(self) -> asyncio.Condition:
        if self._cond is None:
            self._cond = asyncio.Condition()
        return self._cond

    async def acquire(self, budget: float = math.inf) -> float:
        """Take an in-flight slot, after any pause a 429 set for every request; returns the
        seconds waited. Raises PauseTooLongError, holding no slot, when the wait (for a slot
        or the pause) would pass ``budget`` seconds: a sample's max_wait_s bounds these too."""
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        cond = self._condition()
        async with cond:
            while self.in_flight >= self.limit:
                left = budget - (loop.time() - t0)
                try:
                    await asyncio.wait_for(cond.wait(), None if math.isinf(left) else max(0.0, left))
                except TimeoutError:
                    raise PauseTooLongError(None) from None
            self.in_flight += 1
        delay = self.pause_until - loop.time()
        if delay > 0:
            if loop.time() + delay - t0 > budget:
                await self.release()
                raise PauseTooLongError(delay)
            await asyncio.sleep(delay)
        return loop.time() - t0

    async def release(self) -> None:
        """Give back the slot `acquire` took."""
        cond = self._condition()
        async with cond:
            self.in_flight -= 1
            cond.notify_all()

    def on_success(self) -> None:
        """An answer: after `limit` of them in a row, one more request may be in flight."""
        self._successes += 1
        if self.limit < self.maximum and self._successes >= self.limit:
            self.limit += 1
            self._successes = 0
            if self._cond is not None:
                asyncio.get_running_loop().create_task(self._wake())

    async def _wake(self) -> None:
        cond = self._condition()
        async with cond:
            cond.notify_all()

    def on_rate_limited(self, wait_s: float) -> None:
        """A 429: halve the limit (once per burst) and pause every request for ``wait_s``."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        self._successes = 0
        # Requests already in flight when the first 429 arrived should not each halve again.
        if now - self._last_decrease > max(wait_s, 0.5):
            self.limit = max(self.minimum, self.limit // 2)
            self._last_decrease = now
            self.decreases += 1
        self.pause_until = max(self.pause_until, now + wait_s)
