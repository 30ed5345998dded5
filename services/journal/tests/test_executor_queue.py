"""The dispatcher survives a work queue (Redis) that fails at the wrong moment.

Before the fix an acknowledgement that failed (Redis down just as an operation settled) raised out
of ``Executor.run_forever``: the dispatcher task died and no operation ran until the journal was
restarted. Now the entry stays pending, is redelivered and acknowledged once Redis answers again,
and the settled operation is not run twice.
"""

from __future__ import annotations

import asyncio

import redis.exceptions
from mcb_journal.executor import Executor

from services.journal.tests.test_idempotency_race import make_core


class FlakyQueue:
    """The work queue's interface; the first acknowledgement fails like a Redis outage."""

    def __init__(self) -> None:
        self.reads = 0
        self.acked: list[str] = []
        self.failed_acks = 0
        self.stop: asyncio.Event | None = None

    async def ensure_group(self) -> None:
        pass

    async def read(self, block_ms: int = 500) -> list[tuple[str, str]]:
        self.reads += 1
        if self.acked or self.reads > 5:
            assert self.stop is not None
            self.stop.set()
            return []
        return [("1-0", "op_that_does_not_exist")]  # redelivered until acknowledged

    async def ack(self, entry_id: str) -> None:
        if self.failed_acks == 0:
            self.failed_acks += 1
            raise redis.exceptions.ConnectionError("Connection refused")
        self.acked.append(entry_id)


def test_a_failed_ack_does_not_stop_the_dispatcher(tmp_path):
    core = make_core(tmp_path)
    q = FlakyQueue()
    core.queue = q
    ex = Executor(core)
    q.stop = ex.stopping
    asyncio.run(asyncio.wait_for(ex.run_forever(), timeout=20))
    assert q.failed_acks == 1
    assert q.acked == ["1-0"], "the entry was redelivered and acknowledged once Redis answered"
