"""Hostile files and names are clear refusals; non-regular files are never opened (issue 12, 2 and 4)."""

from __future__ import annotations

import os
import socket
import stat
import threading
from pathlib import Path

import pytest
from hardening.hostile import gz, hostile_files, sponge_v3
from mcb.common.v1 import common_pb2
from mcb.planner.v1 import planner_pb2
from mcb_common import assets as A
from mcb_common import schematic as S
from mcb_common.errors import ErrorCode, McbError
from mcb_planner.servicer import import_request

ACCEPTED_BY_THE_READER = {"data-version-newer"}  # refused at import (version_mismatch), listed as valid


def refusal(fn, *args) -> McbError:
    try:
        fn(*args)
    except McbError as err:
        assert err.code != ErrorCode.INTERNAL, err
        assert "Error" not in err.message, f"an exception class leaks: {err.message}"
        return err
    raise AssertionError(f"{fn.__name__}{args!r:.80} was accepted")


@pytest.mark.parametrize("name", sorted(hostile_files()))
def test_every_hostile_file_is_a_clear_refusal_at_read_and_import(name):
    kind, data = hostile_files()[name]
    if name not in ACCEPTED_BY_THE_READER:
        err = refusal(S.read_bytes, data, kind)
        assert err.code in (ErrorCode.INVALID_REQUEST, ErrorCode.BUDGET_EXCEEDED), err
    req = planner_pb2.ImportSchematicRequest(
        data=data, kind=kind, target=common_pb2.Vec3(x=0, y=64, z=0), world_data_version=3953
    )
    refusal(import_request, req)


def test_one_bad_file_never_breaks_a_listing(tmp_path):
    lib = A.AssetLibrary(tmp_path)
    files = hostile_files()
    for name, (kind, data) in files.items():
        (tmp_path / f"{name}.{kind}").write_bytes(data)
    (tmp_path / "good.schem").write_bytes(gz(sponge_v3()))
    listed = {}
    cursor = ""
    while True:
        page = lib.list("", cursor)
        listed.update({e["asset_id"]: e for e in page["assets"]})
        cursor = page.get("next_cursor", "")
        if not cursor:
            break
    assert listed["good"]["valid"] is True
    for name, (kind, _) in files.items():
        entry = listed[name if kind == "schem" else f"{name}.nbt"]
        if name in ACCEPTED_BY_THE_READER:
            continue
        assert entry["valid"] is False and entry["reason"], entry
        assert "Error" not in entry["reason"], entry


def _in_thread(fn, timeout: float = 5.0):
    """Run fn in a thread; a call that blocks (a FIFO being opened) fails the test, not hangs it."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    return t.is_alive(), out


def _release_fifo(path: Path) -> None:
    try:  # a reader blocked in open() is released by a writer appearing
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def test_a_fifo_is_refused_without_being_opened(tmp_path):
    fifo = tmp_path / "x.schem"
    os.mkfifo(fifo)
    lib = A.AssetLibrary(tmp_path)
    try:
        blocked, out = _in_thread(lambda: lib.read("x"))
        assert not blocked, "reading a FIFO asset blocked (it was opened)"
        err = out.get("error")
        assert isinstance(err, McbError) and err.code == ErrorCode.INVALID_REQUEST, out
        assert "FIFO" in err.message
        blocked, out = _in_thread(lambda: lib.list())
        assert not blocked, "listing a folder with a FIFO blocked"
        (entry,) = out["value"]["assets"]
        assert entry["valid"] is False and "FIFO" in entry["reason"]
    finally:
        _release_fifo(fifo)


def test_sockets_directories_devices_and_symlinks_are_refused(tmp_path):
    lib = A.AssetLibrary(tmp_path)
    (tmp_path / "good.schem").write_bytes(gz(sponge_v3()))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock.schem"))
    (tmp_path / "dir.schem").mkdir()
    (tmp_path / "link.schem").symlink_to(tmp_path / "good.schem")
    cases = {"sock": "socket", "dir": "directory", "link": "symbolic link"}
    if os.geteuid() == 0:  # only root may create a device node
        os.mknod(tmp_path / "dev.schem", stat.S_IFCHR | 0o600, os.makedev(1, 5))  # /dev/zero
        cases["dev"] = "character device"
    try:
        for name, what in cases.items():
            blocked, out = _in_thread(lambda n=name: lib.read(n))
            assert not blocked, f"reading {name} blocked"
            err = out.get("error")
            assert isinstance(err, McbError) and err.code in (ErrorCode.INVALID_REQUEST, ErrorCode.PERMISSION_DENIED), (
                name,
                out,
            )
            assert what in err.message, err.message
        listed = {e["asset_id"]: e for e in lib.list()["assets"]}
        assert listed["good"]["valid"] is True
        for name, what in cases.items():
            assert listed[name]["valid"] is False and what in listed[name]["reason"], listed[name]
    finally:
        sock.close()


def test_a_file_changing_while_read_is_refused_with_a_retry_hint(tmp_path, monkeypatch):
    path = tmp_path / "grow.schem"
    path.write_bytes(gz(sponge_v3()) + b"\x00" * (200 * 1024))  # several read chunks
    lib = A.AssetLibrary(tmp_path)
    real_read = os.read
    calls = {"n": 0}

    def read_while_someone_appends(fd, n):
        calls["n"] += 1
        if calls["n"] == 2:
            with open(path, "ab") as f:
                f.write(b"\x00" * 1000)
        return real_read(fd, n)

    monkeypatch.setattr(A.os, "read", read_while_someone_appends)
    err = refusal(lib.read, "grow")
    assert err.code == ErrorCode.BUSY and err.retryable, err
    assert "retry" in err.message
    calls["n"] = 0  # the listing reads it while it changes once more: listed as not valid...
    (entry,) = lib.list()["assets"]
    assert entry["valid"] is False and "changed while it was read" in entry["reason"], entry
    monkeypatch.setattr(A.os, "read", real_read)  # ...and read again (not cached) once it is stable
    (entry,) = lib.list()["assets"]
    assert entry["valid"] is True, entry


@pytest.mark.parametrize("name", ["x\n", "x\r", "x\t", "x\x00", "x\x1b[31m", "\nx"])
def test_asset_names_with_control_characters_are_refused(tmp_path, name):
    lib = A.AssetLibrary(tmp_path)
    assert refusal(A.check_name, name).code == ErrorCode.INVALID_REQUEST
    assert refusal(A.parse_asset_id, name).code == ErrorCode.INVALID_REQUEST
    assert refusal(lib.write, name, gz(sponge_v3())).code == ErrorCode.INVALID_REQUEST
    assert refusal(lib.read, name).code == ErrorCode.INVALID_REQUEST
    assert list(tmp_path.iterdir()) == []
