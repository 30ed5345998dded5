"""Small fixed scenes for the renderer's tests, pictures (docs/img/camera-*.png) and benchmark:
each block family on a patch of grass, and a box on grass for the before/after check.
Arrays are in the world protocol's (y, z, x) order, origin at the minimum corner."""

from __future__ import annotations

import numpy as np

# one plot per family: (x, y, z, state) on a 9 x 9 plot whose grass top is y = 0
F = "minecraft:"
FAMILIES: dict[str, list[tuple[int, int, int, str]]] = {
    "slabs": [
        (1, 1, 3, F + "stone_slab[type=bottom]"),
        (2, 1, 3, F + "stone_slab[type=bottom]"),
        (3, 1, 3, F + "oak_slab[type=double]"),
        (4, 2, 3, F + "oak_slab[type=top]"),
        (4, 1, 3, F + "oak_planks"),
        (5, 1, 3, F + "brick_slab[type=bottom]"),
        (6, 2, 3, F + "brick_slab[type=bottom]"),
        (6, 1, 3, F + "bricks"),
    ],
    "stairs": [(x, 1, 4, F + "oak_stairs[facing=north,half=bottom,shape=straight]") for x in range(1, 4)]
    + [
        (4, 1, 4, F + "oak_stairs[facing=north,half=bottom,shape=outer_right]"),
        (4, 1, 3, F + "oak_stairs[facing=east,half=bottom,shape=straight]"),
        (6, 1, 4, F + "stone_brick_stairs[facing=west,half=top,shape=straight]"),
        (6, 1, 2, F + "stone_brick_stairs[facing=north,half=bottom,shape=inner_left]"),
    ],
    "fences": [
        (1, 1, 4, F + "oak_fence[east=true,north=false,south=false,west=false]"),
        (2, 1, 4, F + "oak_fence_gate[facing=north,open=false,in_wall=false]"),
        (3, 1, 4, F + "oak_fence[east=true,north=false,south=false,west=true]"),
        (4, 1, 4, F + "oak_fence[east=false,north=true,south=false,west=true]"),
        (4, 1, 3, F + "oak_fence[east=false,north=true,south=true,west=false]"),
        (4, 1, 2, F + "oak_fence[east=false,north=false,south=true,west=false]"),
        (6, 1, 4, F + "spruce_fence_gate[facing=south,open=true,in_wall=false]"),
        (6, 1, 2, F + "spruce_fence[east=false,north=false,south=false,west=false]"),
    ],
    "panes": [
        (
            x,
            y,
            4,
            F
            + "glass_pane[east={},north=false,south=false,west={}]".format(
                "true" if x < 4 else "false", "true" if x > 1 else "false"
            ),
        )
        for x in range(1, 5)
        for y in (1, 2)
    ]
    + [
        (
            6,
            y,
            z,
            F
            + "iron_bars[east=false,north={},south={},west=false]".format(
                "true" if z > 2 else "false", "true" if z < 4 else "false"
            ),
        )
        for z in (2, 3, 4)
        for y in (1, 2)
    ],
    "walls": [
        (1, 1, 4, F + "cobblestone_wall[up=true,east=low,north=none,south=none,west=none]"),
        (2, 1, 4, F + "cobblestone_wall[up=false,east=low,north=none,south=none,west=low]"),
        (3, 1, 4, F + "cobblestone_wall[up=true,east=tall,north=none,south=none,west=low]"),
        (4, 1, 4, F + "cobblestone_wall[up=true,east=none,north=low,south=none,west=tall]"),
        (4, 1, 3, F + "cobblestone_wall[up=true,east=none,north=none,south=low,west=none]"),
        (4, 2, 4, F + "cobblestone_wall[up=true,east=none,north=none,south=none,west=none]"),
        (6, 1, 3, F + "stone_brick_wall[up=true,east=none,north=none,south=none,west=none]"),
    ],
    "doors": [(x, y, 4, F + "stone_bricks") for x in (1, 3, 4, 6) for y in (1, 2, 3)]
    + [
        (2, 3, 4, F + "stone_bricks"),
        (5, 3, 4, F + "stone_bricks"),
        (2, 1, 4, F + "oak_door[facing=south,half=lower,hinge=left,open=false]"),
        (2, 2, 4, F + "oak_door[facing=south,half=upper,hinge=left,open=false]"),
        (5, 1, 4, F + "spruce_door[facing=south,half=lower,hinge=right,open=true]"),
        (5, 2, 4, F + "spruce_door[facing=south,half=upper,hinge=right,open=true]"),
    ],
    "trapdoors": [
        (1, 1, 4, F + "oak_trapdoor[facing=north,half=bottom,open=false]"),
        (3, 1, 4, F + "oak_planks"),
        (3, 2, 4, F + "oak_trapdoor[facing=north,half=top,open=false]"),
        (5, 1, 4, F + "spruce_trapdoor[facing=north,half=bottom,open=true]"),
        (6, 1, 4, F + "iron_trapdoor[facing=west,half=bottom,open=true]"),
    ],
    "torches": [
        (1, 1, 4, F + "torch"),
        (3, 1, 3, F + "cobblestone"),
        (3, 2, 3, F + "cobblestone"),
        (3, 2, 4, F + "wall_torch[facing=south]"),
        (5, 1, 4, F + "lantern[hanging=false]"),
        (6, 1, 4, F + "soul_torch"),
        (6, 1, 2, F + "oak_fence[east=false,north=false,south=false,west=false]"),
        (6, 2, 2, F + "lantern[hanging=false]"),
    ],
    "carpets": [
        (x, 1, z, F + ("red_carpet" if (x + z) % 2 else "white_carpet")) for x in range(1, 4) for z in range(2, 5)
    ]
    + [
        (5, 1, 3, F + "snow[layers=1]"),
        (5, 1, 4, F + "snow[layers=4]"),
        (6, 1, 3, F + "stone_pressure_plate[powered=false]"),
        (6, 1, 4, F + "snow[layers=7]"),
    ],
    "plants": [
        (1, 1, 4, F + "poppy"),
        (2, 1, 3, F + "dandelion"),
        (2, 1, 5, F + "short_grass"),
        (3, 1, 4, F + "oak_sapling[stage=0]"),
        (4, 1, 3, F + "blue_orchid"),
        (4, 1, 5, F + "fern"),
        (5, 1, 4, F + "red_mushroom"),
        (6, 1, 3, F + "cornflower"),
        (6, 1, 4, F + "oxeye_daisy"),
        (5, 1, 2, F + "tall_grass[half=lower]"),
        (5, 2, 2, F + "tall_grass[half=upper]"),
    ],
}
# the pose for one family's plot (feet, relative to the plot's minimum corner): from the south-east, above
PLOT = 8
PLOT_POSE = ((9.0, 3.5, 8.5), 132.0, 19.0, 60.0)
# all families on a grid of plots (ROW plots along +x, then the next row to the south), seen from the south
ROW = 5
FAMILIES_POSE = ((20.0, 12.0, 30.0), 180.0, 34.0, 70.0)


def _palette() -> tuple[list[str], dict[str, int]]:
    pal = ["minecraft:air", "minecraft:grass_block", "minecraft:dirt"]
    return pal, {s: i for i, s in enumerate(pal)}


def _put(arr: np.ndarray, pal: list[str], index: dict[str, int], x: int, y: int, z: int, state: str) -> None:
    i = index.get(state)
    if i is None:
        i = index[state] = len(pal)
        pal.append(state)
    arr[y, z, x] = i


def family(name: str) -> tuple[list[str], np.ndarray]:
    """One family on a 8 x 8 grass plot: (palette, array (y, z, x)); grass top at y = 1."""
    pal, index = _palette()
    arr = np.zeros((6, PLOT, PLOT), np.uint16)
    arr[0], arr[1] = 2, 1
    for x, y, z, s in FAMILIES[name]:
        _put(arr, pal, index, x, y + 1, z, s)
    return pal, arr


def families() -> tuple[list[str], np.ndarray]:
    """Every family on a grid of plots."""
    pal, index = _palette()
    names = list(FAMILIES)
    rows = (len(names) + ROW - 1) // ROW
    arr = np.zeros((6, PLOT * rows, PLOT * ROW), np.uint16)
    arr[0], arr[1] = 2, 1
    for k, name in enumerate(names):
        for x, y, z, s in FAMILIES[name]:
            _put(arr, pal, index, (k % ROW) * PLOT + x, y + 1, (k // ROW) * PLOT + z, s)
    return pal, arr


def box_on_grass(
    region: tuple[int, int, int, int, int, int], with_box: bool, margin: int = 6, state: str = "minecraft:gold_block"
) -> tuple[list[str], np.ndarray, tuple[int, int, int]]:
    """A flat grass world (grass top at region y0 - 1) around ``region`` (+ ``margin``), the
    region filled with ``state`` when ``with_box``; -> (palette, array, origin)."""
    x0, y0, z0, x1, y1, z1 = region
    ox, oy, oz = x0 - margin, y0 - 6, z0 - margin
    sx, sy, sz = x1 - x0 + 1 + 2 * margin, y1 - y0 + 1 + 6 + 2, z1 - z0 + 1 + 2 * margin
    pal = ["minecraft:air", "minecraft:grass_block", "minecraft:dirt", state]
    arr = np.zeros((sy, sz, sx), np.uint16)
    ground = y0 - 1 - oy
    arr[:ground] = 2
    arr[ground] = 1
    if with_box:
        arr[y0 - oy : y1 - oy + 1, z0 - oz : z1 - oz + 1, x0 - ox : x1 - ox + 1] = 3
    return pal, arr, (ox, oy, oz)


# a small oak house for the patterns picture (docs/img/camera-patterns-*.png): oak-plank walls
# with log corners and beams, an oak door (facing north, so flush with the south wall's outer
# face: the case that vanished in flat colours), glass panes, a brick chimney, a stone-brick path
HOUSE_POSE = ((13.5, 4.5, 16.0), 145.0, 18.0, 60.0)


def house() -> tuple[list[str], np.ndarray]:
    pal = [
        F + "air",
        F + "grass_block",
        F + "dirt",
        F + "oak_planks",
        F + "oak_door[facing=north,half=lower,hinge=left,open=false]",
        F + "oak_door[facing=north,half=upper,hinge=left,open=false]",
        F + "oak_log[axis=y]",
        F + "oak_log[axis=x]",
        F + "glass_pane[east=true,west=true,north=false,south=false]",
        F + "bricks",
        F + "stone_bricks",
        F + "oak_trapdoor[facing=south,half=bottom,open=false]",
        F + "oak_log[axis=z]",
    ]
    a = np.zeros((9, 12, 12), np.uint16)
    a[0], a[1] = 2, 1
    a[2:6, 3:9, 2:10] = 3
    a[2:6, 4:8, 3:9] = 0
    for x in (2, 9):
        for z in (3, 8):
            a[2:6, z, x] = 6
    a[6, 8, 2:10] = a[6, 3, 2:10] = 7
    a[6, 4:8, 2] = a[6, 4:8, 9] = 12
    a[2, 8, 5], a[3, 8, 5] = 4, 5
    a[3, 8, [3, 4, 7, 8]] = 8
    a[2:8, 5, 10] = 9
    a[1, 9, 4:7] = 10
    a[2, 9, 7] = 11
    return pal, a
