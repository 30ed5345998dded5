"""``cylinder``: a vertical cylinder from center.y up ``height`` blocks (shapes.cylinder_cells);
one with ``axis`` or ``thickness`` is a solid (solid.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from mcb_common.geometry import Box, Vec3
from mcb_common.recipe_schema import MAX_HEIGHT, MAX_RADIUS

from .. import shapes
from ..grammar import boolean
from .base import BlockText, Shape
from .solid import SolidOp

if TYPE_CHECKING:
    from ..grammar import Parser
    from ..placement import Placement


@dataclass(frozen=True, slots=True)
class CylinderOp(Shape):
    TYPES = ("cylinder",)
    NAME = "cylinder"
    path: str
    center: Vec3
    radius: int
    height: int
    block: str
    hollow: bool

    @classmethod
    def parse(cls, p: Parser, kind: str, obj: dict[str, Any], path: str, depth: int) -> CylinderOp | SolidOp:
        if "axis" in obj or "thickness" in obj:
            return SolidOp.parse(p, kind, obj, path, depth)
        return cls(
            path,
            p.vec(obj["center"], f"{path}.center"),
            p.int(obj["radius"], f"{path}.radius", 0, MAX_RADIUS),
            p.int(obj["height"], f"{path}.height", 1, MAX_HEIGHT),
            p.block(obj["block"], f"{path}.block"),
            boolean(obj.get("hollow", False), f"{path}.hollow"),
        )

    def to_json(self, block: BlockText) -> dict[str, Any]:
        return {
            "type": "cylinder",
            "center": self.center.as_dict(),
            "radius": self.radius,
            "height": self.height,
            "block": block(self.block),
            "hollow": self.hollow,
        }

    def local_bounds(self, p: Placement) -> Box:
        c, r = self.center, self.radius
        return Box(Vec3(c.x - r, c.y, c.z - r), Vec3(c.x + r, c.y + self.height - 1, c.z + r))

    def count(self, p: Placement) -> int:
        return shapes.cylinder_count(self.radius, self.height, self.hollow)

    def cells(self, p: Placement) -> np.ndarray:
        return shapes.cylinder_cells(self.center, self.radius, self.height, self.hollow)
