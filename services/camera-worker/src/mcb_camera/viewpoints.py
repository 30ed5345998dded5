"""Automatic viewpoints for a region (a part's or a build's bounds).

* ``entrance`` — outside the side with a door (the wall it sits in; ``entrance_side``),
  looking at it; without a door, the south side (+z), the side a flat-world build usually faces;
* ``opposite`` — the other side;
* ``diagonal`` — from the entrance-side corner, above, looking down at the centre;
* ``side`` (orthographic, drawn by gl.ortho_view) — from the side a quarter turn clockwise
  (seen from above) from the entrance: entrance south -> from the west, looking east; west ->
  north; north -> east; east -> south. Perpendicular to ``entrance``, on the same side as the
  ``diagonal`` corner.

Each pose is far enough away for the box to fit a 70° vertical field of view and looks at
the box's centre. A pose whose feet or eye block is opaque is moved back along the view ray
and then upward, one block at a time, until both are free ("never inside an opaque block").
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable

from . import gl
from .colours import table

Box = tuple[int, int, int, int, int, int]
FOV = 70.0
EYE = 1.62
SIDES = {"south": (0, 1), "north": (0, -1), "east": (1, 0), "west": (-1, 0)}
OPPOSITE = {"south": "north", "north": "south", "east": "west", "west": "east"}
# a quarter turn clockwise seen from above (north up): the side view's side for an entrance
SIDE_OF = {"south": "west", "west": "north", "north": "east", "east": "south"}


def is_opaque(state: str) -> bool:
    e = table().get(state.split("[", 1)[0])
    return bool(e and e["kind"] == "cube" and float(e["a"]) >= 1.0)


def entrance_side(palette: list[str], door_positions: list[tuple[int, int, int, str]], box: Box) -> str:
    """The side of the box a door opens to, else south.

    A door's ``facing`` is the direction the player looked when placing it, so a door placed
    from outside faces *inward*; it only tells the axis reliably. The outside is the end of
    that axis the door is nearer to (a door in the north wall opens to the north, whichever way
    it was placed); a door exactly in the middle falls back to the side opposite its facing.
    """
    x0, _y0, z0, x1, _y1, z1 = box
    cx, cz = (x0 + x1) / 2, (z0 + z1) / 2
    for x, _y, z, state in door_positions:
        if "facing=" not in state:
            continue
        facing = state.split("facing=", 1)[1].split(",", 1)[0].rstrip("]")
        if facing not in SIDES:
            continue
        if facing in ("north", "south"):
            if z != cz:
                return "north" if z < cz else "south"
        elif x != cx:
            return "west" if x < cx else "east"
        return OPPOSITE[facing]
    return "south"


def _yaw_towards(dx: float, dz: float) -> float:
    # Minecraft: yaw 0 = +z, 90 = -x  ->  yaw = atan2(-dx, dz)
    return math.degrees(math.atan2(-dx, dz)) % 360.0


def _pitch_towards(dx: float, dy: float, dz: float) -> float:
    return math.degrees(math.atan2(-dy, math.hypot(dx, dz)))


def side_pose(box: Box, entrance: str = "south", fov: float = FOV) -> tuple[str, dict]:
    """(side, pose) of the ``side`` view: on the side ``SIDE_OF[entrance]``, eye at mid-height,
    looking horizontally at the box's centre, far enough for the box to fit ``fov`` (what a
    perspective driver, the game client, draws); the built-in renderer draws it
    orthographically along the pose's yaw (gl.ortho_view)."""
    x0, y0, z0, x1, y1, z1 = box
    cx, cy, cz = (x0 + x1 + 1) / 2, (y0 + y1 + 1) / 2, (z0 + z1 + 1) / 2
    half = max(x1 - x0 + 1, y1 - y0 + 1, z1 - z0 + 1) / 2
    dist = half / math.tan(math.radians(fov) / 2) * 1.25 + half
    side = SIDE_OF[entrance]
    ux, uz = SIDES[side]
    return side, {
        "x": cx + ux * dist,
        "y": cy - EYE,
        "z": cz + uz * dist,
        "yaw": _yaw_towards(-ux, -uz),
        "pitch": 0.0,
        "fov": fov,
    }


def poses(box: Box, entrance: str = "south", fov: float = FOV) -> list[tuple[str, dict]]:
    x0, y0, z0, x1, y1, z1 = box
    cx, cy, cz = (x0 + x1 + 1) / 2, (y0 + y1 + 1) / 2, (z0 + z1 + 1) / 2
    sx, sy, sz = x1 - x0 + 1, y1 - y0 + 1, z1 - z0 + 1
    half = max(sx, sy, sz) / 2
    dist = half / math.tan(math.radians(fov) / 2) * 1.25 + half
    out = []
    for name, side in (("entrance", entrance), ("opposite", OPPOSITE[entrance])):
        ux, uz = SIDES[side]
        px, pz = cx + ux * dist, cz + uz * dist
        py = cy + sy * 0.15 - EYE
        dx, dy, dz = cx - px, cy - (py + EYE), cz - pz
        out.append(
            (
                name,
                {
                    "x": px,
                    "y": py,
                    "z": pz,
                    "yaw": _yaw_towards(dx, dz),
                    "pitch": _pitch_towards(dx, dy, dz),
                    "fov": fov,
                },
            )
        )
    ux, uz = SIDES[entrance]
    # corner: entrance direction plus the side to its right
    rx, rz = -uz, ux
    d = dist * 0.8
    px, pz = cx + (ux + rx) * d, cz + (uz + rz) * d
    py = cy + dist * 0.7 - EYE
    dx, dy, dz = cx - px, cy - (py + EYE), cz - pz
    out.append(
        (
            "diagonal",
            {"x": px, "y": py, "z": pz, "yaw": _yaw_towards(dx, dz), "pitch": _pitch_towards(dx, dy, dz), "fov": fov},
        )
    )
    return out


async def free_pose(
    pose: dict,
    centre: tuple[float, float, float],
    blocks: Callable[[list[tuple[int, int, int]]], Awaitable[list[str]]],
    max_steps: int = 48,
) -> tuple[dict, str]:
    """Move ``pose`` out of opaque blocks: back along the view ray, then up. -> (pose, note)."""
    p = dict(pose)
    note = ""
    dx, dz = p["x"] - centre[0], p["z"] - centre[2]
    n = math.hypot(dx, dz) or 1.0
    ux, uz = dx / n, dz / n
    for step in range(max_steps):
        feet = (math.floor(p["x"]), math.floor(p["y"]), math.floor(p["z"]))
        eye = (feet[0], math.floor(p["y"] + EYE), feet[2])
        states = await blocks([feet, eye])
        if not any(is_opaque(s) for s in states):
            return p, note
        if step < max_steps // 2:
            p["x"] += ux
            p["z"] += uz
            note = "moved back out of an opaque block"
        else:
            p["y"] += 1
            note = "moved back and up out of an opaque block"
        dxc, dyc, dzc = centre[0] - p["x"], centre[1] - (p["y"] + EYE), centre[2] - p["z"]
        p["yaw"], p["pitch"] = _yaw_towards(dxc, dzc), _pitch_towards(dxc, dyc, dzc)
    return p, "could not find a free position nearby; the view may be blocked"


def eye_cell(pose: dict) -> tuple[int, int, int]:
    """The block the camera's eye (feet + 1.62) is in."""
    return (math.floor(pose["x"]), math.floor(pose["y"] + EYE), math.floor(pose["z"]))


async def solid_at_eye(
    pose: dict, blocks: Callable[[list[tuple[int, int, int]]], Awaitable[list[str]]]
) -> tuple[tuple[int, int, int], str] | None:
    """(position, state) of the opaque full block the eye is inside, else ``None``."""
    cell = eye_cell(pose)
    state = (await blocks([cell]))[0]
    return (cell, state) if is_opaque(state) else None


async def step_back(
    pose: dict,
    blocks: Callable[[list[tuple[int, int, int]]], Awaitable[list[str]]],
    reach: float = 32.0,
    step: float = 0.5,
) -> dict | None:
    """The nearest pose with a free eye: back along the view ray (same yaw and pitch, so the
    picture shows what the pose looked at, from just outside the block), else straight up;
    ``None`` when neither finds air within ``reach`` blocks. Asked nearest first, 8 positions a
    call: a call that fails (a chunk that does not exist) answers air for all of its positions,
    so one far position must not decide for the near ones."""
    fwd = gl.look_dir(pose["yaw"], pose["pitch"])
    back = [
        (pose["x"] - fwd[0] * k * step, pose["y"] - fwd[1] * k * step, pose["z"] - fwd[2] * k * step)
        for k in range(1, int(reach / step) + 1)
    ]
    up = [(pose["x"], pose["y"] + k, pose["z"]) for k in range(1, int(reach) + 1)]
    for cand in (back, up):
        for i in range(0, len(cand), 8):
            part = cand[i : i + 8]
            states = await blocks([eye_cell({"x": x, "y": y, "z": z}) for x, y, z in part])
            for (x, y, z), st in zip(part, states, strict=True):
                if not is_opaque(st):
                    found = {**pose, "x": float(x), "y": float(y), "z": float(z)}
                    tidy = {**found, **{k: round(found[k], 4) for k in ("x", "y", "z")}}
                    return tidy if eye_cell(tidy) == eye_cell(found) else found  # 0.5000000000000002
    return None
