"""``box``: every cell with min ≤ pos ≤ max; hollow: only the six faces (shapes.box_cells)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from mcb_common.geometry import Box, Vec3

from .. import furniture, shapes
from ..grammar import boolean
from .base import BlockText, Shape

if TYPE_CHECKING:
    from ..grammar import Parser
    from ..placement import Placement


@dataclass(frozen=True, slots=True)
class BoxOp(Shape):
    TYPES = ("box",)
    NAME = "box"
    path: str
    min: Vec3
    max: Vec3
    block: str
    hollow: bool

    @classmethod
    def parse(cls, p: Parser, kind: str, obj: dict[str, Any], path: str, depth: int) -> BoxOp:
        lo, hi = p.corners(obj, path)
        block = p.block(obj["block"], f"{path}.block")
        if "block_entity" in obj:  # furniture: carried as the full state text (mcb_common.blockentity)
            block = furniture.attach(block, obj["block_entity"], f"{path}.block_entity")
        return cls(path, lo, hi, block, boolean(obj.get("hollow", False), f"{path}.hollow"))

    def to_json(self, block: BlockText) -> dict[str, Any]:
        return {
            "type": "box",
            "min": self.min.as_dict(),
            "max": self.max.as_dict(),
            "block": block(self.block),
            "hollow": self.hollow,
        }

    def local_bounds(self, p: Placement) -> Box:
        return Box(self.min, self.max)

    def count(self, p: Placement) -> int:
        return shapes.box_count(self.min, self.max, self.hollow)

    def cells(self, p: Placement) -> np.ndarray:
        return shapes.box_cells(self.min, self.max, self.hollow)
