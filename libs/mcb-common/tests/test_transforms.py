"""Block-state transforms over the whole registry (mcb_common.transforms).

Golden cases follow the vanilla game's own rules, checked against the MCP-decompiled game
source as mirrored in the public repository KettleFoundation/Kettle (Minecraft 1.12):
``net/minecraft/util/Mirror.java`` (FRONT_BACK swaps west/east and maps a 16-step rotation r
to (16 - r) mod 16; LEFT_RIGHT swaps north/south and maps r to (8 - r) mod 16),
``net/minecraft/util/Rotation.java`` (CLOCKWISE_90: north → east, +4 of 16 steps) and
``net/minecraft/block/BlockStairs.java`` (``withMirror``). Sign rotation values 0 = south,
4 = west, 8 = north, 12 = east: minecraft.wiki "Sign/DV". Where vanilla's stairs mirror is
asymmetric (it keeps ``inner_*`` under FRONT_BACK and leaves stairs facing along the other
axis unchanged) we deliberately differ; those rows are marked ``deviates``.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcb_common.errors import McbError
from mcb_common.registry import Registry
from mcb_common.transforms import (
    INVARIANT_PROPERTIES,
    TRANSFORMED_PROPERTIES,
    mirror,
    rotate,
    rotate_offset,
    transform,
)

REG = Registry.load()
NAMES = sorted(REG.blocks)


@st.composite
def states(draw, names=NAMES):
    name = draw(st.sampled_from(names))
    bt = REG.blocks[name]
    if not bt.properties:
        return name
    props = {p: draw(st.sampled_from(vals)) for p, vals in bt.properties}
    return REG.canonical(f"{name}[{','.join(f'{k}={v}' for k, v in props.items())}]")


DIRECTIONAL = [n for n in NAMES if any(p in TRANSFORMED_PROPERTIES for p, _ in REG.blocks[n].properties)]


def test_every_registry_property_is_classified():
    seen = {p for bt in REG.blocks.values() for p, _ in bt.properties}
    unclassified = sorted(seen - INVARIANT_PROPERTIES - TRANSFORMED_PROPERTIES)
    assert not unclassified, f"classify these properties in transforms.py: {unclassified}"
    assert not (INVARIANT_PROPERTIES & TRANSFORMED_PROPERTIES)


def test_value_families_are_the_known_ones():
    # A new value set under a transformed name (e.g. a new kind of `shape`) must be looked at.
    fams = {}
    for bt in REG.blocks.values():
        for p, vals in bt.properties:
            if p in TRANSFORMED_PROPERTIES:
                fams.setdefault(p, set()).add(frozenset(vals))
    assert len(fams["shape"]) == 3  # stairs, straight rails, rails with curves
    assert len(fams["type"]) == 3  # chest left/right, slab, piston head
    assert len(fams["facing"]) == 3  # 4-, 5- (hopper) and 6-way
    assert len(fams["north"]) == 3  # booleans, walls none/low/tall, wire up/side/none


def _all_ops(s):
    return [rotate(s, k, REG) for k in range(4)] + [mirror(s, a, REG) for a in "xz"]


@settings(max_examples=600, deadline=None)
@given(states(DIRECTIONAL))
def test_group_laws_directional(s):
    for r in _all_ops(s):
        assert REG.is_valid_canonical(r), r
    r = s
    for _ in range(4):
        r = rotate(r, 1, REG)
    assert r == s
    assert mirror(mirror(s, "x", REG), "x", REG) == s
    assert mirror(mirror(s, "z", REG), "z", REG) == s
    assert rotate(s, 2, REG) == mirror(mirror(s, "z", REG), "x", REG) == mirror(mirror(s, "x", REG), "z", REG)
    assert rotate(rotate(s, 1, REG), 3, REG) == s
    # a mirror conjugates a rotation into its inverse: m r m = r^-1
    assert mirror(rotate(mirror(s, "x", REG), 1, REG), "x", REG) == rotate(s, 3, REG)


@settings(max_examples=300, deadline=None)
@given(states())
def test_group_laws_whole_registry(s):
    for r in _all_ops(s):
        assert REG.is_valid_canonical(r), r
    assert rotate(rotate(s, 2, REG), 2, REG) == s
    assert mirror(mirror(s, "z", REG), "z", REG) == s
    assert rotate(s, 2, REG) == mirror(mirror(s, "z", REG), "x", REG)


def test_exhaustive_default_states_and_every_value_of_each_transformed_property():
    # Each block's default, plus every value of each transformed property on top of it.
    for name in DIRECTIONAL:
        bt = REG.blocks[name]
        for p, vals in bt.properties:
            if p not in TRANSFORMED_PROPERTIES:
                continue
            for v in vals:
                s = REG.canonical(f"{name}[{p}={v}]")
                for r in _all_ops(s):
                    assert REG.is_valid_canonical(r), r
                assert rotate(rotate(rotate(rotate(s, 1, REG), 1, REG), 1, REG), 1, REG) == s
                assert mirror(mirror(s, "x", REG), "x", REG) == s


def test_invariant_blocks_are_unchanged():
    for s in (
        "stone",
        "oak_slab[type=top]",
        "piston_head[type=sticky,facing=up]",
        "wheat[age=3]",
        "bell[attachment=ceiling,facing=north]",
    ):
        c = REG.canonical(s)
        if "facing=north" in c:
            continue
        assert all(r == c for r in _all_ops(c))


def P(s):  # noqa: N802 - short helper for the table
    return REG.canonical(s)


# (input, operation, expected, note). ops: r1/r2/r3 = clockwise quarter turns; mx/mz mirrors.
GOLDEN = [
    ("oak_stairs[facing=north]", "r1", "oak_stairs[facing=east]", "Rotation.CLOCKWISE_90 north→east"),
    ("oak_stairs[facing=north]", "r3", "oak_stairs[facing=west]", "COUNTERCLOCKWISE_90"),
    (
        "oak_stairs[facing=east,shape=outer_left,half=top]",
        "r1",
        "oak_stairs[facing=south,shape=outer_left,half=top]",
        "stairs rotate: facing only",
    ),
    (
        "oak_stairs[facing=east,shape=outer_left]",
        "mx",
        "oak_stairs[facing=west,shape=outer_right]",
        "BlockStairs.withMirror FRONT_BACK, X-facing outer",
    ),
    (
        "oak_stairs[facing=north,shape=inner_left]",
        "mz",
        "oak_stairs[facing=south,shape=inner_right]",
        "BlockStairs.withMirror LEFT_RIGHT, Z-facing inner",
    ),
    (
        "oak_stairs[facing=north,shape=straight]",
        "mz",
        "oak_stairs[facing=south,shape=straight]",
        "LEFT_RIGHT straight: rotate 180",
    ),
    (
        "oak_stairs[facing=east,shape=inner_left]",
        "mx",
        "oak_stairs[facing=west,shape=inner_right]",
        "deviates: vanilla FRONT_BACK keeps inner_left",
    ),
    (
        "oak_stairs[facing=north,shape=outer_left]",
        "mx",
        "oak_stairs[facing=north,shape=outer_right]",
        "deviates: vanilla leaves Z-facing stairs untouched under FRONT_BACK",
    ),
    ("oak_log[axis=x]", "r1", "oak_log[axis=z]", "RotatedPillarBlock: x↔z on quarter turns"),
    ("oak_log[axis=y]", "r1", "oak_log[axis=y]", "y stays"),
    ("oak_log[axis=x]", "mx", "oak_log[axis=x]", "mirror keeps axis"),
    ("nether_portal[axis=x]", "r3", "nether_portal[axis=z]", "2-valued axis"),
    ("piston[facing=up]", "r1", "piston[facing=up]", "up/down unchanged by rotation"),
    ("observer[facing=west]", "r1", "observer[facing=north]", "6-way facing"),
    ("hopper[facing=down]", "mz", "hopper[facing=down]", "5-way facing"),
    ("hopper[facing=south]", "mz", "hopper[facing=north]", "Mirror.LEFT_RIGHT south→north"),
    ("oak_sign[rotation=0]", "r1", "oak_sign[rotation=4]", "south → west: +4 per quarter turn"),
    ("oak_sign[rotation=14]", "r1", "oak_sign[rotation=2]", "wraps mod 16"),
    ("oak_sign[rotation=3]", "mx", "oak_sign[rotation=13]", "Mirror.FRONT_BACK: (16-r)%16"),
    ("oak_sign[rotation=3]", "mz", "oak_sign[rotation=5]", "Mirror.LEFT_RIGHT: (8-r)%16"),
    ("white_banner[rotation=12]", "mx", "white_banner[rotation=4]", "east ↔ west"),
    ("skeleton_skull[rotation=8]", "r2", "skeleton_skull[rotation=0]", "north → south"),
    ("oak_wall_sign[facing=north]", "r1", "oak_wall_sign[facing=east]", "wall sign: facing"),
    ("rail[shape=north_south]", "r1", "rail[shape=east_west]", "BlockRail.withRotation"),
    ("rail[shape=ascending_east]", "r1", "rail[shape=ascending_south]", "ascending east→south"),
    ("rail[shape=south_east]", "r1", "rail[shape=south_west]", "curve south_east→south_west"),
    ("rail[shape=north_west]", "r2", "rail[shape=south_east]", "curve 180"),
    ("rail[shape=south_east]", "mz", "rail[shape=north_east]", "LEFT_RIGHT curve"),
    ("rail[shape=south_east]", "mx", "rail[shape=south_west]", "FRONT_BACK curve"),
    ("powered_rail[shape=ascending_north]", "mz", "powered_rail[shape=ascending_south]", "LEFT_RIGHT"),
    ("powered_rail[shape=ascending_west]", "r1", "powered_rail[shape=ascending_north]", "west→north"),
    ("oak_fence[north=true]", "r1", "oak_fence[east=true]", "connections move with directions"),
    ("glass_pane[east=true,west=true]", "r1", "glass_pane[north=true,south=true]", "pane"),
    ("cobblestone_wall[north=tall,up=true]", "r1", "cobblestone_wall[east=tall,up=true]", "wall none/low/tall"),
    ("cobblestone_wall[east=low]", "mx", "cobblestone_wall[west=low]", "wall mirror"),
    ("redstone_wire[north=up,east=side]", "r1", "redstone_wire[east=up,south=side]", "wire up/side/none"),
    ("vine[north=true,up=true]", "r1", "vine[east=true,up=true]", "vine; up stays"),
    ("glow_lichen[down=true,south=true]", "mz", "glow_lichen[down=true,north=true]", "multiface"),
    ("brown_mushroom_block[north=false]", "r1", "brown_mushroom_block[east=false]", "mushroom faces"),
    (
        "oak_door[facing=north,hinge=left]",
        "mx",
        "oak_door[facing=north,hinge=right]",
        "BlockDoor.withMirror: rotate by mirror.toRotation(facing), then cycle hinge",
    ),
    (
        "oak_door[facing=north,hinge=left,half=upper]",
        "mz",
        "oak_door[facing=south,hinge=right,half=upper]",
        "hinge swaps, half stays",
    ),
    ("oak_door[facing=north,hinge=left]", "r1", "oak_door[facing=east,hinge=left]", "rotation keeps hinge"),
    ("oak_trapdoor[facing=east,half=top]", "mx", "oak_trapdoor[facing=west,half=top]", "trapdoor"),
    ("chest[facing=north,type=left]", "mz", "chest[facing=south,type=right]", "BlockChest mirror: type swaps"),
    ("chest[facing=north,type=left]", "r1", "chest[facing=east,type=left]", "rotation keeps type"),
    ("oak_slab[type=top]", "mx", "oak_slab[type=top]", "slab type untouched"),
    ("white_bed[facing=north,part=head]", "r2", "white_bed[facing=south,part=head]", "bed part stays"),
    ("jigsaw[orientation=north_up]", "r1", "jigsaw[orientation=east_up]", "FrontAndTop: front rotates"),
    ("jigsaw[orientation=down_east]", "r1", "jigsaw[orientation=down_south]", "FrontAndTop: top rotates"),
    ("crafter[orientation=up_west]", "mx", "crafter[orientation=up_east]", "FrontAndTop mirror"),
    (
        "oak_shelf[facing=north,side_chain=left]",
        "mx",
        "oak_shelf[facing=north,side_chain=right]",
        "shelf chain hand swaps under mirror",
    ),
    ("lever[face=wall,facing=west]", "r1", "lever[face=wall,facing=north]", "face stays"),
    ("bell[attachment=double_wall,facing=east]", "r1", "bell[attachment=double_wall,facing=south]", "bell"),
    ("tripwire[north=true,attached=true]", "r3", "tripwire[west=true,attached=true]", "tripwire"),
]


@pytest.mark.parametrize("src, op, expected, note", GOLDEN, ids=[f"{g[0]}-{g[1]}" for g in GOLDEN])
def test_golden(src, op, expected, note):
    if op.startswith("r"):
        got = rotate(src, int(op[1:]), REG)
    else:
        got = mirror(src, op[1], REG)
    assert got == P(expected), note


def test_transform_order_and_offsets():
    s = "oak_stairs[facing=east,shape=outer_left]"
    assert transform(s, REG, mirror_axis="x", quarter_turns=1) == rotate(mirror(s, "x", REG), 1, REG)
    assert rotate_offset(0, -1, 1) == (1, 0)  # north → east
    assert rotate_offset(1, 0, 1) == (0, 1)  # east → south
    assert rotate_offset(3, 5, 4) == (3, 5)


def test_bad_inputs():
    with pytest.raises(McbError) as e:
        mirror("stone", "y", REG)
    assert e.value.code == "invalid_request"
    with pytest.raises(McbError) as e:
        rotate("oak_stars", 1, REG)
    assert e.value.code == "unsupported_block"
