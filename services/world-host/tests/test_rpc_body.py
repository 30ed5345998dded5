"""The RPC success body (server._ok_response): a large bytes field spliced in as base64 gives
the same JSON as the plain MessageToDict path."""

from __future__ import annotations

import json
import os

import pytest
from fastapi.responses import JSONResponse
from google.protobuf import json_format
from mcb.common.v1 import common_pb2
from mcb.world.v1 import world_pb2
from mcb_world_host.server import _ok_response, _to_json


@pytest.mark.parametrize("size", [0, 100, 65_537, 1_000_001])
def test_same_json_as_message_to_dict(size):
    res = world_pb2.RegionReadResult(
        min=common_pb2.Vec3(x=-1, y=2, z=3),
        max=common_pb2.Vec3(x=4, y=5, z=6),
        palette=["minecraft:air", "minecraft:oak_sign[rotation=0]", 'minecraft:ünïcode\\"quote'],
        indices=os.urandom(size),
        revisions=[world_pb2.SectionRevision(cx=1, sy=2, cz=3, revision=9)],
        entities_total=2,
    )
    got = _ok_response(res, "r-1")
    want = JSONResponse({"ok": True, "result": _to_json(res), "requestId": "r-1"})
    assert got.media_type == "application/json"
    assert json.loads(got.body) == json.loads(want.body)
    back = json_format.ParseDict(json.loads(got.body)["result"], world_pb2.RegionReadResult())
    assert back == res
