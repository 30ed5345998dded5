"""Issue 32 item 1: PlanEntries (the camera's plan previews) answers a prepared plan's desired
states to its own project only, and refuses an unknown, expired or other world's plan with the
codes build_apply uses — through the journal core's real build_prepare over a real SQLite file."""

from __future__ import annotations

import asyncio

import pytest
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.errors import ErrorCode, McbError
from mcb_journal.preview import plan_entries
from mcb_journal.projects import Caller

from services.journal.tests.test_world_changed import CALLER, A, B, core, prepare  # noqa: F401 - fixture

OTHER = Caller("service", "q", "")


def entries(core, req: jpb.PlanEntriesRequest, caller: Caller = CALLER) -> jpb.PlanEntriesResponse:  # noqa: F811
    return asyncio.run(plan_entries(core.ctx, caller, req))


def refused(core, req: jpb.PlanEntriesRequest, caller: Caller = CALLER) -> McbError:  # noqa: F811
    with pytest.raises(McbError) as e:
        entries(core, req, caller)
    return e.value


def test_the_plans_desired_states_inside_a_box(core):  # noqa: F811
    s = prepare(core)  # glass at x 0..2, y 65, z 0
    full = entries(core, jpb.PlanEntriesRequest(plan_id=s.plan_id))
    assert full.plan_hash == s.plan_hash and full.total == 3
    got = {
        (full.xyz[3 * i], full.xyz[3 * i + 1], full.xyz[3 * i + 2]): full.palette[full.desired[i]]
        for i in range(len(full.desired))
    }
    assert got == {(x, 65, 0): "minecraft:glass" for x in range(3)}
    box = jpb.PlanEntriesRequest(plan_id=s.plan_id)
    box.region.min.x, box.region.min.y, box.region.min.z = 1, 60, -5
    box.region.max.x, box.region.max.y, box.region.max.z = 9, 70, 5
    part = entries(core, box)
    assert list(part.xyz) == [1, 65, 0, 2, 65, 0] and part.total == 3
    head = entries(core, jpb.PlanEntriesRequest(plan_id=s.plan_id, header_only=True))
    assert head.total == 3 and not head.xyz and head.plan_hash == s.plan_hash
    assert (head.bounds.min.x, head.bounds.min.y, head.bounds.max.x, head.bounds.max.z) == (0, 65, 2, 0)


def test_unknown_and_other_projects_plans_are_not_found(core):  # noqa: F811
    s = prepare(core)
    core.projects.load(
        [
            {
                "project_id": pid,
                "owner_player_id": owner,
                "area": {"min": {"x": -200, "y": -64, "z": -200}, "max": {"x": 200, "y": 319, "z": 200}},
            }
            for pid, owner in (("p", "alice"), ("q", "bob"))
        ]
    )
    err = refused(core, jpb.PlanEntriesRequest(plan_id="plan-nope"))
    assert err.code == ErrorCode.NOT_FOUND and err.details == {"plan_id": "plan-nope"}
    # the service token acting for another project (its metadata) does not see p's plan
    err = refused(core, jpb.PlanEntriesRequest(plan_id=s.plan_id), OTHER)
    assert err.code == ErrorCode.NOT_FOUND and "'q'" in err.message
    assert entries(core, jpb.PlanEntriesRequest(plan_id=s.plan_id), Caller("service", "p", "")).total == 3
    assert refused(core, jpb.PlanEntriesRequest()).code == ErrorCode.INVALID_REQUEST


def test_an_expired_plan_is_stale_snapshot(core):  # noqa: F811
    s = prepare(core)
    with core.db.tx() as c:
        c.execute("UPDATE plans SET expires_ms=1 WHERE plan_id=?", (s.plan_id,))
    err = refused(core, jpb.PlanEntriesRequest(plan_id=s.plan_id))
    assert err.code == ErrorCode.STALE_SNAPSHOT and err.details["reason"] == "plan_expired"
    assert "prepare it again" in err.message


def test_a_plan_of_another_world_is_world_changed(core):  # noqa: F811
    s = prepare(core)
    core.world.uuid = B
    err = refused(core, jpb.PlanEntriesRequest(plan_id=s.plan_id))
    assert err.code == ErrorCode.WORLD_CHANGED and err.details["current_world"] == B
    # the same world at a later epoch: stale_snapshot (prepared before the epoch changed)
    core.world.uuid, core.world.epoch = A, 2
    err = refused(core, jpb.PlanEntriesRequest(plan_id=s.plan_id))
    assert err.code == ErrorCode.STALE_SNAPSHOT and err.details["reason"] == "epoch_changed"
