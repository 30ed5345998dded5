"""The progress stream as the dashboard reads it (sources.py), against a real redis-server: an
idle read ends in an empty batch, not a Redis timeout, and reading after the stream's tail loses
nothing written between two reads (reading after "$" would)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
from harness import start_redis  # noqa: E402
from mcb_dashboard.sources import PROGRESS_STREAM, REDIS_READ_TIMEOUT_S, Sources  # noqa: E402
from mcb_rpc.settings import Settings  # noqa: E402


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory):
    proc, url = start_redis(tmp_path_factory.mktemp("dashboard-redis"))
    yield url
    proc.stop()


def test_idle_read_is_an_empty_batch_and_the_tail_loses_nothing(redis_url, tmp_path, monkeypatch):
    monkeypatch.setenv("MCB_REDIS_URL", redis_url)
    monkeypatch.setenv("MCB_RUNTIME_DIR", str(tmp_path))

    async def run() -> None:
        src = Sources(Settings.from_env(), None, None)
        try:
            assert await src.progress_tail() == "0-0"
            started = time.monotonic()
            assert await src.progress_events(await src.progress_tail(), block_ms=60_000) == []
            assert time.monotonic() - started < REDIS_READ_TIMEOUT_S
            tail = await src.progress_tail()
            await src.redis.xadd(PROGRESS_STREAM, {"event": json.dumps({"percent": 50})})  # between two reads
            got = await src.progress_events(tail)
            assert [ev for _, ev in got] == [{"percent": 50}]
            assert await src.progress_tail() == got[0][0]
        finally:
            await src.aclose()

    loop = asyncio.new_event_loop()  # not asyncio.run: it leaves no current loop for later sync tests
    try:
        loop.run_until_complete(run())
    finally:
        loop.close()
