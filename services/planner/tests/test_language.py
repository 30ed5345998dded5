"""Language revision 2: expressions, arch, transform, palettes, and their limits."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcb_common.errors import ErrorCode, McbError
from mcb_common.geometry import Vec3
from mcb_common.registry import Registry
from mcb_common.transforms import mirror as mirror_state
from mcb_common.transforms import rotate as rotate_state
from mcb_planner import expr, shapes
from mcb_planner.compile import Limits, compile_recipe
from planner_cases import SEED_TEXT

REG = Registry.load()


def V(x, y, z):  # noqa: N802
    return {"x": x, "y": y, "z": z}


def R(*ops, **top):  # noqa: N802
    return {"version": 1, "operations": list(ops), **top}


def box(lo, hi, block, **kw):
    return {"type": "box", "min": V(*lo), "max": V(*hi), "block": block, **kw}


# -- expressions -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, env, value",
    [
        ("1 + 2 * 3", {}, 7),
        ("(1 + 2) * 3", {}, 9),
        ("-2 * -3", {}, 6),
        ("7 / 2", {}, Fraction(7, 2)),
        ("7 % 3", {}, 1),
        ("-1 % 4", {}, 3),
        ("floor(7 / 2) + ceil(7 / 2)", {}, 7),
        ("round(2.5) + round(-2.5)", {}, 1),  # halves toward +inf: 3 + (-2)
        ("min(3, w, 9) + max(1, 2)", {"w": Fraction(2)}, 4),
        ("abs(1 - w * 2)", {"w": Fraction(3)}, 5),
        ("0.5 * 4", {}, 2),
        ("  w  ", {"w": Fraction(1)}, 1),
    ],
)
def test_expression_values(text, env, value):
    assert expr.evaluate(text, env, "p") == value


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("1 +", "ends where"),
        ("(1", "expected ')'"),
        ("1 2", "after a complete expression"),
        ("foo(1)", "unknown function"),
        ("floor", "is a function"),
        ("abs(1, 2)", "one argument"),
        ("x", "unknown param"),
        ("1 / 0", "divides by zero"),
        ("1 % 0", "remainder by zero"),
        ("1000000 * 1000000 * 1000000", "exceeds"),
        ("1 ; 2", "unexpected character"),
        ("__import__('os')", "unexpected character"),
        ("-" * 40 + "1", "nests deeper"),
        ("(" * 40 + "1" + ")" * 40, "nests deeper"),
        ("1+" * 70 + "1", "tokens"),
        ("1" * 300, "characters"),
    ],
)
def test_expression_refusals(text, fragment):
    with pytest.raises(McbError) as ei:
        expr.evaluate(text, {}, "p")
    assert ei.value.code == ErrorCode.INVALID_REQUEST
    assert ei.value.details["reason"] == "expression"
    assert fragment in ei.value.message


@st.composite
def expressions(draw, depth=0):
    """(text, exact value, peak) triples built from a random tree. ``peak`` is the largest
    magnitude among the values the evaluator checks against its limit (every number and every
    +, -, * result; the text is fully parenthesized, so the evaluator meets exactly these)."""
    if depth >= 4 or draw(st.booleans()):
        # Mostly small numbers, some large ones so that both outcomes (a value, a refusal) occur.
        n = draw(st.integers(0, 999) | st.integers(10**5, 10**9))
        return str(n), Fraction(n), Fraction(n)
    op = draw(st.sampled_from(["+", "-", "*", "min", "max", "neg", "paren"]))
    a_t, a_v, a_p = draw(expressions(depth + 1))
    if op == "neg":
        return f"-({a_t})", -a_v, a_p
    if op == "paren":
        return f"({a_t})", a_v, a_p
    b_t, b_v, b_p = draw(expressions(depth + 1))
    if op in ("min", "max"):
        return f"{op}({a_t}, {b_t})", (min if op == "min" else max)(a_v, b_v), max(a_p, b_p)
    v = {"+": a_v + b_v, "-": a_v - b_v, "*": a_v * b_v}[op]
    return f"({a_t}) {op} ({b_t})", v, max(a_p, b_p, abs(v))


@settings(max_examples=300, deadline=None)
@given(expressions())
def test_expressions_agree_with_exact_arithmetic(triple):
    """The evaluator agrees with exact arithmetic while every intermediate value is within
    expr.MAX_MAGNITUDE and refuses (invalid_request, "exceeds") exactly when one is not. The
    generator can build 999**16; it used to assume every tree stays in range (a flaky failure)."""
    text, value, peak = triple
    if len(text) > expr.MAX_EXPR_TEXT or len(expr.tokenize(text, "p")) > expr.MAX_TOKENS:
        return
    if peak > expr.MAX_MAGNITUDE:
        with pytest.raises(McbError) as ei:
            expr.evaluate(text, {}, "p")
        assert ei.value.code == ErrorCode.INVALID_REQUEST and "exceeds" in ei.value.message
    else:
        assert expr.evaluate(text, {}, "p") == value


def test_params_can_depend_on_params_and_feed_every_integer():
    doc = R(
        box((0, "base", 0), ("w - 1", "base + h - 1", "w - 1"), "stone", hollow=True),
        params={"w": 5, "h": "floors * 4", "floors": 2, "base": 64},
    )
    r = compile_recipe(doc)
    assert r.bounds.min == Vec3(0, 64, 0) and r.bounds.max == Vec3(4, 71, 4)
    assert len(r) == 5 * 8 * 5 - 3 * 6 * 3


def test_the_seed_recipe_is_unchanged_by_revision_2():
    r = compile_recipe(SEED_TEXT)
    assert len(r) == 310
    assert dict(r.materials) == {"minecraft:stone_bricks": 253, "minecraft:oak_log[axis=y]": 48, "minecraft:stone": 9}


# -- arch ------------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 40), st.integers(1, 45), st.integers(1, 3), st.booleans(), st.sampled_from("xz"))
def test_arch_count_matches_cells_and_is_symmetric(r, width, depth, filled, axis):
    c = Vec3(5, 10, -3)
    cells = shapes.arch_cells(c, r, width, axis, depth, filled)
    assert len(cells) == shapes.arch_count(r, width, depth, filled)
    assert len({tuple(p) for p in cells.tolist()}) == len(cells)
    ui = 0 if axis == "x" else 2
    u = cells[:, ui] - (c.x if axis == "x" else c.z)
    v = cells[:, 1] - c.y
    d2 = u * u + v * v
    assert (v >= 0).all() and (d2 <= r * r + r).all()
    if not filled and r - width >= 0:
        q = r - width
        assert (d2 > q * q + q).all()
    s = {(int(a), int(b)) for a, b in zip(u.tolist(), v.tolist(), strict=True)}
    assert s == {(-a, b) for a, b in s}


def test_arch_radius_3_ring_and_filled_half_disc():
    assert shapes.arch_count(3, 1, 1, False) == 9
    assert shapes.arch_count(3, 1, 1, True) == 7 + 7 + 5 + 3  # rows v = 0, 1, 2, 3
    assert shapes.arch_count(0, 1, 1, False) == 1


# -- transform -------------------------------------------------------------------------------

SHAPES = st.sampled_from(
    [
        box((1, 64, 0), (4, 66, 1), "oak_stairs[facing=north,shape=outer_left]"),
        {"type": "line", "from": V(0, 64, 0), "to": V(5, 67, 2), "block": "rail[shape=ascending_east]"},
        {
            "type": "cylinder",
            "center": V(3, 64, -2),
            "radius": 2,
            "height": 2,
            "block": "oak_log[axis=x]",
            "hollow": True,
        },
        {
            "type": "arch",
            "center": V(2, 64, 3),
            "radius": 3,
            "axis": "x",
            "depth": 2,
            "block": "oak_fence[north=true,east=true]",
        },
        box((0, 64, 0), (2, 64, 2), "oak_door[facing=east,hinge=left]"),
    ]
)


def _ws(doc) -> dict:
    return compile_recipe(doc).blocks()


def _rot_pos(p, k, a):
    x, y, z = p
    dx, dz = x - a[0], z - a[2]
    for _ in range(k % 4):
        dx, dz = -dz, dx
    return (a[0] + dx, y, a[2] + dz)


def _mir_pos(p, axis, a):
    x, y, z = p
    return (2 * a[0] - x, y, z) if axis == "x" else (x, y, 2 * a[2] - z)


def T(ops, **kw):  # noqa: N802
    return {"type": "transform", "operations": ops, **kw}


A = (10, 64, 10)


@settings(max_examples=40, deadline=None)
@given(SHAPES, st.sampled_from([0, 90, 180, 270]))
def test_rotation_moves_positions_and_rotates_states(shape, deg):
    base = _ws(R(shape))
    got = _ws(R(T([shape], rotate=deg, anchor=V(*A))))
    k = deg // 90
    want = {_rot_pos(p, k, A): rotate_state(s, k, REG) for p, s in base.items()}
    assert got == want


@settings(max_examples=30, deadline=None)
@given(SHAPES, st.sampled_from("xz"))
def test_mirror_moves_positions_and_mirrors_states(shape, axis):
    base = _ws(R(shape))
    got = _ws(R(T([shape], mirror=axis, anchor=V(*A))))
    want = {_mir_pos(p, axis, A): mirror_state(s, axis, REG) for p, s in base.items()}
    assert got == want


@settings(max_examples=30, deadline=None)
@given(SHAPES)
def test_transform_group_laws_on_whole_plans(shape):
    base = _ws(R(shape))
    four = R(
        T(
            [T([T([T([shape], rotate=90, anchor=V(*A))], rotate=90, anchor=V(*A))], rotate=90, anchor=V(*A))],
            rotate=90,
            anchor=V(*A),
        )
    )
    assert _ws(four) == base
    assert _ws(R(T([T([shape], mirror="x", anchor=V(*A))], mirror="x", anchor=V(*A)))) == base
    r180 = _ws(R(T([shape], rotate=180, anchor=V(*A))))
    mxmz = _ws(R(T([T([shape], mirror="z", anchor=V(*A))], mirror="x", anchor=V(*A))))
    assert r180 == mxmz
    # one transform with mirror + rotate == mirror inside, rotate outside
    both = _ws(R(T([shape], mirror="z", rotate=90, anchor=V(*A))))
    nested = _ws(R(T([T([shape], mirror="z", anchor=V(*A))], rotate=90, anchor=V(*A))))
    assert both == nested


@settings(max_examples=30, deadline=None)
@given(SHAPES, st.integers(1, 4), st.integers(-3, 3), st.integers(-3, 3), st.sampled_from([90, 270]))
def test_repeat_inside_transform_equals_transformed_repeat(shape, count, ox, oz, deg):
    rep = {"type": "repeat", "count": count, "offset": V(ox, 0, oz), "operations": [shape]}
    got = _ws(R(T([rep], rotate=deg, anchor=V(*A), translate=V(1, 2, 3))))
    base = _ws(R(rep))
    k = deg // 90
    want = {}
    for p, s in base.items():
        q = _rot_pos(p, k, A)
        want[(q[0] + 1, q[1] + 2, q[2] + 3)] = rotate_state(s, k, REG)
    assert got == want


def test_translate_only_needs_no_anchor_and_rotate_does():
    r = compile_recipe(R(T([box((0, 64, 0), (0, 64, 0), "stone")], translate=V(5, 1, -2))))
    assert r.blocks() == {(5, 65, -2): "minecraft:stone"}
    with pytest.raises(McbError) as ei:
        compile_recipe(R(T([box((0, 64, 0), (0, 64, 0), "stone")], rotate=90)))
    assert ei.value.details["path"] == "operations[0].anchor"


def test_transform_counts_toward_the_nesting_limit():
    op = box((0, 64, 0), (0, 64, 0), "stone")
    for _ in range(5):
        op = T([op], translate=V(1, 0, 0))
    with pytest.raises(McbError) as ei:
        compile_recipe(R(op))
    assert ei.value.code == ErrorCode.BUDGET_EXCEEDED
    assert ei.value.details["limit"] == "max_depth" and ei.value.details["value"] == 5


def test_transformed_shape_leaving_the_area_is_out_of_bounds():
    from mcb_common.geometry import Box

    area = Box(Vec3(0, 0, 0), Vec3(20, 100, 20))
    with pytest.raises(McbError) as ei:
        compile_recipe(R(T([box((1, 64, 1), (5, 64, 1), "stone")], rotate=180, anchor=V(2, 64, 2))), area=area)
    assert ei.value.code == ErrorCode.OUT_OF_BOUNDS
    assert "transformed" in ei.value.message


# -- palettes --------------------------------------------------------------------------------

PATH_PALETTE = {"path": [{"block": "gravel", "weight": 3}, {"block": "coarse_dirt", "weight": 1}]}


def _path(seed, *extra):
    return R(
        *extra,
        {"type": "box", "min": V(0, 63, 0), "max": V(99, 63, 9), "block": "$path"},
        palette=PATH_PALETTE,
        seed=seed,
    )


def test_weighted_palette_is_reproducible_and_seeded():
    a, b, c = (compile_recipe(_path(s)) for s in (1, 1, 2))
    assert a.blocks() == b.blocks() and a.recipe_hash == b.recipe_hash
    assert a.blocks() != c.blocks()
    counts = dict(a.materials)
    assert 0.68 < counts["minecraft:gravel"] / 1000 < 0.82  # weight 3:1 over 1000 cells


def test_palette_choice_depends_on_position_not_on_operation_order():
    other = box((50, 70, 50), (51, 71, 51), "stone")
    a = compile_recipe(_path(5)).blocks()
    b = compile_recipe(_path(5, other)).blocks()
    assert {p: s for p, s in b.items() if p[1] == 63} == a


def test_palette_single_entry_and_states_inside_transforms_are_turned():
    doc = R(
        T([box((1, 64, 0), (1, 64, 0), "$step")], rotate=90, anchor=V(0, 64, 0)),
        palette={"step": "oak_stairs[facing=north]"},
    )
    assert compile_recipe(doc).blocks() == {(0, 64, 1): REG.canonical("oak_stairs[facing=east]")}


def test_unknown_block_in_a_palette_choice_names_the_choice():
    doc = _path(1)
    doc["palette"] = {"path": [{"block": "gravel"}, {"block": "coarse_dirtt"}]}
    with pytest.raises(McbError) as ei:
        compile_recipe(doc)
    assert ei.value.code == ErrorCode.UNSUPPORTED_BLOCK
    assert ei.value.details["path"] == "palette.path[1].block"


# -- limits and determinism -----------------------------------------------------------------


def test_time_budget_is_enforced_with_numbers():
    doc = R({"type": "repeat", "count": 200, "offset": V(0, 0, 1), "operations": [box((0, 0, 0), (99, 9, 0), "stone")]})
    with pytest.raises(McbError) as ei:
        compile_recipe(doc, limits=Limits(max_millis=1, max_operations=1000))
    e = ei.value
    # the check runs after each shape, so a fast machine may still pass one shape first
    assert e.code == ErrorCode.BUDGET_EXCEEDED and e.details["limit"] == "max_millis"
    assert e.details["max"] == 1 and e.details["value"] > 1


def test_hash_is_deterministic_across_key_order_and_param_spelling():
    d1 = R(box((0, 64, 0), ("w", 64, 0), "$m"), params={"w": 4}, palette={"m": "stone"})
    d2 = {
        "palette": {"m": "minecraft:stone"},
        "operations": [{"block": "$m", "max": {"z": 0, "y": 64, "x": "w"}, "min": V(0, 64, 0), "type": "box"}],
        "params": {"w": 4.0},
        "version": 1,
    }
    assert compile_recipe(d1).recipe_hash == compile_recipe(d2).recipe_hash


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**32))
def test_plans_are_identical_across_runs(seed):
    rnd = random.Random(seed)
    doc = _path(seed, T([box((0, 64, 0), (rnd.randint(0, 5), 66, 2), "oak_stairs")], rotate=90, anchor=V(3, 64, 3)))
    a, b = compile_recipe(doc), compile_recipe(doc)
    assert a.recipe_hash == b.recipe_hash
    assert np.array_equal(a.xyz, b.xyz) and np.array_equal(a.states, b.states)
    assert a.palette == b.palette
