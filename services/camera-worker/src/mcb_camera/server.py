"""The Camera gRPC servicer and the worker's health, wired to Redis and a capture driver.

Every RPC: bearer token -> principal (agent, admin or service), validate the request, then ask
the driver. Every failure is an ``McbError`` translated exactly once, by
``mcb_rpc.errors.abort_with``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from typing import Any

import grpc
import redis.asyncio as aioredis
from mcb.camera.v1 import camera_pb2, camera_pb2_grpc
from mcb_common.errors import ErrorCode, McbError, invalid
from mcb_rpc.auth import Caller, caller_from_context
from mcb_rpc.errors import abort_with
from mcb_rpc.tokens import TokenTable
from redis.exceptions import RedisError

from . import __version__
from .drivers import Driver
from .store import CameraStore

log = logging.getLogger("mcb.camera")

ALLOWED = ("agent", "admin", "service")
HEARTBEAT_KEY = "mcb:camera:worker"
HEARTBEAT_EVERY_S = 5.0
HEARTBEAT_TTL_S = 15
REDIS_PING_TIMEOUT_S = 1.5

DEFAULT_WIDTH, DEFAULT_HEIGHT, DEFAULT_FOV = 1280, 720, 70.0
MAX_WIDTH, MAX_HEIGHT = 3840, 2160


def _project(caller: Caller, requested: str) -> str:
    """The project a call is about. An agent's project comes from trusted metadata only."""
    if caller.principal == "agent" and caller.project_id and requested and requested != caller.project_id:
        raise McbError(ErrorCode.PERMISSION_DENIED,
                       "the agent token may only use the project configured for it")
    return requested or caller.project_id


def validate_pose(pose: camera_pb2.Pose) -> camera_pb2.Pose:
    """Check a free pose and fill the defaults (1280x720, FOV 70)."""
    for name in ("x", "y", "z", "yaw", "pitch", "fov"):
        if not math.isfinite(getattr(pose, name)):
            raise invalid(f"pose.{name} must be a finite number", field=f"pose.{name}")
    if not -90.0 <= pose.pitch <= 90.0:
        raise invalid("pose.pitch must be between -90 (up) and 90 (down) degrees", field="pose.pitch")
    if pose.fov and not 1.0 <= pose.fov <= 170.0:
        raise invalid("pose.fov must be between 1 and 170 degrees (0 means the default 70)",
                      field="pose.fov")
    if pose.width and not 16 <= pose.width <= MAX_WIDTH:
        raise invalid(f"pose.width must be between 16 and {MAX_WIDTH} (0 means {DEFAULT_WIDTH})",
                      field="pose.width")
    if pose.height and not 16 <= pose.height <= MAX_HEIGHT:
        raise invalid(f"pose.height must be between 16 and {MAX_HEIGHT} (0 means {DEFAULT_HEIGHT})",
                      field="pose.height")
    out = camera_pb2.Pose()
    out.CopyFrom(pose)
    out.fov = pose.fov or DEFAULT_FOV
    out.width = pose.width or DEFAULT_WIDTH
    out.height = pose.height or DEFAULT_HEIGHT
    return out


class CameraService(camera_pb2_grpc.CameraServicer):
    def __init__(self, tokens: TokenTable, store: CameraStore, driver: Driver,
                 redis_client: aioredis.Redis):
        self.tokens = tokens
        self.store = store
        self.driver = driver
        self.redis = redis_client
        self.started = time.time()
        self._heartbeat: asyncio.Task[None] | None = None

    # --- RPCs -----------------------------------------------------------------------------

    async def ListCameras(self, request: camera_pb2.ListCamerasRequest,
                          context: grpc.aio.ServicerContext) -> camera_pb2.ListCamerasResponse:
        try:
            caller = caller_from_context(context, self.tokens, ALLOWED)
            project = _project(caller, request.project_id)
            return camera_pb2.ListCamerasResponse(
                cameras=self.store.list(project),
                worker_state=self.driver.state(),
                driver=self.driver.name,
            )
        except McbError as err:
            await abort_with(context, err)
            raise AssertionError("unreachable") from err

    async def Capture(self, request: camera_pb2.CaptureRequest,
                      context: grpc.aio.ServicerContext) -> camera_pb2.CaptureResponse:
        try:
            caller = caller_from_context(context, self.tokens, ALLOWED)
            project = _project(caller, request.project_id)
            given = [n for n, v in (("camera_id", request.camera_id),
                                    ("pose", request.HasField("pose")),
                                    ("capture_id", request.capture_id)) if v]
            if len(given) != 1:
                raise invalid(
                    "give exactly one of camera_id (a saved camera), pose (x, y, z, yaw, pitch, "
                    "optional fov/width/height) or capture_id (to poll a started capture)",
                    given=given,
                )
            if request.capture_id:
                return await self.driver.poll(project, request.capture_id)
            if request.camera_id:
                cam = self.store.get(project, request.camera_id)
                if cam is None:
                    raise McbError(ErrorCode.NOT_FOUND,
                                   f"no saved camera {request.camera_id!r}; camera_list shows the "
                                   "saved cameras, or pass a pose instead",
                                   details={"camera_id": request.camera_id})
                pose = validate_pose(cam.pose)
            else:
                pose = validate_pose(request.pose)
            return await self.driver.capture(project, pose, request.after_operation_id)
        except McbError as err:
            await abort_with(context, err)
            raise AssertionError("unreachable") from err

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
            "uptime_s": round(time.time() - self.started, 1),
        }

    async def _beat_once(self) -> None:
        body = json.dumps({"worker_state": self.driver.state(), "driver": self.driver.name,
                           "version": __version__, "at": time.time()})
        await asyncio.wait_for(self.redis.set(HEARTBEAT_KEY, body, ex=HEARTBEAT_TTL_S),
                               REDIS_PING_TIMEOUT_S)

    async def _beat_forever(self) -> None:
        """Publish the worker's state for the bridge and the dashboard (expires if we die)."""
        while True:
            try:
                await self._beat_once()
            except (TimeoutError, RedisError, OSError) as exc:
                log.warning("camera heartbeat to redis failed: %s", exc.__class__.__name__)
            await asyncio.sleep(HEARTBEAT_EVERY_S)

    async def start(self) -> None:
        self._heartbeat = asyncio.create_task(self._beat_forever())

    async def stop(self) -> None:
        if self._heartbeat is not None:
            self._heartbeat.cancel()
            await asyncio.gather(self._heartbeat, return_exceptions=True)
        try:
            await asyncio.wait_for(self.redis.delete(HEARTBEAT_KEY), REDIS_PING_TIMEOUT_S)
        except (TimeoutError, RedisError, OSError):
            pass
        await self.redis.aclose()
