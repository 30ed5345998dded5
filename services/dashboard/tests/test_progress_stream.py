"""What the dashboard reads from Redis (sources.py), against a real redis-server: an idle read of
the progress stream ends in an empty batch, not a Redis timeout, and reading after the stream's
tail loses nothing written between two reads (reading after "$" would); the camera's capture
records are the newest ones, newest first."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
from harness import start_redis  # noqa: E402
from mcb_dashboard.sources import (  # noqa: E402
    CAPTURE_RECORD,
    MAX_CAPTURES,
    PROGRESS_STREAM,
    REDIS_READ_TIMEOUT_S,
    Sources,
)
from mcb_rpc.settings import Settings  # noqa: E402


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory):
    proc, url = start_redis(tmp_path_factory.mktemp("dashboard-redis"))
    yield url
    proc.stop()


def run_with_sources(redis_url, tmp_path, monkeypatch, body) -> None:
    monkeypatch.setenv("MCB_REDIS_URL", redis_url)
    monkeypatch.setenv("MCB_RUNTIME_DIR", str(tmp_path))

    async def run() -> None:
        src = Sources(Settings.from_env(), None, None)
        try:
            await body(src)
        finally:
            await src.aclose()

    loop = asyncio.new_event_loop()  # not asyncio.run: it leaves no current loop for later sync tests
    try:
        loop.run_until_complete(run())
    finally:
        loop.close()


def test_capture_records_are_the_newest_newest_first(redis_url, tmp_path, monkeypatch):
    async def body(src: Sources) -> None:
        n = MAX_CAPTURES + 50
        pipe = src.redis.pipeline(transaction=False)
        for i in range(n):
            pipe.hset(
                f"{CAPTURE_RECORD}cap_{i:04d}",
                mapping={"status": "completed", "created_ms": 1000 + i, "job": '{"after_operation_id": "op_1"}'},
            )
        await pipe.execute()
        caps = (await src.camera_state())["captures"]
        assert [c["capture_id"] for c in caps] == [f"cap_{i:04d}" for i in range(n - 1, n - 1 - MAX_CAPTURES, -1)]
        assert caps[0]["after_operation_id"] == "op_1" and caps[0]["status"] == "completed"

    run_with_sources(redis_url, tmp_path, monkeypatch, body)


def test_idle_read_is_an_empty_batch_and_the_tail_loses_nothing(redis_url, tmp_path, monkeypatch):
    async def body(src: Sources) -> None:
        assert await src.progress_tail() == "0-0"
        started = time.monotonic()
        assert await src.progress_events(await src.progress_tail(), block_ms=60_000) == []
        assert time.monotonic() - started < REDIS_READ_TIMEOUT_S
        tail = await src.progress_tail()
        await src.redis.xadd(PROGRESS_STREAM, {"event": json.dumps({"percent": 50})})  # between two reads
        got = await src.progress_events(tail)
        assert [ev for _, ev in got] == [{"percent": 50}]
        assert await src.progress_tail() == got[0][0]

    run_with_sources(redis_url, tmp_path, monkeypatch, body)
