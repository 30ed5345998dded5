"""Rasterisers: the exact set of block positions each recipe shape covers.

Every rasteriser returns an ``(N, 3)`` int64 array of distinct ``(x, y, z)`` cells, and has a
``*_count`` twin that gives N in closed form (or O(radius)) without building the cells, so the
compiler can refuse an oversized recipe before allocating anything.

Definitions (docs/recipes.md repeats them for recipe authors):

box(min, max, hollow)
    Solid: every cell with min ≤ p ≤ max on each axis. Hollow: the cells of the solid box that
    lie on at least one of its six faces (x ∈ {min.x, max.x} or y ∈ … or z ∈ …); a box 1 or 2
    cells thick along any axis is therefore solid.

line(a, b)
    With d = b − a and N = max(|dx|, |dy|, |dz|), the cells p_i for i = 0 … N where each axis is
    the exact point a + i·d/N rounded to the nearest integer, halves rounded up (toward +∞).
    The major axis moves exactly one block per step and the others at most one, so the line is
    26-connected, has exactly N + 1 cells and contains both ends. Rounding depends only on the
    absolute coordinate, not on the direction of travel, so line(a, b) and line(b, a) are the
    same set of cells.

cylinder(center, radius r, height, hollow)
    Vertical axis through center; layers y = center.y … center.y + height − 1. A layer holds the
    cells (x, z) with dx² + dz² ≤ r² + r (dx = x − center.x, dz = z − center.z): exactly the cells
    whose centres lie within r + ½ of the axis, which gives round discs without the lone
    "pimples" of a plain ≤ r² test. r = 0 is a single column. Hollow: the disc cells that have a
    4-neighbour (±x or ±z) outside the disc — a one-block wall, open at top and bottom. The
    disc is symmetric under x ↦ −x, z ↦ −z and swapping x with z.
"""

from __future__ import annotations

import numpy as np
from mcb_common.geometry import Vec3

# -- box -------------------------------------------------------------------------------------


def box_count(lo: Vec3, hi: Vec3, hollow: bool) -> int:
    sx, sy, sz = hi.x - lo.x + 1, hi.y - lo.y + 1, hi.z - lo.z + 1
    volume = sx * sy * sz
    if not hollow:
        return volume
    return volume - max(sx - 2, 0) * max(sy - 2, 0) * max(sz - 2, 0)


def box_cells(lo: Vec3, hi: Vec3, hollow: bool) -> np.ndarray:
    xs = np.arange(lo.x, hi.x + 1, dtype=np.int64)
    ys = np.arange(lo.y, hi.y + 1, dtype=np.int64)
    zs = np.arange(lo.z, hi.z + 1, dtype=np.int64)
    if not hollow:
        # y outermost, x fastest: the cells come out in (y, z, x) order.
        y, z, x = np.meshgrid(ys, zs, xs, indexing="ij")
        return np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    y, z, x = np.meshgrid(ys, zs, xs, indexing="ij", sparse=True)
    face = (x == lo.x) | (x == hi.x) | (y == lo.y) | (y == hi.y) | (z == lo.z) | (z == hi.z)
    iy, iz, ix = np.nonzero(face)
    return np.stack([ix + lo.x, iy + lo.y, iz + lo.z], axis=1).astype(np.int64)


# -- line ------------------------------------------------------------------------------------


def line_count(a: Vec3, b: Vec3) -> int:
    return max(abs(b.x - a.x), abs(b.y - a.y), abs(b.z - a.z)) + 1


def line_cells(a: Vec3, b: Vec3) -> np.ndarray:
    n = line_count(a, b) - 1
    if n == 0:
        return np.array([[a.x, a.y, a.z]], dtype=np.int64)
    i = np.arange(n + 1, dtype=np.int64)
    cols = []
    for a0, b0 in ((a.x, b.x), (a.y, b.y), (a.z, b.z)):
        # floor(a0 + i·d/n + ½) in exact integer arithmetic (numpy // floors like Python).
        cols.append((2 * a0 * n + 2 * i * (b0 - a0) + n) // (2 * n))
    return np.stack(cols, axis=1)


# -- cylinder --------------------------------------------------------------------------------


def _isqrt(v: np.ndarray) -> np.ndarray:
    """floor(sqrt(v)) for non-negative int64 v (exact: float estimate, then one correction)."""
    h = np.floor(np.sqrt(v.astype(np.float64))).astype(np.int64)
    h -= (h * h > v).astype(np.int64)
    h += ((h + 1) * (h + 1) <= v).astype(np.int64)
    return h


def _columns(radius: int, hollow: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per column dx ∈ [−r, r]: the disc's half-height h and the covered |dz| range.

    Returns (dx, h, lo, count) where the column covers |dz| ∈ [lo, h] (both signs), and
    ``count`` cells in total. Solid: lo = 0. Hollow: a cell is on the wall iff one of its
    4-neighbours is outside, i.e. |dz| = h (its z-neighbour leaves the disc) or |dz| exceeds
    the half-height of the column to its left or right; so lo = min(h_left, h_right, h − 1) + 1
    (columns beyond ±r have half-height −1, which makes the outermost columns fully wall).
    """
    r = radius
    dx = np.arange(-r, r + 1, dtype=np.int64)
    h = _isqrt(r * r + r - dx * dx)
    if not hollow:
        lo = np.zeros_like(h)
    else:
        padded = np.concatenate(([-1], h, [-1]))
        m = np.minimum(np.minimum(padded[:-2], padded[2:]), h - 1)
        lo = np.maximum(m + 1, 0)
    # |dz| ∈ [lo, h] counts 2·(h − lo + 1) cells, minus one when dz = 0 is included.
    count = 2 * (h - lo + 1) - (lo == 0)
    return dx, h, lo, count


def disc_count(radius: int, hollow: bool) -> int:
    return int(_columns(radius, hollow)[3].sum())


def cylinder_count(radius: int, height: int, hollow: bool) -> int:
    return disc_count(radius, hollow) * height


def disc_cells(radius: int, hollow: bool) -> np.ndarray:
    """The layer as an ``(N, 2)`` array of (dx, dz)."""
    dx, h, lo, _ = _columns(radius, hollow)
    # Each column is one or two z-intervals: [−h, −lo] and [lo, h] (one interval when lo = 0).
    # Columns with lo = 0 are one interval [−h, h]; their second interval is left empty.
    starts = np.concatenate([-h, np.where(lo == 0, h + 1, lo)])
    ends = np.concatenate([np.where(lo == 0, h, -lo), h])
    cols = np.concatenate([dx, dx])
    lengths = np.maximum(ends - starts + 1, 0)
    total = int(lengths.sum())
    col = np.repeat(cols, lengths)
    # dz runs from each interval's start: position within the interval + start.
    first = np.cumsum(lengths) - lengths
    dz = np.arange(total, dtype=np.int64) - np.repeat(first, lengths) + np.repeat(starts, lengths)
    return np.stack([col, dz], axis=1)


def cylinder_cells(center: Vec3, radius: int, height: int, hollow: bool) -> np.ndarray:
    layer = disc_cells(radius, hollow)
    n = len(layer)
    ys = np.arange(center.y, center.y + height, dtype=np.int64)
    out = np.empty((n * height, 3), dtype=np.int64)
    out[:, 0] = np.tile(layer[:, 0] + center.x, height)
    out[:, 1] = np.repeat(ys, n)
    out[:, 2] = np.tile(layer[:, 1] + center.z, height)
    return out


# -- arch ------------------------------------------------------------------------------------
#
# arch(center, r, width, axis, depth, filled)
#     In the vertical plane through ``center`` spanning along ``axis``: the cells (u, v), v ≥ 0,
#     with u² + v² ≤ r² + r (the cylinder's disc rule), minus — unless ``filled`` — the cells
#     with u² + v² ≤ q² + q for q = r − width (nothing is removed when q < 0). Width 1 gives
#     the 8-connected ring between the two circles. ``depth`` copies go +1 along the other
#     horizontal axis. Symmetric under u ↦ −u.


def _arch_columns(radius: int, width: int, filled: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column u ∈ [−r, r]: the covered v range [lo, h] (empty when lo > h)."""
    r = radius
    u = np.arange(-r, r + 1, dtype=np.int64)
    h = _isqrt(r * r + r - u * u)
    q = r - width
    if filled or q < 0:
        lo = np.zeros_like(h)
    else:
        inner = q * q + q - u * u
        hin = np.where(inner >= 0, _isqrt(np.maximum(inner, 0)), -1)
        lo = hin + 1
    return u, lo, h


def arch_count(radius: int, width: int, depth: int, filled: bool) -> int:
    _, lo, h = _arch_columns(radius, width, filled)
    return int(np.maximum(h - lo + 1, 0).sum()) * depth


def arch_cells(center: Vec3, radius: int, width: int, axis: str, depth: int, filled: bool) -> np.ndarray:
    u, lo, h = _arch_columns(radius, width, filled)
    lengths = np.maximum(h - lo + 1, 0)
    total = int(lengths.sum())
    col = np.repeat(u, lengths)
    first = np.cumsum(lengths) - lengths
    v = np.arange(total, dtype=np.int64) - np.repeat(first, lengths) + np.repeat(lo, lengths)
    n = total
    out = np.empty((n * depth, 3), dtype=np.int64)
    along = np.tile(col, depth)
    across = np.repeat(np.arange(depth, dtype=np.int64), n)
    out[:, 1] = np.tile(v, depth) + center.y
    if axis == "x":
        out[:, 0] = along + center.x
        out[:, 2] = across + center.z
    else:
        out[:, 2] = along + center.z
        out[:, 0] = across + center.x
    return out
