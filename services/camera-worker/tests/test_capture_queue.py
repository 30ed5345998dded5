"""The capture queue keeps its jobs in the process (issue 30): a capture goes from submit to the
job loop without a Redis stream, its record (what the dashboard reads) is in a real Redis, the
queue refuses a 17th waiting job, and a capture whose worker is gone answers camera_unavailable
instead of "pending" for ever."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import redis.asyncio as aioredis
from harness import start_redis
from mcb_camera import png
from mcb_camera.capture import CaptureJob, Rendered
from mcb_camera.jobs import MAX_QUEUED, RECORD, CaptureQueue, OperationWaiter, new_capture_id
from mcb_common.errors import ErrorCode, McbError


class HeldDriver:
    """A Driver (mcb_camera.capture.Driver) whose render waits until the test lets it go, then draws
    a 16x16 grey picture: it lets the test see the queue while a job is active."""

    name = "builtin"

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.rendered: list[str] = []

    def state(self) -> str:
        return "ready"

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def render(self, job: CaptureJob, progress: Any) -> Rendered:
        await progress("rendering")
        await self.go.wait()
        self.rendered.append(job.capture_id)
        return Rendered(png.encode(np.full((16, 16, 3), 128, np.uint8)), 16, 16, {"driver": "builtin", "ready": True})


@pytest.fixture
def redis_url(tmp_path: Path):
    proc, url = start_redis(tmp_path)
    try:
        yield url
    finally:
        proc.stop()


def _job(project: str = "p1") -> CaptureJob:
    return CaptureJob(
        capture_id=new_capture_id(),
        project_id=project,
        pose={"x": 0, "y": 70, "z": 0, "yaw": 0, "pitch": 0, "fov": 70, "width": 16, "height": 16},
    )


def test_jobs_stay_in_the_process_and_records_are_in_redis(tmp_path: Path, redis_url: str) -> None:
    async def main() -> None:
        r = aioredis.from_url(redis_url, decode_responses=True)
        driver = HeldDriver()
        q = CaptureQueue(r, driver, tmp_path, OperationWaiter("127.0.0.1:1", None), inline_wait_s=0)
        await q.start()
        try:
            first = await q.capture(_job())
            assert (await q.record("p1", first))["status"] in ("pending", "running")
            ids = [await q.submit(_job()) for _ in range(MAX_QUEUED - 1)]  # the active one counts too
            assert q.queued == MAX_QUEUED - 1
            with pytest.raises(McbError) as busy:
                await q.submit(_job())
            assert busy.value.code == ErrorCode.BUSY
            assert [k async for k in r.scan_iter(match="mcb:camera:jobs*")] == []  # no stream
            rec = await r.hgetall(RECORD + first)
            assert rec["worker"] == q.worker and json.loads(rec["job"])["capture_id"] == first
            driver.go.set()
            for cid in [first, *ids]:
                for _ in range(400):
                    if (await q.record("p1", cid))["status"] == "completed":
                        break
                    await asyncio.sleep(0.05)
            assert driver.rendered == [first, *ids]  # in order, one at a time
            assert (await q.record("p1", ids[-1]))["status"] == "completed"
            data, meta = q.image(ids[-1])
            assert data.startswith(b"\x89PNG") and meta["captureId"] == ids[-1]
        finally:
            await q.stop()
            await r.aclose()

    asyncio.run(main())


def test_a_capture_of_a_stopped_worker_is_lost_not_pending(tmp_path: Path, redis_url: str) -> None:
    async def main() -> None:
        r = aioredis.from_url(redis_url, decode_responses=True)
        old = CaptureQueue(r, HeldDriver(), tmp_path, OperationWaiter("127.0.0.1:1", None), inline_wait_s=0)
        await old.start()
        cid = await old.submit(_job())
        await old.stop()  # the job never ran
        new = CaptureQueue(r, HeldDriver(), tmp_path, OperationWaiter("127.0.0.1:1", None), inline_wait_s=0)
        rec = await new.record("p1", cid)
        assert rec["status"] == "failed"
        err = json.loads(rec["error"])
        assert err["code"] == ErrorCode.CAMERA_UNAVAILABLE.value and "capture again" in err["message"]
        assert (await r.hgetall(RECORD + cid))["status"] == "failed"  # the dashboard sees it too
        await r.aclose()

    asyncio.run(main())
