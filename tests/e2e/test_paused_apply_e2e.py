"""An apply made while writes are paused waits and runs when they resume (issue 31 item 6), on each
world host: `waiting_for_resume` in operation_status (with a message that says so) and on the ops
dashboard, through a journal killed with SIGKILL meanwhile (nothing to recover: it wrote no
intent); an operation cancelled while it waits never runs. Before, such an apply answered `queued`
and ended `cancelled` (paused) though nobody cancelled it."""

from __future__ import annotations

import uuid

import anyio
import httpx
from e2e.components import run
from e2e.mcpclient import call, wait_terminal
from harness import PY, free_port, start_process, wait_until


def _box(x: int, block: str) -> dict:
    return {
        "version": 1,
        "operations": [
            {"type": "box", "min": {"x": x, "y": 70, "z": 30}, "max": {"x": x + 1, "y": 71, "z": 31}, "block": block}
        ],
    }


async def _prepare_and_apply(client, x: int, block: str) -> str:
    plan = await call(client, "build_prepare", {"recipe": _box(x, block)})
    op = await call(
        client,
        "build_apply",
        {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
    )
    return op["operation_id"]


async def _until_state(client, op_id: str, state: str, timeout: float = 60) -> dict:
    with anyio.fail_after(timeout):
        while True:
            st = await call(client, "operation_status", {"operation_id": op_id})
            if st["state"] == state:
                return st
            assert st["state"] in ("queued", "waiting_for_resume", state), st  # never cancelled by the pause
            await anyio.sleep(0.1)


def test_an_apply_made_while_paused_waits_and_runs_when_writes_resume(comp) -> None:
    port = free_port()
    dash = start_process(
        "dashboard",
        [PY, "-m", "mcb_dashboard"],
        comp.runtime / "logs",
        env=dict(comp.env) | {"MCB_DASHBOARD_PORT": str(port)},
        health_url=f"http://127.0.0.1:{port}/health",
        timeout=60,
    )
    ops: dict[str, str] = {}
    try:
        assert comp.world_rpc("pause", {"reason": "owner said stop"})["paused"] is True

        async def made_while_paused(client) -> None:
            ops["kept"] = await _prepare_and_apply(client, 40, "minecraft:gold_block")
            ops["dropped"] = await _prepare_and_apply(client, 44, "minecraft:diamond_block")
            for name in ("kept", "dropped"):
                st = await _until_state(client, ops[name], "waiting_for_resume")
                assert st["written"] == 0 and "waiting for writes to resume" in st["message"], st
            cancelled = await call(client, "operation_cancel", {"operation_id": ops["dropped"]})
            assert cancelled["state"] == "cancelled", cancelled

        run(comp, made_while_paused)

        # the dashboard lists the waiting one among the queued and running, with its state
        def shows_waiting() -> bool:
            html = httpx.get(f"http://127.0.0.1:{port}/", timeout=10).text
            active = html.split('id="active-ops"', 1)[-1].split("</table>", 1)[0]
            return ops["kept"] in active and "waiting_for_resume" in active and ops["dropped"] not in active

        wait_until(shows_waiting, 30, "the dashboard to show the waiting operation")

        # a journal killed while it waits: nothing was written, no intent, so nothing to recover
        comp.procs["journal"].kill9()
        comp.start("journal")

        async def still_waiting(client) -> None:
            st = await call(client, "operation_status", {"operation_id": ops["kept"]})
            assert st["state"] == "waiting_for_resume", st

        run(comp, still_waiting)
        assert comp.world_rpc("resume", {"reason": "checked"})["paused"] is False

        async def runs_after_resume(client) -> None:
            st = await wait_terminal(client, ops["kept"], timeout=60)
            assert st["state"] == "applied" and st["written"] == 8, st
            st = await call(client, "operation_status", {"operation_id": ops["dropped"]})
            assert st["state"] == "cancelled" and st["written"] == 0, st

        run(comp, runs_after_resume)
        res = comp.world_rpc("blocks_get", {"xyz": [40, 70, 30, 44, 70, 30]})
        states = [res["palette"][i] for i in res["state"]]
        assert states[0] == "minecraft:gold_block" and states[1].startswith("minecraft:air"), states
    finally:
        comp.world_rpc("resume", {"reason": "test end"})
        dash.stop()
