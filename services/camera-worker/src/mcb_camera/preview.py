"""Plan previews (camera_capture plan_id): the world as it would be after a prepared plan.

The journal answers the plan's positions and desired states inside the drawn box (``PlanEntries``,
scoped to the caller's project); ``overlay`` lays them over the blocks the scene read from the world
host, in a copy: the snapshot (and its cache) keeps the world as it is, and nothing is written.
``side_by_side`` joins the before and after pictures of ``compare: true`` into one image.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mcb.journal.v1 import journal_pb2
from mcb_common import blockentity

from .scene import Box


@dataclass
class PlanOverlay:
    """A plan's entries inside a scene box (the journal's PlanEntriesResponse, decoded)."""

    plan_id: str
    plan_hash: str
    palette: list[str]
    xyz: np.ndarray  # (n, 3) int
    desired: np.ndarray  # (n,) palette index
    total: int  # entries in the whole plan

    @classmethod
    def from_pb(cls, resp: journal_pb2.PlanEntriesResponse) -> PlanOverlay:
        if len(resp.xyz) != 3 * len(resp.desired):
            raise ValueError(f"plan entries disagree: {len(resp.xyz)} coordinates, {len(resp.desired)} states")
        xyz = np.asarray(list(resp.xyz), dtype=np.int64).reshape(-1, 3)
        desired = np.asarray(list(resp.desired), dtype=np.int64).reshape(-1)
        return cls(resp.plan_id, resp.plan_hash, list(resp.palette), xyz, desired, int(resp.total))


def overlay(palette: list[str], indices: np.ndarray, box: Box, plan: PlanOverlay) -> tuple[list[str], np.ndarray, int]:
    """(palette, indices, entries drawn): a copy of the scene ``indices`` ((sy, sz, sx) over ``box``)
    with every plan entry inside ``box`` set to its desired state (block-entity data stripped:
    the renderer draws block states). Entries outside ``box`` are not drawn."""
    x0, y0, z0, x1, y1, z1 = box
    out_palette = list(palette)
    index_of = {s: i for i, s in enumerate(out_palette)}
    lut = np.empty(len(plan.palette), np.int64)
    for i, full in enumerate(plan.palette):
        state = blockentity.strip(full)
        g = index_of.get(state)
        if g is None:
            g = index_of[state] = len(out_palette)
            out_palette.append(state)
        lut[i] = g
    if len(out_palette) > 65535:
        raise ValueError("the scene and the plan hold more than 65535 distinct states")
    xyz = plan.xyz
    inside = ((xyz >= (x0, y0, z0)) & (xyz <= (x1, y1, z1))).all(axis=1) if len(xyz) else np.zeros(0, bool)
    p, d = xyz[inside], plan.desired[inside]
    out = indices.astype(np.uint16, copy=True)
    out[p[:, 1] - y0, p[:, 2] - z0, p[:, 0] - x0] = lut[d].astype(np.uint16)
    return out_palette, out, int(inside.sum())


def side_by_side(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """One (h, 2w, 3) image: ``before`` on the left, ``after`` on the right."""
    if before.shape != after.shape:
        raise ValueError(f"before {before.shape} and after {after.shape} differ in size")
    return np.concatenate([before, after], axis=1)
