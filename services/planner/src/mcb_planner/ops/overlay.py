"""``overlay``: ``depth`` layers on top of the highest non-air block of each column of
min..max (the search range; the world as earlier operations leave it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from mcb_common.geometry import Box, Vec3
from mcb_common.recipe_schema import MAX_OVERLAY_DEPTH

from ..build import pack
from .base import BlockText, Shape

if TYPE_CHECKING:
    from ..build import Build
    from ..grammar import Parser
    from ..placement import Placement


@dataclass(frozen=True, slots=True)
class OverlayOp(Shape):
    TYPES = ("overlay",)
    NAME = "overlay"
    reads_world = True
    path: str
    min: Vec3
    max: Vec3
    block: str
    depth: int

    @classmethod
    def parse(cls, p: Parser, kind: str, obj: dict[str, Any], path: str, depth: int) -> OverlayOp:
        lo, hi = p.corners(obj, path)
        return cls(
            path,
            lo,
            hi,
            p.block(obj["block"], f"{path}.block"),
            p.int(obj.get("depth", 1), f"{path}.depth", 1, MAX_OVERLAY_DEPTH),
        )

    def to_json(self, block: BlockText) -> dict[str, Any]:
        return {
            "type": "overlay",
            "min": self.min.as_dict(),
            "max": self.max.as_dict(),
            "block": block(self.block),
            "depth": self.depth,
        }

    def local_bounds(self, p: Placement) -> Box:
        return Box(self.min, Vec3(self.max.x, self.max.y + self.depth, self.max.z))

    def count(self, p: Placement) -> int:
        return (
            Box(self.min, self.max).volume + (self.max.x - self.min.x + 1) * (self.max.z - self.min.z + 1) * self.depth
        )

    def write(self, p: Placement, build: Build) -> tuple[np.ndarray, np.ndarray]:
        box = p.frame.box(Box(self.min, self.max))  # the search range
        cur = build.current(p, box)  # may add the world's states to the table: read before is_air()
        solid = ~build.blocks.is_air()[cur].reshape(box.size.y, box.size.z, box.size.x)
        has = solid.any(axis=0)
        top = box.size.y - 1 - np.argmax(solid[::-1], axis=0)  # highest non-air per column
        iz, ix = np.nonzero(has)
        cells = [
            np.stack([ix + box.min.x, top[iz, ix] + box.min.y + d, iz + box.min.z], axis=1)
            for d in range(1, self.depth + 1)
        ]
        keys = pack(np.concatenate(cells).astype(np.int64))
        return keys, build.choose(keys, p)
