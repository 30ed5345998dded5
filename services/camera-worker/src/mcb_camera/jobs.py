"""The capture lifecycle: a Redis job queue, one active capture per worker, images by capture id.

    Capture(pose|camera_id|region) -> record {status: pending} + XADD mcb:camera:jobs
                                   -> answer "pending" + capture_id (or the image, if it is
                                      done within MCB_CAMERA_INLINE_WAIT_S)
    worker loop (XREADGROUP, group "camera-worker", one job at a time):
        running -> [wait for after_operation_id to be terminal] -> driver.render
                -> completed (PNG + metadata on disk) | failed (the structured error)
    Capture(capture_id) -> completed: the image + metadata; pending/running: "pending";
                           failed: the stored error (capture_not_ready, camera_unavailable ...)

Records: Redis hash ``mcb:camera:capture:<id>`` (status, stage, project, error, timings;
kept 7 days). Images: ``<runtime>/camera/captures/<id>.png`` and ``<id>.json`` (metadata),
written atomically before the record says ``completed``. A capture id is new for every
request and its image is drawn for that request: an old picture is never handed out for a
new request.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
import uuid
from pathlib import Path
from typing import Any, cast

import grpc
import redis.asyncio as aioredis
from mcb.journal.v1 import journal_pb2, journal_pb2_grpc
from mcb_common.errors import ErrorCode, McbError
from mcb_common.files import atomic_write
from mcb_rpc.auth import call_metadata
from mcb_rpc.errors import from_rpc_error
from redis.exceptions import RedisError, ResponseError

from . import imageformat
from .capture import CaptureJob, Driver
from .preview import PlanOverlay

log = logging.getLogger("mcb.camera")

STREAM = "mcb:camera:jobs"  # the default; one stream per pool of like workers (CameraSettings.queue_stream)
GROUP = "camera-worker"
RECORD = "mcb:camera:capture:"
RECORD_TTL_S = 7 * 24 * 3600
# XREADGROUP's reply as the worker's client (RESP2, decode_responses) gives it: [(stream, [(id, fields)])]
_Streams = list[tuple[str, list[tuple[str, dict[str, str]]]]]
MAX_QUEUED = 16
TERMINAL = {"applied", "conflict", "cancelled", "failed", "recovery_required"}


def new_capture_id() -> str:
    return "cap-" + uuid.uuid4().hex[:20]


class OperationWaiter:
    """Asks the journal (service token) whether an operation is terminal."""

    def __init__(self, journal_addr: str, service_token: str | None):
        self.addr = journal_addr
        self.token = service_token
        self._channel: grpc.aio.Channel | None = None

    def _stub(self) -> journal_pb2_grpc.JournalStub:
        if self._channel is None:
            # a plan preview's entries can be large (PlanEntries: 3 ints + 1 per block)
            self._channel = grpc.aio.insecure_channel(self.addr, options=[
                ("grpc.max_receive_message_length", 256 * 1024 * 1024)])
        return journal_pb2_grpc.JournalStub(self._channel)

    async def status(self, project_id: str, op_id: str) -> journal_pb2.OperationReport:
        if not self.token:
            raise McbError(ErrorCode.UNAVAILABLE, "the camera worker has no service token to ask the "
                           "journal about operations (secrets/service.token)")
        try:
            return await self._stub().OperationStatus(
                journal_pb2.OperationRef(operation_id=op_id),
                metadata=call_metadata(self.token, project_id), timeout=10)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "journal") from None

    async def plan_entries(self, project_id: str, plan_id: str, box: tuple[int, ...] | None = None,
                           header_only: bool = False) -> journal_pb2.PlanEntriesResponse:
        """A prepared plan's entries inside ``box`` (journal PlanEntries, the project's own plan;
        not_found / stale_snapshot / world_changed as the journal says)."""
        if not self.token:
            raise McbError(ErrorCode.UNAVAILABLE, "the camera worker has no service token to ask the "
                           "journal about plans (secrets/service.token)")
        req = journal_pb2.PlanEntriesRequest(plan_id=plan_id, header_only=header_only)
        if box is not None:
            req.region.min.x, req.region.min.y, req.region.min.z = box[0], box[1], box[2]
            req.region.max.x, req.region.max.y, req.region.max.z = box[3], box[4], box[5]
        try:
            return await self._stub().PlanEntries(req, metadata=call_metadata(self.token, project_id), timeout=30)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "journal") from None

    async def wait_terminal(self, project_id: str, op_id: str, timeout_s: float,
                            progress: Any) -> journal_pb2.OperationReport:
        deadline = time.monotonic() + timeout_s
        delay = 0.1
        while True:
            rep = await self.status(project_id, op_id)
            if rep.state in TERMINAL:
                return rep
            if time.monotonic() > deadline:
                raise McbError(
                    ErrorCode.CAPTURE_NOT_READY,
                    f"operation {op_id} is still {rep.state} after {timeout_s:g} s; no picture was "
                    "taken. Check operation_status and capture again when it is finished",
                    details={"reason": "operation_not_terminal", "operation_id": op_id, "state": rep.state})
            await progress(f"waiting_for_operation:{rep.state}")
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 1.0)

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()


class CaptureQueue:
    def __init__(self, redis_client: aioredis.Redis, driver: Driver, root: Path, waiter: OperationWaiter,
                 readiness_timeout_s: float = 20.0, operation_timeout_s: float = 120.0,
                 inline_wait_s: float = 2.0, stream: str = STREAM):
        self.redis = redis_client
        self.stream = stream
        self.driver = driver
        self.dir = root / "captures"
        self.waiter = waiter
        self.readiness_timeout_s = readiness_timeout_s
        self.operation_timeout_s = operation_timeout_s
        self.inline_wait_s = inline_wait_s
        self.consumer = f"w-{os.getpid()}-{uuid.uuid4().hex[:6]}"
        self._task: asyncio.Task[None] | None = None
        self._done: dict[str, asyncio.Event] = {}
        self.active: str | None = None

    # ---- submitting and polling ------------------------------------------------------------

    async def _ensure_group(self) -> None:
        try:
            await self.redis.xgroup_create(self.stream, GROUP, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    async def submit(self, job: CaptureJob) -> str:
        try:
            depth = await self.redis.xlen(self.stream)
            info = await self.redis.xpending(self.stream, GROUP) if depth else {"pending": 0}
            lag = await self._lag()
            if lag + int(info.get("pending", 0) if isinstance(info, dict) else 0) >= MAX_QUEUED:
                raise McbError(ErrorCode.BUSY, f"the camera worker already has {MAX_QUEUED} captures "
                               "queued; poll the pending ones before asking for more",
                               details={"queued": lag})
            now = int(time.time() * 1000)
            job.requested_at_ms = now
            key = RECORD + job.capture_id
            self._done[job.capture_id] = asyncio.Event()
            await self.redis.hset(key, mapping={
                "status": "pending", "stage": "queued", "project_id": job.project_id,
                "created_ms": now, "job": json.dumps(job.to_dict())})
            await self.redis.expire(key, RECORD_TTL_S)
            await self.redis.xadd(self.stream, {"capture_id": job.capture_id}, maxlen=10_000, approximate=True)
        except (RedisError, OSError) as exc:
            raise McbError(ErrorCode.UNAVAILABLE, "the camera job queue (Redis) is unreachable; "
                           f"retry in a moment ({exc.__class__.__name__})") from exc
        return job.capture_id

    async def _lag(self) -> int:
        try:
            groups = await self.redis.xinfo_groups(self.stream)
        except ResponseError:
            return 0
        for g in groups:
            if g.get("name") == GROUP:
                lag = g.get("lag")
                return int(lag) if lag is not None else 0
        return 0

    async def wait_inline(self, capture_id: str) -> None:
        ev = self._done.get(capture_id)
        if ev is None or self.inline_wait_s <= 0:
            return
        try:
            await asyncio.wait_for(ev.wait(), self.inline_wait_s)
        except TimeoutError:
            pass

    async def record(self, project_id: str, capture_id: str) -> dict[str, Any]:
        """The capture's record; ``not_found`` if unknown or of another project."""
        try:
            rec = cast("dict[str, str]", await self.redis.hgetall(RECORD + capture_id))  # decoded
        except (RedisError, OSError) as exc:
            rec = {}
            log.warning("redis unreachable while polling %s: %s", capture_id, exc.__class__.__name__)
        if not rec:
            meta = self._load_meta(capture_id)  # Redis lost it (restart): the disk still knows
            if meta is not None:
                rec = {"status": "completed", "project_id": meta.get("projectId", "")}
        if not rec or (project_id and rec.get("project_id") != project_id):
            raise McbError(ErrorCode.NOT_FOUND, f"no capture {capture_id!r} in this project; start one "
                           "with camera_capture(pose | camera_id | region)",
                           details={"capture_id": capture_id})
        return rec

    def image(self, capture_id: str) -> tuple[bytes, dict[str, Any]]:
        meta = self._load_meta(capture_id)
        try:
            ext = imageformat.FORMATS[(meta or {}).get("format") or "png"][1]
            data = (self.dir / f"{capture_id}.{ext}").read_bytes()
        except (FileNotFoundError, KeyError):
            data = None
        if meta is None or data is None:
            raise McbError(ErrorCode.NOT_FOUND, f"the image of capture {capture_id} is no longer stored",
                           details={"capture_id": capture_id})
        return data, meta

    def _load_meta(self, capture_id: str) -> dict[str, Any] | None:
        if not capture_id.replace("-", "").isalnum():
            return None
        try:
            return json.loads((self.dir / f"{capture_id}.json").read_text())
        except (FileNotFoundError, ValueError):
            return None

    # ---- the worker loop -----------------------------------------------------------------

    async def start(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self.waiter.close()

    async def _loop(self) -> None:
        ready = False
        while True:
            try:
                if not ready:
                    await self._ensure_group()
                    # jobs a crashed worker left claimed: take them over (at-least-once)
                    try:
                        await self.redis.xautoclaim(self.stream, GROUP, self.consumer, min_idle_time=30_000, count=16)
                    except ResponseError:
                        pass
                    ready = True
                got = cast(_Streams, await self.redis.xreadgroup(GROUP, self.consumer, {self.stream: ">"}, count=1,
                                                                 block=1000))
                if not got:
                    got = cast(_Streams, await self.redis.xreadgroup(GROUP, self.consumer, {self.stream: "0"}, count=1))
                    if not got or not got[0][1]:
                        continue
                for _stream, entries in got:
                    for entry_id, fields in entries:
                        await self._process(fields.get("capture_id", ""))
                        await self.redis.xack(self.stream, GROUP, entry_id)
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                ready = False
                log.warning("camera job loop: redis unavailable (%s); retrying", exc.__class__.__name__)
                await asyncio.sleep(1.0)
            except Exception:  # noqa: BLE001 - never let the loop die
                log.exception("camera job loop error")
                await asyncio.sleep(0.5)

    async def _set(self, capture_id: str, **fields: Any) -> None:
        await self.redis.hset(RECORD + capture_id, mapping={k: v if isinstance(v, str) else json.dumps(v)
                                                            for k, v in fields.items()})

    async def _process(self, capture_id: str) -> None:
        rec = await self.redis.hgetall(RECORD + capture_id)
        if not rec or rec.get("status") not in ("pending", "running"):
            return  # unknown or already decided (a redelivery): nothing to do
        job = CaptureJob.from_dict(json.loads(rec["job"]))
        job.readiness_timeout_s = self.readiness_timeout_s
        self.active = capture_id
        started = time.monotonic()
        await self._set(capture_id, status="running", stage="started", started_ms=str(int(time.time() * 1000)))

        async def progress(stage: str) -> None:
            await self._set(capture_id, stage=stage)

        try:
            if job.after_operation_id:
                rep = await self.waiter.wait_terminal(job.project_id, job.after_operation_id,
                                                      self.operation_timeout_s, progress)
                job.operation = {"operationId": rep.operation_id, "state": rep.state,
                                 "written": rep.written, "updatedAt": rep.updated_at}
            if job.plan_id:
                async def fetch(box: tuple[int, ...]) -> PlanOverlay:
                    return PlanOverlay.from_pb(await self.waiter.plan_entries(job.project_id, job.plan_id, box))

                job.plan_fetch = fetch
            out = await self.driver.render(job, progress)
            meta = dict(out.metadata)
            revisions = meta.pop("_revisions", None)
            meta.update({
                "captureId": capture_id, "projectId": job.project_id, "cameraId": job.camera_id,
                "pose": job.pose, "width": out.width, "height": out.height,
                "mimeType": imageformat.FORMATS[job.format or "png"][0], "format": job.format or "png",
                "requestedAtMs": job.requested_at_ms, "capturedAtMs": int(time.time() * 1000),
                "operation": job.operation or None, "afterOperationId": job.after_operation_id,
                **({"beforeOperationId": job.before_operation_id} if job.before_operation_id else {}),
                **({"planId": job.plan_id, "compare": job.compare} if job.plan_id else {}),
                "latencyMs": round((time.monotonic() - started) * 1000, 1),
            })
            meta.setdefault("serverRevisionVerified", False)
            data = await asyncio.to_thread(imageformat.encode, out.png, job.format)
            self._write(capture_id, data, {**meta, "revisions": revisions} if revisions else meta)
            await self._set(capture_id, status="completed", stage="done",
                            finished_ms=str(int(time.time() * 1000)))
            log.info("capture %s completed in %.0f ms (stale=%s)", capture_id, meta["latencyMs"], meta.get("stale"))
        except McbError as err:
            await self._set(capture_id, status="failed", stage="failed", error=err.to_dict(),
                            finished_ms=str(int(time.time() * 1000)))
            log.info("capture %s failed: %s", capture_id, err.code)
        except Exception as exc:  # noqa: BLE001 - record a bug as an internal failure
            log.exception("capture %s crashed", capture_id)
            crash = McbError(ErrorCode.INTERNAL, f"the capture failed inside the camera worker "
                             f"({exc.__class__.__name__}); see its log")
            await self._set(capture_id, status="failed", stage="failed", error=crash.to_dict())
        finally:
            self.active = None
            ev = self._done.pop(capture_id, None)
            if ev is not None:
                ev.set()

    def _write(self, capture_id: str, data: bytes, meta: dict[str, Any]) -> None:
        # the image, then its metadata; on a full disk (`unavailable`) neither stays
        png_path = self.dir / f"{capture_id}.{imageformat.FORMATS[meta.get('format') or 'png'][1]}"
        atomic_write(png_path, data, who="the camera worker")
        try:
            atomic_write(self.dir / f"{capture_id}.json", json.dumps(meta, indent=1).encode(), who="the camera worker")
        except BaseException:
            png_path.unlink(missing_ok=True)
            raise
