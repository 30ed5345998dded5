"""Blocks that hang on a neighbour or stand on the block below, and pop off (drop as items)
without it.

``support_of(state)`` answers the offset of the block a placed state needs and what that block
must be (``KINDS``; air and fluids never hold anything):

* ``solid``: ``BlockState.isSolid()`` (signs, banners) and the sides walls hang on,
  approximated by ``boundingBox == "block"`` in the vendored registry;
* ``sturdy``: a full top face — ``isFaceSturdy(UP)`` / ``Block.canSupportRigidBlock``: a ``solid``
  block that is not a post, pane, door, bed, chest, lantern, bottom slab or bottom stairs, …;
* ``center``: ``Block.canSupportCenter(level, below, UP)`` — a solid block, or a post whose top
  covers the block's centre (fences, walls, panes, bars, chains, hoppers);
* ``dirt``: ``VegetationBlock.mayPlaceOn`` — the ``#minecraft:dirt`` tag (dirt, grass block,
  podzol, coarse dirt, mycelium, rooted dirt, moss block, pale moss block, mud, muddy mangrove
  roots) or farmland; the wither rose also netherrack, soul sand and soul soil;
* ``any``: any block that is not air (``CarpetBlock``: ``!isEmptyBlock(below)``; hanging signs).

| blocks | support | kind | the game's rule (net.minecraft.world.level.block, Mojang names) |
|---|---|---|---|
| torch, soul/redstone/copper torch | below | center | ``BaseTorchBlock.canSurvive``: ``canSupportCenter(below, UP)`` |
| wall torches, ladder, wall signs, wall banners | behind (opposite of ``facing``) | solid | ``WallTorchBlock``, ``LadderBlock``, ``WallSignBlock``, ``WallBannerBlock`` |
| standing signs, standing banners | below | solid | ``StandingSignBlock``/``BannerBlock.canSurvive``: ``below.isSolid()`` |
| buttons, lever | ``face``: floor → below, ceiling → above, wall → behind | solid | ``FaceAttachedHorizontalDirectionalBlock.canSurvive`` |
| hanging signs (not the wall kind) | above | any | ``CeilingHangingSignBlock`` |
| doors (lower half) | below | sturdy | ``DoorBlock.canSurvive``: lower → ``below.isFaceSturdy(UP)``; upper → the door's lower half below (a two-part rule: the planner's ``connect``) |
| rails (all four) | below | sturdy | ``BaseRailBlock.canSurvive``: ``canSupportRigidBlock(below)`` |
| repeater, comparator | below | sturdy | ``DiodeBlock.canSurviveOn``: ``isFaceSturdy(UP, RIGID)`` |
| pressure plates | below | center | ``BasePressurePlateBlock.canSurvive``: ``canSupportRigidBlock(below) || canSupportCenter(below, UP)`` |
| candles | below | center | ``CandleBlock.canSurvive``: ``canSupportCenter(below, UP)`` |
| carpets (wool, moss) | below | any | ``CarpetBlock.canSurvive``: ``!isEmptyBlock(below)`` |
| flowers, saplings, short grass, fern, bushes, sweet berry bush, petals, wildflowers, tall plants (lower half) | below | dirt | ``VegetationBlock.canSurvive`` → ``mayPlaceOn``; ``TallFlowerBlock``/``DoublePlantBlock`` lower half the same; ``WitherRoseBlock.mayPlaceOn`` adds the nether soils |

Read in public Mojang-mapped decompiles of the game through the search tool — the 1.21.7 client
(github.com/PolarBear2333/minecraft_sourcecode_1.21.7_client) and NikitaCartes-archive/
MinecraftDeobfuscated-Mojang — and the ``#minecraft:dirt`` tag from the same source's
``BlockItemTagsProvider`` (restated here, nothing copied). Everything else: ``None`` (no support needed, or not claimed here).
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources

from .registry import AIR_NAMES, DEFAULT_VERSION

_DIRS = {"north": (0, 0, -1), "south": (0, 0, 1), "east": (1, 0, 0), "west": (-1, 0, 0)}
_TORCHES = frozenset({"torch", "soul_torch", "redstone_torch", "copper_torch"})
KINDS = ("solid", "sturdy", "center", "dirt", "any")
# shapes whose top face is not full although their collision box may be (kept conservative)
_NOT_STURDY = re.compile(
    r"(_fence|_fence_gate|_wall|_pane|_bars|chain|_door|_trapdoor|_bed|chest|lantern|"
    r"_carpet|_pressure_plate|_button|candle|_sign|_banner|_head|_skull|flower_pot|ladder|"
    r"torch|rail|repeater|comparator|scaffolding|cactus|bamboo|lectern|enchanting_table|"
    r"stonecutter|brewing_stand|cauldron|anvil|bell|campfire|cake|dirt_path|farmland)$"
)
BELOW = (0, -1, 0)
# #minecraft:dirt (the game's tag data) and farmland: what VegetationBlock.mayPlaceOn accepts
DIRT = frozenset(
    f"minecraft:{n}"
    for n in (
        "dirt",
        "grass_block",
        "podzol",
        "coarse_dirt",
        "mycelium",
        "rooted_dirt",
        "moss_block",
        "pale_moss_block",
        "mud",
        "muddy_mangrove_roots",
        "farmland",
    )
)
_NETHER_SOILS = frozenset({"minecraft:netherrack", "minecraft:soul_sand", "minecraft:soul_soil"})
# VegetationBlock subclasses that keep its mayPlaceOn (FlowerBlock, SaplingBlock, TallGrassBlock,
# TallFlowerBlock, DoublePlantBlock, SweetBerryBushBlock, FlowerBedBlock, BushBlock, FireflyBushBlock)
_PLANTS = frozenset(
    {
        "dandelion",
        "poppy",
        "blue_orchid",
        "allium",
        "azure_bluet",
        "red_tulip",
        "orange_tulip",
        "white_tulip",
        "pink_tulip",
        "oxeye_daisy",
        "cornflower",
        "lily_of_the_valley",
        "torchflower",
        "open_eyeblossom",
        "closed_eyeblossom",
        "oak_sapling",
        "spruce_sapling",
        "birch_sapling",
        "jungle_sapling",
        "acacia_sapling",
        "dark_oak_sapling",
        "cherry_sapling",
        "pale_oak_sapling",
        "short_grass",
        "fern",
        "bush",
        "firefly_bush",
        "sweet_berry_bush",
        "pink_petals",
        "wildflowers",
        "sunflower",
        "lilac",
        "rose_bush",
        "peony",
        "tall_grass",
        "large_fern",
    }
)
_TALL = frozenset({"sunflower", "lilac", "rose_bush", "peony", "tall_grass", "large_fern"})
_CENTER_POSTS = ("_fence", "_wall", "_pane", "_bars", "chain", "hopper")


def _split(state: str) -> tuple[str, dict[str, str]]:
    s = state.split("{", 1)[0]
    name = s.split("[", 1)[0].removeprefix("minecraft:")
    props: dict[str, str] = {}
    if "[" in s:
        for part in s[s.index("[") + 1 : -1].split(","):
            if "=" in part:
                k, v = part.split("=", 1)
                props[k] = v
    return name, props


def _behind(props: dict[str, str]) -> tuple[int, int, int] | None:
    d = _DIRS.get(props.get("facing", ""))
    return None if d is None else (-d[0], -d[1], -d[2])


def support_of(state: str) -> tuple[tuple[int, int, int], str] | None:
    """(offset to the supporting block, its kind: one of ``KINDS``) or None."""
    name, props = _split(state)
    if name in _TORCHES:
        return BELOW, "center"
    if name.endswith("_wall_hanging_sign"):
        return None
    if name.endswith("wall_torch") or name == "ladder" or name.endswith("_wall_sign") or name.endswith("_wall_banner"):
        off = _behind(props)
        return None if off is None else (off, "solid")
    if name.endswith("_hanging_sign"):
        return (0, 1, 0), "any"
    if name.endswith("_sign") or name.endswith("_banner"):
        return BELOW, "solid"
    if name.endswith("_button") or name == "lever":
        face = props.get("face", "wall")
        if face == "floor":
            return BELOW, "solid"
        if face == "ceiling":
            return (0, 1, 0), "solid"
        off = _behind(props)
        return None if off is None else (off, "solid")
    if name.endswith("_door"):  # DoorBlock: the upper half stands on its lower half (two-part rule)
        return (BELOW, "sturdy") if props.get("half", "lower") == "lower" else None
    if name in ("rail", "powered_rail", "detector_rail", "activator_rail", "repeater", "comparator"):
        return BELOW, "sturdy"
    if name.endswith("_pressure_plate") or name == "candle" or name.endswith("_candle"):
        return BELOW, "center"
    if name.endswith("_carpet") and name != "pale_moss_carpet":  # PaleMossCarpetBlock has its own rules
        return BELOW, "any"
    if name in _PLANTS or name == "wither_rose":
        if name in _TALL and props.get("half", "lower") != "lower":
            return None  # DoublePlantBlock: the upper half stands on its lower half (two-part rule)
        return BELOW, "dirt"
    return None


@lru_cache(maxsize=2)
def _solid(version: str) -> frozenset[str]:
    name = f"blocks-{version}.json"
    try:
        raw = json.loads(resources.files("mcb_common").joinpath("data", name).read_text())
    except FileNotFoundError:
        raw = json.loads(resources.files("mcb_common").joinpath("data", f"blocks-{DEFAULT_VERSION}.json").read_text())
    return frozenset(f"minecraft:{b['name']}" for b in raw if b.get("boundingBox") == "block")


def holds(state: str | None, kind: str, fluid: bool, version: str = DEFAULT_VERSION, placed: str = "") -> bool:
    """Whether ``state`` (the support after the plan; None = unknown, assumed to hold) holds
    a block that needs a support of ``kind``. ``fluid``: the caller's fluid verdict for that
    state; ``placed``: the supported state (the wither rose also grows on nether soils)."""
    if state is None:
        return True
    name = state.split("{", 1)[0].split("[", 1)[0]
    if name in AIR_NAMES or fluid and "waterlogged=true" not in state:
        return False
    if kind == "any":
        return True
    if kind == "dirt":
        return name in DIRT or (
            placed.split("[", 1)[0].removeprefix("minecraft:") == "wither_rose" and name in _NETHER_SOILS
        )
    short = name.removeprefix("minecraft:")
    if kind == "center" and short.endswith(_CENTER_POSTS):
        return True
    if name not in _solid(version):
        return False
    if kind == "sturdy":
        if _NOT_STURDY.search(short):
            return False
        if short.endswith("_slab") and "type=bottom" in state or short.endswith("_stairs") and "half=bottom" in state:
            return False
    return True
