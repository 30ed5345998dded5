"""JournalAdmin.OperationList / ProjectList (overview.py): the ops dashboard's reads."""

from __future__ import annotations

import asyncio

import pytest
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.errors import McbError
from mcb_journal.blobs import BlobStore
from mcb_journal.core import JournalCore
from mcb_journal.db import Database
from mcb_journal.overview import operation_list, project_index, project_list
from mcb_journal.plans import Plan
from mcb_journal.projects import Caller

AREA = {"min": {"x": 0, "y": 0, "z": 0}, "max": {"x": 15, "y": 15, "z": 15}}


def _core(tmp_path) -> JournalCore:
    core = JournalCore(
        db=Database(tmp_path / "j.sqlite"), blobs=BlobStore(tmp_path / "blobs"), world=None, planner=None, queue=None
    )
    core.projects.load([{"project_id": p, "owner_player_id": "alice", "area": AREA} for p in ("a", "b")])
    return core


def _op(core, project: str, op_id: str, state: str, at: int, world: str = "w") -> None:
    proj = core.projects.project_for(Caller("admin", project, ""))
    entries = [((x, 1, 0), "minecraft:air", "minecraft:stone" if x % 2 else "minecraft:glass") for x in range(5)]
    summary = asyncio.run(
        core.prepare.store_plan(proj, Plan.from_entries(entries, world, 1, "r"), jpb.PlanSummary().region, [])
    )
    with core.db.tx() as c:
        c.execute(
            "INSERT INTO operations(op_id, project_id, plan_id, plan_hash, idempotency_key, state, planned,"
            " batches_total, created_ms, updated_ms) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (op_id, project, summary.plan_id, summary.plan_hash, op_id, state, 5, 1, at, at),
        )


def test_operations_newest_first_with_counts_and_one_with_materials(tmp_path) -> None:
    core = _core(tmp_path)
    _op(core, "a", "op_1", "applied", 1_000)
    _op(core, "a", "op_2", "conflict", 2_000)
    _op(core, "b", "op_3", "queued", 3_000)
    every = operation_list(core.ctx, jpb.OperationListRequest())
    assert [o.report.operation_id for o in every.operations] == ["op_3", "op_2", "op_1"]
    assert [o.project_id for o in every.operations] == ["b", "a", "a"]
    assert dict(every.state_counts) == {"applied": 1, "conflict": 1, "queued": 1}
    assert every.operations[0].plan.changed_blocks == 5 and not every.operations[0].plan.materials
    only_a = operation_list(core.ctx, jpb.OperationListRequest(project_id="a", limit=1))
    assert [o.report.operation_id for o in only_a.operations] == ["op_2"]
    assert dict(only_a.state_counts) == {"applied": 1, "conflict": 1}
    one = operation_list(core.ctx, jpb.OperationListRequest(operation_id="op_1")).operations[0]
    assert [(m.state, m.count) for m in one.plan.materials] == [("minecraft:glass", 3), ("minecraft:stone", 2)]
    assert (one.plan.region.min.x, one.plan.region.max.x, one.plan.region.max.y) == (0, 4, 1)
    with pytest.raises(McbError, match="not found"):
        operation_list(core.ctx, jpb.OperationListRequest(operation_id="op_none"))
    with pytest.raises(McbError, match="at most 1000"):
        operation_list(core.ctx, jpb.OperationListRequest(limit=1001))


def test_projects_with_their_parts(tmp_path) -> None:
    core = _core(tmp_path)
    with core.db.tx() as c:
        c.execute(
            "INSERT INTO parts(part_id, project_id, name, op_id, protected, bounds_json, count, mask_sha256,"
            " observed_at_define, created_ms) VALUES ('pt_1','a','tower','op_1',1,?,12,'x',0,0)",
            ('{"min":{"x":1,"y":2,"z":3},"max":{"x":4,"y":5,"z":6}}',),
        )
    res = project_list(core.ctx)
    assert [p.project_id for p in res.projects] == ["a", "b"] and res.projects[0].area.max.x == 15
    (part,) = res.parts
    assert (part.name, part.project_id, part.protected, part.block_count, part.bounds.max.z) == (
        "tower",
        "a",
        True,
        12,
        6,
    )


def test_earlier_worlds_operations_are_listed_only_when_asked_for_and_marked(tmp_path) -> None:
    """Issue 31 item 4: after `mcb world reset --keep-journal` the journal has seen world w, then v."""
    from mcb_journal import worldid

    core = _core(tmp_path)
    _op(core, "a", "op_old", "applied", 1_000, world="w")
    _op(core, "a", "op_new", "applied", 2_000, world="v")
    _op(core, "a", "op_none", "failed", 3_000, world="")  # a record without a world counts as current
    worldid.note_world(core.db, "w", 1)
    worldid.note_world(core.db, "v", 2)
    got = operation_list(core.ctx, jpb.OperationListRequest())
    assert [e.report.operation_id for e in got.operations] == ["op_none", "op_new"]
    assert got.old_world_operations == 1 and dict(got.state_counts) == {"applied": 1, "failed": 1}
    got = operation_list(core.ctx, jpb.OperationListRequest(include_old_worlds=True))
    assert {e.report.operation_id: e.old_world for e in got.operations} == {
        "op_none": False,
        "op_new": False,
        "op_old": True,
    }
    assert got.old_world_operations == 1 and dict(got.state_counts) == {"applied": 2, "failed": 1}
    # one operation asked for by id is answered, marked
    one = operation_list(core.ctx, jpb.OperationListRequest(operation_id="op_old"))
    assert [(e.report.operation_id, e.old_world) for e in one.operations] == [("op_old", True)]
    assert project_list(core.ctx).old_world_parts == 0
    with core.db.tx() as c:  # a part of each world
        for pid, name, op in (("pt_old", "old_tower", "op_old"), ("pt_new", "tower", "op_new")):
            c.execute(
                "INSERT INTO parts(part_id, project_id, name, op_id, protected, bounds_json, count, mask_sha256,"
                " observed_at_define, created_ms) VALUES (?,'a',?,?,0,?,8,'x',0,0)",
                (pid, name, op, '{"min":{"x":0,"y":0,"z":0},"max":{"x":1,"y":1,"z":1}}'),
            )
    index = project_index(core.ctx, "a", jpb.ProjectIndexRequest())  # the completions offer the current world's
    assert [o.operation_id for o in index.operations] == ["op_none", "op_new"]
    assert [p.name for p in index.parts] == ["tower"]


def test_project_index_is_one_projects_parts_and_operations(tmp_path) -> None:
    """Journal.ProjectIndex (the agent's, for the bridge's completions): only its own project."""
    core = _core(tmp_path)
    _op(core, "a", "op_1", "applied", 1_000)
    _op(core, "a", "op_2", "conflict", 2_000)
    _op(core, "b", "op_3", "queued", 3_000)
    with core.db.tx() as c:
        for pid, project, name in (("pt_1", "a", "tower"), ("pt_2", "b", "wall"), ("pt_3", "a", "roof")):
            c.execute(
                "INSERT INTO parts(part_id, project_id, name, op_id, protected, bounds_json, count, mask_sha256,"
                " observed_at_define, created_ms) VALUES (?,?,?,'op_1',0,?,8,'x',0,0)",
                (pid, project, name, '{"min":{"x":0,"y":0,"z":0},"max":{"x":1,"y":1,"z":1}}'),
            )
    a = project_index(core.ctx, "a", jpb.ProjectIndexRequest())
    assert [p.name for p in a.parts] == ["roof", "tower"] and [o.operation_id for o in a.operations] == ["op_2", "op_1"]
    assert a.operations[0].state == "conflict"
    assert [o.operation_id for o in project_index(core.ctx, "a", jpb.ProjectIndexRequest(limit=1)).operations] == [
        "op_2"
    ]
    b = project_index(core.ctx, "b", jpb.ProjectIndexRequest())
    assert [p.name for p in b.parts] == ["wall"] and [o.operation_id for o in b.operations] == ["op_3"]
    with pytest.raises(McbError, match="at most 1000"):
        project_index(core.ctx, "a", jpb.ProjectIndexRequest(limit=1001))
