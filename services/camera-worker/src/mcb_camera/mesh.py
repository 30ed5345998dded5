"""Blocks -> the faces worth drawing (face culling, vectorised with numpy; no Python loop over
blocks).

Input: a palette and a ``uint16`` index array shaped ``(sy, sz, sx)`` (the world protocol's
YZX order). A face is kept when its block has geometry and the neighbour across that face is
not an opaque full cube; a translucent block (glass, water, leaves, ice) also drops the faces
it shares with the same block, so a glass wall or a lake shows its outer skin only. Faces on
the edge of the region are kept (the region is cut open, not sealed).

Output: one row per face, ``float32`` columns ``lo.xyz, hi.xyz, dir, r, g, b, a`` with
coordinates relative to the region's minimum corner; ``dir`` is 0..5 = +x, -x, +y, -y, +z, -z.
The GPU expands each row into a quad (instanced drawing, gl.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .colours import luts

# (axis in (y, z, x) array order, step, dir id)
DIRS = [(2, +1, 0), (2, -1, 1), (0, +1, 2), (0, -1, 3), (1, +1, 4), (1, -1, 5)]
COLS = 11


@dataclass
class Mesh:
    opaque: np.ndarray       # (n, 11) float32
    translucent: np.ndarray  # (m, 11) float32
    size: tuple[int, int, int]  # (sx, sy, sz)

    @property
    def faces(self) -> int:
        return len(self.opaque) + len(self.translucent)


def _neighbour(a: np.ndarray, axis: int, step: int, fill) -> np.ndarray:
    """``out[p] = a[p + step along axis]``, ``fill`` outside."""
    out = np.full_like(a, fill)
    src = [slice(None)] * 3
    dst = [slice(None)] * 3
    if step > 0:
        src[axis], dst[axis] = slice(1, None), slice(None, -1)
    else:
        src[axis], dst[axis] = slice(None, -1), slice(1, None)
    out[tuple(dst)] = a[tuple(src)]
    return out


def build(palette: list[str], indices: np.ndarray) -> Mesh:
    L = luts(palette)
    idx = indices.astype(np.intp, copy=False)
    draw = L.draw[idx]
    opaque = L.opaque[idx]
    trans = L.translucent[idx]
    group = L.group[idx]
    rows_o: list[np.ndarray] = []
    rows_t: list[np.ndarray] = []
    for axis, step, d in DIRS:
        n_opaque = _neighbour(opaque, axis, step, False)
        n_group = _neighbour(group, axis, step, 0)
        vis = draw & ~n_opaque & ~(trans & (n_group == group))
        ys, zs, xs = np.nonzero(vis)
        if len(xs) == 0:
            continue
        pal = idx[ys, zs, xs]
        base = np.stack([xs, ys, zs], axis=1).astype(np.float32)
        out = np.empty((len(xs), COLS), np.float32)
        out[:, 0:3] = base + L.lo[pal]
        out[:, 3:6] = base + L.hi[pal]
        out[:, 6] = d
        out[:, 7:11] = (L.top if d == 2 else L.side)[pal]
        t = L.translucent[pal]
        rows_o.append(out[~t])
        rows_t.append(out[t])
    sy, sz, sx = indices.shape
    empty = np.zeros((0, COLS), np.float32)
    return Mesh(np.concatenate(rows_o) if rows_o else empty,
                np.concatenate(rows_t) if rows_t else empty, (sx, sy, sz))
