"""What every recipe operation is (``Op``), and what a shape adds (``Shape``).

As WorldEdit's ``Region`` (one class per shape: cuboid, cylinder, ellipsoid, polygon …, each
knowing its own minimum/maximum point, volume and the positions it covers), each recipe shape
is one class that knows its grammar (``parse``, ``to_json``), its bounds, its exact count and
its cells; containers (``repeat``, ``transform``, ``foundation``) know how they expand. The
compiler never asks what type a shape is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from mcb_common.geometry import Box

if TYPE_CHECKING:
    from ..build import Blocks, Build
    from ..grammar import Parser
    from ..placement import Frame, Placement
    from ..sources import Sources

BlockText = Callable[[str], str]


class Op:
    """One recipe operation: a frozen dataclass with ``path`` (its JSON path, for errors)."""

    __slots__ = ()
    TYPES: ClassVar[tuple[str, ...]]  # the JSON "type" values it parses (recipe_schema names them)
    path: str

    @classmethod
    def parse(cls, p: Parser, kind: str, obj: dict[str, Any], path: str, depth: int) -> Op:
        """``obj`` has exactly the schema's keys for ``kind`` (checked by the parser)."""
        raise NotImplementedError

    def to_json(self, block: BlockText) -> dict[str, Any]:
        """The normalised JSON (defaults filled in, expressions evaluated; ``block`` maps block texts)."""
        raise NotImplementedError

    def expanded_count(self) -> int:
        """Shapes it produces once every repeat is expanded (exact, without expanding)."""
        return 1

    def walk(self) -> Iterator[Op]:
        """This operation and every one nested in it, in order."""
        yield self

    def shapes(self) -> Iterator[Shape]:
        """The shapes it holds, in recipe order (a foundation after its contents)."""
        raise NotImplementedError

    def expand(self, frame: Frame, copies: tuple[int, ...]) -> Iterator[tuple[Shape, Frame, tuple[int, ...]]]:
        """Every shape with its frame and repeat copy indexes, in build order."""
        raise NotImplementedError


class Container(Op):
    """An operation holding ``operations`` (repeat, transform, foundation)."""

    __slots__ = ()
    operations: tuple[Op, ...]

    def expanded_count(self) -> int:
        return sum(o.expanded_count() for o in self.operations)

    def walk(self) -> Iterator[Op]:
        yield self
        for o in self.operations:
            yield from o.walk()

    def shapes(self) -> Iterator[Shape]:
        for o in self.operations:
            yield from o.shapes()

    def expand(self, frame: Frame, copies: tuple[int, ...]) -> Iterator[tuple[Shape, Frame, tuple[int, ...]]]:
        for o in self.operations:
            yield from o.expand(frame, copies)


class Shape(Op):
    """An operation that writes blocks: the placement's geometry lives here."""

    __slots__ = ()
    NAME: ClassVar[str] = ""  # how messages name it
    # it writes what it finds in the world (replace): its partner halves come from its states
    reads_world_states: ClassVar[bool] = False
    # it looks at the world (replace, overlay, foundation): not allowed inside a foundation
    reads_world: ClassVar[bool] = False

    def shapes(self) -> Iterator[Shape]:
        yield self

    def expand(self, frame: Frame, copies: tuple[int, ...]) -> Iterator[tuple[Shape, Frame, tuple[int, ...]]]:
        yield self, frame, copies

    # -- blocks
    def check_blocks(self, blocks: Blocks) -> None:
        """Check the block texts it writes against the registry (before anything is placed)."""
        blocks.add(self.block_text, f"{self.path}.block")

    @property
    def block_text(self) -> str:
        return getattr(self, "block")  # noqa: B009 (every shape but paste and replace has one)

    def place(self, frame: Frame, copies: tuple[int, ...], placer: Placer) -> Placement:
        from ..placement import Placement

        opts, salt = placer.blocks.options(self.block_text, frame)
        return Placement(self, frame, copies, opts, salt)

    # -- geometry (``p`` is this shape's placement)
    def local_bounds(self, p: Placement) -> Box:
        """The box it covers in recipe coordinates (before the frame)."""
        raise NotImplementedError

    def world_bounds(self, p: Placement) -> Box:
        """What it may write or read, in world coordinates (checked against the world and area)."""
        return p.frame.box(self.local_bounds(p))

    def count(self, p: Placement) -> int:
        """Positions it examines, in closed form (the examined-positions budget)."""
        raise NotImplementedError

    def cells(self, p: Placement) -> np.ndarray:
        """Its (N, 3) int64 cells in recipe coordinates."""
        raise NotImplementedError

    def write(self, p: Placement, build: Build) -> tuple[np.ndarray, np.ndarray]:
        """Its packed keys and state indexes (default: its cells, block options chosen per position)."""
        from ..build import pack

        keys = pack(p.cells())
        return keys, build.choose(keys, p)


class Placer:
    """What placing a shape needs: the recipe's blocks, paste sources, the placements so far."""

    def __init__(self, blocks: Blocks, sources: Sources, floor: int):
        self.blocks = blocks
        self.sources = sources
        self.floor = floor  # the lowest y a foundation may fill (the world's or the area's)
        self.placements: list[Placement] = []
