"""Generate ``src/mcb_camera/data/block_colours.json`` (the built-in renderer's colour table).

Inputs (both public, see ``src/mcb_camera/data/PROVENANCE.md``):

* ``blocks.json`` and ``tints.json`` of the npm package ``minecraft-data`` 3.119.0
  (MIT licence, PrismarineJS), folder ``minecraft-data/data/pc/1.21.11`` — the block list
  (name, ``transparent``, ``boundingBox``, ``material``) and the default water tint;
* the 61 base map colours of Minecraft Java (facts, as tabulated on the Minecraft Wiki page
  "Map item format"), written below as ``MAP``.

Each block gets a colour by the rules below (first match wins) and records which rule
gave it (``src``), so a wrong colour can be traced and fixed here, not in the JSON.

    npm pack minecraft-data@3.119.0 && tar xzf minecraft-data-3.119.0.tgz
    uv run python services/camera-worker/tools/gen_colours.py package/minecraft-data/data/pc/1.21.11
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

MAP = {
    "GRASS": (127, 178, 56),
    "SAND": (247, 233, 163),
    "WOOL": (199, 199, 199),
    "FIRE": (255, 0, 0),
    "ICE": (160, 160, 255),
    "METAL": (167, 167, 167),
    "PLANT": (0, 124, 0),
    "SNOW": (255, 255, 255),
    "CLAY": (164, 168, 184),
    "DIRT": (151, 109, 77),
    "STONE": (112, 112, 112),
    "WATER": (64, 64, 255),
    "WOOD": (143, 119, 72),
    "QUARTZ": (255, 252, 245),
    "COLOR_ORANGE": (216, 127, 51),
    "COLOR_MAGENTA": (178, 76, 216),
    "COLOR_LIGHT_BLUE": (102, 153, 216),
    "COLOR_YELLOW": (229, 229, 51),
    "COLOR_LIGHT_GREEN": (127, 204, 25),
    "COLOR_PINK": (242, 127, 165),
    "COLOR_GRAY": (76, 76, 76),
    "COLOR_LIGHT_GRAY": (153, 153, 153),
    "COLOR_CYAN": (76, 127, 153),
    "COLOR_PURPLE": (127, 63, 178),
    "COLOR_BLUE": (51, 76, 178),
    "COLOR_BROWN": (102, 76, 51),
    "COLOR_GREEN": (102, 127, 51),
    "COLOR_RED": (153, 51, 51),
    "COLOR_BLACK": (25, 25, 25),
    "GOLD": (250, 238, 77),
    "DIAMOND": (92, 219, 213),
    "LAPIS": (74, 128, 255),
    "EMERALD": (0, 217, 58),
    "PODZOL": (129, 86, 49),
    "NETHER": (112, 2, 0),
    "TERRACOTTA_WHITE": (209, 177, 161),
    "TERRACOTTA_ORANGE": (159, 82, 36),
    "TERRACOTTA_MAGENTA": (149, 87, 108),
    "TERRACOTTA_LIGHT_BLUE": (112, 108, 138),
    "TERRACOTTA_YELLOW": (186, 133, 36),
    "TERRACOTTA_LIGHT_GREEN": (103, 117, 53),
    "TERRACOTTA_PINK": (160, 77, 78),
    "TERRACOTTA_GRAY": (57, 41, 35),
    "TERRACOTTA_LIGHT_GRAY": (135, 107, 98),
    "TERRACOTTA_CYAN": (87, 92, 92),
    "TERRACOTTA_PURPLE": (122, 73, 88),
    "TERRACOTTA_BLUE": (76, 62, 92),
    "TERRACOTTA_BROWN": (76, 50, 35),
    "TERRACOTTA_GREEN": (76, 82, 42),
    "TERRACOTTA_RED": (142, 60, 46),
    "TERRACOTTA_BLACK": (37, 22, 16),
    "CRIMSON_NYLIUM": (189, 48, 49),
    "CRIMSON_STEM": (148, 63, 97),
    "CRIMSON_HYPHAE": (92, 25, 29),
    "WARPED_NYLIUM": (22, 126, 134),
    "WARPED_STEM": (58, 142, 140),
    "WARPED_HYPHAE": (86, 44, 62),
    "WARPED_WART_BLOCK": (20, 180, 133),
    "DEEPSLATE": (100, 100, 100),
    "RAW_IRON": (216, 175, 147),
    "GLOW_LICHEN": (127, 167, 150),
}
DYES = {
    "white": "SNOW",
    "orange": "COLOR_ORANGE",
    "magenta": "COLOR_MAGENTA",
    "light_blue": "COLOR_LIGHT_BLUE",
    "yellow": "COLOR_YELLOW",
    "lime": "COLOR_LIGHT_GREEN",
    "pink": "COLOR_PINK",
    "gray": "COLOR_GRAY",
    "light_gray": "COLOR_LIGHT_GRAY",
    "cyan": "COLOR_CYAN",
    "purple": "COLOR_PURPLE",
    "blue": "COLOR_BLUE",
    "brown": "COLOR_BROWN",
    "green": "COLOR_GREEN",
    "red": "COLOR_RED",
    "black": "COLOR_BLACK",
}
TERRACOTTA = {d: "TERRACOTTA_" + ("LIGHT_GREEN" if d == "lime" else d.upper()) for d in DYES}
# planks (and the wood family's slabs, stairs, fences, doors...) / bark of logs
WOOD_PLANKS = {
    "oak": "WOOD",
    "spruce": "PODZOL",
    "birch": "SAND",
    "jungle": "DIRT",
    "acacia": "COLOR_ORANGE",
    "dark_oak": "COLOR_BROWN",
    "mangrove": "COLOR_RED",
    "cherry": "TERRACOTTA_WHITE",
    "bamboo": "COLOR_YELLOW",
    "crimson": "CRIMSON_STEM",
    "warped": "WARPED_STEM",
    "pale_oak": "QUARTZ",
}
WOOD_BARK = {
    "oak": "PODZOL",
    "spruce": "COLOR_BROWN",
    "birch": "QUARTZ",
    "jungle": "PODZOL",
    "acacia": "STONE",
    "dark_oak": "COLOR_BROWN",
    "mangrove": "PODZOL",
    "cherry": "TERRACOTTA_BLACK",
    "pale_oak": "STONE",
    "crimson": "CRIMSON_HYPHAE",
    "warped": "WARPED_HYPHAE",
}
# Hand-picked where a map colour would mislead (recorded as src "hand").
HAND = {
    "glass": (205, 225, 235),
    "glass_pane": (205, 225, 235),
    "tinted_glass": (60, 50, 70),
    "lava": (220, 95, 20),
    "torch": (255, 200, 80),
    "wall_torch": (255, 200, 80),
    "lantern": (255, 200, 80),
    "bedrock": (70, 70, 70),
    "short_grass": (100, 150, 50),
    "tall_grass": (100, 150, 50),
    "fern": (90, 140, 50),
    "large_fern": (90, 140, 50),
    # crops and cane (issue 17: drawn as crossed planes, were the grey fallback)
    "wheat": (190, 170, 75),
    "carrots": (85, 145, 50),
    "potatoes": (85, 145, 50),
    "beetroots": (85, 145, 50),
    "sugar_cane": (140, 185, 90),
    "torchflower_crop": (85, 145, 50),
    "pitcher_crop": (85, 145, 50),
}
# (regex on the block name, map colour) — first match wins
RULES: list[tuple[str, str]] = [
    (r"^(grass_block|moss_block|moss_carpet)$", "GRASS"),
    (r"leaves$", "PLANT"),
    (r"^(vine|lily_pad|.*sapling|.*bush|kelp.*|seagrass|tall_seagrass)$", "PLANT"),
    (r"^(dirt|coarse_dirt|rooted_dirt|farmland|dirt_path|mud|packed_mud|jungle_.*)$", "DIRT"),
    (r"^(podzol|spruce_.*)$", "PODZOL"),
    (r"^mycelium$", "COLOR_PURPLE"),
    (r"^(sand|sandstone|.*_sandstone.*|sandstone_.*|end_stone.*|glowstone|birch_.*|suspicious_sand)$", "SAND"),
    (
        r"^(red_sand|red_sandstone.*|.*red_sandstone.*|terracotta|acacia_.*|pumpkin|carved_pumpkin|jack_o_lantern|.*copper.*)$",
        "COLOR_ORANGE",
    ),
    (
        r"^(gravel|stone|cobblestone.*|stone_.*|mossy_.*|andesite.*|polished_andesite.*|smooth_stone.*|furnace|dispenser|dropper|observer|piston.*|sticky_piston)$",
        "STONE",
    ),
    (r"^(granite.*|polished_granite.*)$", "DIRT"),
    (
        r"^(diorite.*|polished_diorite.*|quartz.*|smooth_quartz.*|sea_lantern|bone_block|.*pale_oak.*|calcite)$",
        "QUARTZ",
    ),
    (r"deepslate", "DEEPSLATE"),
    (r"^(tuff.*|polished_tuff.*|chiseled_tuff.*)$", "TERRACOTTA_GRAY"),
    (r"^(bricks|brick_.*|.*_bricks?_.*)$", "COLOR_RED"),
    (r"nether_brick|netherrack|nether_wart_block|magma_block", "NETHER"),
    (
        r"^(obsidian|crying_obsidian|coal_block|blackstone.*|polished_blackstone.*|basalt|polished_basalt|smooth_basalt)$",
        "COLOR_BLACK",
    ),
    (r"^(clay)$", "CLAY"),
    (r"^(snow|snow_block|powder_snow)$", "SNOW"),
    (r"ice$", "ICE"),
    (
        r"^(iron_block|iron_bars|iron_door|iron_trapdoor|anvil|chipped_anvil|damaged_anvil|heavy_weighted_pressure_plate|cauldron|hopper)$",
        "METAL",
    ),
    (r"^(gold_block|light_weighted_pressure_plate|bell)$", "GOLD"),
    (r"^diamond_block$", "DIAMOND"),
    (r"^emerald_block$", "EMERALD"),
    (r"^lapis_block$", "LAPIS"),
    (r"^(redstone_block|tnt)$", "FIRE"),
    (r"^(prismarine.*|dark_prismarine.*|warped_wart_block)$", "DIAMOND"),
    (r"^(hay_block|sponge|wet_sponge|honey_block|honeycomb_block)$", "COLOR_YELLOW"),
    (r"^melon$", "COLOR_LIGHT_GREEN"),
    (r"^(amethyst.*|budding_amethyst|purpur.*)$", "COLOR_PURPLE"),
    (
        r"^(bookshelf|chiseled_bookshelf|crafting_table|note_block|jukebox|barrel|composter|lectern|oak_.*|chest|trapped_chest|loom|cartography_table|fletching_table|smithing_table)$",
        "WOOD",
    ),
    (r"^(dark_oak_.*|mangrove_roots|muddy_mangrove_roots|soul_sand|soul_soil)$", "COLOR_BROWN"),
    (r"^mangrove_.*", "COLOR_RED"),
    (r"^cherry_.*", "TERRACOTTA_WHITE"),
    (r"^bamboo.*", "COLOR_YELLOW"),
    (r"^(crimson_nylium)$", "CRIMSON_NYLIUM"),
    (r"^(warped_nylium)$", "WARPED_NYLIUM"),
    (r"^crimson_.*", "CRIMSON_STEM"),
    (r"^warped_.*", "WARPED_STEM"),
    (r"^(raw_iron_block)$", "RAW_IRON"),
    (r"^(raw_gold_block)$", "GOLD"),
    (r"^(raw_copper_block)$", "COLOR_ORANGE"),
    (r"^glow_lichen$", "GLOW_LICHEN"),
    (r"^(mud_bricks.*|packed_mud)$", "TERRACOTTA_LIGHT_GRAY"),
    (r"(poppy|rose|red_tulip|red_mushroom)", "COLOR_RED"),
    (r"(dandelion|sunflower)", "COLOR_YELLOW"),
    (r"(flower|orchid|allium|lilac|peony|tulip|daisy|cornflower|lily_of_the_valley|bluet)", "PLANT"),
]
FALLBACK_BY_TOOL = {
    "mineable/pickaxe": "STONE",
    "mineable/axe": "WOOD",
    "mineable/shovel": "DIRT",
    "mineable/hoe": "PLANT",
}

NONE = {"air", "cave_air", "void_air", "barrier", "light", "structure_void", "moving_piston"}


def kind_of(b: dict) -> str:
    n = b["name"]
    if n in NONE:
        return "none"
    if n in ("water", "bubble_column"):
        return "water"
    if n == "lava":
        return "lava"
    if n.endswith("_slab"):
        return "slab"
    if n.endswith("_carpet") or n in ("snow", "moss_carpet", "pale_moss_carpet") or n.endswith("pressure_plate"):
        return "carpet"
    if n.endswith(("_fence", "_wall", "iron_bars", "_pane")) or n == "glass_pane" or n.endswith("chain"):
        return "post"
    if b.get("boundingBox") == "empty":
        return "small"
    return "cube"


def alpha_of(n: str, kind: str) -> float:
    if "glass" in n:
        return 0.45 if "stained" in n else 0.35
    if n.endswith("ice") and n != "blue_ice" and n != "packed_ice":
        return 0.75
    if n.endswith("leaves"):
        return 0.92
    if kind == "water":
        return 0.62
    return 1.0


def colour(b: dict, water: tuple[int, int, int]) -> tuple[tuple[int, int, int], str]:
    n = b["name"]
    if n in HAND:
        return HAND[n], "hand"
    if n in ("water", "bubble_column"):
        return water, "tint:water(plains)"
    for dye, mc in DYES.items():
        if (
            n.startswith(dye + "_")
            and not n.startswith(("light_blue", "light_gray"))
            or n.startswith(dye + "_")
            and dye in ("light_blue", "light_gray")
        ):
            rest = n[len(dye) + 1 :]
            if rest == "terracotta" or rest == "glazed_terracotta":
                return MAP[TERRACOTTA[dye]], f"map:{TERRACOTTA[dye]}"
            if rest in (
                "wool",
                "carpet",
                "concrete",
                "concrete_powder",
                "stained_glass",
                "stained_glass_pane",
                "bed",
                "banner",
                "wall_banner",
                "shulker_box",
                "candle",
                "candle_cake",
            ):
                return MAP[mc], f"map:{mc}"
    for wood, mc in WOOD_BARK.items():
        if n in (
            f"{wood}_log",
            f"{wood}_wood",
            f"stripped_{wood}_log",
            f"stripped_{wood}_wood",
            f"{wood}_stem",
            f"{wood}_hyphae",
        ):
            src = WOOD_PLANKS[wood] if n.startswith("stripped_") else mc
            return MAP[src], f"map:{src}"
    for wood, mc in WOOD_PLANKS.items():
        if n.startswith(wood + "_") and not n.endswith("leaves") and not n.endswith(("sapling", "propagule")):
            if wood == "oak" and n.startswith("oak_") or wood != "oak":
                return MAP[mc], f"map:{mc}"
    for pat, mc in RULES:
        if re.search(pat, n):
            return MAP[mc], f"map:{mc}"
    mc = FALLBACK_BY_TOOL.get(str(b.get("material", "")).split(";")[0], "COLOR_LIGHT_GRAY")
    return MAP[mc], f"fallback:{b.get('material', '')}->{mc}"


def main(folder: str) -> None:
    src = Path(folder)
    blocks = json.loads((src / "blocks.json").read_text())
    tints = json.loads((src / "tints.json").read_text())
    wc = next(d["color"] for d in tints["water"]["data"] if "plains" in d["keys"]) & 0xFFFFFF
    water = ((wc >> 16) & 255, (wc >> 8) & 255, wc & 255)
    out = {}
    for b in sorted(blocks, key=lambda b: b["name"]):
        kind = kind_of(b)
        (r, g, bb), how = colour(b, water)
        entry = {"rgb": [r, g, bb], "a": alpha_of(b["name"], kind), "kind": kind, "src": how}
        if b["name"] in ("grass_block", "podzol", "mycelium"):
            entry["side"] = list(MAP["DIRT"])  # dirt sides under a coloured top
        out["minecraft:" + b["name"]] = entry
    doc = {
        "comment": "Generated by services/camera-worker/tools/gen_colours.py; see PROVENANCE.md. "
        "rgb: top colour 0-255; side: side colour when it differs; a: alpha; kind: "
        "cube|slab|carpet|post|small|water|lava|none; src: the rule that gave the colour.",
        "minecraft_version": "1.21.11",
        "source": "minecraft-data@3.119.0 (MIT) data/pc/1.21.11 blocks.json + tints.json; Minecraft map colours",
        "blocks": out,
    }
    dest = Path(__file__).resolve().parents[1] / "src" / "mcb_camera" / "data" / "block_colours.json"
    dest.write_text(json.dumps(doc, indent=0, sort_keys=True) + "\n")
    kinds: dict[str, int] = {}
    for e in out.values():
        kinds[e["src"].split(":")[0]] = kinds.get(e["src"].split(":")[0], 0) + 1
    print(f"{len(out)} blocks -> {dest}; by rule kind: {kinds}")


if __name__ == "__main__":
    main(sys.argv[1])
