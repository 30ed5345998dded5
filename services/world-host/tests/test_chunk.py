"""Chunk packing, palettes, section creation and the derived-data policy."""

from __future__ import annotations

import math

import numpy as np
import pytest
from mcb_common import nbt
from mcb_world_host.chunk import (
    Chunk,
    bits_for,
    flat_chunk,
    pack_indices,
    state_entry,
    unpack_indices,
)
from mcb_world_host.level import FLAT_LAYERS


def reference_pack(values: list[int], bits: int) -> list[int]:
    """Straightforward bit-by-bit packing (entries never span longs), signed longs."""
    per = 64 // bits
    out = []
    for start in range(0, len(values), per):
        word = 0
        for j, v in enumerate(values[start : start + per]):
            word |= v << (j * bits)
        out.append(word - (1 << 64) if word >= 1 << 63 else word)
    return out


@pytest.mark.parametrize("bits", range(4, 16))
def test_pack_unpack_every_width(bits):
    rng = np.random.default_rng(bits)
    values = rng.integers(0, 1 << bits, 4096).astype(np.uint16)
    packed = pack_indices(values, bits)
    assert len(packed) == math.ceil(4096 / (64 // bits))
    assert list(packed) == reference_pack([int(v) for v in values], bits)
    assert np.array_equal(unpack_indices(packed, bits), values)


def test_bits_for_palette_sizes():
    assert [bits_for(n) for n in (1, 2, 16, 17, 32, 33, 256, 257, 4096)] == [0, 4, 4, 5, 5, 6, 8, 9, 12]


def new_chunk(registry, cx=0, cz=0) -> Chunk:
    root = flat_chunk(cx, cz, 4671, FLAT_LAYERS, -64, 319)
    return Chunk(cx, cz, nbt.read(nbt.write(root)), registry, -4, 19)


def test_flat_chunk_layers(registry):
    c = new_chunk(registry)
    assert c.get_block(0, -64, 0) == "minecraft:bedrock"
    assert c.get_block(5, -63, 5) == "minecraft:stone"
    assert c.get_block(5, 59, 5) == "minecraft:stone"
    assert c.get_block(5, 60, 5) == "minecraft:dirt"
    assert c.get_block(15, 62, 15) == "minecraft:dirt"
    assert c.get_block(15, 63, 15) == "minecraft:grass_block[snowy=false]"
    assert c.get_block(15, 64, 15) == "minecraft:air"
    assert c.section_ys() == list(range(-4, 20))


def test_palette_growth_16_to_17_entries(registry):
    c = new_chunk(registry)
    wools = sorted(n for n in registry.names() if n.endswith("_wool"))
    assert len(wools) == 16
    states = wools + ["minecraft:glass"]
    # section 5 (y 80..95) starts as one air entry; 16 wools + air = 17 entries
    for i, s in enumerate(states):
        c.set_block(i % 16, 80 + i // 16, 3, s)
    root = nbt.read(c.encode())
    sec = next(t for t in root["sections"] if int(t["Y"]) == 5)
    assert len(sec["block_states"]["palette"]) == 18  # air + 17
    assert len(sec["block_states"]["data"]) == math.ceil(4096 / (64 // 5))
    back = Chunk(0, 0, root, registry, -4, 19)
    for i, s in enumerate(states):
        assert back.get_block(i % 16, 80 + i // 16, 3) == s
    # exactly 16 entries (air + 15 wools) stays at 4 bits
    c2 = new_chunk(registry)
    for i, s in enumerate(wools[:15]):
        c2.set_block(i, 100, 0, s)
    sec2 = next(t for t in nbt.read(c2.encode())["sections"] if int(t["Y"]) == 6)
    assert len(sec2["block_states"]["palette"]) == 16
    assert len(sec2["block_states"]["data"]) == 256


def test_unused_palette_entries_are_dropped_and_single_entry_has_no_data(registry):
    c = new_chunk(registry)
    c.set_block(1, 100, 1, "minecraft:stone")
    c.set_block(1, 100, 1, "minecraft:air")
    sec = next(t for t in nbt.read(c.encode())["sections"] if int(t["Y"]) == 6)
    assert [str(e["Name"]) for e in sec["block_states"]["palette"]] == ["minecraft:air"]
    assert "data" not in sec["block_states"]


def test_missing_section_is_created_in_order_with_biomes(registry):
    root = flat_chunk(0, 0, 4671, FLAT_LAYERS, -64, 319)
    root["sections"] = nbt.List(nbt.COMPOUND, [t for t in root["sections"] if int(t["Y"]) not in (7, 8)])
    c = Chunk(0, 0, root, registry, -4, 19)
    assert c.get_block(0, 130, 0) == "minecraft:air"  # absent section reads as air
    assert c.set_block(0, 130, 0, "minecraft:air") == "minecraft:air"
    assert 8 not in c.section_ys()  # air into a missing section creates nothing
    c.set_block(2, 130, 3, "minecraft:stone")
    out = nbt.read(c.encode())
    ys = [int(t["Y"]) for t in out["sections"]]
    assert ys == sorted(ys) and 8 in ys and 7 not in ys
    new = next(t for t in out["sections"] if int(t["Y"]) == 8)
    assert [str(b) for b in new["biomes"]["palette"]] == ["minecraft:plains"]
    assert Chunk(0, 0, out, registry, -4, 19).get_block(2, 130, 3) == "minecraft:stone"
    with pytest.raises(Exception, match="outside"):
        c.section(20, create=True)


def test_unknown_palette_entry_round_trips_untouched(registry):
    root = flat_chunk(0, 0, 4671, FLAT_LAYERS, -64, 319)
    sec = next(t for t in root["sections"] if int(t["Y"]) == 4)
    odd = nbt.Compound(Name=nbt.String("mymod:widget"), Properties=nbt.Compound(z=nbt.String("1"), a=nbt.String("x")))
    sec["block_states"] = nbt.Compound(
        palette=nbt.List(nbt.COMPOUND, [state_entry("minecraft:air"), odd]),
        data=pack_indices(np.array([1] + [0] * 4095, dtype=np.uint16), 4),
    )
    raw = nbt.write(root)
    c = Chunk(0, 0, nbt.read(raw), registry, -4, 19)
    assert c.get_block(0, 64, 0) == "mymod:widget[a=x,z=1]"
    assert c.encode() == raw  # unchanged chunk: byte-identical
    c.set_block(5, 64, 5, "minecraft:stone")
    out = nbt.read(c.encode())
    sec = next(t for t in out["sections"] if int(t["Y"]) == 4)
    pal = list(sec["block_states"]["palette"])
    assert odd in pal and list(pal[pal.index(odd)]["Properties"]) == ["z", "a"]
    back = Chunk(0, 0, out, registry, -4, 19)
    assert back.get_block(0, 64, 0) == "mymod:widget[a=x,z=1]"
    assert back.get_block(5, 64, 5) == "minecraft:stone"


def test_changed_chunk_marks_heightmaps_and_light_stale(registry):
    root = flat_chunk(0, 0, 4671, FLAT_LAYERS, -64, 319)
    root["Heightmaps"] = nbt.Compound(WORLD_SURFACE=nbt.LongArray([0] * 37))
    root["isLightOn"] = nbt.Byte(1)
    for t in root["sections"]:
        t["SkyLight"] = nbt.ByteArray(b"\xff" * 2048)
        t["BlockLight"] = nbt.ByteArray(b"\x00" * 2048)
    root["custom_tag"] = nbt.String("kept")
    c = Chunk(0, 0, root, registry, -4, 19)
    c.set_block(0, 64, 0, "minecraft:stone")
    out = nbt.read(c.encode())
    assert out["Heightmaps"] == {}
    assert out["isLightOn"] == 0 and type(out["isLightOn"]) is nbt.Byte
    assert all("SkyLight" not in t and "BlockLight" not in t for t in out["sections"])
    assert out["custom_tag"] == "kept"


def test_air_variants_read_as_air(registry):
    root = flat_chunk(0, 0, 4671, FLAT_LAYERS, -64, 319)
    sec = next(t for t in root["sections"] if int(t["Y"]) == 10)
    sec["block_states"] = nbt.Compound(
        palette=nbt.List(nbt.COMPOUND, [nbt.Compound(Name=nbt.String("minecraft:cave_air"))])
    )
    c = Chunk(0, 0, root, registry, -4, 19)
    assert c.get_block(3, 165, 3) == "minecraft:air"
    assert c.set_block(3, 165, 3, "minecraft:cave_air") == "minecraft:air"
    assert not c.dirty


def test_encode_keeps_section_bytes_between_batches_and_equals_a_full_write(registry):
    """Chunk.encode reuses the encoded bytes of sections it did not change since the last encode;
    the result must always be exactly nbt.write(root): across edits of one section, another,
    a new section (absent before), light that is dropped once, and a block entity."""
    root = flat_chunk(0, 0, 4671, FLAT_LAYERS, -64, 319)
    for t in root["sections"]:
        t["SkyLight"] = nbt.ByteArray(b"\xff" * 2048)
    root["sections"] = nbt.List(nbt.COMPOUND, [t for t in root["sections"] if int(t["Y"]) != 10])
    c = Chunk(0, 0, root, registry, -4, 19)
    edits = [
        (0, 64, 0, "minecraft:stone"),
        (1, 64, 0, "minecraft:glass"),
        (0, 100, 3, "minecraft:dirt"),
        (5, 170, 5, "minecraft:stone"),
        (0, 64, 0, "minecraft:air"),
        (2, 2, 2, "minecraft:glass"),
    ]
    for x, y, z, state in edits:
        c.set_block(x, y, z, state)
        assert c.encode() == nbt.write(c.root), (x, y, z, state)
        assert c.encode() == nbt.write(c.root)  # and again, nothing changed
    assert nbt.read(c.encode())["sections"] == c.root["sections"]
    assert Chunk(0, 0, nbt.read(c.encode()), registry, -4, 19).get_block(5, 170, 5) == "minecraft:stone"
