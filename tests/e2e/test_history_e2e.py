"""Issue 32 item 3, end to end on the real processes: a player with a name, the environment (an
explosion) and one of our operations change blocks of a box; ``region_history`` (MCP) lists each
change with the right attribution, newest first, within the 4 KB result budget, and filters by
player and by cause; ``mcb history`` (the owner's CLI) answers the same."""

from __future__ import annotations

import json
import subprocess
import sys

from e2e.components import run
from e2e.mcpclient import ToolError, apply_and_wait, call, payload

RESULT_BUDGET = 4096  # bytes of a tool result's text (the agent's context)
REGION = {"min": {"x": 20, "y": 64, "z": -30}, "max": {"x": 23, "y": 66, "z": -27}}


def automation(comp, blocks, **who):
    comp.world_rpc("automation_set_blocks", who | {"blocks": [{"x": x, "y": y, "z": z, "state": s}
                                                              for x, y, z, s in blocks]}, principal="automation")


def test_region_history_names_the_player_the_cause_and_the_operation_newest_first(comp):
    owner = json.loads((comp.runtime / "config.json").read_text())["projects"][0]["owner_player_id"]

    async def scenario(client):
        automation(comp, [(20, 64, -30, "minecraft:glass")], actor="player", playerId="uuid-griefer",
                   playerName="Griefer")
        automation(comp, [(21, 64, -30, "minecraft:stone")], actor="external")  # silent: not in the history
        automation(comp, [(21, 64, -30, "minecraft:air")], actor="environment", cause="explosion")
        plan = await call(client, "build_prepare", {"recipe": {"version": 1, "operations": [
            {"type": "box", "min": {"x": 22, "y": 65, "z": -30}, "max": {"x": 22, "y": 65, "z": -29},
             "block": "minecraft:oak_planks"}]}})
        st = await apply_and_wait(client, plan)
        assert st["state"] == "applied", st
        automation(comp, [(23, 66, -27, "minecraft:torch")], actor="player", playerId="uuid-griefer",
                   playerName="Griefer")

        raw = await client.call_tool("region_history", {"region": REGION})
        assert not raw.is_error, payload(raw)
        assert len(raw.content[0].text.encode()) <= RESULT_BUDGET
        doc = payload(raw)
        got = [(e["pos"]["x"], e["pos"]["y"], e["pos"]["z"], e["source"], e.get("player_name"), e.get("cause"),
                e.get("operation_id")) for e in doc["entries"]]
        op = st["operation_id"]
        assert got == [(23, 66, -27, "player", "Griefer", None, None),
                       (22, 65, -29, "ours", None, None, op), (22, 65, -30, "ours", None, None, op),
                       (21, 64, -30, "environment", None, "explosion", None),
                       (20, 64, -30, "player", "Griefer", None, None)], doc
        assert doc["complete"] and doc["next_cursor"] == ""
        ours = doc["entries"][1]
        assert ours["asked_by"] == owner and ours["before"] == "minecraft:air" and ours["after"] == "minecraft:oak_planks"
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
            await call(client, "region_history", {"region": {"min": {"x": 0, "y": 64, "z": 0},
                                                             "max": {"x": 500, "y": 64, "z": 0}}})
            raise AssertionError("a box outside the area was accepted")
        except ToolError as err:
            assert err.error["code"] == "out_of_bounds"

    run(comp, scenario)

    # the owner's CLI: the same history, as text and as JSON
    env = comp.env | {"MCB_RUNTIME_DIR": str(comp.runtime)}
    box = "20,64,-30,23,66,-27"
    out = subprocess.run([sys.executable, "-m", "mcb_cli.main", "history", box, "--json"], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(x) for x in out.stdout.splitlines() if x.strip()]
    assert [(e["source"], e.get("player_name"), e.get("cause")) for e in lines][:1] == [("player", "Griefer", None)]
    assert len(lines) == 5
    text = subprocess.run([sys.executable, "-m", "mcb_cli.main", "history", box, "--cause", "explosion"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert text.returncode == 0, text.stderr
    assert "explosion" in text.stdout and "(21, 64, -30)" in text.stdout and "Griefer" not in text.stdout
