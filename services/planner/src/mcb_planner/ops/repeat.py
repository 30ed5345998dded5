"""``repeat``: ``count`` copies of ``operations``, copy i shifted by i × offset."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcb_common.geometry import Vec3
from mcb_common.recipe_schema import MAX_REPEAT_COUNT

from .base import BlockText, Container, Op, Shape

if TYPE_CHECKING:
    from ..grammar import Parser
    from ..placement import Frame


@dataclass(frozen=True, slots=True)
class RepeatOp(Container):
    TYPES = ("repeat",)
    path: str
    count: int
    offset: Vec3
    operations: tuple[Op, ...]

    @classmethod
    def parse(cls, p: Parser, kind: str, obj: dict[str, Any], path: str, depth: int) -> RepeatOp:
        count = p.int(obj["count"], f"{path}.count", 1, MAX_REPEAT_COUNT)
        offset = p.vec(obj["offset"], f"{path}.offset")
        inner = p.children(kind, obj, path, depth)
        return cls(path, count, offset, inner)

    def to_json(self, block: BlockText) -> dict[str, Any]:
        return {
            "type": "repeat",
            "count": self.count,
            "offset": self.offset.as_dict(),
            "operations": [o.to_json(block) for o in self.operations],
        }

    def expanded_count(self) -> int:
        return self.count * Container.expanded_count(self)

    def expand(self, frame: Frame, copies: tuple[int, ...]) -> Iterator[tuple[Shape, Frame, tuple[int, ...]]]:
        for i in range(self.count):
            yield from Container.expand(self, frame.shifted(self.offset.scaled(i)), (*copies, i))
