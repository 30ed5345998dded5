"""The rules of a capture request's pose, size and region, the same for every driver: a free pose
is checked and its defaults filled (``validate_pose``), the request's size goes over the pose's
(``sized``), a region is sorted and bounded (``region_box``)."""

from __future__ import annotations

import math

from mcb.camera.v1 import camera_pb2
from mcb.common.v1 import common_pb2
from mcb_common.errors import invalid
from mcb_rpc.pbjson import box_of

DEFAULT_WIDTH, DEFAULT_HEIGHT, DEFAULT_FOV = 1280, 720, 70.0
# The vertical FOV range of every pose, for every driver: the Minecraft client's FOV option
# (IntRange(30, 110); any other value is silently drawn at 70), so a saved camera works on the
# built-in renderer and on the real client alike. camera-mod/core Pose.MIN_FOV/MAX_FOV has the
# upstream lines; the MCP tool schema (mcb_bridge.tools) holds the same range.
MIN_FOV, MAX_FOV = 30.0, 110.0
MAX_WIDTH, MAX_HEIGHT = 3840, 2160
MAX_REGION_POSITIONS = 2_097_152
VIEWS = ("", "entrance", "opposite", "diagonal", "top", "side")


def region_box(region: common_pb2.Box) -> tuple[int, int, int, int, int, int]:
    """(x0, y0, z0, x1, y1, z1), sorted; at most MAX_REGION_POSITIONS positions."""
    b = box_of(region)
    if b.volume > MAX_REGION_POSITIONS:
        raise invalid(
            f"region has {b.volume} positions; at most {MAX_REGION_POSITIONS} (e.g. 128x128x128)", field="region"
        )
    return (b.min.x, b.min.y, b.min.z, b.max.x, b.max.y, b.max.z)


def pose_dict(p: camera_pb2.Pose) -> dict[str, float]:
    return {
        "x": p.x,
        "y": p.y,
        "z": p.z,
        "yaw": float(p.yaw),
        "pitch": float(p.pitch),
        "fov": float(p.fov),
        "width": int(p.width),
        "height": int(p.height),
    }


def sized(pose: camera_pb2.Pose, width: int, height: int) -> camera_pb2.Pose:
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
        raise invalid(
            f"pose.fov must be between {MIN_FOV:g} and {MAX_FOV:g} degrees (vertical; 0 means the "
            f"default {DEFAULT_FOV:g}), got {pose.fov:g}: the Minecraft client's FOV option takes only "
            "this range and would draw any other value at 70",
            field="pose.fov",
            fov=pose.fov,
            min=MIN_FOV,
            max=MAX_FOV,
        )
    if pose.width and not 16 <= pose.width <= MAX_WIDTH:
        raise invalid(f"pose.width must be between 16 and {MAX_WIDTH} (0 means {DEFAULT_WIDTH})", field="pose.width")
    if pose.height and not 16 <= pose.height <= MAX_HEIGHT:
        raise invalid(
            f"pose.height must be between 16 and {MAX_HEIGHT} (0 means {DEFAULT_HEIGHT})", field="pose.height"
        )
    out = camera_pb2.Pose()
    out.CopyFrom(pose)
    out.fov = pose.fov or DEFAULT_FOV
    out.width = pose.width or DEFAULT_WIDTH
    out.height = pose.height or DEFAULT_HEIGHT
    return out
