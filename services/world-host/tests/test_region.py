"""Anvil region files: reads of every compression, copy-on-write updates, free sectors."""

from __future__ import annotations

import gzip
import struct
import zlib

import pytest
from mcb_common import nbt
from mcb_common.errors import ErrorCode, McbError
from mcb_world_host.region import SECTOR, RegionFile


def payload(tag: str, size: int = 100) -> bytes:
    return nbt.write(nbt.Compound(tag=nbt.String(tag), pad=nbt.ByteArray(bytes(size))))


def ranges(r: RegionFile) -> list[tuple[int, int]]:
    return sorted(((e >> 8), (e >> 8) + (e & 0xFF)) for e in r.locations if e)


def assert_disjoint(r: RegionFile) -> None:
    rs = ranges(r)
    for (_a0, a1), (b0, _b1) in zip(rs, rs[1:], strict=False):
        assert a1 <= b0, rs
    assert all(a >= 2 for a, _ in rs)


def test_write_read_and_neighbours_untouched(tmp_path):
    r = RegionFile(tmp_path / "r.0.0.mca", create=True)
    for i in range(5):
        r.write_chunk(i, 0, payload(f"c{i}"))
    r.write_chunk(2, 0, payload("c2-big", 3 * SECTOR * 10))  # grows: must move, not overwrite
    assert_disjoint(r)
    r.close()
    r = RegionFile(tmp_path / "r.0.0.mca")
    for i in range(5):
        assert nbt.read(r.read_chunk(i, 0))["tag"] == ("c2-big" if i == 2 else f"c{i}")
    assert r.read_chunk(9, 9) is None
    assert_disjoint(r)


def test_new_payload_never_lands_on_live_sectors(tmp_path):
    r = RegionFile(tmp_path / "r.0.0.mca", create=True)
    r.write_chunk(0, 0, payload("a", 20000))
    live_before = ranges(r)
    for k in range(10):
        r.write_chunk(0, 0, payload(f"a{k}", 20000 + k * 5000))
        assert_disjoint(r)
        new = ranges(r)
        # the chunk's new sectors never overlap the sectors that were live just before
        ((n0, n1),) = new
        for o0, o1 in live_before:
            assert n1 <= o0 or n0 >= o1
        live_before = new


def test_crash_between_payload_and_header_keeps_old_chunk(tmp_path):
    path = tmp_path / "r.0.0.mca"
    r = RegionFile(path, create=True)
    r.write_chunk(3, 4, payload("old"))
    r.write_chunk(4, 4, payload("neighbour"))
    before = path.read_bytes()[:8192]
    r.write_chunk(3, 4, payload("new", 50000), crash_after_payload=True)
    r._f.close()  # simulated crash: no header update, no clean close
    assert path.read_bytes()[:8192] == before
    r2 = RegionFile(path)
    assert nbt.read(r2.read_chunk(3, 4))["tag"] == "old"
    assert nbt.read(r2.read_chunk(4, 4))["tag"] == "neighbour"
    # the orphaned sectors are free space again
    r2.write_chunk(3, 4, payload("new"))
    assert nbt.read(r2.read_chunk(3, 4))["tag"] == "new"
    assert_disjoint(r2)


def test_write_chunks_one_fsync_pair_disjoint_and_all_or_old(tmp_path, monkeypatch):
    """A batch's chunks of one region: one fsync for all payloads, one for all entries; the new
    payloads overlap neither each other nor a live chunk; a crash before the entries switch
    leaves every chunk old."""
    import os

    path = tmp_path / "r.0.0.mca"
    r = RegionFile(path, create=True)
    for i in range(6):
        r.write_chunk(i, 1, payload(f"old{i}", 9000))
    live = ranges(r)
    syncs = {"n": 0}
    real_fsync = os.fsync

    def counting(fd):
        syncs["n"] += 1
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting)
    r.write_chunks([(i, 1, payload(f"new{i}", 9000 + 4000 * i)) for i in range(6)])
    assert syncs["n"] == 2
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert_disjoint(r)
    for n0, n1 in ranges(r):
        assert all(n1 <= o0 or n0 >= o1 for o0, o1 in live), (ranges(r), live)
    before = path.read_bytes()[:8192]
    r.write_chunks([(i, 1, payload(f"lost{i}", 30000)) for i in range(6)], crash_after_payload=True)
    r._f.close()  # simulated crash: payloads durable, no entry switched
    assert path.read_bytes()[:8192] == before
    r2 = RegionFile(path)
    assert [nbt.read(r2.read_chunk(i, 1))["tag"] for i in range(6)] == [f"new{i}" for i in range(6)]
    assert_disjoint(r2)


def _raw_region(tmp_path, ctype: int, body: bytes, external: bytes | None = None):
    path = tmp_path / "r.0.0.mca"
    header = bytearray(8192)
    struct.pack_into(">I", header, 0, (2 << 8) | 1)
    chunk = struct.pack(">IB", len(body) + 1, ctype) + body
    path.write_bytes(bytes(header) + chunk + bytes(SECTOR - len(chunk)))
    if external is not None:
        (tmp_path / "c.0.0.mcc").write_bytes(external)
    return RegionFile(path)


@pytest.mark.parametrize("ctype, enc", [(1, gzip.compress), (2, zlib.compress), (3, lambda b: b)])
def test_reads_gzip_zlib_uncompressed(tmp_path, ctype, enc):
    raw = payload("x")
    assert _raw_region(tmp_path, ctype, enc(raw)).read_chunk(0, 0) == raw


def test_reads_external_mcc(tmp_path):
    raw = payload("ext")
    r = _raw_region(tmp_path, 2 | 0x80, b"", external=zlib.compress(raw))
    assert r.read_chunk(0, 0) == raw


def test_lz4_is_refused_clearly(tmp_path):
    r = _raw_region(tmp_path, 4, b"\x00" * 20)
    with pytest.raises(McbError) as ei:
        r.read_chunk(0, 0)
    assert ei.value.code == ErrorCode.VERSION_MISMATCH
    assert "LZ4" in ei.value.message and "region-file-compression" in ei.value.message


def test_corrupt_chunk_is_reported(tmp_path):
    r = _raw_region(tmp_path, 2, b"not zlib at all")
    with pytest.raises(McbError, match="does not decompress"):
        r.read_chunk(0, 0)


def test_oversized_chunk_refused(tmp_path):
    import os

    r = RegionFile(tmp_path / "r.0.0.mca", create=True)
    with pytest.raises(McbError) as ei:
        r.write_chunk(0, 0, nbt.write(nbt.Compound(x=nbt.ByteArray(os.urandom(1_200_000)))))
    assert ei.value.code == ErrorCode.BUDGET_EXCEEDED
    assert r.read_chunk(0, 0) is None


def test_new_region_file_name_is_made_durable_or_fails(tmp_path, monkeypatch):
    """A new region file's directory entry is fsynced before any chunk can be written into it;
    when that fsync fails the file is not used (an error, not a silent success whose chunks a
    crash could take with the name)."""
    import errno

    from mcb_world_host import region as regionmod

    synced = []
    monkeypatch.setattr(regionmod, "fsync_dir", synced.append)
    RegionFile(tmp_path / "r.0.0.mca", create=True)
    assert synced == [tmp_path]

    def failing(directory):
        raise OSError(errno.EIO, "simulated I/O error", str(directory))

    monkeypatch.setattr(regionmod, "fsync_dir", failing)
    with pytest.raises(OSError):
        RegionFile(tmp_path / "r.1.0.mca", create=True)
    assert not (tmp_path / "r.1.0.mca").exists()  # a retry creates it again and syncs its name
