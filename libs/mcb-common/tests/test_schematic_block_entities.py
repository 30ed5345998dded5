"""Schematics with block entities (issue 31 item 9): Sponge v3/v2 ``BlockEntities`` written from
full states and read back into the shared data model, older files upgraded, the furnished
fixtures imported with their contents, rotation turning the blocks and keeping their data.
"""

from __future__ import annotations

import json
from array import array
from pathlib import Path

import pytest
from mcb_common import blockentity, nbt
from mcb_common import schematic as S
from mcb_common.errors import ErrorCode, McbError
from mcb_common.registry import Registry

FIXTURES = Path(__file__).resolve().parents[3].parent / "shared" / "fixtures" / "schem"
WORLD_DV = 4671

CHEST = "minecraft:chest[facing=north,type=single,waterlogged=false]"
SIGN = "minecraft:oak_wall_sign[facing=south,waterlogged=false]"
BANNER = "minecraft:red_wall_banner[facing=west]"
HEAD = "minecraft:player_head[powered=false,rotation=4]"
BED = "minecraft:red_bed[facing=east,occupied=false,part=foot]"
FURNACE = "minecraft:furnace[facing=east,lit=false]"
CHEST_DATA = {
    "items": [
        {"count": 3, "id": "minecraft:bread", "slot": 0},
        {
            "components": {"minecraft:custom_name": "Kit", "minecraft:lore": ["line one", "line two"]},
            "count": 1,
            "id": "minecraft:iron_sword",
            "slot": 13,
        },
    ]
}
SIGN_DATA = {
    "text": {
        "back": {"color": "red", "glowing": True, "lines": ["b", "", "", ""]},
        "front": {"lines": ["Welcome", "é ü", "", ""]},
        "waxed": True,
    }
}
BANNER_DATA = {
    "patterns": [
        {"color": "white", "pattern": "minecraft:stripe_top"},
        {"color": "black", "pattern": "minecraft:creeper"},
    ]
}
HEAD_DATA = {"profile": "Notch"}
FURNACE_DATA = {"items": [{"count": 8, "id": "minecraft:coal", "slot": 1}]}


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.load()


def _fixture(name: str) -> S.Schematic:
    p = FIXTURES / name
    if not p.is_file():
        pytest.skip(f"third-party fixture not present at {p} (CI provides ../shared/fixtures)")
    return S.read_bytes(p.read_bytes())


def _furnished() -> tuple[list[str], list[int], dict[tuple[int, int, int], str]]:
    """A 3×2×2 box: a row of furniture on stone, as a world read gives it (full states)."""
    pal = [
        "minecraft:stone",
        "minecraft:air",
        CHEST + blockentity.dumps(CHEST_DATA),
        SIGN + blockentity.dumps(SIGN_DATA),
        BANNER + blockentity.dumps(BANNER_DATA),
        HEAD + blockentity.dumps(HEAD_DATA),
        BED,
        FURNACE + blockentity.dumps(FURNACE_DATA),
    ]
    w, ln = 3, 2
    idx = [0] * (w * ln) + [1] * (w * ln)
    placed = {(0, 1, 0): 2, (1, 1, 0): 3, (2, 1, 0): 4, (0, 1, 1): 5, (1, 1, 1): 6, (2, 1, 1): 7}
    for (x, y, z), p in placed.items():
        idx[x + z * w + y * w * ln] = p
    return pal, idx, {pos: pal[p] for pos, p in placed.items()}


@pytest.mark.parametrize("version", [3, 2])
def test_export_and_reimport_keep_contents(registry: Registry, version: int) -> None:
    pal, idx, placed = _furnished()
    s = S.from_region((3, 2, 2), pal, idx, offset=(0, 0, 0), data_version=WORLD_DV, name="furnished")
    assert "{" not in "".join(s.palette), "the block palette holds block states only"
    assert len(s.block_entities) == 6  # the bed's block entity too (empty)
    back = S.read_bytes(S.write_bytes(s, version))
    assert len(back.block_entities) == 6
    chk = S.check_import(back, registry, world_data_version=WORLD_DV, max_positions=1000)
    assert not chk.skipped
    assert {
        pos: blockentity.join(registry.canonical(back.state_at(*pos) or ""), chk.data.get(pos)) for pos in placed
    } == placed
    out_pal, xyz, states, _ = S.placements(back, chk, (10, 64, 10), 0, registry)
    got = {(xyz[3 * i] - 10, xyz[3 * i + 1] - 64, xyz[3 * i + 2] - 10): out_pal[st] for i, st in enumerate(states)}
    assert {p: got[p] for p in placed} == placed


def test_v3_layout_of_block_entities() -> None:
    pal, idx, _ = _furnished()
    s = S.from_region((3, 2, 2), pal, idx, offset=(0, 0, 0), data_version=WORLD_DV)
    _, root = S.read_nbt(S.decompress_capped(S.write_bytes(s, 3)))
    bes = {tuple(b["Pos"]): b for b in root["Schematic"]["Blocks"]["BlockEntities"]}
    chest = bes[(0, 1, 0)]
    assert isinstance(chest["Pos"], nbt.IntArray) and chest["Id"] == "minecraft:chest"
    assert set(chest["Data"]) == {"Items"}  # no id / x / y / z inside Data
    sword = chest["Data"]["Items"][1]
    assert isinstance(sword["Slot"], nbt.Byte) and isinstance(sword["count"], nbt.Int)
    assert nbt.to_plain(sword["components"]) == {
        "minecraft:custom_name": "Kit",
        "minecraft:lore": ["line one", "line two"],
    }
    sign = bes[(1, 1, 0)]["Data"]
    assert list(sign["front_text"]["messages"]) == ["Welcome", "é ü", "", ""] and sign["is_waxed"] == 1
    assert nbt.to_plain(bes[(2, 1, 0)]["Data"]["patterns"])[1] == {"pattern": "minecraft:creeper", "color": "black"}
    assert nbt.to_plain(bes[(0, 1, 1)]["Data"]["profile"]) == {"name": "Notch"}
    assert "Data" not in bes[(1, 1, 1)] or not bes[(1, 1, 1)]["Data"]  # the bed: no data


@pytest.mark.parametrize("turns", [1, 2, 3])
def test_rotation_turns_blocks_and_keeps_data(registry: Registry, turns: int) -> None:
    from mcb_common.transforms import rotate

    pal, idx, placed = _furnished()
    s = S.read_bytes(S.write_bytes(S.from_region((3, 2, 2), pal, idx, offset=(0, 0, 0), data_version=WORLD_DV)))
    chk = S.check_import(s, registry, world_data_version=WORLD_DV, max_positions=1000)
    out_pal, xyz, states, _ = S.placements(s, chk, (0, 64, 0), 90 * turns, registry)
    got = {(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]): out_pal[st] for i, st in enumerate(states)}
    for (x, y, z), full in placed.items():
        rx, rz = S.rotate_xz(x, z, turns)
        state, data = blockentity.split(full)
        assert got[(rx, 64 + y, rz)] == rotate(state, turns, registry) + data
    # hand-written for one quarter turn: the north-facing chest faces east, the sign on a wall
    # facing south faces west, the head's rotation 4 (east) becomes 8 (south)
    if turns == 1:
        assert got[(0, 65, 0)].startswith("minecraft:chest[facing=east,")
        assert got[(0, 65, 1)].startswith("minecraft:oak_wall_sign[facing=west,")
        assert got[(-1, 65, 0)].startswith("minecraft:player_head[powered=false,rotation=8]{")


def test_chest_fixture_imports_with_contents(registry: Registry) -> None:
    s = _fixture("nucleation_new_chest_test_v2.schem")
    chk = S.check_import(s, registry, world_data_version=WORLD_DV, max_positions=100_000)
    assert not chk.skipped
    # 3 chests and 2 shulker boxes hold items; the comparator's block entity holds no data
    assert sorted(chk.data) == [(0, 1, 0), (0, 1, 1), (0, 1, 3), (0, 1, 4), (1, 1, 0)]
    raw = {tuple(b["pos"]): b["nbt"] for b in s.block_entities}
    for pos, data in chk.data.items():  # every stack of the file, count for count (v2 "Count" bytes)
        assert [(i["slot"], i["id"], i["count"]) for i in data["items"]] == [
            (int(i["Slot"]), i["id"], int(i["Count"])) for i in raw[pos]["Items"]
        ]
    lore = [i for i in chk.data[(0, 1, 1)]["items"] if i["id"] == "minecraft:red_shulker_box"]
    assert lore == [
        {"components": {"minecraft:lore": ["(+NBT)"]}, "count": 1, "id": "minecraft:red_shulker_box", "slot": 5}
    ], "pre-1.20.5 tag.display.Lore (JSON text) becomes the lore component"


def test_smallhouse_fixture_imports_all_72(registry: Registry) -> None:
    s = _fixture("prismarine_smallhouse1_v2.schem")
    chk = S.check_import(s, registry, world_data_version=WORLD_DV, max_positions=100_000)
    assert len(s.block_entities) == 72 and not chk.skipped
    assert any("iron_chain" in w for w in chk.warnings)
    out_pal, xyz, states, _ = S.placements(s, chk, (0, 64, 0), 0, registry)
    assert len(states) == s.block_count()
    placed = {out_pal[st].split("[")[0] for st in states}
    assert {
        "minecraft:blast_furnace",
        "minecraft:brewing_stand",
        "minecraft:hopper",
        "minecraft:barrel",
        "minecraft:enchanting_table",
        "minecraft:iron_chain",
    } <= placed


def test_signs_of_a_1_20_file(registry: Registry) -> None:
    s = _fixture("hollowcube_1_20_1_read_fail_v3.schem")
    chk = S.check_import(s, registry, world_data_version=WORLD_DV, max_positions=100_000)
    assert chk.data[(6, 10, 1)] == {
        "text": {"front": {"color": "white", "glowing": True, "lines": ["", "", "      Н И Ч Е Г О  ", ""]}}
    }


def _one(state: str, nbt_data: dict, dv: int) -> S.Schematic:
    return S.Schematic(
        1,
        1,
        1,
        [state],
        array("i", [0]),
        data_version=dv,
        block_entities=[{"pos": (0, 0, 0), "id": "?", "nbt": nbt_data}],
    )


def test_legacy_forms_are_upgraded(registry: Registry) -> None:
    banner = _one(
        "minecraft:white_banner[rotation=0]",
        {"Patterns": [{"Pattern": "ts", "Color": 14}, {"Pattern": "cre", "Color": 15}]},
        2584,
    )
    chk = S.check_import(banner, registry, world_data_version=WORLD_DV, max_positions=10)
    assert chk.data[(0, 0, 0)] == {
        "patterns": [
            {"color": "red", "pattern": "minecraft:stripe_top"},
            {"color": "black", "pattern": "minecraft:creeper"},
        ]
    }
    sign = _one(
        "minecraft:oak_sign[rotation=0,waterlogged=false]",
        {"Text1": '{"text":"Hi"}', "Text2": '""', "Text3": '"x"', "Text4": "", "Color": "blue", "GlowingText": 1},
        2584,
    )
    chk = S.check_import(sign, registry, world_data_version=WORLD_DV, max_positions=10)
    assert chk.data[(0, 0, 0)] == {"text": {"front": {"color": "blue", "glowing": True, "lines": ["Hi", "", "x", ""]}}}
    head = _one(
        "minecraft:player_head[powered=false,rotation=0]", {"SkullOwner": {"Name": "jeb_", "Id": [1, 2, 3, 4]}}, 3700
    )
    assert S.check_import(head, registry, world_data_version=WORLD_DV, max_positions=10).data[(0, 0, 0)] == {
        "profile": "jeb_"
    }


@pytest.mark.parametrize(
    ("state", "data", "text"),
    [
        (
            CHEST,
            {
                "Items": [
                    {
                        "Slot": 0,
                        "id": "minecraft:diamond_sword",
                        "Count": 1,
                        "tag": {"Enchantments": [{"id": "minecraft:sharpness", "lvl": 5}]},
                    }
                ]
            },
            "tag.Enchantments",
        ),
        (
            CHEST,
            {"Items": [{"Slot": 0, "id": "minecraft:stone", "Count": 1}], "LootTable": "minecraft:chests/x"},
            "LootTable",
        ),
        (CHEST, {"Items": [{"Slot": 0, "id": "minecraft:not_an_item", "Count": 1}]}, "not an item of this version"),
        (CHEST, {"Items": [{"Slot": 0, "id": "minecraft:ender_pearl", "Count": 64}]}, "must be 1..16"),
        (SIGN, {"front_text": {"messages": ['{"text":"x","color":"red"}', '""', '""', '""']}}, "styled text"),
        ("minecraft:spawner", {"SpawnData": {}}, "spawner"),
    ],
)
def test_what_the_model_cannot_carry_is_refused_or_left_out(
    registry: Registry, state: str, data: dict, text: str
) -> None:
    s = _one(state, data, 3700)
    with pytest.raises(McbError) as ei:
        S.check_import(s, registry, world_data_version=WORLD_DV, max_positions=10)
    assert ei.value.code == ErrorCode.UNSUPPORTED_BLOCK
    assert ei.value.details["block_entities"][0]["pos"] == [0, 0, 0]
    assert text in ei.value.details["block_entities"][0]["reason"], ei.value.details
    chk = S.check_import(s, registry, world_data_version=WORLD_DV, max_positions=10, allow_drop_block_entities=True)
    assert chk.skipped == [{"pos": (0, 0, 0), "id": "?"}] and chk.positions == 0


def test_export_refuses_data_beyond_the_model() -> None:
    full = CHEST + json.dumps({"unsupported": "LootTable"})
    with pytest.raises(McbError) as ei:
        S.from_region((1, 1, 1), [full], [0], offset=(0, 0, 0), data_version=WORLD_DV)
    assert ei.value.code == ErrorCode.UNSUPPORTED_BLOCK


def test_export_never_writes_a_file_over_the_read_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    pal, idx, _ = _furnished()
    s = S.from_region((3, 2, 2), pal, idx, offset=(0, 0, 0), data_version=WORLD_DV)
    size = len(S.decompress_capped(S.write_bytes(s)))
    monkeypatch.setattr(S, "MAX_DECOMPRESSED", size - 1)
    with pytest.raises(McbError) as ei:
        S.write_bytes(s)
    assert ei.value.code == ErrorCode.BUDGET_EXCEEDED and "bytes of NBT" in ei.value.message


AMULET_PY = Path(__file__).resolve().parents[3] / "bench" / ".venv-amulet" / "bin" / "python"


@pytest.mark.skipif(
    not AMULET_PY.exists(), reason="bench/.venv-amulet (amulet-core) not installed: scripts/test_deps.sh"
)
@pytest.mark.parametrize("version", [3, 2])
def test_amulet_reads_our_block_entities(tmp_path: Path, version: int) -> None:
    """An independent reader (amulet-core, its own venv) finds every block entity we wrote, with
    its contents (amulet translates to its universal format: names differ, the values remain)."""
    import subprocess

    pal, idx, _ = _furnished()
    path = tmp_path / f"f{version}.schem"
    path.write_bytes(
        S.write_bytes(S.from_region((3, 2, 2), pal, idx, offset=(0, 0, 0), data_version=WORLD_DV), version)
    )
    script = Path(__file__).with_name("amulet_read_block_entities.py")
    out = subprocess.run([str(AMULET_PY), str(script), str(path)], capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr[-2000:]
    got = {tuple(b["pos"]): b for b in json.loads(out.stdout)}
    expected = {
        (0, 1, 0): ("chest", ['"minecraft:bread"', "IntTag(3)", '"minecraft:iron_sword"']),
        (1, 1, 0): ("sign", ['"Welcome"', '"red"']),
        (2, 1, 0): ("banner", ['"minecraft:creeper"', '"black"']),
        (0, 1, 1): ("head", ['"Notch"']),
        (1, 1, 1): ("bed", []),
        (2, 1, 1): ("furnace", ['"minecraft:coal"', "IntTag(8)"]),
    }
    assert set(got) == set(expected)
    for pos, (name, texts) in expected.items():
        assert got[pos]["id"].endswith(":" + name), got[pos]["id"]
        for t in texts:
            assert t in got[pos]["nbt"], (pos, t, got[pos]["nbt"][:300])
