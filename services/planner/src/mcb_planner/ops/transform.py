"""``transform``: everything inside mirrored about ``anchor``, turned, then shifted (placement.Frame)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mcb_common.geometry import Vec3

from ..grammar import bad, kind_of
from .base import BlockText, Container, Op, Shape

if TYPE_CHECKING:
    from ..grammar import Parser
    from ..placement import Frame


@dataclass(frozen=True, slots=True)
class TransformOp(Container):
    """Everything inside is mirrored about ``anchor`` (if ``mirror``), then turned
    ``rotate`` quarter turns clockwise seen from above about ``anchor``, then shifted by
    ``translate``. Block states are mirrored/rotated with mcb_common.transforms."""

    TYPES = ("transform",)
    path: str
    rotate: int  # quarter turns 0..3
    mirror: str | None  # "x" | "z" | None
    anchor: Vec3
    translate: Vec3
    operations: tuple[Op, ...]

    @classmethod
    def parse(cls, p: Parser, kind: str, obj: dict[str, Any], path: str, depth: int) -> TransformOp:
        turns = p.quarter_turns(obj.get("rotate", 0), f"{path}.rotate")
        mir = obj.get("mirror")
        if "mirror" in obj and (not isinstance(mir, str) or mir not in ("x", "z")):
            raise bad(f"{path}.mirror", f'must be "x" (east ↔ west) or "z" (north ↔ south), got {kind_of(mir)}')
        for k in ("rotate", "mirror"):
            if k in obj and "anchor" not in obj:
                raise bad(
                    f"{path}.anchor",
                    f"missing; a transform with {k!r} needs the anchor position it turns or mirrors about",
                )
        anchor = p.vec(obj["anchor"], f"{path}.anchor") if "anchor" in obj else Vec3(0, 0, 0)
        translate = p.vec(obj["translate"], f"{path}.translate") if "translate" in obj else Vec3(0, 0, 0)
        inner = p.children(kind, obj, path, depth)
        return cls(path, turns, mir, anchor, translate, inner)

    def to_json(self, block: BlockText) -> dict[str, Any]:
        return {
            "type": "transform",
            "rotate": self.rotate * 90,
            "mirror": self.mirror,
            "anchor": self.anchor.as_dict(),
            "translate": self.translate.as_dict(),
            "operations": [o.to_json(block) for o in self.operations],
        }

    def expand(self, frame: Frame, copies: tuple[int, ...]) -> Iterator[tuple[Shape, Frame, tuple[int, ...]]]:
        return Container.expand(self, frame.then(self), copies)
