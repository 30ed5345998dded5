"""Anvil region files (``r.<rx>.<rz>.mca``): 32×32 chunks, copy-on-write chunk updates.

Layout (see docs/world-format.md): sector = 4096 bytes. Sector 0 holds 1024 big-endian
location entries ``(offset:u24 sectors, count:u8)``, sector 1 holds 1024 ``u32`` timestamps;
entry index = ``(cx & 31) + (cz & 31) * 32``. A chunk payload starts at its first sector with
``length:u32`` (bytes that follow, including the type byte) and ``compression:u8``
(1 gzip, 2 zlib, 3 none, 4 LZ4, +128 = payload lives in the external file ``c.<cx>.<cz>.mcc``).

Writing a chunk never touches its live sectors nor any other chunk's: the new payload goes
into free sectors (or the end of the file), is fsynced, and only then the 4-byte location
entry is switched and fsynced. ``write_chunks`` does this for all chunks a batch changed in
one region with one fsync pair (payloads, then entries). A crash between the two leaves the old chunk readable; the
orphaned sectors are simply free space on the next open.
"""

from __future__ import annotations

import gzip
import os
import re
import struct
import threading
import time
import zlib
from pathlib import Path

from mcb_common.errors import ErrorCode, McbError
from mcb_common.files import fsync_dir, make_dirs

SECTOR = 4096
MAX_SECTORS_PER_CHUNK = 255  # the count byte; larger chunks need an external .mcc file
COMPRESSION_GZIP, COMPRESSION_ZLIB, COMPRESSION_NONE, COMPRESSION_LZ4 = 1, 2, 3, 4
EXTERNAL_FLAG = 0x80
REGION_NAME = re.compile(r"^r\.(-?\d+)\.(-?\d+)\.mca$")


def region_coords(cx: int, cz: int) -> tuple[int, int]:
    return cx >> 5, cz >> 5


def region_name(rx: int, rz: int) -> str:
    return f"r.{rx}.{rz}.mca"


def _corrupt(path: Path, msg: str) -> McbError:
    return McbError(ErrorCode.INTERNAL, f"region file {path.name}: {msg}", details={"file": str(path)})


class RegionFile:
    """One open region file. Not thread-safe by itself: callers hold ``lock``."""

    def __init__(self, path: Path, create: bool = False, readonly: bool = False):
        """``readonly`` opens the file for reading only (entity regions, which the game owns):
        it is never created, padded or written."""
        self.path = Path(path)
        self.lock = threading.RLock()
        self.readonly = readonly
        exists = self.path.exists()
        if readonly and not exists:
            raise McbError(ErrorCode.NOT_FOUND, f"no region file {self.path.name}")
        if not exists and not create:
            raise McbError(ErrorCode.NOT_FOUND, f"no region file {self.path.name}")
        if not exists:
            make_dirs(self.path.parent)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, b"\x00" * (2 * SECTOR))
            os.fsync(fd)
            os.close(fd)
            try:
                fsync_dir(self.path.parent)  # the new name is durable before a chunk in it is
            except OSError:
                self.path.unlink(missing_ok=True)  # a retry creates it again, and syncs its name
                raise
        # Unbuffered: writes go straight to the file with pwrite (a write that fails for a full
        # disk leaves nothing in a buffer to fail again on every later read), reads see them.
        self._f = open(self.path, "rb" if readonly else "r+b", buffering=0)  # noqa: SIM115 - kept open for the region's lifetime
        header = _read_exact(self._f, 2 * SECTOR)
        if readonly and len(header) == 0:
            header = b"\x00" * (2 * SECTOR)  # an empty file holds no chunks; left as it is
        if len(header) < 2 * SECTOR:
            # A zero-length or truncated header (the game leaves 0-byte files sometimes): pad.
            if len(header) == 0:
                self._f.seek(0)
                self._f.write(b"\x00" * (2 * SECTOR))
                self._f.flush()
                os.fsync(self._f.fileno())
                header = b"\x00" * (2 * SECTOR)
            else:
                self._f.close()
                raise _corrupt(self.path, f"header is {len(header)} bytes, expected 8192")
        self.locations = list(struct.unpack(">1024I", header[:SECTOR]))
        self.timestamps = list(struct.unpack(">1024I", header[SECTOR:]))
        self._file_sectors = (os.fstat(self._f.fileno()).st_size + SECTOR - 1) // SECTOR
        self._rebuild_used()

    # -- sector bookkeeping ------------------------------------------------------------------
    def _rebuild_used(self) -> None:
        used = bytearray(max(self._file_sectors, 2))
        used[0] = used[1] = 1
        for entry in self.locations:
            off, cnt = entry >> 8, entry & 0xFF
            if off < 2 or cnt == 0:
                continue
            end = off + cnt
            if end > len(used):
                used.extend(b"\x00" * (end - len(used)))
            for s in range(off, end):
                used[s] = 1
        self._used = used

    def free_sectors(self) -> int:
        return sum(1 for b in self._used[2:] if not b)

    def _allocate(self, n: int) -> int:
        """First run of ``n`` free sectors that overlaps no live chunk; else the file end."""
        run = 0
        for s in range(2, len(self._used)):
            run = run + 1 if not self._used[s] else 0
            if run == n:
                return s - n + 1
        # extend at the end (after the last used sector)
        end = len(self._used)
        while end > 2 and not self._used[end - 1]:
            end -= 1
        return end

    # -- reading -----------------------------------------------------------------------------
    @staticmethod
    def index(cx: int, cz: int) -> int:
        return (cx & 31) + (cz & 31) * 32

    def has_chunk(self, cx: int, cz: int) -> bool:
        e = self.locations[self.index(cx, cz)]
        return (e >> 8) >= 2 and (e & 0xFF) > 0

    def chunk_positions(self, rx: int, rz: int) -> list[tuple[int, int]]:
        out = []
        for i, e in enumerate(self.locations):
            if (e >> 8) >= 2 and (e & 0xFF) > 0:
                out.append((rx * 32 + (i & 31), rz * 32 + (i >> 5)))
        return out

    def read_raw(self, cx: int, cz: int) -> tuple[int, bytes] | None:
        """(compression type byte, stored bytes) or None when the chunk is absent."""
        with self.lock:
            e = self.locations[self.index(cx, cz)]
            off, cnt = e >> 8, e & 0xFF
            if off < 2 or cnt == 0:
                return None
            self._f.seek(off * SECTOR)
            head = _read_exact(self._f, 5)
            if len(head) < 5:
                raise _corrupt(self.path, f"chunk ({cx},{cz}) points past the end of the file")
            length, ctype = struct.unpack(">IB", head)
            if length == 0 or length > cnt * SECTOR:
                raise _corrupt(self.path, f"chunk ({cx},{cz}) has length {length} for {cnt} sectors")
            if ctype & EXTERNAL_FLAG:
                ext = self.path.parent / f"c.{cx}.{cz}.mcc"
                try:
                    return ctype & 0x7F, ext.read_bytes()
                except FileNotFoundError:
                    raise _corrupt(self.path, f"chunk ({cx},{cz}) lives in {ext.name}, which is missing") from None
            data = _read_exact(self._f, length - 1)
            if len(data) < length - 1:
                raise _corrupt(self.path, f"chunk ({cx},{cz}) is truncated")
            return ctype, data

    def read_chunk(self, cx: int, cz: int) -> bytes | None:
        """The chunk's uncompressed NBT bytes, or None when it does not exist."""
        raw = self.read_raw(cx, cz)
        if raw is None:
            return None
        ctype, data = raw
        try:
            if ctype == COMPRESSION_ZLIB:
                return zlib.decompress(data)
            if ctype == COMPRESSION_GZIP:
                return gzip.decompress(data)
            if ctype == COMPRESSION_NONE:
                return data
        except (zlib.error, OSError, EOFError) as exc:
            raise _corrupt(self.path, f"chunk ({cx},{cz}) does not decompress: {exc}") from None
        if ctype == COMPRESSION_LZ4:
            raise McbError(
                ErrorCode.VERSION_MISMATCH,
                f"chunk ({cx},{cz}) in {self.path.name} is LZ4-compressed (type 4); this host reads "
                "gzip, zlib and uncompressed chunks only. Set region-file-compression=deflate in "
                "server.properties and let the server re-save the world, then retry.",
                details={"file": str(self.path), "chunk": [cx, cz], "compression": 4},
            )
        raise _corrupt(self.path, f"chunk ({cx},{cz}) uses unknown compression type {ctype}")

    # -- writing -----------------------------------------------------------------------------
    def write_chunk(self, cx: int, cz: int, nbt_bytes: bytes, *, crash_after_payload: bool = False) -> None:
        """Replace one chunk, copy-on-write (see module doc). ``crash_after_payload`` is a test
        hook that stops after the payload is durable and before the header switches."""
        self.write_chunks([(cx, cz, nbt_bytes)], crash_after_payload=crash_after_payload)

    def write_chunks(self, chunks: list[tuple[int, int, bytes]], *, crash_after_payload: bool = False) -> None:
        """Replace several chunks of this region with ONE fsync pair: every new payload goes into
        free sectors (never a live one, never one another chunk of this call takes) and is
        fsynced once; then all their location entries switch and are fsynced once. A crash
        before the second fsync leaves each chunk old or new (the 4-byte entries are sector-
        local writes), never torn; the world's batch log rolls a begun batch back as a whole."""
        if self.readonly:
            raise McbError(ErrorCode.INTERNAL, f"region file {self.path.name} is open read-only")
        if not chunks:
            return
        prepared: list[tuple[int, bytes, int]] = []  # (index, padded payload, sectors)
        for cx, cz, nbt_bytes in chunks:
            body = zlib.compress(nbt_bytes, 6)
            payload = struct.pack(">IB", len(body) + 1, COMPRESSION_ZLIB) + body
            n = (len(payload) + SECTOR - 1) // SECTOR
            if n > MAX_SECTORS_PER_CHUNK:
                raise McbError(
                    ErrorCode.BUDGET_EXCEEDED,
                    f"chunk ({cx},{cz}) would need {n} sectors (> {MAX_SECTORS_PER_CHUNK}, 1 MiB); "
                    "the host does not write external .mcc chunk files",
                )
            prepared.append((self.index(cx, cz), payload + b"\x00" * (n * SECTOR - len(payload)), n))
        with self.lock:
            fd = self._f.fileno()
            taken: list[tuple[int, int]] = []  # (start, n) reserved by this call
            try:
                for _i, payload, n in prepared:
                    start = self._allocate(n)
                    if start + n > len(self._used):
                        self._used.extend(b"\x00" * (start + n - len(self._used)))
                    for sec in range(start, start + n):
                        self._used[sec] = 1  # reserved: the next chunk of this call goes elsewhere
                    taken.append((start, n))
                    _pwrite_all(fd, payload, start * SECTOR)
                os.fsync(fd)
            except BaseException:
                for start, n in taken:
                    for sec in range(start, start + n):
                        self._used[sec] = 0
                raise
            if crash_after_payload:
                return
            ts = int(time.time()) & 0xFFFFFFFF
            olds = []
            for (i, _payload, n), (start, _n) in zip(prepared, taken, strict=True):
                olds.append(self.locations[i])
                entry = (start << 8) | n
                _pwrite_all(fd, struct.pack(">I", entry), i * 4)
                _pwrite_all(fd, struct.pack(">I", ts), SECTOR + i * 4)
            os.fsync(fd)
            for (i, _payload, n), (start, _n), old in zip(prepared, taken, olds, strict=True):
                self.locations[i] = (start << 8) | n
                self.timestamps[i] = ts
                self._file_sectors = max(self._file_sectors, start + n)
                old_off, old_cnt = old >> 8, old & 0xFF
                if old_off >= 2:
                    for sec in range(old_off, min(old_off + old_cnt, len(self._used))):
                        self._used[sec] = 0

    def close(self) -> None:
        with self.lock:
            if not self._f.closed and self.readonly:
                self._f.close()
            if not self._f.closed:
                self._f.flush()
                os.fsync(self._f.fileno())
                self._f.close()


def _pwrite_all(fd: int, data: bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n


def _read_exact(f, n: int) -> bytes:  # noqa: ANN001 - an unbuffered file: one read may return less
    """n bytes from f's position, or fewer only at the end of the file."""
    parts, got = [], 0
    while got < n:
        b = f.read(n - got)
        if not b:
            break
        parts.append(b)
        got += len(b)
    return b"".join(parts)
