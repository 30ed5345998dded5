"""The journal's one Redis stream: operation progress events (``mcb:progress``).

The apply work itself never goes through Redis: ``build_apply`` commits the operation as
``queued`` in SQLite and wakes the executor in this process (``JournalContext.wake``, context.py); the
executor takes queued operations from SQLite, oldest first (executor.py). Redis carries only
what crosses services — these progress events (capped; for dashboards, the bridge's chat
progress and tests; not a system of record), camera jobs and chat turns (other services).
"""

from __future__ import annotations

import json
import logging
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

log = logging.getLogger("mcb.journal.queue")

PROGRESS_STREAM = "mcb:progress"


class ProgressStream:
    def __init__(self, url: str):
        self.redis = aioredis.from_url(url, decode_responses=True, socket_timeout=5, socket_connect_timeout=3)

    async def ping(self) -> bool:
        try:
            return bool(await self.redis.ping())
        except (RedisError, OSError):
            return False

    async def progress(self, event: dict[str, Any]) -> None:
        try:
            await self.redis.xadd(PROGRESS_STREAM, {"event": json.dumps(event)}, maxlen=10_000, approximate=True)
        except (RedisError, OSError) as exc:  # progress is best-effort, never blocks writes
            log.warning("progress event not published: %s", exc.__class__.__name__)

    async def aclose(self) -> None:
        await self.redis.aclose()
