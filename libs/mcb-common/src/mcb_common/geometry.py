"""Block coordinates and inclusive boxes.

Invariants: coordinates are integers; a ``Box`` is inclusive on both ends with
``min <= max`` on every axis (``Box.of`` sorts any two corners).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .errors import invalid

# Minecraft Java's world border: ±29,999,984 horizontally.
WORLD_XZ_LIMIT = 29_999_984


@dataclass(frozen=True, order=True, slots=True)
class Vec3:
    x: int
    y: int
    z: int

    def __add__(self, other: Vec3) -> Vec3:
        return Vec3(self.x + other.x, self.y + other.y, self.z + other.z)

    def __sub__(self, other: Vec3) -> Vec3:
        return Vec3(self.x - other.x, self.y - other.y, self.z - other.z)

    def scaled(self, k: int) -> Vec3:
        return Vec3(self.x * k, self.y * k, self.z * k)

    def as_dict(self) -> dict[str, int]:
        return {"x": self.x, "y": self.y, "z": self.z}

    @property
    def chunk(self) -> tuple[int, int]:
        return (self.x >> 4, self.z >> 4)

    @classmethod
    def parse(cls, value: Any, what: str = "position") -> Vec3:
        """Parse ``{x,y,z}`` (or a 3-list) of integers, with an error a person can act on."""
        if isinstance(value, Vec3):
            return value
        if isinstance(value, (list, tuple)) and len(value) == 3:
            items = list(value)
        elif isinstance(value, dict) and set(value) >= {"x", "y", "z"}:
            extra = set(value) - {"x", "y", "z"}
            if extra:
                raise invalid(f"{what} has unknown keys {sorted(extra)}; expected x, y, z")
            items = [value["x"], value["y"], value["z"]]
        else:
            raise invalid(f"{what} must be an object {{x, y, z}} of integers, got {value!r}")
        out = []
        for axis, v in zip("xyz", items, strict=True):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v:
                raise invalid(f"{what}.{axis} must be an integer, got {v!r}")
            if abs(int(v)) > WORLD_XZ_LIMIT:
                raise invalid(f"{what}.{axis}={int(v)} is outside the world (|v| ≤ {WORLD_XZ_LIMIT})")
            out.append(int(v))
        return cls(*out)


@dataclass(frozen=True, slots=True)
class Box:
    min: Vec3
    max: Vec3

    @classmethod
    def of(cls, a: Vec3, b: Vec3) -> Box:
        return cls(
            Vec3(min(a.x, b.x), min(a.y, b.y), min(a.z, b.z)),
            Vec3(max(a.x, b.x), max(a.y, b.y), max(a.z, b.z)),
        )

    @property
    def size(self) -> Vec3:
        return Vec3(self.max.x - self.min.x + 1, self.max.y - self.min.y + 1, self.max.z - self.min.z + 1)

    @property
    def volume(self) -> int:
        s = self.size
        return s.x * s.y * s.z

    def contains(self, p: Vec3) -> bool:
        return self.min.x <= p.x <= self.max.x and self.min.y <= p.y <= self.max.y and self.min.z <= p.z <= self.max.z

    def contains_box(self, other: Box) -> bool:
        return self.contains(other.min) and self.contains(other.max)

    def intersects(self, other: Box) -> bool:
        return not (
            other.max.x < self.min.x
            or other.min.x > self.max.x
            or other.max.y < self.min.y
            or other.min.y > self.max.y
            or other.max.z < self.min.z
            or other.min.z > self.max.z
        )

    def union(self, other: Box) -> Box:
        return Box.of(
            Vec3(min(self.min.x, other.min.x), min(self.min.y, other.min.y), min(self.min.z, other.min.z)),
            Vec3(max(self.max.x, other.max.x), max(self.max.y, other.max.y), max(self.max.z, other.max.z)),
        )

    def chunks(self) -> Iterator[tuple[int, int]]:
        for cx in range(self.min.x >> 4, (self.max.x >> 4) + 1):
            for cz in range(self.min.z >> 4, (self.max.z >> 4) + 1):
                yield (cx, cz)

    def positions(self) -> Iterator[Vec3]:
        """All positions in YZX order (y outermost, x fastest), the order of region reads."""
        for y in range(self.min.y, self.max.y + 1):
            for z in range(self.min.z, self.max.z + 1):
                for x in range(self.min.x, self.max.x + 1):
                    yield Vec3(x, y, z)

    def as_dict(self) -> dict[str, dict[str, int]]:
        return {"min": self.min.as_dict(), "max": self.max.as_dict()}

    @classmethod
    def parse(cls, lo: Any, hi: Any, what: str = "region") -> Box:
        return cls.of(Vec3.parse(lo, f"{what}.min"), Vec3.parse(hi, f"{what}.max"))
