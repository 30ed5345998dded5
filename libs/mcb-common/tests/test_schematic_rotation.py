"""ACCEPTANCE 9 at the core level: a schematic with stairs, slabs, logs, pillars, fences and a
door rotated 90/180/270 clockwise (seen from above); the expected states are written out by
hand (not computed with the transforms under test); then the placed result is exported as a
schematic (v3 and v2), read back and re-imported unrotated: the same states at the same places.
"""

from __future__ import annotations

import pytest
from mcb_common import schematic as S
from mcb_common.registry import Registry

DV = 4671
STAIRS = "minecraft:oak_stairs[facing=north,half=bottom,shape=outer_left,waterlogged=false]"
SLAB = "minecraft:oak_slab[type=top,waterlogged=false]"
LOG = "minecraft:oak_log[axis=x]"
PILLAR = "minecraft:quartz_pillar[axis=z]"
FENCE = "minecraft:oak_fence[east=false,north=true,south=false,waterlogged=false,west=true]"
DOOR_LO = "minecraft:oak_door[facing=east,half=lower,hinge=left,open=false,powered=false]"
DOOR_HI = "minecraft:oak_door[facing=east,half=upper,hinge=left,open=false,powered=false]"
AIR = "minecraft:air"

# local layout (x, y, z) -> state; 3 wide (x), 2 high, 2 long (z)
LAYOUT = {
    (0, 0, 0): STAIRS,
    (1, 0, 0): SLAB,
    (2, 0, 0): LOG,
    (0, 0, 1): PILLAR,
    (1, 0, 1): FENCE,
    (2, 0, 1): DOOR_LO,
    (0, 1, 0): AIR,
    (1, 1, 0): AIR,
    (2, 1, 0): AIR,
    (0, 1, 1): AIR,
    (1, 1, 1): AIR,
    (2, 1, 1): DOOR_HI,
}

EXPECTED = {
    90: {
        STAIRS: "minecraft:oak_stairs[facing=east,half=bottom,shape=outer_left,waterlogged=false]",
        LOG: "minecraft:oak_log[axis=z]",
        PILLAR: "minecraft:quartz_pillar[axis=x]",
        FENCE: "minecraft:oak_fence[east=true,north=true,south=false,waterlogged=false,west=false]",
        DOOR_LO: "minecraft:oak_door[facing=south,half=lower,hinge=left,open=false,powered=false]",
        DOOR_HI: "minecraft:oak_door[facing=south,half=upper,hinge=left,open=false,powered=false]",
    },
    180: {
        STAIRS: "minecraft:oak_stairs[facing=south,half=bottom,shape=outer_left,waterlogged=false]",
        LOG: LOG,
        PILLAR: PILLAR,
        FENCE: "minecraft:oak_fence[east=true,north=false,south=true,waterlogged=false,west=false]",
        DOOR_LO: "minecraft:oak_door[facing=west,half=lower,hinge=left,open=false,powered=false]",
        DOOR_HI: "minecraft:oak_door[facing=west,half=upper,hinge=left,open=false,powered=false]",
    },
    270: {
        STAIRS: "minecraft:oak_stairs[facing=west,half=bottom,shape=outer_left,waterlogged=false]",
        LOG: "minecraft:oak_log[axis=z]",
        PILLAR: "minecraft:quartz_pillar[axis=x]",
        FENCE: "minecraft:oak_fence[east=false,north=false,south=true,waterlogged=false,west=true]",
        DOOR_LO: "minecraft:oak_door[facing=north,half=lower,hinge=left,open=false,powered=false]",
        DOOR_HI: "minecraft:oak_door[facing=north,half=upper,hinge=left,open=false,powered=false]",
    },
}


@pytest.fixture(scope="module")
def registry() -> Registry:
    return Registry.load()


def _schematic(offset=(0, 0, 0)) -> S.Schematic:
    w, h, ln = 3, 2, 2
    pal: list[str] = []
    idx = []
    for y in range(h):
        for z in range(ln):
            for x in range(w):
                st = LAYOUT[(x, y, z)]
                if st not in pal:
                    pal.append(st)
                idx.append(pal.index(st))
    return S.from_region((w, h, ln), pal, idx, offset=offset, data_version=DV)


def _place(s: S.Schematic, registry: Registry, target, rotation) -> dict[tuple[int, int, int], str]:
    chk = S.check_import(s, registry, world_data_version=DV, max_positions=1000)
    pal, xyz, st, warnings = S.placements(s, chk, target, rotation, registry)
    assert not warnings
    return {(xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]): pal[v] for i, v in enumerate(st)}


def _rot(x: int, z: int, k: int) -> tuple[int, int]:
    for _ in range(k):
        x, z = -z, x
    return x, z


def test_layout_states_are_canonical(registry: Registry) -> None:
    for st in LAYOUT.values():
        assert registry.canonical(st) == st
    for table in EXPECTED.values():
        for st in table.values():
            assert registry.canonical(st) == st


@pytest.mark.parametrize("rotation", [90, 180, 270])
@pytest.mark.parametrize("offset", [(0, 0, 0), (-1, 0, -2)])
def test_rotation_states_and_positions(registry: Registry, rotation: int, offset) -> None:
    t = (100, 70, -50)
    placed = _place(_schematic(offset), registry, t, rotation)
    expected = {}
    for (x, y, z), st in LAYOUT.items():
        rx, rz = _rot(x + offset[0], z + offset[2], rotation // 90)
        expected[(t[0] + rx, t[1] + y + offset[1], t[2] + rz)] = EXPECTED[rotation].get(st, st)
    assert placed == expected


@pytest.mark.parametrize("rotation", [90, 180, 270])
@pytest.mark.parametrize("version", [2, 3])
def test_rotated_build_survives_export_and_reimport(registry: Registry, rotation: int, version: int) -> None:
    t = (0, 64, 0)
    placed = _place(_schematic(), registry, t, rotation)
    xs, ys, zs = zip(*placed, strict=False)
    lo = (min(xs), min(ys), min(zs))
    hi = (max(xs), max(ys), max(zs))
    size = (hi[0] - lo[0] + 1, hi[1] - lo[1] + 1, hi[2] - lo[2] + 1)
    pal: list[str] = []
    idx = []
    for y in range(lo[1], hi[1] + 1):
        for z in range(lo[2], hi[2] + 1):
            for x in range(lo[0], hi[0] + 1):
                st = placed[(x, y, z)]
                if st not in pal:
                    pal.append(st)
                idx.append(pal.index(st))
    origin = t
    exported = S.from_region(
        size, pal, idx, offset=tuple(a - b for a, b in zip(lo, origin, strict=False)), data_version=DV
    )
    back = S.read_bytes(S.write_bytes(exported, version))
    target2 = (500, 80, 500)
    again = _place(back, registry, target2, 0)
    shift = tuple(a - b for a, b in zip(target2, t, strict=False))
    assert again == {(x + shift[0], y + shift[1], z + shift[2]): st for (x, y, z), st in placed.items()}
