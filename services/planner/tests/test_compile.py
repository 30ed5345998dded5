"""The compiler: write sets, overlaps, order, materials, hashes, registry and area checks."""

from __future__ import annotations

import copy
import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Box, Vec3
from mcb_common.registry import Registry
from mcb_planner import PLANNER_VERSION
from mcb_planner.compile import compile_recipe, pack, recipe_hash, unpack
from planner_cases import SEED_TEXT, seed


def box(lo, hi, block="stone", hollow=None):
    op = {
        "type": "box",
        "min": dict(zip("xyz", lo, strict=True)),
        "max": dict(zip("xyz", hi, strict=True)),
        "block": block,
    }
    if hollow is not None:
        op["hollow"] = hollow
    return op


def recipe(*ops):
    return {"version": 1, "operations": list(ops)}


# -- the seed example ------------------------------------------------------------------------


def test_seed_example_compiles_to_its_golden_count():
    r = compile_recipe(SEED_TEXT)
    # 310 blocks:
    #   box 0..4 × 64..70 × 0..4 hollow: 5·7·5 − 3·5·3 = 175 − 45 = 130 faces
    #   line (0,64,0)→(8,64,8): 9 cells (i,64,i); i = 0..4 lie on the box's floor (y = 64 is
    #     min.y) and win as stone (later op), i = 5..8 are new → +4, stone = 9
    #   cylinder r=3 hollow, 8 layers: a 16-cell ring per layer → 128 (x,z 9..15: no overlap)
    #   repeat 3 × box 2·4·2 = 16 oak logs at x 0, 6, 12 → 48 (disjoint)
    #   total 130 + 4 + 128 + 48 = 310; stone_bricks = (130 − 5) + 128 = 253
    assert len(r) == 310
    assert r.materials == (
        ("minecraft:stone_bricks", 253),
        ("minecraft:oak_log[axis=y]", 48),
        ("minecraft:stone", 9),
    )
    assert r.examined == 130 + 9 + 128 + 48
    assert r.bounds == Box(Vec3(0, 64, 0), Vec3(15, 71, 21))
    blocks = r.blocks()
    assert blocks[(3, 64, 3)] == "minecraft:stone"  # the line won over the box floor
    assert blocks[(0, 70, 0)] == "minecraft:stone_bricks"
    assert (2, 66, 2) not in blocks  # inside the hollow box
    assert blocks[(12, 65, 20)] == "minecraft:oak_log[axis=y]"
    assert r.warnings == ()
    assert r.planner_version == PLANNER_VERSION and r.minecraft_version == "1.21.11"


def test_palette_and_states_encode_the_same_write_set():
    r = compile_recipe(SEED_TEXT)
    assert r.palette == tuple(s for s, _ in r.materials)
    assert r.states.max() == len(r.palette) - 1
    assert r.xyz.shape == (310, 3)


def test_output_is_sorted_by_y_then_z_then_x():
    r = compile_recipe(SEED_TEXT)
    order = [(y, z, x) for x, y, z in r.xyz.tolist()]
    assert order == sorted(order) and len(set(order)) == len(order)


# -- overlaps --------------------------------------------------------------------------------


def test_later_operations_win_on_overlap():
    r = compile_recipe(recipe(box((0, 0, 0), (3, 3, 3), "stone"), box((2, 2, 2), (5, 5, 5), "dirt")))
    b = r.blocks()
    assert len(b) == 64 + 64 - 8
    assert b[(2, 2, 2)] == b[(3, 3, 3)] == "minecraft:dirt"
    assert b[(1, 1, 1)] == "minecraft:stone"
    r2 = compile_recipe(recipe(box((2, 2, 2), (5, 5, 5), "dirt"), box((0, 0, 0), (3, 3, 3), "stone")))
    assert r2.blocks()[(2, 2, 2)] == "minecraft:stone"


def test_a_state_overwritten_everywhere_is_not_in_the_palette():
    r = compile_recipe(recipe(box((0, 0, 0), (1, 1, 1), "dirt"), box((0, 0, 0), (1, 1, 1), "stone")))
    assert r.palette == ("minecraft:stone",)
    assert r.examined == 16 and len(r) == 8


def test_air_is_a_valid_state_to_write():
    r = compile_recipe(recipe(box((0, 0, 0), (2, 2, 2), "stone"), box((1, 1, 1), (1, 1, 1), "air")))
    assert r.blocks()[(1, 1, 1)] == "minecraft:air"


def test_materials_sorted_by_count_then_name():
    r = compile_recipe(
        recipe(
            box((0, 0, 0), (0, 0, 1), "stone"), box((5, 0, 0), (5, 0, 1), "dirt"), box((9, 0, 0), (9, 0, 4), "glass")
        )
    )
    assert r.materials == (("minecraft:glass", 5), ("minecraft:dirt", 2), ("minecraft:stone", 2))


# -- repeat = union of translated copies (Hypothesis) ---------------------------------------

small = st.integers(-5, 5)


@st.composite
def shape_ops(draw):
    block = draw(st.sampled_from(["stone", "dirt", "glass", "oak_planks"]))
    kind = draw(st.sampled_from(["box", "line", "cylinder"]))
    a = {"x": draw(small), "y": draw(st.integers(0, 6)), "z": draw(small)}
    if kind == "box":
        b = {k: a[k] + draw(st.integers(0, 3)) for k in "xyz"}
        return {"type": "box", "min": a, "max": b, "block": block, "hollow": draw(st.booleans())}
    if kind == "line":
        b = {"x": draw(small), "y": draw(st.integers(0, 6)), "z": draw(small)}
        return {"type": "line", "from": a, "to": b, "block": block}
    return {
        "type": "cylinder",
        "center": a,
        "radius": draw(st.integers(0, 3)),
        "height": draw(st.integers(1, 3)),
        "block": block,
        "hollow": draw(st.booleans()),
    }


def shifted(op, dx, dy, dz):
    op = copy.deepcopy(op)
    for key in ("min", "max", "from", "to", "center"):
        if key in op:
            op[key] = {"x": op[key]["x"] + dx, "y": op[key]["y"] + dy, "z": op[key]["z"] + dz}
    return op


@settings(max_examples=80, deadline=None)
@given(st.lists(shape_ops(), min_size=1, max_size=3), st.integers(1, 5), st.tuples(small, st.integers(-2, 2), small))
def test_repeat_equals_the_union_of_translated_copies_later_winning(ops, count, off):
    rep = {"type": "repeat", "count": count, "offset": dict(zip("xyz", off, strict=True)), "operations": ops}
    got = compile_recipe(recipe(rep)).blocks()
    expected: dict = {}
    for i in range(count):
        for op in ops:
            part = compile_recipe(recipe(shifted(op, off[0] * i, off[1] * i, off[2] * i))).blocks()
            expected.update(part)
    assert got == expected


@settings(max_examples=40, deadline=None)
@given(st.lists(shape_ops(), min_size=1, max_size=4))
def test_write_set_is_the_ops_applied_in_order(ops):
    got = compile_recipe(recipe(*ops)).blocks()
    expected: dict = {}
    for op in ops:
        expected.update(compile_recipe(recipe(op)).blocks())
    assert got == expected


# -- determinism and the hash ----------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(st.lists(shape_ops(), min_size=1, max_size=4), st.randoms(use_true_random=False))
def test_hash_and_order_are_deterministic_and_independent_of_key_order(ops, rnd):
    a = compile_recipe(json.dumps(recipe(*ops)))

    def shuffle(v):
        if isinstance(v, dict):
            items = list(v.items())
            rnd.shuffle(items)
            return {k: shuffle(x) for k, x in items}
        if isinstance(v, list):
            return [shuffle(x) for x in v]
        return v

    b = compile_recipe(json.dumps(shuffle(recipe(*ops)), indent=rnd.choice([None, 2])))
    assert a.recipe_hash == b.recipe_hash
    assert a.xyz.tolist() == b.xyz.tolist() and a.states.tolist() == b.states.tolist()
    assert a.palette == b.palette


def test_hash_normalises_block_shorthand_and_defaults():
    h1 = compile_recipe(recipe(box((0, 0, 0), (1, 1, 1), "stone"))).recipe_hash
    h2 = compile_recipe(recipe(box((0, 0, 0), (1, 1, 1), "minecraft:stone", hollow=False))).recipe_hash
    h3 = compile_recipe(recipe(box((0, 0, 0), (1, 1, 1), "minecraft:stone", hollow=True))).recipe_hash
    assert h1 == h2
    assert h1 != h3  # same write set (2 thick), different recipe: the hash is of the recipe


def test_hash_changes_with_recipe_registry_and_planner_version():
    r = compile_recipe(SEED_TEXT)
    doc = seed()
    doc["operations"][2]["radius"] = 4
    assert compile_recipe(doc).recipe_hash != r.recipe_hash
    from mcb_planner.recipe import parse_recipe

    reg = Registry.load()
    norm = parse_recipe(SEED_TEXT).normalised(block=reg.canonical)
    assert recipe_hash(norm, reg.sha256) == r.recipe_hash
    assert recipe_hash(norm, "0" * 64) != r.recipe_hash
    assert recipe_hash(norm, reg.sha256, "9.9.9") != r.recipe_hash


def test_seed_normal_form_hash_is_pinned():
    # Pinned with a fixed registry digest and planner version, so only the normal form and the
    # hashing scheme are under test. If this fails, they changed: bump PLANNER_VERSION.
    from mcb_planner.recipe import parse_recipe

    norm = parse_recipe(SEED_TEXT).normalised(block=Registry.load().canonical)
    assert recipe_hash(norm, "0" * 64, "0.1.0") == ("263db9a3593a6812c5f0013d4b527fdc170f063f455fcef739cb0a047d59365b")


def test_pack_orders_like_y_z_x_and_round_trips():
    import numpy as np

    rnd = random.Random(7)
    cells = np.array(
        [
            [rnd.randint(-29_999_984, 29_999_984), rnd.randint(-64, 319), rnd.randint(-29_999_984, 29_999_984)]
            for _ in range(2000)
        ],
        dtype=np.int64,
    )
    keys = pack(cells)
    assert unpack(keys).tolist() == cells.tolist()
    by_key = cells[np.argsort(keys)].tolist()
    assert by_key == sorted(cells.tolist(), key=lambda c: (c[1], c[2], c[0]))


# -- registry --------------------------------------------------------------------------------


def test_unknown_block_is_unsupported_with_suggestions_and_the_path():
    doc = seed()
    doc["operations"][3]["operations"][0]["block"] = "minecraft:stone_brick"
    with pytest.raises(McbError) as ei:
        compile_recipe(doc)
    err = ei.value
    assert err.code == ErrorCode.UNSUPPORTED_BLOCK
    assert err.details["path"] == "operations[3].operations[0].block"
    assert "minecraft:stone_bricks" in err.details["suggestions"]
    assert err.message.startswith("operations[3].operations[0].block: ")
    assert "did you mean" in err.message


def test_bad_property_value_names_the_valid_values():
    with pytest.raises(McbError) as ei:
        compile_recipe(recipe(box((0, 0, 0), (0, 0, 0), "oak_log[axis=w]")))
    assert ei.value.code == ErrorCode.UNSUPPORTED_BLOCK
    assert ei.value.details["valid_values"] == ["x", "y", "z"]


def test_palette_entries_are_checked_too():
    with pytest.raises(McbError) as ei:
        compile_recipe(seed() | {"palette": {"roof": "minecraft:spruce_stair"}})
    assert ei.value.code == ErrorCode.UNSUPPORTED_BLOCK
    assert ei.value.details["path"] == "palette.roof"


def test_unknown_version_is_a_version_mismatch():
    with pytest.raises(McbError) as ei:
        compile_recipe(SEED_TEXT, minecraft_version="1.8.9")
    assert ei.value.code == ErrorCode.VERSION_MISMATCH


def test_states_are_canonical():
    r = compile_recipe(recipe(box((0, 0, 0), (0, 0, 0), "oak_stairs[facing=east]")))
    assert r.palette == ("minecraft:oak_stairs[facing=east,half=bottom,shape=straight,waterlogged=false]",)


def test_unused_palette_and_idle_seed_produce_warnings():
    r = compile_recipe(seed() | {"params": {"h": 2}, "palette": {"w": "stone"}, "seed": 1})
    assert len(r) == 310
    assert r.warnings == ("palette entries never used: $w", "seed has no effect: no weighted palette entry is used")


# -- bounds ----------------------------------------------------------------------------------

AREA = Box(Vec3(-16, -64, -16), Vec3(31, 319, 31))


def test_inside_the_area_compiles():
    assert len(compile_recipe(SEED_TEXT, area=AREA)) == 310


def test_outside_the_area_names_the_first_offending_operation_and_the_area():
    small_area = Box(Vec3(0, 60, 0), Vec3(13, 80, 30))  # the cylinder reaches x = 15
    with pytest.raises(McbError) as ei:
        compile_recipe(SEED_TEXT, area=small_area)
    err = ei.value
    assert err.code == ErrorCode.OUT_OF_BOUNDS
    assert err.details["path"] == "operations[2]"
    assert err.details["area"] == small_area.as_dict()
    assert err.message.startswith("operations[2] spans x 9..15")
    assert "x 0..13, y 60..80, z 0..30" in err.message


def test_a_repeat_copy_leaving_the_area_is_named_with_its_copy_and_shift():
    area = Box(Vec3(0, 60, 0), Vec3(20, 80, 30))
    doc = seed()
    doc["operations"][3]["count"] = 4  # copy 3 is at x = 18..19, fine; make it 5 → x = 24
    doc["operations"][3]["count"] = 5
    with pytest.raises(McbError) as ei:
        compile_recipe(doc, area=area)
    err = ei.value
    assert err.details["path"] == "operations[3].operations[0]"
    assert err.details["copies"] == [4]
    assert "repeat copy 4, shifted by x=24 y=0 z=0" in err.message


@pytest.mark.parametrize(("y0", "y1"), [(-65, -60), (300, 320)])
def test_world_heights_are_enforced_without_an_area(y0, y1):
    with pytest.raises(McbError) as ei:
        compile_recipe(recipe(box((0, 0, 0), (1, 1, 1)), box((0, y0, 0), (1, y1, 1))))
    err = ei.value
    assert err.code == ErrorCode.OUT_OF_BOUNDS
    assert err.details["path"] == "operations[1]"
    assert "-64..319" in err.message


def test_world_top_and_bottom_are_writable():
    r = compile_recipe(recipe(box((0, -64, 0), (0, -64, 0)), box((0, 319, 0), (0, 319, 0))))
    assert r.bounds == Box(Vec3(0, -64, 0), Vec3(0, 319, 0))


def test_cylinder_height_counts_from_the_center_up():
    ok = recipe({"type": "cylinder", "center": {"x": 0, "y": 310, "z": 0}, "radius": 1, "height": 10, "block": "stone"})
    assert compile_recipe(ok).bounds.max.y == 319
    ok["operations"][0]["height"] = 11
    with pytest.raises(McbError, match="310..320"):
        compile_recipe(ok)


def test_repeat_beyond_the_world_border_is_out_of_bounds_not_a_crash():
    rep = {
        "type": "repeat",
        "count": 3,
        "offset": {"x": 20_000_000, "y": 0, "z": 0},
        "operations": [box((0, 0, 0), (0, 0, 0))],
    }
    with pytest.raises(McbError) as ei:
        compile_recipe(recipe(rep))
    assert ei.value.code == ErrorCode.OUT_OF_BOUNDS
    assert "world border" in ei.value.message
