"""Writing a file whole or not at all: the one ``atomic_write`` every service uses.

A temporary file in the same directory, fsync'd, renamed over the target with ``os.replace``,
then the directory fsync'd: after a crash or power loss the path holds either the old content
or the new, never a torn file, and a returned call means the new name is on disk (without the
directory fsync the rename itself could be lost), and so is every folder the call created on the
way (``make_dirs``: a journal blob's new ``<sha[:2]>/`` folder). ``world.json`` (the world's identity), the
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
        make_dirs(path.parent)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            view = memoryview(raw)
            while view:
                view = view[os.write(fd, view) :]
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


def make_dirs(directory: Path) -> None:
    """``mkdir -p`` whose new folders survive a crash: each folder created is synced into its
    parent (``mkdir(parents=True)`` alone could lose a new folder, and a file written in it, at a
    power loss even after that file's own directory was synced)."""
    missing = []
    while not directory.is_dir():
        missing.append(directory)
        if directory.parent == directory:
            break
        directory = directory.parent
    for d in reversed(missing):
        try:
            d.mkdir()
        except FileExistsError:
            if not d.is_dir():
                raise
            continue  # made meanwhile by someone else, who syncs it
        fsync_dir(d.parent)


def fsync_dir(directory: Path) -> None:
    """Make a rename or a new name in ``directory`` durable."""
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
