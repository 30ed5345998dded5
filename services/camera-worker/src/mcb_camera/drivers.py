"""Capture drivers: who actually makes an image.

The job queue (jobs.py) hands a ``CaptureJob`` to the configured driver and stores what it
returns; drivers never see Redis or gRPC. ``MCB_CAMERA_DRIVER`` picks one:

* ``builtin`` (default) — ``BuiltinDriver``: reads the real blocks from the world host
  (scene.py), draws them with OpenGL (mesh.py, gl.py), proves freshness by section revisions;
* ``fabric`` — ``link.FabricLinkDriver``: a real Minecraft client connected over the camera
  link (docs/camera-link.md);
* ``none`` — ``NoDriver``: every capture fails with ``camera_unavailable``.

A driver raises ``McbError`` (``camera_unavailable``, ``capture_not_ready``, ...) instead of
ever returning an image it did not take.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.worldclient import WorldClient

from . import gl, mesh, png, preview
from .capture import MAX_SCENE_POSITIONS, CaptureJob, Driver, Rendered, scene_box_for_pose
from .link import FabricLinkDriver
from .scene import Box, NotReady, SceneReader
from .settings import CameraSettings

log = logging.getLogger("mcb.camera")

NO_DRIVER_MESSAGE = (
    "no camera driver is configured on the camera worker (MCB_CAMERA_DRIVER=none), so no "
    "picture can be taken. Set MCB_CAMERA_DRIVER=builtin (draws the world host's real blocks) "
    "or fabric (a connected Minecraft camera client); meanwhile use region_inspect to check the build"
)


class NoDriver:
    name = ""

    def state(self) -> str:
        return "no_driver"

    async def start(self) -> None:
        return None

    async def stop(self) -> None:
        return None

    async def render(self, job: CaptureJob, progress: Any) -> Rendered:
        raise McbError(ErrorCode.CAMERA_UNAVAILABLE, NO_DRIVER_MESSAGE, details={"worker_state": "no_driver"})


def expand_box(box: Box, margin: int, info: world_pb2.WorldInfo) -> Box:
    """``box`` plus surroundings (ground below, ``margin`` around), clipped to the world's
    height and generated area and to the region_read limit; never smaller than ``box``."""
    x0, y0, z0, x1, y1, z1 = box
    for m in (margin, margin // 2, margin // 4, 0):
        e = [x0 - m, y0 - min(m, 8), z0 - m, x1 + m, y1 + 2, z1 + m]
        e[1], e[4] = max(e[1], info.min_y), min(e[4], info.max_y)
        if info.HasField("loaded_area"):
            la = info.loaded_area
            e[0], e[3] = max(e[0], min(x0, la.min.x * 16)), min(e[3], max(x1, la.max.x * 16 + 15))
            e[2], e[5] = max(e[2], min(z0, la.min.z * 16)), min(e[5], max(z1, la.max.z * 16 + 15))
        if (e[3] - e[0] + 1) * (e[4] - e[1] + 1) * (e[5] - e[2] + 1) <= MAX_SCENE_POSITIONS:
            return (e[0], e[1], e[2], e[3], e[4], e[5])
    return box


class BuiltinDriver:
    """Draws the world host's real blocks. See scene.py for readiness and staleness."""

    name = "builtin"

    def __init__(
        self, world: WorldClient, view_distance: float = 64.0, hold_after_read_s: float = 0.0, gl_backend: str = "egl"
    ):
        self.world = world
        self.gl_backend = gl_backend
        self.scene = SceneReader(world)
        self.view_distance = view_distance
        self.hold_after_read_s = hold_after_read_s  # test hook: widen the window for a change
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="gl")
        self._gl: gl.GLRenderer | None = None
        self._gl_error: str | None = None
        self._busy = False

    def state(self) -> str:
        if self._gl_error:
            return "no_driver"
        return "busy" if self._busy else "ready"

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            self._gl = await loop.run_in_executor(self._pool, gl.GLRenderer, self.gl_backend)
            log.info("built-in renderer: %s", self._gl.info)
        except Exception as exc:  # noqa: BLE001 - no GL: say so on every capture
            self._gl_error = f"{exc.__class__.__name__}: {exc}"
            log.error("built-in renderer unavailable (OpenGL/EGL): %s", self._gl_error)

    async def stop(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
        await self.world.aclose()

    async def render(self, job: CaptureJob, progress: Any) -> Rendered:
        if self._gl is None:
            raise McbError(
                ErrorCode.CAMERA_UNAVAILABLE,
                "the built-in renderer has no OpenGL context on this machine "
                f"({self._gl_error}); install the EGL/Mesa packages (scripts/bootstrap.sh)",
                details={"worker_state": "no_driver"},
            )
        self._busy = True
        try:
            return await self._render(job, progress)
        finally:
            self._busy = False

    async def _render(self, job: CaptureJob, progress: Any) -> Rendered:
        t0 = time.monotonic()
        deadline = t0 + job.readiness_timeout_s
        try:
            info = await self.world.world_info()
        except McbError as err:
            if err.code == ErrorCode.UNAVAILABLE:
                raise McbError(
                    ErrorCode.CAMERA_UNAVAILABLE,
                    f"the built-in renderer cannot reach the world host: {err.message}",
                    details={"worker_state": "link_lost"},
                ) from err
            raise
        pose = job.pose
        box: Box | None
        if job.region is not None:
            box = job.region
            if job.expand > 0:
                box = expand_box(box, job.expand, info)
        else:
            box = scene_box_for_pose(pose, info, self.view_distance)
            if box is None:
                raise McbError(
                    ErrorCode.CAPTURE_NOT_READY,
                    "nothing generated is in view of this pose (no chunks exist there); "
                    "point the camera at the build or pass a region",
                    details={"reason": "no_chunks_in_view"},
                )
        loop = asyncio.get_running_loop()
        ox, oy, oz = box[0], box[1], box[2]
        width, height = int(pose["width"]), int(pose["height"])

        plan = await job.plan_fetch(box) if job.plan_fetch is not None else None
        drawn = [0]

        def draw(snap: Any, reused: bool) -> tuple[bytes, int]:
            m = getattr(snap, "mesh", None) if reused else None
            if m is None:
                m = mesh.build(snap.palette, snap.indices)
                snap.mesh = m
            assert self._gl is not None
            if job.view in ("top", "side"):
                v = gl.ortho_view(job.view, m.size, width, height, pose["yaw"])
            else:
                far = max(64.0, float(sum(m.size)) * 2 + 32)
                v = gl.perspective_view(
                    (pose["x"], pose["y"], pose["z"]),
                    pose["yaw"],
                    pose["pitch"],
                    pose["fov"],
                    width,
                    height,
                    (ox, oy, oz),
                    far,
                )
            if plan is None:
                return png.encode(self._gl.render(m, v)), m.faces
            # the plan's desired states over a copy of what was read (the snapshot stays the world)
            palette, indices, drawn[0] = preview.overlay(snap.palette, snap.indices, box, plan)
            after_mesh = mesh.build(palette, indices)
            img = self._gl.render(after_mesh, v)
            if job.compare:
                img = preview.side_by_side(self._gl.render(m, v), img)
            return png.encode(img), after_mesh.faces

        async def draw_checked(snap: Any, reused: bool) -> tuple[bytes, int, list]:
            # The picture shows the snapshot; the check proves the world still holds those
            # revisions after the read (and any hold), so it runs while the GPU draws.
            check = asyncio.create_task(self.scene.changed_since(snap))
            try:
                data, faces = await loop.run_in_executor(self._pool, draw, snap, reused)
            except BaseException:
                check.cancel()
                raise
            return data, faces, await check

        result = None
        t_read = time.monotonic()
        cached = self.scene.cache.get(box)
        if (
            cached is not None
            and cached.host_instance == info.host_instance
            and getattr(cached, "mesh", None) is not None
        ):
            # Warm and optimistic: draw what we hold and prove it current with ONE revision
            # check. If anything changed since, fall back to the full readiness path below.
            await progress("rendering")
            data, faces, changed = await draw_checked(cached, True)
            if not changed:
                snap, reused, result = cached, True, (data, faces, changed)
        if result is None:
            await progress("reading")
            attempts, last = 0, None
            while True:
                attempts += 1
                try:
                    snap, reused = await self.scene.snapshot(box, info.host_instance)
                    break
                except NotReady as nr:
                    last = nr
                except McbError as err:
                    if err.code == ErrorCode.UNAVAILABLE:
                        raise McbError(
                            ErrorCode.CAMERA_UNAVAILABLE,
                            f"lost the world host while reading the scene: {err.message}",
                            details={"worker_state": "link_lost"},
                        ) from err
                    raise
                if time.monotonic() + 0.25 > deadline:
                    raise McbError(
                        ErrorCode.CAPTURE_NOT_READY,
                        f"the scene did not become ready within {job.readiness_timeout_s:g} s: "
                        f"{last.reason}. No picture was taken (an older one is never returned); "
                        "retry later, or capture a region whose chunks exist",
                        details={"reason": last.reason, "attempts": attempts, **last.details},
                    )
                await asyncio.sleep(0.25)
            t_read = time.monotonic()
            if self.hold_after_read_s > 0:
                await progress("holding")
                await asyncio.sleep(self.hold_after_read_s)
            await progress("rendering")
            result = await draw_checked(snap, reused)
        data, faces, changed = result
        t_draw = time.monotonic()
        stale = bool(changed)
        revs = snap.revisions
        assert self._gl is not None  # checked on entry
        meta: dict[str, Any] = {
            "driver": "builtin",
            "region": {"min": {"x": box[0], "y": box[1], "z": box[2]}, "max": {"x": box[3], "y": box[4], "z": box[5]}},
            "view": job.view or "perspective",
            "world": {"worldUuid": info.world_uuid, "epoch": info.epoch, "hostInstance": info.host_instance},
            "sections": len(revs),
            "maxRevision": max(revs.values()) if revs else 0,
            "revisionDigest": snap.digest(),
            "ready": True,
            "stale": stale,
            # the picture was drawn from exactly these server revisions and they still held
            # after drawing: that is a proof, so it may say true
            "serverRevisionVerified": not stale,
            "faces": faces,
            "renderer": self._gl.info.get("renderer", ""),
            "cache": "warm" if reused else "cold",
            "timingsMs": {
                "read": round((t_read - t0) * 1000, 1),
                "draw": round((t_draw - t_read) * 1000, 1),
                "total": round((time.monotonic() - t0) * 1000, 1),
            },
        }
        if stale:
            meta["changedSections"] = [{"x": k[0], "y": k[1], "z": k[2]} for k in changed[:32]]
            meta["changedSectionCount"] = len(changed)
            meta["hint"] = "the region changed during the capture; capture again for a current picture"
        if plan is not None:
            meta["preview"] = {
                "planId": plan.plan_id,
                "planHash": plan.plan_hash,
                "entriesDrawn": drawn[0],
                "entriesTotal": plan.total,
                "written": False,
                "layout": "before | after (each width x height)" if job.compare else "after",
            }
            if drawn[0] < plan.total:
                meta["preview"]["hint"] = (
                    "entries of the plan outside the drawn scene are not shown; capture its region to see all of it"
                )
        meta["_revisions"] = [[k[0], k[1], k[2], v] for k, v in sorted(revs.items())]
        return Rendered(data, width * 2 if plan is not None and job.compare else width, height, meta)


def make_driver(settings: CameraSettings, world: WorldClient, secrets_dir: Path | None = None) -> Driver:
    """The driver ``settings.driver`` names (CameraSettings validated it)."""
    if settings.driver == "none":
        return NoDriver()
    if settings.driver == "builtin":
        return BuiltinDriver(
            world,
            view_distance=settings.view_distance,
            hold_after_read_s=settings.test_hold_after_read_s,
            gl_backend=settings.gl_backend,
        )
    return FabricLinkDriver.from_settings(world, settings, secrets_dir)
