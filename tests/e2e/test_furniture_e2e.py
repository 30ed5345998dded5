"""Issue 13 item 3 — furniture over MCP on each world host: a room furnished with a chest of
items, a bed, a furnace, a campfire, a sign with text on both sides, a banner and a player head;
the blocks and their block-entity data read back (the embedded host's save also through
anvil-parser2, an independent reader of the region files); a player changing the chest's
contents is a conflict; undo removes the furniture and undoing the undo restores it with its
data; refusals before any write."""

from __future__ import annotations

import json

import anvil
import pytest
from e2e.components import run
from e2e.mcpclient import ToolError, apply_and_wait, call

Y = 64  # the flat world's ground is grass at y=63
CHEST = "minecraft:chest[facing=south,type=single,waterlogged=false]"
ITEMS = [{"id": "bread", "count": 3}, {"slot": 13, "id": "minecraft:diamond_sword"}]
ITEMS_CANON = (
    '{"items":[{"count":3,"id":"minecraft:bread","slot":0},{"count":1,"id":"minecraft:diamond_sword","slot":13}]}'
)
SIGN_TEXT = {"front": ["Welcome", "home"], "back": {"lines": ["Mind", "the", "step"], "color": "red", "glowing": True}}
ROOM = [  # (x, z, block, block_entity, the full state read back)
    (40, -50, "chest[facing=south]", {"items": ITEMS}, CHEST + ITEMS_CANON),
    (42, -50, "red_bed[facing=south,part=foot]", None, "minecraft:red_bed[facing=south,occupied=false,part=foot]"),
    (42, -49, "red_bed[facing=south,part=head]", None, "minecraft:red_bed[facing=south,occupied=false,part=head]"),
    (
        44,
        -50,
        "furnace[facing=south]",
        {"items": [{"slot": 1, "id": "coal", "count": 8}]},
        'minecraft:furnace[facing=south,lit=false]{"items":[{"count":8,"id":"minecraft:coal","slot":1}]}',
    ),
    (
        46,
        -50,
        "campfire[lit=false]",
        {"items": [{"id": "beef"}]},
        "minecraft:campfire[facing=north,lit=false,signal_fire=false,waterlogged=false]"
        '{"items":[{"count":1,"id":"minecraft:beef","slot":0}]}',
    ),
    (
        40,
        -47,
        "oak_sign[rotation=8]",
        {"text": SIGN_TEXT},
        'minecraft:oak_sign[rotation=8,waterlogged=false]{"text":{"back":{"color":"red","glowing":true,'
        '"lines":["Mind","the","step",""]},"front":{"lines":["Welcome","home","",""]}}}',
    ),
    (
        42,
        -47,
        "blue_banner[rotation=8]",
        {"patterns": [{"pattern": "stripe_top", "color": "white"}, {"pattern": "minecraft:cross", "color": "yellow"}]},
        'minecraft:blue_banner[rotation=8]{"patterns":[{"color":"white","pattern":"minecraft:stripe_top"},'
        '{"color":"yellow","pattern":"minecraft:cross"}]}',
    ),
    (
        44,
        -47,
        "player_head[rotation=8]",
        {"profile": "Notch"},
        'minecraft:player_head[powered=false,rotation=8]{"profile":"Notch"}',
    ),
    (46, -47, "barrel[facing=up]", None, "minecraft:barrel[facing=up,open=false]"),
]


def recipe(entries) -> dict:
    ops = []
    for x, z, block, data, _ in entries:
        op = {"type": "box", "min": {"x": x, "y": Y, "z": z}, "max": {"x": x, "y": Y, "z": z}, "block": block}
        if data is not None:
            op["block_entity"] = data
        ops.append(op)
    return {"version": 1, "operations": ops}


def states(comp, pts) -> list[str]:
    res = comp.world_rpc("blocks_get", {"xyz": [c for p in pts for c in p]})
    return [res["palette"][i] for i in res["state"]]


def player_sets(comp, x, y, z, state):
    comp.world_rpc(
        "automation_set_blocks",
        {"actor": "player", "playerId": "player-7", "blocks": [{"x": x, "y": y, "z": z, "state": state}]},
        principal="automation",
    )


def test_furnish_a_room_read_back_conflict_and_undo(comp):
    pts = [(x, Y, z) for x, z, *_ in ROOM]
    expected = [full for *_, full in ROOM]
    ids: dict[str, str] = {}

    async def furnish(client):
        plan = await call(client, "build_prepare", {"recipe": recipe(ROOM)})
        assert plan["changed_blocks"] == len(ROOM), plan
        mats = json.dumps(plan["materials"])  # counted by block state: a chest with items is a chest
        assert "bread" not in mats and "Welcome" not in mats and "minecraft:chest[" in mats, mats
        st = await apply_and_wait(client, plan)
        assert st["state"] == "applied" and st["written"] == len(ROOM), st
        ids["op"] = st["operation_id"]
        inspect = await call(
            client,
            "region_inspect",
            {"min": {"x": 40, "y": Y, "z": -50}, "max": {"x": 46, "y": Y, "z": -47}, "detail": "summary"},
        )
        assert inspect["non_air"] == len(ROOM)

    run(comp, furnish)
    assert states(comp, pts) == expected

    if comp.world.kind == "embedded":  # the save itself, through an independent reader
        region = anvil.Region.from_file(str(comp.saved_world() / "region" / "r.0.-1.mca"))
        bes = {}
        for cx, cz in {(x >> 4, z >> 4) for x, _, z in pts}:
            for b in region.chunk_data(cx, cz)["block_entities"]:
                bes[(b["x"].value, b["y"].value, b["z"].value)] = b
        chest = bes[(40, Y, -50)]
        assert [(i["Slot"].value, i["id"].value, i["count"].value) for i in chest["Items"]] == [
            (0, "minecraft:bread", 3),
            (13, "minecraft:diamond_sword", 1),
        ]
        sign = bes[(40, Y, -47)]
        assert [m.value for m in sign["front_text"]["messages"]] == ["Welcome", "home", "", ""]
        assert [m.value for m in sign["back_text"]["messages"]] == ["Mind", "the", "step", ""]
        assert sign["back_text"]["color"].value == "red" and sign["back_text"]["has_glowing_text"].value == 1
        assert [p["pattern"].value for p in bes[(42, Y, -47)]["patterns"]] == [
            "minecraft:stripe_top",
            "minecraft:cross",
        ]
        assert bes[(44, Y, -47)]["profile"]["name"].value == "Notch"
        assert bes[(42, Y, -50)]["id"].value == "minecraft:bed" and len(bes[(46, Y, -47)]["Items"]) == 0

    # a player takes the bread out of the chest after the undo was prepared: its apply conflicts
    async def undo_conflicts(client):
        undo = await call(client, "operation_undo_prepare", {"operation_id": ids["op"]})
        assert undo["changed_blocks"] == len(ROOM) and not undo.get("conflicts")
        player_sets(comp, 40, Y, -50, CHEST + '{"items":[{"count":1,"id":"minecraft:diamond_sword","slot":13}]}')
        st = await apply_and_wait(client, undo)
        assert st["state"] == "conflict" and st["written"] == 0, st
        c = st["conflict_samples"][0]
        assert c["pos"] == {"x": 40, "y": Y, "z": -50} and c["source"] == "player", c
        assert "diamond_sword" in c["current"] and "bread" not in c["current"]
        # a fresh undo leaves the player's chest alone and names it
        undo = await call(client, "operation_undo_prepare", {"operation_id": ids["op"]})
        assert [(k["pos"]["x"], k["source"]) for k in undo["conflicts"]] == [(40, "player")]
        st = await apply_and_wait(client, undo)
        assert st["state"] == "applied" and st["written"] == len(ROOM) - 1, st
        ids["undo"] = st["operation_id"]

    run(comp, undo_conflicts)
    got = states(comp, pts)
    assert got[0].endswith('{"items":[{"count":1,"id":"minecraft:diamond_sword","slot":13}]}')  # the player's
    assert got[1:] == ["minecraft:air"] * (len(ROOM) - 1)

    # undoing the undo puts the furniture back with its block-entity data
    async def redo(client):
        undo = await call(client, "operation_undo_prepare", {"operation_id": ids["undo"]})
        st = await apply_and_wait(client, undo)
        assert st["state"] == "applied" and st["written"] == len(ROOM) - 1, st

    run(comp, redo)
    assert states(comp, pts)[1:] == expected[1:]


@pytest.mark.parametrize(
    "block, data, code, reason",
    [
        ("spawner", None, "unsupported_block", "unsupported_block_entity"),
        ("command_block", None, "unsupported_block", "unsupported_block_entity"),
        ("chest", {"items": [{"id": "bread", "count": 65}]}, "invalid_request", "out_of_range"),
        ("chest", {"items": [{"id": "not_an_item"}]}, "invalid_request", "unknown_item"),
        ("oak_sign", {"text": {"front": ["1", "2", "3", "4", "5"]}}, "invalid_request", "block_entity.text"),
        ("stone", {"items": []}, "invalid_request", "block_entity"),
        ("wall_torch[facing=north]", None, "unsupported_block", "unsupported_attachment"),
        ("oak_sign", {"text": {"front": ["floating"]}}, "unsupported_block", "unsupported_attachment"),
    ],
)
def test_furniture_refusals_before_any_write(comp, block, data, code, reason):
    y = 90  # in the air: nothing to hang on
    op = {"type": "box", "min": {"x": 30, "y": y, "z": -30}, "max": {"x": 30, "y": y, "z": -30}, "block": block}
    if data is not None:
        op["block_entity"] = data
    if "attachment" not in reason and block != "stone":
        op["min"]["y"] = op["max"]["y"] = Y  # on the ground: only the data is wrong

    async def scenario(client):
        with pytest.raises(ToolError) as ei:
            await call(client, "build_prepare", {"recipe": {"version": 1, "operations": [op]}})
        assert ei.value.error["code"] == code, ei.value.error
        assert reason in json.dumps(ei.value.error), ei.value.error

    run(comp, scenario)
    assert states(comp, [(30, op["min"]["y"], -30)]) == ["minecraft:air"]


def test_leaves_are_written_persistent(comp):
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
                            "min": {"x": 36, "y": Y, "z": -36},
                            "max": {"x": 36, "y": Y, "z": -36},
                            "block": "oak_leaves[persistent=false]",
                        }
                    ],
                }
            },
        )
        assert (await apply_and_wait(client, plan))["state"] == "applied"

    run(comp, scenario)
    assert states(comp, [(36, Y, -36)]) == ["minecraft:oak_leaves[distance=7,persistent=true,waterlogged=false]"]
