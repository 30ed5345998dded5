"""JournalContext.load_plan keeps the last plan it decoded (issue 29: build_apply and then the
executor load the same plan): the same blob gives the same plan without decoding it again, another
blob its own plan, and a blob that went missing or was damaged is refused as without it."""

from __future__ import annotations

import asyncio
import zlib

import pytest
from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.errors import ErrorCode, McbError
from mcb_journal import context as context_mod
from mcb_journal.plans import Plan
from mcb_journal.projects import Caller

from services.journal.tests.test_plan_summary_size import core, recipe  # noqa: F401 - the fixture


def test_the_last_plan_is_decoded_once_and_its_blob_still_checked(core, monkeypatch):  # noqa: F811
    caller = Caller("agent", "p", "alice")
    a = asyncio.run(core.prepare.build_prepare(caller, jpb.BuildPrepareRequest(recipe_json=recipe(4))))
    b = asyncio.run(core.prepare.build_prepare(caller, jpb.BuildPrepareRequest(recipe_json=recipe(5))))
    decoded: list[int] = []
    real = Plan.decode

    def counting(raw: bytes) -> Plan:
        decoded.append(len(raw))
        return real(raw)

    monkeypatch.setattr(context_mod.Plan, "decode", staticmethod(counting))
    pa = core.load_plan(a.plan_id)
    assert core.load_plan(a.plan_id) is pa and len(decoded) == 1
    pb = core.load_plan(b.plan_id)
    assert len(decoded) == 2 and pb != pa and len(pb) == 5 * 5 * 40
    assert core.load_plan(b.plan_id) is pb and len(decoded) == 2
    assert core.load_plan(a.plan_id) == pa and len(decoded) == 3
    sha = core.db.row("SELECT blob_sha256 FROM plans WHERE plan_id=?", a.plan_id)["blob_sha256"]
    path = core.blobs._path(sha)
    path.write_bytes(zlib.compress(b'{"format":"mcb.plan.v1"}'))  # damaged: fails its checksum
    with pytest.raises(McbError) as err:
        core.load_plan(a.plan_id)
    assert err.value.code == ErrorCode.INTERNAL
    path.unlink()
    with pytest.raises(McbError) as err:
        core.load_plan(a.plan_id)
    assert err.value.code == ErrorCode.NOT_FOUND


def test_a_plans_bounds_are_the_box_around_its_positions():
    """Plan.bounds (computed once: the Before picture and the executor's area check use it)."""
    from mcb_common.geometry import Box, Vec3

    entries = [((x, 64 - x % 7, -3 * x), "minecraft:air", "minecraft:stone") for x in range(-20, 31)]
    plan = Plan.from_entries(entries, "w", 1, "r")
    assert plan.bounds == Box(Vec3(-20, 58, -90), Vec3(30, 64, 60))
    assert plan.bounds is plan.bounds
    assert Plan.from_entries([], "w", 1, "r").bounds is None
