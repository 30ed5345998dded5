"""Issue 4's last two operations through the whole stack, over MCP (bridge → journal → planner
→ world host): ``replace`` reads the world's current states in its region (the planner's own
world client), ``paste`` places a defined part (attached by the journal) or a library asset."""

from __future__ import annotations

import anyio
import pytest
from e2e.components import run
from e2e.mcpclient import ToolError, call

STONE = "minecraft:stone"
OAK_E = "minecraft:oak_stairs[facing=east,half=top,shape=straight,waterlogged=false]"


def v(x, y, z):
    return {"x": x, "y": y, "z": z}


async def apply(client, plan, key):
    op = await call(
        client, "build_apply", {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": key}
    )
    for _ in range(600):
        st = await call(client, "operation_status", {"operation_id": op["operation_id"]})
        if st["state"] not in ("prepared", "queued", "applying"):
            return st
        await anyio.sleep(0.05)
    raise AssertionError(st)


def states(comp, positions):
    got = comp.world_rpc("blocks_get", {"xyz": [c for p in positions for c in p]})
    return [got["palette"][i] for i in got["state"]]


def test_replace_and_paste_over_mcp(comp):
    # a 3 × 1 × 2 patch at y 80: stone, with one top-half stair facing east at (11, 80, 10)
    base = {
        "version": 1,
        "operations": [
            {"type": "box", "min": v(10, 80, 10), "max": v(12, 80, 11), "block": "stone"},
            {"type": "box", "min": v(11, 80, 10), "max": v(11, 80, 10), "block": OAK_E},
        ],
    }
    out = {}

    async def scenario(client):
        tools = await client.list_tools()
        tool = next(t for t in tools.tools if t.name == "build_prepare")
        signatures = tool.description or ""  # generated from the recipe schema (mcb_bridge.recipe_docs)
        assert "replace(" in signatures and "paste(" in signatures, signatures
        ctx = await call(client, "project_context")
        assert {"replace", "paste"} <= set(ctx["recipe_operations"])

        built = await apply(client, await call(client, "build_prepare", {"recipe": base}), "rp-base")
        assert built["state"] == "applied", built
        part = await call(client, "part_define", {"name": "patch", "operation_id": built["operation_id"]})
        out["part"] = part["part_id"]

        # replace: stairs → spruce stairs (facing/half kept), stone → stone bricks; air untouched
        rep = {
            "version": 1,
            "operations": [
                {
                    "type": "replace",
                    "min": v(9, 80, 9),
                    "max": v(13, 81, 12),
                    "from": "oak_stairs",
                    "to": "spruce_stairs",
                },
                {
                    "type": "replace",
                    "min": v(9, 80, 9),
                    "max": v(13, 81, 12),
                    "from": ["*", "!spruce_stairs"],
                    "to": "stone_bricks",
                },
            ],
        }
        plan = await call(client, "build_prepare", {"recipe": rep})
        assert plan["changed_blocks"] == 6 and plan["total_positions"] == 6, plan
        assert (await apply(client, plan, "rp-replace"))["state"] == "applied"

        # paste the part (as generated: stone + oak stairs) turned 90° at (30, 80, 30)
        pasted = await call(
            client,
            "build_prepare",
            {
                "recipe": {
                    "version": 1,
                    "operations": [{"type": "paste", "part": out["part"], "at": v(30, 80, 30), "rotation": 90}],
                }
            },
        )
        assert pasted["changed_blocks"] == 6, pasted
        assert (await apply(client, pasted, "rp-paste-part"))["state"] == "applied"

        # an unknown part is refused before anything is stored
        with pytest.raises(ToolError) as ei:
            await call(
                client,
                "build_prepare",
                {
                    "recipe": {
                        "version": 1,
                        "operations": [{"type": "paste", "part": "pt_000000000000", "at": v(0, 90, 0)}],
                    }
                },
            )
        assert ei.value.error["code"] == "not_found", ei.value.error

        # paste a library asset exported from the replaced patch, inside a transform
        await call(client, "schematic_export", {"name": "rp_patch", "min": v(10, 80, 10), "max": v(12, 80, 11)})
        asset = await call(
            client,
            "build_prepare",
            {
                "recipe": {
                    "version": 1,
                    "operations": [
                        {
                            "type": "transform",
                            "translate": v(0, 0, 10),
                            "operations": [{"type": "paste", "asset": "rp_patch", "at": v(10, 80, 30)}],
                        }
                    ],
                }
            },
        )
        assert asset["changed_blocks"] == 6, asset
        assert (await apply(client, asset, "rp-paste-asset"))["state"] == "applied"

    run(comp, scenario)
    spruce = OAK_E.replace("oak_", "spruce_")
    assert states(comp, [(10, 80, 10), (11, 80, 10), (12, 80, 11), (11, 81, 10)]) == [
        "minecraft:stone_bricks",
        spruce,
        "minecraft:stone_bricks",
        "minecraft:air",
    ]
    # turned 90° about (30, 80, 30): local (1, 0, 0) → (0, 0, 1); east → south
    assert states(comp, [(30, 80, 31), (30, 80, 30), (29, 80, 32)]) == [OAK_E.replace("east", "south"), STONE, STONE]
    assert states(comp, [(10, 80, 40), (11, 80, 40), (12, 80, 41)]) == [
        "minecraft:stone_bricks",
        spruce,
        "minecraft:stone_bricks",
    ]
