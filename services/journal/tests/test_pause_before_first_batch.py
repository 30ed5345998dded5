"""Issue 31 item 6, the window: a pause that lands after the executor's ``world_info`` check and
before the first batch reaches the host. The host refuses that batch whole (nothing written), so
the operation waits (``waiting_for_resume``) like one whose turn came while paused — it used to
end ``cancelled`` (``paused``) though nobody cancelled it — and runs when writes resume."""

from __future__ import annotations

import asyncio

from mcb.journal.v1 import journal_pb2 as jpb
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError

from services.journal.tests.test_idempotency_race import CALLER, SlowWorld, make_core, prepare


class PausedInTheWindow(SlowWorld):
    """``world_info`` says writes run; the pause lands just after it: batches answer ``paused``
    until ``resume``; then batches apply (every entry written)."""

    def __init__(self):
        self.paused = False
        self.pause_next_batch = True
        self.batches: list[str] = []

    async def world_info(self):
        info = await super().world_info()
        info.paused = self.paused
        return info

    async def call(self, method, params, result_type):
        if method != "batch_apply":
            return await super().call(method, params, result_type)
        self.batches.append(params["batchId"])
        if self.pause_next_batch:  # an owner's /ai stop between the check and this batch
            self.pause_next_batch, self.paused = False, True
        if self.paused:
            raise McbError(ErrorCode.PAUSED, "writes are paused (/ai stop); call resume first")
        return world_pb2.BatchApplyResult(status="applied")


def test_a_pause_before_the_first_batch_waits_and_runs_after_resume(tmp_path):
    core = make_core(tmp_path)
    world = core.world = PausedInTheWindow()

    async def main():
        plan = await prepare(core, "minecraft:stone")
        op = await core.build_apply(
            CALLER, jpb.BuildApplyRequest(plan_id=plan.plan_id, plan_hash=plan.plan_hash, idempotency_key="k")
        )
        ex = core.executor()
        await ex.run_operation(op.operation_id)
        waiting = core.report(op.operation_id)
        batches = core.db.all("SELECT * FROM batches WHERE op_id=?", op.operation_id)
        assert not await ex.resume_waiting()  # still paused: it keeps waiting
        world.paused = False  # /ai resume
        ex._next_pause_check = 0.0
        assert await ex.resume_waiting()
        await ex.run_operation(op.operation_id)
        return op.operation_id, waiting, batches, core.report(op.operation_id)

    op_id, waiting, batches, done = asyncio.run(main())
    assert waiting.state == "waiting_for_resume", waiting
    assert "paused" in waiting.message and waiting.written == 0
    assert batches == []  # nothing of it was written: no batch row to recover or to clash with
    assert done.state == "applied" and done.written == 16, done
    assert world.batches == [f"{op_id}.0", f"{op_id}.0"]  # the same id, sent again after the resume


def test_a_pause_after_the_first_batch_still_stops_the_operation(tmp_path):
    core = make_core(tmp_path)
    core.limits.batch_blocks = 4  # four batches of the 4×4 box
    world = core.world = PausedInTheWindow()
    world.pause_next_batch = False
    sent = 0

    async def call(method, params, result_type):
        nonlocal sent
        if method == "batch_apply":
            sent += 1
            world.paused = sent >= 2  # paused after batch 1 was applied: a stop means stop
        return await PausedInTheWindow.call(world, method, params, result_type)

    world.call = call

    async def main():
        plan = await prepare(core, "minecraft:stone")
        op = await core.build_apply(
            CALLER, jpb.BuildApplyRequest(plan_id=plan.plan_id, plan_hash=plan.plan_hash, idempotency_key="k")
        )
        await core.executor().run_operation(op.operation_id)
        return core.report(op.operation_id)

    rep = asyncio.run(main())
    assert rep.state == "cancelled" and rep.written == 4, rep
