"""MCP progress notifications (issue 31 item 10), with the official Python SDK's progress callback
over streamable HTTP and over stdio (`mcb mcp`), against the real journal writing a plan of 8
batches on each world host: build_apply called with a progress token reports the batches written
(strictly increasing up to the batches + 1 for the end, the blocks in each message) and answers
with the ended operation; without a token it still answers at once."""

from __future__ import annotations

import sys
import uuid

import anyio
from e2e.components import Components
from e2e.mcpclient import call, http_client, payload, stdio_client, wait_terminal

SIDE = 16  # a 16×16×16 box: 4,096 blocks, 8 batches of 512


def _box(x0: int) -> dict:
    return {"version": 1, "operations": [{"type": "box", "min": {"x": x0, "y": 80, "z": -60},
                                          "max": {"x": x0 + SIDE - 1, "y": 80 + SIDE - 1, "z": -60 + SIDE - 1},
                                          "block": "minecraft:stone_bricks"}]}


async def _apply_with_progress(client, x0: int) -> tuple[dict, list[tuple[float, float | None, str | None]]]:
    plan = await call(client, "build_prepare", {"recipe": _box(x0)})
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    result = await client.call_tool("build_apply", {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"],
                                                    "idempotency_key": str(uuid.uuid4())},
                                    progress_callback=on_progress)
    assert not result.is_error, result
    return payload(result), seen


def _check(op: dict, seen: list) -> None:
    n = SIDE ** 3
    assert op["state"] == "applied" and op["written"] == n, op  # it answered when the operation ended
    assert len(seen) >= 3, seen  # queued at 0, some batches, the end
    values = [p for p, _, _ in seen]
    assert values == sorted(set(values)) and values[0] == 0 and values[-1] == 9, values  # 8 batches + the end
    assert all(total == 9 for _, total, _ in seen), seen
    assert seen[-1][2] == "applied: 4096 of 4096 blocks, batch 8 of 8", seen[-1]


def test_build_apply_reports_progress_over_http_and_stdio(comp: Components) -> None:
    async def over_http() -> None:
        async with http_client(comp.mcp_url, comp.token("agent")) as client:
            _check(*await _apply_with_progress(client, -60))
            # without a progress token: at once, as before (the operation goes on)
            plan = await call(client, "build_prepare", {"recipe": _box(-40)})
            op = await call(client, "build_apply", {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"],
                                                    "idempotency_key": str(uuid.uuid4())})
            assert op["state"] in ("queued", "applying"), op
            assert (await wait_terminal(client, op["operation_id"], timeout=120))["state"] == "applied"

    async def over_stdio() -> None:
        env = dict(comp.env)
        async with stdio_client(env, [sys.executable, "-m", "mcb_cli.main", "mcp"]) as client:
            _check(*await _apply_with_progress(client, -20))

    anyio.run(over_http)
    anyio.run(over_stdio)
