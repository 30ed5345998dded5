"""``level.dat``: read, write (atomically, gzip) and create a new flat world.

The new-world layout follows the vanilla 1.21.11 singleplayer save in
``../shared/fixtures/world/minestom_vanilla_1.21.11/level.dat`` field by field (see
docs/world-format.md for the comparison), minus what belongs to a player or a running
game (``Player``, ``ServerBrands`` history, weather timers left at their new-world values).
1.21.9+ stores the world spawn as ``spawn {dimension, pos [I; x, y, z], yaw, pitch}``
instead of ``SpawnX/SpawnY/SpawnZ/SpawnAngle``; 1.21.11 stores game rules under
``game_rules`` with namespaced keys and typed values (a missing rule takes its default).
"""

from __future__ import annotations

import random
import secrets
import shutil
import time
from pathlib import Path

from mcb_common import nbt
from mcb_common.errors import ErrorCode, McbError
from mcb_common.files import atomic_write

MINECRAFT_VERSION = "1.21.11"
DATA_VERSION = 4671
MIN_Y, MAX_Y = -64, 319

# The flat world: bedrock y=-64, stone -63..59, dirt 60..62, grass 63 (build from y=64).
FLAT_LAYERS: list[tuple[str, int]] = [
    ("minecraft:bedrock", 1),
    ("minecraft:stone", 123),
    ("minecraft:dirt", 3),
    ("minecraft:grass_block[snowy=false]", 1),
]
FLAT_BIOME = "minecraft:plains"
SURFACE_Y = MIN_Y + sum(h for _, h in FLAT_LAYERS)  # 64: the first air block


def _layer_block_id(state: str) -> str:
    return state.split("[", 1)[0]


def flat_generator() -> nbt.Compound:
    layers = nbt.List(
        nbt.COMPOUND, [nbt.Compound(block=nbt.String(_layer_block_id(s)), height=nbt.Int(h)) for s, h in FLAT_LAYERS]
    )
    return nbt.Compound(
        type=nbt.String("minecraft:flat"),
        settings=nbt.Compound(
            biome=nbt.String(FLAT_BIOME),
            features=nbt.Byte(0),
            lakes=nbt.Byte(0),
            layers=layers,
            structure_overrides=nbt.List(nbt.STRING),
        ),
    )


def _noise_dimension(settings: str, preset: str | None, biome_type: str, dim_type: str) -> nbt.Compound:
    bs = nbt.Compound(type=nbt.String(biome_type))
    if preset:
        bs = nbt.Compound(preset=nbt.String(preset), type=nbt.String(biome_type))
    return nbt.Compound(
        generator=nbt.Compound(settings=nbt.String(settings), biome_source=bs, type=nbt.String("minecraft:noise")),
        type=nbt.String(dim_type),
    )


def new_flat_level(name: str, seed: int | None = None, spawn: tuple[int, int, int] = (0, SURFACE_Y, 0)) -> nbt.Compound:
    """A fresh level.dat root for a flat 1.21.11 world (server-style: no Player tag)."""
    if seed is None:
        seed = int.from_bytes(secrets.token_bytes(8), "big", signed=True)
    now_ms = int(time.time() * 1000)
    data = nbt.Compound()
    data["WanderingTraderSpawnChance"] = nbt.Int(25)
    data["Difficulty"] = nbt.Byte(2)
    data["raining"] = nbt.Byte(0)
    data["Time"] = nbt.Long(0)
    data["GameType"] = nbt.Int(1)  # creative: a building world
    data["ServerBrands"] = nbt.List(nbt.STRING, [nbt.String("vanilla")])
    data["WorldGenSettings"] = nbt.Compound(
        bonus_chest=nbt.Byte(0),
        seed=nbt.Long(seed),
        generate_features=nbt.Byte(0),
        dimensions=nbt.Compound(
            {
                "minecraft:overworld": nbt.Compound(generator=flat_generator(), type=nbt.String("minecraft:overworld")),
                "minecraft:the_nether": _noise_dimension(
                    "minecraft:nether", "minecraft:nether", "minecraft:multi_noise", "minecraft:the_nether"
                ),
                "minecraft:the_end": _noise_dimension("minecraft:end", None, "minecraft:the_end", "minecraft:the_end"),
            }
        ),
    )
    gateways = list(range(20))
    random.Random(seed).shuffle(gateways)  # the game shuffles the 20 end gateways per world
    data["DragonFight"] = nbt.Compound(
        NeedsStateScanning=nbt.Byte(1),
        Gateways=nbt.List(nbt.INT, [nbt.Int(g) for g in gateways]),
        DragonKilled=nbt.Byte(0),
        PreviouslyKilled=nbt.Byte(0),
    )
    data["Version"] = nbt.Compound(
        Snapshot=nbt.Byte(0),
        Series=nbt.String("main"),
        Id=nbt.Int(DATA_VERSION),
        Name=nbt.String(MINECRAFT_VERSION),
    )
    data["DayTime"] = nbt.Long(6000)  # noon: pictures of a new build are lit
    data["initialized"] = nbt.Byte(1)
    data["WasModded"] = nbt.Byte(0)
    data["allowCommands"] = nbt.Byte(1)
    data["WanderingTraderSpawnDelay"] = nbt.Int(24000)
    data["CustomBossEvents"] = nbt.Compound()
    data["game_rules"] = nbt.Compound(
        {
            # building-friendly; every other rule keeps its default (the game fills missing rules)
            "minecraft:advance_time": nbt.Byte(0),
            "minecraft:advance_weather": nbt.Byte(0),
            "minecraft:spawn_mobs": nbt.Byte(0),
            "minecraft:spawn_monsters": nbt.Byte(0),
            "minecraft:spawn_phantoms": nbt.Byte(0),
            "minecraft:spawn_patrols": nbt.Byte(0),
            "minecraft:spawn_wandering_traders": nbt.Byte(0),
            "minecraft:mob_griefing": nbt.Byte(0),
            "minecraft:fire_spread_radius_around_player": nbt.Int(0),
            "minecraft:tnt_explodes": nbt.Byte(0),
        }
    )
    data["rainTime"] = nbt.Int(0)
    data["thunderTime"] = nbt.Int(0)
    data["hardcore"] = nbt.Byte(0)
    data["DifficultyLocked"] = nbt.Byte(0)
    data["clearWeatherTime"] = nbt.Int(0)
    data["thundering"] = nbt.Byte(0)
    data["version"] = nbt.Int(19133)  # the Anvil save-format version (constant since 1.2)
    data["LastPlayed"] = nbt.Long(now_ms)
    data["spawn"] = nbt.Compound(
        pos=nbt.IntArray(spawn),
        pitch=nbt.Float(0.0),
        dimension=nbt.String("minecraft:overworld"),
        yaw=nbt.Float(0.0),
    )
    data["ScheduledEvents"] = nbt.List(nbt.END)
    data["LevelName"] = nbt.String(name)
    data["DataVersion"] = nbt.Int(DATA_VERSION)
    data["world_border"] = nbt.Compound(
        center_z=nbt.Double(0.0),
        damage_per_block=nbt.Double(0.2),
        warning_time=nbt.Int(15),
        size=nbt.Double(59999968.0),
        safe_zone=nbt.Double(5.0),
        warning_blocks=nbt.Int(5),
        lerp_target=nbt.Double(59999968.0),
        lerp_time=nbt.Long(0),
        center_x=nbt.Double(0.0),
    )
    data["DataPacks"] = nbt.Compound(
        Enabled=nbt.List(nbt.STRING, [nbt.String("vanilla")]),
        Disabled=nbt.List(
            nbt.STRING, [nbt.String(n) for n in ("minecart_improvements", "redstone_experiments", "trade_rebalance")]
        ),
    )
    return nbt.Compound(Data=data)


def read_level(path: Path) -> nbt.Compound:
    try:
        _, root = nbt.read_file(path)
    except FileNotFoundError:
        raise McbError(ErrorCode.NOT_FOUND, f"no level.dat at {path}") from None
    except (nbt.NbtError, OSError, EOFError) as exc:
        raise McbError(ErrorCode.INTERNAL, f"{path} is not a readable level.dat: {exc}") from None
    if not isinstance(root.get("Data"), dict):
        raise McbError(ErrorCode.INTERNAL, f"{path} has no Data compound")
    return root


def write_level(path: Path, root: nbt.Compound) -> None:
    """gzip + ``atomic_write`` (tmp, fsync, rename, fsync dir); keeps a copy as ``level.dat_old``."""
    raw = nbt.gzip_bytes(nbt.write(root))
    if path.exists():
        shutil.copyfile(path, path.with_name(path.name + "_old"))
    atomic_write(path, raw)


def level_info(root: nbt.Compound) -> dict:
    d = root["Data"]
    version = d.get("Version") or {}
    return {
        "name": str(d.get("LevelName", "")),
        "dataVersion": int(d.get("DataVersion", version.get("Id", 0)) or 0),
        "minecraftVersion": str(version.get("Name", "")),
    }
