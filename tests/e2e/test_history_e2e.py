"""Issue 32 item 3, end to end on the real processes: a player with a name, the environment (an
explosion) and one of our operations change blocks of a box; ``region_history`` (MCP) lists each
change with the right attribution, newest first, within the 4 KB result budget, and filters by
player and by cause; ``mcb history`` (the owner's CLI) answers the same."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import anyio
from e2e.components import run
from e2e.mcpclient import ToolError, apply_and_wait, call, payload, wait_terminal

RESULT_BUDGET = 4096  # bytes of a tool result's text (the agent's context)
REGION = {"min": {"x": 20, "y": 64, "z": -30}, "max": {"x": 23, "y": 66, "z": -27}}


def automation(comp, blocks, **who):
    comp.world_rpc(
        "automation_set_blocks",
        who | {"blocks": [{"x": x, "y": y, "z": z, "state": s} for x, y, z, s in blocks]},
        principal="automation",
    )


def test_region_history_names_the_player_the_cause_and_the_operation_newest_first(comp):
    owner = json.loads((comp.runtime / "config.json").read_text())["projects"][0]["owner_player_id"]

    async def scenario(client):
        automation(
            comp, [(20, 64, -30, "minecraft:glass")], actor="player", playerId="uuid-griefer", playerName="Griefer"
        )
        automation(comp, [(21, 64, -30, "minecraft:stone")], actor="external")  # silent: not in the history
        automation(comp, [(21, 64, -30, "minecraft:air")], actor="environment", cause="explosion")
        plan = await call(
            client,
            "build_prepare",
            {
                "recipe": {
                    "version": 1,
                    "operations": [
                        {
                            "type": "box",
                            "min": {"x": 22, "y": 65, "z": -30},
                            "max": {"x": 22, "y": 65, "z": -29},
                            "block": "minecraft:oak_planks",
                        }
                    ],
                }
            },
        )
        st = await apply_and_wait(client, plan)
        assert st["state"] == "applied", st
        automation(
            comp, [(23, 66, -27, "minecraft:torch")], actor="player", playerId="uuid-griefer", playerName="Griefer"
        )

        raw = await client.call_tool("region_history", {"region": REGION})
        assert not raw.is_error, payload(raw)
        assert len(raw.content[0].text.encode()) <= RESULT_BUDGET
        doc = payload(raw)
        got = [
            (
                e["pos"]["x"],
                e["pos"]["y"],
                e["pos"]["z"],
                e["source"],
                e.get("player_name"),
                e.get("cause"),
                e.get("operation_id"),
            )
            for e in doc["entries"]
        ]
        op = st["operation_id"]
        assert got == [
            (23, 66, -27, "player", "Griefer", None, None),
            (22, 65, -29, "ours", None, None, op),
            (22, 65, -30, "ours", None, None, op),
            (21, 64, -30, "environment", None, "explosion", None),
            (20, 64, -30, "player", "Griefer", None, None),
        ], doc
        assert doc["complete"] and doc["next_cursor"] == ""
        ours = doc["entries"][1]
        assert (
            ours["asked_by"] == owner and ours["before"] == "minecraft:air" and ours["after"] == "minecraft:oak_planks"
        )
        assert doc["entries"][0]["player_id"] == "uuid-griefer"
        times = [e["at_millis"] for e in doc["entries"]]
        assert times == sorted(times, reverse=True)

        griefer = await call(client, "region_history", {"region": REGION, "player": "griefer"})
        assert [e["pos"]["x"] for e in griefer["entries"]] == [23, 20]
        boom = await call(client, "region_history", {"region": REGION, "cause": "explosion"})
        assert [e["pos"]["x"] for e in boom["entries"]] == [21]
        later = await call(client, "region_history", {"region": REGION, "since_millis": times[0]})
        assert [e["pos"]["x"] for e in later["entries"]][0] == 23 and len(later["entries"]) < 5

        try:
            await call(client, "region_history", {"region": REGION, "cause": "lightning"})
            raise AssertionError("an unknown cause was accepted")
        except ToolError as err:
            assert err.error["code"] == "invalid_request" and "explosion" in err.error["message"]
        try:
            await call(
                client,
                "region_history",
                {"region": {"min": {"x": 0, "y": 64, "z": 0}, "max": {"x": 500, "y": 64, "z": 0}}},
            )
            raise AssertionError("a box outside the area was accepted")
        except ToolError as err:
            assert err.error["code"] == "out_of_bounds"

    run(comp, scenario)

    # the owner's CLI: the same history, as text and as JSON
    env = comp.env | {"MCB_RUNTIME_DIR": str(comp.runtime)}
    box = "20,64,-30,23,66,-27"
    out = subprocess.run(
        [sys.executable, "-m", "mcb_cli.main", "history", box, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    lines = [json.loads(x) for x in out.stdout.splitlines() if x.strip()]
    assert [(e["source"], e.get("player_name"), e.get("cause")) for e in lines][:1] == [("player", "Griefer", None)]
    assert len(lines) == 5
    text = subprocess.run(
        [sys.executable, "-m", "mcb_cli.main", "history", box, "--cause", "explosion"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert text.returncode == 0, text.stderr
    assert "explosion" in text.stdout and "(21, 64, -30)" in text.stdout and "Griefer" not in text.stdout


def state_at(comp, x, y, z) -> str:
    res = comp.world_rpc("blocks_get", {"xyz": [x, y, z]})
    return res["palette"][res["state"][0]]


def test_rollback_of_a_griefer_restores_exactly_their_changes(comp):
    """Issue 32 item 4: a scripted griefer breaks and places blocks among others' edits; the rollback
    of the griefer (rollback_prepare, then build_apply with the player's consent) restores exactly the
    griefer's changes; a block someone else changed after the griefer stays and is listed."""

    def grief(blocks):
        automation(comp, blocks, actor="player", playerId="uuid-g2", playerName="Griefer2")

    def alice(blocks):
        automation(comp, blocks, actor="player", playerId="uuid-alice", playerName="Alice")

    async def scenario(client):
        plan = await call(
            client,
            "build_prepare",
            {
                "recipe": {
                    "version": 1,
                    "operations": [
                        {
                            "type": "box",
                            "min": {"x": 30, "y": 64, "z": 30},
                            "max": {"x": 35, "y": 64, "z": 30},
                            "block": "minecraft:stone_bricks",
                        }
                    ],
                }
            },
        )
        assert (await apply_and_wait(client, plan))["state"] == "applied"
        alice([(30, 65, 31, "minecraft:oak_planks"), (31, 65, 31, "minecraft:oak_planks")])
        # the time to roll back from: just after the last change so far (the history's times are the host's)
        t0 = max(e["at_millis"] for e in (await call(client, "region_history", {"region": REGION_G}))["entries"]) + 1
        while int(time.time() * 1000) <= t0:  # the griefer's changes come strictly after t0
            await anyio.sleep(0.005)
        grief(
            [
                (30, 64, 30, "minecraft:air"),
                (31, 64, 30, "minecraft:air"),  # breaks our wall
                (30, 65, 31, "minecraft:air"),  # breaks Alice's planks
                (33, 65, 30, "minecraft:tnt"),
                (34, 65, 30, "minecraft:tnt"),
            ]
        )  # places tnt
        alice([(32, 66, 31, "minecraft:glass")])  # Alice, meanwhile
        grief([(32, 64, 30, "minecraft:air")])
        alice([(32, 64, 30, "minecraft:cobblestone")])  # Alice repairs one: hers
        before = {
            p: state_at(comp, *p)
            for p in [
                (30, 64, 30),
                (31, 64, 30),
                (30, 65, 31),
                (33, 65, 30),
                (34, 65, 30),
                (32, 64, 30),
                (32, 66, 31),
                (31, 65, 31),
                (35, 64, 30),
            ]
        }
        rb = await call(client, "rollback_prepare", {"region": REGION_G, "player": "griefer2", "since_millis": t0})
        assert rb["changed_blocks"] == 5, rb
        assert [(c["pos"], c["source"]) for c in rb["conflicts"]] == [({"x": 32, "y": 64, "z": 30}, "player")]
        # the plan replaces the griefer's tnt (player blocks): applying needs the person's consent
        try:
            await call(
                client,
                "build_apply",
                {"plan_id": rb["plan_id"], "plan_hash": rb["plan_hash"], "idempotency_key": "rollback-g2"},
            )
            raise AssertionError("a rollback replacing player blocks was applied without consent")
        except ToolError as err:
            assert err.error["code"] == "player_blocks_would_be_replaced"
        op = await call(
            client,
            "build_apply",
            {
                "plan_id": rb["plan_id"],
                "plan_hash": rb["plan_hash"],
                "idempotency_key": "rollback-g2",
                "replace_player_blocks": True,
            },
        )
        st = await wait_terminal(client, op["operation_id"])
        assert st["state"] == "applied" and st["written"] == 5, st
        after = {p: state_at(comp, *p) for p in before}
        assert after[(30, 64, 30)] == after[(31, 64, 30)] == "minecraft:stone_bricks"  # our wall is back
        assert after[(30, 65, 31)] == before[(31, 65, 31)]  # Alice's planks are back
        assert after[(33, 65, 30)] == after[(34, 65, 30)] == "minecraft:air"  # the tnt is gone
        for p in [(32, 64, 30), (32, 66, 31), (31, 65, 31), (35, 64, 30)]:  # nothing else changed
            assert after[p] == before[p], p
        assert after[(32, 64, 30)] == "minecraft:cobblestone"

    run(comp, scenario)


REGION_G = {"min": {"x": 28, "y": 63, "z": 28}, "max": {"x": 37, "y": 68, "z": 33}}
