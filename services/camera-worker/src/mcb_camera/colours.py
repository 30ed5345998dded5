"""The per-block colour table (``data/block_colours.json``, see ``data/PROVENANCE.md``) and the
per-palette lookup tables the mesher needs.

A block state ``minecraft:oak_slab[type=top,waterlogged=false]`` is looked up by its name
(properties stripped); a few properties change the shape (slab ``type``). Blocks with a real
shape (stairs, fences, panes, walls, doors, trapdoors, torches, plants, ...) get their model
from ``shapes.py`` and are drawn by the mesher's shape pass. An unknown name (a newer block, a
modded one) gets a neutral grey cube: drawn, never silently dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import numpy as np

from . import patterns
from .shapes import Model, model_for
from .shapes import props as _props

# kind -> box (lo, hi) inside the unit cell
BOXES = {
    "cube": ((0, 0, 0), (1, 1, 1)),
    "slab_bottom": ((0, 0, 0), (1, 0.5, 1)),
    "slab_top": ((0, 0.5, 0), (1, 1, 1)),
    "carpet": ((0, 0, 0), (1, 0.0625, 1)),
    "post": ((0.375, 0, 0.375), (0.625, 1, 0.625)),
    "small": ((0.3, 0, 0.3), (0.7, 0.7, 0.7)),
    "water": ((0, 0, 0), (1, 0.875, 1)),
    "lava": ((0, 0, 0), (1, 0.875, 1)),
}
UNKNOWN = {"rgb": [170, 170, 170], "a": 1.0, "kind": "cube", "src": "unknown"}


@lru_cache(maxsize=1)
def table() -> dict[str, dict]:
    raw = resources.files("mcb_camera").joinpath("data/block_colours.json").read_text()
    return json.loads(raw)["blocks"]


@dataclass
class PaletteLuts:
    """Arrays indexed by palette index."""

    draw: np.ndarray  # bool: has geometry
    opaque: np.ndarray  # bool: full opaque cube (hides neighbours' faces)
    translucent: np.ndarray  # bool: drawn in the blended pass
    group: np.ndarray  # int32: same group + translucent -> shared faces culled
    top: np.ndarray  # (n, 4) float32 rgba
    side: np.ndarray  # (n, 4) float32 rgba
    lo: np.ndarray  # (n, 3) float32
    hi: np.ndarray  # (n, 3) float32
    inner: np.ndarray  # (n, 6) bool: the box's face in that dir is inside the cell
    shaped: np.ndarray  # bool: drawn from ``models`` (the shape pass), not the box above
    models: dict[int, Model]
    pattern: np.ndarray  # (n, 6) float32: patterns.* id per face direction of the box
    ring: np.ndarray  # (n, 4) float32 rgba: a log's cut end (its planks' colour)
    states: list[str]  # the palette itself (the shape pass asks patterns.py per face)


def luts(palette: list[str]) -> PaletteLuts:
    t = table()
    n = len(palette)
    draw = np.zeros(n, bool)
    opaque = np.zeros(n, bool)
    translucent = np.zeros(n, bool)
    group = np.zeros(n, np.int32)
    top = np.zeros((n, 4), np.float32)
    side = np.zeros((n, 4), np.float32)
    lo = np.zeros((n, 3), np.float32)
    hi = np.ones((n, 3), np.float32)
    inner = np.zeros((n, 6), bool)
    shaped = np.zeros(n, bool)
    models: dict[int, Model] = {}
    pattern = np.zeros((n, 6), np.float32)
    ring = np.zeros((n, 4), np.float32)
    groups: dict[str, int] = {}
    for i, state in enumerate(palette):
        name = state.split("[", 1)[0]
        if ":" not in name:
            name = "minecraft:" + name
        e = t.get(name, UNKNOWN)
        kind = e["kind"]
        if kind == "none":
            continue
        props = _props(state)
        if kind == "slab":
            kind = {"top": "slab_top", "double": "cube"}.get(props.get("type", "bottom"), "slab_bottom")
        if kind == "water" and props.get("level", "0") not in ("0", ""):
            kind = "carpet" if props.get("level") in ("7",) else "water"
        a = float(e["a"])
        model = model_for(state)
        if model is not None:
            shaped[i] = True
            models[i] = model
        draw[i] = model is None
        opaque[i] = model is None and kind == "cube" and a >= 1.0
        translucent[i] = a < 1.0
        group[i] = groups.setdefault(name, len(groups) + 1)
        rgb = np.array(e["rgb"], np.float32) / 255.0
        srgb = np.array(e.get("side", e["rgb"]), np.float32) / 255.0
        top[i, :3], top[i, 3] = rgb, a
        side[i, :3], side[i, 3] = srgb, a
        pattern[i] = patterns.box_patterns(state)
        plank = patterns.plank_of(state)
        ring[i, :3], ring[i, 3] = (np.array(t[plank]["rgb"], np.float32) / 255.0 if plank in t else rgb), a
        b = BOXES.get(kind, BOXES["cube"])
        lo[i], hi[i] = b
        # dirs 0..5 = +x, -x, +y, -y, +z, -z: hi on the + side, lo on the - side
        for d in range(6):
            inner[i, d] = (b[1][d // 2] < 1) if d % 2 == 0 else (b[0][d // 2] > 0)
    return PaletteLuts(
        draw, opaque, translucent, group, top, side, lo, hi, inner, shaped, models, pattern, ring, list(palette)
    )
