"""Writing a file whole or not at all: the one ``atomic_write`` every service uses.

A temporary file in the same directory, fsync'd, renamed over the target with ``os.replace``,
then the directory fsync'd: after a crash or power loss the path holds either the old content
or the new, never a torn file, and a returned call means the new name is on disk (without the
directory fsync the rename itself could be lost). ``world.json`` (the world's identity), the
journal's blobs, tokens, configs and the camera worker's captures are written this way.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from .diskfull import disk_full_error, is_disk_full


def atomic_write(path: Path, data: bytes | str, *, mode: int = 0o666, who: str | None = None) -> None:
    """Replace ``path`` with ``data`` atomically and durably (str is written as UTF-8).

    ``mode`` is the new file's permission bits before the umask (0o600 for secrets). On any
    failure the temporary file is removed and the old file, if any, stays as it was; with
    ``who`` a full disk raises ``disk_full_error(who, ...)`` (``unavailable``), otherwise the
    ``OSError`` propagates.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            view = memoryview(raw)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        fsync_dir(path.parent)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if who is not None and is_disk_full(exc):
            raise disk_full_error(who, f"{path.name} was not written") from exc
        raise


def fsync_dir(directory: Path) -> None:
    """Make a rename or a new name in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
