"""Walking skeleton, end to end: `mcb up` → MCP over HTTP and stdio → journal → world host,
on each world host (the embedded one; the Java test host as an external host, `--world-host`).

Drives only public interfaces (MCP tools; the world host's protocol to count writes and read the
result back) and, on the embedded host, verifies the save with an independent third-party reader
(anvil-parser2).
"""

from __future__ import annotations

import sys
import uuid

import anyio
import httpx
import pytest
from e2e.mcpclient import ToolError, call, http_client, stdio_client, wait_terminal

SEED_RECIPE = {
    "version": 1,
    "operations": [
        {
            "type": "box",
            "min": {"x": 0, "y": 64, "z": 0},
            "max": {"x": 4, "y": 70, "z": 4},
            "block": "minecraft:stone_bricks",
            "hollow": True,
        },
        {
            "type": "line",
            "from": {"x": 0, "y": 64, "z": 0},
            "to": {"x": 8, "y": 64, "z": 8},
            "block": "minecraft:stone",
        },
        {
            "type": "cylinder",
            "center": {"x": 12, "y": 64, "z": 12},
            "radius": 3,
            "height": 8,
            "block": "minecraft:stone_bricks",
            "hollow": True,
        },
        {
            "type": "repeat",
            "count": 3,
            "offset": {"x": 6, "y": 0, "z": 0},
            "operations": [
                {
                    "type": "box",
                    "min": {"x": 0, "y": 64, "z": 20},
                    "max": {"x": 1, "y": 67, "z": 21},
                    "block": "minecraft:oak_log[axis=y]",
                }
            ],
        },
    ],
}
REGION = {"min": {"x": 0, "y": 64, "z": 0}, "max": {"x": 15, "y": 71, "z": 21}}
EXPECTED = {
    (0, 70, 0): "minecraft:stone_bricks",
    (2, 67, 2): "minecraft:air",  # hollow box interior
    (8, 64, 8): "minecraft:stone",  # line end
    (3, 64, 3): "minecraft:stone",  # the line overwrites the box floor
    (0, 64, 20): "minecraft:oak_log[axis=y]",
    (12, 67, 21): "minecraft:oak_log[axis=y]",  # third repeat copy
    (12, 66, 12): "minecraft:air",  # hollow cylinder's axis
    (0, 63, 0): "minecraft:grass_block[snowy=false]",  # the flat ground
}
TIMEOUT = 60


def ours_events(stack) -> int:
    """Count block events the host attributes to our own batches (each write is one)."""
    total, cursor = 0, ""
    while True:
        res = stack.world_rpc("events_since", {"cursor": cursor, "limit": 100})
        total += sum(1 for e in res.get("events", []) if e.get("source") == "ours")
        cursor = res["nextCursor"]
        if res.get("complete", True) or not res.get("events"):
            return total


def test_seed_recipe_over_http(stack):
    async def scenario():
        async with http_client(stack.mcp_url, stack.token("agent")) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert {"project_context", "region_inspect", "build_prepare", "build_apply", "operation_status"} <= tools
            ctx = await call(client, "project_context")
            assert ctx["project"]["project_id"] == "default"
            before = await call(client, "region_inspect", {**REGION, "detail": "summary"})
            assert before["non_air"] == 0, "the flat world's air above y=63 must be empty"

            plan = await call(client, "build_prepare", {"recipe": SEED_RECIPE})
            assert plan["changed_blocks"] > 0
            key = f"e2e-{uuid.uuid4()}"
            op = await call(
                client,
                "build_apply",
                {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": key},
            )
            done = await wait_terminal(client, op["operation_id"])
            assert done["state"] == "applied", done
            assert done["written"] == plan["changed_blocks"]

            after = await call(client, "region_inspect", {**REGION, "detail": "summary"})
            counts = {p["state"]: p["count"] for p in after["palette"]}
            materials = {m["state"]: m["count"] for m in plan["materials"]}
            for state, n in materials.items():
                assert counts.get(state) == n, (state, n, counts)
            assert after["non_air"] == plan["changed_blocks"]

            # Retry after a "timeout": same key -> same operation, no second write.
            writes_before = ours_events(stack)
            again = await call(
                client,
                "build_apply",
                {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": key},
            )
            assert again["operation_id"] == op["operation_id"]
            assert again.get("replayed") is True
            st = await call(client, "operation_status", {"operation_id": op["operation_id"]})
            assert st["written"] == done["written"]
            assert ours_events(stack) == writes_before

            # Same key, different plan -> a structured error, nothing written.
            other = await call(
                client,
                "build_prepare",
                {
                    "recipe": {
                        "version": 1,
                        "operations": [
                            {
                                "type": "box",
                                "min": {"x": 30, "y": 64, "z": 30},
                                "max": {"x": 31, "y": 64, "z": 31},
                                "block": "minecraft:stone",
                            }
                        ],
                    }
                },
            )
            with pytest.raises(ToolError) as exc:
                await call(
                    client,
                    "build_apply",
                    {"plan_id": other["plan_id"], "plan_hash": other["plan_hash"], "idempotency_key": key},
                )
            assert exc.value.error["code"] == "invalid_request"
            assert ours_events(stack) == writes_before

            # Exact states read back through MCP.
            blocks = await call(
                client,
                "region_inspect",
                {"min": {"x": 0, "y": 64, "z": 20}, "max": {"x": 1, "y": 64, "z": 21}, "detail": "blocks"},
            )
            assert "minecraft:oak_log[axis=y]" in blocks["legend"].values()

    anyio.run(scenario)
    # The world through its own protocol, then (embedded) the save on disk, read by an independent
    # library while the host keeps running.
    got = stack.world_rpc("blocks_get", {"xyz": [c for pos in EXPECTED for c in pos]})
    assert dict(zip(EXPECTED, (got["palette"][i] for i in got["state"]), strict=True)) == EXPECTED
    if stack.host == "embedded":  # java-core keeps blocks in memory: no save on disk to read back
        from e2e.independent import block_at

        world = stack.saved_world()
        assert {pos: block_at(world, *pos) for pos in EXPECTED} == EXPECTED


def test_bad_token_is_refused(stack):
    r = httpx.post(
        stack.mcp_url,
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": "Bearer wrong", "Accept": "application/json, text/event-stream"},
    )
    assert r.status_code == 401
    assert stack.token("agent") not in r.text


def test_structured_errors_through_mcp(stack):
    async def scenario():
        async with http_client(stack.mcp_url, stack.token("agent")) as client:
            with pytest.raises(ToolError) as exc:
                await call(
                    client,
                    "build_prepare",
                    {
                        "recipe": {
                            "version": 1,
                            "operations": [
                                {
                                    "type": "box",
                                    "min": {"x": 0, "y": 64, "z": 0},
                                    "max": {"x": 1, "y": 64, "z": 1},
                                    "block": "minecraft:stone_brick",
                                }
                            ],
                        }
                    },
                )
            assert exc.value.error["code"] == "unsupported_block"
            assert "stone_bricks" in exc.value.error["message"]
            with pytest.raises(ToolError) as exc:
                await call(
                    client,
                    "build_prepare",
                    {
                        "recipe": {
                            "version": 1,
                            "operations": [
                                {
                                    "type": "box",
                                    "min": {"x": 1000, "y": 64, "z": 0},
                                    "max": {"x": 1001, "y": 64, "z": 1},
                                    "block": "minecraft:stone",
                                }
                            ],
                        }
                    },
                )
            assert exc.value.error["code"] == "out_of_bounds"
            with pytest.raises(ToolError) as exc:
                await call(client, "operation_status", {"operation_id": "op_doesnotexist"})
            assert exc.value.error["code"] == "not_found"

    anyio.run(scenario)


def test_stdio_transport(stack):
    env = {k: v for k, v in stack.env.items()}
    argv = [sys.executable, "-m", "mcb_cli.main", "mcp"]

    async def scenario():
        with anyio.fail_after(TIMEOUT):
            async with stdio_client(env, argv) as client:
                ctx = await call(client, "project_context")
                assert ctx["project"]["project_id"] == "default"
                summary = await call(client, "region_inspect", {**REGION, "detail": "summary"})
                assert summary["positions"] == 16 * 8 * 22

    anyio.run(scenario)


def test_status_command(stack):
    import subprocess

    out = subprocess.run(
        [sys.executable, "-m", "mcb_cli.main", "status"], env=stack.env, capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stdout + out.stderr
    for name in ("redis", "world host", "planner", "journal", "camera-worker", "bridge", "dashboard"):
        assert name in out.stdout
    info = stack.world_rpc("world_info", {})
    # the world host's identity: which host, which world (config.json keeps an external host's URL)
    assert info["hostKind"] in out.stdout and info["worldUuid"] in out.stdout, out.stdout
    assert ("(external)" if stack.world.external else "(embedded)") in out.stdout, out.stdout
