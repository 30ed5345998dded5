"""Block-state transforms: quarter-turn rotation about the vertical axis and mirroring.

Coordinates are Minecraft's: +x = east, +z = south, north = -z. Conventions (also in
docs/recipes.md, "Rotation and mirroring"):

- ``rotate(state, k, registry)`` turns the block ``k`` quarter turns *clockwise seen from
  above* (north → east → south → west), like vanilla ``Rotation.CLOCKWISE_90`` applied k times.
- ``mirror(state, "x", registry)`` reflects across a plane perpendicular to the x axis
  (x ↦ −x: east ↔ west; vanilla ``Mirror.FRONT_BACK``); ``mirror(state, "z", registry)``
  negates z (north ↔ south; vanilla ``Mirror.LEFT_RIGHT``).

Rules are per *property*, chosen by name and value set, so they cover every block of the
registry (``PROPERTY_RULES`` below; ``INVARIANT_PROPERTIES`` lists those that no rotation or
mirror changes — a test asserts every property name of the registry is in one of the two):

- ``facing`` (4-, 5- and 6-way): the direction is mapped; ``up``/``down`` stay.
- ``axis``: ``x`` ↔ ``z`` on odd quarter turns; ``y`` stays; mirrors keep it.
- ``north``/``east``/``south``/``west`` (fences, panes, walls with none/low/tall, redstone
  wire with up/side/none, vines, fire, glow lichen, sculk vein, mushroom blocks, tripwire,
  chorus plants…): the *values* move with their directions; ``up``/``down`` stay.
- ``rotation`` 0–15 (signs, banners, heads; 0 = south, 4 = west, 8 = north, 12 = east):
  +4 per clockwise quarter turn; mirror x: ``(16 − r) mod 16``; mirror z: ``(8 − r) mod 16``.
- ``shape`` of stairs: unchanged by rotation (it is relative to ``facing``); every mirror
  swaps left ↔ right (a reflection reverses handedness).
- ``shape`` of rails: the connected directions are mapped (``north_south`` ↔ ``east_west``,
  ``ascending_*``, curves ``south_east``…).
- ``hinge`` (doors), chest ``type`` (left/right), shelf ``side_chain`` (left/right): swap
  under every mirror, unchanged by rotation.
- ``orientation`` (jigsaw, crafter: ``<front>_<top>``): both directions are mapped.

Deliberate deviation from vanilla (checked against the game's ``BlockStairs.withMirror``,
MCP-decompiled 1.12 source as mirrored in KettleFoundation/Kettle,
``mcp/src/minecraft/net/minecraft/block/BlockStairs.java``): vanilla only rewrites stairs
whose facing lies on the mirrored axis, keeps ``inner_left``/``inner_right`` unchanged under
``FRONT_BACK``, and leaves stairs facing along the other axis untouched — so a mirrored
corner comes out the wrong hand. We always swap the hand, which makes ``mirror ∘ mirror`` the
identity and ``rotate 180 = mirror x ∘ mirror z`` hold for every state (property-tested).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from .blockstate import parse_state_text
from .errors import ErrorCode, McbError

HORIZONTAL = ("north", "east", "south", "west")  # clockwise seen from above
DIRECTIONS = frozenset(HORIZONTAL) | {"up", "down"}

# Properties no quarter turn or mirror about the vertical axis changes.
INVARIANT_PROPERTIES: frozenset[str] = frozenset(
    {
        "age",
        "attached",
        "attachment",
        "berries",
        "bites",
        "bloom",
        "bottom",
        "can_summon",
        "candles",
        "charges",
        "conditional",
        "copper_golem_pose",
        "cracked",
        "crafting",
        "creaking_heart_state",
        "delay",
        "disarmed",
        "distance",
        "down",
        "drag",
        "dusted",
        "eggs",
        "enabled",
        "extended",
        "eye",
        "face",
        "flower_amount",
        "half",
        "hanging",
        "has_book",
        "has_bottle_0",
        "has_bottle_1",
        "has_bottle_2",
        "has_record",
        "hatch",
        "honey_level",
        "hydration",
        "in_wall",
        "instrument",
        "inverted",
        "layers",
        "leaves",
        "level",
        "lit",
        "locked",
        "mode",
        "moisture",
        "natural",
        "note",
        "occupied",
        "ominous",
        "open",
        "part",
        "persistent",
        "pickles",
        "power",
        "powered",
        "sculk_sensor_phase",
        "segment_amount",
        "short",
        "shrieking",
        "signal_fire",
        "slot_0_occupied",
        "slot_1_occupied",
        "slot_2_occupied",
        "slot_3_occupied",
        "slot_4_occupied",
        "slot_5_occupied",
        "snowy",
        "stage",
        "thickness",
        "tilt",
        "tip",
        "trial_spawner_state",
        "triggered",
        "unstable",
        "up",
        "vault_state",
        "vertical_direction",
        "waterlogged",
    }
)
# Properties a transform rule handles (some only for particular value sets, e.g. ``type``
# only when its values are single/left/right, ``shape`` for stairs and rails).
TRANSFORMED_PROPERTIES: frozenset[str] = frozenset(
    {
        "facing",
        "axis",
        "north",
        "east",
        "south",
        "west",
        "rotation",
        "shape",
        "hinge",
        "type",
        "side_chain",
        "orientation",
    }
)

_STAIR_SHAPES = frozenset({"straight", "inner_left", "inner_right", "outer_left", "outer_right"})
_HAND_SWAP = {
    "left": "right",
    "right": "left",
    "inner_left": "inner_right",
    "inner_right": "inner_left",
    "outer_left": "outer_right",
    "outer_right": "outer_left",
}


class _Op:
    """One rigid motion of the horizontal plane: a direction map plus handedness."""

    __slots__ = ("dir", "flips", "rot16", "swaps_xz", "key")

    def __init__(self, key: str, dir_map: dict[str, str], flips: bool, rot16: Callable[[int], int], swaps_xz: bool):
        self.key = key
        self.dir = dir_map
        self.flips = flips
        self.rot16 = rot16
        self.swaps_xz = swaps_xz


def _rotation_op(k: int) -> _Op:
    k %= 4
    dm = {d: HORIZONTAL[(i + k) % 4] for i, d in enumerate(HORIZONTAL)}
    dm.update(up="up", down="down")

    def rot16(r: int) -> int:
        return (r + 4 * k) % 16

    return _Op(f"r{k}", dm, False, rot16, k % 2 == 1)


_MIRROR_X = _Op(
    "mx",
    {"north": "north", "south": "south", "east": "west", "west": "east", "up": "up", "down": "down"},
    True,
    lambda r: (16 - r) % 16,
    False,
)
_MIRROR_Z = _Op(
    "mz",
    {"north": "south", "south": "north", "east": "east", "west": "west", "up": "up", "down": "down"},
    True,
    lambda r: (8 - r) % 16,
    False,
)
_ROTATIONS = tuple(_rotation_op(k) for k in range(4))


def _rail_dirs(value: str) -> tuple[str, frozenset[str]] | None:
    if value.startswith("ascending_"):
        return "ascending", frozenset({value[len("ascending_") :]})
    parts = value.split("_")
    if len(parts) == 2 and all(p in HORIZONTAL for p in parts):
        return "flat", frozenset(parts)
    return None


def _rail_name(kind: str, dirs: frozenset[str]) -> str:
    if kind == "ascending":
        (d,) = dirs
        return f"ascending_{d}"
    ns = "north" if "north" in dirs else ("south" if "south" in dirs else None)
    ew = "east" if "east" in dirs else ("west" if "west" in dirs else None)
    if ns and ew:
        return f"{ns}_{ew}"
    return "north_south" if ns else "east_west"


def _apply(props: dict[str, str], allowed: dict[str, tuple[str, ...]], op: _Op) -> dict[str, str]:
    out = dict(props)
    d = op.dir
    # Connection values move with their directions (fences, panes, walls, wire, vines...).
    sides = [s for s in HORIZONTAL if s in props]
    if sides:
        for s in sides:
            out[d[s]] = props[s]
    for name, value in props.items():
        if name == "facing" or name == "orientation":
            if name == "facing":
                out[name] = d[value]
            else:
                front, top = value.split("_")
                out[name] = f"{d[front]}_{d[top]}"
        elif name == "axis":
            if op.swaps_xz and value in ("x", "z"):
                out[name] = "z" if value == "x" else "x"
        elif name == "rotation":
            out[name] = str(op.rot16(int(value)))
        elif name == "shape":
            vals = allowed[name]
            if _STAIR_SHAPES.issuperset(vals):
                if op.flips:
                    out[name] = _HAND_SWAP.get(value, value)
            else:
                parsed = _rail_dirs(value)
                if parsed is not None:
                    kind, dirs = parsed
                    out[name] = _rail_name(kind, frozenset(d[x] for x in dirs))
        elif name in ("hinge", "side_chain") or (name == "type" and "left" in allowed[name]):
            if op.flips:
                out[name] = _HAND_SWAP.get(value, value)
    return out


@lru_cache(maxsize=131072)
def _transform_cached(registry, canonical: str, op_key: str) -> str:
    op = _op_for_key(op_key)
    name, props = parse_state_text(canonical)
    if not props:
        return canonical
    allowed = dict(registry.blocks[name].properties)
    out = _apply(props, allowed, op)
    for k, v in out.items():  # defensive: a rule must never leave the value set
        if v not in allowed[k]:
            raise McbError(
                ErrorCode.UNSUPPORTED_BLOCK, f"transform {op_key} of {canonical} gives {k}={v}, not a valid value"
            )
    return f"{name}[{','.join(f'{k}={out[k]}' for k in sorted(out))}]"


def _op_for_key(key: str) -> _Op:
    if key == "mx":
        return _MIRROR_X
    if key == "mz":
        return _MIRROR_Z
    return _ROTATIONS[int(key[1:])]


def rotate(state: str, quarter_turns_clockwise_seen_from_above: int, registry) -> str:
    """``state`` turned k quarter turns clockwise (seen from above); canonical result."""
    k = int(quarter_turns_clockwise_seen_from_above) % 4
    c = registry.canonical(state)
    if k == 0:
        return c
    return _transform_cached(registry, c, f"r{k}")


def mirror(state: str, axis: str, registry) -> str:
    """``state`` reflected so that ``axis`` ('x' or 'z') is negated; canonical result."""
    if axis not in ("x", "z"):
        raise McbError(ErrorCode.INVALID_REQUEST, f"mirror axis must be 'x' or 'z', got {axis!r}")
    return _transform_cached(registry, registry.canonical(state), "m" + axis)


def transform(state: str, registry, *, mirror_axis: str | None = None, quarter_turns: int = 0) -> str:
    """Mirror first (if any), then rotate — the order the recipe ``transform`` uses."""
    s = registry.canonical(state)
    if mirror_axis:
        s = mirror(s, mirror_axis, registry)
    if quarter_turns % 4:
        s = rotate(s, quarter_turns, registry)
    return s


def rotate_offset(dx: int, dz: int, quarter_turns: int) -> tuple[int, int]:
    """A horizontal offset turned clockwise seen from above (north=-z → east=+x)."""
    for _ in range(quarter_turns % 4):
        dx, dz = -dz, dx
    return dx, dz
