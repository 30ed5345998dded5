"""``foundation``: its operations as usual, then every column under their lowest cell filled
with ``block`` down to the ground (the first non-air position), at most ``max_depth`` blocks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from mcb_common.geometry import Box, Vec3
from mcb_common.recipe_schema import MAX_FOUNDATION_DEPTH

from ..build import MASK26, XZ_OFF, budget, pack
from ..grammar import bad
from .base import BlockText, Container, Op, Shape

if TYPE_CHECKING:
    from ..build import Build
    from ..grammar import Parser
    from ..placement import Frame, Placement
    from .base import Placer


@dataclass(frozen=True, slots=True)
class FoundationOp(Container, Shape):
    """``operations`` as usual, then every column under their lowest cell filled with ``block``
    down to the ground (the first non-air position), at most ``max_depth`` blocks."""

    TYPES = ("foundation",)
    NAME = "foundation"
    reads_world = True
    path: str
    block: str
    max_depth: int
    operations: tuple[Op, ...]

    @classmethod
    def parse(cls, p: Parser, kind: str, obj: dict[str, Any], path: str, depth: int) -> FoundationOp:
        inner = p.children(kind, obj, path, depth)
        for op in (o for top in inner for o in top.walk()):
            if isinstance(op, Shape) and op.reads_world:
                raise bad(f"{op.path}.type", f"a foundation stands under shapes; {op.NAME} cannot be inside one")
        return cls(
            path,
            p.block(obj["block"], f"{path}.block"),
            p.int(obj.get("max_depth", 64), f"{path}.max_depth", 1, MAX_FOUNDATION_DEPTH),
            inner,
        )

    def to_json(self, block: BlockText) -> dict[str, Any]:
        return {
            "type": "foundation",
            "block": block(self.block),
            "max_depth": self.max_depth,
            "operations": [o.to_json(block) for o in self.operations],
        }

    def expanded_count(self) -> int:
        return Container.expanded_count(self) + 1

    def shapes(self) -> Iterator[Shape]:
        yield from Container.shapes(self)
        yield self

    def expand(self, frame: Frame, copies: tuple[int, ...]) -> Iterator[tuple[Shape, Frame, tuple[int, ...]]]:
        yield from Container.expand(self, frame, copies)
        yield self, frame, copies  # it stands under the placements just expanded

    def place(self, frame: Frame, copies: tuple[int, ...], placer: Placer) -> Placement:
        from ..placement import Placement

        opts, salt = placer.blocks.options(self.block, frame)
        n_children = self.expanded_count() - 1
        return Placement(
            self, frame, copies, opts, salt, children=tuple(placer.placements[-n_children:]), floor=placer.floor
        )

    def world_bounds(self, p: Placement) -> Box:
        """Everything it may fill or read: under its children, down to max_depth."""
        bs = [c.bounds() for c in p.children]
        lo_y = min(b.min.y for b in bs)
        top = max(max(b.max.y for b in bs) - 1, lo_y - 1)
        bottom = max(p.floor, lo_y - self.max_depth)
        return Box(
            Vec3(min(b.min.x for b in bs), min(bottom, top), min(b.min.z for b in bs)),
            Vec3(max(b.max.x for b in bs), max(bottom, top), max(b.max.z for b in bs)),
        )

    def count(self, p: Placement) -> int:
        return self.world_bounds(p).volume

    def write(self, p: Placement, build: Build) -> tuple[np.ndarray, np.ndarray]:
        keys = self._fill(p, build)
        return keys, build.choose(keys, p)

    def _fill(self, p: Placement, build: Build) -> np.ndarray:
        cells = np.concatenate([c.cells() for c in p.children])
        col = (cells[:, 2] + XZ_OFF) << 26 | (cells[:, 0] + XZ_OFF)
        order = np.lexsort((cells[:, 1], col))
        col, ys = col[order], cells[order, 1]
        starts = np.nonzero(np.concatenate(([True], col[1:] != col[:-1])))[0]
        col, bottom = col[starts], ys[starts]  # lowest cell per column
        xs = (col & MASK26) - XZ_OFF
        zs = (col >> 26) - XZ_OFF
        box = p.bounds()
        if box.min.y >= int(bottom.min()):
            return np.empty(0, dtype=np.int64)
        cur = build.current(p, box)  # may add the world's states to the table: read before is_air()
        solid = ~build.blocks.is_air()[cur].reshape(box.size.y, box.size.z, box.size.x)
        column = solid[:, zs - box.min.z, xs - box.min.x]  # (y, column)
        yy = np.arange(box.min.y, box.max.y + 1, dtype=np.int64)[:, None]
        lowest = np.maximum(bottom - self.max_depth, p.floor)  # per column: the deepest it may fill
        window = (yy < bottom[None, :]) & (yy >= lowest[None, :])
        cand = column & window
        found = cand.any(axis=0)
        lost = (bottom > p.floor) & ~found  # a column standing on the floor needs nothing
        if lost.any():
            j = int(np.nonzero(lost)[0][0])
            x, z, b = int(xs[j]), int(zs[j]), int(bottom[j])
            raise budget(
                f"{p.where()}: no ground under x {x} z {z} within {b - int(lowest[j])} blocks "
                f"below y {b} (max_depth {self.max_depth}, lowest y {int(lowest[j])}) — raise "
                "max_depth or build lower",
                "foundation_depth",
                b - int(lowest[j]),
                self.max_depth,
                path=self.path,
                x=x,
                z=z,
                columns=int(lost.sum()),
            )
        ground = box.min.y + (len(yy) - 1 - np.argmax(cand[::-1], axis=0))
        fill = (yy > ground[None, :]) & window & ~column
        iy, jc = np.nonzero(fill)
        return pack(np.stack([xs[jc], iy + box.min.y, zs[jc]], axis=1).astype(np.int64))
