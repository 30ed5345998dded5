"""Rasterisers of the revision-4 solids: sphere, ellipsoid, dome, cone, pyramid, cylinder along
any axis, polygon prism — each solid or hollow with a wall ``thickness``.

Every shape is a predicate over the integer cells of its bounding box, evaluated on a dense
grid in exact integer arithmetic (no floating point decides a cell), so the cost and memory are
the bounding box's volume; the compiler counts that volume as the shape's *examined* positions
before anything is built (``bbox_volume``).

Definitions (docs/recipes.md repeats them; ``tests/test_solids.py`` checks every one against a
plain-Python brute force):

* ellipsoid(radii rx, ry, rz): Σ d_a² / (r_a² + r_a) ≤ 1 over the axes with r_a > 0, and
  d_a = 0 on an axis with r_a = 0 — for equal radii that is d² ≤ r² + r, the cylinder's
  round-disc rule (cells whose centres lie within r + ½). A sphere is an ellipsoid with equal
  radii.
* dome(axis ±a): the half of the ellipsoid with sign·d_a ≥ 0 (the base plane included).
* cone(radius r, height h, axis ±a): layer i = 0 … h−1 along the axis (i = 0 at ``center``) is
  the disc u² + v² ≤ ρ² + ρ with ρ = r·(h−1−i)/(h−1) (exact rationals; h = 1 is one disc of
  radius r): the apex layer is a single cell.
* pyramid(radius r, height h, axis ±a): layer i is the square max(|u|, |v|) ≤ w_i with
  w_i = r·(h−1−i)/(h−1) rounded half up; the default height r + 1 steps in by one per layer.
* cylinder(radius r, height h, axis x|y|z): the disc u² + v² ≤ r² + r on every layer
  0 … h−1 along +axis.
* polygon(points, y, height): the columns (x, z) that lie inside or on the boundary of the
  polygon (even-odd rule, boundary included) or on the rasterised line of one of its edges
  (the ``line`` rule), on the layers y … y + height − 1.

Hollow with ``thickness`` t: the cells of the solid whose 6-neighbourhood distance to the
outside is at most t, i.e. the solid minus its t-fold erosion by the 6-neighbour cross. Faces
that are *open* count as inside for the erosion, so nothing is built on them: the base of a
dome, cone and pyramid, both ends of a cylinder and the top and bottom of a polygon prism
(walls only, like the vertical cylinder of revision 1); a sphere or ellipsoid shell is closed.
t = 1 gives a shell that is watertight (no 6-connected path from inside to outside).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import shapes

AXES = ("+x", "-x", "+y", "-y", "+z", "-z")
_AXIS_INDEX = {"x": 0, "y": 1, "z": 2}


@dataclass(frozen=True, slots=True)
class Grid:
    """A dense boolean grid of a shape: ``mask[y, z, x]`` with its lowest corner ``origin``
    (x, y, z) relative to the shape's anchor."""

    origin: tuple[int, int, int]
    mask: np.ndarray

    def cells(self, anchor: tuple[int, int, int]) -> np.ndarray:
        iy, iz, ix = np.nonzero(self.mask)  # (y, z, x) order: rows come out sorted that way
        ox, oy, oz = (self.origin[i] + anchor[i] for i in range(3))
        return np.stack([ix + ox, iy + oy, iz + oz], axis=1).astype(np.int64)


def _axis(spec: str) -> tuple[int, int]:
    """ "+y" → (1, +1): the axis index (x 0, y 1, z 2) and the direction along it."""
    return _AXIS_INDEX[spec[-1]], (-1 if spec.startswith("-") else 1)


def _coords(lo: tuple[int, int, int], hi: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Open grids x, y, z (int64) shaped to broadcast as [y, z, x]."""
    x = np.arange(lo[0], hi[0] + 1, dtype=np.int64)[None, None, :]
    y = np.arange(lo[1], hi[1] + 1, dtype=np.int64)[:, None, None]
    z = np.arange(lo[2], hi[2] + 1, dtype=np.int64)[None, :, None]
    return x, y, z


def _full(mask: np.ndarray, shape: tuple[int, int, int]) -> np.ndarray:
    return np.broadcast_to(mask, shape).copy()


def erode(solid: np.ndarray, thickness: int, open_faces: tuple[tuple[int, int], ...]) -> np.ndarray:
    """The hollow shell: ``solid`` minus its ``thickness``-fold 6-neighbour erosion.

    ``open_faces`` lists (axis, side) of the grid's faces beyond which counts as inside (axis:
    x 0, y 1, z 2; side −1 = the low end, +1 = the high end)."""
    if thickness <= 0:
        return solid
    # grid axes are (y, z, x): map the shape axis to the array axis
    arr_axis = {0: 2, 1: 0, 2: 1}
    inner = solid
    for _ in range(thickness):
        if not inner.any():
            break
        p = np.pad(inner, 1, constant_values=False)
        for axis, side in open_faces:
            sl: list[slice | int] = [slice(None)] * 3
            sl[arr_axis[axis]] = 0 if side < 0 else -1
            p[tuple(sl)] = True
        core = p[1:-1, 1:-1, 1:-1]
        inner = (
            core
            & p[:-2, 1:-1, 1:-1]
            & p[2:, 1:-1, 1:-1]
            & p[1:-1, :-2, 1:-1]
            & p[1:-1, 2:, 1:-1]
            & p[1:-1, 1:-1, :-2]
            & p[1:-1, 1:-1, 2:]
        )
    return solid & ~inner


# -- bounding boxes (relative to the anchor) --------------------------------------------------


def _oriented_box(axis: str, length: int, r: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """Box of a shape of cross-section radius r extending ``length`` cells along ±axis."""
    a, sign = _axis(axis)
    lo, hi = [-r, -r, -r], [r, r, r]
    lo[a], hi[a] = (0, length - 1) if sign > 0 else (-(length - 1), 0)
    return (lo[0], lo[1], lo[2]), (hi[0], hi[1], hi[2])


def ellipsoid_box(
    radii: tuple[int, int, int], axis: str | None = None
) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    lo, hi = [-r for r in radii], list(radii)
    if axis is not None:
        a, sign = _axis(axis)
        if sign > 0:
            lo[a] = 0
        else:
            hi[a] = 0
    return (lo[0], lo[1], lo[2]), (hi[0], hi[1], hi[2])


def axial_box(axis: str, radius: int, height: int) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    return _oriented_box(axis, height, radius)


def polygon_box(
    points: tuple[tuple[int, int], ...], y: int, height: int
) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    xs = [p[0] for p in points]
    zs = [p[1] for p in points]
    return (min(xs), y, min(zs)), (max(xs), y + height - 1, max(zs))


def bbox_volume(box: tuple[tuple[int, int, int], tuple[int, int, int]]) -> int:
    lo, hi = box
    return (hi[0] - lo[0] + 1) * (hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1)


# -- predicates -------------------------------------------------------------------------------


def ellipsoid(radii: tuple[int, int, int], thickness: int = 0, axis: str | None = None) -> Grid:
    """Ellipsoid (``axis`` None) or dome (the half along ``axis``), relative to its centre."""
    lo, hi = ellipsoid_box(radii, axis)
    x, y, z = _coords(lo, hi)
    shape = (hi[1] - lo[1] + 1, hi[2] - lo[2] + 1, hi[0] - lo[0] + 1)
    den = [r * r + r for r in radii]
    total = np.zeros(shape, dtype=np.int64)
    bound = 1
    for d in den:
        if d:
            bound *= d
    for i, (d, c) in enumerate(zip(den, (x, y, z), strict=True)):
        if d == 0:
            continue  # the box is one cell thick on this axis: d_a = 0 everywhere
        other = 1
        for j, dj in enumerate(den):
            if j != i and dj:
                other *= dj
        total = total + c * c * other
    solid = total <= bound
    open_faces: tuple[tuple[int, int], ...] = ()
    if axis is not None:
        a, sign = _axis(axis)
        open_faces = ((a, -sign),)
    return Grid(lo, erode(solid, thickness, open_faces))


def _cross(a: int, x: np.ndarray, y: np.ndarray, z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(along the axis, u, v) for axis index ``a``."""
    u, v = [c for i, c in enumerate((x, y, z)) if i != a]
    return (x, y, z)[a], u, v


def cone(radius: int, height: int, axis: str = "+y", thickness: int = 0, square: bool = False) -> Grid:
    """Cone (round layers) or pyramid (``square`` layers), base at the anchor, apex along axis."""
    lo, hi = _oriented_box(axis, height, radius)
    a, sign = _axis(axis)
    x, y, z = _coords(lo, hi)
    t, u, v = _cross(a, x, y, z)
    i = t * sign  # layer index 0 … h−1
    n = height - 1
    if square:
        cheb = np.maximum(np.abs(u), np.abs(v))
        if n == 0:
            solid = cheb <= radius
        else:
            w = (2 * radius * (n - i) + n) // (2 * n)  # round half up of r(n−i)/n
            solid = cheb <= w
    else:
        d2 = u * u + v * v
        if n == 0:
            solid = d2 <= radius * radius + radius
        else:
            k = radius * (n - i)  # ρ = k / n
            solid = n * n * d2 <= k * k + k * n
    shape = (hi[1] - lo[1] + 1, hi[2] - lo[2] + 1, hi[0] - lo[0] + 1)
    return Grid(lo, erode(_full(solid, shape), thickness, ((a, -sign),)))


def cylinder(radius: int, height: int, axis: str = "y", thickness: int = 0) -> Grid:
    lo, hi = _oriented_box("+" + axis, height, radius)
    a = _AXIS_INDEX[axis]
    x, y, z = _coords(lo, hi)
    _t, u, v = _cross(a, x, y, z)
    shape = (hi[1] - lo[1] + 1, hi[2] - lo[2] + 1, hi[0] - lo[0] + 1)
    solid = _full(u * u + v * v <= radius * radius + radius, shape)
    return Grid(lo, erode(solid, thickness, ((a, -1), (a, 1))))


def _inside_polygon(points: tuple[tuple[int, int], ...], px: np.ndarray, pz: np.ndarray) -> np.ndarray:
    """Even-odd rule with the boundary included, exact in integers; px/pz broadcast."""
    inside = np.zeros(np.broadcast(px, pz).shape, dtype=bool)
    on_edge = np.zeros_like(inside)
    n = len(points)
    for k in range(n):
        x1, z1 = points[k]
        x2, z2 = points[(k + 1) % n]
        cross = (x2 - x1) * (pz - z1) - (z2 - z1) * (px - x1)
        within = (
            (np.minimum(x1, x2) <= px)
            & (px <= np.maximum(x1, x2))
            & (np.minimum(z1, z2) <= pz)
            & (pz <= np.maximum(z1, z2))
        )
        on_edge |= (cross == 0) & within
        # ray towards +x: the edge straddles pz (half-open), and the crossing is right of px
        if z1 == z2:
            continue
        straddle = (z1 > pz) != (z2 > pz)
        # crossing x = x1 + (pz − z1)(x2 − x1)/(z2 − z1) > px, multiplied through by (z2 − z1)
        lhs = (px - x1) * (z2 - z1)
        rhs = (pz - z1) * (x2 - x1)
        right = np.where(z2 > z1, rhs > lhs, rhs < lhs)
        inside ^= straddle & right
    return inside | on_edge


def polygon_columns(points: tuple[tuple[int, int], ...]) -> np.ndarray:
    """The (x, z) columns of a polygon as a boolean grid [z, x] over its bounding box."""
    (x0, _, z0), (x1, _, z1) = polygon_box(points, 0, 1)
    px = np.arange(x0, x1 + 1, dtype=np.int64)[None, :]
    pz = np.arange(z0, z1 + 1, dtype=np.int64)[:, None]
    cols = _inside_polygon(points, px, pz)
    from mcb_common.geometry import Vec3

    for k in range(len(points)):
        a, b = points[k], points[(k + 1) % len(points)]
        line = shapes.line_cells(Vec3(a[0], 0, a[1]), Vec3(b[0], 0, b[1]))
        cols[line[:, 2] - z0, line[:, 0] - x0] = True
    return cols


def polygon(points: tuple[tuple[int, int], ...], y: int, height: int, thickness: int = 0) -> Grid:
    lo, hi = polygon_box(points, y, height)
    cols = polygon_columns(points)
    solid = np.broadcast_to(cols[None, :, :], (height, *cols.shape)).copy()
    return Grid(lo, erode(solid, thickness, ((1, -1), (1, 1))))
