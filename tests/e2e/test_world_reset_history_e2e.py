"""Issue 31 item 4 end to end on the embedded host: `mcb up`, a build and a part; stop; `mcb world
reset --keep-journal`; `mcb up` again (the saved ports, a new shell), a build and a part in the new
world. Then every view of the history lists the current world's operations and parts by default
and the old world's only when asked for, marked (`project_context`, the dashboard, chat `status`),
and chat `undo` and `part_get` treat the old world's entries as `build_prepare` does
(world_changed)."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import anyio
import httpx
import pytest
from e2e.conftest import start_stack
from e2e.mcpclient import ToolError, call, http_client, wait_terminal
from e2e.test_chat_e2e import _chat, _why
from harness import ROOT


def box(x: int, block: str) -> dict:
    return {
        "version": 1,
        "operations": [
            {"type": "box", "min": {"x": x, "y": 64, "z": 10}, "max": {"x": x + 1, "y": 65, "z": 11}, "block": block}
        ],
    }


async def build_and_name(client, x: int, block: str, name: str) -> tuple[str, str]:
    plan = await call(client, "build_prepare", {"recipe": box(x, block)})
    op = await call(
        client,
        "build_apply",
        {
            "plan_id": plan["plan_id"],
            "plan_hash": plan["plan_hash"],
            "idempotency_key": f"{name}-{uuid.uuid4().hex[:6]}",
        },
    )
    assert (await wait_terminal(client, op["operation_id"]))["state"] == "applied"
    part = await call(client, "part_define", {"name": name, "operation_id": op["operation_id"]})
    return op["operation_id"], part["part_id"]


def test_views_after_a_reset_that_keeps_the_journal(tmp_path) -> None:
    runtime = tmp_path / "runtime"
    ids: dict[str, str] = {}
    stack = start_stack(runtime)
    try:

        async def old_world() -> None:
            async with http_client(stack.mcp_url, stack.token("agent")) as client:
                ids["old_op"], ids["old_part"] = await build_and_name(client, 0, "minecraft:stone_bricks", "old_hut")

        anyio.run(old_world)
    finally:
        assert stack.stop() == 0, stack.log()
    env = {k: v for k, v in stack.env.items() if not k.endswith("_PORT")}  # a new shell: the saved ports
    r = subprocess.run(
        [sys.executable, "-m", "mcb_cli.main", "world", "reset", "--keep-journal"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    # start_stack appends to mcb-up.log and waits for READY in it: the second run writes a fresh one
    (runtime / "mcb-up.log").rename(runtime / "mcb-up-old-world.log")
    stack = start_stack(runtime, saved_ports=True)
    try:

        async def new_world() -> None:
            async with http_client(stack.mcp_url, stack.token("agent")) as client:
                ids["new_op"], ids["new_part"] = await build_and_name(client, 4, "minecraft:oak_planks", "new_hut")
                # project_context: the current world's operations only, and how many are hidden
                ctx = await call(client, "project_context")
                recent = [o["operation_id"] for o in ctx.get("recent_operations", [])]
                assert ids["new_op"] in recent and ids["old_op"] not in recent, ctx
                assert ctx["old_world_operations"] == 1, ctx
                assert not any(o.get("old_world") for o in ctx["recent_operations"])
                # asked for: both, the old one marked
                ctx = await call(client, "project_context", {"include_old_worlds": True})
                marked = {o["operation_id"]: bool(o.get("old_world")) for o in ctx["recent_operations"]}
                assert marked[ids["old_op"]] is True and marked[ids["new_op"]] is False, ctx
                assert ctx.get("old_world_operations", 0) == 0
                # part_get: the old world's part is refused as build_prepare(regenerate_part_id) refuses it
                for tool, args in (
                    ("part_get", {"part_id": ids["old_part"]}),
                    ("build_prepare", {"recipe": box(0, "minecraft:glass"), "regenerate_part_id": ids["old_part"]}),
                    ("operation_undo_prepare", {"operation_id": ids["old_op"]}),
                ):
                    with pytest.raises(ToolError) as ei:
                        await call(client, tool, args)
                    assert ei.value.error["code"] == "world_changed", (tool, ei.value.error)
                got = await call(client, "part_get", {"part_id": ids["new_part"]})
                assert got["part_id"] == ids["new_part"] and got["block_count"] == 8

        anyio.run(new_world)

        # the dashboard: current world by default, the old world's entries marked when asked for
        base = f"http://127.0.0.1:{stack.ports['dashboard']}"
        page = httpx.get(base + "/", timeout=30).text
        assert ids["new_op"] in page and ids["new_part"] in page
        assert ids["old_op"] not in page and ids["old_part"] not in page
        assert "1 operations of earlier worlds" in page and "1 parts of earlier worlds" in page
        page = httpx.get(base + "/?old_worlds=1", timeout=30).text
        for key in ("old_op", "old_part"):
            row = page[page.index(f'"{ids[key]}"') :][:600]
            assert "earlier world" in row, (key, row)
        for key in ("new_op", "new_part"):
            row = page[page.index(f'"{ids[key]}"') :][:400]
            assert "earlier world" not in row.split("</li>")[0].split("</tr>")[0], (key, row)
        fragment = httpx.get(base + "/fragments/operations", timeout=30).text
        assert ids["old_op"] not in fragment and ids["new_op"] in fragment

        # chat: status lists the current world's operations; undo takes the current world's latest;
        # an old operation named explicitly is refused with the reason
        r = _chat(stack, ["status", f"undo {ids['old_op']}", "undo"])
        assert r.returncode == 0, r.stderr[-3000:]
        out = r.stdout.splitlines()
        status = next((line for line in out if line.startswith("recent operations: ")), "")
        assert ids["new_op"] in status and ids["old_op"] not in status, _why(stack, r)
        assert any(f"operation {ids['old_op']} belongs to world" in line for line in out), _why(stack, r)
        assert any(line.startswith(f"undone {ids['new_op']}: 8 blocks restored") for line in out), _why(stack, r)
        res = stack.world_rpc("blocks_get", {"xyz": [4, 64, 10, 0, 64, 10]})
        assert [res["palette"][i] for i in res["state"]] == ["minecraft:air", "minecraft:air"], res
        assert json.loads((runtime / "config.json").read_text())["ports"]["dashboard"] == stack.ports["dashboard"]
    finally:
        assert stack.stop() == 0, stack.log()
