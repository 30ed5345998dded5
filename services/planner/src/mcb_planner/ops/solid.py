"""Revision 4 solids (solids.py): ``sphere``, ``ellipsoid``, ``dome``, ``cone``, ``pyramid``,
``polygon`` and a ``cylinder`` along any axis or with a thick wall — one dense grid each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from mcb_common.geometry import Box, Vec3
from mcb_common.recipe_schema import (
    AXES,
    COORD_LIMIT,
    MAX_HEIGHT,
    MAX_POLYGON_POINTS,
    MAX_RADIUS,
    MAX_SOLID_RADIUS,
)

from .. import solids
from ..grammar import bad, kind_of, obj_of
from .base import BlockText, Shape

if TYPE_CHECKING:
    from ..grammar import Parser
    from ..placement import Placement


@dataclass(frozen=True, slots=True)
class SolidOp(Shape):
    """``kind`` is sphere, ellipsoid, dome, cone, pyramid, cylinder (any axis or a thick wall)
    or polygon. ``radii`` are (x, y, z) for sphere/ellipsoid/dome, (r, r, r) for
    cone/pyramid/cylinder; ``thickness`` 0 = solid."""

    TYPES = ("sphere", "ellipsoid", "dome", "cone", "pyramid", "polygon")  # and cylinder (cylinder.py)
    NAME = "solid"
    path: str
    kind: str
    center: Vec3  # polygon: (0, y, 0)
    radii: tuple[int, int, int]
    height: int
    axis: str  # "+y" style for dome/cone/pyramid, "x"/"y"/"z" for cylinder, "" otherwise
    thickness: int
    block: str
    points: tuple[tuple[int, int], ...] = ()
    spelled: tuple[str, ...] = ()  # keys written in the recipe (normalised JSON keeps the form)

    @classmethod
    def parse(cls, p: Parser, kind: str, obj: dict[str, Any], path: str, depth: int) -> SolidOp:
        thick = p.thickness(obj, path)
        blk = p.block(obj["block"], f"{path}.block")
        spelled = tuple(sorted(obj))
        radius = lambda: p.int(obj["radius"], f"{path}.radius", 0, MAX_SOLID_RADIUS)  # noqa: E731
        if kind == "polygon":
            pts = obj["points"]
            if not isinstance(pts, list) or not 3 <= len(pts) <= MAX_POLYGON_POINTS:
                raise bad(
                    f"{path}.points",
                    f"must be an array of 3 to {MAX_POLYGON_POINTS} points {{x, z}}, got {kind_of(pts)}",
                )
            points = []
            for i, pt in enumerate(pts):
                o = obj_of(pt, f"{path}.points[{i}]", ("x", "z"), (), what="a point {x, z}")
                points.append(tuple(p.int(o[a], f"{path}.points[{i}].{a}", -COORD_LIMIT, COORD_LIMIT) for a in "xz"))
            y = p.int(obj["y"], f"{path}.y", -COORD_LIMIT, COORD_LIMIT)
            h = p.int(obj["height"], f"{path}.height", 1, MAX_HEIGHT)
            return cls(path, kind, Vec3(0, y, 0), (0, 0, 0), h, "", thick, blk, tuple(points), spelled)  # type: ignore[arg-type]
        center = p.vec(obj["center"], f"{path}.center")
        if kind == "sphere":
            r = radius()
            return cls(path, kind, center, (r, r, r), 0, "", thick, blk, (), spelled)
        if kind in ("ellipsoid", "dome"):
            if kind == "dome" and ("radius" in obj) == ("radii" in obj):
                raise bad(
                    f"{path}.radius", 'a dome takes either "radius" (half sphere) or "radii" {x, y, z} (half ellipsoid)'
                )
            if "radii" in obj:
                o = obj_of(obj["radii"], f"{path}.radii", ("x", "y", "z"), (), what="radii {x, y, z}")
                radii = tuple(p.int(o[a], f"{path}.radii.{a}", 0, MAX_SOLID_RADIUS) for a in "xyz")
            else:
                r = radius()
                radii = (r, r, r)
            axis = p.axis(obj, path, AXES, "+y") if kind == "dome" else ""
            return cls(path, kind, center, radii, 0, axis, thick, blk, (), spelled)  # type: ignore[arg-type]
        if kind == "cylinder":
            r = p.int(obj["radius"], f"{path}.radius", 0, MAX_RADIUS)
            h = p.int(obj["height"], f"{path}.height", 1, MAX_HEIGHT)
            return cls(
                path, kind, center, (r, r, r), h, p.axis(obj, path, ("x", "y", "z"), "y"), thick, blk, (), spelled
            )
        r = radius()
        default_h = r + 1 if kind == "pyramid" else None
        height = p.int(obj["height"], f"{path}.height", 1, MAX_SOLID_RADIUS + 1) if "height" in obj else default_h
        assert height is not None
        return cls(path, kind, center, (r, r, r), height, p.axis(obj, path, AXES, "+y"), thick, blk, (), spelled)

    # -- operations

    def to_json(self, block: BlockText) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.kind}
        if self.kind == "polygon":
            out |= {"points": [{"x": x, "z": z} for x, z in self.points], "y": self.center.y, "height": self.height}
        else:
            out["center"] = self.center.as_dict()
            if self.kind in ("ellipsoid", "dome") and "radii" in self.spelled:
                out["radii"] = dict(zip("xyz", self.radii, strict=True))
            else:
                out["radius"] = self.radii[0]
            if self.kind in ("cone", "pyramid", "cylinder"):
                out["height"] = self.height
            if self.axis:
                out["axis"] = self.axis
        out["block"] = block(self.block)
        out["hollow"] = self.thickness > 0
        if self.thickness > 1:
            out["thickness"] = self.thickness
        return out

    def _box(self) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """The solid's bounding box in recipe coordinates."""
        if self.kind == "polygon":
            return solids.polygon_box(self.points, self.center.y, self.height)
        if self.kind in ("sphere", "ellipsoid", "dome"):
            lo, hi = solids.ellipsoid_box(self.radii, self.axis or None)
        else:
            lo, hi = solids.axial_box(
                self.axis if self.kind != "cylinder" else "+" + self.axis, self.radii[0], self.height
            )
        c = (self.center.x, self.center.y, self.center.z)
        return (lo[0] + c[0], lo[1] + c[1], lo[2] + c[2]), (hi[0] + c[0], hi[1] + c[1], hi[2] + c[2])

    def _grid(self) -> solids.Grid:
        if self.kind in ("sphere", "ellipsoid", "dome"):
            return solids.ellipsoid(self.radii, self.thickness, self.axis or None)
        if self.kind in ("cone", "pyramid"):
            return solids.cone(self.radii[0], self.height, self.axis, self.thickness, square=self.kind == "pyramid")
        if self.kind == "cylinder":
            return solids.cylinder(self.radii[0], self.height, self.axis, self.thickness)
        return solids.polygon(self.points, self.center.y, self.height, self.thickness)

    def local_bounds(self, p: Placement) -> Box:
        lo, hi = self._box()
        return Box(Vec3(*lo), Vec3(*hi))

    def count(self, p: Placement) -> int:
        return solids.bbox_volume(self._box())  # the dense grid it evaluates

    def cells(self, p: Placement) -> np.ndarray:
        c = self.center
        return self._grid().cells((c.x, c.y, c.z) if self.kind != "polygon" else (0, 0, 0))
