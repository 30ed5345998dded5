"""world.json (the world's identity) is written with mcb_common.files.atomic_write: whole, and
durable on return (its directory fsync'd after the rename), so a crash right after a new world is
created cannot lose the identity the journal already recorded."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from mcb_common import files
from mcb_world_host.world import World


def test_new_world_identity_is_written_atomically_and_durably(
    tmp_path: Path, registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced_dirs: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            synced_dirs.append(os.path.realpath(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(files.os, "fsync", fsync)
    w = World.create_flat(tmp_path / "w", registry, pregen=(0, 0, 15, 15))
    try:
        ident = json.loads((tmp_path / "w" / "mcb" / "world.json").read_text())
        assert ident["epoch"] == 1 and len(ident["worldUuid"]) == 36
        assert os.path.realpath(tmp_path / "w" / "mcb") in synced_dirs
        assert not [p.name for p in (tmp_path / "w" / "mcb").iterdir() if p.name.endswith(".tmp")]
    finally:
        w.close()
    # reopening reads the same identity back (never a new one)
    w2 = World(tmp_path / "w", registry)
    try:
        assert w2.meta.world_uuid == ident["worldUuid"]
    finally:
        w2.close()
