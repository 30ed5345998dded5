"""JSON Schema (draft 2020-12) of recipe v1, and the static bounds it shares with the parser.

The bridge exposes ``RECIPE_SCHEMA`` as the input schema of the ``build_prepare`` tool; the
planner's hand-written parser (``mcb_planner.recipe``) imports the constants below, so the two
cannot drift, and a planner test checks that both accept and refuse the same inputs.

What the schema cannot say, and only the planner checks (docs/recipes.md):
  * box corners in order (``min`` ≤ ``max`` on every axis);
  * the configurable budgets: repeat nesting depth, operations after repeat expansion,
    examined and changed positions (``budget_exceeded``);
  * block states against the registry of the target version (``unsupported_block``);
  * the project's area and the world's heights (``out_of_bounds``).

JSON numbers with a zero fraction (``64.0``) count as integers, as in JSON Schema itself.
"""

from __future__ import annotations

from typing import Any

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

OPERATION_TYPES = ("box", "line", "cylinder", "repeat")

_ID = "https://minecraft-builder-mcp.dev/schemas/recipe-v1.json"


def _vec3(description: str) -> dict[str, Any]:
    return {"$ref": "#/$defs/vec3", "description": description}


def _op(type_name: str, description: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "description": description,
        "properties": {"type": {"const": type_name}, **props},
        "required": ["type", *required],
        "additionalProperties": False,
    }


RECIPE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": _ID,
    "title": "minecraft-builder-mcp recipe v1",
    "description": (
        "A declarative build: operations are applied in order and later ones win where they "
        "overlap. Coordinates are absolute block positions; boxes are inclusive."
    ),
    "type": "object",
    "properties": {
        "version": {"const": RECIPE_VERSION},
        "params": {
            "type": "object",
            "description": "Named numbers (reserved: v1 operations cannot reference them yet).",
            "propertyNames": {"pattern": NAME_PATTERN},
            "additionalProperties": {"type": "number"},
            "maxProperties": MAX_PARAMS,
        },
        "palette": {
            "type": "object",
            "description": "Named block states (reserved: v1 operations cannot reference them yet).",
            "propertyNames": {"pattern": NAME_PATTERN},
            "additionalProperties": {"$ref": "#/$defs/block"},
            "maxProperties": MAX_PALETTE,
        },
        "seed": {"type": "integer", "minimum": 0, "maximum": MAX_SEED},
        "operations": {"$ref": "#/$defs/operations"},
    },
    "required": ["version", "operations"],
    "additionalProperties": False,
    "$defs": {
        "coord": {"type": "integer", "minimum": -COORD_LIMIT, "maximum": COORD_LIMIT},
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
            "description": "A block state, e.g. minecraft:oak_log[axis=y] (omitted properties take defaults).",
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
            ]
        },
        "box": _op(
            "box",
            "Every block with min ≤ pos ≤ max; hollow: only the six faces.",
            {
                "min": _vec3("inclusive lower corner"),
                "max": _vec3("inclusive upper corner (≥ min on every axis)"),
                "block": {"$ref": "#/$defs/block"},
                "hollow": {"type": "boolean", "default": False},
            },
            ["min", "max", "block"],
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
        ),
        "cylinder": _op(
            "cylinder",
            "A vertical cylinder: cells with dx²+dz² ≤ r²+r, from center.y up `height` blocks; "
            "hollow: only the wall (no floor or roof).",
            {
                "center": _vec3("centre of the bottom layer"),
                "radius": {"type": "integer", "minimum": 0, "maximum": MAX_RADIUS},
                "height": {"type": "integer", "minimum": 1, "maximum": MAX_HEIGHT},
                "block": {"$ref": "#/$defs/block"},
                "hollow": {"type": "boolean", "default": False},
            },
            ["center", "radius", "height", "block"],
        ),
        "repeat": _op(
            "repeat",
            "`count` copies of `operations`, copy i shifted by i × offset (i = 0 … count−1).",
            {
                "count": {"type": "integer", "minimum": 1, "maximum": MAX_REPEAT_COUNT},
                "offset": _vec3("shift between consecutive copies"),
                "operations": {"$ref": "#/$defs/operations"},
            },
            ["count", "offset", "operations"],
        ),
    },
}
