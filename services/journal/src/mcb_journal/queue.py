"""Redis streams between the journal and the rest: the apply work queue and progress events.

- ``mcb:apply`` (consumer group ``journal``): one entry per operation to run. At-least-once:
  an entry is acknowledged only when its operation is terminal. The journal database, not
  Redis, decides what may run: an entry for an operation that already began writing is
  never re-run (crash recovery decides), so a redelivery can never write twice.
- ``mcb:progress``: operation progress events (state, counters), capped, for dashboards,
  the bridge's chat progress and tests. Not a system of record.
"""

from __future__ import annotations

import json
import logging
import socket
from typing import Any

import redis.asyncio as aioredis
from mcb_common.errors import ErrorCode, McbError
from redis.exceptions import RedisError, ResponseError

log = logging.getLogger("mcb.journal.queue")

APPLY_STREAM = "mcb:apply"
PROGRESS_STREAM = "mcb:progress"
GROUP = "journal"


class ApplyQueue:
    def __init__(self, url: str, consumer: str | None = None):
        self.redis = aioredis.from_url(url, decode_responses=True, socket_timeout=5, socket_connect_timeout=3)
        self.consumer = consumer or f"{socket.gethostname()}-journal"

    async def ensure_group(self) -> None:
        try:
            await self.redis.xgroup_create(APPLY_STREAM, GROUP, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def ping(self) -> bool:
        try:
            return bool(await self.redis.ping())
        except (RedisError, OSError):
            return False

    async def enqueue(self, op_id: str) -> None:
        try:
            await self.redis.xadd(APPLY_STREAM, {"op_id": op_id})
        except (RedisError, OSError) as exc:
            raise McbError(ErrorCode.UNAVAILABLE, f"the work queue (Redis) is unreachable: {exc.__class__.__name__}") from exc

    async def read(self, block_ms: int = 1000) -> list[tuple[str, str]]:
        """New entries for this consumer, after any it holds unacknowledged (redelivery)."""
        out: list[tuple[str, str]] = []
        for start in ("0", ">"):
            resp = await self.redis.xreadgroup(GROUP, self.consumer, {APPLY_STREAM: start}, count=16,
                                               block=None if start == "0" else block_ms)
            for _stream, entries in resp or []:
                for entry_id, fields in entries:
                    if fields and "op_id" in fields:
                        out.append((entry_id, fields["op_id"]))
                    else:
                        await self.ack(entry_id)
            if out:
                return out
        return out

    async def ack(self, entry_id: str) -> None:
        await self.redis.xack(APPLY_STREAM, GROUP, entry_id)

    async def progress(self, event: dict[str, Any]) -> None:
        try:
            await self.redis.xadd(PROGRESS_STREAM, {"event": json.dumps(event)}, maxlen=10_000, approximate=True)
        except (RedisError, OSError) as exc:  # progress is best-effort, never blocks writes
            log.warning("progress event not published: %s", exc.__class__.__name__)

    async def aclose(self) -> None:
        await self.redis.aclose()
