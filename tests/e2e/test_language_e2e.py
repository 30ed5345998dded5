"""Issue 4 through the whole stack (bridge → journal → planner → world host), over MCP:
language revision 2 recipes, refusals before any write, region_inspect at scale."""

from __future__ import annotations

import json
import re
from pathlib import Path

import anyio
import pytest
from e2e.components import run
from e2e.mcpclient import ToolError, call

DOC = Path(__file__).resolve().parents[2] / "docs" / "recipes.md"


def automation(comp, blocks):
    comp.world_rpc(
        "automation_set_blocks",
        {
            "actor": "player",
            "playerId": "player-1",
            "blocks": [{"x": x, "y": y, "z": z, "state": s} for x, y, z, s in blocks],
        },
        principal="automation",
    )


def example(name: str) -> dict:
    found = dict(re.findall(r"<!-- example: (\w+) -->\n```json\n(.*?)\n```", DOC.read_text(), re.S))
    return json.loads(found[name])


def test_house_example_prepares_and_applies_with_turned_states(comp):
    house = example("house")
    house["params"] |= {"x0": -40, "y0": 70, "z0": -40}  # inside the project area, in the air

    async def scenario(client):
        plan = await call(client, "build_prepare", {"recipe": house})
        assert plan["changed_blocks"] == 372 and not plan.get("conflicts")
        op = await call(
            client,
            "build_apply",
            {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": "house-1"},
        )
        for _ in range(600):
            st = await call(client, "operation_status", {"operation_id": op["operation_id"]})
            if st["state"] not in ("prepared", "queued", "applying"):
                break
            await anyio.sleep(0.05)
        assert st["state"] == "applied", st

    run(comp, scenario)
    # the north roof side faces south, its mirror image faces north
    got = comp.world_rpc("blocks_get", {"xyz": [-40, 75, -41, -40, 75, -33]})
    states = [got["palette"][i] for i in got["state"]]
    assert "facing=south" in states[0] and "facing=north" in states[1]


@pytest.mark.parametrize(
    "block, reason, code",
    [
        ("minecraft:spawner", "unsupported_block_entity", "unsupported_block"),
        ("minecraft:water", "places_fluid", "unsupported_block"),
        ("minecraft:sand", "unsupported_gravity", "unsupported_block"),
    ],
)
def test_placing_outside_the_guaranteed_set_is_refused(comp, block, reason, code):
    recipe = {
        "version": 1,
        "operations": [
            {"type": "box", "min": {"x": 30, "y": 90, "z": 30}, "max": {"x": 31, "y": 90, "z": 30}, "block": block}
        ],
    }

    async def scenario(client):
        with pytest.raises(ToolError) as ei:
            await call(client, "build_prepare", {"recipe": recipe})
        assert ei.value.error["code"] == code, ei.value.error
        assert reason in json.dumps(ei.value.error)

    run(comp, scenario)


def test_overwriting_a_chest_or_water_is_a_conflict_before_any_write(comp):
    automation(
        comp,
        [
            (20, 80, 20, "minecraft:chest[facing=north,type=single,waterlogged=false]"),
            (22, 80, 20, "minecraft:water[level=0]"),
        ],
    )

    async def scenario(client):
        for x, reason in ((20, "overwrites_block_entity"), (22, "into_fluid")):
            recipe = {
                "version": 1,
                "operations": [
                    {
                        "type": "box",
                        "min": {"x": x, "y": 80, "z": 20},
                        "max": {"x": x, "y": 80, "z": 20},
                        "block": "stone",
                    }
                ],
            }
            with pytest.raises(ToolError) as ei:
                await call(client, "build_prepare", {"recipe": recipe})
            assert ei.value.error["code"] == "conflict" and reason in json.dumps(ei.value.error)

    run(comp, scenario)
    got = comp.world_rpc("blocks_get", {"xyz": [20, 80, 20]})
    assert got["palette"][got["state"][0]].startswith("minecraft:chest")


def test_region_inspect_summary_heightmap_and_unknown_chunks(comp):
    async def scenario(client):
        s = await call(
            client,
            "region_inspect",
            {"min": {"x": -64, "y": -64, "z": -64}, "max": {"x": 63, "y": 57, "z": 63}, "detail": "summary"},
        )
        assert s["positions"] == 1_998_848 and s["non_air"] > 0
        assert 0 < len(s["occupied"]) <= 32 and s["heightmap"]["rows"]
        assert len(json.dumps(s)) < 8192
        h = await call(
            client,
            "region_inspect",
            {"min": {"x": 0, "y": -64, "z": 0}, "max": {"x": 95, "y": 100, "z": 15}, "detail": "heightmap", "step": 4},
        )
        rows = h["heightmap"]["rows"]
        assert len(rows) == 4 and len(rows[0]) == 24
        assert rows[0][0] is not None and rows[0][0] != "?"  # generated ground
        assert rows[0][-1] == "?" and h["unknown_chunk_count"] == 2  # x 64..95 were never generated

    run(comp, scenario)
