"""``line``: a 26-connected line of blocks including both ends (shapes.line_cells)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from mcb_common.geometry import Box, Vec3

from .. import shapes
from .base import BlockText, Shape

if TYPE_CHECKING:
    from ..grammar import Parser
    from ..placement import Placement


@dataclass(frozen=True, slots=True)
class LineOp(Shape):
    TYPES = ("line",)
    NAME = "line"
    path: str
    start: Vec3  # JSON "from"
    end: Vec3  # JSON "to"
    block: str

    @classmethod
    def parse(cls, p: Parser, kind: str, obj: dict[str, Any], path: str, depth: int) -> LineOp:
        return cls(
            path,
            p.vec(obj["from"], f"{path}.from"),
            p.vec(obj["to"], f"{path}.to"),
            p.block(obj["block"], f"{path}.block"),
        )

    def to_json(self, block: BlockText) -> dict[str, Any]:
        return {"type": "line", "from": self.start.as_dict(), "to": self.end.as_dict(), "block": block(self.block)}

    def local_bounds(self, p: Placement) -> Box:
        return Box.of(self.start, self.end)

    def count(self, p: Placement) -> int:
        return shapes.line_count(self.start, self.end)

    def cells(self, p: Placement) -> np.ndarray:
        return shapes.line_cells(self.start, self.end)
