"""mcb_rpc.worldclient.parse_result: large bytes fields decoded directly, the same message as
protobuf's ParseDict for every base64 form the JSON mapping allows."""

from __future__ import annotations

import base64
import os

import pytest
from google.protobuf import json_format
from mcb.world.v1 import world_pb2
from mcb_rpc.worldclient import parse_result, to_json


@pytest.mark.parametrize("size", [10, 200_000, 200_001, 200_002])
@pytest.mark.parametrize("form", ["standard", "urlsafe", "unpadded"])
def test_same_message_as_parse_dict(size, form):
    msg = world_pb2.RegionReadResult(
        palette=["minecraft:air", "minecraft:stone"],
        indices=os.urandom(size),
        revisions=[world_pb2.SectionRevision(cx=1, sy=2, cz=3, revision=4)],
    )
    data = to_json(msg)
    text = base64.b64encode(msg.indices).decode()
    if form == "urlsafe":
        text = base64.urlsafe_b64encode(msg.indices).decode()
    elif form == "unpadded":
        text = text.rstrip("=")
    data["indices"] = text
    got = parse_result(dict(data), world_pb2.RegionReadResult)
    assert got == json_format.ParseDict(data, world_pb2.RegionReadResult()) == msg


@pytest.mark.parametrize("text", ["*" * 100_000, "QUJD" * 30_000 + "Q"])
def test_text_that_is_not_strict_base64_is_left_to_parse_dict(text):
    data = {"indices": text}
    try:
        want = json_format.ParseDict(dict(data), world_pb2.RegionReadResult())
    except json_format.ParseError:
        with pytest.raises(json_format.ParseError):
            parse_result(data, world_pb2.RegionReadResult)
    else:
        assert parse_result(data, world_pb2.RegionReadResult) == want
