"""Per-material surface patterns of the built-in renderer: which pattern each face of a block
state gets, so that parts made of the same colour still read apart (an oak door in an
oak-plank wall, a log among planks, a glass wall).

Flat map colours alone make an oak door vanish in an oak-plank wall (both are the game's
``WOOD`` map colour). The renderer therefore draws a procedural pattern per face, computed in
the fragment shader (gl.py) from the face's world position, so patterns line up across
neighbouring blocks the way the game's textures do. No texture or other game asset is used;
the patterns are simple drawings of what the blocks look like in the game, in sixteenths of a
block (one texture pixel):

* ``PLANKS`` — horizontal boards, 4 per block (4 px each), joints staggered per board
  (``*_planks`` and the wooden stairs, slabs, fences and gates made of them);
* ``BRICKS`` — 4 courses per block, bricks 8 px long, every other course shifted by half a
  brick, light mortar (``bricks``, ``brick_*``, nether and mud bricks);
* ``STONE_BRICKS`` — 2 courses of 8 px, bricks a block long, shifted by half (every other
  ``*_bricks``: stone, deepslate, blackstone, end stone, tuff, quartz, prismarine...);
* ``BARK_U`` / ``BARK_V`` — bark stripes running along the log's ``axis`` (u/v: which in-plane
  coordinate the stripes vary along), ``RINGS`` — the cut end (square rings, a bark rim) on the
  two faces the ``axis`` points through, drawn in the wood's plank colour (``*_log``, ``*_stem``,
  ``bamboo_block``; ``*_wood``/``*_hyphae`` are bark on every face);
* ``GLASS`` — a 1-px frame (nearly opaque) around each block of glass, the middle stays
  translucent (glass, stained and tinted glass, their panes);
* ``DOOR_LOWER`` / ``DOOR_UPPER`` — a 2-px frame, the lower half with a cross rail and panels,
  the upper half with a (dark) window; ``TRAPDOOR`` — a frame and four openings. Only on the two
  large faces of the 3-px panel; the thin edges stay plain.

Face directions are mesh.py's: 0..5 = +x, -x, +y, -y, +z, -z (6, 7: a plant's cross, never
patterned). In-plane axes per direction (gl.py uses the same): ±x faces (u = z, v = y), ±y
faces (u = x, v = z), ±z faces (u = x, v = y).
"""

from __future__ import annotations

import re
from functools import lru_cache

from .shapes import props

PLAIN, PLANKS, BRICKS, STONE_BRICKS, BARK_U, BARK_V, RINGS, GLASS, DOOR_LOWER, DOOR_UPPER, TRAPDOOR = range(11)
NAMES = (
    "plain",
    "planks",
    "bricks",
    "stone_bricks",
    "bark_u",
    "bark_v",
    "rings",
    "glass",
    "door_lower",
    "door_upper",
    "trapdoor",
)

# world axis (0 x, 1 y, 2 z) of each face direction's normal, and of its in-plane (u, v)
NORMAL_AXIS = (0, 0, 1, 1, 2, 2)
UV_AXES = ((2, 1), (2, 1), (0, 2), (0, 2), (0, 1), (0, 1))

WOODS = (
    "oak",
    "spruce",
    "birch",
    "jungle",
    "acacia",
    "dark_oak",
    "mangrove",
    "cherry",
    "pale_oak",
    "bamboo",
    "crimson",
    "warped",
)
_WOOD_PART = re.compile(r"^(?:" + "|".join(WOODS) + r")_(?:planks|stairs|slab|fence|fence_gate)$")
_SMALL_BRICKS = re.compile(
    r"^(?:bricks|brick_(?:stairs|slab|wall)|(?:red_)?nether_brick(?:s|_stairs|_slab|_wall|_fence)"
    r"|mud_brick(?:s|_stairs|_slab|_wall))$"
)
_BIG_BRICKS = re.compile(r"_bricks$|_brick_(?:stairs|slab|wall)$")
_LOG = re.compile(r"^(?:stripped_)?(.+)_(?:log|stem)$")
_BARK = re.compile(r"^(?:stripped_)?(.+)_(?:wood|hyphae)$")
_GLASS = re.compile(r"(?:^|_)glass(?:_pane)?$")
DOOR_MIN_PX = 8.0  # a door/trapdoor face narrower than this (the panel's 3-px edges) stays plain
GLASS_MIN_PX = 6.0  # a pane's post and arm ends stay plain; its 7-px arms carry the frame


def _name(state: str) -> str:
    name = state.split("[", 1)[0]
    return name.split(":", 1)[1] if ":" in name else name


def plank_of(state: str) -> str | None:
    """The planks a log is cut from (its end faces take their colour): ``minecraft:oak_log`` ->
    ``minecraft:oak_planks``; ``None`` for anything else."""
    name = _name(state)
    if name == "bamboo_block" or name == "stripped_bamboo_block":
        return "minecraft:bamboo_planks"
    m = _LOG.match(name)
    return f"minecraft:{m.group(1)}_planks" if m and m.group(1) in WOODS else None


def _bark(axis: int, d: int) -> int:
    u, v = UV_AXES[d]
    return BARK_U if v == axis else BARK_V


@lru_cache(maxsize=4096)
def box_patterns(state: str) -> tuple[int, ...]:
    """The pattern of each of the six faces (+x, -x, +y, -y, +z, -z) of a block drawn as one box
    (cubes, slabs, stairs' boxes...)."""
    name = _name(state)
    if _WOOD_PART.match(name):
        return (PLANKS,) * 6
    if _SMALL_BRICKS.match(name):
        return (BRICKS,) * 6
    if _BIG_BRICKS.search(name):
        return (STONE_BRICKS,) * 6
    if _GLASS.search(name):
        return (GLASS,) * 6
    bark = _BARK.match(name)
    log, wood = plank_of(state) is not None, bark is not None and bark.group(1) in WOODS
    if log or wood:
        axis = {"x": 0, "y": 1, "z": 2}.get(props(state).get("axis", "y"), 1)
        return tuple(RINGS if log and NORMAL_AXIS[d] == axis else _bark(axis, d) for d in range(6))
    return (PLAIN,) * 6


def shape_face_pattern(state: str, lo: tuple[float, float, float], hi: tuple[float, float, float], d: int) -> int:
    """The pattern of one face of a shaped block's box (lo, hi in sixteenths), looking along ``d``."""
    if d >= 6:
        return PLAIN
    name = _name(state)
    u, v = UV_AXES[d]
    extent = min(hi[u] - lo[u], hi[v] - lo[v])
    if name.endswith("_door"):
        if extent < DOOR_MIN_PX:
            return PLAIN
        return DOOR_UPPER if props(state).get("half") == "upper" else DOOR_LOWER
    if name.endswith("_trapdoor"):
        return TRAPDOOR if extent >= DOOR_MIN_PX else PLAIN
    p = box_patterns(state)[d]
    if p == GLASS and extent < GLASS_MIN_PX:
        return PLAIN
    return p
