"""The journal's timestamps' text, and the names its modules use for the project's one Vec3/Box
converter (``mcb_rpc.pbjson``, which imports no transport)."""

from __future__ import annotations

from datetime import UTC, datetime

from mcb.common.v1 import common_pb2
from mcb_common.geometry import Box
from mcb_rpc.pbjson import box_pb, vec3_of
from mcb_rpc.pbjson import vec3_pb as vec

__all__ = ["box_from_pb", "box_pb", "iso", "vec"]


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def box_from_pb(lo: common_pb2.Vec3, hi: common_pb2.Vec3) -> Box:
    """The sorted box of two corners (a request's ``min`` and ``max``)."""
    return Box.of(vec3_of(lo), vec3_of(hi))
