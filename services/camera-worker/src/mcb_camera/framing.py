"""Framing a capture against the world: the entrance of a region (a door search), the automatic
viewpoints and views of a region, and the refusal of a pose whose eye is inside an opaque block.
Reads blocks through the world host (``WorldClient``, service token); the geometry itself is
``viewpoints``'. The servicer (server.py) only validates requests and calls this.
"""

from __future__ import annotations

import json
from typing import Any

from mcb.camera.v1 import camera_pb2
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError, invalid

from . import viewpoints
from .poses import DEFAULT_HEIGHT, DEFAULT_WIDTH, pose_dict, validate_pose
from .viewpoints import Box

DOORS_LISTED = 8  # doors read per region: enough to tell the side


class Framing:
    def __init__(self, world: Any = None):
        self.world = world  # WorldClient; None: every block is air (no world to read)

    async def blocks(self, positions: list[tuple[int, int, int]]) -> list[str]:
        """The block states at positions; air where nothing can be read (outside loaded chunks:
        nothing to collide with)."""
        if self.world is None:
            return ["minecraft:air"] * len(positions)
        flat = [v for p in positions for v in p]
        try:
            res = await self.world.call("blocks_get", {"xyz": flat}, world_pb2.BlocksGetResult)
        except McbError:
            return ["minecraft:air"] * len(positions)
        return [res.palette[i] for i in res.state]

    async def doors(self, region: Box) -> list[tuple[int, int, int, str]]:
        """The lower halves of the doors in the region (at most DOORS_LISTED), or none when it
        cannot be read."""
        if self.world is None:
            return []
        x0, y0, z0, x1, y1, z1 = region
        try:
            res = await self.world.call(
                "region_read",
                {"min": {"x": x0, "y": y0, "z": z0}, "max": {"x": x1, "y": y1, "z": z1}},
                world_pb2.RegionReadResult,
            )
        except McbError:
            return []
        door_idx = {i for i, s in enumerate(res.palette) if s.split("[", 1)[0].endswith("_door") and "half=lower" in s}
        if not door_idx:
            return []
        import numpy as np

        arr = np.frombuffer(res.indices, "<u2").reshape(y1 - y0 + 1, z1 - z0 + 1, x1 - x0 + 1)
        ys, zs, xs = np.nonzero(np.isin(arr, list(door_idx)))
        return [
            (x0 + int(x), y0 + int(y), z0 + int(z), res.palette[int(arr[y, z, x])])
            for y, z, x in list(zip(ys, zs, xs, strict=True))[:DOORS_LISTED]
        ]

    async def entrance(self, region: Box) -> tuple[str, bool]:
        """(the region's entrance side, whether a door said so)."""
        doors = await self.doors(region)
        return viewpoints.entrance_side([], doors, region), bool(doors)

    async def viewpoints(self, region: Box) -> list[camera_pb2.NamedPose]:
        side, from_door = await self.entrance(region)
        x0, y0, z0, x1, y1, z1 = region
        centre = ((x0 + x1 + 1) / 2, (y0 + y1 + 1) / 2, (z0 + z1 + 1) / 2)
        out = []
        for name, p in viewpoints.poses(region, side):
            free, note = await viewpoints.free_pose(p, centre, self.blocks)
            if not note:
                note = f"entrance side: {side}" + (" (from a door)" if from_door else " (no door found; default)")
            out.append(
                camera_pb2.NamedPose(
                    name=name,
                    note=note,
                    pose=camera_pb2.Pose(
                        x=free["x"],
                        y=free["y"],
                        z=free["z"],
                        yaw=free["yaw"],
                        pitch=free["pitch"],
                        fov=free["fov"],
                        width=DEFAULT_WIDTH,
                        height=DEFAULT_HEIGHT,
                    ),
                )
            )
        return out

    async def auto_pose(self, region: Box, view: str) -> camera_pb2.Pose:
        """The pose of an automatic view of the region (top, side, entrance, opposite, diagonal)."""
        x0, y0, z0, x1, y1, z1 = region
        if view == "top":
            return validate_pose(camera_pb2.Pose(x=(x0 + x1 + 1) / 2, y=y1 + 1, z=(z0 + z1 + 1) / 2, pitch=90, yaw=180))
        if view == "side":
            # perpendicular to the entrance view (viewpoints.SIDE_OF); the driver draws it
            # orthographically along the pose's yaw
            _side, p = viewpoints.side_pose(region, (await self.entrance(region))[0])
            # out of any block there for the game client (moving back or up keeps the yaw)
            p, _note = await viewpoints.free_pose(
                p, ((x0 + x1 + 1) / 2, (y0 + y1 + 1) / 2, (z0 + z1 + 1) / 2), self.blocks
            )
            return validate_pose(camera_pb2.Pose(**p))
        for vp in await self.viewpoints(region):
            if vp.name == view:
                return validate_pose(vp.pose)
        raise invalid(f"unknown view {view!r}", field="view")

    async def refuse_pose_in_block(
        self, pose: camera_pb2.Pose, region: tuple[int, ...] | None, camera_id: str, draws_region_only: bool
    ) -> None:
        """A pose whose eye is inside an opaque full block is refused before anything is
        queued: the picture would show that block from inside (a plain wall of its colour) on
        the built-in renderer, and a spectator's view through the world on the game client.
        The error names the block and suggests the nearest free pose (viewpoints.step_back).
        Skipped when the renderer draws only ``region`` (``draws_region_only``: the built-in
        one) and the eye is outside it (the block is not drawn). Documented in README.md
        ("A pose inside a block")."""
        if self.world is None:
            return
        p = pose_dict(pose)
        cell = viewpoints.eye_cell(p)
        if (
            region is not None
            and draws_region_only
            and not all(region[i] <= cell[i] <= region[i + 3] for i in range(3))
        ):
            return
        hit = await viewpoints.solid_at_eye(p, self.blocks)
        if hit is None:
            return
        (bx, by, bz), state = hit
        block = state.split("[", 1)[0]
        free = await viewpoints.step_back(p, self.blocks)
        suggestion = None if free is None else {k: free[k] for k in ("x", "y", "z", "yaw", "pitch", "fov")}
        where = f"saved camera {camera_id!r}: its" if camera_id else "the pose's"
        hint = (
            "try pose "
            + json.dumps({k: round(v, 2) for k, v in suggestion.items()})
            + " (moved back out of the block, same direction)"
            if suggestion
            else "no free position found within 32 blocks; use region with a view (entrance, diagonal, ...)"
        )
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"{where} eye ({p['x']:g}, {p['y'] + viewpoints.EYE:g}, {p['z']:g}; feet + 1.62) is inside "
            f"{block} at ({bx}, {by}, {bz}): the picture would show only the inside of that block. "
            + hint
            + (", then camera_save it again" if camera_id and suggestion else ""),
            details={
                "reason": "pose_inside_block",
                "field": "camera_id" if camera_id else "pose",
                "block": state,
                "position": {"x": bx, "y": by, "z": bz},
                "suggestedPose": suggestion,
                **({"camera_id": camera_id} if camera_id else {}),
            },
        )
