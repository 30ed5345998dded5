"""Embedded-host specifics: durability across kill -9, and the save read independently."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import pytest
from contract.test_world_protocol import AIR, GLASS, STONE, Client, apply, block

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "services" / "world-host" / "tests"))
import anvil_check as indie  # noqa: E402


def test_applied_batch_survives_kill9_and_is_a_real_save(world_host):
    if world_host.restart is None or world_host.world_dir is None:
        pytest.skip(
            world_host.extra.get("no_save")  # the host's own reason (hosts.py)
            or f"host-specific ({world_host.name}): needs a restartable host that writes a save on this machine"
        )
    c = Client(world_host)
    epoch = c.ok("world_info")["epoch"]
    entries = [
        (x, 64 + (x % 3), z, AIR, STONE if (x + z) % 2 else GLASS) for x in range(-20, 20, 3) for z in range(-20, 20, 5)
    ]
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


def test_save_completes_the_region_files_while_the_host_runs_and_kill9_before_a_checkpoint_loses_nothing(world_host):
    """The embedded host answers a batch once it is in its write-ahead log; its region files
    catch up at a checkpoint. ``POST /v1/save`` (admin or service token) is one: when it answers,
    an independent reader sees every answered block in the region files, the host still running.
    A kill -9 right after an answer (before any checkpoint) loses nothing: the next start replays
    the log onto the region files before it serves."""
    if world_host.name != "embedded":
        pytest.skip(f"host-specific ({world_host.name}): /v1/save is the embedded host's own checkpoint")
    c = Client(world_host)
    epoch = c.ok("world_info")["epoch"]
    first = [(x, 90, z, AIR, GLASS) for x in range(-30, 30, 7) for z in range(-30, 30, 11)]
    assert apply(c, "before-save", first, epoch).json()["result"]["status"] == "applied"
    denied = httpx.post(
        f"{world_host.base_url}/v1/save",
        headers={"Authorization": f"Bearer {world_host.tokens['automation']}"},
        timeout=60,
    )
    assert denied.status_code == 403 and denied.json()["error"]["code"] == "permission_denied"
    r = httpx.post(
        f"{world_host.base_url}/v1/save", headers={"Authorization": f"Bearer {world_host.tokens['admin']}"}, timeout=60
    )
    assert r.status_code == 200 and r.json()["result"]["saved"] is True, r.text
    assert r.json()["result"]["chunksWritten"] >= 1
    world = world_host.world_dir
    for x, y, z, _, d in first:  # read while the host runs
        cx, cz = x >> 4, z >> 4
        assert (
            indie.get(indie.chunk(indie.open_region(world / "region" / f"r.{cx >> 5}.{cz >> 5}.mca"), cx, cz), x, y, z)
            == d
        )
    second = [(x, 91, z, AIR, STONE) for x in range(-30, 30, 5) for z in range(-30, 30, 9)]
    assert apply(c, "before-kill", second, epoch).json()["result"]["status"] == "applied"
    world_host.restart(True)  # kill -9 at once: no checkpoint ran since the answer
    for x, y, z, _, d in first + second:
        assert block(c, x, y, z) == d
    world_host.stop()
    for x, y, z, _, d in first + second:
        cx, cz = x >> 4, z >> 4
        assert (
            indie.get(indie.chunk(indie.open_region(world / "region" / f"r.{cx >> 5}.{cz >> 5}.mca"), cx, cz), x, y, z)
            == d
        )
