"""Blocks that hang on a neighbour and pop off (drop as items) without it.

``support_of(state)`` answers the offset of the block a placed state needs and whether that
block must be *solid* (a full collision box: the game's sturdy-face rule, approximated by
``boundingBox == "block"`` in the vendored registry; air and fluids never hold anything):

| blocks | support | kind |
|---|---|---|
| torch, soul/redstone/copper torch | below | solid |
| wall torches, ladder, wall signs, wall banners | behind (opposite of ``facing``) | solid |
| standing signs, standing banners | below | solid |
| buttons, lever | ``face``: floor → below, ceiling → above, wall → behind | solid |
| hanging signs (not the wall kind) | above | any block (chains, fences, …) |

Everything else: ``None`` (no support needed, or not claimed here).
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

from .registry import AIR_NAMES, DEFAULT_VERSION

_DIRS = {"north": (0, 0, -1), "south": (0, 0, 1), "east": (1, 0, 0), "west": (-1, 0, 0)}
_TORCHES = frozenset({"torch", "soul_torch", "redstone_torch", "copper_torch"})


def _split(state: str) -> tuple[str, dict[str, str]]:
    s = state.split("{", 1)[0]
    name = s.split("[", 1)[0].removeprefix("minecraft:")
    props: dict[str, str] = {}
    if "[" in s:
        for part in s[s.index("[") + 1: -1].split(","):
            if "=" in part:
                k, v = part.split("=", 1)
                props[k] = v
    return name, props


def _behind(props: dict[str, str]) -> tuple[int, int, int] | None:
    d = _DIRS.get(props.get("facing", ""))
    return None if d is None else (-d[0], -d[1], -d[2])


def support_of(state: str) -> tuple[tuple[int, int, int], bool] | None:
    """(offset to the supporting block, whether it must be solid) or None."""
    name, props = _split(state)
    if name in _TORCHES:
        return (0, -1, 0), True
    if name.endswith("_wall_hanging_sign"):
        return None
    if name.endswith("wall_torch") or name == "ladder" or name.endswith("_wall_sign") or name.endswith("_wall_banner"):
        off = _behind(props)
        return None if off is None else (off, True)
    if name.endswith("_hanging_sign"):
        return (0, 1, 0), False
    if name.endswith("_sign") or name.endswith("_banner"):
        return (0, -1, 0), True
    if name.endswith("_button") or name == "lever":
        face = props.get("face", "wall")
        if face == "floor":
            return (0, -1, 0), True
        if face == "ceiling":
            return (0, 1, 0), True
        off = _behind(props)
        return None if off is None else (off, True)
    return None


@lru_cache(maxsize=2)
def _solid(version: str) -> frozenset[str]:
    name = f"blocks-{version}.json"
    try:
        raw = json.loads(resources.files("mcb_common").joinpath("data", name).read_text())
    except FileNotFoundError:
        raw = json.loads(resources.files("mcb_common").joinpath("data", f"blocks-{DEFAULT_VERSION}.json").read_text())
    return frozenset(f"minecraft:{b['name']}" for b in raw if b.get("boundingBox") == "block")


def holds(state: str | None, solid: bool, fluid: bool, version: str = DEFAULT_VERSION) -> bool:
    """Whether ``state`` (the support after the plan; None = unknown, assumed to hold) holds
    an attached block. ``fluid``: the caller's fluid verdict for that state."""
    if state is None:
        return True
    name = state.split("{", 1)[0].split("[", 1)[0]
    if name in AIR_NAMES or fluid and "waterlogged=true" not in state:
        return False
    return not solid or name in _solid(version)
