"""``paste``: a library asset (schematic import) or a defined part placed at ``at``, turned
``rotation`` quarter turns clockwise seen from above about ``at`` (sources.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from mcb_common.geometry import Box, Vec3
from mcb_common.recipe_schema import ASSET_ID_PATTERN, PART_ID_PATTERN

from .. import connect, sources
from ..build import pack
from ..grammar import bad, kind_of
from .base import BlockText, Shape

if TYPE_CHECKING:
    from ..build import Blocks, Build
    from ..grammar import Parser
    from ..placement import Frame, Placement
    from .base import Placer

_ASSET_ID = re.compile(ASSET_ID_PATTERN)
_PART_ID = re.compile(PART_ID_PATTERN)


@dataclass(frozen=True, slots=True)
class PasteOp(Shape):
    """A library asset (``asset``) or a part (``part``) placed at ``at``, turned ``rotation``
    quarter turns clockwise seen from above about ``at``."""

    TYPES = ("paste",)
    NAME = "paste"
    path: str
    asset: str | None
    part: str | None
    at: Vec3
    rotation: int  # quarter turns 0..3

    @classmethod
    def parse(cls, p: Parser, kind: str, obj: dict[str, Any], path: str, depth: int) -> PasteOp:
        has = [k for k in ("asset", "part") if k in obj]
        if len(has) != 1:
            raise bad(
                f"{path}.asset" if not has else f"{path}.part",
                'missing; a paste needs "asset" (a library id, see asset_list) or "part" (a part id)'
                if not has
                else 'a paste takes either "asset" or "part", not both',
            )
        src = obj[has[0]]
        pattern = _ASSET_ID if has[0] == "asset" else _PART_ID
        if not isinstance(src, str) or not pattern.match(src):
            raise bad(
                f"{path}.{has[0]}",
                f"must be {'an asset id like tower or farm.nbt' if has[0] == 'asset' else 'a part id like pt_0123abcd4567'}, "
                f"got {kind_of(src)}",
            )
        turns = p.quarter_turns(obj.get("rotation", 0), f"{path}.rotation")
        at = p.vec(obj["at"], f"{path}.at")
        return cls(path, src if has[0] == "asset" else None, src if has[0] == "part" else None, at, turns)

    def to_json(self, block: BlockText) -> dict[str, Any]:
        src = {"asset": self.asset} if self.asset is not None else {"part": self.part}
        return {"type": "paste", **src, "at": self.at.as_dict(), "rotation": self.rotation * 90}

    def check_blocks(self, blocks: Blocks) -> None:
        pass  # its states come from the source, checked when it is loaded

    def place(self, frame: Frame, copies: tuple[int, ...], placer: Placer) -> Placement:
        from ..placement import Placement

        src = placer.sources.load(self)
        flipped, k = frame.orientation()
        # states: the frame's map after the paste's own turn, m · R^r
        kk = (k - self.rotation) % 4 if flipped else (k + self.rotation) % 4
        remap_src = np.array(
            [placer.blocks.index(st, flipped, kk) | connect.PIN_ALL << connect.PIN_SHIFT for st in src.palette],
            dtype=np.uint32,
        )  # pasted: kept as saved
        cells = sources.turn_cells(src.cells, self.rotation)
        cells += np.array([self.at.x, self.at.y, self.at.z], dtype=np.int64)
        return Placement(self, frame, copies, (), 0, (cells, remap_src[src.states]))

    def local_bounds(self, p: Placement) -> Box:
        assert p.pasted is not None
        cells = p.pasted[0]
        lo, hi = cells.min(axis=0), cells.max(axis=0)
        return Box(Vec3(*map(int, lo)), Vec3(*map(int, hi)))

    def count(self, p: Placement) -> int:
        assert p.pasted is not None
        return len(p.pasted[1])

    def cells(self, p: Placement) -> np.ndarray:
        assert p.pasted is not None
        return p.pasted[0]

    def write(self, p: Placement, build: Build) -> tuple[np.ndarray, np.ndarray]:
        assert p.pasted is not None
        return pack(p.cells()), p.pasted[1]
