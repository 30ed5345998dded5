"""Rasterisers against their written definitions (shapes.py docstring, docs/recipes.md)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from mcb_common.geometry import Vec3
from mcb_planner import shapes

coord = st.integers(-40, 40)
vec = st.builds(Vec3, coord, coord, coord)
small = st.integers(-6, 6)
small_vec = st.builds(Vec3, small, small, small)
radius = st.integers(0, 24)


def cellset(a: np.ndarray) -> set[tuple[int, ...]]:
    return set(map(tuple, a.tolist()))


def distinct(a: np.ndarray) -> bool:
    return len(cellset(a)) == len(a)


# -- box -------------------------------------------------------------------------------------


@st.composite
def boxes(draw):
    a, b = draw(small_vec), draw(small_vec)
    lo = Vec3(min(a.x, b.x), min(a.y, b.y), min(a.z, b.z))
    hi = Vec3(max(a.x, b.x), max(a.y, b.y), max(a.z, b.z))
    return lo, hi


@given(boxes())
def test_solid_box_is_its_volume_in_yzx_order(b):
    lo, hi = b
    cells = shapes.box_cells(lo, hi, False)
    sx, sy, sz = hi.x - lo.x + 1, hi.y - lo.y + 1, hi.z - lo.z + 1
    assert len(cells) == sx * sy * sz == shapes.box_count(lo, hi, False)
    assert distinct(cells)
    order = [(y, z, x) for x, y, z in cells.tolist()]
    assert order == sorted(order)
    assert cells.min(axis=0).tolist() == [lo.x, lo.y, lo.z]
    assert cells.max(axis=0).tolist() == [hi.x, hi.y, hi.z]


@given(boxes())
def test_hollow_box_is_exactly_the_six_faces(b):
    lo, hi = b
    cells = shapes.box_cells(lo, hi, True)
    expected = {
        (x, y, z)
        for x in range(lo.x, hi.x + 1)
        for y in range(lo.y, hi.y + 1)
        for z in range(lo.z, hi.z + 1)
        if x in (lo.x, hi.x) or y in (lo.y, hi.y) or z in (lo.z, hi.z)
    }
    assert cellset(cells) == expected and distinct(cells)
    sx, sy, sz = hi.x - lo.x + 1, hi.y - lo.y + 1, hi.z - lo.z + 1
    assert len(cells) == sx * sy * sz - max(sx - 2, 0) * max(sy - 2, 0) * max(sz - 2, 0)
    assert shapes.box_count(lo, hi, True) == len(cells)


def test_hollow_box_examples():
    assert shapes.box_count(Vec3(0, 0, 0), Vec3(4, 6, 4), True) == 5 * 7 * 5 - 3 * 5 * 3
    # two cells thick: no inside, so hollow == solid
    assert shapes.box_count(Vec3(0, 0, 0), Vec3(1, 9, 9), True) == 2 * 10 * 10


# -- line ------------------------------------------------------------------------------------


@given(vec, vec)
def test_line_has_both_ends_n_plus_one_cells_and_is_26_connected(a, b):
    cells = shapes.line_cells(a, b)
    n = max(abs(b.x - a.x), abs(b.y - a.y), abs(b.z - a.z))
    assert len(cells) == n + 1 == shapes.line_count(a, b)
    assert distinct(cells)
    assert tuple(cells[0]) == (a.x, a.y, a.z)
    assert tuple(cells[-1]) == (b.x, b.y, b.z)
    steps = np.abs(np.diff(cells, axis=0))
    assert (steps.max(axis=1) == 1).all() if n else True  # each step moves, by ≤ 1 per axis


@given(vec, vec)
def test_line_is_the_same_set_both_ways(a, b):
    assert cellset(shapes.line_cells(a, b)) == cellset(shapes.line_cells(b, a))


@given(vec, vec, small_vec)
def test_line_commutes_with_translation(a, b, t):
    moved = shapes.line_cells(a + t, b + t)
    assert cellset(moved) == {(x + t.x, y + t.y, z + t.z) for x, y, z in cellset(shapes.line_cells(a, b))}


@given(vec, vec)
def test_line_cells_are_the_rounded_exact_points(a, b):
    from fractions import Fraction

    n = shapes.line_count(a, b) - 1
    cells = shapes.line_cells(a, b).tolist()
    for i in range(n + 1):
        expected = []
        for a0, b0 in ((a.x, b.x), (a.y, b.y), (a.z, b.z)):
            v = Fraction(a0) + (Fraction(i * (b0 - a0), n) if n else 0)
            expected.append(int((v + Fraction(1, 2)).__floor__()))
        assert cells[i] == expected


def test_line_examples():
    diag = shapes.line_cells(Vec3(0, 64, 0), Vec3(8, 64, 8)).tolist()
    assert diag == [[i, 64, i] for i in range(9)]
    # dy = 1 over 2 steps: the middle point is y = 0.5 → rounds up, in both directions
    assert shapes.line_cells(Vec3(0, 0, 0), Vec3(2, 1, 0)).tolist() == [[0, 0, 0], [1, 1, 0], [2, 1, 0]]
    assert shapes.line_cells(Vec3(2, 1, 0), Vec3(0, 0, 0)).tolist() == [[2, 1, 0], [1, 1, 0], [0, 0, 0]]
    assert shapes.line_cells(Vec3(5, 5, 5), Vec3(5, 5, 5)).tolist() == [[5, 5, 5]]


def test_line_across_the_world_is_exact_with_large_coordinates():
    a, b = Vec3(-29_999_984, 0, 29_999_984), Vec3(29_999_984, 10, -29_999_984)
    assert shapes.line_count(a, b) == 59_999_969
    # only the count: the cells would be 60 M rows; the compiler never materialises this


# -- cylinder --------------------------------------------------------------------------------


def disc_by_definition(r: int, hollow: bool) -> set[tuple[int, int]]:
    inside = {(dx, dz) for dx in range(-r - 1, r + 2) for dz in range(-r - 1, r + 2) if dx * dx + dz * dz <= r * r + r}
    if not hollow:
        return inside
    return {
        (dx, dz)
        for dx, dz in inside
        if any(n not in inside for n in ((dx + 1, dz), (dx - 1, dz), (dx, dz + 1), (dx, dz - 1)))
    }


@settings(max_examples=60)
@given(radius, st.booleans())
def test_disc_matches_its_definition_and_count(r, hollow):
    cells = shapes.disc_cells(r, hollow)
    assert distinct(cells)
    assert cellset(cells) == disc_by_definition(r, hollow)
    assert len(cells) == shapes.disc_count(r, hollow)


@given(radius, st.booleans())
def test_disc_is_symmetric_under_reflections_and_swap(r, hollow):
    s = cellset(shapes.disc_cells(r, hollow))
    assert {(-x, z) for x, z in s} == s
    assert {(x, -z) for x, z in s} == s
    assert {(z, x) for x, z in s} == s


@given(small_vec, radius, st.integers(1, 6))
def test_hollow_cylinder_is_inside_the_solid_one_and_layers_stack(center, r, height):
    solid = cellset(shapes.cylinder_cells(center, r, height, False))
    hollow = cellset(shapes.cylinder_cells(center, r, height, True))
    assert hollow <= solid
    assert len(solid) == shapes.cylinder_count(r, height, False)
    assert len(hollow) == shapes.cylinder_count(r, height, True)
    ys = {y for _, y, _ in solid}
    assert ys == set(range(center.y, center.y + height))
    xs = {x for x, _, _ in solid}
    assert min(xs) == center.x - r and max(xs) == center.x + r


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 800), st.booleans())
def test_disc_count_agrees_with_cells_for_large_radii(r, hollow):
    assert shapes.disc_count(r, hollow) == len(shapes.disc_cells(r, hollow))


def test_cylinder_examples():
    assert shapes.disc_count(0, False) == shapes.disc_count(0, True) == 1  # a single column
    assert shapes.cylinder_cells(Vec3(3, 10, 4), 0, 3, True).tolist() == [[3, 10, 4], [3, 11, 4], [3, 12, 4]]
    assert shapes.disc_count(1, False) == 9 and shapes.disc_count(1, True) == 8
    # r = 3, the seed's tower: 37 cells per solid layer, a 16-cell ring when hollow
    assert shapes.disc_count(3, False) == 37 and shapes.disc_count(3, True) == 16
    ring = disc_by_definition(3, True)
    rows = ["".join("#" if (dx, dz) in ring else "." for dx in range(-3, 4)) for dz in range(-3, 4)]
    assert rows == ["..###..", ".#...#.", "#.....#", "#.....#", "#.....#", ".#...#.", "..###.."]


def test_huge_radius_counts_without_materialising():
    # 65535 is the schema's maximum radius: counting is O(r) over columns only.
    assert shapes.disc_count(65_535, True) > 0
    assert shapes.cylinder_count(65_535, 10, False) > 10**10


def test_isqrt_is_exact_around_squares():
    v = np.array(list(itertools.chain.from_iterable((k * k - 1, k * k, k * k + 1) for k in range(1, 70_000, 7))))
    h = shapes._isqrt(v)
    assert (h * h <= v).all() and ((h + 1) * (h + 1) > v).all()
