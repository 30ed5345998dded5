"""An operation's Before picture (before.py, issue 31 item 7) against a camera port that behaves
as the camera worker's Capture does (mcb_camera.server.CameraServicer.Capture: a new request
answers "pending" or "completed" with a new capture id; polling by capture_id answers the state;
failures are McbError): linked only when it completed in time, never otherwise."""

from __future__ import annotations

import asyncio
import dataclasses
import json

import pytest
from mcb.camera.v1 import camera_pb2
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.errors import ErrorCode, McbError
from mcb_journal import before
from mcb_journal.blobs import BlobStore
from mcb_journal.core import JournalCore
from mcb_journal.db import Database
from mcb_journal.plans import Plan
from mcb_journal.projects import Caller
from mcb_journal.settings import JournalSettings

from services.journal.tests.test_consent import Queue, StoneWorld
from services.journal.tests.test_plan_summary_size import InProcessPlanner

CALLER = Caller("agent", "p", "alice")


class Camera:
    """Capture as the camera worker answers it: ``pending_polls`` polls stay pending, then the
    capture is completed; ``error`` is raised instead when set."""

    def __init__(self, pending_polls: int = 2, error: McbError | None = None):
        self.requests: list[camera_pb2.CaptureRequest] = []
        self.pending_polls, self.error = pending_polls, error

    async def capture(self, req: camera_pb2.CaptureRequest) -> camera_pb2.CaptureResponse:
        self.requests.append(req)
        if self.error is not None:
            raise self.error
        if not req.capture_id:  # a new capture
            return camera_pb2.CaptureResponse(status="pending", capture_id="cap-1")
        if req.capture_id != "cap-1":
            raise McbError(ErrorCode.NOT_FOUND, f"no capture {req.capture_id}")
        self.pending_polls -= 1
        return camera_pb2.CaptureResponse(
            status="completed" if self.pending_polls < 0 else "pending", capture_id="cap-1"
        )


def make_core(tmp_path, camera, seconds: float = 5.0) -> JournalCore:
    c = JournalCore(
        db=Database(tmp_path / "j.sqlite"),
        blobs=BlobStore(tmp_path / "blobs"),
        world=StoneWorld(),
        planner=InProcessPlanner(),
        queue=Queue(),
        camera=camera,
        settings=dataclasses.replace(JournalSettings(), before_capture_s=seconds),
    )
    c.projects.load(
        [
            {
                "project_id": "p",
                "owner_player_id": "alice",
                "area": {"min": {"x": -200, "y": -64, "z": -200}, "max": {"x": 200, "y": 319, "z": 200}},
            }
        ]
    )
    return c


def queued_operation(core: JournalCore) -> tuple[str, Plan]:
    recipe = json.dumps(
        {
            "version": 1,
            "operations": [
                {
                    "type": "box",
                    "min": {"x": 3, "y": 65, "z": -2},
                    "max": {"x": 6, "y": 67, "z": 1},
                    "block": "minecraft:glass",
                }
            ],
        }
    )
    s = asyncio.run(core.prepare.build_prepare(CALLER, jpb.BuildPrepareRequest(recipe_json=recipe)))
    rep = asyncio.run(
        core.build_apply(CALLER, jpb.BuildApplyRequest(plan_id=s.plan_id, plan_hash=s.plan_hash, idempotency_key="k"))
    )
    return rep.operation_id, core.load_plan(s.plan_id)


def test_a_completed_capture_of_the_plans_region_is_linked_to_the_operation(tmp_path):
    cam = Camera(pending_polls=2)
    core = make_core(tmp_path, cam)
    op_id, plan = queued_operation(core)
    assert core.report(op_id).before_capture_id == ""
    assert asyncio.run(before.take(core.ctx, op_id, "p", plan)) == "cap-1"
    first = cam.requests[0]
    assert (first.project_id, first.view, first.before_operation_id, first.width, first.height) == (
        "p",
        "diagonal",
        op_id,
        before.BEFORE_WIDTH,
        before.BEFORE_HEIGHT,
    )
    assert (
        first.region.min.x,
        first.region.min.y,
        first.region.min.z,
        first.region.max.x,
        first.region.max.y,
        first.region.max.z,
    ) == (3, 65, -2, 6, 67, 1)
    assert [r.capture_id for r in cam.requests[1:]] == ["cap-1"] * 3  # polled until completed
    assert core.report(op_id).before_capture_id == "cap-1"


@pytest.mark.parametrize(
    "camera, seconds, calls",
    [
        (Camera(pending_polls=10**6), 0.6, None),  # never ready in time: waited, not linked
        (Camera(error=McbError(ErrorCode.CAMERA_UNAVAILABLE, "no driver")), 5.0, 1),
        (Camera(), 0.0, 0),  # switched off: not even asked
        (None, 5.0, 0),  # no camera worker configured
    ],
)
def test_no_before_picture_is_linked_unless_it_completed_in_time(tmp_path, camera, seconds, calls):
    core = make_core(tmp_path, camera, seconds)
    op_id, plan = queued_operation(core)
    assert asyncio.run(before.take(core.ctx, op_id, "p", plan)) == ""
    assert core.report(op_id).before_capture_id == ""
    assert core.db.one("SELECT 1 FROM op_captures WHERE op_id=?", op_id) is None
    if camera is not None and calls is not None:
        assert len(camera.requests) == calls
    elif camera is not None:
        assert len(camera.requests) > 2  # it kept polling until the deadline


def test_a_region_larger_than_a_capture_draws_gets_no_picture(tmp_path):
    cam = Camera()
    core = make_core(tmp_path, cam)
    op_id, _ = queued_operation(core)
    huge = Plan.from_entries(
        [((0, 0, 0), "minecraft:air", "minecraft:stone"), ((200, 100, 200), "minecraft:air", "minecraft:stone")],
        "w-1",
        1,
        "r",
    )
    assert asyncio.run(before.take(core.ctx, op_id, "p", huge)) == "" and cam.requests == []
