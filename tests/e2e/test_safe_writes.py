"""ACCEPTANCE 1, 2, 3, 4 (with ABA), 6, 7, 8 and 11 against real processes and Redis, on each
world host (the embedded one; the Java test host as an external host), driven only through MCP
tools, the admin CLI and the host's automation principal (act as a player, the environment, an
external writer).
"""

from __future__ import annotations

import array
import base64
import json
import subprocess
import sys
import time
import uuid

import anyio
import grpc
import pytest
from e2e.components import run
from e2e.mcpclient import ToolError, apply_and_wait, call
from e2e.worldhost import ROLLS_BACK
from harness import wait_until

TIMEOUT = 60


def box(x0, y0, z0, x1, y1, z1, block="minecraft:stone_bricks", hollow=False):
    return {
        "version": 1,
        "operations": [
            {
                "type": "box",
                "min": {"x": x0, "y": y0, "z": z0},
                "max": {"x": x1, "y": y1, "z": z1},
                "block": block,
                "hollow": hollow,
            }
        ],
    }


def automation(comp, actor, blocks, player_id="player-1"):
    comp.world_rpc(
        "automation_set_blocks",
        {
            "actor": actor,
            "playerId": player_id,
            "blocks": [{"x": x, "y": y, "z": z, "state": s} for x, y, z, s in blocks],
        },
        principal="automation",
    )


def state_at(comp, x, y, z) -> str:
    res = comp.world_rpc("blocks_get", {"xyz": [x, y, z]})
    return res["palette"][res["state"][0]]


def test_1_manual_edit_after_prepare_is_a_conflict_and_stays(comp):
    async def scenario(client):
        plan = await call(client, "build_prepare", {"recipe": box(0, 64, 0, 3, 64, 3)})
        automation(comp, "player", [(2, 64, 2, "minecraft:glass")])
        st = await apply_and_wait(client, plan)
        assert st["state"] == "conflict"
        assert st["written"] == 0
        c = st["conflict_samples"][0]
        assert (c["pos"], c["current"], c["source"]) == ({"x": 2, "y": 64, "z": 2}, "minecraft:glass", "player")
        assert state_at(comp, 2, 64, 2) == "minecraft:glass"
        assert state_at(comp, 0, 64, 0) == "minecraft:air"  # all-or-nothing: nothing of the batch

    run(comp, scenario)


def test_2_edit_of_a_later_batch_stops_there_with_an_exact_report(comp):
    async def scenario(client):
        # 8 x 10 x 8 = 640... use 10 layers of 10x10: 1000 blocks = 2 batches (512 + 488), bottom-up.
        plan = await call(client, "build_prepare", {"recipe": box(10, 64, 10, 19, 73, 19, "minecraft:stone")})
        assert plan["batches"] == 2
        automation(comp, "external", [(15, 73, 15, "minecraft:gold_block")])  # top layer: batch 2
        st = await apply_and_wait(client, plan)
        assert st["state"] == "conflict", st
        assert st["written"] == 512 and st["batches_done"] == 1
        c = st["conflict_samples"][0]
        assert c["pos"] == {"x": 15, "y": 73, "z": 15}
        assert c["source"] == "external"  # no event was emitted: never called a player
        assert state_at(comp, 15, 73, 15) == "minecraft:gold_block"
        assert state_at(comp, 10, 64, 10) == "minecraft:stone"  # batch 1 written
        assert state_at(comp, 19, 73, 19) == "minecraft:air"  # batch 2 not written

    run(comp, scenario)


def test_3_changed_dependency_requires_replanning(comp):
    async def scenario(client):
        support = {"x": 30, "y": 63, "z": 30}
        plan = await call(
            client,
            "build_prepare",
            {
                "recipe": box(30, 64, 30, 30, 66, 30, "minecraft:oak_planks"),
                "dependencies": [{"pos": support, "state": "minecraft:grass_block[snowy=false]"}],
            },
        )
        automation(comp, "external", [(30, 63, 30, "minecraft:air")])
        st = await apply_and_wait(client, plan)
        assert st["state"] == "conflict"
        assert st["written"] == 0
        assert state_at(comp, 30, 64, 30) == "minecraft:air"
        with pytest.raises(ToolError) as exc:  # re-planning sees the changed support at once
            await call(
                client,
                "build_prepare",
                {
                    "recipe": box(30, 64, 30, 30, 66, 30, "minecraft:oak_planks"),
                    "dependencies": [{"pos": support, "state": "minecraft:grass_block[snowy=false]"}],
                },
            )
        assert exc.value.error["code"] == "conflict"

    run(comp, scenario)


def test_4_undo_respects_manual_edits_and_aba(comp):
    async def scenario(client):
        plan = await call(client, "build_prepare", {"recipe": box(40, 64, 40, 42, 64, 42, "minecraft:bricks")})
        st = await apply_and_wait(client, plan)
        assert st["state"] == "applied" and st["written"] == 9
        automation(comp, "player", [(40, 64, 40, "minecraft:glass")])  # a manual edit
        automation(comp, "player", [(42, 64, 42, "minecraft:glass")])  # A → B …
        automation(comp, "player", [(42, 64, 42, "minecraft:bricks")])  # … → A again (ABA)
        undo = await call(client, "operation_undo_prepare", {"operation_id": st["operation_id"]})
        conflicts = {(c["pos"]["x"], c["pos"]["z"]): c for c in undo["conflicts"]}
        assert set(conflicts) == {(40, 40), (42, 42)}
        assert conflicts[(40, 40)]["current"] == "minecraft:glass"
        assert conflicts[(42, 42)]["source"] == "player"
        assert undo["changed_blocks"] == 7
        done = await apply_and_wait(client, undo)
        assert done["state"] == "applied" and done["written"] == 7
        assert state_at(comp, 40, 64, 40) == "minecraft:glass"  # the manual value stays
        assert state_at(comp, 42, 64, 42) == "minecraft:bricks"  # ABA: refused, left as is
        assert state_at(comp, 41, 64, 41) == "minecraft:air"  # ours: restored
        # Undoing the same operation again: every block now has a later write of ours.
        again = await call(client, "operation_undo_prepare", {"operation_id": st["operation_id"]})
        assert again["changed_blocks"] == 0

    run(comp, scenario)


def test_8_environment_is_its_own_source(comp):
    async def scenario(client):
        plan = await call(client, "build_prepare", {"recipe": box(50, 64, 0, 51, 64, 0)})
        automation(comp, "environment", [(51, 64, 0, "minecraft:water[level=0]")])
        st = await apply_and_wait(client, plan)
        assert st["state"] == "conflict"
        assert st["conflict_samples"][0]["source"] == "environment"

    run(comp, scenario)


def test_parts_mask_and_protection(comp):
    async def scenario(client):
        plan = await call(client, "build_prepare", {"recipe": box(0, 64, 40, 4, 66, 44, hollow=True)})
        st = await apply_and_wait(client, plan)
        part = await call(client, "part_define", {"name": "walls", "operation_id": st["operation_id"]})
        assert part["block_count"] == st["written"] and part["protected"] is False
        # Bounds are not a mask: the hollow interior is inside the bounds but not in the part.
        with pytest.raises(ToolError) as exc:
            await call(client, "build_prepare", {"recipe": box(2, 65, 42, 2, 65, 42), "part_id": part["part_id"]})
        assert exc.value.error["code"] == "out_of_bounds"
        ok = await call(
            client,
            "build_prepare",
            {"recipe": box(0, 64, 40, 0, 64, 40, "minecraft:stone"), "part_id": part["part_id"]},
        )
        assert ok["changed_blocks"] == 1
        automation(comp, "player", [(4, 66, 44, "minecraft:glass")])
        # Parts do not overlap.
        with pytest.raises(ToolError) as exc:
            await call(client, "part_define", {"name": "walls-again", "operation_id": st["operation_id"]})
        assert exc.value.error["code"] == "invalid_request" and "walls" in exc.value.error["message"]
        got = await call(client, "part_get", {"part_id": part["part_id"]})
        assert got["external_changes_since"]["by_source"] == {"player": 1}
        # Protection is admin-only and then refuses agent writes.
        out = subprocess.run(
            [sys.executable, "-m", "mcb_cli.main", "part", "protect", part["part_id"]],
            env=comp.env | {"MCB_JOURNAL_ADDR": f"127.0.0.1:{comp.ports['journal_grpc']}"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0, out.stderr
        with pytest.raises(ToolError) as exc:
            await call(client, "build_prepare", {"recipe": box(0, 64, 40, 0, 64, 40, "minecraft:stone")})
        assert exc.value.error["code"] == "permission_denied"

    run(comp, scenario)


def test_11_agent_token_cannot_call_admin_or_spoof_identity(comp):
    from mcb.journal.v1 import journal_pb2 as jpb
    from mcb.journal.v1 import journal_pb2_grpc
    from mcb_rpc.auth import call_metadata

    addr = f"127.0.0.1:{comp.ports['journal_grpc']}"

    async def main():
        async with grpc.aio.insecure_channel(addr) as ch:
            admin = journal_pb2_grpc.JournalAdminStub(ch)
            with pytest.raises(grpc.RpcError) as exc:
                await admin.RecoveryReview(
                    jpb.OperationRef(operation_id="x"), metadata=call_metadata(comp.token("agent"))
                )
            assert exc.value.code() == grpc.StatusCode.PERMISSION_DENIED
            stub = journal_pb2_grpc.JournalStub(ch)
            for project, player in (("other-project", "p"), ("default", "not-the-owner")):
                with pytest.raises(grpc.RpcError) as exc:
                    await stub.ProjectContext(
                        jpb.ProjectContextRequest(), metadata=call_metadata(comp.token("agent"), project, player)
                    )
                assert exc.value.code() == grpc.StatusCode.PERMISSION_DENIED

    anyio.run(main)

    async def scenario(client):
        with pytest.raises(ToolError) as exc:
            await call(client, "build_prepare", {"recipe": box(100, 64, 0, 101, 64, 0)})
        assert exc.value.error["code"] == "out_of_bounds"

    run(comp, scenario)


def test_cancel_lets_at_most_the_batch_in_progress_finish(comp):
    """operation_cancel while batches go in groups (batch_apply_many, 8 a request): once it answers,
    the host writes at most the batch it had begun — the journal tells it with batch_cancel, so the
    rest of a request already sent is not started. Counted from the host's own events."""
    cursor = comp.world_rpc("events_since", {"cursor": ""})["nextCursor"]
    holder = {}

    async def scenario(client):
        plan = await call(client, "build_prepare", {"recipe": box(-64, 200, -64, -1, 223, -33, "minecraft:stone")})
        assert plan["batches"] == 96
        op = await call(
            client,
            "build_apply",
            {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
        )
        op_id = op["operation_id"]
        with anyio.fail_after(TIMEOUT):
            while (await call(client, "operation_status", {"operation_id": op_id}))["batches_done"] < 8:
                await anyio.sleep(0.02)
        await call(client, "operation_cancel", {"operation_id": op_id})
        holder["answered_ms"] = time.time() * 1000
        with anyio.fail_after(TIMEOUT):
            while (st := await call(client, "operation_status", {"operation_id": op_id}))["state"] == "applying":
                await anyio.sleep(0.05)
        holder["op"], holder["status"] = op_id, st

    run(comp, scenario)
    st = holder["status"]
    assert st["state"] == "cancelled", st
    ours, nxt = [], cursor
    while True:
        page = comp.world_rpc("events_since", {"cursor": nxt})
        ours += [e for e in page["events"] if e["source"] == "ours" and e["operationId"] == holder["op"]]
        nxt = page["nextCursor"]
        if page["complete"]:
            break
    late = [e for e in ours if int(e["atMillis"]) > holder["answered_ms"]]
    assert len(late) <= 512, f"{len(late)} blocks written after the cancel answered"
    assert len(ours) == st["written"] < 96 * 512, (len(ours), st)  # the journal's count is the host's


def test_7_change_feed_and_resync_after_host_restart(comp):
    async def scenario_before(client):
        region = {"min": {"x": 60, "y": 60, "z": 60}, "max": {"x": 63, "y": 70, "z": 63}}
        fresh = await call(client, "region_changes", {"region": region, "since_cursor": ""})
        automation(comp, "player", [(61, 64, 61, "minecraft:glass"), (62, 64, 62, "minecraft:glass")])
        automation(comp, "player", [(0, 64, 63, "minecraft:glass")])  # outside the region
        page = await call(client, "region_changes", {"region": region, "since_cursor": fresh["next_cursor"]})
        assert page["changes"] == 2 and page["by_source"] == {"player": 2}
        return page["next_cursor"], region

    holder = {}

    async def first(client):
        holder["cursor"], holder["region"] = await scenario_before(client)

    run(comp, first)
    comp.procs["world-host"].stop()
    comp.start("world-host")

    async def after(client):
        # A cursor from before the restart never silently misses a change: either the host forgot
        # its event log (resync_required) or it kept it (the Java host's data folder) and the feed
        # goes on with exactly the change made after the restart.
        automation(comp, "player", [(60, 65, 60, "minecraft:glass")])
        try:
            page = await call(client, "region_changes", {"region": holder["region"], "since_cursor": holder["cursor"]})
        except ToolError as exc:
            assert exc.error["code"] == "resync_required", exc.error
        else:
            assert page["changes"] == 1 and page["by_source"] == {"player": 1}, page
        summary = await call(client, "region_inspect", {**holder["region"], "detail": "summary"})
        # a clean stop keeps the world (the embedded save; the Java host saves at stop like a server)
        assert {p["state"]: p["count"] for p in summary["palette"]}.get("minecraft:glass") == 3, summary
        fresh = await call(client, "region_changes", {"region": holder["region"], "since_cursor": ""})
        assert fresh["changes"] == 0

    run(comp, after)


@pytest.mark.parametrize("point", ["before_intent", "after_intent", "during_write", "before_completion"])
@pytest.mark.parametrize(("per_request", "skip"), [(2, 0), (2, 1), (2, 2), (1, 1)])
def test_6_crash_leaves_recovery_required_and_admin_settles_it(comp, point, skip, per_request):
    # per_request: batches per world-protocol request (MCB_JOURNAL_BATCHES_PER_REQUEST): 2 sends groups
    # of two with batch_apply_many to hosts that list it (every case); 1 is one batch_apply per batch, as
    # with a host without it (the middle case: a group written ahead while one is in flight). The apply
    # is four groups either way.
    g = per_request
    env_admin = comp.env | {"MCB_JOURNAL_ADDR": f"127.0.0.1:{comp.ports['journal_grpc']}"}
    x0 = {"before_intent": -40, "after_intent": 0, "during_write": 40, "before_completion": 20}[point]
    y0 = 80 if g == 1 else 110  # the box: 16 x 8g x 16, four groups of g batches
    # the skip-th time the point is met: group skip's before/after_intent (group 0 on the event loop,
    # later ones in the writer thread while group skip-1 is in flight), during_write while group
    # skip is in flight, before_completion once group skip is answered (group skip+1 written ahead)
    z0 = 20 * skip  # each case in its own box
    comp.procs["journal"].stop()
    comp.start(
        "journal",
        {"MCB_FAULT_POINT": point, "MCB_FAULT_SKIP": str(skip), "MCB_JOURNAL_BATCHES_PER_REQUEST": str(g)},
    )
    journal = comp.procs["journal"]

    async def crash(client):
        recipe = box(x0, y0, z0, x0 + 15, y0 + 8 * g - 1, z0 + 15, "minecraft:stone")
        plan = await call(client, "build_prepare", {"recipe": recipe})
        assert plan["batches"] == 4 * g
        await call(
            client,
            "build_apply",
            {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
        )
        with anyio.fail_after(TIMEOUT):
            while journal.alive():
                await anyio.sleep(0.05)

    run(comp, crash)
    assert journal.popen.returncode == -9
    comp.start("journal")  # fault point no longer armed
    op_holder = {}
    probe = y0 + 8 * g + 4  # above the box

    async def after(client):
        ctx = await call(client, "project_context")
        stuck = [o for o in ctx["needs_attention"] if o["state"] == "recovery_required"]
        assert len(stuck) == 1
        op_holder["op"] = stuck[0]["operation_id"]
        plan = await call(client, "build_prepare", {"recipe": box(x0, probe, z0, x0, probe, z0)})
        with pytest.raises(ToolError) as exc:
            await call(
                client,
                "build_apply",
                {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
            )
        assert exc.value.error["code"] == "recovery_required"

    run(comp, after)
    op_id = op_holder["op"]
    out = subprocess.run(
        [sys.executable, "-m", "mcb_cli.main", "recovery", "review", op_id],
        env=env_admin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    review = json.loads(out.stdout)

    # (groups with intents, batches possibly written): the review counts each block of them exactly
    # once, whether or not its batch was recorded; each batch of a group in flight at the kill is all
    # written or not at all (the host's call), and the host starts them in order: any prefix of the
    # group may be written. No lost or duplicated write.
    def inflight(k):  # group k in flight at the kill: the batches before it written, any prefix of it
        return set(range(k * g, (k + 1) * g + 1))

    intended, written = {
        "before_intent": (0, {0}) if skip == 0 else (skip, inflight(skip - 1)),
        "after_intent": (1, {0}) if skip == 0 else (skip + 1, inflight(skip - 1)),  # group skip never sent
        "during_write": (skip + 1, inflight(skip)),
        "before_completion": (skip + 2, {(skip + 1) * g}),  # skip answered, not recorded; skip+1 not sent
    }[point]
    assert review["positions"] == 512 * g * intended, (skip, review)
    assert review["matches_after"] in {512 * n for n in written}, (skip, review)
    assert review["matches_before"] == review["positions"] - review["matches_after"], (skip, review)
    assert review["foreign_states"] == 0
    digest = review["current_digest"]
    if review["positions"]:  # (an empty mask — crash before the first intent — has nothing to change)
        # A foreign change after the review makes the digest stale: refused.
        automation(comp, "external", [(x0, y0, z0, "minecraft:glass")])
        stale = subprocess.run(
            [sys.executable, "-m", "mcb_cli.main", "recovery", "abandon", op_id, "--digest", digest],
            env=env_admin,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert stale.returncode == 1 and "invalid_request" in stale.stderr
        review2 = json.loads(
            subprocess.run(
                [sys.executable, "-m", "mcb_cli.main", "recovery", "review", op_id],
                env=env_admin,
                capture_output=True,
                text=True,
                timeout=60,
            ).stdout
        )
        assert review2["current_digest"] != digest and review2["foreign_states"] == 1
        digest = review2["current_digest"]
    done = subprocess.run(
        [sys.executable, "-m", "mcb_cli.main", "recovery", "abandon", op_id, "--digest", digest],
        env=env_admin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["state"] == "failed"
    if review["positions"]:
        assert state_at(comp, x0, y0, z0) == "minecraft:glass"  # nothing rewritten automatically

    async def unblocked(client):
        plan = await call(client, "build_prepare", {"recipe": box(x0, probe + 1, z0, x0, probe + 1, z0)})
        st = await apply_and_wait(client, plan)
        assert st["state"] == "applied"
        with pytest.raises(ToolError) as exc:
            await call(client, "operation_undo_prepare", {"operation_id": op_id})
        assert exc.value.error["code"] == "permission_denied"

    run(comp, unblocked)


def test_regenerate_tower_keeps_hand_made_windows(comp):
    """The main scenario: "keep my windows, add two floors, redo the roof"."""

    def tower(top: int, roof: str) -> dict:
        return {
            "version": 1,
            "operations": [
                {
                    "type": "box",
                    "min": {"x": -20, "y": 64, "z": 50},
                    "max": {"x": -16, "y": top, "z": 54},
                    "block": "minecraft:stone_bricks",
                    "hollow": True,
                },
                {
                    "type": "box",
                    "min": {"x": -20, "y": top + 1, "z": 50},
                    "max": {"x": -16, "y": top + 1, "z": 54},
                    "block": roof,
                },
            ],
        }

    async def scenario(client):
        v1 = await call(client, "build_prepare", {"recipe": tower(68, "minecraft:oak_planks")})
        st = await apply_and_wait(client, v1)
        assert st["state"] == "applied"
        part = await call(client, "part_define", {"name": "tower", "operation_id": st["operation_id"]})
        automation(comp, "player", [(-20, 66, 52, "minecraft:glass"), (-16, 66, 52, "minecraft:glass")])
        v2 = await call(
            client,
            "build_prepare",
            {"recipe": tower(70, "minecraft:spruce_planks"), "regenerate_part_id": part["part_id"]},
        )
        assert not v2.get("conflicts"), v2
        done = await apply_and_wait(client, v2)
        assert done["state"] == "applied", done
        # Redefining the part under its own name takes the regenerated blocks.
        again = await call(client, "part_define", {"name": "tower", "operation_id": done["operation_id"]})
        assert again["part_id"] == part["part_id"]
        assert again["block_count"] == (5 * 7 * 5 - 3 * 5 * 3) + 25  # the whole new design, windows' places too
        assert state_at(comp, -20, 66, 52) == "minecraft:glass"  # the windows survive
        assert state_at(comp, -16, 66, 52) == "minecraft:glass"
        assert state_at(comp, -20, 70, 50) == "minecraft:stone_bricks"  # two more floors
        assert state_at(comp, -18, 71, 52) == "minecraft:spruce_planks"  # the new roof
        assert state_at(comp, -18, 69, 52) == "minecraft:air"  # the old roof is gone
        assert state_at(comp, -18, 68, 52) == "minecraft:air"  # the old top face is gone
        assert state_at(comp, -20, 69, 50) == "minecraft:stone_bricks"  # old roof edge became wall

    run(comp, scenario)


@pytest.mark.parametrize("how", ["kill9", "stop"])
def test_world_host_killed_mid_apply_loses_and_duplicates_nothing(comp, how):
    """kill -9 (or a clean stop: a server restart) of the world host at random moments of a
    multi-batch apply, several times."""
    import random

    # java-core and paper-mock model a game server (blocks reach disk only at its save): a kill -9 rolls
    # the world back, and the journal re-sends the operation's earlier batches (executor._reverify);
    # an operation that had finished before the kill is not re-applied: the host reports it lost
    rng = random.Random(1234)
    x0 = -60 if how == "kill9" else 30
    for round_ in range(3 if how == "kill9" else 1):
        z0 = -60 + round_ * 10
        recipe = box(x0, 90, z0, x0 + 15, 129, z0 + 9, "minecraft:andesite")  # 16 x 40 x 10 = 6400: 13 batches
        holder: dict = {}

        async def start(client):
            plan = await call(client, "build_prepare", {"recipe": recipe})
            holder["plan"] = plan
            op = await call(
                client,
                "build_apply",
                {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
            )
            holder["op"] = op["operation_id"]
            await anyio.sleep(rng.uniform(0.05, 1.0))  # the fault's timing, not a synchronisation

        run(comp, start)
        if how == "kill9":
            comp.procs["world-host"].kill9()
        else:
            comp.procs["world-host"].stop()

        async def before_restart(client):  # with the host down, "applied" means: finished before the fault
            st = await call(client, "operation_status", {"operation_id": holder["op"]})
            holder["finished_before"] = st["state"] == "applied"

        run(comp, before_restart)
        comp.start("world-host")

        async def finish(client):
            with anyio.fail_after(TIMEOUT):
                while True:
                    st = await call(client, "operation_status", {"operation_id": holder["op"]})
                    if st["state"] not in ("prepared", "queued", "applying"):
                        return st
                    await anyio.sleep(0.1)

        result: dict = {}

        async def fin(client):
            result["st"] = await finish(client)

        run(comp, fin)
        st = result["st"]
        # The journal retried the same batch ids while the host restarted: idempotent, so the
        # operation completes with every block written exactly once.
        assert st["state"] == "applied", st
        assert st["written"] == holder["plan"]["changed_blocks"] == 6400
        got = comp.world_rpc(
            "region_read", {"min": {"x": x0, "y": 90, "z": z0}, "max": {"x": x0 + 15, "y": 129, "z": z0 + 9}}
        )
        idx = array.array("H")
        idx.frombytes(base64.b64decode(got["indices"]))
        assert len(idx) == 6400
        states = [got["palette"][i] for i in idx]
        if how == "kill9" and comp.host in ROLLS_BACK and holder["finished_before"]:
            # The kill landed after the operation had finished (the journal had nothing left to
            # re-send): the crash rolled the world back to its last save, as on Paper. Never silently:
            # every missing block is back to air (nothing clobbered) and the host names the operation.
            lost = sum(1 for x in states if x != "minecraft:andesite")
            assert set(states) <= {"minecraft:andesite", "minecraft:air"}, round_
            if lost:

                def checked() -> bool:
                    holder["last"] = comp.world_rpc("world_info", {}).get("lastRestart", {})
                    return bool(holder["last"].get("writesChecked"))

                wait_until(checked, TIMEOUT, "the restarted host to check its unsaved writes")
                last = holder["last"]
                assert last.get("previousStop") == "unclean", last
                assert holder["op"] in last.get("affectedOperationIds", []), last
                assert int(last.get("lostWrites", 0)) >= lost, (lost, last)

                # ... and the journal tells the agent: the operation's status carries a notice
                async def notices(client):
                    holder["notices"] = (await call(client, "operation_status", {"operation_id": holder["op"]})).get(
                        "notices", []
                    )

                def noticed() -> bool:
                    run(comp, notices)
                    return bool(holder["notices"])

                wait_until(noticed, TIMEOUT, "the journal to note the rollback on the operation", interval=0.5)
                assert "rolled back" in holder["notices"][0] and "apply the same plan again" in holder["notices"][0]
            continue
        assert set(states) == {"minecraft:andesite"}, round_


def test_lost_world_host_link_stops_and_requires_recovery(comp):
    env_admin = comp.env | {"MCB_JOURNAL_ADDR": f"127.0.0.1:{comp.ports['journal_grpc']}"}
    comp.procs["journal"].stop()
    comp.start("journal", {"MCB_LINK_RETRY_SECONDS": "1"})
    holder: dict = {}

    async def apply(client):
        plan = await call(client, "build_prepare", {"recipe": box(-64, 140, -64, -25, 149, -25)})  # 16,000
        op = await call(
            client,
            "build_apply",
            {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
        )
        holder["op"] = op["operation_id"]

    run(comp, apply)
    comp.procs["world-host"].kill9()  # the link drops in the middle of the apply

    async def wait(client):
        with anyio.fail_after(TIMEOUT):
            while True:
                st = await call(client, "operation_status", {"operation_id": holder["op"]})
                if st["state"] not in ("prepared", "queued", "applying"):
                    break
                await anyio.sleep(0.1)
        holder["st"] = st

    run(comp, wait)
    st = holder["st"]
    assert st["state"] == "recovery_required", st  # no new batch, nothing replayed blindly
    comp.start("world-host")
    review = json.loads(
        subprocess.run(
            [sys.executable, "-m", "mcb_cli.main", "recovery", "review", holder["op"]],
            env=env_admin,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    )
    assert review["foreign_states"] == 0
    assert review["matches_before"] + review["matches_after"] == review["positions"]
    assert review["matches_after"] >= st["written"]
    # confirmed writes + at most the unfinished request: a group of 8 batches (MCB_JOURNAL_BATCHES_PER_REQUEST)
    # to a host with batch_apply_many, one batch to one without
    assert review["positions"] - st["written"] <= 512 * 8
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcb_cli.main",
            "recovery",
            "abandon",
            holder["op"],
            "--digest",
            review["current_digest"],
        ],
        env=env_admin,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    comp.procs["journal"].stop()
    comp.start("journal")
