"""atomic_write: whole or not at all, durable on return (file fsync, rename, directory fsync)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest
from mcb_common import files
from mcb_common.errors import ErrorCode, McbError
from mcb_common.files import atomic_write


def _record(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The order of fsyncs (of a file or a directory) and renames atomic_write does."""
    events: list[tuple[str, str]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append(("fsync", "dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"))
        real_fsync(fd)

    def replace(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        events.append(("replace", Path(dst).name))
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "fsync", fsync)
    monkeypatch.setattr(files.os, "replace", replace)
    return events


def test_writes_whole_file_then_fsyncs_the_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = _record(monkeypatch)
    target = tmp_path / "sub" / "world.json"
    atomic_write(target, '{"worldUuid": "u"}\n')
    assert target.read_text() == '{"worldUuid": "u"}\n'
    # the new folder is synced into its parent, the data is on disk before the rename, and the
    # rename before the call returns
    assert events == [("fsync", "dir"), ("fsync", "file"), ("replace", "world.json"), ("fsync", "dir")]
    assert sorted(p.name for p in target.parent.iterdir()) == ["world.json"]  # no temporary file left


def test_new_folders_are_synced_into_their_parents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each folder atomic_write creates is synced into its parent, outermost first, before the
    file's own folder is: a power loss cannot take a new folder and the file in it."""
    synced: list[Path] = []
    real = files.fsync_dir

    def record(directory: Path) -> None:
        synced.append(directory)
        real(directory)

    monkeypatch.setattr(files, "fsync_dir", record)
    (tmp_path / "blobs").mkdir()
    atomic_write(tmp_path / "blobs" / "ab" / "cd" / "x.zlib", b"data")
    assert synced == [tmp_path / "blobs", tmp_path / "blobs" / "ab", tmp_path / "blobs" / "ab" / "cd"]
    synced.clear()
    atomic_write(tmp_path / "blobs" / "ab" / "cd" / "y.zlib", b"data")  # folders exist: only the file's
    assert synced == [tmp_path / "blobs" / "ab" / "cd"]


def test_replaces_existing_content_and_keeps_mode(tmp_path: Path) -> None:
    target = tmp_path / "token"
    target.write_bytes(b"old")
    atomic_write(target, b"\x00new\xff", mode=0o600)
    assert target.read_bytes() == b"\x00new\xff"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600


def test_failed_rename_keeps_old_file_and_leaves_no_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "world.json"
    target.write_text("old")

    def full(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "replace", full)
    with pytest.raises(OSError):
        atomic_write(target, "new")
    with pytest.raises(McbError) as err:
        atomic_write(target, "new", who="the test")
    assert err.value.code == ErrorCode.UNAVAILABLE and err.value.details["reason"] == "disk_full"
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["world.json"]
