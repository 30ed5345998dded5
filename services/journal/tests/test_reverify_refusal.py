"""A world host that comes back from a crash PAUSED (a player's /ai stop, or its damaged state file)
refuses the journal's re-check of earlier batches. That refusal wrote nothing: the operation stops
as cancelled (or failed for other refusals) with an honest message, never `recovery_required`,
which would block every later apply until an admin reviewed an operation with nothing to review."""

from __future__ import annotations

import asyncio

from mcb.journal.v1 import journal_pb2 as jpb
from mcb_common.errors import ErrorCode, McbError

from services.journal.tests.test_idempotency_race import CALLER, make_core, prepare


class PausedHost:
    async def world_info(self):
        raise AssertionError("not asked")

    async def call(self, method, params, result_type):
        assert method == "batch_apply"
        raise McbError(ErrorCode.PAUSED, "writes are paused on the host")


def test_a_host_back_paused_cancels_instead_of_requiring_recovery(tmp_path):
    core = make_core(tmp_path)

    async def main():
        plan_summary = await prepare(core, "minecraft:stone")
        op = await core.build_apply(
            CALLER,
            jpb.BuildApplyRequest(plan_id=plan_summary.plan_id, plan_hash=plan_summary.plan_hash, idempotency_key="k"),
        )
        core.world = PausedHost()
        plan = core.load_plan(plan_summary.plan_id)
        return await core.executor()._reverify(op.operation_id, plan, 1, core.limits.batch_blocks)

    restored, stop = asyncio.run(main())
    assert restored == 0
    state, message, err = stop
    assert state == "cancelled" and err.code == ErrorCode.PAUSED
    assert "apply the same plan again" in message
