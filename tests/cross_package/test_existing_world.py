"""`mcb up --world PATH` and `mcb area set` (issue 31 item 11): the pure rules — the area's
parsing, config.json, the world host's environment for a person's save, the save checks and the
backup. The end-to-end run on a copy of a real 1.21.11 save: tests/e2e/test_existing_world_e2e.py."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest
from mcb_common import nbt
from mcb_common.errors import ErrorCode, McbError
from mcb_rpc.settings import Settings
from mcb_world_host import existing
from mcb_world_host import level as levelmod

from mcb_cli.runner import parse_area, services, set_area, use_world
from mcb_cli.worldreset import reset


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.setenv("MCB_RUNTIME_DIR", str(tmp_path / "runtime"))
    for k in list(os.environ):
        if k.startswith("MCB_") and k != "MCB_RUNTIME_DIR":
            monkeypatch.delenv(k)
    return Settings.from_env()


def _save(path: Path, data_version: int = levelmod.DATA_VERSION) -> Path:
    (path / "region").mkdir(parents=True)
    root = levelmod.new_flat_level("mine")
    root["Data"]["DataVersion"] = nbt.Int(data_version)
    levelmod.write_level(path / "level.dat", root)
    return path


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("1,2,3", "6 integers"),
        ("a,b,c,d,e,f", "6 integers"),
        ("0,-65,0,10,10,10", "within -64..319"),
    ],
)
def test_bad_areas_are_refused_with_the_reason(text, words):
    with pytest.raises(McbError) as ei:
        parse_area(text)
    assert words in ei.value.message


def test_area_set_writes_the_first_project(settings: Settings):
    msg = set_area(settings, "10 70 10 -10 60 -10")
    assert "x -10..10, y 60..70, z -10..10" in msg
    cfg = json.loads(settings.config_file.read_text())
    assert cfg["projects"][0]["area"] == {"min": {"x": -10, "y": 60, "z": -10}, "max": {"x": 10, "y": 70, "z": 10}}
    with pytest.raises(McbError) as ei:
        set_area(settings, "0,0,0,1,1,1", "nope")
    assert ei.value.code == ErrorCode.NOT_FOUND


def test_a_saved_world_path_drives_the_host_and_blocks_reset(settings: Settings, tmp_path: Path):
    save = _save(tmp_path / "My World")
    use_world(settings, str(save), own_world=False)
    env = services(settings)[0].env
    assert env["MCB_WORLD_DIR"] == str(save) and env["MCB_WORLD_EXISTING"] == "1"
    assert env["MCB_WORLD_PREGEN"] == "none" and env["MCB_WORLD_CREATE"] == ""  # never extended or created
    code, msg = reset(settings, keep_journal=False)
    assert code == 2 and "never reset by this tool" in msg and save.exists()
    use_world(settings, None, own_world=True)
    env = services(settings)[0].env
    assert env["MCB_WORLD_DIR"] == str(settings.runtime_dir / "world") and env["MCB_WORLD_EXISTING"] == ""


def test_save_checks(tmp_path: Path):
    with pytest.raises(McbError) as ei:
        existing.check_save(tmp_path / "missing")
    assert ei.value.code == ErrorCode.NOT_FOUND
    (tmp_path / "empty").mkdir()
    with pytest.raises(McbError) as ei:
        existing.check_save(tmp_path / "empty")
    assert "no level.dat" in ei.value.message
    with pytest.raises(McbError) as ei:
        existing.check_save(_save(tmp_path / "newer", 4700))
    assert ei.value.code == ErrorCode.VERSION_MISMATCH and "DataVersion 4700" in ei.value.message
    assert existing.check_save(_save(tmp_path / "ok"))["dataVersion"] == 4671


def test_session_lock_is_the_posix_record_lock(tmp_path: Path):
    save = _save(tmp_path / "w")
    assert not existing.locked_by_other(save)
    held = existing.SessionLock(save)
    try:
        # (no read of session.lock here: closing any descriptor of the file drops this process's record locks)
        # another process asking like the game (fcntl record lock, what Java's FileChannel.tryLock uses) is refused
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            fd = os.open(save / "session.lock", os.O_RDWR)
            try:
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os._exit(0)
            except OSError:
                os._exit(7)
        assert os.waitpid(pid, 0)[1] >> 8 == 7
    finally:
        held.close()
    assert not existing.locked_by_other(save)
    assert (save / "session.lock").read_bytes() == "☃".encode()  # what the game writes


def test_backup_copies_everything_but_the_lock(tmp_path: Path):
    save = _save(tmp_path / "w")
    (save / "region" / "r.0.0.mca").write_bytes(b"x" * 10)
    (save / "session.lock").write_bytes("☃".encode())
    a = existing.backup(save, tmp_path / "backups", now=0)
    b = existing.backup(save, tmp_path / "backups", now=0)
    assert a != b and a.name.startswith("19700101T000000Z-save-w")
    assert (a / "region" / "r.0.0.mca").read_bytes() == b"x" * 10 and not (a / "session.lock").exists()
