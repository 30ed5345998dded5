"""Each recipe operation is one class in mcb_planner/ops/ (as WorldEdit's Region: one class per
shape). Checked here for every class, so a new shape's file gets these checks for free:
the schema and ops/ name the same operations; each class parses its schema example; a placed shape's cells lie inside its
bounds, its count is exact where it is closed form (an upper bound where it is a dense grid)."""

from __future__ import annotations

import numpy as np
import pytest
from mcb_common.recipe_schema import OPERATION_TYPES, RECIPE_SCHEMA
from mcb_common.registry import Registry
from mcb_planner import compile as C
from mcb_planner.grammar import KEYS
from mcb_planner.ops import KINDS, Shape
from mcb_planner.recipe import parse_recipe
from mcb_planner.sources import Sources
from test_golden_recipes import PARTS, assets

# shapes whose count is the dense grid they evaluate, or a search range, not their cells
UPPER_BOUND = {"sphere", "ellipsoid", "dome", "cone", "pyramid", "polygon"}


def example(kind: str) -> dict:
    return {"version": 1, "operations": [RECIPE_SCHEMA["$defs"][kind]["examples"][0]]}


def turned(kind: str) -> dict:
    return {
        "version": 1,
        "operations": [
            {
                "type": "transform",
                "rotate": 270,
                "mirror": "z",
                "anchor": {"x": 3, "y": 0, "z": -7},
                "operations": example(kind)["operations"],
            }
        ],
    }


def test_the_schema_and_ops_name_the_same_operations():
    assert set(KINDS) == set(OPERATION_TYPES) == set(KEYS)
    for kind, cls in KINDS.items():
        assert kind in cls.TYPES


@pytest.mark.parametrize("kind", OPERATION_TYPES)
def test_each_class_parses_its_schema_example(kind):
    op = parse_recipe(example(kind)).operations[0]
    assert type(op) is KINDS[kind] or (kind == "cylinder" and "axis" in example(kind)["operations"][0])
    assert op.to_json(str)["type"] == kind  # the normalised JSON (the recipe hash's input) keeps the type


@pytest.mark.parametrize("build", [example, turned], ids=["as written", "mirrored and turned"])
@pytest.mark.parametrize("kind", OPERATION_TYPES)
def test_cells_lie_inside_the_bounds_and_the_count_is_exact(kind, build):
    limits = C.Limits()
    recipe = C.parse(build(kind), limits)
    registry = Registry.load()
    blocks = C.check_blocks(recipe, registry)
    placements = C.place(recipe, blocks, Sources(registry, limits.max_changed_blocks, assets, PARTS), None)
    assert placements
    checked = 0
    for p in placements:
        if type(p.shape).cells is Shape.cells:  # overlay, foundation: they fill from the world
            assert p.count() >= p.bounds().volume or p.shape.NAME == "overlay"
            continue
        cells, b = p.cells(), p.bounds()
        assert len(np.unique(cells, axis=0)) == len(cells)
        assert (cells.min(axis=0) >= [b.min.x, b.min.y, b.min.z]).all()
        assert (cells.max(axis=0) <= [b.max.x, b.max.y, b.max.z]).all()
        if getattr(p.shape, "kind", p.shape.TYPES[0]) in UPPER_BOUND:
            assert p.count() >= len(cells)
        else:
            assert p.count() == len(cells), p.where()
        checked += 1
    assert checked or kind in ("overlay",)
