"""Issue 31 item 11 — `mcb up --world PATH`: the embedded host opens a COPY of a real vanilla
1.21.11 single-player save (``../shared/fixtures/world/minestom_vanilla_1.21.11``), backs it up
first, holds its ``session.lock`` while it runs (a Java program locking it the way the game does is
told "already locked"), builds inside the area the owner chose, and after the stack stops the
save read by anvil-parser2 (an independent reader) holds the build and the untouched original
terrain. Refused with the reason: a save whose lock a Java program holds like the game does, and a
save of another data version (a real 1.18.1 ``level.dat``).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import anvil
import anyio
import pytest
from e2e.conftest import start_stack
from e2e.mcpclient import ToolError, apply_and_wait, call, http_client
from harness import ROOT, free_ports

FIXTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "world"
SAVE = FIXTURES / "minestom_vanilla_1.21.11"
OLD_LEVEL = FIXTURES / "leveldat_only" / "querz_1.18.1_level.dat"
HOLD = Path(__file__).resolve().parent / "java" / "HoldSessionLock.java"
# full chunks of the fixture: x -4..-1, z -10..-1 (chunk coordinates); the area: chunks -3..-2
AREA = "-48,-64,-48,-17,319,-17"
BOX = ({"x": -40, "y": 150, "z": -40}, {"x": -36, "y": 153, "z": -36})

pytestmark = pytest.mark.fixtures


def _copy(dst: Path, src: Path = SAVE) -> Path:
    if not src.is_dir():
        pytest.skip(f"fixture save not present at {src} (CI provides ../shared/fixtures)")
    shutil.copytree(src, dst)
    for p in [dst, *dst.rglob("*")]:  # the fixtures are read-only; a player's own save is not
        p.chmod(p.stat().st_mode | stat.S_IWUSR)
    return dst


def _block(world: Path, x: int, y: int, z: int) -> str:
    cx, cz = x >> 4, z >> 4
    region = anvil.Region.from_file(str(world / "region" / f"r.{cx >> 5}.{cz >> 5}.mca"))
    b = anvil.Chunk.from_region(region, cx, cz).get_block(x & 15, y, z & 15)
    return f"{b.namespace}:{b.id}"


class _GameLock:
    """A Java process holding session.lock through FileChannel.tryLock, like the game."""

    def __init__(self, save: Path):
        if shutil.which("java") is None:
            pytest.skip("java is not installed (the game's lock is modelled with the JDK's FileChannel)")
        self.p = subprocess.Popen(
            ["java", str(HOLD), str(save)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.p.stdout is not None
        self.answer = self.p.stdout.readline().strip()

    def close(self) -> None:
        assert self.p.stdin is not None
        self.p.stdin.close()
        self.p.wait(timeout=30)


def _mcb_up_refused(runtime: Path, save: Path) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCB_")}
    env["MCB_RUNTIME_DIR"] = str(runtime)
    names = [
        "world_host",
        "bridge",
        "planner_grpc",
        "journal_grpc",
        "camera_grpc",
        "planner_health",
        "journal_health",
        "camera_health",
        "redis",
        "dashboard",
        "camera_link",
    ]
    for name, port in zip(names, free_ports(len(names)), strict=True):
        env[f"MCB_{name.upper()}_PORT"] = str(port)
    p = subprocess.run(
        [sys.executable, "-m", "mcb_cli.main", "up", "--world", str(save)],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return p.returncode, p.stdout + p.stderr


def test_open_build_stop_read_back(tmp_path: Path):
    save = _copy(tmp_path / "saves" / "Vanilla World")
    # columns of the original terrain (inside the area, beside the build, and outside the area)
    columns = [(-44, -44), (-20, -20), (-30, -47), (-60, -150), (-5, -5)]
    original = {(x, y, z): _block(SAVE, x, y, z) for x, z in columns for y in range(-64, 160, 3)}
    assert len(set(original.values())) > 3, "the sample must cover real terrain, not only air"
    stack = start_stack(tmp_path / "runtime", extra_args=("--world", str(save), f"--area={AREA}"))
    try:
        log = stack.log()
        assert "backed up first to" in log, log
        backups = list((stack.runtime / "backups").iterdir())
        assert len(backups) == 1 and (backups[0] / "level.dat").is_file()
        assert (backups[0] / "region" / "r.-1.-1.mca").read_bytes() == (SAVE / "region" / "r.-1.-1.mca").read_bytes()
        assert stack.config()["world"]["path"] == str(save.resolve())
        area = stack.config()["projects"][0]["area"]
        assert area == {"min": {"x": -48, "y": -64, "z": -48}, "max": {"x": -17, "y": 319, "z": -17}}
        game = _GameLock(save)  # the game cannot open the world while the host has it
        try:
            assert game.answer == "ALREADY_LOCKED"
        finally:
            game.close()

        async def build():
            async with http_client(stack.mcp_url, stack.token("agent")) as client:
                plan = await call(
                    client,
                    "build_prepare",
                    {
                        "recipe": {
                            "version": 1,
                            "operations": [
                                {
                                    "type": "box",
                                    "min": BOX[0],
                                    "max": BOX[1],
                                    "block": "minecraft:stone_bricks",
                                    "hollow": True,
                                }
                            ],
                        }
                    },
                )
                st = await apply_and_wait(client, plan)
                assert st["state"] == "applied", st
                with pytest.raises(ToolError) as ei:  # outside the chosen area
                    await call(
                        client,
                        "build_prepare",
                        {
                            "recipe": {
                                "version": 1,
                                "operations": [
                                    {
                                        "type": "box",
                                        "min": {"x": 0, "y": 150, "z": 0},
                                        "max": {"x": 1, "y": 150, "z": 1},
                                        "block": "minecraft:stone",
                                    }
                                ],
                            }
                        },
                    )
                assert ei.value.error["code"] == "out_of_bounds"

        anyio.run(build)
        # the owner moves the area while the stack runs (`mcb area set`): the journal follows config.json
        env = {**stack.env}
        out = subprocess.run(
            [sys.executable, "-m", "mcb_cli.main", "area", "set", "--", "-16,100,-16,-1,200,-1"],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 0 and "x -16..-1, y 100..200, z -16..-1" in out.stdout, out.stdout + out.stderr

        async def moved():
            async with http_client(stack.mcp_url, stack.token("agent")) as client:
                ok = await call(
                    client,
                    "build_prepare",
                    {
                        "recipe": {
                            "version": 1,
                            "operations": [
                                {
                                    "type": "box",
                                    "min": {"x": -4, "y": 150, "z": -4},
                                    "max": {"x": -3, "y": 150, "z": -3},
                                    "block": "minecraft:stone",
                                }
                            ],
                        }
                    },
                )
                assert ok["changed_blocks"] == 4
                with pytest.raises(ToolError) as ei:  # the old area is no longer the project's
                    await call(
                        client,
                        "build_prepare",
                        {
                            "recipe": {
                                "version": 1,
                                "operations": [
                                    {"type": "box", "min": BOX[0], "max": BOX[0], "block": "minecraft:stone"}
                                ],
                            }
                        },
                    )
                assert ei.value.error["code"] == "out_of_bounds"

        anyio.run(moved)
    finally:
        assert stack.stop() == 0, stack.log()
    game = _GameLock(save)  # stopped: the lock is free again
    try:
        assert game.answer == "LOCKED"
    finally:
        game.close()
    lo, hi = BOX
    assert _block(save, lo["x"], lo["y"], lo["z"]) == "minecraft:stone_bricks"
    assert _block(save, hi["x"], hi["y"], hi["z"]) == "minecraft:stone_bricks"
    assert _block(save, -38, 151, -38) == "minecraft:air"  # hollow
    assert {p: _block(save, *p) for p in original} == original
    assert (save / "level.dat").read_bytes() == (SAVE / "level.dat").read_bytes(), "level.dat is left alone"


def test_refused_while_the_game_holds_the_lock(tmp_path: Path):
    save = _copy(tmp_path / "saves" / "Open In Game")
    game = _GameLock(save)
    try:
        assert game.answer == "LOCKED"
        code, out = _mcb_up_refused(tmp_path / "runtime", save)
        assert code == 2, out
        assert "Minecraft has the world" in out and "session.lock is locked" in out, out
        assert not (tmp_path / "runtime" / "backups").exists(), "nothing is copied before the checks pass"
        # the host refuses on its own too (the game may open the world between the check and the start)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("MCB_")},
            "MCB_RUNTIME_DIR": str(tmp_path / "runtime"),
            "MCB_WORLD_DIR": str(save),
            "MCB_WORLD_EXISTING": "1",
            "MCB_WORLD_HOST_PORT": str(free_ports(1)[0]),
        }
        p = subprocess.run(
            [sys.executable, "-m", "mcb_world_host"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert p.returncode == 2 and "session.lock is locked" in p.stderr, p.stderr
    finally:
        game.close()
    assert not (save / "mcb").exists(), "the host wrote nothing into the locked save"


def test_refused_for_another_data_version(tmp_path: Path):
    if not OLD_LEVEL.is_file():
        pytest.skip(f"fixture level.dat not present at {OLD_LEVEL}")
    save = _copy(tmp_path / "saves" / "Old World")
    (save / "level.dat").write_bytes(OLD_LEVEL.read_bytes())
    code, out = _mcb_up_refused(tmp_path / "runtime", save)
    assert code == 2, out
    assert "Minecraft 1.18.1 (DataVersion 2865)" in out and "1.21.11 (DataVersion 4671)" in out, out
    cfg = json.loads((tmp_path / "runtime" / "config.json").read_text())
    assert "path" not in cfg.get("world", {}), "a refused save is not remembered for the next `mcb up`"
