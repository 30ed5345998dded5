"""Shared inputs for the planner tests: the seed example and recipes both the parser and the
JSON Schema must refuse (each with the JSON path the parser has to name)."""

from __future__ import annotations

import copy
import json
from typing import Any

# Seed 003, "Рецепт первой версии", verbatim.
SEED_TEXT = """{
"version": 1,
"operations": [
{"type":"box","min":{"x":0,"y":64,"z":0},"max":{"x":4,"y":70,"z":4},"block":"minecraft:stone_bricks","hollow":true},
{"type":"line","from":{"x":0,"y":64,"z":0},"to":{"x":8,"y":64,"z":8},"block":"minecraft:stone"},
{"type":"cylinder","center":{"x":12,"y":64,"z":12},"radius":3,"height":8,"block":"minecraft:stone_bricks","hollow":true},
{"type":"repeat","count":3,"offset":{"x":6,"y":0,"z":0},"operations":[{"type":"box","min":{"x":0,"y":64,"z":20},"max":{"x":1,"y":67,"z":21},"block":"minecraft:oak_log[axis=y]"}]}
]
}"""


ARCH = {"type": "arch", "center": {"x": 0, "y": 64, "z": 0}, "radius": 3, "axis": "x", "block": "stone"}
TRANSFORM = {
    "type": "transform",
    "rotate": 90,
    "anchor": {"x": 0, "y": 64, "z": 0},
    "operations": [
        {"type": "box", "min": {"x": 0, "y": 64, "z": 0}, "max": {"x": 1, "y": 64, "z": 0}, "block": "stone"}
    ],
}


def rev2() -> dict[str, Any]:
    """A language-revision-2 recipe touching every new feature (for schema/parser fuzzing)."""
    return {
        "version": 1,
        "seed": 5,
        "params": {"w": 4, "h": "w * 2", "r": 3},
        "palette": {
            "wall": [{"block": "stone_bricks", "weight": 3}, {"block": "mossy_stone_bricks"}],
            "step": "oak_stairs[facing=north]",
        },
        "operations": [
            {
                "type": "box",
                "min": {"x": 0, "y": 64, "z": 0},
                "max": {"x": "w", "y": "64 + h", "z": 0},
                "block": "$wall",
                "hollow": False,
            },
            {
                "type": "arch",
                "center": {"x": 2, "y": 64, "z": 0},
                "radius": "r",
                "axis": "x",
                "width": 1,
                "depth": 1,
                "filled": True,
                "block": "air",
            },
            {
                "type": "transform",
                "rotate": 90,
                "mirror": "x",
                "anchor": {"x": 0, "y": 64, "z": 0},
                "translate": {"x": 1, "y": 0, "z": 0},
                "operations": [
                    {
                        "type": "repeat",
                        "count": "w",
                        "offset": {"x": 1, "y": 0, "z": 0},
                        "operations": [
                            {
                                "type": "line",
                                "from": {"x": 0, "y": 70, "z": 0},
                                "to": {"x": 0, "y": 70, "z": 2},
                                "block": "$step",
                            }
                        ],
                    }
                ],
            },
        ],
    }


REPLACE = {
    "type": "replace",
    "min": {"x": 0, "y": 64, "z": 0},
    "max": {"x": 4, "y": 70, "z": 4},
    "from": ["minecraft:stone", "!oak_stairs[facing=east]", "*"],
    "to": "stone_bricks",
}
PASTE = {"type": "paste", "asset": "tower", "at": {"x": 0, "y": 64, "z": 0}, "rotation": 90}


def rev3() -> dict[str, Any]:
    """A language-revision-3 recipe with replace and paste (for schema/parser fuzzing)."""
    r = rev2()
    r["operations"] += [
        copy.deepcopy(REPLACE),
        {
            "type": "transform",
            "rotate": 180,
            "anchor": {"x": 0, "y": 64, "z": 0},
            "operations": [
                {
                    "type": "replace",
                    "min": {"x": 0, "y": 64, "z": 0},
                    "max": {"x": "w", "y": 64, "z": 2},
                    "from": "oak_stairs",
                    "to": "$step",
                },
                copy.deepcopy(PASTE),
                {"type": "paste", "part": "pt_0123456789ab", "at": {"x": "w", "y": 64, "z": 0}},
            ],
        },
    ]
    return r


def seed() -> dict[str, Any]:
    return json.loads(SEED_TEXT)


def _with(mutate) -> dict[str, Any]:
    r = copy.deepcopy(seed())
    mutate(r)
    return r


def _set(path: list, value: Any):
    def m(r):
        node = r
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value

    return m


def _del(path: list):
    def m(r):
        node = r
        for k in path[:-1]:
            node = node[k]
        del node[path[-1]]

    return m


# (id, recipe, the JSON path the parser must name)
BAD: list[tuple[str, Any, str]] = [
    ("not-an-object", [1, 2], "recipe"),
    ("version-2", _with(_set(["version"], 2)), "version"),
    ("version-string", _with(_set(["version"], "1")), "version"),
    ("version-bool", _with(_set(["version"], True)), "version"),
    ("missing-operations", _with(_del(["operations"])), "operations"),
    ("operations-empty", _with(_set(["operations"], [])), "operations"),
    ("operations-object", _with(_set(["operations"], {})), "operations"),
    ("unknown-top-key", _with(_set(["author"], "me")), "author"),
    ("unknown-op-type", _with(_set(["operations", 1, "type"], "torus")), "operations[1].type"),
    ("replace-with-line-keys", _with(_set(["operations", 1, "type"], "replace")), "operations[1].block"),
    ("op-without-type", _with(_del(["operations", 0, "type"])), "operations[0].type"),
    ("op-not-object", _with(_set(["operations", 2], "box")), "operations[2]"),
    ("unknown-op-key", _with(_set(["operations", 0, "hollw"], True)), "operations[0].hollw"),
    ("line-hollow", _with(_set(["operations", 1, "hollow"], True)), "operations[1].hollow"),
    ("missing-block", _with(_del(["operations", 0, "block"])), "operations[0].block"),
    ("block-number", _with(_set(["operations", 0, "block"], 1)), "operations[0].block"),
    ("block-empty", _with(_set(["operations", 0, "block"], "")), "operations[0].block"),
    ("block-too-long", _with(_set(["operations", 0, "block"], "a" * 300)), "operations[0].block"),
    ("hollow-string", _with(_set(["operations", 0, "hollow"], "yes")), "operations[0].hollow"),
    ("coord-float", _with(_set(["operations", 0, "min", "x"], 1.5)), "operations[0].min.x"),
    ("coord-string", _with(_set(["operations", 0, "min", "y"], "y:64")), "operations[0].min.y"),
    ("coord-bool", _with(_set(["operations", 0, "max", "z"], False)), "operations[0].max.z"),
    ("coord-null", _with(_set(["operations", 1, "to", "x"], None)), "operations[1].to.x"),
    ("coord-huge", _with(_set(["operations", 1, "to", "x"], 30_000_000)), "operations[1].to.x"),
    ("vec-missing-axis", _with(_del(["operations", 1, "from", "z"])), "operations[1].from.z"),
    ("vec-extra-axis", _with(_set(["operations", 1, "from", "w"], 0)), "operations[1].from.w"),
    ("vec-as-list", _with(_set(["operations", 1, "from"], [0, 64, 0])), "operations[1].from"),
    ("radius-negative", _with(_set(["operations", 2, "radius"], -1)), "operations[2].radius"),
    ("radius-float", _with(_set(["operations", 2, "radius"], 2.5)), "operations[2].radius"),
    ("height-zero", _with(_set(["operations", 2, "height"], 0)), "operations[2].height"),
    ("repeat-count-zero", _with(_set(["operations", 3, "count"], 0)), "operations[3].count"),
    ("repeat-count-1025", _with(_set(["operations", 3, "count"], 1025)), "operations[3].count"),
    ("repeat-ops-empty", _with(_set(["operations", 3, "operations"], [])), "operations[3].operations"),
    (
        "nested-max-string",
        _with(_set(["operations", 3, "operations", 0, "max", "y"], "67;")),
        "operations[3].operations[0].max.y",
    ),
    (
        "nested-unknown-type",
        _with(_set(["operations", 3, "operations", 0, "type"], "cube")),
        "operations[3].operations[0].type",
    ),
    ("seed-negative", _with(_set(["seed"], -1)), "seed"),
    ("seed-float", _with(_set(["seed"], 0.5)), "seed"),
    ("params-not-number", _with(_set(["params"], {"floors": [2]})), "params.floors"),
    ("params-bad-chars", _with(_set(["params"], {"floors": "2;"})), "params.floors"),
    ("params-bool", _with(_set(["params"], {"floors": True})), "params.floors"),
    ("params-bad-name", _with(_set(["params"], {"2floors": 2})), "params.2floors"),
    ("palette-number", _with(_set(["palette"], {"wall": 5})), "palette.wall"),
    ("palette-list", _with(_set(["palette"], ["minecraft:stone"])), "palette"),
    ("palette-choices-empty", _with(_set(["palette"], {"w": []})), "palette.w"),
    ("palette-weight-zero", _with(_set(["palette"], {"w": [{"block": "stone", "weight": 0}]})), "palette.w[0].weight"),
    ("palette-choice-extra", _with(_set(["palette"], {"w": [{"block": "stone", "wt": 1}]})), "palette.w[0].wt"),
    ("arch-axis-y", _with(_set(["operations", 1], {**ARCH, "axis": "y"})), "operations[1].axis"),
    ("arch-width-zero", _with(_set(["operations", 1], {**ARCH, "width": 0})), "operations[1].width"),
    (
        "arch-missing-radius",
        _with(_set(["operations", 1], {k: v for k, v in ARCH.items() if k != "radius"})),
        "operations[1].radius",
    ),
    ("transform-rotate-45", _with(_set(["operations", 1], {**TRANSFORM, "rotate": 45})), "operations[1].rotate"),
    ("transform-mirror-y", _with(_set(["operations", 1], {**TRANSFORM, "mirror": "y"})), "operations[1].mirror"),
    (
        "transform-rotate-without-anchor",
        _with(_set(["operations", 1], {k: v for k, v in TRANSFORM.items() if k != "anchor"})),
        "operations[1].anchor",
    ),
    (
        "transform-ops-empty",
        _with(_set(["operations", 1], {**TRANSFORM, "operations": []})),
        "operations[1].operations",
    ),
    # revision 3: replace and paste
    ("replace-from-empty", _with(_set(["operations", 1], {**REPLACE, "from": []})), "operations[1].from"),
    ("replace-from-number", _with(_set(["operations", 1], {**REPLACE, "from": [1]})), "operations[1].from[0]"),
    ("replace-from-double-bang", _with(_set(["operations", 1], {**REPLACE, "from": "!!stone"})), "operations[1].from"),
    (
        "replace-from-too-many",
        _with(_set(["operations", 1], {**REPLACE, "from": ["stone"] * 33})),
        "operations[1].from",
    ),
    (
        "replace-missing-to",
        _with(_set(["operations", 1], {k: v for k, v in REPLACE.items() if k != "to"})),
        "operations[1].to",
    ),
    ("replace-hollow", _with(_set(["operations", 1], {**REPLACE, "hollow": True})), "operations[1].hollow"),
    (
        "paste-neither",
        _with(_set(["operations", 1], {"type": "paste", "at": {"x": 0, "y": 64, "z": 0}})),
        "operations[1].asset",
    ),
    ("paste-both", _with(_set(["operations", 1], {**PASTE, "part": "pt_1"})), "operations[1].part"),
    ("paste-asset-path", _with(_set(["operations", 1], {**PASTE, "asset": "../etc/passwd"})), "operations[1].asset"),
    ("paste-asset-url", _with(_set(["operations", 1], {**PASTE, "asset": "http://x/y.schem"})), "operations[1].asset"),
    ("paste-rotation-45", _with(_set(["operations", 1], {**PASTE, "rotation": 45})), "operations[1].rotation"),
    (
        "paste-missing-at",
        _with(_set(["operations", 1], {k: v for k, v in PASTE.items() if k != "at"})),
        "operations[1].at",
    ),
]

# Refused by the parser only: the JSON Schema cannot express expression grammar and names,
# palette references or reserved names (docs/recipes.md). details.reason says which.
PARSER_ONLY: list[tuple[str, Any, str]] = [
    ("expr-unknown-name", _with(_set(["operations", 0, "min", "y"], "floors * 4")), "operations[0].min.y"),
    ("expr-not-integer", _with(_set(["operations", 2, "radius"], "7 / 2")), "operations[2].radius"),
    ("expr-out-of-range", _with(_set(["operations", 3, "count"], "1024 + 1")), "operations[3].count"),
    ("expr-syntax", _with(_set(["operations", 0, "min", "y"], "64 +")), "operations[0].min.y"),
    ("expr-div-zero", _with(_set(["operations", 0, "min", "y"], "1 / 0")), "operations[0].min.y"),
    ("params-cycle", _with(_set(["params"], {"a": "b + 1", "b": "a"})), "params.a"),
    ("params-unknown", _with(_set(["params"], {"floors": "two"})), "params.floors"),
    ("params-function-name", _with(_set(["params"], {"floor": 2})), "params.floor"),
    ("palette-ref-unknown", _with(_set(["operations", 0, "block"], "$wall")), "operations[0].block"),
    ("palette-ref-nested", _with(_set(["palette"], {"w": "$v", "v": "stone"})), "palette.w"),
]
