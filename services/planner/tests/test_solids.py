"""Revision-4 shapes against a plain-Python brute force of their written definitions
(solids.py docstring, docs/recipes.md), through the compiler: exact block counts, hollow walls
with thickness, transforms, overlay/foundation over a fake world, limits."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcb_common.errors import ErrorCode, McbError
from mcb_planner.compile import Limits, compile_recipe
from test_replace_paste import FakeWorld

STONE = "minecraft:stone"


def compiled(op, **kw) -> set[tuple[int, int, int]]:
    return set(compile_recipe({"version": 1, "operations": [op]}, **kw).blocks())


def v(x, y, z):
    return {"x": x, "y": y, "z": z}


# -- brute force -------------------------------------------------------------------------------


def shell(solid: set, t: int, open_side) -> set:
    """Cells of ``solid`` within t 6-steps of the outside; ``open_side(p)`` says whether a
    position outside the solid counts as inside (an open face)."""
    if t == 0:
        return set(solid)
    inner = set(solid)
    for _ in range(t):
        inner = {
            p
            for p in inner
            if all(
                (q in inner) or (q not in solid and open_side(q))
                for q in (
                    (p[0] + dx, p[1] + dy, p[2] + dz)
                    for dx, dy, dz in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1))
                )
            )
        }
    return solid - inner


def brute_ellipsoid(c, radii, t=0, axis=None):
    solid = set()
    rng = [range(-r, r + 1) for r in radii]
    for d in itertools.product(*rng):
        if sum(Fraction(d[i] ** 2, radii[i] ** 2 + radii[i]) for i in range(3) if radii[i]) > 1:
            continue
        if axis is not None:
            a = "xyz".index(axis[1])
            if (d[a] if axis[0] == "+" else -d[a]) < 0:
                continue
        solid.add(tuple(c[i] + d[i] for i in range(3)))

    def open_side(q):
        if axis is None:
            return False
        a = "xyz".index(axis[1])
        rel = q[a] - c[a]
        return rel < 0 if axis[0] == "+" else rel > 0

    return shell(solid, t, open_side)


def brute_cone(c, r, h, axis="+y", t=0, square=False):
    a, sign = "xyz".index(axis[1]), (1 if axis[0] == "+" else -1)
    others = [i for i in range(3) if i != a]
    solid = set()
    for i in range(h):
        rho = Fraction(r) if h == 1 else Fraction(r * (h - 1 - i), h - 1)
        for u in range(-r, r + 1):
            for w in range(-r, r + 1):
                if square:
                    half = int(rho + Fraction(1, 2)) if rho.denominator != 1 else int(rho)
                    half = (2 * rho.numerator + rho.denominator) // (2 * rho.denominator)
                    ok = max(abs(u), abs(w)) <= half
                else:
                    ok = u * u + w * w <= rho * rho + rho
                if ok:
                    p = [0, 0, 0]
                    p[a], p[others[0]], p[others[1]] = c[a] + sign * i, c[others[0]] + u, c[others[1]] + w
                    solid.add(tuple(p))
    return shell(solid, t, lambda q: (q[a] - c[a]) * sign < 0)


def brute_cylinder(c, r, h, axis="y", t=0):
    a = "xyz".index(axis)
    others = [i for i in range(3) if i != a]
    solid = set()
    for i in range(h):
        for u in range(-r, r + 1):
            for w in range(-r, r + 1):
                if u * u + w * w <= r * r + r:
                    p = [0, 0, 0]
                    p[a], p[others[0]], p[others[1]] = c[a] + i, c[others[0]] + u, c[others[1]] + w
                    solid.add(tuple(p))
    return shell(solid, t, lambda q: not 0 <= q[a] - c[a] < h)


def brute_line2(a, b):
    n = max(abs(b[0] - a[0]), abs(b[1] - a[1]))
    if n == 0:
        return {a}
    out = set()
    for i in range(n + 1):
        out.add(
            tuple(int((Fraction(a[k]) + Fraction(i * (b[k] - a[k]), n) + Fraction(1, 2)).__floor__()) for k in range(2))
        )
    return out


def brute_polygon(points, y, h, t=0):
    xs = [p[0] for p in points]
    zs = [p[1] for p in points]
    cols = set()
    for x in range(min(xs), max(xs) + 1):
        for z in range(min(zs), max(zs) + 1):
            inside = False
            on = False
            for k in range(len(points)):
                (x1, z1), (x2, z2) = points[k], points[(k + 1) % len(points)]
                if (
                    (x2 - x1) * (z - z1) == (z2 - z1) * (x - x1)
                    and min(x1, x2) <= x <= max(x1, x2)
                    and min(z1, z2) <= z <= max(z1, z2)
                ):
                    on = True
                if (z1 > z) != (z2 > z):
                    cx = Fraction(x1) + Fraction((z - z1) * (x2 - x1), z2 - z1)
                    if cx > x:
                        inside = not inside
            if inside or on:
                cols.add((x, z))
    for k in range(len(points)):
        cols |= brute_line2(points[k], points[(k + 1) % len(points)])
    solid = {(x, yy, z) for x, z in cols for yy in range(y, y + h)}
    return shell(solid, t, lambda q: not y <= q[1] < y + h)


# -- exact counts ------------------------------------------------------------------------------


@pytest.mark.parametrize("r", [0, 1, 2, 3, 5, 8])
@pytest.mark.parametrize("t", [0, 1, 2])
def test_sphere_matches_brute_force(r, t):
    op = {"type": "sphere", "center": v(3, 70, -2), "radius": r, "block": "stone"}
    if t:
        op["thickness"] = t
    assert compiled(op) == brute_ellipsoid((3, 70, -2), (r, r, r), t)


def test_sphere_counts_are_the_published_ones():
    # docs/recipes.md: solid r = 1, 2, 3, 5 → 19, 81, 179, 739; hollow (t = 1) r = 3, 5 → 98, 278
    for r, n in ((1, 19), (2, 81), (3, 179), (5, 739)):
        assert len(compiled({"type": "sphere", "center": v(0, 80, 0), "radius": r, "block": "stone"})) == n
    for r, n in ((3, 98), (5, 278)):
        assert (
            len(compiled({"type": "sphere", "center": v(0, 80, 0), "radius": r, "block": "stone", "hollow": True})) == n
        )


@given(
    st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 5)),
    st.integers(0, 2),
    st.sampled_from([None, "+x", "-x", "+y", "-y", "+z", "-z"]),
)
@settings(max_examples=60, deadline=None, derandomize=True)
def test_ellipsoid_and_dome_match_brute_force(radii, t, axis):
    if axis is None:
        op = {
            "type": "ellipsoid",
            "center": v(1, 60, 2),
            "radii": dict(zip("xyz", radii, strict=True)),
            "block": "stone",
        }
    else:
        op = {
            "type": "dome",
            "center": v(1, 60, 2),
            "radii": dict(zip("xyz", radii, strict=True)),
            "axis": axis,
            "block": "stone",
        }
    if t:
        op["thickness"] = t
    assert compiled(op) == brute_ellipsoid((1, 60, 2), radii, t, axis)


@given(
    st.integers(0, 6),
    st.integers(1, 8),
    st.sampled_from(["+x", "-x", "+y", "-y", "+z", "-z"]),
    st.integers(0, 2),
    st.booleans(),
)
@settings(max_examples=60, deadline=None, derandomize=True)
def test_cone_and_pyramid_match_brute_force(r, h, axis, t, square):
    op = {
        "type": "pyramid" if square else "cone",
        "center": v(-3, 50, 4),
        "radius": r,
        "height": h,
        "axis": axis,
        "block": "stone",
    }
    if t:
        op["thickness"] = t
    assert compiled(op) == brute_cone((-3, 50, 4), r, h, axis, t, square)


def test_pyramid_default_height_steps_one_per_layer():
    cells = compiled({"type": "pyramid", "center": v(0, 64, 0), "radius": 3, "block": "stone"})
    assert len(cells) == 7 * 7 + 5 * 5 + 3 * 3 + 1  # 84
    cone = compiled({"type": "cone", "center": v(0, 64, 0), "radius": 3, "height": 4, "block": "stone"})
    assert max(y for _, y, _ in cone) == 67 and {(0, 67, 0)} == {c for c in cone if c[1] == 67}


@given(st.integers(0, 6), st.integers(1, 6), st.sampled_from(["x", "y", "z"]), st.integers(0, 3))
@settings(max_examples=50, deadline=None, derandomize=True)
def test_cylinder_any_axis_with_thickness_matches_brute_force(r, h, axis, t):
    op = {"type": "cylinder", "center": v(2, 64, 2), "radius": r, "height": h, "axis": axis, "block": "stone"}
    if t:
        op["thickness"] = t
    assert compiled(op) == brute_cylinder((2, 64, 2), r, h, axis, t)


def test_cylinder_thickness_1_on_y_is_the_revision_1_hollow_cylinder():
    old = compiled(
        {"type": "cylinder", "center": v(0, 64, 0), "radius": 5, "height": 3, "block": "stone", "hollow": True}
    )
    new = compiled(
        {
            "type": "cylinder",
            "center": v(0, 64, 0),
            "radius": 5,
            "height": 3,
            "block": "stone",
            "axis": "y",
            "thickness": 1,
        }
    )
    assert old == new


polygon_points = st.lists(st.tuples(st.integers(-6, 6), st.integers(-6, 6)), min_size=3, max_size=7)


@given(polygon_points, st.integers(1, 3), st.integers(0, 2))
@settings(max_examples=80, deadline=None, derandomize=True)
def test_polygon_matches_brute_force(points, h, t):
    op = {"type": "polygon", "points": [{"x": x, "z": z} for x, z in points], "y": 70, "height": h, "block": "stone"}
    if t:
        op["thickness"] = t
    assert compiled(op) == brute_polygon(points, 70, h, t)


def test_polygon_l_shape_count():
    pts = [(0, 0), (6, 0), (6, 3), (3, 3), (3, 6), (0, 6)]
    cells = compiled(
        {"type": "polygon", "points": [{"x": x, "z": z} for x, z in pts], "y": 64, "height": 2, "block": "stone"}
    )
    assert len(cells) == (7 * 4 + 4 * 3) * 2  # 80


# -- transforms --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "op",
    [
        {"type": "dome", "center": v(4, 64, 1), "radius": 4, "axis": "+x", "block": "stone", "hollow": True},
        {"type": "cone", "center": v(2, 64, 3), "radius": 3, "height": 5, "axis": "-z", "block": "stone"},
        {"type": "pyramid", "center": v(1, 64, 1), "radius": 2, "axis": "+x", "block": "stone"},
        {
            "type": "cylinder",
            "center": v(1, 64, 2),
            "radius": 2,
            "height": 4,
            "axis": "z",
            "block": "stone",
            "thickness": 1,
        },
        {
            "type": "polygon",
            "points": [{"x": 0, "z": 0}, {"x": 5, "z": 1}, {"x": 2, "z": 4}],
            "y": 64,
            "height": 2,
            "block": "stone",
        },
    ],
)
@pytest.mark.parametrize("rotate, mirror", [(90, None), (180, None), (270, None), (0, "x"), (90, "z")])
def test_shapes_turn_and_mirror_like_every_operation(op, rotate, mirror):
    base = compiled(op)
    t = {"type": "transform", "rotate": rotate, "anchor": v(0, 0, 0), "operations": [op]}
    if mirror:
        t["mirror"] = mirror
    got = compiled(t)

    def move(p):
        x, y, z = p
        if mirror == "x":
            x = -x
        elif mirror == "z":
            z = -z
        for _ in range(rotate // 90):
            x, z = -z, x
        return (x, y, z)

    assert got == {move(p) for p in base}


# -- limits -------------------------------------------------------------------------------------


def test_a_huge_solid_is_budget_exceeded_before_it_is_built():
    with pytest.raises(McbError) as ei:
        compiled(
            {"type": "sphere", "center": v(0, 100, 0), "radius": 150, "block": "stone"},
            area=None,
            limits=Limits(max_examined_positions=2_000_000),
        )
    assert ei.value.code == ErrorCode.BUDGET_EXCEEDED and ei.value.details["limit"] == "max_examined_positions"
    with pytest.raises(McbError) as ei:
        compiled({"type": "sphere", "center": v(0, 100, 0), "radius": 60, "block": "stone"})
    assert ei.value.details["limit"] == "max_changed_blocks"


@pytest.mark.parametrize(
    "op, path",
    [
        ({"type": "sphere", "center": v(0, 64, 0), "radius": 1025, "block": "stone"}, "operations[0].radius"),
        (
            {"type": "sphere", "center": v(0, 64, 0), "radius": 3, "block": "stone", "hollow": False, "thickness": 2},
            "operations[0].thickness",
        ),
        ({"type": "dome", "center": v(0, 64, 0), "block": "stone"}, "operations[0].radius"),
        ({"type": "dome", "center": v(0, 64, 0), "radius": 2, "axis": "up", "block": "stone"}, "operations[0].axis"),
        (
            {"type": "polygon", "points": [{"x": 0, "z": 0}, {"x": 1, "z": 1}], "y": 64, "height": 1, "block": "stone"},
            "operations[0].points",
        ),
        (
            {
                "type": "foundation",
                "block": "stone",
                "operations": [{"type": "overlay", "min": v(0, 60, 0), "max": v(1, 70, 1), "block": "stone"}],
            },
            "operations[0].operations[0].type",
        ),
    ],
)
def test_bad_shapes_name_the_path(op, path):
    with pytest.raises(McbError) as ei:
        compiled(op)
    assert ei.value.code == ErrorCode.INVALID_REQUEST and ei.value.details["path"] == path


# -- overlay and foundation ----------------------------------------------------------------------


def ground(heights: dict[tuple[int, int], int], block="minecraft:grass_block") -> dict:
    return {(x, y, z): block for (x, z), top in heights.items() for y in range(60, top + 1)}


def test_overlay_places_a_layer_on_the_surface_of_each_column():
    heights = {(x, z): 62 + (x + z) % 3 for x in range(4) for z in range(3)}
    world = FakeWorld(ground(heights))
    blocks = compile_recipe(
        {
            "version": 1,
            "operations": [
                {"type": "overlay", "min": v(0, 55, 0), "max": v(4, 70, 2), "block": "moss_carpet", "depth": 2}
            ],
        },
        world=world,
    ).blocks()
    want = {(x, top + d, z) for (x, z), top in heights.items() for d in (1, 2)}
    assert set(blocks) == want  # column x = 4 has no ground in the range: nothing there
    assert set(blocks.values()) == {"minecraft:moss_carpet"}


def test_overlay_sees_what_earlier_operations_built():
    world = FakeWorld(ground({(0, 0): 62, (1, 0): 62}))
    blocks = compile_recipe(
        {
            "version": 1,
            "operations": [
                {"type": "box", "min": v(1, 63, 0), "max": v(1, 65, 0), "block": "stone"},
                {"type": "overlay", "min": v(0, 55, 0), "max": v(1, 70, 0), "block": "snow"},
            ],
        },
        world=world,
    ).blocks()
    assert blocks[(0, 63, 0)].startswith("minecraft:snow") and blocks[(1, 66, 0)].startswith("minecraft:snow")


def test_foundation_fills_down_to_the_ground_under_every_column():
    heights = {(x, z): 60 + x for x in range(5) for z in range(2)}
    world = FakeWorld(ground(heights, "minecraft:dirt"))
    r = compile_recipe(
        {
            "version": 1,
            "operations": [
                {
                    "type": "foundation",
                    "block": "cobblestone",
                    "operations": [{"type": "box", "min": v(0, 66, 0), "max": v(4, 67, 1), "block": "oak_planks"}],
                }
            ],
        },
        world=world,
    )
    got = r.blocks()
    fill = {p for p, s in got.items() if s == "minecraft:cobblestone"}
    assert fill == {(x, y, z) for (x, z), top in heights.items() for y in range(top + 1, 66)}
    assert len(got) == 20 + sum(66 - top - 1 for top in heights.values())


def test_foundation_without_ground_is_budget_exceeded():
    with pytest.raises(McbError) as ei:
        compile_recipe(
            {
                "version": 1,
                "operations": [
                    {
                        "type": "foundation",
                        "block": "cobblestone",
                        "max_depth": 4,
                        "operations": [{"type": "sphere", "center": v(0, 100, 0), "radius": 2, "block": "stone"}],
                    }
                ],
            },
            world=FakeWorld(),
        )
    assert ei.value.code == ErrorCode.BUDGET_EXCEEDED and ei.value.details["limit"] == "foundation_depth"


# -- the examples of docs/recipes.md -----------------------------------------------------------

DOC_SHAPES = {
    "sphere": 278,
    "ellipsoid": 443,
    "dome": 314,
    "cone": 106,
    "pyramid": 286,
    "cylinder": 192,
    "polygon": 156,
    "overlay": 121,
    "foundation": 175,
    "connected": 70,
}


class FlatWorld(FakeWorld):
    """The embedded host's flat world: grass at y 63, dirt below, air above."""

    def __call__(self, box):
        import numpy as np

        self.reads.append(box)
        layer = box.size.x * box.size.z
        idx = np.concatenate(
            [
                np.full(layer, 0 if y > 63 else (1 if y == 63 else 2), dtype=np.uint16)
                for y in range(box.min.y, box.max.y + 1)
            ]
        )
        return ["minecraft:air", "minecraft:grass_block[snowy=false]", "minecraft:dirt"], idx


def test_every_shape_example_of_the_doc_builds_inside_the_default_area():
    import re
    from pathlib import Path

    from mcb_common.geometry import Box, Vec3

    doc = (Path(__file__).resolve().parents[3] / "docs" / "recipes.md").read_text()
    found = dict(re.findall(r"<!-- shape: (\w+) -->\n```json\n(.*?)\n```", doc, re.S))
    assert set(found) == set(DOC_SHAPES)
    area = Box(Vec3(-64, -64, -64), Vec3(63, 319, 63))  # mcb_cli.runner.DEFAULT_AREA
    for name, text in found.items():
        r = compile_recipe(text, world=FlatWorld(), area=area)
        assert len(r) == DOC_SHAPES[name], name
        assert not r.warnings, (name, r.warnings)
