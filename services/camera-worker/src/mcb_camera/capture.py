"""What the job queue, the server and every capture driver share: the job, the rendered image,
the driver protocol and the scene box of a pose. Its own module so that drivers.py (which picks
a driver) and link.py (the fabric driver) both import it and never each other in a circle.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from mcb.camera.v1 import camera_pb2
from mcb.world.v1 import world_pb2
from mcb_rpc import pbjson

from . import gl
from .scene import Box

MAX_SCENE_POSITIONS = 2_097_152  # the world protocol's region_read limit

# kept in a capture's metadata file for the worker itself, not part of camera.proto's CaptureMetadata:
# the section revisions drawn (stale checks), and what the response carries on its own
_NOT_METADATA = ("revisions", "status", "captureId", "capture_id")


def capture_metadata(meta: dict[str, Any]) -> camera_pb2.CaptureMetadata:
    """A capture's metadata file (the drivers' and the job loop's document, written as
    ``CaptureMetadata``'s JSON form: lowerCamelCase keys) as the typed message. Keys the message
    does not know are left out (files of older versions); ``test_capture_metadata`` holds every
    key the drivers write to a field."""
    return pbjson.parse(
        {k: v for k, v in meta.items() if k not in _NOT_METADATA and v is not None},
        camera_pb2.CaptureMetadata,
        ignore_unknown_fields=True,
    )


@dataclass
class CaptureJob:
    capture_id: str
    project_id: str
    pose: dict[str, float]  # x, y, z, yaw, pitch, fov, width, height (defaults filled)
    region: Box | None = None
    view: str = ""  # "" (perspective from pose) | "top" | "side" | auto names
    camera_id: str = ""
    after_operation_id: str = ""
    before_operation_id: str = ""  # the journal's Before picture of this operation (camera.proto)
    expand: int = 0  # auto viewpoints: also draw this many blocks around region
    format: str = "png"  # "png" | "jpeg" (imageformat.FORMATS)
    readiness_timeout_s: float = 20.0
    requested_at_ms: int = 0
    operation: dict[str, Any] = field(default_factory=dict)  # filled once the operation is terminal
    plan_id: str = ""  # draw the world after this prepared plan (preview.py)
    compare: bool = False  # with plan_id: before | after side by side in one image
    # set by the job loop for a plan_id: box -> the plan's entries inside it (PlanOverlay); not stored
    plan_fetch: Any = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "plan_fetch"}


@dataclass
class Rendered:
    png: bytes
    width: int
    height: int
    metadata: dict[str, Any]


class Driver(Protocol):
    name: str  # "" | "builtin" | "fabric" (ListCamerasResponse.driver)

    def state(self) -> str:
        """``ready`` | ``no_driver`` | ``busy`` | ``link_lost`` (ListCamerasResponse.worker_state)."""
        ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def render(self, job: CaptureJob, progress: Any) -> Rendered: ...


def scene_box_for_pose(pose: dict[str, float], info: world_pb2.WorldInfo, distance: float) -> Box | None:
    """The box a perspective pose can see up to ``distance``, clipped to the world's height
    and to the generated area (what does not exist cannot be drawn)."""
    eye = (pose["x"], pose["y"] + gl.EYE_HEIGHT, pose["z"])
    fwd = gl.look_dir(pose["yaw"], pose["pitch"])
    aspect = pose["width"] / pose["height"]
    th = math.tan(math.radians(pose["fov"]) / 2)
    f = np.array(fwd)
    up0 = np.array([0.0, 1.0, 0.0]) if abs(f[1]) < 0.999 else np.array([0.0, 0.0, 1.0])
    r = np.cross(f, up0)
    r /= np.linalg.norm(r)
    u = np.cross(r, f)
    while True:
        pts = [np.array(eye)]
        for sx in (-1, 1):
            for sy in (-1, 1):
                pts.append(np.array(eye) + distance * (f + sx * th * aspect * r + sy * th * u))
        corners = np.array(pts)
        lo = np.floor(corners.min(axis=0)).astype(int) - 1
        hi = np.floor(corners.max(axis=0)).astype(int) + 1
        lo[1], hi[1] = max(lo[1], info.min_y), min(hi[1], info.max_y)
        if info.HasField("loaded_area"):
            la = info.loaded_area
            lo[0], hi[0] = max(lo[0], la.min.x * 16), min(hi[0], la.max.x * 16 + 15)
            lo[2], hi[2] = max(lo[2], la.min.z * 16), min(hi[2], la.max.z * 16 + 15)
        if (hi < lo).any():
            return None
        n = int(np.prod(hi - lo + 1))
        if n <= MAX_SCENE_POSITIONS:
            return (int(lo[0]), int(lo[1]), int(lo[2]), int(hi[0]), int(hi[1]), int(hi[2]))
        distance *= 0.8
