"""The capture lifecycle: an in-process job queue, one active capture per worker, images by capture id.

    Capture(pose|camera_id|region) -> [after_operation_id / plan_id known to the journal]
                                   -> record {status: pending} + the job on this process's queue
                                   -> answer "pending" + capture_id (or the image, if it is
                                      done within MCB_CAMERA_INLINE_WAIT_S)
    job loop (an asyncio task of this process, one job at a time):
        running -> [wait for after_operation_id to be terminal] -> driver.render
                -> completed (image + metadata on disk) | failed (the structured error)
    Capture(capture_id) -> completed: the image + metadata; pending/running: "pending";
                           failed: the stored error (capture_not_ready, camera_unavailable ...)

The jobs never leave the process that took the request (nothing else works on them), so they wait
in an ``asyncio.Queue``; a worker that stops or dies loses its queued jobs, and polling one of them
answers ``camera_unavailable`` ("capture again"). Redis holds what crosses services: the records,
which the dashboard reads, and the heartbeat.

Records: Redis hash ``mcb:camera:capture:<id>`` (status, stage, project, worker, error, timings;
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
from redis.exceptions import RedisError

from . import imageformat
from .capture import CaptureJob, Driver
from .preview import PlanOverlay

log = logging.getLogger("mcb.camera")

RECORD = "mcb:camera:capture:"
RECORD_TTL_S = 7 * 24 * 3600
MAX_QUEUED = 16  # captures waiting or being taken, per worker
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
            self._channel = grpc.aio.insecure_channel(
                self.addr, options=[("grpc.max_receive_message_length", 256 * 1024 * 1024)]
            )
        return journal_pb2_grpc.JournalStub(self._channel)

    async def status(self, project_id: str, op_id: str) -> journal_pb2.OperationReport:
        if not self.token:
            raise McbError(
                ErrorCode.UNAVAILABLE,
                "the camera worker has no service token to ask the journal about operations (secrets/service.token)",
            )
        try:
            return await self._stub().OperationStatus(
                journal_pb2.OperationRef(operation_id=op_id), metadata=call_metadata(self.token, project_id), timeout=10
            )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "journal") from None

    async def plan_entries(
        self, project_id: str, plan_id: str, box: tuple[int, ...] | None = None, header_only: bool = False
    ) -> journal_pb2.PlanEntriesResponse:
        """A prepared plan's entries inside ``box`` (journal PlanEntries, the project's own plan;
        not_found / stale_snapshot / world_changed as the journal says)."""
        if not self.token:
            raise McbError(
                ErrorCode.UNAVAILABLE,
                "the camera worker has no service token to ask the journal about plans (secrets/service.token)",
            )
        req = journal_pb2.PlanEntriesRequest(plan_id=plan_id, header_only=header_only)
        if box is not None:
            req.region.min.x, req.region.min.y, req.region.min.z = box[0], box[1], box[2]
            req.region.max.x, req.region.max.y, req.region.max.z = box[3], box[4], box[5]
        try:
            return await self._stub().PlanEntries(req, metadata=call_metadata(self.token, project_id), timeout=30)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc, "journal") from None

    async def wait_terminal(
        self, project_id: str, op_id: str, timeout_s: float, progress: Any
    ) -> journal_pb2.OperationReport:
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
                    details={"reason": "operation_not_terminal", "operation_id": op_id, "state": rep.state},
                )
            await progress(f"waiting_for_operation:{rep.state}")
            await asyncio.sleep(delay)
            delay = min(delay * 1.5, 1.0)

    async def close(self) -> None:
        if self._channel is not None:
            await self._channel.close()


class CaptureQueue:
    def __init__(
        self,
        redis_client: aioredis.Redis,
        driver: Driver,
        root: Path,
        waiter: OperationWaiter,
        readiness_timeout_s: float = 20.0,
        operation_timeout_s: float = 120.0,
        inline_wait_s: float = 2.0,
    ):
        self.redis = redis_client
        self.driver = driver
        self.dir = root / "captures"
        self.waiter = waiter
        self.readiness_timeout_s = readiness_timeout_s
        self.operation_timeout_s = operation_timeout_s
        self.inline_wait_s = inline_wait_s
        self.worker = f"w-{os.getpid()}-{uuid.uuid4().hex[:6]}"  # in each record: who takes it
        self._jobs: asyncio.Queue[CaptureJob] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._done: dict[str, asyncio.Event] = {}  # every job of this process not finished yet
        self.active: str | None = None

    @property
    def queued(self) -> int:
        """Captures waiting for their turn (the active one not counted)."""
        return self._jobs.qsize()

    # ---- submitting and polling ------------------------------------------------------------

    async def check_references(self, job: CaptureJob) -> None:
        """Fail fast on what the job refers to: an unknown after_operation_id (waiting for it
        happens in the job), a plan the journal does not answer for this project, a preview on
        a driver that cannot draw one."""
        if job.after_operation_id:
            await self.waiter.status(job.project_id, job.after_operation_id)
        if not job.plan_id:
            return
        if self.driver.name != "builtin":
            raise McbError(
                ErrorCode.INVALID_REQUEST,
                f"plan previews are drawn by the built-in renderer only; this worker's driver is "
                f"{self.driver.name or 'none'!r}. Check the plan with its summary, or apply it and "
                "capture with after_operation_id",
                details={"field": "plan_id", "reason": "preview_needs_builtin"},
            )
        await self.waiter.plan_entries(job.project_id, job.plan_id, header_only=True)

    async def driver_available(self) -> None:
        """Refuse at once when no driver can take pictures (rather than queueing in vain)."""
        if self.driver.state() in ("no_driver", "link_lost"):
            # render() raises the driver's own camera_unavailable with its explanation
            await self.driver.render(CaptureJob("", "", {}), None)

    async def capture(self, job: CaptureJob) -> str:
        """Check, queue and (for up to inline_wait_s) wait for a new capture; its id."""
        await self.check_references(job)
        await self.driver_available()
        cid = await self.submit(job)
        await self.wait_inline(cid)
        return cid

    async def submit(self, job: CaptureJob) -> str:
        waiting = self.queued + (1 if self.active else 0)
        if waiting >= MAX_QUEUED:
            raise McbError(
                ErrorCode.BUSY,
                f"the camera worker already has {MAX_QUEUED} captures "
                "queued; poll the pending ones before asking for more",
                details={"queued": self.queued},
            )
        try:
            now = int(time.time() * 1000)
            job.requested_at_ms = now
            key = RECORD + job.capture_id
            await self.redis.hset(
                key,
                mapping={
                    "status": "pending",
                    "stage": "queued",
                    "project_id": job.project_id,
                    "worker": self.worker,
                    "created_ms": now,
                    "job": json.dumps(job.to_dict()),
                },
            )
            await self.redis.expire(key, RECORD_TTL_S)
        except (RedisError, OSError) as exc:
            raise McbError(
                ErrorCode.UNAVAILABLE,
                f"the camera's capture records (Redis) are unreachable; retry in a moment ({exc.__class__.__name__})",
            ) from exc
        self._done[job.capture_id] = asyncio.Event()
        self._jobs.put_nowait(job)
        return job.capture_id

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
            raise McbError(
                ErrorCode.NOT_FOUND,
                f"no capture {capture_id!r} in this project; start one with camera_capture(pose | camera_id | region)",
                details={"capture_id": capture_id},
            )
        if rec.get("status") in ("pending", "running") and capture_id not in self._done:
            # not this process's (any more): its worker stopped before taking it
            lost = McbError(
                ErrorCode.CAMERA_UNAVAILABLE,
                f"capture {capture_id} was lost: the camera worker that "
                "took it stopped before it was taken; capture again",
            )
            rec = {**rec, "status": "failed", "stage": "failed", "error": json.dumps(lost.to_dict())}
            try:
                await self._set(capture_id, status="failed", stage="failed", error=lost.to_dict())
            except (RedisError, OSError):
                pass
        return rec

    def image(self, capture_id: str) -> tuple[bytes, dict[str, Any]]:
        meta = self._load_meta(capture_id)
        try:
            ext = imageformat.FORMATS[(meta or {}).get("format") or "png"][1]
            data = (self.dir / f"{capture_id}.{ext}").read_bytes()
        except (FileNotFoundError, KeyError):
            data = None
        if meta is None or data is None:
            raise McbError(
                ErrorCode.NOT_FOUND,
                f"the image of capture {capture_id} is no longer stored",
                details={"capture_id": capture_id},
            )
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
        while True:
            job = await self._jobs.get()
            try:
                await self._process(job)
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:  # the record cannot be written: the poll says "lost"
                log.warning("capture %s: redis unavailable (%s); dropped", job.capture_id, exc.__class__.__name__)
            except Exception:  # noqa: BLE001 - never let the loop die
                log.exception("camera job loop error")
            finally:
                ev = self._done.pop(job.capture_id, None)
                if ev is not None:
                    ev.set()

    async def _set(self, capture_id: str, **fields: Any) -> None:
        await self.redis.hset(
            RECORD + capture_id, mapping={k: v if isinstance(v, str) else json.dumps(v) for k, v in fields.items()}
        )

    async def _process(self, job: CaptureJob) -> None:
        capture_id = job.capture_id
        job.readiness_timeout_s = self.readiness_timeout_s
        self.active = capture_id
        started = time.monotonic()
        await self._set(capture_id, status="running", stage="started", started_ms=str(int(time.time() * 1000)))

        async def progress(stage: str) -> None:
            await self._set(capture_id, stage=stage)

        try:
            if job.after_operation_id:
                rep = await self.waiter.wait_terminal(
                    job.project_id, job.after_operation_id, self.operation_timeout_s, progress
                )
                job.operation = {
                    "operationId": rep.operation_id,
                    "state": rep.state,
                    "written": rep.written,
                    "updatedAt": rep.updated_at,
                }
            if job.plan_id:

                async def fetch(box: tuple[int, ...]) -> PlanOverlay:
                    return PlanOverlay.from_pb(await self.waiter.plan_entries(job.project_id, job.plan_id, box))

                job.plan_fetch = fetch
            out = await self.driver.render(job, progress)
            meta = dict(out.metadata)
            revisions = meta.pop("_revisions", None)
            meta.update(
                {
                    "captureId": capture_id,
                    "projectId": job.project_id,
                    "cameraId": job.camera_id,
                    "pose": job.pose,
                    "width": out.width,
                    "height": out.height,
                    "mimeType": imageformat.FORMATS[job.format or "png"][0],
                    "format": job.format or "png",
                    "requestedAtMs": job.requested_at_ms,
                    "capturedAtMs": int(time.time() * 1000),
                    "operation": job.operation or None,
                    "afterOperationId": job.after_operation_id,
                    **({"beforeOperationId": job.before_operation_id} if job.before_operation_id else {}),
                    **({"planId": job.plan_id, "compare": job.compare} if job.plan_id else {}),
                    "latencyMs": round((time.monotonic() - started) * 1000, 1),
                }
            )
            meta.setdefault("serverRevisionVerified", False)
            data = await asyncio.to_thread(imageformat.encode, out.png, job.format)
            self._write(capture_id, data, {**meta, "revisions": revisions} if revisions else meta)
            await self._set(capture_id, status="completed", stage="done", finished_ms=str(int(time.time() * 1000)))
            log.info("capture %s completed in %.0f ms (stale=%s)", capture_id, meta["latencyMs"], meta.get("stale"))
        except McbError as err:
            await self._set(
                capture_id,
                status="failed",
                stage="failed",
                error=err.to_dict(),
                finished_ms=str(int(time.time() * 1000)),
            )
            log.info("capture %s failed: %s", capture_id, err.code)
        except Exception as exc:  # noqa: BLE001 - record a bug as an internal failure
            log.exception("capture %s crashed", capture_id)
            crash = McbError(
                ErrorCode.INTERNAL,
                f"the capture failed inside the camera worker ({exc.__class__.__name__}); see its log",
            )
            await self._set(capture_id, status="failed", stage="failed", error=crash.to_dict())
        finally:
            self.active = None

    def _write(self, capture_id: str, data: bytes, meta: dict[str, Any]) -> None:
        # the image, then its metadata; on a full disk (`unavailable`) neither stays
        png_path = self.dir / f"{capture_id}.{imageformat.FORMATS[meta.get('format') or 'png'][1]}"
        atomic_write(png_path, data, who="the camera worker")
        try:
            atomic_write(self.dir / f"{capture_id}.json", json.dumps(meta, indent=1).encode(), who="the camera worker")
        except BaseException:
            png_path.unlink(missing_ok=True)
            raise
