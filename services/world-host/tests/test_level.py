"""level.dat: the new flat world against the real vanilla 1.21.11 save, field by field."""

from __future__ import annotations

import gzip

import nbt as pynbt  # the NBT package anvil-parser2 uses: an independent reader
import pytest
from mcb_common import nbt
from mcb_world_host import level

# Fields of the vanilla singleplayer save that a new server-style world leaves out on purpose.
LEFT_OUT = {"Player"}


def fixture_level(fixtures_dir):
    return nbt.read_file(fixtures_dir / "world" / "minestom_vanilla_1.21.11" / "level.dat")[1]


def compare(ours, theirs, path=""):
    """Every key of ``theirs`` exists in ``ours`` with the same NBT type (recursively for
    compounds present on both sides)."""
    missing, wrong = [], []
    for k, v in theirs.items():
        if f"{path}{k}" in LEFT_OUT:
            continue
        if k not in ours:
            missing.append(f"{path}{k}")
            continue
        if nbt.tag_type(ours[k]) != nbt.tag_type(v):
            wrong.append(f"{path}{k}")
        elif isinstance(v, dict) and not path.startswith("WorldGenSettings.dimensions"):
            m, w = compare(ours[k], v, f"{path}{k}.")
            missing += m
            wrong += w
    return missing, wrong


@pytest.mark.fixtures
def test_new_level_has_every_vanilla_field_with_the_same_type(fixtures_dir):
    theirs = fixture_level(fixtures_dir)["Data"]
    ours = level.new_flat_level("t")["Data"]
    ignore_rules = {f"game_rules.{k}" for k in theirs["game_rules"]}  # missing rules take defaults
    missing, wrong = compare(ours, theirs)
    missing = [m for m in missing if m not in ignore_rules]
    assert missing == [] and wrong == []
    for k in ours["game_rules"]:
        assert k in theirs["game_rules"], f"unknown game rule {k}"
        assert nbt.tag_type(ours["game_rules"][k]) == nbt.tag_type(theirs["game_rules"][k])
    assert ours["DataVersion"] == theirs["DataVersion"] == 4671
    assert ours["Version"] == theirs["Version"]
    assert list(ours["spawn"]) == list(theirs["spawn"])  # 1.21.9+ spawn layout
    assert "SpawnX" not in ours
    assert list(ours["WorldGenSettings"]["dimensions"]) == list(theirs["WorldGenSettings"]["dimensions"])
    assert (
        ours["WorldGenSettings"]["dimensions"]["minecraft:the_nether"]
        == theirs["WorldGenSettings"]["dimensions"]["minecraft:the_nether"]
    )
    assert (
        ours["WorldGenSettings"]["dimensions"]["minecraft:the_end"]
        == theirs["WorldGenSettings"]["dimensions"]["minecraft:the_end"]
    )


def test_flat_generator_matches_the_layers():
    gen = level.new_flat_level("t")["Data"]["WorldGenSettings"]["dimensions"]["minecraft:overworld"]["generator"]
    assert gen["type"] == "minecraft:flat"
    layers = [(str(layer["block"]), int(layer["height"])) for layer in gen["settings"]["layers"]]
    assert layers == [
        ("minecraft:bedrock", 1),
        ("minecraft:stone", 123),
        ("minecraft:dirt", 3),
        ("minecraft:grass_block", 1),
    ]
    assert sum(h for _, h in layers) == 128 and level.MIN_Y + 128 == level.SURFACE_Y == 64
    assert gen["settings"]["biome"] == "minecraft:plains"


def test_written_level_dat_is_gzip_and_independently_readable(tmp_path):
    p = tmp_path / "level.dat"
    level.write_level(p, level.new_flat_level("Indie"))
    assert p.read_bytes()[:2] == b"\x1f\x8b"
    assert nbt.read(gzip.decompress(p.read_bytes()))["Data"]["LevelName"] == "Indie"
    f = pynbt.nbt.NBTFile(str(p))
    assert f["Data"]["LevelName"].value == "Indie"
    assert f["Data"]["DataVersion"].value == 4671
    assert list(f["Data"]["spawn"]["pos"].value) == [0, 64, 0]
    level.write_level(p, level.new_flat_level("Again"))
    assert (tmp_path / "level.dat_old").exists()
