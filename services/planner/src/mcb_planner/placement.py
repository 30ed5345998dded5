"""Where a shape lands: a ``Frame`` (local → world) and a ``Placement`` (one shape of the recipe
after repeat/transform expansion, with its block options). A placement asks its shape for its
bounds, count and cells (ops/: one class per shape) and applies the frame."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from mcb_common.geometry import Box, Vec3

from .build import WORLD_MIN_Y

if TYPE_CHECKING:
    from .ops import Shape, TransformOp


@dataclass(frozen=True, slots=True)
class Frame:
    """Local → world: x' = a·x + b·z + t.x, y' = y + t.y, z' = c·x + d·z + t.z, where
    [[a, b], [c, d]] is one of the 8 signed permutations (quarter turns, mirrors)."""

    m: tuple[int, int, int, int] = (1, 0, 0, 1)
    t: Vec3 = Vec3(0, 0, 0)

    def point(self, p: Vec3) -> Vec3:
        a, b, c, d = self.m
        return Vec3(a * p.x + b * p.z + self.t.x, p.y + self.t.y, c * p.x + d * p.z + self.t.z)

    def box(self, b: Box) -> Box:
        """The world box of a local box."""
        return Box.of(self.point(b.min), self.point(b.max))

    def shifted(self, v: Vec3) -> Frame:
        """This frame after a local translation by ``v`` (a repeat copy)."""
        a, b, c, d = self.m
        return Frame(self.m, Vec3(self.t.x + a * v.x + b * v.z, self.t.y + v.y, self.t.z + c * v.x + d * v.z))

    def then(self, op: TransformOp) -> Frame:
        """This frame composed with a transform operation's local map G(p) = A·p + g."""

        # A = R^k · S (S = mirror x) or R^k · S_z; build A by applying the steps to the basis.
        def steps(x: int, z: int) -> tuple[int, int]:
            if op.mirror == "x":
                x = -x
            elif op.mirror == "z":
                z = -z
            for _ in range(op.rotate):
                x, z = -z, x
            return x, z

        ax, az = steps(1, 0)
        bx, bz = steps(0, 1)
        am = (ax, bx, az, bz)  # columns are the images of the x and z unit vectors
        anc = op.anchor
        # g = anchor − A·anchor + translate (y: translate only)
        gx = anc.x - (am[0] * anc.x + am[1] * anc.z) + op.translate.x
        gz = anc.z - (am[2] * anc.x + am[3] * anc.z) + op.translate.z
        a, b, c, d = self.m
        m2 = (a * am[0] + b * am[2], a * am[1] + b * am[3], c * am[0] + d * am[2], c * am[1] + d * am[3])
        return Frame(m2, self.point(Vec3(gx, op.translate.y, gz)))

    def orientation(self) -> tuple[bool, int]:
        """(mirrored in x first?, quarter turns clockwise) with m = R^k · S^mirrored."""
        a, b, c, d = self.m
        flipped = a * d - b * c == -1
        if flipped:  # m · S: negate the first column
            a, c = -a, -c
        k = {(1, 0, 0, 1): 0, (0, -1, 1, 0): 1, (-1, 0, 0, -1): 2, (0, 1, -1, 0): 3}[(a, b, c, d)]
        return flipped, k

    def is_identity(self) -> bool:
        return self.m == (1, 0, 0, 1) and self.t == Vec3(0, 0, 0)

    def cells(self, local: np.ndarray) -> np.ndarray:
        if self.m == (1, 0, 0, 1):
            if self.t == Vec3(0, 0, 0):
                return local
            return local + np.array([self.t.x, self.t.y, self.t.z], dtype=np.int64)
        a, b, c, d = self.m
        out = np.empty_like(local)
        out[:, 0] = a * local[:, 0] + b * local[:, 2] + self.t.x
        out[:, 1] = local[:, 1] + self.t.y
        out[:, 2] = c * local[:, 0] + d * local[:, 2] + self.t.z
        return out


IDENTITY = Frame()


@dataclass(frozen=True, slots=True)
class Placement:
    """One shape of the recipe after repeat/transform expansion, placed by ``frame``."""

    shape: Shape
    frame: Frame
    copies: tuple[int, ...]  # the copy index in each enclosing repeat, outermost first
    options: tuple[tuple[int, int], ...]  # (state index, weight); one entry = a fixed state
    salt: int  # palette name hash (weighted choices differ per palette entry)
    # paste: (cells relative to the frame, (N, 3) int64; state index per cell, uint32)
    pasted: tuple[np.ndarray, np.ndarray] | None = None
    children: tuple[Placement, ...] = ()  # foundation: the placements it stands under
    floor: int = WORLD_MIN_Y  # foundation: the lowest y it may fill (the world's or the area's)

    @property
    def state(self) -> int:
        return self.options[0][0]

    def bounds(self) -> Box:
        """Everything the placement may write or read, in world coordinates."""
        return self.shape.world_bounds(self)

    def count(self) -> int:
        """Positions it examines (closed form, before any cell exists)."""
        return self.shape.count(self)

    def cells(self) -> np.ndarray:
        return self.frame.cells(self.shape.cells(self))

    def where(self) -> str:
        if self.frame.is_identity() and not self.copies:
            return self.shape.path
        parts = []
        if self.copies:
            parts.append(f"repeat copy {', '.join(str(i) for i in self.copies)}")
        if self.frame.m == (1, 0, 0, 1):
            t = self.frame.t
            parts.append(f"shifted by x={t.x} y={t.y} z={t.z}")
        else:
            parts.append("transformed")
        return f"{self.shape.path} ({', '.join(parts)})"
