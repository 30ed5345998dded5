"""Furniture: batch_apply writes block-entity NBT the way 1.21.11 saves it, blocks_get reads
full states back (mcb_common.blockentity), compare-and-set and rollback include the data; the
save is read back by anvil-parser2 (raw chunk NBT) and amulet-core (its own venv)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import anvil
import pytest
from mcb.world.v1 import world_pb2
from mcb_common.errors import McbError
from mcb_world_host.host import Host
from mcb_world_host.world import World

REPO = Path(__file__).resolve().parents[3]
AMULET_PY = REPO / "bench" / ".venv-amulet" / "bin" / "python"

CHEST = "minecraft:chest[facing=north,type=single,waterlogged=false]"
ITEMS = '{"items":[{"count":3,"id":"minecraft:bread","slot":0},{"count":1,"id":"minecraft:diamond_sword","slot":13}]}'
SIGN = (
    'minecraft:oak_sign[rotation=0,waterlogged=false]{"text":{"back":{"color":"red","glowing":true,'
    '"lines":["back","","",""]},"front":{"lines":["Hello","wörld","",""]},"waxed":true}}'
)
BANNER = 'minecraft:red_banner[rotation=0]{"patterns":[{"color":"white","pattern":"minecraft:stripe_top"}]}'
HEAD = 'minecraft:player_head[powered=false,rotation=0]{"profile":"Notch"}'
CAMPFIRE = (
    "minecraft:campfire[facing=north,lit=true,signal_fire=false,waterlogged=false]"
    '{"items":[{"count":1,"id":"minecraft:beef","slot":2}]}'
)
FURNACE = 'minecraft:furnace[facing=south,lit=false]{"items":[{"count":8,"id":"minecraft:coal","slot":1}]}'
BED = "minecraft:red_bed[facing=north,occupied=false,part=foot]"
FURNISHED = [
    (0, 64, 0, CHEST + ITEMS),
    (1, 64, 0, SIGN),
    (2, 64, 0, BANNER),
    (3, 64, 0, HEAD),
    (4, 64, 0, CAMPFIRE),
    (5, 64, 0, FURNACE),
    (6, 64, 0, BED),
]


def _apply(host: Host, bid: str, entries: list[tuple[int, int, int, str, str]]) -> world_pb2.BatchApplyResult:
    return host.batch_apply(
        world_pb2.BatchApplyParams(
            batch_id=bid,
            world_epoch=host.world.meta.epoch,
            operation_id="op-f",
            entries=[world_pb2.BatchEntry(x=x, y=y, z=z, expected=e, desired=d) for x, y, z, e, d in entries],
        )
    )


def _get(host: Host, pts: list[tuple[int, int, int]]) -> list[str]:
    r = host.blocks_get(world_pb2.BlocksGetParams(xyz=[c for p in pts for c in p]))
    return [r.palette[i] for i in r.state]


@pytest.fixture
def world(tmp_path, registry):
    w = World.create_flat(tmp_path / "world", registry, pregen=(-16, -16, 31, 31))
    yield w
    if not getattr(w, "closed_by_test", False):
        w.close()


def _close(w: World) -> None:
    w.close()
    w.closed_by_test = True


def test_furniture_round_trip_and_nbt_layout(world, tmp_path):
    host = Host(world)
    res = _apply(host, "b1", [(x, y, z, "minecraft:air", s) for x, y, z, s in FURNISHED])
    assert res.status == "applied" and res.written == len(FURNISHED)
    assert _get(host, [(x, y, z) for x, y, z, _ in FURNISHED]) == [s for *_, s in FURNISHED]
    # region_read stays plain block states (inspect, camera); its block_entities list names them
    rr = host.region_read(world_pb2.RegionReadParams(min={"x": 0, "y": 64, "z": 0}, max={"x": 6, "y": 64, "z": 0}))
    assert all("{" not in p for p in rr.palette)
    assert [b.id for b in rr.block_entities] == [
        "minecraft:chest",
        "minecraft:sign",
        "minecraft:banner",
        "minecraft:skull",
        "minecraft:campfire",
        "minecraft:furnace",
        "minecraft:bed",
    ]
    _close(world)

    # an independent raw read of the chunk NBT (anvil-parser2 decodes the region file)
    region = anvil.Region.from_file(str(tmp_path / "world" / "region" / "r.0.0.mca"))
    chunk = region.chunk_data(0, 0)
    bes = {int(b["x"].value): b for b in chunk["block_entities"]}
    chest = bes[0]
    assert chest["id"].value == "minecraft:chest" and chest["keepPacked"].value == 0
    items = [(int(i["Slot"].value), i["id"].value, int(i["count"].value)) for i in chest["Items"]]
    assert items == [(0, "minecraft:bread", 3), (13, "minecraft:diamond_sword", 1)]
    assert (
        type(chest["Items"][0]["Slot"]).__name__ == "TAG_Byte"
        and type(chest["Items"][0]["count"]).__name__ == "TAG_Int"
    )
    sign = bes[1]
    assert [m.value for m in sign["front_text"]["messages"]] == ["Hello", "wörld", "", ""]  # NBT strings, not JSON
    assert type(sign["front_text"]["messages"][0]).__name__ == "TAG_String"
    assert sign["back_text"]["color"].value == "red" and sign["back_text"]["has_glowing_text"].value == 1
    assert sign["front_text"]["color"].value == "black" and sign["is_waxed"].value == 1
    pats = [(p["pattern"].value, p["color"].value) for p in bes[2]["patterns"]]
    assert pats == [("minecraft:stripe_top", "white")]
    assert bes[3]["id"].value == "minecraft:skull" and bes[3]["profile"]["name"].value == "Notch"
    camp = bes[4]
    assert [int(i["Slot"].value) for i in camp["Items"]] == [2] and list(camp["CookingTimes"].value) == [0] * 4
    assert list(camp["CookingTotalTimes"].value) == [0] * 4
    furnace = bes[5]
    assert furnace["cooking_total_time"].value == 0 and "RecipesUsed" in furnace
    assert bes[6]["id"].value == "minecraft:bed" and set(bes[6].keys()) == {"id", "x", "y", "z", "keepPacked"}


@pytest.mark.skipif(
    not AMULET_PY.exists(), reason="bench/.venv-amulet (amulet-core) not installed: scripts/test_deps.sh"
)
def test_amulet_reads_the_furniture(world, tmp_path):
    host = Host(world)
    assert _apply(host, "b1", [(x, y, z, "minecraft:air", s) for x, y, z, s in FURNISHED]).status == "applied"
    _close(world)
    script = Path(__file__).with_name("amulet_read_block_entities.py")
    pts = json.dumps([[x, y, z] for x, y, z, _ in FURNISHED])
    out = subprocess.run(
        [str(AMULET_PY), str(script), str(tmp_path / "world"), pts], capture_output=True, text=True, timeout=180
    )
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout)
    assert [g["block"].split("[")[0] for g in got] == [s.split("[")[0] for *_, s in FURNISHED]
    ids = [g["entity"] for g in got]
    assert ids == [
        "minecraft:chest",
        "minecraft:sign",
        "minecraft:banner",
        "minecraft:skull",
        "minecraft:campfire",
        "minecraft:furnace",
        "minecraft:bed",
    ], got
    chest_nbt = got[0]["nbt"]
    assert "minecraft:bread" in chest_nbt and "minecraft:diamond_sword" in chest_nbt
    assert "Hello" in got[1]["nbt"] and "Notch" in got[3]["nbt"] and "stripe_top" in got[2]["nbt"]


def test_compare_and_set_includes_the_data_and_rollback_restores_it(world):
    host = Host(world)
    assert _apply(host, "b1", [(0, 64, 0, "minecraft:air", CHEST + ITEMS)]).status == "applied"
    # a player takes the bread: the contents differ, so a batch expecting our chest conflicts
    changed = CHEST + '{"items":[{"count":1,"id":"minecraft:diamond_sword","slot":13}]}'
    host.automation_set_blocks(
        world_pb2.AutomationSetBlocksParams(
            actor="player", player_id="p1", blocks=[world_pb2.AutomationBlock(x=0, y=64, z=0, state=changed)]
        )
    )
    assert _get(host, [(0, 64, 0)]) == [changed]
    res = _apply(host, "b2", [(0, 64, 0, CHEST + ITEMS, "minecraft:air")])
    assert res.status == "conflict" and res.problems[0].current == changed
    # undo-like write back to the player's version, then a data-only change is a write
    res = _apply(host, "b3", [(0, 64, 0, changed, CHEST)])
    assert res.status == "applied" and _get(host, [(0, 64, 0)]) == [CHEST]
    assert world.chunk(0, 0).block_entity_at(0, 64, 0)["Items"] == []  # an empty chest keeps Items: []
    # rolling a batch back restores the block entity too
    world.undo_batch("b3", [(0, 64, 0, changed, CHEST)])
    assert _get(host, [(0, 64, 0)]) == [changed]
    # air over a chest removes its block entity
    assert _apply(host, "b4", [(0, 64, 0, changed, "minecraft:air")]).status == "applied"
    assert world.chunk(0, 0).block_entity_at(0, 64, 0) is None


def test_bad_or_refused_data_is_refused_before_any_write(world):
    host = Host(world)
    for desired, text in [
        (CHEST + '{"items":[{"count":65,"id":"minecraft:bread","slot":0}]}', "1..64"),
        ('minecraft:stone{"items":[]}', "carries no block entity"),
        ("minecraft:spawner", "spawner"),
        ('minecraft:oak_sign[rotation=0,waterlogged=false]{"text":{"front":["1","2","3","4","5"]}}', "at most 4"),
    ]:
        with pytest.raises(McbError) as ei:
            _apply(host, f"bad-{len(text)}", [(0, 64, 0, "minecraft:air", desired)])
        assert ei.value.code == "unsupported_block" and text in ei.value.message, ei.value.message
    assert _get(host, [(0, 64, 0)]) == ["minecraft:air"]


def test_data_the_model_cannot_carry_is_never_overwritten(world):
    host = Host(world)
    assert _apply(host, "b1", [(0, 64, 0, "minecraft:air", CHEST)]).status == "applied"
    c = world.chunk(0, 0)
    c.block_entity_at(0, 64, 0)["LootTable"] = "minecraft:chests/simple_dungeon"
    cur = _get(host, [(0, 64, 0)])[0]
    assert cur == CHEST + '{"unsupported":"LootTable"}'
    with pytest.raises(McbError) as ei:
        _apply(host, "b2", [(0, 64, 0, cur, "minecraft:air")])
    assert ei.value.code == "unsupported_block" and "cannot carry" in ei.value.message
