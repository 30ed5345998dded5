"""Every recipe the repository shows a person compiles to the same plan as when this file's
fixture was made: the JSON recipes of docs/recipes.md and of the agent's guides
(services/bridge/src/mcb_bridge/guides/*.md) and the one example per operation in the recipe
schema. A refactor of the planner must not move one block, state, warning or recipe hash.

``golden_recipes.json`` holds one digest per recipe (positions, states, warnings, bounds,
examined count, recipe hash, or the error's code and path). It was made by the planner itself;
after an intended change of behaviour, remake it with
``uv run --frozen python services/planner/tests/test_golden_recipes.py`` and say why in the commit.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import planner_cases
import pytest
from mcb_common import schematic as S
from mcb_common.errors import McbError
from mcb_common.geometry import Box, Vec3
from mcb_common.recipe_schema import RECIPE_SCHEMA
from mcb_planner.compile import compile_recipe
from mcb_planner.sources import PartBlocks

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = Path(__file__).with_name("golden_recipes.json")
DOCS = [ROOT / "docs" / "recipes.md", *sorted((ROOT / "services/bridge/src/mcb_bridge/guides").glob("*.md"))]
_STEP = PartBlocks(  # every part the recipes paste: a little stair step
    np.array([[5, 70, 5], [6, 70, 5], [6, 71, 5]], dtype=np.int64),
    ("minecraft:oak_planks", "minecraft:oak_stairs[facing=east]"),
    np.array([0, 0, 1], dtype=np.uint32),
)
PARTS = {"pt_0123456789ab": _STEP, "pt_3f9a0c12b7de": _STEP}
# every asset the recipes paste: 3 x 2 x 2 of stone, air and a north stair, anchored off its corner
# (the file's Date pinned: the recipe hash covers the asset's bytes)
with mock.patch("mcb_common.schematic.time.time", return_value=1_700_000_000):
    _ASSET = S.write_bytes(
        S.from_region(
            (3, 2, 2),
            ["minecraft:stone", "minecraft:air", "minecraft:oak_stairs[facing=north]"],
            [0, 1, 2, 0, 0, 0, 1, 1, 2, 2, 0, 1],
            offset=(-1, 0, 0),
            data_version=4671,
        ),
        3,
    )


def assets(asset_id: str) -> tuple[bytes, str]:
    return _ASSET, "schem"


AREA = Box(Vec3(-64, -64, -64), Vec3(63, 319, 63))  # mcb_cli.runner.DEFAULT_AREA


def flat_world(box: Box) -> tuple[list[str], np.ndarray]:
    """The embedded host's flat world: grass at y 63, dirt below, air above (YZX order)."""
    layer = box.size.x * box.size.z
    idx = np.concatenate(
        [
            np.full(layer, 0 if y > 63 else (1 if y == 63 else 2), dtype=np.uint16)
            for y in range(box.min.y, box.max.y + 1)
        ]
    )
    return ["minecraft:air", "minecraft:grass_block[snowy=false]", "minecraft:dirt"], idx


def recipes() -> dict[str, str]:
    out: dict[str, str] = {}
    for doc in DOCS:
        for i, block in enumerate(re.findall(r"```json\n(.*?)\n```", doc.read_text(), re.S)):
            try:
                value = json.loads(block)
            except ValueError:
                continue
            if isinstance(value, dict) and "operations" in value:
                out[f"{doc.relative_to(ROOT)}#{i}"] = block
    for name, body in RECIPE_SCHEMA["$defs"].items():
        ex = body.get("examples") or (body.get("allOf") or [{}])[0].get("examples")
        if ex and isinstance(ex[0], dict) and ex[0].get("type") == name:
            out[f"schema:{name}"] = json.dumps({"version": 1, "operations": [ex[0]]})
            # the same, mirrored, turned and repeated: every shape through a non-trivial frame
            out[f"turned:{name}"] = json.dumps(
                {
                    "version": 1,
                    "operations": [
                        {
                            "type": "repeat",
                            "count": 2,
                            "offset": {"x": 0, "y": 1, "z": 0},
                            "operations": [
                                {
                                    "type": "transform",
                                    "rotate": 90,
                                    "mirror": "x",
                                    "anchor": {"x": 0, "y": 0, "z": -20},
                                    "translate": {"x": 0, "y": 0, "z": 0},
                                    "operations": [ex[0]],
                                }
                            ],
                        }
                    ],
                }
            )
    for name in ("rev2", "rev3", "seed"):
        out[f"planner_cases:{name}"] = json.dumps(getattr(planner_cases, name)())
    return out


def digest(text: str) -> str:
    h = hashlib.sha256()
    try:
        r = compile_recipe(text, world=flat_world, area=AREA, parts=PARTS, assets=assets)
    except McbError as e:
        h.update(f"error {e.code.value} {e.details.get('path')} {e.message}".encode())
        return h.hexdigest()[:24]
    h.update(r.xyz.tobytes())
    h.update("\n".join(r.palette[i] for i in r.states.tolist()).encode())
    h.update(json.dumps([r.bounds.as_dict(), r.examined, list(r.warnings), r.recipe_hash]).encode())
    return h.hexdigest()[:24]


def golden() -> dict[str, str]:
    return json.loads(FIXTURE.read_text()) if FIXTURE.exists() else {}


def test_the_fixture_covers_every_recipe_shown():
    assert set(recipes()) == set(golden())
    assert len(recipes()) >= 20


@pytest.mark.parametrize("name", sorted(golden()))
def test_the_plan_is_unchanged(name):
    assert digest(recipes()[name]) == golden()[name]


if __name__ == "__main__":
    FIXTURE.write_text(json.dumps({k: digest(v) for k, v in sorted(recipes().items())}, indent=1) + "\n")
    print(f"wrote {FIXTURE} ({len(recipes())} recipes)", file=sys.stderr)
