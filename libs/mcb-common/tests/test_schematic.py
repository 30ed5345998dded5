"""Schematic files: every third-party fixture, round trips, refusals, caps, rotation.

Fixtures are read from ../shared/fixtures (never copied into the repo); without them the
fixture tests skip with the reason.
"""

from __future__ import annotations

import gzip
import json
import struct
import subprocess
from array import array
from pathlib import Path

import pytest
from mcb_common import nbt
from mcb_common import schematic as S
from mcb_common.errors import ErrorCode, McbError
from mcb_common.registry import Registry

REPO = Path(__file__).resolve().parents[3]
FIXTURES = REPO.parent / "shared" / "fixtures"
AMULET_PY = REPO / "bench" / ".venv-amulet" / "bin" / "python"
WORLD_DV = 4671

# file -> (kind, expected import outcome without opt-in, with opt-in)
#   "ok" | ("refused", code, text in the message)
EXPECTED = {
    "schem/nucleation_sample_v2.schem": ("schem", "ok", "ok"),
    "schem/nucleation_test_cube_v3.schem": ("schem", "ok", "ok"),
    # block entities are imported with their contents (test_schematic_block_entities.py)
    "schem/hollowcube_1_20_1_read_fail_v3.schem": ("schem", "ok", "ok"),
    "schem/nucleation_new_chest_test_v2.schem": ("schem", "ok", "ok"),
    # 1.16 states renamed since (chain → iron_chain, cauldron[level=0] → cauldron) are converted
    "schem/prismarine_smallhouse1_v2.schem": ("schem", "ok", "ok"),
    "schem/nucleation_uss-texas_v3.schem": (
        "schem",
        ("refused", "budget_exceeded", "the plan limit is 100,000"),
        ("refused", "budget_exceeded", "the plan limit is 100,000"),
    ),
    "structure/fabric_cactus_farm.nbt": (
        "nbt",
        ("refused", "unsupported_block", "minecraft:jigsaw at [0, 0, 4]: jigsaw blocks"),
        "ok",
    ),
    "structure/fabric_test_structure.nbt": (
        "nbt",
        ("refused", "unsupported_block", "5 entities (minecraft:armor_stand, minecraft:item_frame)"),
        ("refused", "unsupported_block", "entities are not imported"),
    ),
}

DIMS = {
    "schem/nucleation_sample_v2.schem": (2, 2, 2, 3700, (-1, 0, 0)),
    "schem/nucleation_test_cube_v3.schem": (3, 3, 3, 3700, (-3, 0, -1)),
    "schem/hollowcube_1_20_1_read_fail_v3.schem": (15, 16, 20, 3578, (-14, 0, -19)),
    "schem/nucleation_new_chest_test_v2.schem": (7, 5, 12, 3700, (-2, -1, -2)),
    "schem/prismarine_smallhouse1_v2.schem": (21, 28, 20, 2584, (-10, 0, -19)),
    "schem/nucleation_uss-texas_v3.schem": (175, 53, 31, 1343, (0, 0, 0)),
    "structure/fabric_cactus_farm.nbt": (7, 6, 9, 2724, (0, 0, 0)),
    "structure/fabric_test_structure.nbt": (8, 8, 8, 3218, (0, 0, 0)),
}


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.load()


@pytest.fixture(scope="module")
def fixtures() -> Path:
    if not FIXTURES.is_dir():
        pytest.skip(f"third-party fixtures not present at {FIXTURES} (CI provides ../shared/fixtures)")
    return FIXTURES


def _read(fixtures: Path, rel: str) -> S.Schematic:
    kind = EXPECTED[rel][0]
    return S.read_bytes((fixtures / rel).read_bytes(), kind)


def test_every_fixture_is_covered(fixtures: Path) -> None:
    found = {f"{d}/{p.name}" for d in ("schem", "structure") for p in (fixtures / d).iterdir()}
    assert found == set(EXPECTED), "a new fixture needs an expected outcome here"


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_fixture_reads_with_dimensions(fixtures: Path, rel: str) -> None:
    s = _read(fixtures, rel)
    w, h, ln, dv, off = DIMS[rel]
    assert (s.width, s.height, s.length, s.data_version, s.offset) == (w, h, ln, dv, off)
    assert len(s.blocks) == w * h * ln


def test_smallhouse_counts(fixtures: Path) -> None:
    s = _read(fixtures, "schem/prismarine_smallhouse1_v2.schem")
    assert s.non_air_count() == 3201 and len(s.palette) == 173 and len(s.block_entities) == 72
    h = _read(fixtures, "schem/hollowcube_1_20_1_read_fail_v3.schem")
    assert h.non_air_count() == 889 and len(h.palette) == 112
    c = _read(fixtures, "schem/nucleation_test_cube_v3.schem")
    assert c.states().count("minecraft:cyan_wool") == 20 and c.states().count("minecraft:air") == 7


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_fixture_import_outcome(fixtures: Path, registry: Registry, rel: str) -> None:
    s = _read(fixtures, rel)
    _, plain, opted = EXPECTED[rel]
    for allow, expected in ((False, plain), (True, opted)):
        if expected == "ok":
            chk = S.check_import(
                s, registry, world_data_version=WORLD_DV, max_positions=100_000, allow_drop_block_entities=allow
            )
            assert chk.positions == s.block_count() - len(chk.skipped)
            # only block entities the model cannot carry are left out, and only with the opt-in
            assert {tuple(b["pos"]) for b in chk.skipped} <= {tuple(b["pos"]) for b in s.block_entities}
            assert allow or not chk.skipped
        else:
            with pytest.raises(McbError) as ei:
                S.check_import(
                    s, registry, world_data_version=WORLD_DV, max_positions=100_000, allow_drop_block_entities=allow
                )
            assert ei.value.code == ErrorCode(expected[1])
            assert expected[2] in ei.value.message, ei.value.message


def test_block_entity_refusal_lists_them(fixtures: Path, registry: Registry) -> None:
    s = _read(fixtures, "structure/fabric_cactus_farm.nbt")
    with pytest.raises(McbError) as ei:
        S.check_import(s, registry, world_data_version=WORLD_DV, max_positions=100_000)
    d = ei.value.details
    assert d["count"] == 1 and d["block_entities"] == [
        {
            "pos": [0, 0, 4],
            "id": "minecraft:jigsaw",
            "reason": "jigsaw blocks belong to structure generation; they are never placed by the agent",
        }
    ]
    assert "allow_drop_block_entities" in ei.value.message


def _without_block_entities(s: S.Schematic) -> S.Schematic:
    """The same blocks with every block entity position turned to air (writers refuse BEs)."""
    blocks = array("i", s.blocks)
    if "minecraft:air" not in s.palette:
        s.palette.append("minecraft:air")
    air = s.palette.index("minecraft:air")
    for b in s.block_entities:
        x, y, z = b["pos"]
        blocks[x + z * s.width + y * s.width * s.length] = air
    return S.Schematic(s.width, s.height, s.length, list(s.palette), blocks, s.offset, s.data_version)


SPONGE = sorted(r for r in EXPECTED if r.startswith("schem/"))


@pytest.mark.parametrize("rel", SPONGE)
@pytest.mark.parametrize("version", [2, 3])
def test_round_trip(fixtures: Path, rel: str, version: int) -> None:
    s = _without_block_entities(_read(fixtures, rel))
    data = S.write_bytes(s, version)
    assert data[:2] == b"\x1f\x8b"
    back = S.read_bytes(data)
    assert back.format == (S.FORMAT_V2 if version == 2 else S.FORMAT_V3)
    assert (back.width, back.height, back.length) == (s.width, s.height, s.length)
    assert back.offset == s.offset and back.data_version == s.data_version
    assert back.states() == s.states()
    assert not back.block_entities and not back.entities and not back.unknown_fields
    # and a second generation is byte-stable apart from the date
    again = S.read_bytes(S.write_bytes(back, version))
    assert again.states() == s.states()


def test_written_v3_layout(fixtures: Path) -> None:
    s = _read(fixtures, "schem/nucleation_test_cube_v3.schem")
    name, root = nbt.read_named(gzip.decompress(S.write_bytes(s, 3)))
    assert name == "" and list(root) == ["Schematic"]
    sch = root["Schematic"]
    assert sch["Version"] == 3 and isinstance(sch["Width"], nbt.Short) and isinstance(sch["Offset"], nbt.IntArray)
    assert set(sch["Blocks"]) == {"Palette", "Data", "BlockEntities"}
    name2, root2 = nbt.read_named(gzip.decompress(S.write_bytes(s, 2)))
    assert name2 == "Schematic" and root2["Version"] == 2 and root2["PaletteMax"] == 2
    assert (root2["Metadata"]["WEOffsetX"], root2["Metadata"]["WEOffsetZ"]) == (-3, -1)


def test_multibyte_varints_round_trip() -> None:
    pal = [f"minecraft:{n}" for n in ("stone", "dirt")] + [
        f"minecraft:oak_stairs[facing=north,half=bottom,shape=straight,waterlogged={w}]" for w in ("true", "false")
    ]
    pal += [f"minecraft:test_{i}" for i in range(200)]  # > 128 entries: 2-byte varints
    pal += ["minecraft:stone"]  # a duplicate entry shares one palette slot when written
    idx = [i % len(pal) for i in range(10 * 10 * 10)]
    s = S.from_region((10, 10, 10), pal, idx, offset=(1, 2, 3), data_version=WORLD_DV)
    back = S.read_bytes(S.write_bytes(s))
    assert back.states() == s.states()
    assert S.decode_varints(S.encode_varints([0, 127, 128, 300, 16384]), 5).tolist() == [0, 127, 128, 300, 16384]


@pytest.mark.skipif(not AMULET_PY.exists(), reason="bench/.venv-amulet (amulet-core) not installed")
def test_cross_check_with_amulet(fixtures: Path, tmp_path: Path) -> None:
    """An independent reader (amulet-core, its own venv) sees the blocks we wrote."""
    s = _without_block_entities(_read(fixtures, "schem/hollowcube_1_20_1_read_fail_v3.schem"))
    results = {}
    for version in (2, 3):
        path = tmp_path / f"x{version}.schem"
        path.write_bytes(S.write_bytes(s, version))
        script = Path(__file__).with_name("amulet_read_schem.py")
        out = subprocess.run([str(AMULET_PY), str(script), str(path)], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        results[version] = json.loads(out.stdout)
    for version, doc in results.items():
        assert doc["size"] == [s.width, s.height, s.length], version
        mismatched = []
        for y in range(s.height):
            for z in range(s.length):
                for x in range(s.width):
                    ours = s.state_at(x, y, z)
                    theirs = doc["blocks"][f"{x},{y},{z}"]
                    if ours.split("[")[0] != theirs.split("[")[0]:
                        mismatched.append((x, y, z, ours, theirs))
        assert not mismatched, mismatched[:5]
    # v3 stores the offset relative to the anchor; amulet places the box at it
    assert results[3]["min"] == list(s.offset)


# ---- caps and corruption --------------------------------------------------------------------
def test_oversize_compressed_refused_before_reading() -> None:
    with pytest.raises(McbError) as ei:
        S.read_bytes(b"\x1f\x8b" + b"\0" * S.MAX_COMPRESSED)
    assert ei.value.code == ErrorCode.BUDGET_EXCEEDED


def test_gzip_bomb_stops_at_the_cap() -> None:
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024), 9)  # 64 MiB of zeros in ~64 KiB
    assert len(bomb) < S.MAX_COMPRESSED
    import tracemalloc

    tracemalloc.start()
    with pytest.raises(McbError) as ei:
        S.read_bytes(bomb)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert ei.value.code == ErrorCode.BUDGET_EXCEEDED and "decompressed" in ei.value.message
    assert peak < 3 * S.MAX_DECOMPRESSED, f"peak {peak:,} bytes"


def test_truncated_gzip_is_an_error(fixtures: Path) -> None:
    data = (fixtures / "schem/prismarine_smallhouse1_v2.schem").read_bytes()
    for cut in (len(data) // 2, len(data) - 9, 12):
        with pytest.raises(McbError) as ei:
            S.read_bytes(data[:cut])
        assert ei.value.code == ErrorCode.INVALID_REQUEST
        assert "truncated" in ei.value.message or "corrupt" in ei.value.message


def test_garbage_and_wrong_formats() -> None:
    for data, text in [
        (b"", "empty"),
        (b"hello", "not a gzip"),
        (gzip.compress(b"\x0a\x00\x00\x00"), "Version"),
        (gzip.compress(nbt.write(nbt.Compound(Version=nbt.Int(4)))), "version 4"),
    ]:
        with pytest.raises(McbError) as ei:
            S.read_bytes(data)
        assert text in ei.value.message, ei.value.message


def test_tag_bomb_is_bounded() -> None:
    # a list of MAX_TAGS + 10 empty compounds: 1 byte each on disk, a dict each in memory
    n = S.MAX_TAGS + 10
    head = nbt.write(nbt.Compound(Version=nbt.Int(2)), "Schematic")[:-1]  # drop the root's End
    raw = head + bytes([nbt.LIST]) + struct.pack(">H", 4) + b"Junk" + bytes([nbt.COMPOUND]) + struct.pack(">i", n)
    raw += b"\x00" * n + b"\x00"
    assert len(raw) < S.MAX_DECOMPRESSED
    with pytest.raises(McbError) as ei:
        S.read_bytes(gzip.compress(raw))
    assert ei.value.code == ErrorCode.BUDGET_EXCEEDED and "tags" in ei.value.message


def _v2(**extra) -> bytes:
    root = nbt.Compound(
        Version=nbt.Int(2),
        DataVersion=nbt.Int(3700),
        Width=nbt.Short(1),
        Height=nbt.Short(1),
        Length=nbt.Short(2),
        Offset=nbt.IntArray([0, 0, 0]),
        PaletteMax=nbt.Int(2),
        Palette=nbt.Compound({"minecraft:stone": nbt.Int(0), "minecraft:air": nbt.Int(1)}),
        BlockData=nbt.ByteArray(b"\x00\x01"),
    )
    root.update(extra)
    return gzip.compress(nbt.write(root, "Schematic"))


@pytest.mark.parametrize(
    "extra, code, text",
    [
        (
            {"BiomePalette": nbt.Compound({"minecraft:plains": nbt.Int(0)}), "BiomeData": nbt.ByteArray(b"\0")},
            "invalid_request",
            "biome",
        ),
        (
            {
                "Entities": nbt.List(
                    nbt.COMPOUND,
                    [nbt.Compound(Id=nbt.String("minecraft:pig"), Pos=nbt.List(nbt.DOUBLE, [nbt.Double(0.5)] * 3))],
                )
            },
            "unsupported_block",
            "minecraft:pig",
        ),
        ({"Frobnicate": nbt.Int(1)}, "invalid_request", "Frobnicate"),
        (
            {"Metadata": nbt.Compound(RequiredMods=nbt.List(nbt.STRING, [nbt.String("create")]))},
            "unsupported_block",
            "create",
        ),
        ({"DataVersion": nbt.Int(WORLD_DV + 1)}, "version_mismatch", "newer"),
        (
            {"Palette": nbt.Compound({"minecraft:stonee": nbt.Int(0), "minecraft:air": nbt.Int(1)})},
            "unsupported_block",
            "did you mean minecraft:stone",
        ),
    ],
)
def test_refusals(registry: Registry, extra, code, text) -> None:
    s = S.read_bytes(_v2(**extra))
    with pytest.raises(McbError) as ei:
        S.check_import(s, registry, world_data_version=WORLD_DV, max_positions=100)
    assert ei.value.code == ErrorCode(code) and text in ei.value.message, ei.value.message


def test_plan_limit(registry: Registry) -> None:
    s = S.read_bytes(_v2())
    with pytest.raises(McbError) as ei:
        S.check_import(s, registry, world_data_version=WORLD_DV, max_positions=1)
    assert ei.value.code == ErrorCode.BUDGET_EXCEEDED
    assert S.check_import(s, registry, world_data_version=WORLD_DV, max_positions=2).positions == 2


def test_corrupt_block_data() -> None:
    with pytest.raises(McbError, match="block data holds"):
        S.read_bytes(_v2(BlockData=nbt.ByteArray(b"\x00")))
    with pytest.raises(McbError, match="palette index"):
        S.read_bytes(_v2(BlockData=nbt.ByteArray(b"\x00\x05")))
    with pytest.raises(McbError, match="inside a varint"):
        S.read_bytes(_v2(BlockData=nbt.ByteArray(b"\x00\x81")))


# ---- placement and rotation -----------------------------------------------------------------
def _placed(s: S.Schematic, registry: Registry, target, rotation) -> dict[tuple[int, int, int], str]:
    chk = S.check_import(s, registry, world_data_version=WORLD_DV, max_positions=100_000)
    pal, xyz, st, warnings = S.placements(s, chk, target, rotation, registry)
    assert not warnings
    return {(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]): pal[v] for i, v in enumerate(st)}


def test_offset_and_rotation_of_positions(registry: Registry) -> None:
    # 2 wide (x), 1 high, 1 long: stone at local x=0, dirt at x=1; anchor offset (1, 0, 0)
    s = S.from_region((2, 1, 1), ["minecraft:stone", "minecraft:dirt"], [0, 1], offset=(1, 0, 0), data_version=WORLD_DV)
    t = (10, 64, 10)
    assert _placed(s, registry, t, 0) == {(11, 64, 10): "minecraft:stone", (12, 64, 10): "minecraft:dirt"}
    # clockwise seen from above: east (+x) turns to south (+z)
    assert _placed(s, registry, t, 90) == {(10, 64, 11): "minecraft:stone", (10, 64, 12): "minecraft:dirt"}
    assert _placed(s, registry, t, 180) == {(9, 64, 10): "minecraft:stone", (8, 64, 10): "minecraft:dirt"}
    assert _placed(s, registry, t, 270) == {(10, 64, 9): "minecraft:stone", (10, 64, 8): "minecraft:dirt"}


def test_states_turn_with_the_schematic(registry: Registry) -> None:
    stairs = "minecraft:oak_stairs[facing=north,half=bottom,shape=straight,waterlogged=false]"
    s = S.from_region((1, 1, 1), [stairs], [0], offset=(0, 0, 0), data_version=WORLD_DV)
    facing = {r: next(iter(_placed(s, registry, (0, 64, 0), r).values())) for r in (0, 90, 180, 270)}
    assert [f.split("facing=")[1].split(",")[0] for f in facing.values()] == ["north", "east", "south", "west"]


def test_structure_void_is_not_placed(fixtures: Path, registry: Registry) -> None:
    s = _read(fixtures, "structure/fabric_cactus_farm.nbt")
    assert S.VOID in s.blocks or s.block_count() == s.volume
    chk = S.check_import(
        s, registry, world_data_version=WORLD_DV, max_positions=100_000, allow_drop_block_entities=True
    )
    pal, xyz, st, _ = S.placements(s, chk, (0, 64, 0), 0, registry)
    assert len(st) == s.block_count() - 1  # the jigsaw is left out
    assert all("structure_void" not in p for p in pal)
