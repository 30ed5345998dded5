"""Block-entity data ("furniture"): the model every part of the write path shares.

A block that carries a block entity (chest, sign, banner, bed …) travels as one text, its
*full state*: the canonical block state followed, when the block entity holds data, by that
data as canonical JSON — like the game's own ``/setblock`` syntax::

    minecraft:chest[facing=north,type=single,waterlogged=false]{"items":[{"count":3,"id":"minecraft:bread","slot":0}]}

Canonical JSON: keys sorted, no spaces, non-ASCII kept (``json.dumps(sort_keys=True,
separators=(",", ":"), ensure_ascii=False)``; the Java core writes the same bytes). Default
values are left out, and an empty block entity (an empty chest, a bed, a sign without text)
has no ``{…}`` at all, so equal contents give equal texts: the journal's compare-and-set,
conflicts and undo compare full states as strings. A state text never contains ``{``.

The data model (one key per kind; the same shape is the recipe's ``block_entity`` field, which
also accepts shorthand — ``normalise`` turns either into the canonical dict):

- ``items``: ``[{slot, id, count, components?}]`` — containers (chest, barrel, furnace, hopper,
  …) and campfires; ``slot`` 0..size−1 (unique; default: the next free slot), ``id`` an item of
  the registry's item list (``data/items-<version>.json``), ``count`` 1..the item's stack size
  (default 1). Sorted by slot. ``components`` (left out when empty): the item components the
  model carries, plain text only — ``minecraft:custom_name`` (a string) and ``minecraft:lore``
  (a list of strings); ``custom_name``/``lore`` without the namespace are accepted.
- ``text``: signs and hanging signs — ``{front, back, waxed}``; a side is a list of up to 4
  lines or ``{lines, color, glowing}``; a line ≤ 90 characters, no control characters.
  Canonical sides always hold 4 lines; ``color`` (a dye colour) is left out when ``black``,
  ``glowing``/``waxed`` when false, a side when it is all default.
- ``patterns``: banners — ``[{pattern, color}]`` in layer order, at most 16.
- ``profile``: player heads — the player name (1..16 of ``A-Za-z0-9_``); the game fetches the
  skin when it loads the head.

Kinds of block entity: ``SUPPORTED`` (the key each one accepts, ``None`` for "no data":
beds, enchanting tables, bells …) and ``REFUSED`` (spawners, command blocks, structure and
jigsaw blocks, …: each with the reason, refused before any write).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from .errors import ErrorCode, McbError
from .registry import DEFAULT_VERSION

DYE_COLORS = (
    "white",
    "orange",
    "magenta",
    "light_blue",
    "yellow",
    "lime",
    "pink",
    "gray",
    "light_gray",
    "cyan",
    "purple",
    "blue",
    "brown",
    "green",
    "red",
    "black",
)
BANNER_PATTERNS = (
    "base",
    "border",
    "bricks",
    "circle",
    "creeper",
    "cross",
    "curly_border",
    "diagonal_left",
    "diagonal_right",
    "diagonal_up_left",
    "diagonal_up_right",
    "flow",
    "flower",
    "globe",
    "gradient",
    "gradient_up",
    "guster",
    "half_horizontal",
    "half_horizontal_bottom",
    "half_vertical",
    "half_vertical_right",
    "mojang",
    "piglin",
    "rhombus",
    "skull",
    "small_stripes",
    "square_bottom_left",
    "square_bottom_right",
    "square_top_left",
    "square_top_right",
    "straight_cross",
    "stripe_bottom",
    "stripe_center",
    "stripe_downleft",
    "stripe_downright",
    "stripe_left",
    "stripe_middle",
    "stripe_right",
    "stripe_top",
    "triangle_bottom",
    "triangle_top",
    "triangles_bottom",
    "triangles_top",
)
MAX_PATTERNS = 16
MAX_LINE = 90
LINES = 4
_PROFILE = re.compile(r"^[A-Za-z0-9_]{1,16}$")
_ITEM = re.compile(r"^(?:minecraft:)?([a-z0-9_./\-]+)$")
# item components the model carries (plain text; 1.21.5+ stores a plain text component as a string tag)
ITEM_COMPONENTS = ("minecraft:custom_name", "minecraft:lore")
MAX_NAME = 256  # characters of a custom name / a lore line (an anvil allows 50; commands more)
MAX_LORE = 256  # lines (the game's ItemLore.MAX_LINES)

# block entity id -> (data key or None, container size)
CONTAINERS = {
    "chest": 27,
    "trapped_chest": 27,
    "barrel": 27,
    "shulker_box": 27,
    "dispenser": 9,
    "dropper": 9,
    "hopper": 5,
    "brewing_stand": 5,
    "furnace": 3,
    "smoker": 3,
    "blast_furnace": 3,
    "campfire": 4,
    "soul_campfire": 4,
}
SUPPORTED: dict[str, str | None] = {
    **dict.fromkeys(CONTAINERS, "items"),
    "sign": "text",
    "hanging_sign": "text",
    "banner": "patterns",
    "skull": "profile",
    **dict.fromkeys(
        (
            "bed",
            "enchanting_table",
            "ender_chest",
            "bell",
            "lectern",
            "jukebox",
            "decorated_pot",
            "chiseled_bookshelf",
            "shelf",
            "daylight_detector",
            "comparator",
            "conduit",
            "beacon",
            "beehive",
            "sculk_catalyst",
            "sculk_sensor",
            "calibrated_sculk_sensor",
            "sculk_shrieker",
            "crafter",
            "creaking_heart",
            "copper_golem_statue",
        ),
        None,
    ),
}
REFUSED: dict[str, str] = {
    "mob_spawner": "a spawner's mob and spawn rules are custom NBT this tool does not write",
    "trial_spawner": "a trial spawner's mob and spawn rules are custom NBT this tool does not write",
    "vault": "a vault's loot and key are custom NBT this tool does not write",
    "command_block": "command blocks run commands; they are never placed by the agent",
    "structure_block": "structure blocks load and save structures; they are never placed by the agent",
    "jigsaw": "jigsaw blocks belong to structure generation; they are never placed by the agent",
    "test_block": "test blocks belong to the game's test framework",
    "test_instance_block": "test instance blocks belong to the game's test framework",
    "end_portal": "end portal blocks teleport players; they are never placed by the agent",
    "end_gateway": "end gateways teleport players; they are never placed by the agent",
    "piston": "moving pistons exist only while a piston moves",
    "brushable_block": "suspicious sand/gravel hides loot-table NBT this tool does not write",
}


def dumps(value: Any) -> str:
    """Canonical JSON (the Java core's ``BlockEntityData.canonical`` writes the same text)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def split(full: str) -> tuple[str, str]:
    """``state{data}`` → (state, data JSON text or "")."""
    i = full.find("{")
    return (full, "") if i < 0 else (full[:i], full[i:])


def join(state: str, data: dict[str, Any] | None) -> str:
    return state + dumps(data) if data else state


def strip(full: str) -> str:
    """The block state of a full state (its data dropped)."""
    i = full.find("{")
    return full if i < 0 else full[:i]


@dataclass(frozen=True)
class Items:
    stack: dict[str, int]  # "minecraft:bread" -> 64

    @classmethod
    def load(cls, version: str = DEFAULT_VERSION) -> Items:
        return _items(version)


@lru_cache(maxsize=2)
def _items(version: str) -> Items:
    name = f"items-{version}.json"
    try:
        raw = json.loads(resources.files("mcb_common").joinpath("data", name).read_text())
    except FileNotFoundError:
        raw = json.loads(resources.files("mcb_common").joinpath("data", f"items-{DEFAULT_VERSION}.json").read_text())
    return Items({f"minecraft:{i['name']}": int(i["stackSize"]) for i in raw if i["name"] != "air"})


def _bad(path: str, message: str, **details: Any) -> McbError:
    return McbError(ErrorCode.INVALID_REQUEST, f"{path}: {message}", details={"path": path, **details})


def _kind_name(v: Any) -> str:
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        type(None): "null",
    }.get(type(v), type(v).__name__)


def _obj(v: Any, path: str, allowed: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise _bad(path, f"must be an object, got {_kind_name(v)}")
    extra = sorted(set(v) - set(allowed))
    if extra:
        raise _bad(path, f"unknown key {extra[0]!r}; allowed: {', '.join(allowed)}", reason="unknown_key")
    return v


def _int(v: Any, path: str, lo: int, hi: int) -> int:
    if isinstance(v, float) and v.is_integer():  # JSON 3.0 is the integer 3
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise _bad(path, f"must be an integer {lo}..{hi}, got {_kind_name(v)}")
    if not lo <= v <= hi:
        raise _bad(path, f"must be {lo}..{hi}, got {v}", reason="out_of_range")
    return v


def _choice(v: Any, path: str, options: tuple[str, ...], what: str, ns: bool = False) -> str:
    if not isinstance(v, str):
        raise _bad(path, f"must be {what} (a string), got {_kind_name(v)}")
    s = v.removeprefix("minecraft:") if ns else v
    if s not in options:
        import difflib

        near = difflib.get_close_matches(s, options, n=1)
        raise _bad(
            path, f"{v!r} is not {what}" + (f" — did you mean {near[0]!r}?" if near else ""), reason="unknown_value"
        )
    return f"minecraft:{s}" if ns else s


def _items_of(v: Any, path: str, size: int, version: str) -> list[dict[str, Any]]:
    if not isinstance(v, list):
        raise _bad(path, f"must be an array of {{slot, id, count}}, got {_kind_name(v)}")
    if len(v) > size:
        raise _bad(path, f"holds {len(v)} stacks; this block has {size} slots", reason="out_of_range")
    known = Items.load(version).stack
    out: dict[int, dict[str, Any]] = {}
    pending: list[tuple[str, dict[str, Any]]] = []
    for i, it in enumerate(v):
        p = f"{path}[{i}]"
        o = _obj(it, p, ("slot", "id", "count", "components"))
        if "id" not in o:
            raise _bad(p, 'needs an item id, e.g. {"id": "minecraft:bread", "count": 3}')
        if not isinstance(o["id"], str) or not _ITEM.match(o["id"].strip().lower()):
            raise _bad(f"{p}.id", f"must be an item id like minecraft:bread, got {o['id']!r}")
        iid = "minecraft:" + _ITEM.match(o["id"].strip().lower()).group(1)  # type: ignore[union-attr]
        stack = known.get(iid)
        if stack is None:
            import difflib

            near = difflib.get_close_matches(iid, list(known), n=1)
            raise _bad(
                f"{p}.id",
                f"{o['id']!r} is not an item of this version" + (f" — did you mean {near[0]!r}?" if near else ""),
                reason="unknown_item",
            )
        count = _int(o.get("count", 1), f"{p}.count", 1, stack)
        entry: dict[str, Any] = {"count": count, "id": iid}
        if "components" in o:
            comps = _components(o["components"], f"{p}.components")
            if comps:
                entry["components"] = comps
        if "slot" in o:
            slot = _int(o["slot"], f"{p}.slot", 0, size - 1)
            if slot in out:
                raise _bad(f"{p}.slot", f"slot {slot} is used twice", reason="duplicate_slot")
            out[slot] = entry
        else:
            pending.append((p, entry))
    free = (s for s in range(size) if s not in out)
    for p, entry in pending:
        free_slot = next(free, None)
        if free_slot is None:
            raise _bad(p, f"no free slot left (this block has {size})", reason="out_of_range")
        out[free_slot] = entry
    return [{**out[s], "slot": s} for s in sorted(out)]


def _plain(v: Any, path: str) -> str:
    if not isinstance(v, str):
        raise _bad(path, f"must be a string (plain text), got {_kind_name(v)}")
    if len(v) > MAX_NAME:
        raise _bad(path, f"is {len(v)} characters; at most {MAX_NAME}", reason="out_of_range")
    if any(ord(c) < 32 or c == "\x7f" or c == "§" for c in v):
        raise _bad(path, "must not contain control characters or §")
    return v


def _components(v: Any, path: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise _bad(path, f"must be an object, got {_kind_name(v)}")
    out: dict[str, Any] = {}
    for k, val in v.items():
        name = k if ":" in k else f"minecraft:{k}"
        if name not in ITEM_COMPONENTS:
            raise _bad(
                f"{path}.{k}",
                f"item component {k!r} is not carried by this tool; allowed: " + ", ".join(ITEM_COMPONENTS),
                reason="unknown_key",
            )
        if name in out:
            raise _bad(f"{path}.{k}", f"{name} is given twice", reason="duplicate_key")
        if name == "minecraft:custom_name":
            out[name] = _plain(val, f"{path}.{k}")
        else:
            if not isinstance(val, list):
                raise _bad(f"{path}.{k}", f"must be an array of strings, got {_kind_name(val)}")
            if len(val) > MAX_LORE:
                raise _bad(f"{path}.{k}", f"holds {len(val)} lines; at most {MAX_LORE}", reason="out_of_range")
            lines = [_plain(line, f"{path}.{k}[{i}]") for i, line in enumerate(val)]
            if lines:
                out[name] = lines
    return out


def _side(v: Any, path: str) -> dict[str, Any] | None:
    if isinstance(v, list):
        v = {"lines": v}
    o = _obj(v, path, ("lines", "color", "glowing"))
    lines = o.get("lines", [])
    if not isinstance(lines, list):
        raise _bad(f"{path}.lines", f"must be an array of up to {LINES} strings, got {_kind_name(lines)}")
    if len(lines) > LINES:
        raise _bad(f"{path}.lines", f"a sign side holds at most {LINES} lines, got {len(lines)}", reason="out_of_range")
    clean = []
    for i, line in enumerate(lines):
        if not isinstance(line, str):
            raise _bad(f"{path}.lines[{i}]", f"must be a string, got {_kind_name(line)}")
        if len(line) > MAX_LINE:
            raise _bad(
                f"{path}.lines[{i}]",
                f"is {len(line)} characters; a sign line holds at most {MAX_LINE}",
                reason="out_of_range",
            )
        if any(ord(c) < 32 or c == "\x7f" or c == "§" for c in line):
            raise _bad(f"{path}.lines[{i}]", "must not contain control characters or §")
        clean.append(line)
    clean += [""] * (LINES - len(clean))
    color = _choice(o.get("color", "black"), f"{path}.color", DYE_COLORS, "a dye colour")
    glowing = o.get("glowing", False)
    if not isinstance(glowing, bool):
        raise _bad(f"{path}.glowing", f"must be true or false, got {_kind_name(glowing)}")
    if not any(clean) and color == "black" and not glowing:
        return None
    out: dict[str, Any] = {"lines": clean}
    if color != "black":
        out["color"] = color
    if glowing:
        out["glowing"] = True
    return out


def _text(v: Any, path: str) -> dict[str, Any] | None:
    o = _obj(v, path, ("front", "back", "waxed"))
    out: dict[str, Any] = {}
    for side in ("front", "back"):
        if side in o:
            s = _side(o[side], f"{path}.{side}")
            if s:
                out[side] = s
    waxed = o.get("waxed", False)
    if not isinstance(waxed, bool):
        raise _bad(f"{path}.waxed", f"must be true or false, got {_kind_name(waxed)}")
    if waxed:
        out["waxed"] = True
    return out or None


def _patterns(v: Any, path: str) -> list[dict[str, str]] | None:
    if not isinstance(v, list):
        raise _bad(path, f"must be an array of {{pattern, color}}, got {_kind_name(v)}")
    if len(v) > MAX_PATTERNS:
        raise _bad(path, f"a banner holds at most {MAX_PATTERNS} patterns, got {len(v)}", reason="out_of_range")
    out = []
    for i, p in enumerate(v):
        o = _obj(p, f"{path}[{i}]", ("pattern", "color"))
        if "pattern" not in o or "color" not in o:
            raise _bad(f"{path}[{i}]", 'needs pattern and color, e.g. {"pattern": "stripe_top", "color": "red"}')
        out.append(
            {
                "color": _choice(o["color"], f"{path}[{i}].color", DYE_COLORS, "a dye colour"),
                "pattern": _choice(o["pattern"], f"{path}[{i}].pattern", BANNER_PATTERNS, "a banner pattern", ns=True),
            }
        )
    return out or None


def refusal(be_id: str) -> str | None:
    """Why this kind of block entity is refused, or None when it is supported."""
    if be_id in SUPPORTED:
        return None
    return REFUSED.get(be_id, f"block entity {be_id!r} is not supported by this tool")


def normalise(
    be_id: str, block_name: str, data: Any, path: str = "block_entity", version: str = DEFAULT_VERSION
) -> dict[str, Any] | None:
    """Validate the ``block_entity`` data of one block (recipe shorthand or canonical form)
    and return its canonical dict, or None when it is empty. ``invalid_request`` naming the
    path for bad data; ``unsupported_block`` for refused kinds."""
    why = refusal(be_id)
    if why is not None:
        raise McbError(
            ErrorCode.UNSUPPORTED_BLOCK,
            f"{path}: {block_name} cannot be placed: {why}",
            details={"path": path, "reason": "unsupported_block_entity", "block_entity": be_id},
        )
    key = SUPPORTED[be_id]
    if data is None:
        return None
    allowed = (key,) if key else ()
    if key == "profile" and block_name.removeprefix("minecraft:") not in ("player_head", "player_wall_head"):
        allowed = ()
    o = _obj(data, path, allowed)
    if not o:
        return None
    v: dict[str, Any] | list[dict[str, Any]] | list[dict[str, str]] | str | None
    if key == "items":
        v = _items_of(o["items"], f"{path}.items", CONTAINERS[be_id], version)
    elif key == "text":
        v = _text(o["text"], f"{path}.text")
    elif key == "patterns":
        v = _patterns(o["patterns"], f"{path}.patterns")
    else:
        name = o["profile"]
        if not isinstance(name, str) or not _PROFILE.match(name):
            raise _bad(f"{path}.profile", f"must be a player name (1..16 of A-Z a-z 0-9 _), got {name!r}")
        v = name
    return {key: v} if v and key else None  # key is set whenever o is not empty


def canonical_full(full: str, be_id: str | None, version: str = DEFAULT_VERSION) -> str:
    """Check the data part of a full state whose block state is already canonical (hosts use
    it on ``desired``); returns the canonical full state. ``be_id``: the block's block entity."""
    state, text = split(full)
    if not text:
        return state
    if be_id is None:
        raise McbError(ErrorCode.UNSUPPORTED_BLOCK, f"{state} carries no block entity; it cannot hold {text[:60]}")
    try:
        data = json.loads(text)
    except ValueError as e:
        raise McbError(ErrorCode.UNSUPPORTED_BLOCK, f"the block-entity data of {state} is not JSON: {e}") from None
    try:
        return join(state, normalise(be_id, state.split("[", 1)[0], data, "data", version))
    except McbError as e:
        raise McbError(ErrorCode.UNSUPPORTED_BLOCK, e.message, details=e.details) from None
