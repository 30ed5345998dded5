"""Blocks -> the faces worth drawing (face culling and ambient occlusion, vectorised with numpy;
no Python loop over blocks).

Input: a palette and a ``uint16`` index array shaped ``(sy, sz, sx)`` (the world protocol's
YZX order). Two passes:

* **single boxes** (cubes, slabs, carpets, water; ``colours.luts``): a face is kept when its
  block has geometry and, for a face on the cell boundary, the neighbour across it is not an
  opaque full cube; a translucent block (glass, water, leaves, ice) also drops the faces it
  shares with the same block, so a glass wall or a lake shows its outer skin only;
* **shapes** (stairs, fences, panes, walls, doors, trapdoors, torches, plants, ...;
  ``shapes.py``): every face of the block's model, except the model's own hidden faces and
  boundary faces against an opaque full cube.

Faces on the edge of the region are kept (the region is cut open, not sealed). Each face gets
four ambient-occlusion factors (one per corner, from the three opaque cubes that touch that
corner in the layer in front of the face: the usual "smooth lighting" rule).

Output: one row per face, ``float32`` columns ``lo.xyz, hi.xyz, dir, r, g, b, a, ao0..ao3, pattern,
outline`` (``pattern``: patterns.py — planks, bricks, bark, glass frames, door panels...;
``outline``: a bit per side of the face, set where the surface does not go on in the same plane
into the neighbouring block — a silhouette, a step, a corner, a door's panel — drawn as a dark
line by gl.py, so same-material parts at different depths read apart) with
coordinates relative to the region's minimum corner; ``dir`` is 0..5 = +x, -x, +y, -y, +z, -z,
6 and 7 the two diagonal planes of a plant's cross. The GPU expands each row into a quad
(instanced drawing, gl.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import patterns
from .colours import luts

# (axis in (y, z, x) array order, step, dir id)
DIRS = [(2, +1, 0), (2, -1, 1), (0, +1, 2), (0, -1, 3), (1, +1, 4), (1, -1, 5)]
COLS = 17
# corner brightness by how many of the three touching blocks are opaque (0 -> 1.0)
AO_LEVELS = np.array([0.52, 0.68, 0.84, 1.0], np.float32)
# the face's two in-plane axes in (y, z, x) array order, matching gl.py's corner mapping
# (dir < 2: corner.x -> y, corner.y -> z; dir 2, 3: x, z; dir 4, 5: x, y)
TANGENTS = {0: (0, 1), 1: (0, 1), 2: (2, 1), 3: (2, 1), 4: (2, 0), 5: (2, 0)}


@dataclass
class Mesh:
    opaque: np.ndarray  # (n, COLS) float32, sorted by the pattern column
    translucent: np.ndarray  # (m, COLS) float32
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


def _ao(pad: np.ndarray, ys: np.ndarray, zs: np.ndarray, xs: np.ndarray, axis: int, step: int, d: int) -> np.ndarray:
    """(k, 4) corner factors for faces at (ys, zs, xs) looking along ``d``; ``pad`` is the
    opaque-cube array padded by one on every side."""
    q = [ys + 1, zs + 1, xs + 1]
    q[axis] = q[axis] + step
    u, v = TANGENTS[d]
    out = np.empty((len(ys), 4), np.float32)
    for cy in (0, 1):
        for cx in (0, 1):
            su, sv = 2 * cx - 1, 2 * cy - 1
            a = list(q)
            a[u] = a[u] + su
            b = list(q)
            b[v] = b[v] + sv
            c = list(a)
            c[v] = c[v] + sv
            s1 = pad[a[0], a[1], a[2]]
            s2 = pad[b[0], b[1], b[2]]
            cc = pad[c[0], c[1], c[2]]
            level = np.where(s1 & s2, 0, 3 - (s1.astype(np.int8) + s2 + cc))
            out[:, cx + 2 * cy] = AO_LEVELS[level]
    return out


def _outline(
    vis: np.ndarray, idx: np.ndarray, boxid: np.ndarray, ys: np.ndarray, zs: np.ndarray, xs: np.ndarray, d: int
) -> np.ndarray:
    """Outline bits of the visible faces at (ys, zs, xs) looking along ``d``: 1 / 2 the low /
    high side along the face's first in-plane axis (gl.py's corner.x), 4 / 8 along the second.
    A side is outlined unless the neighbour across it shows the same face (visible in ``d``,
    the same box); outside the region counts as not going on."""
    bits = np.zeros(len(xs), np.float32)
    pos = [ys, zs, xs]
    for k, ax in enumerate(TANGENTS[d]):
        for side, step in ((0, -1), (1, +1)):
            q = list(pos)
            q[ax] = pos[ax] + step
            inside = (q[ax] >= 0) & (q[ax] < vis.shape[ax])
            qc = [np.clip(c, 0, vis.shape[i] - 1) for i, c in enumerate(q)]
            goes_on = inside & vis[qc[0], qc[1], qc[2]] & (boxid[idx[qc[0], qc[1], qc[2]]] == boxid[idx[ys, zs, xs]])
            bits += np.where(goes_on, 0.0, float(1 << (2 * k + side)))
    return bits


def build(palette: list[str], indices: np.ndarray) -> Mesh:
    L = luts(palette)
    idx = indices.astype(np.intp, copy=False)
    draw = L.draw[idx]
    opaque = L.opaque[idx]
    trans = L.translucent[idx]
    group = L.group[idx]
    pad = np.pad(opaque, 1)
    # which single box each palette entry is (cube, slab top, carpet...): a face goes on into a
    # neighbour only if that neighbour is the same box (a slab's top and a cube's are not one plane)
    boxid = np.unique(np.round(np.c_[L.lo, L.hi] * 16).astype(np.int32), axis=0, return_inverse=True)[1].reshape(-1)
    rows_o: list[np.ndarray] = []
    rows_t: list[np.ndarray] = []
    n_opaque_by_dir: dict[int, np.ndarray] = {}
    for axis, step, d in DIRS:
        n_opaque = _neighbour(opaque, axis, step, False)
        n_opaque_by_dir[d] = n_opaque
        n_group = _neighbour(group, axis, step, 0)
        hidden = n_opaque | (trans & (n_group == group))
        if L.inner[:, d].any():
            hidden &= ~L.inner[idx, d]  # a slab's top is inside its cell: no neighbour hides it
        vis = draw & ~hidden
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
        out[:, 11:15] = _ao(pad, ys, zs, xs, axis, step, d)
        out[:, 15] = pat = L.pattern[pal, d]
        out[:, 16] = _outline(vis, idx, boxid, ys, zs, xs, d)
        rings = pat == patterns.RINGS
        if rings.any():
            out[rings, 7:11] = L.ring[pal[rings]]
        t = L.translucent[pal]
        rows_o.append(out[~t])
        rows_t.append(out[t])
    if L.shaped.any():
        _shapes(L, idx, n_opaque_by_dir, rows_o, rows_t)
    sy, sz, sx = indices.shape
    empty = np.zeros((0, COLS), np.float32)
    opaque = np.concatenate(rows_o) if rows_o else empty
    # sorted by pattern: gl.py draws each pattern's faces with its own program
    opaque = opaque[np.argsort(opaque[:, 15], kind="stable")]
    return Mesh(opaque, np.concatenate(rows_t) if rows_t else empty, (sx, sy, sz))


def _shapes(
    L, idx: np.ndarray, n_opaque_by_dir: dict[int, np.ndarray], rows_o: list[np.ndarray], rows_t: list[np.ndarray]
) -> None:
    ys, zs, xs = np.nonzero(L.shaped[idx])
    if len(xs) == 0:
        return
    pal = idx[ys, zs, xs]
    order = np.argsort(pal, kind="stable")
    ys, zs, xs, pal = ys[order], zs[order], xs[order], pal[order]
    against = {d: n[ys, zs, xs] for d, n in n_opaque_by_dir.items()}
    starts = np.flatnonzero(np.r_[True, pal[1:] != pal[:-1]])
    ends = np.r_[starts[1:], len(pal)]
    for s, e in zip(starts, ends, strict=True):
        p = int(pal[s])
        faces = L.models[p].faces()
        if not faces:
            continue
        base = np.stack([xs[s:e], ys[s:e], zs[s:e]], axis=1).astype(np.float32)
        colour = L.top[p] if L.translucent[p] else None
        state = L.states[p]
        for (lo, hi), d, boundary in faces:
            keep = ~against[d][s:e] if boundary else np.ones(e - s, bool)
            k = int(keep.sum())
            if k == 0:
                continue
            out = np.empty((k, COLS), np.float32)
            out[:, 0:3] = base[keep] + np.array(lo, np.float32) / 16
            out[:, 3:6] = base[keep] + np.array(hi, np.float32) / 16
            out[:, 6] = d
            out[:, 7:11] = colour if colour is not None else (L.top[p] if d in (2, 6, 7) else L.side[p])
            out[:, 11:15] = 1.0
            out[:, 15] = patterns.shape_face_pattern(state, lo, hi, d)
            out[:, 16] = 15.0 if d < 6 else 0.0  # a shape's faces are its own parts: outlined
            (rows_t if L.translucent[p] else rows_o).append(out)
