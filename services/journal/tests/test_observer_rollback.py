"""After a world host crash its world rolls back to the last save (a game server keeps only what it
saved). An operation that was already `applied` may have lost blocks: the host says which in
``world_info.lastRestart`` once it has checked its unsaved writes, and the journal's observer puts a
notice on each affected operation's status, so nobody is left believing a rolled-back `applied`."""

from __future__ import annotations

import asyncio

from mcb.journal.v1 import journal_pb2 as jpb
from mcb.world.v1 import world_pb2
from mcb_journal import operations
from mcb_journal.observer import Observer

from services.journal.tests.test_idempotency_race import CALLER, make_core, prepare
from services.journal.tests.test_plan_summary_size import EventsJson


class RestartingWorld(EventsJson):
    """A world host (stand-in) whose events feed answers resync after a restart, and whose restart
    report becomes final (writes_checked) only on the third world_info call, as the Java host's does
    while it re-reads its unsaved writes on the server thread."""

    def __init__(self, affected: list[str], lost: int, stop: str = "unclean"):
        self.affected, self.lost, self.stop = affected, lost, stop
        self.info_calls = 0
        self.instance = (
            "h"  # the host the journal's own observer met at its first prepare (test_plan_summary_size.AirWorld)
        )

    async def world_info(self):
        self.info_calls += 1
        return world_pb2.WorldInfo(
            world_uuid="w-1",
            epoch=1,
            host_instance=self.instance,
            last_restart=world_pb2.RestartInfo(
                previous_stop=self.stop,
                lost_writes=self.lost,
                affected_operation_ids=self.affected,
                writes_checked=self.info_calls >= 3,
            ),
        )

    async def call(self, method, params, result_type):
        assert method == "events_since"
        resync = bool(params.cursor) and not params.cursor.startswith(f"{self.instance}:")
        return world_pb2.EventsSinceResult(
            next_cursor=f"{self.instance}:1",
            complete=True,
            resync_required=resync,
            reason="host restarted" if resync else "",
        )


def _op(core) -> str:
    async def main():
        plan = await prepare(core, "minecraft:stone")
        return (
            await core.build_apply(
                CALLER, jpb.BuildApplyRequest(plan_id=plan.plan_id, plan_hash=plan.plan_hash, idempotency_key="k")
            )
        ).operation_id

    return asyncio.run(main())


def test_an_applied_operation_whose_blocks_rolled_back_gets_a_notice(tmp_path):
    core = make_core(tmp_path)
    op = _op(core)
    operations.set_state(core.db, op, "applying")
    operations.set_state(core.db, op, "applied", message="done")
    world = RestartingWorld([op, "op_of_another_journal"], lost=40)
    obs = Observer(core.db, world)
    asyncio.run(obs.sync())  # the same host instance: no restart seen yet
    assert world.info_calls <= 1  # at most its capabilities (events_since.runs), once
    world.instance = "b"  # the host crashed and came back
    for _ in range(4):
        asyncio.run(obs.sync())
    assert world.info_calls >= 3, "asked until the host's check was final"
    rep = core.report(op)
    assert rep.state == "applied"
    assert len(rep.notices) == 1 and "40 of our block writes" in rep.notices[0] and "rolled back" in rep.notices[0]
    asked = world.info_calls
    for _ in range(3):
        asyncio.run(obs.sync())
    assert len(core.report(op).notices) == 1 and world.info_calls == asked, "then stopped asking"


def test_a_clean_restart_or_nothing_lost_adds_no_notice(tmp_path):
    core = make_core(tmp_path)
    op = _op(core)
    for stop, lost in (("clean", 0), ("unclean", 0)):
        world = RestartingWorld([op], lost=lost, stop=stop)
        obs = Observer(core.db, world)
        asyncio.run(obs.sync())
        world.instance = "c" + stop
        for _ in range(4):
            asyncio.run(obs.sync())
        assert list(core.report(op).notices) == [], stop
