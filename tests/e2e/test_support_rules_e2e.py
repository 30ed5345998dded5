"""Support and consistency rules through the whole stack over MCP (issue 31 item 5), on each world
host: a door, a poppy, a carpet and a rail over air are refused before any write
(``unsupported_attachment`` with their positions) and build once the ground is under them; bed
halves whose facings disagree are refused (``halves_disagree``, both positions); pane sides that
contradict their neighbours are kept but warned about with their positions."""

from __future__ import annotations

import uuid

import pytest
from e2e.components import run
from e2e.mcpclient import ToolError, call, wait_terminal


def cell(x: int, y: int, z: int, block: str) -> dict:
    return {"type": "box", "min": {"x": x, "y": y, "z": z}, "max": {"x": x, "y": y, "z": z}, "block": block}


STANDING = [
    cell(20, 70, 40, "oak_door[facing=north]"),
    cell(22, 70, 40, "poppy"),
    cell(24, 70, 40, "red_carpet"),
    cell(26, 70, 40, "rail"),
]


async def refused(client, ops: list[dict]) -> dict:
    with pytest.raises(ToolError) as ei:
        await call(client, "build_prepare", {"recipe": {"version": 1, "operations": ops}})
    return ei.value.error


def test_support_and_two_part_rules_over_mcp(comp) -> None:
    async def scenario(client) -> None:
        err = await refused(client, STANDING)
        assert err["code"] == "unsupported_block" and err["details"]["reason"] == "unsupported_attachment", err
        assert err["details"]["count"] == 4, err
        at = {(s["x"], s["y"], s["z"]) for s in err["details"]["samples"]}
        assert at == {(20, 70, 40), (22, 70, 40), (24, 70, 40), (26, 70, 40)}, err
        assert "Nothing was written" in err["message"]

        # with grass (the poppy's) and stone (the others') under them, the same blocks build
        ground = [
            cell(20, 69, 40, "stone"),
            cell(22, 69, 40, "grass_block"),
            cell(24, 69, 40, "stone"),
            cell(26, 69, 40, "stone"),
        ]
        plan = await call(client, "build_prepare", {"recipe": {"version": 1, "operations": ground + STANDING}})
        op = await call(
            client,
            "build_apply",
            {"plan_id": plan["plan_id"], "plan_hash": plan["plan_hash"], "idempotency_key": str(uuid.uuid4())},
        )
        assert (await wait_terminal(client, op["operation_id"]))["state"] == "applied"

        err = await refused(
            client,
            [
                cell(30, 70, 44, "stone"),
                cell(31, 70, 44, "stone"),
                cell(30, 71, 44, "red_bed[facing=north,part=foot]"),
                cell(30, 71, 43, "red_bed[facing=east,part=head]"),
            ],
        )
        assert err["code"] == "invalid_request" and err["details"]["reason"] == "halves_disagree", err
        s = err["details"]["samples"][0]
        assert (s["x"], s["y"], s["z"], s["other"]["x"], s["other"]["y"], s["other"]["z"]) == (30, 71, 44, 30, 71, 43)
        assert s["differ"] == ["facing"], s

        plan = await call(
            client,
            "build_prepare",
            {"recipe": {"version": 1, "operations": [cell(34, 70, 44, "glass_pane[east=true]")]}},
        )
        warned = [w for w in plan.get("warnings", []) if "contradict their neighbours" in w]
        assert warned and "34 70 44 east=true" in warned[0], plan.get("warnings")

    run(comp, scenario)
    got = comp.world_rpc(
        "blocks_get", {"xyz": [20, 70, 40, 20, 71, 40, 22, 70, 40, 24, 70, 40, 26, 70, 40, 30, 71, 44]}
    )
    states = [got["palette"][i].split("[")[0] for i in got["state"]]
    assert states == [
        "minecraft:oak_door",
        "minecraft:oak_door",
        "minecraft:poppy",
        "minecraft:red_carpet",
        "minecraft:rail",
        "minecraft:air",
    ], states
