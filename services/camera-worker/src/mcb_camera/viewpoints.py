"""Automatic viewpoints for a region (a part's or a build's bounds).

* ``entrance`` — outside the side with a door (the wall it sits in; ``entrance_side``),
  looking at it; without a door, the south side (+z), the side a flat-world build usually faces;
* ``opposite`` — the other side;
* ``diagonal`` — from the entrance-side corner, above, looking down at the centre.

Each pose is far enough away for the box to fit a 70° vertical field of view and looks at
the box's centre. A pose whose feet or eye block is opaque is moved back along the view ray
and then upward, one block at a time, until both are free ("never inside an opaque block").
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable

from .colours import table

Box = tuple[int, int, int, int, int, int]
FOV = 70.0
EYE = 1.62
SIDES = {"south": (0, 1), "north": (0, -1), "east": (1, 0), "west": (-1, 0)}
OPPOSITE = {"south": "north", "north": "south", "east": "west", "west": "east"}


def is_opaque(state: str) -> bool:
    e = table().get(state.split("[", 1)[0])
    return bool(e) and e["kind"] == "cube" and float(e["a"]) >= 1.0


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
        out.append((name, {"x": px, "y": py, "z": pz, "yaw": _yaw_towards(dx, dz),
                           "pitch": _pitch_towards(dx, dy, dz), "fov": fov}))
    ux, uz = SIDES[entrance]
    # corner: entrance direction plus the side to its right
    rx, rz = -uz, ux
    d = dist * 0.8
    px, pz = cx + (ux + rx) * d, cz + (uz + rz) * d
    py = cy + dist * 0.7 - EYE
    dx, dy, dz = cx - px, cy - (py + EYE), cz - pz
    out.append(("diagonal", {"x": px, "y": py, "z": pz, "yaw": _yaw_towards(dx, dz),
                             "pitch": _pitch_towards(dx, dy, dz), "fov": fov}))
    return out


async def free_pose(pose: dict, centre: tuple[float, float, float],
                    blocks: Callable[[list[tuple[int, int, int]]], Awaitable[list[str]]],
                    max_steps: int = 48) -> tuple[dict, str]:
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
