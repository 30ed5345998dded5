"""In-game commands end to end: `mcb up`, then `mcb chat` (a terminal player) with the chat loop and
the scripted ACP agent; the commands go host -> chat_poll -> bridge -> config.json / journal /
camera worker -> chat_reply, and are asserted on the world (blocks_get), the runtime config and
what the player was shown."""

from __future__ import annotations

import json

from e2e.test_chat_e2e import _chat, _why

TOWER = [40, 64, 40, 42, 68, 42, 40, 68, 42]  # corners of the scripted 3x5x3 tower at 40 64 40


def _states(stack) -> list[str]:
    res = stack.world_rpc("blocks_get", {"xyz": TOWER})
    return [res["palette"][i] for i in res["state"]]


def test_project_create_build_undo_camera_area_and_protect(stack) -> None:
    owner = stack.config()["projects"][0]["owner_player_id"]
    # the player's position, as Paper would send it with every line (the host keeps it for them)
    stack.world_rpc(
        "automation_chat",
        {
            "playerId": owner,
            "text": "status",
            "position": {"x": 40.5, "y": 64.0, "z": 40.5, "yaw": 90.0, "pitch": 15.0},
        },
        principal="automation",
    )
    r = _chat(
        stack,
        [
            "project create castle",
            "build a tower at 40 64 40",
            "undo",
            "camera save front",
            "protect pt_0000",
            "area set 6",
            "undo the last wall please",
        ],
    )
    assert r.returncode == 0, r.stderr[-3000:]
    out = r.stdout.splitlines()
    assert any(line.startswith("project castle created, area x 8..72, y -64..319, z 8..72") for line in out), r.stdout
    assert any(line.startswith("done: 42 blocks placed") for line in out), _why(stack, r)
    assert any(line.startswith("undone op_") and line.endswith(": 42 blocks restored") for line in out), r.stdout
    assert any(line.startswith("camera front saved at 40.5 65.6 40.5 (yaw 90, pitch 15)") for line in out), r.stdout
    assert any("part 'pt_0000' not found in project 'castle'" in line for line in out), r.stdout
    assert "area of project castle is now x 34..46, y -64..319, z 34..46" in out, r.stdout
    # a line that is not exactly a command is a prompt for the agent
    assert "echo: undo the last wall please" in out, r.stdout

    assert all(s.startswith("minecraft:air") for s in _states(stack)), "the undo restored the world"
    castle = next(p for p in stack.config()["projects"] if p["project_id"] == "castle")
    assert castle["owner_player_id"] == owner
    assert castle["area"] == {"min": {"x": 34, "y": -64, "z": 34}, "max": {"x": 46, "y": 319, "z": 46}}
    assert json.loads((stack.runtime / "chat" / "players.json").read_text()) == {owner: "castle"}
    # the prompts ran in the new project (the agent's session for castle)
    (session,) = (stack.runtime / "chat" / "sessions").glob("castle-*/*/session.json")
    assert json.loads(session.read_text())["last_task"] == "undo the last wall please"

    # the area is enforced by the journal: a tower outside it is refused
    r = _chat(stack, ["build a tower at 60 64 60", "status"])
    assert r.returncode == 0, r.stderr[-3000:]
    assert not any(line.startswith("done:") for line in r.stdout.splitlines()), r.stdout
    res = stack.world_rpc("blocks_get", {"xyz": [60, 64, 60, 62, 68, 62]})
    assert all(res["palette"][i].startswith("minecraft:air") for i in res["state"]), res
    assert any(line.startswith("project castle (yours); writes ") for line in r.stdout.splitlines()), r.stdout
    # status lists the owner's latest operations: the ids `/ai undo <op>` takes (the undo is the newest)
    assert any(
        line.startswith("recent operations: op_") and "applied (42 blocks)" in line for line in r.stdout.splitlines()
    ), r.stdout
