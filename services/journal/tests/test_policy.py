"""Issue 30 item 4: rights and the build area are decided in one place (policy.py), and every
caller asks it: projects.py (rights in a project), prepare.py (dependencies), schematics.py (an
export box), blame.py and histmap.py (a history box), parts.py (protected parts) and the executor
before every batch."""

from __future__ import annotations

import re
from pathlib import Path

from mcb_common.errors import ErrorCode
from mcb_common.geometry import Box, Vec3
from mcb_journal import policy

AREA = Box(Vec3(0, 0, 0), Vec3(9, 9, 9))
SRC = Path(policy.__file__).parent


def test_rights_are_the_owners_an_admins_or_a_services():
    assert policy.rights_refusal("agent", "alice", "p", "alice") is None
    assert policy.rights_refusal("admin", "", "p", "alice") is None
    assert policy.rights_refusal("service", "", "p", "alice") is None
    err = policy.rights_refusal("agent", "bob", "p", "alice")
    assert err is not None and err.code == ErrorCode.PERMISSION_DENIED
    assert err.message == "player bob has no rights in project 'p'"
    assert policy.rights_refusal("agent", "", "p", "alice").message == "player (none) has no rights in project 'p'"


def test_a_batch_is_refused_when_its_player_lost_the_project_or_a_block_left_the_area():
    entries = [(0, 0, 0, "minecraft:air", "minecraft:stone"), (9, 9, 9, "minecraft:air", "minecraft:stone")]
    assert policy.batch_refusal("alice", AREA, "alice", entries) is None
    assert policy.batch_refusal("alice", AREA, "", entries) is None  # an admin's or a service's apply
    revoked = policy.batch_refusal("bob", AREA, "alice", entries)
    assert revoked is not None and revoked.code == ErrorCode.PERMISSION_DENIED
    moved = policy.batch_refusal("alice", Box(Vec3(0, 0, 0), Vec3(8, 9, 9)), "alice", entries)
    assert moved is not None and moved.code == ErrorCode.OUT_OF_BOUNDS
    assert moved.message == "(9,9,9) is outside the project area now"


def test_the_area_bounds_are_inclusive_and_the_first_position_outside_is_named():
    assert policy.outside(AREA, [(0, 0, 0), (9, 9, 9)]) is None
    assert policy.outside(AREA, [(5, 5, 5), (10, 0, 0), (-1, 0, 0)]) == (10, 0, 0)
    dep = policy.area_refusal(AREA, (0, -1, 0), "dependency")
    assert dep is not None and dep.code == ErrorCode.OUT_OF_BOUNDS
    assert dep.message == "dependency {'x': 0, 'y': -1, 'z': 0} is outside the project area"
    assert policy.area_refusal(AREA, (0, 0, 0), "dependency") is None
    box = policy.box_refusal(
        AREA, Box(Vec3(5, 5, 5), Vec3(10, 5, 5)), "the export box must lie inside the project area"
    )
    assert box is not None and box.details["area"] == AREA.as_dict()
    assert policy.box_refusal(AREA, AREA, "the export box must lie inside") is None


def test_only_an_admin_overrides_a_protected_part():
    assert policy.overrides_protection("admin")
    assert not policy.overrides_protection("agent") and not policy.overrides_protection("service")


def test_no_other_journal_module_decides_rights_or_the_area_itself():
    """Outside policy.py no module compares a principal, tests containment in an area or reads a
    project's area from its row (projects.py reads it once, overview.py lists it, db.py holds it).
    The servicer's scope tables (who may call which method) are the gRPC boundary's, not a project's."""
    decides = re.compile(r"principal\s*(==|!=|not in\b|in\b)|\.contains(_box)?\(|area_json")
    found = []
    for path in sorted(SRC.glob("*.py")):
        if path.name in ("policy.py", "servicer.py"):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if decides.search(line) and not (
                path.name in ("projects.py", "overview.py", "db.py") and "area_json" in line
            ):
                found.append(f"{path.name}:{n}: {line.strip()}")
    assert found == []


def _queued(core, key: str) -> str:
    import asyncio

    from mcb.journal.v1 import journal_pb2 as jpb

    from services.journal.tests.test_executor_queue import CALLER, recipe

    async def main() -> str:
        plan = await core.prepare.build_prepare(CALLER, jpb.BuildPrepareRequest(recipe_json=recipe(64)))
        return (
            await core.build_apply(
                CALLER, jpb.BuildApplyRequest(plan_id=plan.plan_id, plan_hash=plan.plan_hash, idempotency_key=key)
            )
        ).operation_id

    return asyncio.run(main())


def test_the_executor_asks_the_policy_before_every_batch(tmp_path):
    """A queued operation whose player lost the project, or whose blocks left a moved area, writes
    nothing: the first batch is refused (the world host sees no batch)."""
    import asyncio

    from services.journal.tests.test_executor_queue import RecordingWorld, make_core

    world = RecordingWorld()
    core = make_core(tmp_path, world)
    area = {"min": {"x": -50, "y": -64, "z": -50}, "max": {"x": 50, "y": 319, "z": 50}}
    for key, project, code in (
        ("k1", {"project_id": "p", "owner_player_id": "bob", "area": area}, ErrorCode.PERMISSION_DENIED),
        (
            "k2",
            {
                "project_id": "p",
                "owner_player_id": "alice",
                "area": {"min": {"x": 1, "y": -64, "z": 1}, "max": {"x": 50, "y": 319, "z": 50}},
            },
            ErrorCode.OUT_OF_BOUNDS,
        ),
    ):
        core.projects.load([{"project_id": "p", "owner_player_id": "alice", "area": area}])
        op = _queued(core, key)
        core.projects.load([project])  # the owner changed, or the area moved, after the apply
        asyncio.run(core.executor().run_operation(op))
        rep = core.report(op)
        assert rep.state == "failed" and rep.error.code == str(code) and rep.written == 0, rep
    assert world.batches == []


def test_a_core_as_built_checks_protected_parts_at_prepare_and_at_apply(tmp_path):
    """Issue 30 item 2: the jobs are built with the core (no later wiring that a caller may skip):
    a core made the plain way refuses a write over a protected part, at prepare and at apply."""
    import asyncio
    import inspect

    import pytest
    from mcb.journal.v1 import journal_pb2 as jpb
    from mcb_common.errors import McbError
    from mcb_journal.apply import Apply
    from mcb_journal.executor import Executor
    from mcb_journal.prepare import Prepare

    from services.journal.tests.test_executor_queue import CALLER, RecordingWorld, make_core, recipe

    for job in (Prepare, Apply, Executor):  # parts is a required argument, not an optional field
        assert inspect.signature(job).parameters["parts"].default is inspect.Parameter.empty
    core = make_core(tmp_path, RecordingWorld())

    async def main() -> None:
        first = await core.prepare.build_prepare(CALLER, jpb.BuildPrepareRequest(recipe_json=recipe(64)))
        op = await core.build_apply(
            CALLER, jpb.BuildApplyRequest(plan_id=first.plan_id, plan_hash=first.plan_hash, idempotency_key="k1")
        )
        await core.executor().run_operation(op.operation_id)
        again = await core.prepare.build_prepare(CALLER, jpb.BuildPrepareRequest(recipe_json=recipe(64)))
        part = await core.parts.part_define(CALLER, "floor", op.operation_id)
        core.parts.part_protect(part["part_id"], True)
        with pytest.raises(McbError) as at_prepare:
            await core.prepare.build_prepare(CALLER, jpb.BuildPrepareRequest(recipe_json=recipe(64)))
        with pytest.raises(McbError) as at_apply:  # prepared before the protection
            await core.build_apply(
                CALLER, jpb.BuildApplyRequest(plan_id=again.plan_id, plan_hash=again.plan_hash, idempotency_key="k2")
            )
        for e in (at_prepare.value, at_apply.value):
            assert e.code == ErrorCode.PERMISSION_DENIED and e.details["part_id"] == part["part_id"]

    asyncio.run(main())


def test_a_batch_inside_its_bounds_is_refused_as_position_by_position():
    """The executor hands the bounds of its whole plan with every batch (issue 29): when the area
    holds them no position is looked at; when it does not, the answer is the first position outside,
    as without them."""
    inside = [(x, y, z, "a", "b") for x in range(10) for y in (0, 9) for z in (0, 9)]
    plan_bounds = Box(Vec3(0, 0, 0), Vec3(12, 9, 9))  # the plan goes on past x = 9, in later batches
    assert policy.batch_refusal("alice", AREA, "alice", inside, Box(Vec3(0, 0, 0), Vec3(9, 9, 9))) is None
    assert policy.batch_refusal("alice", AREA, "alice", inside, plan_bounds) is None
    for bad in ((10, 5, 5), (5, -1, 5), (5, 5, 10)):
        positions = inside[:7] + [(*bad, "a", "b")] + inside[7:] + [(11, 9, 9, "a", "b")]
        for bounds in (None, plan_bounds, Box(Vec3(-1, -1, -1), Vec3(11, 9, 10))):
            err = policy.batch_refusal("alice", AREA, "alice", positions, bounds)
            assert err is not None and err.code == ErrorCode.OUT_OF_BOUNDS
            assert f"({bad[0]},{bad[1]},{bad[2]})" in err.message
    revoked = policy.batch_refusal("alice", AREA, "bob", inside, plan_bounds)
    assert revoked is not None and revoked.code == ErrorCode.PERMISSION_DENIED
