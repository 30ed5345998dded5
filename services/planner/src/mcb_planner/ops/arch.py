"""``arch``: a half ring (or half disc when filled) in a vertical plane (shapes.arch_cells)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from mcb_common.geometry import Box, Vec3
from mcb_common.recipe_schema import MAX_ARCH_DEPTH, MAX_RADIUS

from .. import shapes
from ..grammar import bad, boolean, kind_of
from .base import BlockText, Shape

if TYPE_CHECKING:
    from ..grammar import Parser
    from ..placement import Placement


@dataclass(frozen=True, slots=True)
class ArchOp(Shape):
    """A half ring (or half disc when ``filled``) standing in a vertical plane.

    ``axis`` is the horizontal axis the arch spans along; ``depth`` layers go +1 along the
    other horizontal axis from ``center``.
    """

    TYPES = ("arch",)
    NAME = "arch"
    path: str
    center: Vec3
    radius: int
    width: int
    axis: str  # "x" | "z"
    depth: int
    filled: bool
    block: str

    @classmethod
    def parse(cls, p: Parser, kind: str, obj: dict[str, Any], path: str, depth: int) -> ArchOp:
        axis = obj["axis"]
        if axis not in ("x", "z"):
            raise bad(f"{path}.axis", f'must be "x" or "z" (the axis the arch spans along), got {kind_of(axis)}')
        return cls(
            path,
            p.vec(obj["center"], f"{path}.center"),
            p.int(obj["radius"], f"{path}.radius", 0, MAX_RADIUS),
            p.int(obj.get("width", 1), f"{path}.width", 1, MAX_RADIUS),
            axis,
            p.int(obj.get("depth", 1), f"{path}.depth", 1, MAX_ARCH_DEPTH),
            boolean(obj.get("filled", False), f"{path}.filled"),
            p.block(obj["block"], f"{path}.block"),
        )

    def to_json(self, block: BlockText) -> dict[str, Any]:
        return {
            "type": "arch",
            "center": self.center.as_dict(),
            "radius": self.radius,
            "width": self.width,
            "axis": self.axis,
            "depth": self.depth,
            "filled": self.filled,
            "block": block(self.block),
        }

    def local_bounds(self, p: Placement) -> Box:
        c, r, dp = self.center, self.radius, self.depth - 1
        if self.axis == "x":
            return Box(Vec3(c.x - r, c.y, c.z), Vec3(c.x + r, c.y + r, c.z + dp))
        return Box(Vec3(c.x, c.y, c.z - r), Vec3(c.x + dp, c.y + r, c.z + r))

    def count(self, p: Placement) -> int:
        return shapes.arch_count(self.radius, self.width, self.depth, self.filled)

    def cells(self, p: Placement) -> np.ndarray:
        return shapes.arch_cells(self.center, self.radius, self.width, self.axis, self.depth, self.filled)
