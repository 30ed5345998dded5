"""Issue 12 item 5: every gRPC service authenticates, checked cell by cell.

The full matrix {none, wrong, agent, admin, service, automation} × every method of the planner,
the journal, the journal admin and the camera worker, against the real processes (Components:
Redis, embedded world host, planner, journal, bridge; plus a camera worker). ``EXPECTED`` below is
the specification (docs/architecture.md, "Who may call what"), written out here rather than read
from the services so that a service that drifts fails the test.

A denied cell must answer ``unauthenticated`` (no or unknown token) or ``permission_denied`` (a
known token without the scope); an allowed cell must get past authentication (a result, or an
error about the request itself, never one of those two).
"""

from __future__ import annotations

import json

import grpc
import pytest
from e2e.components import start_components
from harness import PY, start_process
from mcb.camera.v1 import camera_pb2, camera_pb2_grpc
from mcb.common.v1 import common_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.journal.v1 import journal_pb2_grpc
from mcb.planner.v1 import planner_pb2, planner_pb2_grpc
from mcb_rpc.auth import call_metadata

PRINCIPALS = ("none", "wrong", "agent", "admin", "service", "automation")
AGENT = {"agent", "admin"}
EXPECTED: dict[tuple[str, str], set[str]] = {}
for m in (
    "ProjectContext",
    "RegionInspect",
    "BuildPrepare",
    "BuildApply",
    "OperationCancel",
    "OperationUndoPrepare",
    "PartDefine",
    "PartGet",
    "RegionChanges",
    "RegionHistory",
    "RollbackPrepare",
    "HistoryMap",
    "OperationPrompt",
    "AssetList",
    "SchematicExport",
    "SchematicImportPrepare",
    "ProjectIndex",
):
    EXPECTED[("journal", m)] = AGENT
EXPECTED[("journal", "OperationStatus")] = AGENT | {"service"}  # the camera worker waits for operations
EXPECTED[("journal", "PlanEntries")] = AGENT | {"service"}  # the camera worker draws a plan preview
for m in (
    "RecoveryReview",
    "RecoveryAbandon",
    "PartProtect",
    "JournalStats",
    "JournalCompact",
    "OperationList",
    "ProjectList",
):
    EXPECTED[("journal-admin", m)] = {"admin"}
for m in ("Compile", "ImportSchematic", "ExportSchematic"):
    EXPECTED[("planner", m)] = {"service", "admin"}  # the journal (service); an admin's tools
for m in ("ListCameras", "Capture", "AutoViewpoints", "DiffCaptures"):
    EXPECTED[("camera", m)] = {"agent", "admin", "service"}
EXPECTED[("camera", "SaveCamera")] = {"agent", "admin"}

V = common_pb2.Vec3
RECIPE = json.dumps(
    {
        "version": 1,
        "operations": [
            {
                "type": "box",
                "min": {"x": 0, "y": 70, "z": 0},
                "max": {"x": 1, "y": 70, "z": 1},
                "block": "minecraft:stone",
            }
        ],
    }
)
# replace reads live blocks through the planner's own service token: only its callers may ask
REPLACE = json.dumps(
    {
        "version": 1,
        "operations": [
            {
                "type": "replace",
                "min": {"x": 0, "y": -64, "z": 0},
                "max": {"x": 3, "y": -60, "z": 3},
                "from": "minecraft:bedrock",
                "to": "minecraft:stone",
            }
        ],
    }
)
REGION = common_pb2.Box(min=V(x=0, y=60, z=0), max=V(x=3, y=63, z=3))

REQUESTS = {
    ("journal", "ProjectContext"): jpb.ProjectContextRequest(),
    ("journal", "RegionInspect"): jpb.RegionInspectRequest(min=V(x=0, y=60, z=0), max=V(x=1, y=61, z=1)),
    ("journal", "BuildPrepare"): jpb.BuildPrepareRequest(recipe_json=RECIPE),
    ("journal", "BuildApply"): jpb.BuildApplyRequest(plan_id="pl_none", plan_hash="h", idempotency_key="k"),
    ("journal", "OperationStatus"): jpb.OperationRef(operation_id="op_none"),
    ("journal", "OperationCancel"): jpb.OperationRef(operation_id="op_none"),
    ("journal", "OperationUndoPrepare"): jpb.OperationRef(operation_id="op_none"),
    ("journal", "PartDefine"): jpb.PartDefineRequest(name="p", operation_id="op_none"),
    ("journal", "PartGet"): jpb.PartRef(part_id="part_none"),
    ("journal", "RegionChanges"): jpb.RegionChangesRequest(region=REGION),
    ("journal", "RegionHistory"): jpb.RegionHistoryRequest(region=REGION),
    ("journal", "RollbackPrepare"): jpb.RollbackPrepareRequest(region=REGION, player="x", since_millis=1),
    ("journal", "HistoryMap"): jpb.HistoryMapRequest(region=REGION),
    ("journal", "OperationPrompt"): jpb.OperationPromptRequest(operation_ids=["op_x"], prompt="build a tower"),
    ("journal", "AssetList"): jpb.AssetListRequest(),
    ("journal", "SchematicExport"): jpb.SchematicExportRequest(),
    ("journal", "SchematicImportPrepare"): jpb.SchematicImportPrepareRequest(),
    ("journal", "ProjectIndex"): jpb.ProjectIndexRequest(),
    ("journal", "PlanEntries"): jpb.PlanEntriesRequest(plan_id="pl_none"),
    ("journal-admin", "RecoveryReview"): jpb.OperationRef(operation_id="op_none"),
    ("journal-admin", "RecoveryAbandon"): jpb.RecoveryAbandonRequest(operation_id="op_none", expected_digest="d"),
    ("journal-admin", "PartProtect"): jpb.PartProtectRequest(part_id="part_none", protected=True),
    ("journal-admin", "JournalStats"): jpb.JournalStatsRequest(),
    ("journal-admin", "JournalCompact"): jpb.JournalCompactRequest(),
    ("journal-admin", "OperationList"): jpb.OperationListRequest(),
    ("journal-admin", "ProjectList"): jpb.ProjectListRequest(),
    ("planner", "Compile"): planner_pb2.CompileRequest(recipe_json=REPLACE, minecraft_version="1.21.11"),
    ("planner", "ImportSchematic"): planner_pb2.ImportSchematicRequest(data=b"not a schematic"),
    ("planner", "ExportSchematic"): planner_pb2.ExportSchematicRequest(
        width=1, height=1, length=1, palette=["minecraft:air"], indices=b"\x00\x00"
    ),
    ("camera", "ListCameras"): camera_pb2.ListCamerasRequest(),
    ("camera", "Capture"): camera_pb2.CaptureRequest(),
    ("camera", "SaveCamera"): camera_pb2.SaveCameraRequest(),
    ("camera", "AutoViewpoints"): camera_pb2.AutoViewpointsRequest(),
    ("camera", "DiffCaptures"): camera_pb2.DiffCapturesRequest(capture_a="cap-a", capture_b="cap-b"),
}
DENIED = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    comp = start_components(tmp_path_factory.mktemp("auth") / "rt")
    try:
        env = dict(comp.env, MCB_CAMERA_DRIVER="none")
        comp.procs["camera"] = start_process(
            "camera",
            [PY, "-m", "mcb_camera"],
            comp.runtime / "logs",
            env=env,
            health_url=f"http://127.0.0.1:{comp.ports['camera_health']}/health",
            timeout=60,
        )
        yield comp
    finally:
        comp.stop_all()


def test_every_cell_of_the_principal_method_matrix(stack):
    assert set(REQUESTS) == set(EXPECTED)
    player = json.loads((stack.runtime / "config.json").read_text())["projects"][0]["owner_player_id"]
    ports = {
        "journal": "journal_grpc",
        "journal-admin": "journal_grpc",
        "planner": "planner_grpc",
        "camera": "camera_grpc",
    }
    stubs = {
        "journal": journal_pb2_grpc.JournalStub,
        "journal-admin": journal_pb2_grpc.JournalAdminStub,
        "planner": planner_pb2_grpc.PlannerStub,
        "camera": camera_pb2_grpc.CameraStub,
    }
    channels = {k: grpc.insecure_channel(f"127.0.0.1:{stack.ports[p]}") for k, p in ports.items()}
    wrong_cells, held = [], 0
    try:
        for (service, method), req in REQUESTS.items():
            stub = stubs[service](channels[service])
            for who in PRINCIPALS:
                token = {"none": None, "wrong": "not-a-token-" + "x" * 20}.get(who) or (
                    stack.token(who) if who not in ("none", "wrong") else None
                )
                md = (
                    call_metadata(token, "default", player)
                    if token
                    else (("x-mcb-project-id", "default"), ("x-mcb-player-id", player))
                )
                try:
                    getattr(stub, method)(req, metadata=md, timeout=30)
                    code, detail = grpc.StatusCode.OK, ""
                except grpc.RpcError as err:
                    code, detail = err.code(), err.details()
                allowed = who in EXPECTED[(service, method)]
                if allowed:
                    ok = code not in DENIED
                elif who in ("none", "wrong"):
                    ok = code == grpc.StatusCode.UNAUTHENTICATED
                else:
                    ok = code in DENIED
                if ok:
                    held += 1
                else:
                    wrong_cells.append(f"{service}.{method} as {who}: {code.name} {detail[:120]}")
    finally:
        for ch in channels.values():
            ch.close()
    total = len(REQUESTS) * len(PRINCIPALS)
    print(f"auth matrix: {held}/{total} cells hold")
    assert not wrong_cells, f"{held}/{total} cells hold; wrong:\n" + "\n".join(wrong_cells)
