"""At most N chat messages per second per player (sliding window; callers wait, order kept)."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict, deque


class RateLimiter:
    def __init__(self, rate: int = 4, per: float = 1.0, clock=time.monotonic):
        self.rate, self.per, self.clock = rate, per, clock
        self._sent: dict[str, deque[float]] = defaultdict(deque)
        self._locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    async def acquire(self, key: str) -> None:
        async with self._locks[key]:
            sent = self._sent[key]
            while True:
                now = self.clock()
                while sent and sent[0] <= now - self.per:
                    sent.popleft()
                if len(sent) < self.rate:
                    sent.append(now)
                    return
                await asyncio.sleep(sent[0] + self.per - now + 0.001)
