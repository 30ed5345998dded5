"""MCP progress notifications (issue 31 item 10), with the official Python SDK's progress callback
over streamable HTTP and over stdio (`mcb mcp`), against the real journal writing a plan of 27
batches on each world host: build_apply called with a progress token reports the batches written
(strictly increasing up to the batches + 1 for the end, the blocks in each message) and answers
with the ended operation; without a token it still answers at once.

The bridge reads the operation's state every 0.25 s, so a plan written faster than that gets only
its start and its end: 8 batches on the embedded host took under 0.27 s in a CI run. 27 batches
take a few polls on every host."""

from __future__ import annotations

import sys
import uuid

import anyio
from e2e.components import Components
from e2e.mcpclient import call, http_client, payload, stdio_client, wait_terminal

SIDE = 24  # a 24×24×24 box: 13,824 blocks, 27 batches of 512
BATCHES = SIDE**3 // 512


def _box(x0: int, side: int = SIDE) -> dict:
    return {
        "version": 1,
        "operations": [
            {
                "type": "box",
                "min": {"x": x0, "y": 80, "z": -60},
                "max": {"x": x0 + side - 1, "y": 80 + side - 1, "z": -60 + side - 1},
                "block": "minecraft:stone_bricks",
            }
        ],
    }


async def _apply_with_progress(client, x0: int) -> tuple[dict, list[tuple[float, float | None, str | None]]]:
    plan = await call(client, "build_prepare", {"recipe": _box(x0)})
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    result = await client.call_tool(
        "build_apply",
        {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
        progress_callback=on_progress,
    )
    assert not result.is_error, result
    return payload(result), seen


def _check(op: dict, seen: list) -> None:
    n = SIDE**3
    assert op["state"] == "applied" and op["written"] == n, op  # it answered when the operation ended
    assert len(seen) >= 3, seen  # queued at 0, some batches, the end
    values = [p for p, _, _ in seen]
    assert values == sorted(set(values)) and values[0] == 0 and values[-1] == BATCHES + 1, values  # + the end
    assert all(total == BATCHES + 1 for _, total, _ in seen), seen
    assert seen[-1][2] == f"applied: {n} of {n} blocks, batch {BATCHES} of {BATCHES}", seen[-1]


def test_build_apply_reports_progress_over_http_and_stdio(comp: Components) -> None:
    async def over_http() -> None:
        async with http_client(comp.mcp_url, comp.token("agent")) as client:
            _check(*await _apply_with_progress(client, -60))  # x -60..-37
            # without a progress token: at once, as before (the operation goes on)
            plan = await call(client, "build_prepare", {"recipe": _box(-36, 16)})  # x -36..-21
            op = await call(
                client,
                "build_apply",
                {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
            )
            assert op["state"] in ("queued", "applying"), op
            assert (await wait_terminal(client, op["operation_id"], timeout=120))["state"] == "applied"

    async def over_stdio() -> None:
        env = dict(comp.env)
        async with stdio_client(env, [sys.executable, "-m", "mcb_cli.main", "mcp"]) as client:
            _check(*await _apply_with_progress(client, -20))  # x -20..3

    anyio.run(over_http)
    anyio.run(over_stdio)
