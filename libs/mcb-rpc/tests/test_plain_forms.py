"""mcb_rpc.pbjson's plain forms (``plain``, ``compact``) and its Vec3/Box converter: the project's one
conversion between protobuf messages and plain data (the admin CLI and the dashboard print ``plain``,
the bridge's answers to the model are ``compact``)."""

from __future__ import annotations

import json

import pytest
from mcb.camera.v1 import camera_pb2
from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.planner.v1 import planner_pb2
from mcb_common.geometry import Box, Vec3
from mcb_rpc import pbjson


def test_plain_prints_every_field_by_proto_name():
    stats = jpb.JournalStatsResponse(
        operations={"queued": 1, "applied": 2}, written_blocks=5 << 32, tables={"z": 1, "a": 2}
    )
    out = pbjson.plain(stats)
    assert list(out["operations"]) == ["applied", "queued"]  # map keys sorted
    assert list(out["tables"]) == ["a", "z"]
    assert out["written_blocks"] == 5 << 32  # 64-bit as a number, not protobuf JSON's string
    assert out["bytes_per_written_block"] is None  # unset optional scalar
    assert "bytes" not in out  # unset message field
    assert pbjson.plain(jpb.AssetEntry(asset_id="a")) == {
        "asset_id": "a",
        "name": "",
        "sha256": "",
        "bytes": None,
        "read_only": False,
        "valid": False,
        "reason": "",
    }
    assert pbjson.plain(jpb.AssetEntry(bytes=0))["bytes"] == 0  # set to zero is not unset


def test_compact_leaves_out_empty_strings_lists_and_maps_only():
    op = jpb.OperationReport(
        operation_id="op_1", state="applied", planned=3, written_samples=[common_pb2.Vec3(x=1, y=-2, z=3)]
    )
    out = pbjson.compact(op)
    assert out["operation_id"] == "op_1" and out["planned"] == 3 and out["written"] == 0  # zero shown
    assert out["written_samples"] == [{"x": 1, "y": -2, "z": 3}]
    assert "conflict_samples" not in out and "message" not in out and "error" not in out
    assert pbjson.compact(jpb.JournalStatsResponse()).get("operations") is None  # empty map left out
    assert pbjson.compact(jpb.JournalStatsResponse(operations={"b": 1, "a": 2}))["operations"] == {"a": 2, "b": 1}


def test_compact_special_forms_apply_wherever_the_type_occurs():
    op = jpb.OperationReport(operation_id="op_1", error=common_pb2.Error(code="E", details_json='{"k": 1}'))
    special = {"mcb.common.v1.Error": lambda e: {"code": e.code, "details": json.loads(e.details_json)}}
    assert pbjson.compact(op, special)["error"] == {"code": "E", "details": {"k": 1}}
    assert pbjson.compact(op.error, special) == {"code": "E", "details": {"k": 1}}


def test_bytes_print_as_standard_base64_in_every_form():
    msg = planner_pb2.ImportSchematicRequest(data=b"\xfb\xff")
    assert pbjson.plain(msg)["data"] == "+/8="
    assert pbjson.compact(msg)["data"] == "+/8="
    assert pbjson.to_json(msg)["data"] == "+/8="


def test_wire_form_still_defers_to_json_format_for_maps():
    from google.protobuf import json_format

    msg = jpb.JournalStatsResponse(operations={"applied": 2})
    assert pbjson.to_json(msg) == json_format.MessageToDict(msg, always_print_fields_with_no_presence=True)
    assert pbjson.parse(pbjson.to_json(msg), jpb.JournalStatsResponse) == msg


@pytest.mark.parametrize("value", [Vec3(1, -2, 3), (1, -2, 3), [1, -2, 3], {"x": 1, "y": -2, "z": 3}])
def test_vec3_from_every_plain_form(value):
    assert pbjson.vec3_pb(value) == common_pb2.Vec3(x=1, y=-2, z=3)


def test_box_converters_round_trip_and_sort_only_into_geometry():
    pb = common_pb2.Box(min=common_pb2.Vec3(x=5, y=0, z=0), max=common_pb2.Vec3(x=1, y=2, z=3))
    assert pbjson.box_dict(pb) == {"min": {"x": 5, "y": 0, "z": 0}, "max": {"x": 1, "y": 2, "z": 3}}  # as sent
    assert pbjson.box_of(pb) == Box(Vec3(1, 0, 0), Vec3(5, 2, 3))  # sorted
    assert pbjson.box_pb(pbjson.box_of(pb)) == common_pb2.Box(min=common_pb2.Vec3(x=1), max=pbjson.vec3_pb((5, 2, 3)))
    assert pbjson.box_pb(pbjson.box_dict(pb)) == pb
    assert pbjson.vec3_of(pb.max) == Vec3(1, 2, 3) and pbjson.vec3_dict(pb.max) == {"x": 1, "y": 2, "z": 3}


def test_every_message_of_the_protocols_has_a_plain_form():
    """A plan for every type (maps and nested messages included): default instances print."""
    for mod in (jpb, planner_pb2, camera_pb2, common_pb2):
        for name, desc in mod.DESCRIPTOR.message_types_by_name.items():
            cls = getattr(mod, name)
            assert isinstance(pbjson.plain(cls()), dict), desc.full_name
            assert isinstance(pbjson.compact(cls()), dict), desc.full_name
