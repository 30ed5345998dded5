"""The Camera gRPC servicer and the worker's health, wired to Redis and a capture driver.

Every RPC: bearer token -> principal (agent, admin or service) by SCOPES, validate the request
(``poses``), then call the core: ``framing`` (automatic views, door search, a pose inside a
block), ``jobs.CaptureQueue`` (captures), ``store`` (saved cameras), ``diff``. Authentication and
the one translation of every failure are the shared gRPC boundary's (``mcb_rpc.boundary``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import redis.asyncio as aioredis
from mcb.camera.v1 import camera_pb2, camera_pb2_grpc
from mcb_common.errors import ErrorCode, McbError, invalid
from mcb_rpc.auth import Caller
from mcb_rpc.boundary import grpc_boundary
from mcb_rpc.tokens import TokenTable
from redis.exceptions import RedisError

from . import __version__, imageformat, png
from . import diff as imgdiff
from .capture import CaptureJob, Driver, capture_metadata
from .framing import Framing
from .jobs import CaptureQueue, new_capture_id
from .poses import VIEWS, pose_dict, region_box, sized, validate_pose
from .store import CameraStore

log = logging.getLogger("mcb.camera")

# Who may call what (docs/architecture.md, "Who may call what"); the journal and planner keep
# tables of the same shape. service: the journal and tools acting for a project.
SCOPES: dict[str, tuple[str, ...]] = {
    "ListCameras": ("agent", "admin", "service"),
    "Capture": ("agent", "admin", "service"),
    "SaveCamera": ("agent", "admin"),
    "AutoViewpoints": ("agent", "admin", "service"),
    "DiffCaptures": ("agent", "admin", "service"),
}
HEARTBEAT_KEY = "mcb:camera:worker"
HEARTBEAT_EVERY_S = 5.0
HEARTBEAT_TTL_S = 15
REDIS_PING_TIMEOUT_S = 1.5


def _project(caller: Caller, requested: str) -> str:
    """The project a call is about. An agent's project comes from trusted metadata only."""
    if caller.principal == "agent" and caller.project_id and requested and requested != caller.project_id:
        raise McbError(ErrorCode.PERMISSION_DENIED, "the agent token may only use the project configured for it")
    return requested or caller.project_id


@grpc_boundary("camera", SCOPES)
class CameraService(camera_pb2_grpc.CameraServicer):
    def __init__(
        self,
        tokens: TokenTable,
        store: CameraStore,
        driver: Driver,
        redis_client: aioredis.Redis,
        queue: CaptureQueue | None = None,
        world: Any = None,
    ):
        self.tokens = tokens
        self.store = store
        self.driver = driver
        self.redis = redis_client
        self.queue = queue
        self.framing = Framing(world)  # world: WorldClient for auto viewpoints (free-pose checks)
        self._heartbeat: asyncio.Task[None] | None = None

    # --- RPCs -----------------------------------------------------------------------------

    async def ListCameras(
        self, request: camera_pb2.ListCamerasRequest, caller: Caller
    ) -> camera_pb2.ListCamerasResponse:
        project = _project(caller, request.project_id)
        return camera_pb2.ListCamerasResponse(
            cameras=self.store.list(project),
            worker_state=self.driver.state(),
            driver=self.driver.name,
        )

    async def Capture(self, request: camera_pb2.CaptureRequest, caller: Caller) -> camera_pb2.CaptureResponse:
        project = _project(caller, request.project_id)
        given = [
            n
            for n, v in (
                ("camera_id", request.camera_id),
                ("pose", request.HasField("pose")),
                ("capture_id", request.capture_id),
            )
            if v
        ]
        auto = not given and request.HasField("region")
        if len(given) != 1 and not auto:
            raise invalid(
                "give exactly one of camera_id (a saved camera), pose (x, y, z, yaw, pitch, "
                "optional fov/width/height), region (an automatic viewpoint) or capture_id "
                "(to poll a started capture)",
                given=given,
            )
        if request.capture_id:
            return await self._poll(project, request.capture_id)
        region = region_box(request.region) if request.HasField("region") else None
        if request.view not in VIEWS:
            raise invalid(f"view must be one of {', '.join(v for v in VIEWS if v)}", field="view")
        if request.view and region is None:
            raise invalid("view needs a region {min, max}", field="view")
        if request.camera_id:
            cam = self.store.get(project, request.camera_id)
            if cam is None:
                raise McbError(
                    ErrorCode.NOT_FOUND,
                    f"no saved camera {request.camera_id!r}; camera_list shows the "
                    "saved cameras, or pass a pose instead",
                    details={"camera_id": request.camera_id},
                )
            try:
                pose = validate_pose(cam.pose)
            except McbError as e:
                # saved under older rules (e.g. a FOV outside today's 30..110)
                raise McbError(
                    e.code,
                    f"saved camera {request.camera_id!r}: {e.message}; save it again "
                    "with camera_save and a pose that fits",
                    details={**e.details, "camera_id": request.camera_id},
                ) from e
        elif request.HasField("pose"):
            pose = validate_pose(request.pose)
        else:
            assert region is not None
            pose = await self.framing.auto_pose(region, request.view or "diagonal")
        pose = sized(pose, request.width, request.height)
        builtin = self.driver.name == "builtin"
        if (
            given and given[0] in ("camera_id", "pose") and not (request.view in ("top", "side") and builtin)
        ):  # orthographic: no eye
            await self.framing.refuse_pose_in_block(pose, region, request.camera_id, draws_region_only=builtin)
        if request.format not in ("", *imageformat.FORMATS):
            raise invalid(f"format must be one of {', '.join(imageformat.FORMATS)}", field="format")
        if request.compare and not request.plan_id:
            raise invalid("compare needs a plan_id (before | after that plan)", field="compare")
        if self.queue is None:
            raise McbError(ErrorCode.CAMERA_UNAVAILABLE, "the camera worker has no capture queue")
        expand = 0
        if region is not None and not given and (request.view or "diagonal") in ("entrance", "opposite", "diagonal"):
            # an automatic view shows the region in its surroundings (ground, neighbours)
            expand = max(6, (max(region[3] - region[0], region[5] - region[2]) + 1) // 2)
        job = CaptureJob(
            capture_id=new_capture_id(),
            project_id=project,
            pose=pose_dict(pose),
            region=region,
            view=request.view if request.view in ("top", "side") else "",
            camera_id=request.camera_id,
            after_operation_id=request.after_operation_id,
            before_operation_id=request.before_operation_id,
            plan_id=request.plan_id,
            compare=request.compare,
            expand=expand,
            format=request.format or "png",
        )
        return await self._poll(project, await self.queue.capture(job))

    async def _poll(self, project: str, capture_id: str) -> camera_pb2.CaptureResponse:
        assert self.queue is not None
        rec = await self.queue.record(project, capture_id)
        status = rec.get("status")
        if status == "completed":
            data, meta = self.queue.image(capture_id)
            typed = capture_metadata(meta)
            return camera_pb2.CaptureResponse(
                status="completed",
                capture_id=capture_id,
                image=data,
                mime_type=typed.mime_type or "image/png",
                metadata=typed,
            )
        if status == "failed":
            try:
                err = McbError.from_dict(json.loads(rec.get("error") or "{}"))
            except (ValueError, TypeError, KeyError):
                err = McbError(ErrorCode.INTERNAL, f"capture {capture_id} failed")
            details = dict(err.details or {})
            details["capture_id"] = capture_id
            raise McbError(err.code, err.message, details=details)
        pending = camera_pb2.CaptureMetadata(
            stage=rec.get("stage", ""), hint="call camera_capture with this capture_id in a second or two"
        )
        return camera_pb2.CaptureResponse(status="pending", capture_id=capture_id, metadata=pending)

    async def SaveCamera(self, request: camera_pb2.SaveCameraRequest, caller: Caller) -> camera_pb2.CameraInfo:
        project = _project(caller, request.project_id)
        cam = camera_pb2.CameraInfo()
        cam.CopyFrom(request.camera)
        cam.pose.CopyFrom(validate_pose(request.camera.pose))
        return self.store.save(project, cam)

    async def AutoViewpoints(
        self, request: camera_pb2.AutoViewpointsRequest, caller: Caller
    ) -> camera_pb2.AutoViewpointsResponse:
        if not request.HasField("region"):
            raise invalid("region {min, max} is required", field="region")
        return camera_pb2.AutoViewpointsResponse(viewpoints=await self.framing.viewpoints(region_box(request.region)))

    async def DiffCaptures(
        self, request: camera_pb2.DiffCapturesRequest, caller: Caller
    ) -> camera_pb2.DiffCapturesResponse:
        project = _project(caller, request.project_id)
        assert self.queue is not None
        imgs = []
        for cid in (request.capture_a, request.capture_b):
            rec = await self.queue.record(project, cid)
            if rec.get("status") != "completed":
                raise invalid(f"capture {cid} is {rec.get('status')}; only completed captures can be compared")
            imgs.append(imageformat.decode(self.queue.image(cid)[0]))
        try:
            d = imgdiff.diff(imgs[0], imgs[1])
        except ValueError as exc:
            raise invalid(str(exc)) from None
        meta = camera_pb2.DiffMetadata(
            capture_a=request.capture_a,
            capture_b=request.capture_b,
            threshold=imgdiff.THRESHOLD,
            note="a signal of visible change, not a quality score",
        )
        return camera_pb2.DiffCapturesResponse(
            changed_fraction=d["changed_fraction"],
            mean_abs_diff=d["mean_abs_diff"],
            bbox=d["bbox"],
            image=png.encode(d["image"]),
            mime_type="image/png",
            metadata=meta,
        )

    # --- health and Redis -------------------------------------------------------------------

    async def redis_status(self) -> dict[str, Any]:
        try:
            await asyncio.wait_for(self.redis.ping(), REDIS_PING_TIMEOUT_S)
            return {"ok": True}
        except (TimeoutError, RedisError, OSError) as exc:
            return {"ok": False, "error": f"redis unreachable ({exc.__class__.__name__})"}

    async def health(self) -> dict[str, Any]:
        r = await self.redis_status()
        return {
            "status": "ok" if r["ok"] else "degraded",
            "service": "camera-worker",
            "version": __version__,
            "worker_state": self.driver.state(),
            "driver": self.driver.name,
            "redis": r,
            "active_capture": self.queue.active if self.queue else None,
            "queued_captures": self.queue.queued if self.queue else None,
            "link": self.driver.health() if hasattr(self.driver, "health") else None,
        }

    async def _beat_once(self) -> None:
        body = json.dumps(
            {"worker_state": self.driver.state(), "driver": self.driver.name, "version": __version__, "at": time.time()}
        )
        await asyncio.wait_for(self.redis.set(HEARTBEAT_KEY, body, ex=HEARTBEAT_TTL_S), REDIS_PING_TIMEOUT_S)

    async def _beat_forever(self) -> None:
        """Publish the worker's state for the bridge and the dashboard (expires if we die)."""
        while True:
            try:
                await self._beat_once()
            except (TimeoutError, RedisError, OSError) as exc:
                log.warning("camera heartbeat to redis failed: %s", exc.__class__.__name__)
            await asyncio.sleep(HEARTBEAT_EVERY_S)

    async def start(self) -> None:
        await self.driver.start()
        if self.queue is not None:
            await self.queue.start()
        self._heartbeat = asyncio.create_task(self._beat_forever())

    async def stop(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            await asyncio.gather(self._heartbeat, return_exceptions=True)
        if self.queue is not None:
            await self.queue.stop()
        await self.driver.stop()
        try:
            await asyncio.wait_for(self.redis.delete(HEARTBEAT_KEY), REDIS_PING_TIMEOUT_S)
        except (TimeoutError, RedisError, OSError):
            pass
        await self.redis.aclose()
