"""The Redis-backed turn queue: one list per project (`mcb:chat:q:<project>`) holding the
waiting messages, and `mcb:chat:active:<project>` naming the running turn. One active turn per
project, at most `max_queued` waiting; projects are independent. A restarted bridge clears the
lists: the world host already failed the messages leased to the old client_id."""

from __future__ import annotations

import json
from typing import Any, cast

import redis.asyncio as aioredis

PREFIX = "mcb:chat"

_PUSH = """
if redis.call('LLEN', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('RPUSH', KEYS[1], ARGV[1])
return redis.call('LLEN', KEYS[1])
"""


class TurnQueue:
    def __init__(self, redis: aioredis.Redis, max_queued: int = 8, prefix: str = PREFIX):
        self.redis, self.max_queued, self.prefix = redis, max_queued, prefix
        self._push = redis.register_script(_PUSH)

    def _q(self, project: str) -> str:
        return f"{self.prefix}:q:{project}"

    def _active(self, project: str) -> str:
        return f"{self.prefix}:active:{project}"

    async def reset(self) -> int:
        n = 0
        async for key in self.redis.scan_iter(match=f"{self.prefix}:*"):
            n += await self.redis.delete(key)
        return n

    async def push(self, project: str, item: dict[str, Any]) -> int:
        """Queue position (1-based), or 0 when the project's queue is full."""
        return int(await self._push(keys=[self._q(project)], args=[json.dumps(item), self.max_queued]))

    async def pop(self, project: str) -> dict[str, Any] | None:
        raw = cast("str | None", await self.redis.lpop(self._q(project)))  # one (no count), decoded
        return json.loads(raw) if raw else None

    async def length(self, project: str) -> int:
        return int(await self.redis.llen(self._q(project)))

    async def remove_player(self, project: str, player_id: str) -> list[dict[str, Any]]:
        removed = []
        for raw in cast("list[str]", await self.redis.lrange(self._q(project), 0, -1)):  # decoded
            item = json.loads(raw)
            if item.get("player_id") == player_id and await self.redis.lrem(self._q(project), 1, raw):
                removed.append(item)
        return removed

    async def set_active(self, project: str, item: dict[str, Any] | None) -> None:
        if item is None:
            await self.redis.delete(self._active(project))
        else:
            await self.redis.set(self._active(project), json.dumps(item))

    async def active(self, project: str) -> dict[str, Any] | None:
        raw = await self.redis.get(self._active(project))
        return json.loads(raw) if raw else None
