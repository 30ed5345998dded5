"""Prepare-time refusals for block entities, fluids and gravity support (mcb_journal.blockrules)."""

from __future__ import annotations

import asyncio

import pytest
from mcb.world.v1 import world_pb2
from mcb_common.errors import ErrorCode, McbError
from mcb_journal.blockrules import check_block_rules


class FakeWorld:
    """region_read / blocks_get over a dict; everything else is air."""

    def __init__(self, blocks: dict[tuple[int, int, int], str]):
        self.blocks = blocks
        self.calls = 0

    def at(self, x, y, z):
        return self.blocks.get((x, y, z), "minecraft:air")

    async def call(self, method, params, result_type):
        self.calls += 1
        if method == "region_read":
            lo, hi = params.min, params.max
            pal: list[str] = []
            idx = bytearray()
            for y in range(lo.y, hi.y + 1):
                for z in range(lo.z, hi.z + 1):
                    for x in range(lo.x, hi.x + 1):
                        s = self.at(x, y, z)
                        if s not in pal:
                            pal.append(s)
                        idx += pal.index(s).to_bytes(2, "little")
            return world_pb2.RegionReadResult(palette=pal, indices=bytes(idx))
        assert method == "blocks_get"
        xyz = list(params.xyz)
        states = [self.at(*xyz[i : i + 3]) for i in range(0, len(xyz), 3)]
        pal = sorted(set(states))
        return world_pb2.BlocksGetResult(palette=pal, state=[pal.index(s) for s in states])


def run(world, writes: dict[tuple[int, int, int], str]):
    xyz = [c for p in writes for c in p]
    palette = sorted(set(writes.values()))
    desired = [palette.index(s) for s in writes.values()]
    base = [world.at(*p) for p in writes]
    return asyncio.run(check_block_rules(world, xyz, palette, desired, base))


def refused(world, writes) -> McbError:
    with pytest.raises(McbError) as ei:
        run(world, writes)
    return ei.value


def test_ordinary_build_passes():
    w = FakeWorld({(0, 63, 0): "minecraft:grass_block[snowy=false]"})
    run(w, {(0, 64, 0): "minecraft:stone", (1, 64, 0): "minecraft:sand"} | {(1, 63, 0): "minecraft:dirt"})


def test_overwriting_a_chest_is_a_conflict_naming_it():
    w = FakeWorld({(5, 64, 5): "minecraft:chest[facing=north,type=single,waterlogged=false]"})
    e = refused(w, {(5, 64, 5): "minecraft:stone", (6, 64, 5): "minecraft:stone"})
    assert e.code == ErrorCode.CONFLICT and e.details["reason"] == "overwrites_block_entity"
    assert e.details["count"] == 1 and e.details["samples"][0]["x"] == 5
    assert "chest" in e.message and "Nothing was written" in e.message


def test_placing_refused_block_entities_and_fluids_is_unsupported():
    w = FakeWorld({(0, 63, 0): "minecraft:stone"})
    e = refused(w, {(0, 64, 0): "minecraft:spawner"})
    assert e.code == ErrorCode.UNSUPPORTED_BLOCK and e.details["reason"] == "unsupported_block_entity"
    e = refused(w, {(0, 64, 0): "minecraft:command_block[conditional=false,facing=north]"})
    assert e.details["reason"] == "unsupported_block_entity" and "command" in e.message
    e = refused(w, {(0, 64, 0): "minecraft:water[level=0]"})
    assert e.code == ErrorCode.UNSUPPORTED_BLOCK and e.details["reason"] == "places_fluid"
    e = refused(w, {(0, 64, 0): "minecraft:oak_slab[type=bottom,waterlogged=true]"})
    assert e.details["reason"] == "places_fluid"


def test_building_into_water_or_waterlogged_is_a_conflict():
    w = FakeWorld(
        {
            (0, 64, 0): "minecraft:water[level=0]",
            (1, 64, 0): "minecraft:oak_fence[east=false,north=false,south=false,waterlogged=true,west=false]",
        }
    )
    e = refused(w, {(0, 64, 0): "minecraft:stone"})
    assert e.code == ErrorCode.CONFLICT and e.details["reason"] == "into_fluid"
    e = refused(w, {(1, 64, 0): "minecraft:stone"})
    assert e.details["reason"] == "into_fluid"


def test_removing_support_under_sand_is_refused_but_replacing_it_is_not():
    w = FakeWorld({(0, 65, 0): "minecraft:sand", (0, 64, 0): "minecraft:stone"})
    e = refused(w, {(0, 64, 0): "minecraft:air"})
    assert e.code == ErrorCode.CONFLICT and e.details["reason"] == "removes_support"
    assert e.details["samples"][0]["state"] == "minecraft:sand"
    # removing the sand too (in the same plan) is fine; so is replacing the stone with stone bricks
    run(w, {(0, 64, 0): "minecraft:air", (0, 65, 0): "minecraft:air"})
    run(w, {(0, 64, 0): "minecraft:stone_bricks"})


def test_placing_gravity_blocks_over_air_is_refused_unless_the_plan_supports_them():
    w = FakeWorld({})
    e = refused(w, {(0, 70, 0): "minecraft:gravel"})
    assert e.code == ErrorCode.UNSUPPORTED_BLOCK and e.details["reason"] == "unsupported_gravity"
    run(w, {(0, 69, 0): "minecraft:stone", (0, 70, 0): "minecraft:gravel"})


def test_already_there_is_not_a_write():
    w = FakeWorld({(0, 64, 0): "minecraft:chest[facing=north,type=single,waterlogged=false]"})
    run(w, {(0, 64, 0): "minecraft:chest[facing=north,type=single,waterlogged=false]"})


def test_a_large_plan_is_checked_quickly():
    import time

    w = FakeWorld({})
    writes = {(x, 64 + y, z): "minecraft:stone" for x in range(50) for y in range(40) for z in range(50)}
    t = time.perf_counter()
    run(w, writes)
    assert time.perf_counter() - t < 2.0


SIGN = 'minecraft:oak_sign[rotation=0,waterlogged=false]{"text":{"front":{"lines":["Hi","","",""]}}}'
CHEST = (
    'minecraft:chest[facing=north,type=single,waterlogged=false]{"items":[{"count":3,"id":"minecraft:bread","slot":0}]}'
)


def test_furniture_is_placed_where_it_is_supported():
    w = FakeWorld({(0, 63, 0): "minecraft:stone", (1, 63, 0): "minecraft:stone"})
    run(
        w, {(0, 64, 0): SIGN, (1, 64, 0): CHEST, (2, 64, 0): "minecraft:red_bed[facing=north,occupied=false,part=foot]"}
    )


@pytest.mark.parametrize(
    "world, writes, n",
    [
        ({}, {(0, 64, 0): SIGN}, 1),  # a standing sign on air
        ({}, {(0, 64, 0): "minecraft:wall_torch[facing=north]"}, 1),  # a wall torch on air
        ({(0, 64, 1): "minecraft:poppy"}, {(0, 64, 0): "minecraft:wall_torch[facing=north]"}, 1),  # not solid
        ({(0, 63, 0): "minecraft:poppy"}, {(0, 64, 0): "minecraft:torch"}, 1),  # a torch on a flower
        ({(0, 63, 0): "minecraft:water[level=0]"}, {(0, 64, 0): "minecraft:torch"}, 1),
        (
            {},
            {
                (0, 64, 0): "minecraft:ladder[facing=east,waterlogged=false]",
                (0, 65, 0): "minecraft:lever[face=ceiling,facing=north,powered=false]",
            },
            2,
        ),
        ({}, {(0, 64, 0): "minecraft:stone_button[face=wall,facing=south,powered=false]"}, 1),
    ],
)
def test_attached_blocks_without_support_are_refused(world, writes, n):
    e = refused(FakeWorld(world), writes)
    assert e.code == ErrorCode.UNSUPPORTED_BLOCK and e.details["reason"] == "unsupported_attachment", e.details
    assert e.details["count"] == n and "pop off" in e.message


def test_attached_blocks_hang_on_blocks_of_the_plan_or_the_world():
    # wall torch facing north hangs on the block south of it (+z); ladder facing east on the west (-x)
    w = FakeWorld({(0, 64, 1): "minecraft:stone"})
    run(
        w,
        {
            (0, 64, 0): "minecraft:wall_torch[facing=north]",
            (5, 64, 0): "minecraft:ladder[facing=east,waterlogged=false]",
            (4, 64, 0): "minecraft:oak_planks",
            (5, 66, 0): "minecraft:torch",
            (5, 65, 0): "minecraft:glass",
            (7, 64, 0): "minecraft:oak_hanging_sign[attached=false,rotation=0,waterlogged=false]",
            (7, 65, 0): "minecraft:oak_fence[east=false,north=false,south=false,waterlogged=false,west=false]",
        },
    )


# -- blocks that stand on the block below (issue 31 item 5; mcb_common.attached cites canSurvive) --
DOOR = "minecraft:oak_door[facing=north,half={h},hinge=left,open=false,powered=false]"
STANDS = {
    "door": DOOR.format(h="lower"),
    "poppy": "minecraft:poppy",
    "carpet": "minecraft:red_carpet",
    "rail": "minecraft:rail[shape=north_south,waterlogged=false]",
    "plate": "minecraft:stone_pressure_plate[powered=false]",
    "candle": "minecraft:candle[candles=1,lit=false,waterlogged=false]",
    "sapling": "minecraft:oak_sapling[stage=0]",
    "tall": "minecraft:sunflower[half=lower]",
    "repeater": "minecraft:repeater[delay=1,facing=north,locked=false,powered=false]",
}


@pytest.mark.parametrize("what", sorted(STANDS))
def test_a_block_that_stands_on_air_is_refused_with_its_position(what: str) -> None:
    e = refused(FakeWorld({}), {(3, 70, -2): STANDS[what], (9, 64, 9): "minecraft:stone"})
    assert e.code == ErrorCode.UNSUPPORTED_BLOCK and e.details["reason"] == "unsupported_attachment", e
    assert e.details["count"] == 1 and (
        e.details["samples"][0]["x"],
        e.details["samples"][0]["y"],
        e.details["samples"][0]["z"],
    ) == (3, 70, -2)
    assert "3,70,-2" in e.message and "Nothing was written" in e.message


def test_each_stands_on_what_the_game_allows() -> None:
    grass = "minecraft:grass_block[snowy=false]"
    fence = "minecraft:oak_fence[east=false,north=false,south=false,waterlogged=false,west=false]"
    ok = {  # (support below, placed)
        "door on stone": ("minecraft:stone", STANDS["door"]),
        "poppy on grass": (grass, STANDS["poppy"]),
        "sapling on farmland": ("minecraft:farmland[moisture=0]", STANDS["sapling"]),
        "wither rose on soul sand": ("minecraft:soul_sand", "minecraft:wither_rose"),
        "carpet on glass": ("minecraft:glass", STANDS["carpet"]),
        "candle on a fence": (fence, STANDS["candle"]),
        "plate on a fence": (fence, STANDS["plate"]),
        "rail on planks": ("minecraft:oak_planks", STANDS["rail"]),
    }
    for name, (below, placed) in ok.items():
        run(FakeWorld({(0, 63, 0): below}), {(0, 64, 0): placed}), name
    no = {
        "poppy on stone": ("minecraft:stone", STANDS["poppy"]),  # VegetationBlock.mayPlaceOn: dirt or farmland
        "poppy on soul sand": ("minecraft:soul_sand", STANDS["poppy"]),
        "rail on glass pane": (
            "minecraft:glass_pane[east=false,north=false,south=false,waterlogged=false,west=false]",
            STANDS["rail"],
        ),
        "door on a fence": (fence, STANDS["door"]),
    }
    for name, (below, placed) in no.items():
        e = refused(FakeWorld({(0, 63, 0): below}), {(0, 64, 0): placed})
        assert e.details["reason"] == "unsupported_attachment", name


def test_the_upper_half_and_the_support_in_the_same_plan() -> None:
    # the upper half stands on its lower half (two-part rule, not a sturdy face); the floor may be planned too
    run(
        FakeWorld({}),
        {
            (0, 63, 0): "minecraft:stone",
            (0, 64, 0): DOOR.format(h="lower"),
            (0, 65, 0): DOOR.format(h="upper"),
            (1, 63, 0): "minecraft:dirt",
            (1, 64, 0): "minecraft:sunflower[half=lower]",
            (1, 65, 0): "minecraft:sunflower[half=upper]",
        },
    )
