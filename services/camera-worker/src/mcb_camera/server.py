"""The Camera gRPC servicer and the worker's health, wired to Redis and a capture driver.

Every RPC: bearer token -> principal (agent, admin or service) by SCOPES, validate the request,
then ask the driver. Authentication and the one translation of every failure are the shared
gRPC boundary's (``mcb_rpc.boundary``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from typing import Any

import redis.asyncio as aioredis
from mcb.camera.v1 import camera_pb2, camera_pb2_grpc
from mcb_common.errors import ErrorCode, McbError, invalid
from mcb_rpc.auth import Caller
from mcb_rpc.boundary import grpc_boundary
from mcb_rpc.tokens import TokenTable
from redis.exceptions import RedisError

from . import __version__, imageformat, png, viewpoints
from . import diff as imgdiff
from .capture import CaptureJob, Driver, capture_metadata
from .jobs import CaptureQueue, new_capture_id
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

DEFAULT_WIDTH, DEFAULT_HEIGHT, DEFAULT_FOV = 1280, 720, 70.0
# The vertical FOV range of every pose, for every driver: the Minecraft client's FOV option
# (IntRange(30, 110); any other value is silently drawn at 70), so a saved camera works on the
# built-in renderer and on the real client alike. camera-mod/core Pose.MIN_FOV/MAX_FOV has the
# upstream lines; the MCP tool schema (mcb_bridge.tools) holds the same range.
MIN_FOV, MAX_FOV = 30.0, 110.0
MAX_WIDTH, MAX_HEIGHT = 3840, 2160
MAX_REGION_POSITIONS = 2_097_152
VIEWS = ("", "entrance", "opposite", "diagonal", "top", "side")


def _box(region: Any) -> tuple[int, int, int, int, int, int]:
    lo, hi = region.min, region.max
    b = (min(lo.x, hi.x), min(lo.y, hi.y), min(lo.z, hi.z), max(lo.x, hi.x), max(lo.y, hi.y), max(lo.z, hi.z))
    n = (b[3] - b[0] + 1) * (b[4] - b[1] + 1) * (b[5] - b[2] + 1)
    if n > MAX_REGION_POSITIONS:
        raise invalid(f"region has {n} positions; at most {MAX_REGION_POSITIONS} (e.g. 128x128x128)",
                      field="region")
    return b


def _pose_dict(p: camera_pb2.Pose) -> dict[str, float]:
    return {"x": p.x, "y": p.y, "z": p.z, "yaw": float(p.yaw), "pitch": float(p.pitch), "fov": float(p.fov),
            "width": int(p.width), "height": int(p.height)}


def _project(caller: Caller, requested: str) -> str:
    """The project a call is about. An agent's project comes from trusted metadata only."""
    if caller.principal == "agent" and caller.project_id and requested and requested != caller.project_id:
        raise McbError(ErrorCode.PERMISSION_DENIED,
                       "the agent token may only use the project configured for it")
    return requested or caller.project_id


def _sized(pose: camera_pb2.Pose, width: int, height: int) -> camera_pb2.Pose:
    """The request's width/height (when given) over the pose's: every kind of capture (saved
    camera, pose, automatic view) takes the size the caller asked for."""
    if not width and not height:
        return pose
    out = camera_pb2.Pose()
    out.CopyFrom(pose)
    out.width, out.height = width or pose.width, height or pose.height
    return validate_pose(out)


def validate_pose(pose: camera_pb2.Pose) -> camera_pb2.Pose:
    """Check a free pose and fill the defaults (1280x720, FOV 70)."""
    for name in ("x", "y", "z", "yaw", "pitch", "fov"):
        if not math.isfinite(getattr(pose, name)):
            raise invalid(f"pose.{name} must be a finite number", field=f"pose.{name}")
    if not -90.0 <= pose.pitch <= 90.0:
        raise invalid("pose.pitch must be between -90 (up) and 90 (down) degrees", field="pose.pitch")
    if pose.fov and not MIN_FOV <= pose.fov <= MAX_FOV:
        raise invalid(f"pose.fov must be between {MIN_FOV:g} and {MAX_FOV:g} degrees (vertical; 0 means the "
                      f"default {DEFAULT_FOV:g}), got {pose.fov:g}: the Minecraft client's FOV option takes only "
                      "this range and would draw any other value at 70",
                      field="pose.fov", fov=pose.fov, min=MIN_FOV, max=MAX_FOV)
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


@grpc_boundary("camera", SCOPES)
class CameraService(camera_pb2_grpc.CameraServicer):
    def __init__(self, tokens: TokenTable, store: CameraStore, driver: Driver,
                 redis_client: aioredis.Redis, queue: CaptureQueue | None = None, world: Any = None):
        self.tokens = tokens
        self.store = store
        self.driver = driver
        self.redis = redis_client
        self.queue = queue
        self.world = world  # WorldClient for auto viewpoints (free-pose checks)
        self._heartbeat: asyncio.Task[None] | None = None

    # --- RPCs -----------------------------------------------------------------------------

    async def ListCameras(self, request: camera_pb2.ListCamerasRequest,
                          caller: Caller) -> camera_pb2.ListCamerasResponse:
        project = _project(caller, request.project_id)
        return camera_pb2.ListCamerasResponse(
            cameras=self.store.list(project),
            worker_state=self.driver.state(),
            driver=self.driver.name,
        )

    async def Capture(self, request: camera_pb2.CaptureRequest,
                      caller: Caller) -> camera_pb2.CaptureResponse:
        project = _project(caller, request.project_id)
        given = [n for n, v in (("camera_id", request.camera_id),
                                ("pose", request.HasField("pose")),
                                ("capture_id", request.capture_id)) if v]
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
        region = _box(request.region) if request.HasField("region") else None
        if request.view not in VIEWS:
            raise invalid(f"view must be one of {', '.join(v for v in VIEWS if v)}", field="view")
        if request.view and region is None:
            raise invalid("view needs a region {min, max}", field="view")
        if request.camera_id:
            cam = self.store.get(project, request.camera_id)
            if cam is None:
                raise McbError(ErrorCode.NOT_FOUND,
                               f"no saved camera {request.camera_id!r}; camera_list shows the "
                               "saved cameras, or pass a pose instead",
                               details={"camera_id": request.camera_id})
            try:
                pose = validate_pose(cam.pose)
            except McbError as e:
                # saved under older rules (e.g. a FOV outside today's 30..110)
                raise McbError(e.code, f"saved camera {request.camera_id!r}: {e.message}; save it again "
                               "with camera_save and a pose that fits", details={
                                   **e.details, "camera_id": request.camera_id}) from e
        elif request.HasField("pose"):
            pose = validate_pose(request.pose)
        else:
            assert region is not None
            pose = await self._auto_pose(region, request.view or "diagonal")
        pose = _sized(pose, request.width, request.height)
        if given and given[0] in ("camera_id", "pose") and not (
                request.view in ("top", "side") and self.driver.name == "builtin"):  # orthographic: no eye
            await self._refuse_pose_in_block(pose, region, request.camera_id)
        if request.format not in ("", *imageformat.FORMATS):
            raise invalid(f"format must be one of {', '.join(imageformat.FORMATS)}", field="format")
        if self.queue is None:
            raise McbError(ErrorCode.CAMERA_UNAVAILABLE, "the camera worker has no capture queue")
        if request.after_operation_id:
            # fail fast on an unknown operation; waiting for it happens in the job
            await self.queue.waiter.status(project, request.after_operation_id)
        await self._check_plan(project, request)
        expand = 0
        if region is not None and not given and (request.view or "diagonal") in ("entrance", "opposite", "diagonal"):
            # an automatic view shows the region in its surroundings (ground, neighbours)
            expand = max(6, (max(region[3] - region[0], region[5] - region[2]) + 1) // 2)
        job = CaptureJob(capture_id=new_capture_id(), project_id=project, pose=_pose_dict(pose),
                         region=region, view=request.view if request.view in ("top", "side") else "",
                         camera_id=request.camera_id, after_operation_id=request.after_operation_id,
                         before_operation_id=request.before_operation_id,
                         plan_id=request.plan_id, compare=request.compare,
                         expand=expand, format=request.format or "png")
        await self.driver_available()
        cid = await self.queue.submit(job)
        await self.queue.wait_inline(cid)
        return await self._poll(project, cid)

    async def _check_plan(self, project: str, request: camera_pb2.CaptureRequest) -> None:
        """A preview (plan_id) needs the built-in renderer and a plan the journal answers for this
        project (unknown, expired or another world's plan: the journal's structured error)."""
        if request.compare and not request.plan_id:
            raise invalid("compare needs a plan_id (before | after that plan)", field="compare")
        if not request.plan_id:
            return
        if self.driver.name != "builtin":
            raise McbError(ErrorCode.INVALID_REQUEST,
                           f"plan previews are drawn by the built-in renderer only; this worker's driver is "
                           f"{self.driver.name or 'none'!r}. Check the plan with its summary, or apply it and "
                           "capture with after_operation_id", details={"field": "plan_id", "reason": "preview_needs_builtin"})
        assert self.queue is not None
        await self.queue.waiter.plan_entries(project, request.plan_id, header_only=True)

    async def _refuse_pose_in_block(self, pose: camera_pb2.Pose, region: tuple[int, ...] | None,
                                    camera_id: str) -> None:
        """A pose whose eye is inside an opaque full block is refused before anything is
        queued: the picture would show that block from inside (a plain wall of its colour) on
        the built-in renderer, and a spectator's view through the world on the game client.
        The error names the block and suggests the nearest free pose (viewpoints.step_back).
        Skipped when the built-in renderer draws only ``region`` and the eye is outside it (the
        block is not drawn). Documented in README.md ("A pose inside a block")."""
        if self.world is None:
            return
        p = _pose_dict(pose)
        cell = viewpoints.eye_cell(p)
        if (region is not None and self.driver.name == "builtin"
                and not all(region[i] <= cell[i] <= region[i + 3] for i in range(3))):
            return
        hit = await viewpoints.solid_at_eye(p, self._blocks)
        if hit is None:
            return
        (bx, by, bz), state = hit
        block = state.split("[", 1)[0]
        free = await viewpoints.step_back(p, self._blocks)
        suggestion = None if free is None else {k: free[k] for k in ("x", "y", "z", "yaw", "pitch", "fov")}
        where = f"saved camera {camera_id!r}: its" if camera_id else "the pose's"
        hint = ("try pose " + json.dumps({k: round(v, 2) for k, v in suggestion.items()}) +
                " (moved back out of the block, same direction)" if suggestion else
                "no free position found within 32 blocks; use region with a view (entrance, diagonal, ...)")
        raise McbError(ErrorCode.INVALID_REQUEST,
                       f"{where} eye ({p['x']:g}, {p['y'] + viewpoints.EYE:g}, {p['z']:g}; feet + 1.62) is inside "
                       f"{block} at ({bx}, {by}, {bz}): the picture would show only the inside of that block. "
                       + hint + (", then camera_save it again" if camera_id and suggestion else ""),
                       details={"reason": "pose_inside_block", "field": "camera_id" if camera_id else "pose",
                                "block": state, "position": {"x": bx, "y": by, "z": bz},
                                "suggestedPose": suggestion, **({"camera_id": camera_id} if camera_id else {})})

    async def driver_available(self) -> None:
        """Refuse at once when no driver can take pictures (rather than queueing in vain)."""
        state = self.driver.state()
        if state in ("no_driver", "link_lost"):
            # render() raises the driver's own camera_unavailable with its explanation
            await self.driver.render(CaptureJob("", "", {}), None)

    async def _poll(self, project: str, capture_id: str) -> camera_pb2.CaptureResponse:
        assert self.queue is not None
        rec = await self.queue.record(project, capture_id)
        status = rec.get("status")
        if status == "completed":
            data, meta = self.queue.image(capture_id)
            typed = capture_metadata(meta)
            return camera_pb2.CaptureResponse(status="completed", capture_id=capture_id, image=data,
                                              mime_type=typed.mime_type or "image/png", metadata=typed)
        if status == "failed":
            try:
                err = McbError.from_dict(json.loads(rec.get("error") or "{}"))
            except (ValueError, TypeError, KeyError):
                err = McbError(ErrorCode.INTERNAL, f"capture {capture_id} failed")
            details = dict(err.details or {})
            details["capture_id"] = capture_id
            raise McbError(err.code, err.message, details=details)
        pending = camera_pb2.CaptureMetadata(stage=rec.get("stage", ""),
                                             hint="call camera_capture with this capture_id in a second or two")
        return camera_pb2.CaptureResponse(status="pending", capture_id=capture_id, metadata=pending)

    async def _blocks(self, positions: list[tuple[int, int, int]]) -> list[str]:
        from mcb.world.v1 import world_pb2

        if self.world is None:
            return ["minecraft:air"] * len(positions)
        flat = [v for p in positions for v in p]
        try:
            res = await self.world.call("blocks_get", {"xyz": flat}, world_pb2.BlocksGetResult)
        except McbError:
            return ["minecraft:air"] * len(positions)  # outside loaded chunks: nothing to collide with
        return [res.palette[i] for i in res.state]

    async def _entrance(self, region: viewpoints.Box) -> tuple[str, bool]:
        """(the region's entrance side, whether a door said so)."""
        from mcb.world.v1 import world_pb2

        doors: list[tuple[int, int, int, str]] = []
        if self.world is not None:
            x0, y0, z0, x1, y1, z1 = region
            try:
                res = await self.world.call("region_read", {"min": {"x": x0, "y": y0, "z": z0},
                                                            "max": {"x": x1, "y": y1, "z": z1}},
                                            world_pb2.RegionReadResult)
                door_idx = {i for i, s in enumerate(res.palette) if s.split("[", 1)[0].endswith("_door")
                            and "half=lower" in s}
                if door_idx:
                    import numpy as np

                    arr = np.frombuffer(res.indices, "<u2").reshape(y1 - y0 + 1, z1 - z0 + 1, x1 - x0 + 1)
                    ys, zs, xs = np.nonzero(np.isin(arr, list(door_idx)))
                    for y, z, x in list(zip(ys, zs, xs, strict=True))[:8]:
                        doors.append((x0 + int(x), y0 + int(y), z0 + int(z), res.palette[int(arr[y, z, x])]))
            except McbError:
                pass
        return viewpoints.entrance_side([], doors, region), bool(doors)

    async def _viewpoints(self, region: viewpoints.Box) -> list[camera_pb2.NamedPose]:
        side, from_door = await self._entrance(region)
        x0, y0, z0, x1, y1, z1 = region
        centre = ((x0 + x1 + 1) / 2, (y0 + y1 + 1) / 2, (z0 + z1 + 1) / 2)
        out = []
        for name, p in viewpoints.poses(region, side):
            free, note = await viewpoints.free_pose(p, centre, self._blocks)
            if not note:
                note = f"entrance side: {side}" + (" (from a door)" if from_door else " (no door found; default)")
            out.append(camera_pb2.NamedPose(name=name, note=note, pose=camera_pb2.Pose(
                x=free["x"], y=free["y"], z=free["z"], yaw=free["yaw"], pitch=free["pitch"], fov=free["fov"],
                width=DEFAULT_WIDTH, height=DEFAULT_HEIGHT)))
        return out

    async def _auto_pose(self, region: viewpoints.Box, view: str) -> camera_pb2.Pose:
        if view == "top":
            x0, y0, z0, x1, y1, z1 = region
            return validate_pose(camera_pb2.Pose(x=(x0 + x1 + 1) / 2, y=y1 + 1, z=(z0 + z1 + 1) / 2,
                                                 pitch=90, yaw=180))
        if view == "side":
            # perpendicular to the entrance view (viewpoints.SIDE_OF); the driver draws it
            # orthographically along the pose's yaw
            x0, y0, z0, x1, y1, z1 = region
            _side, p = viewpoints.side_pose(region, (await self._entrance(region))[0])
            # out of any block there for the game client (moving back or up keeps the yaw)
            p, _note = await viewpoints.free_pose(p, ((x0 + x1 + 1) / 2, (y0 + y1 + 1) / 2, (z0 + z1 + 1) / 2),
                                                  self._blocks)
            return validate_pose(camera_pb2.Pose(**p))
        for vp in await self._viewpoints(region):
            if vp.name == view:
                return validate_pose(vp.pose)
        raise invalid(f"unknown view {view!r}", field="view")

    async def SaveCamera(self, request: camera_pb2.SaveCameraRequest,
                         caller: Caller) -> camera_pb2.CameraInfo:
        project = _project(caller, request.project_id)
        cam = camera_pb2.CameraInfo()
        cam.CopyFrom(request.camera)
        cam.pose.CopyFrom(validate_pose(request.camera.pose))
        return self.store.save(project, cam)

    async def AutoViewpoints(self, request: camera_pb2.AutoViewpointsRequest,
                             caller: Caller) -> camera_pb2.AutoViewpointsResponse:
        if not request.HasField("region"):
            raise invalid("region {min, max} is required", field="region")
        return camera_pb2.AutoViewpointsResponse(viewpoints=await self._viewpoints(_box(request.region)))

    async def DiffCaptures(self, request: camera_pb2.DiffCapturesRequest,
                           caller: Caller) -> camera_pb2.DiffCapturesResponse:
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
        meta = camera_pb2.DiffMetadata(capture_a=request.capture_a, capture_b=request.capture_b,
                                       threshold=imgdiff.THRESHOLD,
                                       note="a signal of visible change, not a quality score")
        return camera_pb2.DiffCapturesResponse(
            changed_fraction=d["changed_fraction"], mean_abs_diff=d["mean_abs_diff"], bbox=d["bbox"],
            image=png.encode(d["image"]), mime_type="image/png", metadata=meta)

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
            "link": self.driver.health() if hasattr(self.driver, "health") else None,
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
