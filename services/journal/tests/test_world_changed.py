"""Issue 19 item 3: plans, operations, parts and cursors of another world are refused with
world_changed, never used on a new world (worldid.py) — through the journal core's real
build_prepare / build_apply / executor over a real SQLite file."""

from __future__ import annotations

import asyncio
import json

import pytest
from mcb.journal.v1 import journal_pb2 as jpb
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_journal import operations, worldid
from mcb_journal.blobs import BlobStore
from mcb_journal.core import JournalCore
from mcb_journal.db import Database
from mcb_journal.projects import Caller

from services.journal.tests.test_consent import Queue, StoneWorld
from services.journal.tests.test_plan_summary_size import InProcessPlanner

CALLER = Caller("agent", "p", "alice")
A, B = "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"


class SwitchableWorld(StoneWorld):
    """StoneWorld whose identity a test replaces, as `mcb world reset` or a new save would."""

    def __init__(self):
        self.uuid, self.epoch, self.batches = A, 1, 0

    async def world_info(self):
        return world_pb2.WorldInfo(world_uuid=self.uuid, epoch=self.epoch, minecraft_version="1.21.11")

    async def call(self, method, params, result_type):
        if method == "batch_apply":
            self.batches += 1
            raise AssertionError("no batch may reach the new world")
        if method == "events_since":  # nothing happened in the world meanwhile
            return world_pb2.EventsSinceResult(next_cursor="c1", complete=True)
        return await super().call(method, params, result_type)


class ProgressQueue(Queue):
    pass


@pytest.fixture
def core(tmp_path):
    c = JournalCore(
        db=Database(tmp_path / "j.sqlite"),
        blobs=BlobStore(tmp_path / "blobs"),
        world=SwitchableWorld(),
        planner=InProcessPlanner(),
        queue=ProgressQueue(),
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


RECIPE = json.dumps(
    {
        "version": 1,
        "operations": [
            {
                "type": "box",
                "min": {"x": 0, "y": 65, "z": 0},
                "max": {"x": 2, "y": 65, "z": 0},
                "block": "minecraft:glass",
            }
        ],
    }
)


def prepare(core) -> jpb.PlanSummary:
    return asyncio.run(core.prepare.build_prepare(CALLER, jpb.BuildPrepareRequest(recipe_json=RECIPE)))


def apply(core, s: jpb.PlanSummary, key: str) -> jpb.OperationReport:
    return asyncio.run(
        core.build_apply(CALLER, jpb.BuildApplyRequest(plan_id=s.plan_id, plan_hash=s.plan_hash, idempotency_key=key))
    )


def test_a_plan_of_another_world_is_world_changed_even_at_the_same_epoch(core):
    s = prepare(core)
    core.world.uuid = B  # a new save: a new uuid, and (deleted folder) epoch 1 again
    with pytest.raises(McbError) as e:
        apply(core, s, "k1")
    assert e.value.code == ErrorCode.WORLD_CHANGED and not e.value.retryable
    assert e.value.details == {"recorded_world": A, "current_world": B}
    assert core.ctx.runnable() == []


def test_the_same_world_at_another_epoch_stays_stale_snapshot(core):
    s = prepare(core)
    core.world.epoch = 2
    with pytest.raises(McbError) as e:
        apply(core, s, "k2")
    assert e.value.code == ErrorCode.STALE_SNAPSHOT


def test_a_queued_operation_of_the_old_world_fails_before_any_batch(core):
    rep = apply(core, prepare(core), "k3")
    assert rep.state == "queued"
    core.world.uuid = B
    asyncio.run(core.executor().run_operation(rep.operation_id))
    status = core.operation_status(CALLER, rep.operation_id)
    assert status.state == "failed" and core.world.batches == 0
    assert "world_changed" in json.dumps(
        json.loads(core.db.one("SELECT error_json FROM operations WHERE op_id=?", rep.operation_id)["error_json"])
    )
    assert [w["world_uuid"] for w in worldid.worlds(core.db)] == [A, B]  # the new world was noted


def test_records_and_cursor_prefixes():
    with pytest.raises(McbError) as e:
        worldid.check("this change cursor", A[:8], B)
    assert e.value.code == ErrorCode.WORLD_CHANGED
    worldid.check("this change cursor", B[:8], B)
    worldid.check("operation x", "", B)  # records without a world pass
    worldid.check("operation x", B, B)


def test_undo_and_part_define_of_an_old_world_operation_are_refused(core):
    rep = apply(core, prepare(core), "k4")
    operations.set_state(core.db, rep.operation_id, "applying")
    operations.set_state(core.db, rep.operation_id, "applied", message="applied")
    core.world.uuid = B
    for call in (
        lambda: core.undo.undo_prepare(CALLER, rep.operation_id),
        lambda: core.parts.part_define(CALLER, "tower", rep.operation_id),
    ):
        with pytest.raises(McbError) as e:
            asyncio.run(call())
        assert e.value.code == ErrorCode.WORLD_CHANGED and e.value.details["recorded_world"] == A
