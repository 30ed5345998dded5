"""MCP progress notifications (issue 31 item 10), with the official Python SDK's progress callback
over streamable HTTP and over stdio (`mcb mcp`), against the real journal writing a plan of many
batches on each world host: build_apply called with a progress token reports the batches written
(strictly increasing up to the batches + 1 for the end, the blocks in each message) and answers
with the ended operation; without a token it still answers at once.

The bridge reads the operation's state every 0.25 s, so a plan written faster than that gets only
its start and its end. A Java host writes one batch a tick (50 ms), so 27 batches take at least
1.35 s there. The embedded host has no tick: 27 batches took under 0.25 s on a quiet machine once it
took several batches a request (a test that passed only on a loaded machine), so there the plan is
191 batches (a 46-block cube), which takes several polls even at the bench's target speed."""

from __future__ import annotations

import sys
import uuid

import anyio
from e2e.components import Components
from e2e.mcpclient import call, http_client, payload, stdio_client, wait_terminal

TICKED_SIDE = 24  # a 24×24×24 box: 13,824 blocks, 27 batches of 512
UNTICKED_SIDE = 46  # 97,336 blocks (a plan holds at most 100,000), 191 batches


def _side(comp: Components) -> int:
    return TICKED_SIDE if comp.world.external else UNTICKED_SIDE


def _box(x0: int, side: int, y0: int) -> dict:
    return {
        "version": 1,
        "operations": [
            {
                "type": "box",
                "min": {"x": x0, "y": y0, "z": -60},
                "max": {"x": x0 + side - 1, "y": y0 + side - 1, "z": -60 + side - 1},
                "block": "minecraft:stone_bricks",
            }
        ],
    }


async def _apply_with_progress(
    client, x0: int, side: int, y0: int
) -> tuple[dict, list[tuple[float, float | None, str | None]]]:
    plan = await call(client, "build_prepare", {"recipe": _box(x0, side, y0)})
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


def _check(op: dict, seen: list, side: int) -> None:
    n = side**3
    batches = -(-n // 512)
    assert op["state"] == "applied" and op["written"] == n, op  # it answered when the operation ended
    assert len(seen) >= 3, seen  # queued at 0, some batches, the end
    values = [p for p, _, _ in seen]
    assert values == sorted(set(values)) and values[0] == 0 and values[-1] == batches + 1, values  # + the end
    assert all(total == batches + 1 for _, total, _ in seen), seen
    assert seen[-1][2] == f"applied: {n} of {n} blocks, batch {batches} of {batches}", seen[-1]


def test_build_apply_reports_progress_over_http_and_stdio(comp: Components) -> None:
    side = _side(comp)

    async def over_http() -> None:
        async with http_client(comp.mcp_url, comp.token("agent")) as client:
            _check(*await _apply_with_progress(client, -60, side, 80), side)  # y 80..103 (or ..125)
            # without a progress token: at once, as before (the operation goes on)
            plan = await call(client, "build_prepare", {"recipe": _box(-36, 16, 220)})
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
            _check(*await _apply_with_progress(client, -20, side, 150), side)  # y 150..173 (or ..195)

    anyio.run(over_http)
    anyio.run(over_stdio)
