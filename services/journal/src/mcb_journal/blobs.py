"""Content-addressed blob files: ``<dir>/<sha[:2]>/<sha256>.zlib``.

Write: compress → tmp file → fsync → rename → fsync the folder, so a blob either exists
whole or not at all. Read: decompress and verify the sha256 of the uncompressed bytes; a
mismatch is an ``internal`` error naming the file (never silently used).
"""

from __future__ import annotations

import hashlib
import zlib
from pathlib import Path

from mcb_common.diskfull import is_disk_full
from mcb_common.errors import ErrorCode, McbError
from mcb_common.files import atomic_write

# Level 1: a 100k-block plan (1.4 MB of JSON) compresses in ~13 ms to 0.20 MB; level 6 took
# ~70–100 ms for a larger 0.23 MB (bench/REPORT.md, issue 13). Reading accepts any level.
ZLIB_LEVEL = 1


class BlobStore:
    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)

    def _path(self, sha: str) -> Path:
        return self.root / sha[:2] / f"{sha}.zlib"

    def put(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        path = self._path(sha)
        if path.exists():
            return sha
        try:
            atomic_write(path, zlib.compress(data, ZLIB_LEVEL))
        except OSError as exc:
            if is_disk_full(exc):  # ENOSPC or EDQUOT
                raise McbError(
                    ErrorCode.UNAVAILABLE, "the journal's disk is full; the plan was not stored. Free space and retry."
                ) from exc
            raise
        return sha

    def get(self, sha: str) -> bytes:
        path = self._path(sha)
        try:
            data = zlib.decompress(path.read_bytes())
        except FileNotFoundError:
            raise McbError(ErrorCode.NOT_FOUND, f"journal blob {sha[:12]}… is missing ({path})") from None
        except zlib.error as exc:
            raise McbError(ErrorCode.INTERNAL, f"journal blob {path} is corrupt: {exc}") from exc
        if hashlib.sha256(data).hexdigest() != sha:
            raise McbError(ErrorCode.INTERNAL, f"journal blob {path} fails its checksum")
        return data
