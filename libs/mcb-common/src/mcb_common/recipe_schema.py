"""JSON Schema (draft 2020-12) of recipe v1 (language revision 3), and the static bounds it
shares with the parser.

The bridge exposes ``RECIPE_SCHEMA`` as the input schema of the ``build_prepare`` tool; the
planner's parser (``mcb_planner.recipe``, ``grammar``, ``ops/``) imports the constants below and
takes each operation's required and optional keys and the operation types from this schema, so
the two cannot drift, and a planner test checks that both accept and refuse the same inputs.

Revision 2 keeps ``version: 1``: it is a strict superset of revision 1 (every recipe that was
valid stays valid and compiles to the same blocks). It adds the ``arch`` and ``transform``
operations, integer fields that may be expressions over ``params`` (strings like
``"floors * 4 + 1"``), palette entries with weighted choices, and ``"$name"`` palette
references wherever a block is expected. Revision 3 adds ``replace`` (a box mask plus a
filter on the current states) and ``paste`` (a library asset or a defined part). Revision 4
adds the solids ``sphere``, ``ellipsoid``, ``dome``, ``cone``, ``pyramid``, ``polygon`` (and
``axis``/``thickness`` on ``cylinder``), ``overlay`` and ``foundation``; the planner also fills
in connection states (fences, panes, walls, stairs, wire, chests) and the other half of doors,
beds and tall plants (docs/recipes.md, "Connected and two-part blocks").

What the schema cannot say, and only the planner checks (docs/recipes.md):
  * box corners in order (``min`` ≤ ``max`` on every axis);
  * expressions: grammar, param names, integral results and their ranges;
  * that a ``$name`` reference names a palette entry;
  * the configurable budgets: nesting depth, operations after repeat expansion,
    examined and changed positions, time (``budget_exceeded``);
  * block states against the registry of the target version (``unsupported_block``);
  * the project's area and the world's heights (``out_of_bounds``);
  * that a ``foundation`` holds shapes only (no replace/overlay/foundation inside) and that a
    ``thickness`` comes without ``"hollow": false``.

JSON numbers with a zero fraction (``64.0``) count as integers, as in JSON Schema itself.
"""

from __future__ import annotations

from typing import Any

from .errors import ErrorCode, McbError

RECIPE_VERSION = 1

# Minecraft Java's world border: ±29,999,984 horizontally (mirrors geometry.WORLD_XZ_LIMIT).
COORD_LIMIT = 29_999_984
MAX_REPEAT_COUNT = 1024
MAX_RADIUS = 65_535
MAX_HEIGHT = 65_535
MAX_BLOCK_TEXT = 256
MAX_PARAMS = 64
MAX_PALETTE = 64
MAX_SEED = 2**53 - 1  # the largest integer every JSON reader keeps exactly
NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,31}$"
MAX_ARCH_DEPTH = 65_535
MAX_PALETTE_CHOICES = 16
MAX_PALETTE_WEIGHT = 1000
MAX_PARAM_MAGNITUDE = 10**15
# Expression text (mcb_planner.expr.EXPR_PATTERN is the same pattern).
EXPR_PATTERN = r"^[A-Za-z0-9_+\-*/%()., ]{1,256}$"
LANGUAGE_REVISION = 4
# replace: filter entries ("!" negates; "*" = every non-air state; a block id with or without
# properties); paste: asset ids (mcb_common.assets.ASSET_ID_RE) and part ids.
MAX_FILTER_ENTRIES = 32
FILTER_ENTRY_PATTERN = r"^!?[^!]"
ASSET_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}(\.nbt|\.schem)?$"
PART_ID_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
# Revision 4: solids (sphere, ellipsoid, dome, cone, pyramid, polygon, cylinder along any axis
# or with a thick wall), overlay and foundation.
MAX_SOLID_RADIUS = 1024
MAX_THICKNESS = 1024
MAX_POLYGON_POINTS = 256
MAX_OVERLAY_DEPTH = 64
MAX_FOUNDATION_DEPTH = 384
AXES = ("+x", "-x", "+y", "-y", "+z", "-z")
# Structural limits checked before any schema validation or parsing (``check_shape``): they
# bound the work a request can cause no matter what it holds. A recipe is at most
# MAX_RECIPE_BYTES of JSON, nested at most MAX_JSON_DEPTH arrays/objects deep, with at most
# MAX_RECIPE_OPERATIONS operation objects in all (nested ones included, before repeats expand;
# the planner's budget on expanded shapes is separate and usually lower).
MAX_RECIPE_BYTES = 1024 * 1024
MAX_JSON_DEPTH = 64
MAX_RECIPE_OPERATIONS = 1024
MAX_JSON_NODES = 200_000

_ID = "https://minecraft-builder-mcp.dev/schemas/recipe-v1.json"
_HOLLOW: dict[str, Any] = {
    "hollow": {"type": "boolean", "default": False},
    "thickness": {
        "anyOf": [{"type": "integer", "minimum": 1, "maximum": MAX_THICKNESS}, {"$ref": "#/$defs/expression"}],
        "description": "wall thickness of a hollow shape (implies hollow; default 1)",
    },
}
_AXIS: dict[str, Any] = {
    "enum": list(AXES),
    "default": "+y",
    "description": "the direction the shape grows from center",
}


def _int_or_expr(lo: int, hi: int, description: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"anyOf": [{"type": "integer", "minimum": lo, "maximum": hi}, {"$ref": "#/$defs/expression"}]}
    if description:
        out["description"] = description
    return out


def _vec3(description: str) -> dict[str, Any]:
    return {"$ref": "#/$defs/vec3", "description": description}


def _op(
    type_name: str, description: str, props: dict[str, Any], required: list[str], *, example: dict[str, Any]
) -> dict[str, Any]:
    """One operation's schema. ``example`` (required: an operation cannot be added without one)
    is the JSON Schema ``examples`` annotation; the agent's guides (mcb://guides/recipes and
    examples) and build_prepare's description are generated from these definitions, and a test
    builds every example on a fresh flat world (grass at y = 63, default area x/z −64 … 63)."""
    return {
        "type": "object",
        "description": description,
        "properties": {"type": {"const": type_name}, **props},
        "required": ["type", *required],
        "additionalProperties": False,
        "examples": [{"type": type_name, **example}],
    }


# cone and pyramid: a base at `center` and layers along `axis`
_AXIAL: dict[str, Any] = {
    "center": _vec3("centre of the base"),
    "radius": _int_or_expr(0, MAX_SOLID_RADIUS),
    "height": _int_or_expr(1, MAX_SOLID_RADIUS + 1),
    "axis": _AXIS,
    "block": {"$ref": "#/$defs/block"},
    **_HOLLOW,
}


RECIPE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": _ID,
    "title": "minecraft-builder-mcp recipe v1 (language revision 4)",
    "description": (
        "A declarative build: operations are applied in order and later ones win where they "
        "overlap. Coordinates are absolute block positions; boxes are inclusive. Any integer "
        "may be an expression string over params (+ - * / % ( ) min max abs floor ceil round), "
        'e.g. "base_y + floors * 4"; any block may be a palette reference "$name". '
        "Connection properties (fence/pane/wall sides, stair shapes, wire sides, chest type, "
        "door hinge) that a block text leaves out are computed from the final neighbourhood; "
        "the other half of a door, bed or tall plant is added."
    ),
    "type": "object",
    "properties": {
        "version": {"const": RECIPE_VERSION},
        "params": {
            "type": "object",
            "description": "Named numbers, or expressions over other params; referenced by name "
            "in any integer field's expression.",
            "propertyNames": {"pattern": NAME_PATTERN},
            "additionalProperties": {
                "anyOf": [
                    {"type": "number", "minimum": -MAX_PARAM_MAGNITUDE, "maximum": MAX_PARAM_MAGNITUDE},
                    {"$ref": "#/$defs/expression"},
                ]
            },
            "maxProperties": MAX_PARAMS,
        },
        "palette": {
            "type": "object",
            "description": 'Named materials, used as "$name" in place of a block. A weighted '
            "list picks one choice per position, reproducibly from `seed`.",
            "propertyNames": {"pattern": NAME_PATTERN},
            "additionalProperties": {
                "anyOf": [
                    {"$ref": "#/$defs/block"},
                    {
                        "type": "array",
                        "minItems": 1,
                        "maxItems": MAX_PALETTE_CHOICES,
                        "items": {
                            "type": "object",
                            "properties": {
                                "block": {"$ref": "#/$defs/block"},
                                "weight": {
                                    "type": "integer",
                                    "minimum": 1,
                                    "maximum": MAX_PALETTE_WEIGHT,
                                    "default": 1,
                                },
                            },
                            "required": ["block"],
                            "additionalProperties": False,
                        },
                    },
                ]
            },
            "maxProperties": MAX_PALETTE,
        },
        "seed": {"type": "integer", "minimum": 0, "maximum": MAX_SEED},
        "operations": {"$ref": "#/$defs/operations"},
    },
    "required": ["version", "operations"],
    "additionalProperties": False,
    "$defs": {
        "coord": _int_or_expr(-COORD_LIMIT, COORD_LIMIT),
        "expression": {
            "type": "string",
            "pattern": EXPR_PATTERN,
            "description": 'An integer-valued expression over params, e.g. "w - 1" or "floor(h / 2)".',
        },
        "vec3": {
            "type": "object",
            "properties": {
                "x": {"$ref": "#/$defs/coord"},
                "y": {"$ref": "#/$defs/coord"},
                "z": {"$ref": "#/$defs/coord"},
            },
            "required": ["x", "y", "z"],
            "additionalProperties": False,
        },
        "block": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_BLOCK_TEXT,
            "description": "A block state, e.g. minecraft:oak_log[axis=y] (omitted properties take "
            "defaults), or a palette reference like $wall.",
        },
        "block_entity": {
            "type": "object",
            "description": "Contents of the block's block entity (furniture); box only, one key that "
            "fits the block: items (chest, barrel, shulker box, hopper, dispenser, dropper, "
            "furnace, smoker, blast furnace, brewing stand, campfire): [{slot?, id, count?}]; "
            "text (signs, hanging signs): {front, back: [up to 4 lines] or {lines, color, "
            "glowing}, waxed}; patterns (banners, bottom layer first): [{pattern, color}]; "
            "profile (player heads): a player name. Beds, empty containers and the "
            "like need none. Spawners, command, structure and jigsaw blocks are refused.",
            "properties": {
                "items": {
                    "type": "array",
                    "maxItems": 27,
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["id"],
                        "properties": {
                            "slot": {"type": "integer", "minimum": 0, "maximum": 26},
                            "id": {"type": "string", "maxLength": 128},
                            "count": {"type": "integer", "minimum": 1, "maximum": 99},
                        },
                    },
                },
                "text": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "front": {"$ref": "#/$defs/sign_side"},
                        "back": {"$ref": "#/$defs/sign_side"},
                        "waxed": {"type": "boolean"},
                    },
                },
                "patterns": {
                    "type": "array",
                    "maxItems": 16,
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["pattern", "color"],
                        "properties": {
                            "pattern": {"type": "string", "maxLength": 64},
                            "color": {"type": "string", "maxLength": 32},
                        },
                    },
                },
                "profile": {"type": "string", "pattern": "^[A-Za-z0-9_]{1,16}$"},
            },
            "additionalProperties": False,
        },
        "sign_side": {
            "anyOf": [
                {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 90}},
                {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "lines": {"type": "array", "maxItems": 4, "items": {"type": "string", "maxLength": 90}},
                        "color": {"type": "string", "maxLength": 32},
                        "glowing": {"type": "boolean"},
                    },
                },
            ]
        },
        "operations": {
            "type": "array",
            "minItems": 1,
            "items": {"$ref": "#/$defs/operation"},
        },
        "operation": {
            "oneOf": [
                {"$ref": "#/$defs/box"},
                {"$ref": "#/$defs/line"},
                {"$ref": "#/$defs/cylinder"},
                {"$ref": "#/$defs/repeat"},
                {"$ref": "#/$defs/arch"},
                {"$ref": "#/$defs/transform"},
                {"$ref": "#/$defs/replace"},
                {"$ref": "#/$defs/paste"},
                {"$ref": "#/$defs/sphere"},
                {"$ref": "#/$defs/ellipsoid"},
                {"$ref": "#/$defs/dome"},
                {"$ref": "#/$defs/cone"},
                {"$ref": "#/$defs/pyramid"},
                {"$ref": "#/$defs/polygon"},
                {"$ref": "#/$defs/overlay"},
                {"$ref": "#/$defs/foundation"},
            ]
        },
        "radii": {
            "type": "object",
            "properties": {a: _int_or_expr(0, MAX_SOLID_RADIUS) for a in "xyz"},
            "required": ["x", "y", "z"],
            "additionalProperties": False,
        },
        "sphere": _op(
            "sphere",
            "Cells with dx²+dy²+dz² ≤ r²+r around `center`; hollow: a closed shell `thickness` "
            "blocks thick (default 1).",
            {
                "center": _vec3("the centre cell"),
                "radius": _int_or_expr(0, MAX_SOLID_RADIUS),
                "block": {"$ref": "#/$defs/block"},
                **_HOLLOW,
            },
            ["center", "radius", "block"],
            example={"center": {"x": 26, "y": 68, "z": -58}, "radius": 3, "block": "glass", "hollow": True},
        ),
        "ellipsoid": _op(
            "ellipsoid",
            "Cells with Σ d_a²/(r_a²+r_a) ≤ 1 around `center` (radii per axis; 0 = flat on that "
            "axis); hollow: a closed shell.",
            {
                "center": _vec3("the centre cell"),
                "radii": {"$ref": "#/$defs/radii"},
                "block": {"$ref": "#/$defs/block"},
                **_HOLLOW,
            },
            ["center", "radii", "block"],
            example={"center": {"x": 40, "y": 66, "z": -58}, "radii": {"x": 4, "y": 2, "z": 2}, "block": "white_wool"},
        ),
        "dome": {
            **_op(
                "dome",
                "Half a sphere (`radius`) or ellipsoid (`radii`): the cells of it on the `axis` "
                "side of `center` (base plane included); hollow: open at the base.",
                {
                    "center": _vec3("centre of the base"),
                    "radius": _int_or_expr(0, MAX_SOLID_RADIUS),
                    "radii": {"$ref": "#/$defs/radii"},
                    "axis": _AXIS,
                    "block": {"$ref": "#/$defs/block"},
                    **_HOLLOW,
                },
                ["center", "block"],
                example={"center": {"x": 54, "y": 64, "z": -58}, "radius": 4, "block": "quartz_block", "hollow": True},
            ),
            "oneOf": [{"required": ["radius"]}, {"required": ["radii"]}],
        },
        "cone": _op(
            "cone",
            "Round layers i = 0 … height−1 along `axis` from `center`, layer radius "
            "r·(height−1−i)/(height−1) (disc rule u²+v² ≤ ρ²+ρ); the apex is one block; hollow: "
            "open at the base.",
            _AXIAL,
            ["center", "radius", "height", "block"],
            example={"center": {"x": -58, "y": 64, "z": -40}, "radius": 3, "height": 6, "block": "spruce_planks"},
        ),
        "pyramid": _op(
            "pyramid",
            "Square layers along `axis` from `center`: layer i has half-width "
            "r·(height−1−i)/(height−1) rounded half up (default height r+1: one step per "
            "layer); hollow: open at the base.",
            _AXIAL,
            ["center", "radius", "block"],
            example={"center": {"x": -44, "y": 64, "z": -40}, "radius": 3, "block": "sandstone"},
        ),
        "polygon": _op(
            "polygon",
            "A vertical prism: the columns inside or on the outline of the polygon `points` "
            "(x, z; even-odd rule), layers y … y+height−1; hollow: walls only.",
            {
                "points": {
                    "type": "array",
                    "minItems": 3,
                    "maxItems": MAX_POLYGON_POINTS,
                    "items": {
                        "type": "object",
                        "properties": {"x": {"$ref": "#/$defs/coord"}, "z": {"$ref": "#/$defs/coord"}},
                        "required": ["x", "z"],
                        "additionalProperties": False,
                    },
                },
                "y": {"$ref": "#/$defs/coord"},
                "height": _int_or_expr(1, MAX_HEIGHT),
                "block": {"$ref": "#/$defs/block"},
                **_HOLLOW,
            },
            ["points", "y", "height", "block"],
            example={
                "points": [{"x": -34, "z": -44}, {"x": -26, "z": -44}, {"x": -30, "z": -36}],
                "y": 64,
                "height": 3,
                "block": "red_terracotta",
                "hollow": True,
            },
        ),
        "overlay": _op(
            "overlay",
            "For each column of min..max: `depth` layers of `block` on top of the highest "
            "non-air block between min.y and max.y (the world as earlier operations leave it); "
            "columns with only air there get nothing.",
            {
                "min": _vec3("inclusive lower corner of the search range"),
                "max": _vec3("inclusive upper corner (≥ min on every axis)"),
                "block": {"$ref": "#/$defs/block"},
                "depth": {**_int_or_expr(1, MAX_OVERLAY_DEPTH), "default": 1},
            },
            ["min", "max", "block"],
            example={"min": {"x": -20, "y": 56, "z": -44}, "max": {"x": -14, "y": 70, "z": -38}, "block": "moss_block"},
        ),
        "foundation": _op(
            "foundation",
            "Builds `operations`, then fills every column under their lowest block with `block` "
            "down to the ground (the first non-air position), at most `max_depth` blocks; a "
            "column without ground that deep is budget_exceeded.",
            {
                "block": {"$ref": "#/$defs/block"},
                "max_depth": {**_int_or_expr(1, MAX_FOUNDATION_DEPTH), "default": 64},
                "operations": {"$ref": "#/$defs/operations"},
            },
            ["block", "operations"],
            example={
                "block": "cobblestone",
                "operations": [
                    {
                        "type": "box",
                        "min": {"x": -6, "y": 67, "z": -44},
                        "max": {"x": -2, "y": 67, "z": -40},
                        "block": "oak_planks",
                    }
                ],
            },
        ),
        "filter_entry": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_BLOCK_TEXT + 1,
            "pattern": FILTER_ENTRY_PATTERN,
            "description": '"*" (every non-air state), a block id (every state of it, e.g. '
            "minecraft:oak_stairs) or a block with some properties "
            '(oak_stairs[facing=east]); a leading "!" excludes what it matches.',
        },
        "replace": _op(
            "replace",
            "Within the box min..max, every position whose current state (the world as the "
            "earlier operations leave it) matches `from` becomes `to`. A `to` written without "
            "[properties] keeps the source's properties the target block also has "
            "(oak_stairs → spruce_stairs keeps facing/half/shape).",
            {
                "min": _vec3("inclusive lower corner of the region"),
                "max": _vec3("inclusive upper corner (≥ min on every axis)"),
                "from": {
                    "anyOf": [
                        {"$ref": "#/$defs/filter_entry"},
                        {
                            "type": "array",
                            "minItems": 1,
                            "maxItems": MAX_FILTER_ENTRIES,
                            "items": {"$ref": "#/$defs/filter_entry"},
                        },
                    ]
                },
                "to": {"$ref": "#/$defs/block"},
            },
            ["min", "max", "from", "to"],
            example={
                "min": {"x": 10, "y": 63, "z": -44},
                "max": {"x": 14, "y": 63, "z": -40},
                "from": "grass_block",
                "to": "moss_block",
            },
        ),
        "paste": {
            **_op(
                "paste",
                "Places a library schematic (`asset`, see asset_list) or a defined part (`part`, "
                "its blocks as generated, min corner at `at`), turned `rotation` degrees "
                "clockwise seen from above about `at`.",
                {
                    "asset": {"type": "string", "pattern": ASSET_ID_PATTERN},
                    "part": {"type": "string", "pattern": PART_ID_PATTERN},
                    "at": _vec3("where the schematic's anchor (or the part's min corner) lands"),
                    "rotation": {"enum": [0, 90, 180, 270], "default": 0},
                },
                ["at"],
                example={"asset": "hut", "at": {"x": 24, "y": 64, "z": -44}, "rotation": 90},
            ),
            "oneOf": [{"required": ["asset"]}, {"required": ["part"]}],
        },
        "box": _op(
            "box",
            "Every block with min ≤ pos ≤ max; hollow: only the six faces.",
            {
                "min": _vec3("inclusive lower corner"),
                "max": _vec3("inclusive upper corner (≥ min on every axis)"),
                "block": {"$ref": "#/$defs/block"},
                "hollow": {"type": "boolean", "default": False},
                "block_entity": {"$ref": "#/$defs/block_entity"},
            },
            ["min", "max", "block"],
            example={
                "min": {"x": -60, "y": 64, "z": -60},
                "max": {"x": -56, "y": 67, "z": -56},
                "block": "stone_bricks",
                "hollow": True,
            },
        ),
        "line": _op(
            "line",
            "A 26-connected line of blocks including both ends.",
            {
                "from": _vec3("one end"),
                "to": _vec3("the other end"),
                "block": {"$ref": "#/$defs/block"},
            },
            ["from", "to", "block"],
            example={"from": {"x": -50, "y": 64, "z": -60}, "to": {"x": -44, "y": 68, "z": -56}, "block": "stone"},
        ),
        "cylinder": _op(
            "cylinder",
            "A vertical cylinder: cells with dx²+dz² ≤ r²+r, from center.y up `height` blocks; "
            "hollow: only the wall (no floor or roof).",
            {
                "center": _vec3("centre of the bottom layer"),
                "radius": _int_or_expr(0, MAX_RADIUS),
                "height": _int_or_expr(1, MAX_HEIGHT),
                "block": {"$ref": "#/$defs/block"},
                "hollow": {"type": "boolean", "default": False},
                "axis": {
                    "enum": ["x", "y", "z"],
                    "default": "y",
                    "description": "the cylinder runs from center `height` blocks along +axis",
                },
                "thickness": _HOLLOW["thickness"],
            },
            ["center", "radius", "height", "block"],
            example={
                "center": {"x": -36, "y": 64, "z": -58},
                "radius": 2,
                "height": 4,
                "block": "bricks",
                "hollow": True,
            },
        ),
        "repeat": _op(
            "repeat",
            "`count` copies of `operations`, copy i shifted by i × offset (i = 0 … count−1).",
            {
                "count": _int_or_expr(1, MAX_REPEAT_COUNT),
                "offset": _vec3("shift between consecutive copies"),
                "operations": {"$ref": "#/$defs/operations"},
            },
            ["count", "offset", "operations"],
            example={
                "count": 3,
                "offset": {"x": 3, "y": 0, "z": 0},
                "operations": [
                    {
                        "type": "box",
                        "min": {"x": -28, "y": 64, "z": -60},
                        "max": {"x": -28, "y": 66, "z": -60},
                        "block": "oak_log",
                    }
                ],
            },
        ),
        "arch": _op(
            "arch",
            "A half ring standing in a vertical plane: cells (u, v) with v ≥ 0 and "
            "(r−width)²+(r−width) < u²+v² ≤ r²+r (u along `axis` from center, v = y − center.y); "
            "filled: the whole half disc (use air to cut an arched opening). `depth` layers go "
            "+1 along the other horizontal axis.",
            {
                "center": _vec3("centre of the springing line (the circle's centre)"),
                "radius": _int_or_expr(0, MAX_RADIUS),
                "width": {**_int_or_expr(1, MAX_RADIUS), "default": 1},
                "axis": {"enum": ["x", "z"], "description": "the axis the arch spans along"},
                "depth": {**_int_or_expr(1, MAX_ARCH_DEPTH), "default": 1},
                "filled": {"type": "boolean", "default": False},
                "block": {"$ref": "#/$defs/block"},
            },
            ["center", "radius", "axis", "block"],
            example={"center": {"x": -14, "y": 64, "z": -60}, "radius": 3, "axis": "x", "block": "stone_bricks"},
        ),
        "transform": {
            **_op(
                "transform",
                "Applies to everything inside: mirror about `anchor` (x: east↔west, z: "
                "north↔south), then turn `rotate` degrees clockwise seen from above about "
                "`anchor`, then shift by `translate`. Block states (stairs, doors, rails, "
                "fences, signs…) are mirrored and rotated with them.",
                {
                    "rotate": {"enum": [0, 90, 180, 270], "default": 0},
                    "mirror": {"enum": ["x", "z"]},
                    "anchor": _vec3("the block position rotation and mirroring are about"),
                    "translate": _vec3("shift applied last"),
                    "operations": {"$ref": "#/$defs/operations"},
                },
                ["operations"],
                example={
                    "rotate": 90,
                    "anchor": {"x": 0, "y": 64, "z": -58},
                    "operations": [
                        {
                            "type": "line",
                            "from": {"x": 1, "y": 64, "z": -58},
                            "to": {"x": 3, "y": 64, "z": -58},
                            "block": "oak_stairs[facing=east]",
                        }
                    ],
                },
            ),
            "dependentRequired": {"rotate": ["anchor"], "mirror": ["anchor"]},
        },
    },
}


# The operation types, in the schema's order: the ``type`` constant of each member of the
# ``$defs/operation`` union (the one list of operations; the planner's parser checks at import that
# it has a class for each, mcb_planner.recipe).
OPERATION_TYPES: tuple[str, ...] = tuple(
    RECIPE_SCHEMA["$defs"][alt["$ref"].removeprefix("#/$defs/")]["properties"]["type"]["const"]
    for alt in RECIPE_SCHEMA["$defs"]["operation"]["oneOf"]
)


def _too_big(limit: str, what: str, value: int, maximum: int, message: str) -> McbError:
    return McbError(
        ErrorCode.BUDGET_EXCEEDED, f"{what}: {message}", details={"limit": limit, "value": value, "max": maximum}
    )


def check_shape(
    value: Any,
    what: str = "recipe",
    *,
    max_bytes: int = MAX_RECIPE_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
    max_operations: int = MAX_RECIPE_OPERATIONS,
    max_nodes: int = MAX_JSON_NODES,
) -> None:
    """Refuse decoded JSON over the structural limits, cheaply and before any validation.

    One iterative pass (no recursion, so any depth is safe) that stops as soon as a limit is
    passed: nesting depth, values in all, approximate JSON bytes (strings, keys and a few bytes
    per value) and operation objects (items of any ``operations`` array). Raises
    ``budget_exceeded`` whose ``details`` are ``{limit, value, max}``: ``limit`` is
    ``json_depth``, ``json_values``, ``recipe_bytes`` or ``recipe_operations``; ``value`` is
    what was counted when the pass stopped (at least ``max + 1``, the rest is not counted).
    """
    stack: list[tuple[Any, int, bool]] = [(value, 1, False)]
    nodes = size = ops = 0
    while stack:
        node, depth, is_op = stack.pop()
        nodes += 1
        if nodes > max_nodes:
            raise _too_big(
                "json_values",
                what,
                nodes,
                max_nodes,
                f"more than {max_nodes:,} JSON values; split the work into smaller requests",
            )
        if is_op:
            ops += 1
            if ops > max_operations:
                raise _too_big(
                    "recipe_operations",
                    what,
                    ops,
                    max_operations,
                    f"more than {max_operations:,} operations (nested ones included); use "
                    "repeat, transform or larger shapes, or split the build into several plans",
                )
        if isinstance(node, dict | list):
            if depth > max_depth:
                raise _too_big(
                    "json_depth", what, depth, max_depth, f"nested more than {max_depth} arrays/objects deep"
                )
            size += 2
            if isinstance(node, dict):
                for k, v in node.items():
                    size += len(k) + 4 if isinstance(k, str) else 8
                    if k == "operations" and isinstance(v, list):
                        stack.extend((item, depth + 2, True) for item in v)
                        nodes += 1
                    else:
                        stack.append((v, depth + 1, False))
            else:
                stack.extend((item, depth + 1, False) for item in node)
        elif isinstance(node, str):
            size += len(node) + 3
        else:
            size += len(repr(node)) + 1
        if size > max_bytes:
            raise _too_big("recipe_bytes", what, size, max_bytes, f"more than {max_bytes:,} bytes of JSON")
