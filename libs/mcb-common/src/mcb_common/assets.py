"""The asset library: one folder of schematic files, read and written without surprises.

* Names: ``[A-Za-z0-9][A-Za-z0-9_-]{0,63}.schem`` (Sponge v2/v3, read and written) and
  ``….nbt`` (vanilla structure files, read-only). The asset id is the name without
  ``.schem``; a structure's id keeps its suffix (``farm.nbt``) so the two never collide.
* No paths, URLs, control characters or symlinks: an id must match the pattern in full
  before it touches the file system.
* Only regular files are opened: ``lstat`` first (a FIFO, device, socket, directory or
  symlink is refused without being opened — opening a FIFO would block), then
  ``O_NOFOLLOW | O_NONBLOCK`` and an ``fstat`` that must show the same regular file. A file
  whose size or mtime changes while it is read is refused as ``busy`` (retry when it is
  complete), never half-read.
* Sizes are checked before reading (``schematic.MAX_COMPRESSED``); parsing is bounded
  (schematic.py).
* ``list`` never fails because of one file: a corrupt, oversized or unsupported file is an
  entry with ``valid: false`` and its reason. Parsed metadata is cached by
  (name, size, mtime, inode).
* ``write`` never overwrites: the file is written under a temporary name, fsynced and linked
  to its final name (``os.link`` fails if the name exists), then the folder is fsynced.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import schematic
from .errors import ErrorCode, McbError
from .files import fsync_dir

log = logging.getLogger("mcb.assets")

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
ASSET_ID_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_-]{0,63})(\.nbt|\.schem)?$")
PAGE_SIZE = 20
MAX_DIR_ENTRIES = 10_000


def default_dir() -> Path:
    explicit = os.environ.get("MCB_ASSETS_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("MCB_RUNTIME_DIR", ".runtime")) / "assets"


def parse_asset_id(asset_id: str) -> tuple[str, str]:
    """asset id → (file name, kind 'schem'|'nbt'); refuses anything that is not a plain name."""
    m = ASSET_ID_RE.fullmatch(asset_id or "")
    if not m:
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"asset id {asset_id[:80]!r} is not a library name: use letters, digits, '_' and '-' "
            "(1–64 characters, starting with a letter or digit), no paths or URLs",
            details={"asset_id": asset_id[:80]},
        )
    stem, suffix = m.group(1), m.group(2)
    if suffix == ".nbt":
        return stem + ".nbt", "nbt"
    return stem + ".schem", "schem"


def check_name(name: str) -> str:
    if not NAME_RE.fullmatch(name or ""):
        raise McbError(
            ErrorCode.INVALID_REQUEST,
            f"name {name[:80]!r} is not allowed: use letters, digits, '_' and '-' (1–64 characters, "
            "starting with a letter or digit); it becomes the asset id",
            details={"name": name[:80]},
        )
    return name


_KINDS = (
    (stat.S_ISLNK, "a symbolic link (links are refused)"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a directory"),
)


def _not_regular(mode: int) -> str:
    kind = next((what for test, what in _KINDS if test(mode)), "not a regular file")
    return f"{kind}, not a regular file; only regular files are read"


def _require_regular(fname: str, st: os.stat_result) -> None:
    if not stat.S_ISREG(st.st_mode):
        code = ErrorCode.PERMISSION_DENIED if stat.S_ISLNK(st.st_mode) else ErrorCode.INVALID_REQUEST
        raise McbError(code, f"{fname} is {_not_regular(st.st_mode)}", details={"asset": fname})


def _changed(fname: str) -> McbError:
    return McbError(
        ErrorCode.BUSY,
        f"{fname} changed while it was read (still being copied?); retry when it is complete",
        details={"asset": fname, "reason": "file_changed"},
    )


@dataclass
class _Cached:
    key: tuple[int, int, int]
    entry: dict[str, Any]


class AssetLibrary:
    def __init__(self, root: Path | str | None = None):
        self.root = Path(root) if root is not None else default_dir()
        self._cache: dict[str, _Cached] = {}

    # -- reading ---------------------------------------------------------------------------
    def _open_bytes(self, fname: str) -> tuple[bytes, os.stat_result]:
        path = self.root / fname
        try:
            before = os.lstat(path)
        except FileNotFoundError:
            raise McbError(ErrorCode.NOT_FOUND, f"no asset {fname} in the library; see asset_list") from None
        except OSError as exc:
            raise McbError(ErrorCode.INVALID_REQUEST, f"{fname} cannot be read: {exc.strerror}") from None
        _require_regular(fname, before)
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(path, flags)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise McbError(ErrorCode.PERMISSION_DENIED, f"{fname} is a symbolic link; links are refused") from None
            if exc.errno == errno.ENOENT:
                raise McbError(ErrorCode.NOT_FOUND, f"no asset {fname} in the library; see asset_list") from None
            raise McbError(ErrorCode.INVALID_REQUEST, f"{fname} cannot be opened: {exc.strerror}") from None
        try:
            st = os.fstat(fd)
            _require_regular(fname, st)
            if (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
                raise _changed(fname)  # replaced between lstat and open
            if st.st_size > schematic.MAX_COMPRESSED:
                raise McbError(
                    ErrorCode.BUDGET_EXCEEDED,
                    f"{fname} is {st.st_size:,} bytes; the limit is {schematic.MAX_COMPRESSED:,}",
                    details={"bytes": st.st_size, "limit": schematic.MAX_COMPRESSED},
                )
            chunks = []
            left = schematic.MAX_COMPRESSED + 1
            while left > 0:
                try:
                    b = os.read(fd, min(left, 1 << 16))
                except BlockingIOError:  # a regular file never blocks; refuse rather than wait
                    raise _changed(fname) from None
                if not b:
                    break
                chunks.append(b)
                left -= len(b)
            data = b"".join(chunks)
            if len(data) > schematic.MAX_COMPRESSED:
                raise McbError(ErrorCode.BUDGET_EXCEEDED, f"{fname} grew over {schematic.MAX_COMPRESSED:,} bytes")
            after = os.fstat(fd)
            if len(data) != st.st_size or after.st_size != st.st_size or after.st_mtime_ns != st.st_mtime_ns:
                raise _changed(fname)
            return data, st
        finally:
            os.close(fd)

    def read(self, asset_id: str) -> tuple[bytes, str, dict[str, Any]]:
        """(file bytes, kind, metadata entry) of one asset; the bytes are what the planner parses."""
        fname, kind = parse_asset_id(asset_id)
        data, st = self._open_bytes(fname)
        key = (st.st_size, st.st_mtime_ns, st.st_ino)
        hit = self._cache.get(fname)
        if hit is not None and hit.key == key and hit.entry.get("sha256") == hashlib.sha256(data).hexdigest():
            entry = dict(hit.entry)
        else:
            entry = self._entry_from_bytes(fname, kind, data)
            self._cache[fname] = _Cached(key, entry)
        if not entry["valid"]:
            raise McbError(
                ErrorCode.INVALID_REQUEST,
                f"asset {entry['asset_id']} cannot be used: {entry['reason']}",
                details={"asset_id": entry["asset_id"]},
            )
        return data, kind, entry

    @staticmethod
    def _asset_id(fname: str) -> str:
        return fname[: -len(".schem")] if fname.endswith(".schem") else fname

    def _entry_from_bytes(self, fname: str, kind: str, data: bytes) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "asset_id": self._asset_id(fname),
            "name": self._asset_id(fname),
            "sha256": hashlib.sha256(data).hexdigest(),
            "bytes": len(data),
            "read_only": kind == "nbt",
            "valid": True,
        }
        try:
            s = schematic.read_bytes(data, kind)
        except McbError as err:
            entry.update(valid=False, reason=err.message)
            return entry
        if s.name:
            entry["name"] = s.name[:64]
        entry.update(schematic.info(s))
        return entry

    def entry(self, fname: str) -> dict[str, Any]:
        """The listing entry of one directory name (never raises for a bad file)."""
        kind = "nbt" if fname.endswith(".nbt") else "schem"
        stem = fname.rsplit(".", 1)[0]
        base = {
            "asset_id": self._asset_id(fname),
            "name": self._asset_id(fname),
            "valid": False,
            "read_only": kind == "nbt",
        }
        if not NAME_RE.fullmatch(stem):
            return {**base, "reason": "file name is not a valid asset name ([A-Za-z0-9][A-Za-z0-9_-]{0,63})"}
        path = self.root / fname
        try:
            st = os.lstat(path)
        except OSError as exc:
            return {**base, "reason": f"cannot stat: {exc.strerror}"}
        if not stat.S_ISREG(st.st_mode):
            return {**base, "reason": _not_regular(st.st_mode)}
        key = (st.st_size, st.st_mtime_ns, st.st_ino)
        hit = self._cache.get(fname)
        if hit is not None and hit.key == key:
            return dict(hit.entry)
        try:
            data, _ = self._open_bytes(fname)
            e = self._entry_from_bytes(fname, kind, data)
        except McbError as err:
            e = {**base, "bytes": st.st_size, "reason": err.message}
            if err.retryable:  # changing right now: list it, but read it again next time
                return e
        except Exception:  # noqa: BLE001 - one file never breaks a listing
            log.exception("asset %s could not be read", fname)
            e = {**base, "bytes": st.st_size, "reason": "the file could not be read (see the journal log)"}
        self._cache[fname] = _Cached(key, e)
        return dict(e)

    def names(self) -> list[str]:
        try:
            it = os.scandir(self.root)
        except FileNotFoundError:
            return []
        out = []
        with it:
            for n, d in enumerate(it):
                if n >= MAX_DIR_ENTRIES:
                    break
                if d.name.endswith((".schem", ".nbt")) and not d.name.startswith("."):
                    out.append(d.name)
        return sorted(out, key=lambda s: (s.lower(), s))

    def list(self, query: str = "", cursor: str = "", page_size: int = PAGE_SIZE) -> dict[str, Any]:
        """One page of the library, case-insensitive substring match on the asset id."""
        q = (query or "").strip().lower()
        names = [n for n in self.names() if q in n.lower()]
        start = 0
        if cursor:
            if not cursor.startswith("a1.") or not cursor[3:].isdigit():
                raise McbError(ErrorCode.INVALID_REQUEST, "cursor is not one asset_list issued")
            start = int(cursor[3:])
        page = names[start : start + page_size]
        out: dict[str, Any] = {"assets": [self.entry(n) for n in page], "total": len(names)}
        if start + page_size < len(names):
            out["next_cursor"] = f"a1.{start + page_size}"
        return out

    # -- writing ---------------------------------------------------------------------------
    def write(self, name: str, data: bytes) -> dict[str, Any]:
        """Store a new ``<name>.schem``; refuses an existing name. Returns its listing entry."""
        check_name(name)
        fname = name + ".schem"
        self.root.mkdir(parents=True, exist_ok=True)
        final = self.root / fname
        if os.path.lexists(final):
            raise McbError(
                ErrorCode.INVALID_REQUEST,
                f"asset {name!r} already exists; choose another name",
                details={"asset_id": name},
            )
        tmp = self.root / f".tmp-{secrets.token_hex(8)}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            try:
                os.link(tmp, final)
            except FileExistsError:
                raise McbError(
                    ErrorCode.INVALID_REQUEST,
                    f"asset {name!r} already exists; choose another name",
                    details={"asset_id": name},
                ) from None
        finally:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
        fsync_dir(self.root)
        return self.entry(fname)
