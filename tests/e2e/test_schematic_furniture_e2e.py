"""Issue 31 item 9 — schematics with block entities, over MCP on each world host: a furnished
build (chest with items, sign with text on both sides, banner, player head, bed, furnace) is
exported, imported elsewhere turned a quarter, and every block comes back turned with its
contents; on the embedded host the two furnished third-party fixtures
(``nucleation_new_chest_test_v2.schem``: chests and shulker boxes with items, one with lore;
``prismarine_smallhouse1_v2.schem``: 72 block entities) are imported and their contents read
back from the save with anvil-parser2, an independent reader of the region files; on the Java
hosts the house's block entities are placed and the chests' lore (an item component the Java
core does not carry yet) is refused, never written without it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import anvil
import pytest
from e2e.components import run
from e2e.mcpclient import apply_and_wait, call
from mcb_common import blockentity
from mcb_common import schematic as S
from mcb_common.registry import Registry
from mcb_common.transforms import rotate

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "schem"
Y = 64
ROW = [  # (x, z, block, block_entity)
    (-40, -40, "chest[facing=north]", {"items": [{"id": "bread", "count": 3}, {"slot": 13, "id": "iron_sword"}]}),
    (
        -39,
        -40,
        "oak_sign[rotation=2]",
        {"text": {"front": ["Welcome", "home"], "back": {"lines": ["b"], "color": "red", "glowing": True}}},
    ),
    (-38, -40, "red_banner[rotation=4]", {"patterns": [{"pattern": "stripe_top", "color": "white"}]}),
    (-40, -39, "player_head[rotation=4]", {"profile": "Notch"}),
    (-39, -39, "red_bed[facing=east,part=foot]", None),
    (-38, -39, "red_bed[facing=east,part=head]", None),
    (-40, -38, "furnace[facing=east]", {"items": [{"slot": 1, "id": "coal", "count": 8}]}),
]
LO = {"x": -40, "y": Y, "z": -40}
HI = {"x": -38, "y": Y, "z": -38}


def states(comp, pts) -> list[str]:
    res = comp.world_rpc("blocks_get", {"xyz": [c for p in pts for c in p]})
    return [res["palette"][i] for i in res["state"]]


def test_furnished_build_exported_and_imported_turned(comp):
    registry = Registry.load()
    pts = [(x, Y, z) for x, z, *_ in ROW]
    got: dict[str, object] = {}

    async def scenario(client):
        ops = [
            {
                "type": "box",
                "min": {"x": x, "y": Y, "z": z},
                "max": {"x": x, "y": Y, "z": z},
                "block": b,
                **({"block_entity": d} if d else {}),
            }
            for x, z, b, d in ROW
        ]
        st = await apply_and_wait(
            client, await call(client, "build_prepare", {"recipe": {"version": 1, "operations": ops}})
        )
        assert st["state"] == "applied", st
        got["source"] = states(comp, pts)
        meta = await call(client, "schematic_export", {"name": "furnished", "min": LO, "max": HI, "origin": LO})
        assert meta["block_entities"] == len(ROW), meta
        target = {"x": -20, "y": Y, "z": -40}
        plan = await call(
            client, "schematic_import_prepare", {"asset_id": "furnished", "target": target, "rotation": 90}
        )
        assert not plan.get("left_out"), plan
        st = await apply_and_wait(client, plan)
        assert st["state"] == "applied", st

    run(comp, scenario)
    source = got["source"]
    assert isinstance(source, list) and all("{" in s for s in source[:4]) and "{" in source[6]
    # the file itself: Sponge v3 BlockEntities with the contents
    s = S.read_bytes((comp.runtime / "assets" / "furnished.schem").read_bytes())
    assert s.format == S.FORMAT_V3 and len(s.block_entities) == len(ROW)
    # imported a quarter turn clockwise about the target: (dx, dz) -> (-dz, dx), states turned, data kept
    turned = [(-20 - (z + 40), Y, -40 + (x + 40)) for x, _, z in pts]
    expected = []
    for full in source:
        state, data = blockentity.split(full)
        expected.append(rotate(state, 1, registry) + data)
    assert states(comp, turned) == expected
    after = states(comp, turned)
    assert after[0].startswith("minecraft:chest[facing=east,") and after[1].startswith("minecraft:oak_sign[rotation=6,")


def _block_entities(world: Path, lo: tuple[int, int], hi: tuple[int, int]) -> dict[tuple[int, int, int], dict]:
    """Every block entity of the chunks covering x/z lo..hi, read by anvil-parser2."""
    out = {}
    for cx in range(lo[0] >> 4, (hi[0] >> 4) + 1):
        for cz in range(lo[1] >> 4, (hi[1] >> 4) + 1):
            region = anvil.Region.from_file(str(world / "region" / f"r.{cx >> 5}.{cz >> 5}.mca"))
            for b in region.chunk_data(cx, cz)["block_entities"]:
                out[(b["x"].value, b["y"].value, b["z"].value)] = b
    return out


@pytest.mark.fixtures
@pytest.mark.parametrize(
    "name, target",
    [
        ("nucleation_new_chest_test_v2", {"x": 10, "y": 70, "z": -60}),
        ("prismarine_smallhouse1_v2", {"x": 30, "y": 64, "z": 40}),
    ],
)
def test_furnished_fixture_imported_with_contents(comp, name: str, target: dict):
    src = FIXTURES / f"{name}.schem"
    if not src.is_file():
        pytest.skip(f"third-party fixture not present at {src} (CI provides ../shared/fixtures)")
    assets = comp.runtime / "assets"
    assets.mkdir(exist_ok=True)
    shutil.copyfile(src, assets / f"{name}.schem")
    s = S.read_bytes(src.read_bytes())
    embedded = comp.world.kind == "embedded"
    lore = name.startswith("nucleation_new_chest")  # a shulker box item with lore (an item component)
    if comp.world.kind == "paper-mock" and not lore:
        pytest.skip(
            "paper-mock: MockBukkit refuses the house's minecraft:stone_brick_wall[east=low,north=none,"
            "south=low,up=true,...] as an unknown block state (a gap of the mock's block data, not of "
            "the schematic); java-core and embedded place the house"
        )
    got: dict[str, object] = {}

    async def scenario(client):
        plan = await call(client, "schematic_import_prepare", {"asset_id": name, "target": target})
        assert not plan.get("left_out"), plan
        st = await apply_and_wait(client, plan)
        got["state"] = st

    run(comp, scenario)
    st = got["state"]
    assert isinstance(st, dict)
    if not embedded and lore:
        # the Java core does not carry item components yet (docs/schematics.md): refused, never written without
        assert st["state"] != "applied" and st.get("written", 0) == 0, st
        assert "components" in json.dumps(st), st
        return
    assert st["state"] == "applied", json.dumps(st)[:3000]
    if not embedded:  # the Java hosts: every block entity position holds its block (the save is the embedded's)
        ox, oy, oz = s.offset
        pts = [
            (target["x"] + ox + b["pos"][0], target["y"] + oy + b["pos"][1], target["z"] + oz + b["pos"][2])
            for b in s.block_entities
        ]
        names = [st_.split("[")[0].split("{")[0] for st_ in states(comp, pts)]
        assert names == [
            S.legacy_state(s.state_at(*b["pos"]) or "", s.data_version).split("[")[0] for b in s.block_entities
        ]
        return
    run(comp, scenario)
    ox, oy, oz = s.offset
    lo = (target["x"] + ox, target["z"] + oz)
    hi = (lo[0] + s.width - 1, lo[1] + s.length - 1)
    saved = _block_entities(comp.saved_world(), lo, hi)
    for b in s.block_entities:
        x, y, z = b["pos"]
        pos = (target["x"] + ox + x, target["y"] + oy + y, target["z"] + oz + z)
        assert pos in saved, f"no block entity saved at {pos} for {b['id']}"
        tag = saved[pos]
        if b["id"] != "minecraft:comparator":
            assert tag["id"].value == b["id"], (pos, tag["id"].value, b["id"])
        items = b["nbt"].get("Items")
        if items is not None:  # every stack, count for count (the file: pre-1.20.5 Count bytes)
            assert [(i["Slot"].value, i["id"].value, i["count"].value) for i in tag["Items"]] == [
                (int(i["Slot"]), i["id"], int(i["Count"])) for i in items
            ]
            for i, it in zip(tag["Items"], items, strict=True):
                lore = ((it.get("tag") or {}).get("display") or {}).get("Lore")
                if lore:
                    assert [x.value for x in i["components"]["minecraft:lore"]] == ["(+NBT)"]
    assert len([p for p in saved if lo[0] <= p[0] <= hi[0] and lo[1] <= p[2] <= hi[1]]) >= len(s.block_entities)
