"""Conversions between the journal's values and protobuf messages, and its timestamps' text."""

from __future__ import annotations

from datetime import UTC, datetime

from mcb.common.v1 import common_pb2
from mcb_common.geometry import Box, Vec3


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def vec(p: Vec3 | tuple[int, int, int]) -> common_pb2.Vec3:
    if isinstance(p, Vec3):
        return common_pb2.Vec3(x=p.x, y=p.y, z=p.z)
    return common_pb2.Vec3(x=p[0], y=p[1], z=p[2])


def box_pb(b: Box) -> common_pb2.Box:
    return common_pb2.Box(min=vec(b.min), max=vec(b.max))


def box_from_pb(lo: common_pb2.Vec3, hi: common_pb2.Vec3) -> Box:
    return Box.of(Vec3(lo.x, lo.y, lo.z), Vec3(hi.x, hi.y, hi.z))
