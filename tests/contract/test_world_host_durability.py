"""Embedded-host specifics: durability across kill -9, and the save read independently."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from contract.test_world_protocol import AIR, GLASS, STONE, Client, apply, block

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "services" / "world-host" / "tests"))
import anvil_check as indie  # noqa: E402


def test_applied_batch_survives_kill9_and_is_a_real_save(world_host):
    if world_host.restart is None or world_host.world_dir is None:
        pytest.skip(world_host.extra.get("no_save") or  # the host's own reason (hosts.py)
                    f"host-specific ({world_host.name}): needs a restartable host that writes a save on this machine")
    c = Client(world_host)
    epoch = c.ok("world_info")["epoch"]
    entries = [(x, 64 + (x % 3), z, AIR, STONE if (x + z) % 2 else GLASS) for x in range(-20, 20, 3) for z in range(-20, 20, 5)]
    r = apply(c, "durable", entries, epoch).json()["result"]
    assert r["status"] == "applied" and r["written"] == len(entries)
    uuid_before = c.ok("world_info")["worldUuid"]
    world_host.restart(True)  # kill -9, then start again
    info = c.ok("world_info")
    assert info["worldUuid"] == uuid_before
    for x, y, z, _, d in entries:
        assert block(c, x, y, z) == d
    replay = apply(c, "durable", entries, epoch).json()["result"]
    assert replay["replayed"] is True
    # the save on disk, read by a third-party reader
    world_host.stop()
    world = world_host.world_dir
    for x, y, z, _, d in entries:
        cx, cz = x >> 4, z >> 4
        ch = indie.chunk(indie.open_region(world / "region" / f"r.{cx >> 5}.{cz >> 5}.mca"), cx, cz)
        assert indie.get(ch, x, y, z) == d
        assert indie.get(ch, x, 63, z) == "minecraft:grass_block[snowy=false]"
        assert indie.get(ch, x, 10, z) == STONE
        assert indie.get(ch, x, -64, z) == "minecraft:bedrock"
