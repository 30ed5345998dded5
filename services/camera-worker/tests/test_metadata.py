"""A capture's metadata file -> camera.proto's typed CaptureMetadata (what Capture answers): every key
the job loop and the two drivers write is a field of the message (the documents below are built the
way jobs.py, drivers.py (builtin) and link.py (fabric) build them)."""

from __future__ import annotations

import pytest
from google.protobuf import json_format
from mcb.camera.v1 import camera_pb2
from mcb_camera.capture import capture_metadata
from mcb_rpc import pbjson

JOB = {
    "captureId": "cap_1",
    "projectId": "p1",
    "cameraId": "",
    "status": "completed",
    "pose": {"x": 1.5, "y": 70.0, "z": -3.25, "yaw": 270.0, "pitch": 25.0, "fov": 70.0, "width": 320, "height": 180},
    "width": 320,
    "height": 180,
    "mimeType": "image/png",
    "format": "png",
    "requestedAtMs": 1_700_000_000_000,
    "capturedAtMs": 1_700_000_000_123,
    "operation": {"operationId": "op_1", "state": "applied", "written": 4, "updatedAt": "2026-01-01T00:00:00.000Z"},
    "afterOperationId": "op_1",
    "beforeOperationId": "op_0",
    "planId": "plan_1",
    "compare": True,
    "latencyMs": 123.4,
    "serverRevisionVerified": True,
}
BUILTIN = {
    "driver": "builtin",
    "region": {"min": {"x": 0, "y": 60, "z": 0}, "max": {"x": 15, "y": 70, "z": 15}},
    "view": "perspective",
    "world": {"worldUuid": "u-1", "epoch": 2, "hostInstance": "h-1"},
    "sections": 4,
    "maxRevision": 9,
    "revisionDigest": "ab12",
    "ready": True,
    "stale": True,
    "faces": 1234,
    "renderer": "llvmpipe",
    "cache": "warm",
    "timingsMs": {"read": 1.5, "draw": 2.5, "total": 4.0},
    "changedSections": [{"x": 0, "y": 4, "z": 0}],
    "changedSectionCount": 1,
    "hint": "capture again",
    "preview": {
        "planId": "plan_1",
        "planHash": "h",
        "entriesDrawn": 3,
        "entriesTotal": 4,
        "written": False,
        "layout": "after",
        "hint": "entries outside",
    },
    "revisions": [[0, 4, 0, 9]],
}
FABRIC = {
    "driver": "fabric",
    "client": {"client": "mcb-camera-headless", "minecraftVersion": "1.21.11", "modVersion": "0.1"},
    "clientReport": {"stableFrames": 3, "sectionsChecked": 4},
    "stale": False,
    "ready": True,
    "serverRevisionVerified": False,
    "timingsMs": {"total": 10.0},
}


@pytest.mark.parametrize("driver", [BUILTIN, FABRIC], ids=["builtin", "fabric"])
def test_every_key_written_is_a_typed_field(driver):
    doc = {**JOB, **driver}
    strict = {k: v for k, v in doc.items() if k not in ("revisions", "status", "captureId")}
    typed = pbjson.parse(strict, camera_pb2.CaptureMetadata)  # no unknown key allowed
    assert capture_metadata(doc) == typed
    back = json_format.MessageToDict(typed)
    assert set(back) == set(strict)
    assert typed.pose.yaw == 270.0 and typed.operation.operation_id == "op_1"


def test_builtin_fields_by_their_snake_case_names():
    typed = capture_metadata({**JOB, **BUILTIN})
    assert typed.max_revision == 9 and typed.world.world_uuid == "u-1" and typed.world.epoch == 2
    assert typed.preview.entries_drawn == 3 and typed.timings_ms.draw == 2.5
    assert [(v.x, v.y, v.z) for v in typed.changed_sections] == [(0, 4, 0)]
    assert typed.HasField("stale") and typed.stale and not typed.HasField("stage")


def test_fabric_client_report_is_kept_as_sent():
    typed = capture_metadata({**JOB, **FABRIC})
    assert typed.client.minecraft_version == "1.21.11"
    assert dict(typed.client_report) == {"stableFrames": 3, "sectionsChecked": 4}
    assert typed.HasField("server_revision_verified") and not typed.server_revision_verified


def test_a_file_of_an_older_version_still_reads():
    """Unknown keys (written by an older worker) are left out, a null is unset."""
    typed = capture_metadata({"driver": "builtin", "somethingOld": 1, "operation": None, "width": 64})
    assert typed.driver == "builtin" and typed.width == 64 and not typed.HasField("operation")
