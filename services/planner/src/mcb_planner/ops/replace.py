"""``replace``: within min..max, positions whose current state (the world as the earlier
operations leave it) matches ``from`` become ``to``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from mcb_common.errors import McbError
from mcb_common.geometry import Box, Vec3
from mcb_common.transforms import transform as transform_state

from .. import connect, shapes, sources
from ..build import pack
from .base import BlockText, Shape

if TYPE_CHECKING:
    from ..build import Blocks, Build
    from ..grammar import Parser
    from ..placement import Placement

# with kept properties: the world's own (already connected) states stay as they are
_KEPT = connect.PIN_ALL << connect.PIN_SHIFT


@dataclass(frozen=True, slots=True)
class ReplaceOp(Shape):
    """Within ``min``..``max``: positions whose current state matches ``filter`` become ``to``.

    ``filter`` holds the entries as written (``"!..."`` negates, ``"*"`` is every non-air
    state); they are checked against the registry by the compiler. ``keep`` says, per choice
    of ``to`` (one for a block, one per palette choice), whether it was written without
    ``[properties]`` and so keeps the source's matching properties.
    """

    TYPES = ("replace",)
    NAME = "replace"
    reads_world_states = True
    reads_world = True
    path: str
    min: Vec3
    max: Vec3
    filter: tuple[str, ...]
    to: str
    keep: tuple[bool, ...]

    @classmethod
    def parse(cls, p: Parser, kind: str, obj: dict[str, Any], path: str, depth: int) -> ReplaceOp:
        lo, hi = p.corners(obj, path)
        flt = p.filter(obj["from"], f"{path}.from")
        to = p.block(obj["to"], f"{path}.to")
        texts = [b for b, _ in p.palette[to[1:]]] if to.startswith("$") else [to]
        return cls(path, lo, hi, flt, to, tuple("[" not in t for t in texts))

    def to_json(self, block: BlockText) -> dict[str, Any]:
        return {
            "type": "replace",
            "min": self.min.as_dict(),
            "max": self.max.as_dict(),
            "from": list(self.filter),
            "to": block(self.to),
            "keep_properties": list(self.keep),
        }

    @property
    def block_text(self) -> str:
        return self.to

    def check_blocks(self, blocks: Blocks) -> None:
        blocks.filters[self.path] = sources.parse_filter(self.filter, blocks.registry, f"{self.path}.from")
        blocks.add(self.to, f"{self.path}.to")

    def local_bounds(self, p: Placement) -> Box:
        return Box(self.min, self.max)

    def count(self, p: Placement) -> int:
        return shapes.box_count(self.min, self.max, False)

    def cells(self, p: Placement) -> np.ndarray:
        return shapes.box_cells(self.min, self.max, False)

    def write(self, p: Placement, build: Build) -> tuple[np.ndarray, np.ndarray]:
        blocks = build.blocks
        box = p.bounds()
        wmap, widx = build.read(p, box)
        keys_ = pack(shapes.box_cells(box.min, box.max, False))  # YZX, like region_read
        cur = build.as_left(keys_, wmap[widx])  # positions earlier operations wrote: those states
        flipped, kq = p.frame.orientation()
        inv = (flipped, kq if flipped else (4 - kq) % 4)  # world → the recipe's local frame
        names = list(blocks.table)
        if self.to.startswith("$"):
            choices = blocks.palette_opts[self.to[1:]]
            raws = [t for t, _ in blocks.raw_palette[self.to[1:]]]
        else:
            choices = ((blocks.canon[self.to], 1),)
            raws = [self.to]
        registry = blocks.registry
        uniq, which = np.unique(cur, return_inverse=True)
        fixed = np.full(len(uniq), -1, dtype=np.int64)
        weighted: list[tuple[int, tuple[tuple[int, int], ...]]] = []
        for j, u in enumerate(uniq.tolist()):
            st = names[u]
            try:
                local = (
                    st
                    if inv == (False, 0)
                    else transform_state(st, registry, mirror_axis="x" if inv[0] else None, quarter_turns=inv[1])
                )
                if not sources.matches(blocks.filters[self.path], local):
                    continue
            except McbError:
                continue  # not a state of this registry
            opts = tuple(
                (
                    blocks.index(sources.keep_properties(local, c, registry) if keep else c, flipped, kq)
                    | (_KEPT if keep else blocks.pin(raw, flipped, kq)),
                    w,
                )
                for (c, w), keep, raw in zip(choices, self.keep, raws, strict=True)
            )
            if len(opts) == 1:
                fixed[j] = opts[0][0]
            else:
                weighted.append((j, opts))
        per = fixed[which]
        sel = per >= 0
        out_k = [keys_[sel]]
        out_s = [per[sel].astype(np.uint32)]
        for j, opts in weighted:
            m = which == j
            out_k.append(keys_[m])
            out_s.append(build.choose(keys_[m], p, opts))
        k_ = np.concatenate(out_k)
        if len(k_) == 0:
            build.unmatched.append(p.where())
        return k_, np.concatenate(out_s)
